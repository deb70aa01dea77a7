// BrokerFastFailure over real executors whose one thread is held busy, with the pass's `now`
// injected (the executors stamp tasks with the steady clock at execute()): which queued
// requests are answered, with which remark, and which are left to run.

#include "broker/processor/broker_fast_failure.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/response_code.h"

namespace comet::broker {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

// What happened to the probes: run, or answered with (code, remark).
struct Log {
    std::mutex mu;
    std::vector<int> ran;
    std::vector<std::pair<int32_t, std::string>> answered;
};

// A queued request stand-in: its reject records the answer, as a Responder would send it.
struct Probe {
    Log* log;
    int id;
    void operator()() {
        std::lock_guard<std::mutex> l(log->mu);
        log->ran.push_back(id);
    }
    static void reject(std::function<void()>& task, int32_t code, const std::string& remark) {
        Probe* p = task.target<Probe>();
        ASSERT_NE(p, nullptr);
        std::lock_guard<std::mutex> l(p->log->mu);
        p->log->answered.emplace_back(code, remark);
    }
};

// One executor thread held inside a task until release(): what is queued behind it stays. The
// state is shared with the task, which may still be waking up when the Gate is gone.
class Gate {
public:
    explicit Gate(net::ThreadPoolExecutor& exec) : state_(std::make_shared<State>()) {
        EXPECT_TRUE(exec.execute([s = state_] {
            std::unique_lock<std::mutex> l(s->mu);
            s->entered = true;
            s->cv.notify_all();
            s->cv.wait_for(l, 10s, [&] { return s->released; });
        }));
        std::unique_lock<std::mutex> l(state_->mu);
        state_->cv.wait_for(l, 10s, [this] { return state_->entered; });
    }
    ~Gate() { release(); }
    void release() {
        std::lock_guard<std::mutex> l(state_->mu);
        state_->released = true;
        state_->cv.notify_all();
    }

private:
    struct State {
        std::mutex mu;
        std::condition_variable cv;
        bool entered = false;
        bool released = false;
    };
    std::shared_ptr<State> state_;
};

class BrokerFastFailureTest : public ::testing::Test {
protected:
    BrokerFastFailure make() {
        return BrokerFastFailure({send_, pull_, heartbeat_, end_tx_, query_}, &config_,
                                 [this] { return busy_.load(); });
    }
    void queue(net::ThreadPoolExecutor& exec, int n) {
        for (int i = 0; i < n; ++i) {
            ASSERT_TRUE(exec.execute(Probe{&log_, next_id_++}, &Probe::reject));
        }
    }

    // Before the executors: their destructors run what is still queued, which logs here.
    Log log_;
    std::atomic<bool> busy_{false};
    BrokerConfigHolder config_{BrokerConfig{}};
    std::shared_ptr<net::ThreadPoolExecutor> send_ =
        std::make_shared<net::ThreadPoolExecutor>("TSend", 1, 100);
    std::shared_ptr<net::ThreadPoolExecutor> pull_ =
        std::make_shared<net::ThreadPoolExecutor>("TPull", 1, 100);
    std::shared_ptr<net::ThreadPoolExecutor> heartbeat_ =
        std::make_shared<net::ThreadPoolExecutor>("TBeat", 1, 100);
    std::shared_ptr<net::ThreadPoolExecutor> end_tx_ =
        std::make_shared<net::ThreadPoolExecutor>("TEndTx", 1, 100);
    std::shared_ptr<net::ThreadPoolExecutor> query_ =
        std::make_shared<net::ThreadPoolExecutor>("TQuery", 1, 100);
    int next_id_ = 0;
};

TEST_F(BrokerFastFailureTest, DefaultsAreRocketMqs) {
    const BrokerConfig c;
    EXPECT_TRUE(c.broker_fast_failure_enable);
    EXPECT_EQ(c.wait_time_mills_in_send_queue, 200);
    EXPECT_EQ(c.wait_time_mills_in_pull_queue, 5000);
    EXPECT_EQ(c.wait_time_mills_in_heartbeat_queue, 31000);
    EXPECT_EQ(c.wait_time_mills_in_transaction_queue, 3000);
    EXPECT_EQ(c.send_thread_pool_queue_capacity, 10000);
    EXPECT_EQ(c.pull_thread_pool_queue_capacity, 100000);
    EXPECT_EQ(c.query_thread_pool_queue_capacity, 20000);
    EXPECT_EQ(c.heartbeat_thread_pool_queue_capacity, 50000);
    EXPECT_EQ(c.end_transaction_pool_queue_capacity, 100000);
    BrokerConfig set;
    ASSERT_TRUE(set.apply({{"waitTimeMillsInSendQueue", "50"},
                           {"brokerFastFailureEnable", "false"},
                           {"sendThreadPoolQueueCapacity", "7"}})
                    .is_ok());
    EXPECT_EQ(set.wait_time_mills_in_send_queue, 50);
    EXPECT_FALSE(set.broker_fast_failure_enable);
    EXPECT_EQ(set.send_thread_pool_queue_capacity, 7);
    set.send_thread_pool_queue_capacity = 0;
    EXPECT_FALSE(set.validate().is_ok());
}

// Requests that waited waitTimeMillsIn*Queue or more are answered [TIMEOUT_CLEAN_QUEUE], oldest
// first, each with its wait and what is left; younger ones and other queues are left to run.
TEST_F(BrokerFastFailureTest, AnswersRequestsThatWaitedTooLongInTheirQueue) {
    Gate send_gate(*send_);
    Gate pull_gate(*pull_);
    queue(*send_, 3);
    queue(*pull_, 2);
    BrokerFastFailure ff = make();
    const Steady::time_point t0 = Steady::now();
    EXPECT_EQ(ff.clean_expired(t0), 0u);          // nothing waited 200 ms yet
    EXPECT_EQ(ff.clean_expired(t0 + 250ms), 3u);  // the sends; pulls may wait 5 s
    ASSERT_EQ(log_.answered.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(log_.answered[i].first, protocol::ResponseCode::kSystemBusy);
        EXPECT_EQ(log_.answered[i].second.rfind("[TIMEOUT_CLEAN_QUEUE]broker busy, start flow "
                                                "control for a while, period in queue: ",
                                                0),
                  0u)
            << log_.answered[i].second;
        EXPECT_NE(log_.answered[i].second.find("ms, size of queue: " + std::to_string(2 - i)),
                  std::string::npos)
            << log_.answered[i].second;
    }
    EXPECT_EQ(send_->queued(), 0u);
    EXPECT_EQ(pull_->queued(), 2u);
    EXPECT_EQ(ff.clean_expired(t0 + 5100ms), 2u);
    EXPECT_EQ(pull_->queued(), 0u);
}

// While the page cache is busy every queued send is answered [PCBUSY_CLEAN_QUEUE], however
// young; other queues are not touched by it.
TEST_F(BrokerFastFailureTest, PageCacheBusyEmptiesTheSendQueue) {
    Gate send_gate(*send_);
    Gate end_gate(*end_tx_);
    queue(*send_, 4);
    queue(*end_tx_, 1);
    BrokerFastFailure ff = make();
    busy_ = true;
    EXPECT_EQ(ff.clean_expired(Steady::now()), 4u);
    ASSERT_EQ(log_.answered.size(), 4u);
    EXPECT_EQ(log_.answered.back().first, protocol::ResponseCode::kSystemBusy);
    EXPECT_EQ(log_.answered.back().second.rfind("[PCBUSY_CLEAN_QUEUE]broker busy, start flow "
                                                "control for a while, period in queue: ",
                                                0),
              0u);
    EXPECT_NE(log_.answered.back().second.find("size of queue: 0"), std::string::npos);
    EXPECT_EQ(end_tx_->queued(), 1u);
}

// brokerFastFailureEnable=false: nothing is answered; released, every request runs.
TEST_F(BrokerFastFailureTest, DisabledLeavesEveryRequestToRun) {
    ASSERT_TRUE(config_.update({{"brokerFastFailureEnable", "false"}}).is_ok());
    {
        Gate gate(*send_);
        queue(*send_, 2);
        BrokerFastFailure ff = make();
        busy_ = true;
        EXPECT_EQ(ff.clean_expired(Steady::now() + 1h), 0u);
    }
    send_->shutdown();  // runs what is queued
    EXPECT_TRUE(log_.answered.empty());
    EXPECT_EQ(log_.ran.size(), 2u);
}

// A task queued without a reject (not a request) is never taken back, and stops the scan.
TEST_F(BrokerFastFailureTest, TaskWithoutRejectIsNeverTakenBack) {
    Gate gate(*heartbeat_);
    std::atomic<bool> plain_ran{false};
    ASSERT_TRUE(heartbeat_->execute([&] { plain_ran = true; }));
    queue(*heartbeat_, 1);
    BrokerFastFailure ff = make();
    EXPECT_EQ(ff.clean_expired(Steady::now() + 1h), 0u);
    EXPECT_EQ(heartbeat_->queued(), 2u);
    gate.release();
    heartbeat_->shutdown();
    EXPECT_TRUE(plain_ran.load());
    EXPECT_EQ(log_.ran.size(), 1u);
}

// GET_BROKER_RUNTIME_INFO's queue keys: sizes, capacities and the head's wait (RocketMQ names).
TEST_F(BrokerFastFailureTest, RuntimeInfoReportsQueueSizesCapacitiesAndHeadWait) {
    Gate gate(*query_);
    queue(*query_, 2);
    BrokerFastFailure ff = make();
    std::map<std::string, std::string> table;
    ff.add_runtime_info(&table, Steady::now() + 1500ms);
    EXPECT_EQ(table["queryThreadPoolQueueSize"], "2");
    EXPECT_EQ(table["queryThreadPoolQueueCapacity"], "100");
    EXPECT_GE(std::stoll(table["queryThreadPoolQueueHeadWaitTimeMills"]), 1500);
    EXPECT_EQ(table["sendThreadPoolQueueSize"], "0");
    EXPECT_EQ(table["sendThreadPoolQueueHeadWaitTimeMills"], "0");
    EXPECT_EQ(table["pullThreadPoolQueueCapacity"], "100");
    EXPECT_EQ(table["EndTransactionQueueSize"], "0");
    EXPECT_EQ(table["EndTransactionThreadPoolQueueCapacity"], "100");
    // Query requests are reported, never cleaned (as in RocketMQ).
    EXPECT_EQ(ff.clean_expired(Steady::now() + 1h), 0u);
}

}  // namespace
}  // namespace comet::broker
