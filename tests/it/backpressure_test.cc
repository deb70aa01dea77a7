// Back-pressure of a broker whose disk stops taking writes, against real mqnamesrv + two
// mqbroker processes on 127.0.0.1. broker-a's commit thread is stalled for the whole test
// (testOnlyCommitStallMillis, as if every write hung), with a 64 KiB write buffer and
// osPageCacheBusyTimeOutMills=200: once its buffer is full, sends are refused SYSTEM_BUSY
// ("[PC_SYNCHRONIZED]..." from the store, then "[REJECTREQUEST]..." before the store) instead of
// holding the broker's I/O thread, and the C++ producer retries them on broker-b and keeps
// broker-a isolated (RocketMQ's sendLatencyFaultEnable). Every wait is bounded.

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>

#include "client/admin_client.h"
#include "client/producer.h"
#include "harness.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

using namespace std::chrono_literals;
using namespace comet::client;
namespace RC = protocol::ResponseCode;

class BackpressureIt : public ::testing::Test {
protected:
    void SetUp() override {
        ns_port_ = free_port();
        port_a_ = free_port();
        port_b_ = free_port();
        auto ns = start_namesrv(dir_, ns_port_);
        ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
        ns_ = std::move(ns).value();
        ASSERT_TRUE(ns_->wait_for_port(ns_port_, 10s).is_ok()) << ns_->log_tail();
        auto a = start_broker(dir_, port_a_, addr(ns_port_),
                              {{"testOnlyCommitStallMillis", "600000"},
                               {"commitLogWriteBufferSize", "65536"},
                               {"osPageCacheBusyTimeOutMills", "200"}},
                              "broker-a");
        ASSERT_TRUE(a.is_ok()) << a.status().to_string();
        a_ = std::move(a).value();
        auto b = start_broker(dir_, port_b_, addr(ns_port_), {}, "broker-b");
        ASSERT_TRUE(b.is_ok()) << b.status().to_string();
        b_ = std::move(b).value();
        ASSERT_TRUE(a_->wait_for_port(port_a_, 20s).is_ok()) << a_->log_tail();
        ASSERT_TRUE(b_->wait_for_port(port_b_, 20s).is_ok()) << b_->log_tail();
        client_.start();
    }
    void TearDown() override { client_.shutdown(); }

    ClientConfig client_config() const {
        ClientConfig c;
        c.namesrv_addr = addr(ns_port_);
        return c;
    }

    TempDir dir_{"comet_it_backpressure"};
    uint16_t ns_port_ = 0;
    uint16_t port_a_ = 0;
    uint16_t port_b_ = 0;
    std::unique_ptr<Process> ns_;
    std::unique_ptr<Process> a_;
    std::unique_ptr<Process> b_;
    net::RemotingClient client_;
};

TEST_F(BackpressureIt, StalledDiskAnswersSystemBusyAndTheProducerMovesToAnotherBroker) {
    AdminClient admin(client_config());
    ASSERT_TRUE(admin.start().is_ok());
    TopicCreateOptions o;
    o.read_queue_nums = 2;
    o.write_queue_nums = 2;
    ASSERT_TRUE(admin.create_topic(addr(port_a_), "BpTopic", o).is_ok());
    ASSERT_TRUE(admin.create_topic(addr(port_b_), "BpTopic", o).is_ok());
    ASSERT_TRUE(eventually(
        [&] {
            auto r = admin.topic_route("BpTopic");
            return r.is_ok() && r->broker_datas.size() == 2;
        },
        10s));

    // 40 sends of 4 KiB to broker-a: the first 15 or so fill its buffer and wait for the
    // stalled disk (no answer); the rest must be refused, each well before the 5 s timeout.
    constexpr int kSends = 40;
    std::mutex mu;
    std::condition_variable cv;
    std::vector<protocol::RemotingCommand> answers;
    int timed_out = 0;
    for (int i = 0; i < kSends; ++i) {
        client_.invoke_async(addr(port_a_),
                             send_message_request("BpTopic", std::string(4096, 'p'), i % 2), 5s,
                             [&](Result<protocol::RemotingCommand> r) {
                                 std::lock_guard<std::mutex> l(mu);
                                 if (r.is_ok()) {
                                     answers.push_back(std::move(r).value());
                                 } else {
                                     ++timed_out;
                                 }
                                 cv.notify_all();
                             });
    }
    {
        std::unique_lock<std::mutex> l(mu);
        // Refusals arrive within a second; the buffered sends stay unanswered until timeout.
        cv.wait_for(l, 3s, [&] { return answers.size() >= 20; });
        ASSERT_GE(answers.size(), 20u) << "broker-a held its sends instead of refusing them\n"
                                       << a_->log_tail();
        std::set<std::string> tags;
        for (const auto& resp : answers) {
            ASSERT_EQ(resp.code, RC::kSystemBusy) << resp.remark.value_or("");
            const std::string remark = resp.remark.value_or("");
            tags.insert(remark.substr(0, remark.find(']') + 1));
        }
        EXPECT_TRUE(tags.count("[PC_SYNCHRONIZED]") == 1 || tags.count("[REJECTREQUEST]") == 1);
        for (const auto& t : tags) {
            EXPECT_TRUE(t == "[PC_SYNCHRONIZED]" || t == "[REJECTREQUEST]") << t;
        }
        EXPECT_EQ(timed_out, 0);
    }
    auto info = runtime_info(client_, port_a_);
    ASSERT_TRUE(info.is_ok()) << info.status().to_string();
    EXPECT_EQ((*info)["sendThreadPoolQueueCapacity"], "10000");
    EXPECT_EQ((*info)["pullThreadPoolQueueCapacity"], "100000");
    EXPECT_EQ((*info)["queryThreadPoolQueueCapacity"], "20000");
    EXPECT_EQ((*info)["EndTransactionThreadPoolQueueCapacity"], "100000");
    EXPECT_EQ((*info)["sendThreadPoolQueueSize"], "0");
    EXPECT_EQ((*info)["pullThreadPoolQueueHeadWaitTimeMills"], "0");
    EXPECT_GE(std::stoll((*info)["pageCacheLockTimeMills"]), 200);

    // The producer: every send succeeds, on broker-b; broker-a is isolated after its refusal.
    ProducerConfig pc;
    pc.client = client_config();
    DefaultMqProducer producer(pc);
    ASSERT_TRUE(producer.start().is_ok());
    for (int i = 0; i < 12; ++i) {
        auto r = producer.send(Message("BpTopic", "retried"));
        ASSERT_TRUE(r.is_ok()) << i << ": " << r.status().to_string();
        EXPECT_EQ(r->status, SendStatus::kSendOk);
        EXPECT_EQ(r->message_queue.broker_name, "broker-b");
    }
    EXPECT_FALSE(producer.faults().is_available("broker-a"));
    EXPECT_TRUE(producer.faults().is_available("broker-b"));
    producer.shutdown();
    {
        // The buffered sends time out on this side (their bytes wait for the disk).
        std::unique_lock<std::mutex> l(mu);
        cv.wait_for(l, 10s, [&] { return static_cast<int>(answers.size()) + timed_out == kSends; });
    }
}

}  // namespace
}  // namespace comet::it
