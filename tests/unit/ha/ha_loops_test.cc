// HaService and HaClient on a shared net::IoLoopGroup (as in the broker, decision 029): slaves
// bound to different loops, GroupTransfer completions on an I/O thread, shutdown while the
// group keeps running and the stores go away right after, and shutdown of a group that never
// ran. Real sockets on 127.0.0.1; every wait bounded.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>

#include "../store/commit_log_test_util.h"
#include "ha/ha_client.h"
#include "ha/ha_service.h"
#include "net/asio.h"
#include "net/io_loop.h"
#include "store/commit_log.h"
#include "store/commit_log_running_flags.h"
#include "store/store_checkpoint.h"
#include "ha_test_helper.h"

namespace comet::ha::loops_test {

using namespace std::chrono_literals;
using testing::wait_until;

constexpr int64_t kSegment = 64 * 1024;

// A started CommitLog in a temp dir with its HA port.
struct Log {
    store::testing::TempDir dir;
    std::unique_ptr<store::StoreCheckpoint> checkpoint;
    store::RunningFlags flags;
    std::unique_ptr<store::CommitLog> log;
    std::unique_ptr<CommitLogHaStore> port;

    explicit Log(Clock& clock) {
        auto c = store::testing::small_config(dir.path(), kSegment);
        checkpoint = store::StoreCheckpoint::open(c.checkpoint_path()).value();
        log = store::CommitLog::open(c, &clock, nullptr, checkpoint.get(), &flags).value();
        EXPECT_TRUE(log->recover_normally().is_ok());
        log->start();
        port = std::make_unique<CommitLogHaStore>(*log);
    }
    ~Log() { log->shutdown(); }

    void put(int n, size_t body_size) {
        for (int i = 0; i < n; ++i) {
            std::string body(body_size, static_cast<char>('a' + i % 26));
            auto r =
                log->put_message(store::testing::sample_message("LoopTopic", i % 4, body)).get();
            ASSERT_TRUE(r.ok()) << store::put_message_status_name(r.status);
        }
    }
};

HaServiceConfig master_cfg() {
    HaServiceConfig c;
    c.broker_name = "broker-l";
    c.listen_host = "127.0.0.1";
    c.transfer_batch_size = 4096;
    c.heartbeat_interval = 200ms;
    c.housekeeping_interval = 5000ms;
    c.tick_interval = 5ms;
    c.quorum.broker_role = BrokerRole::kSyncMaster;
    c.quorum.total_replicas = 3;
    c.quorum.in_sync_replicas = 2;
    return c;
}

HaClientConfig slave_cfg(uint16_t port, int64_t id) {
    HaClientConfig c;
    c.master_host = "127.0.0.1";
    c.master_port = port;
    c.broker_name = "broker-l";
    c.broker_id = id;
    c.heartbeat_interval = 100ms;
    c.housekeeping_interval = 5000ms;
    c.reconnect_interval = 50ms;
    c.tick_interval = 5ms;
    return c;
}

// Runs on loop `i` of the group and reports whether it ran (bounded wait).
bool loop_runs(net::IoLoopGroup& group, size_t i) {
    auto p = std::make_shared<std::promise<void>>();
    auto f = p->get_future();
    asio::post(group.context(i), [p] { p->set_value(); });
    return f.wait_for(10s) == std::future_status::ready;
}

TEST(HaOnSharedLoops, TwoSlavesOnAThreeLoopGroupCopyTheLogAndPutsCompleteOnAnIoThread) {
    SystemClock& clock = SystemClock::instance();
    Log master(clock), s1(clock), s2(clock);
    master.put(100, 700);
    auto group = std::make_shared<net::IoLoopGroup>("HaLoopTest", 3);
    group->start();
    auto svc = HaService::start(master_cfg(), *master.port, clock, nullptr, group);
    ASSERT_TRUE(svc.is_ok()) << svc.status().to_string();
    auto c1 = HaClient::start(slave_cfg(svc.value()->port(), 1), *s1.port, clock, nullptr, group);
    auto c2 = HaClient::start(slave_cfg(svc.value()->port(), 2), *s2.port, clock, nullptr, group);
    ASSERT_TRUE(c1.is_ok() && c2.is_ok());
    const int64_t end = master.port->max_offset();
    ASSERT_TRUE(wait_until([&] {
        return s1.port->max_offset() == end && s2.port->max_offset() == end &&
               svc.value()->slave_ack_offsets().size() == 2 &&
               svc.value()->slave_ack_offsets()[0] == end &&
               svc.value()->slave_ack_offsets()[1] == end;
    }));

    // A put waiting for the slaves completes from their acks, on an I/O thread of the group.
    // Registered before the bytes exist (any offset past `end`), so no ack can precede it and
    // complete it on this thread.
    std::promise<std::pair<store::PutMessageStatus, bool>> done;
    auto fut = done.get_future();
    svc.value()->group_transfer().put_request(end + 1, 2, 10s, [&done](store::PutMessageStatus st) {
        done.set_value({st, net::IoLoopGroup::on_io_thread()});
    });
    master.put(1, 500);
    const int64_t next = master.port->max_offset();
    svc.value()->notify_new_data();
    ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
    auto [status, on_io] = fut.get();
    EXPECT_EQ(status, store::PutMessageStatus::kPutOk);
    EXPECT_TRUE(on_io);
    ASSERT_TRUE(wait_until(
        [&] { return s1.port->max_offset() == next && s2.port->max_offset() == next; }));

    c1.value()->shutdown();
    c2.value()->shutdown();
    svc.value()->shutdown();
    EXPECT_EQ(svc.value()->slaves().size(), 0u);
    // The group keeps serving after HA left it.
    for (size_t i = 0; i < group->size(); ++i) {
        EXPECT_TRUE(loop_runs(*group, i)) << "loop " << i;
    }
    group->shutdown();
}

TEST(HaOnSharedLoops, ShutdownMidStreamThenFreeTheStoresWhileTheGroupRuns) {
    SystemClock& clock = SystemClock::instance();
    auto group = std::make_shared<net::IoLoopGroup>("HaLoopTest", 2);
    group->start();
    for (int round = 0; round < 3; ++round) {
        auto master = std::make_unique<Log>(clock);
        auto slave = std::make_unique<Log>(clock);
        master->put(300, 900);  // several segments: the stream is still running below
        auto svc = HaService::start(master_cfg(), *master->port, clock, nullptr, group).value();
        auto cli = HaClient::start(slave_cfg(svc->port(), 1), *slave->port, clock, nullptr,
                                   group).value();
        ASSERT_TRUE(wait_until([&] { return slave->port->max_offset() > 0; }));
        // Stopped with frames in flight; the stores go at once. A handler still queued on the
        // loops must not touch them (ASan / TSan builds check).
        if (round % 2 == 0) {
            svc->shutdown();
            cli->shutdown();
        } else {
            cli->shutdown();
            svc->shutdown();
        }
        const int64_t copied = slave->port->max_offset();
        svc.reset();
        cli.reset();
        master.reset();
        slave.reset();
        EXPECT_GT(copied, 0);
        for (size_t i = 0; i < group->size(); ++i) {
            EXPECT_TRUE(loop_runs(*group, i)) << "round " << round << " loop " << i;
        }
    }
    group->shutdown();
}

TEST(HaOnSharedLoops, ShutdownReturnsWhenTheGroupNeverRan) {
    SystemClock& clock = SystemClock::instance();
    Log master(clock), slave(clock);
    auto group = std::make_shared<net::IoLoopGroup>("HaLoopTest", 2);  // never started
    auto svc = HaService::start(master_cfg(), *master.port, clock, nullptr, group);
    ASSERT_TRUE(svc.is_ok()) << svc.status().to_string();
    EXPECT_GT(svc.value()->port(), 0);
    auto cli = HaClient::start(slave_cfg(svc.value()->port(), 1), *slave.port, clock, nullptr,
                               group);
    ASSERT_TRUE(cli.is_ok());
    cli.value()->shutdown();
    svc.value()->shutdown();
    EXPECT_EQ(cli.value()->stats().connects, 0);
    // A put registered after shutdown fails at once.
    std::atomic<int> calls{0};
    store::PutMessageStatus got = store::PutMessageStatus::kPutOk;
    svc.value()->group_transfer().put_request(1, 2, 1s, [&](store::PutMessageStatus st) {
        got = st;
        calls.fetch_add(1);
    });
    EXPECT_EQ(calls.load(), 1);
    EXPECT_EQ(got, store::PutMessageStatus::kServiceNotAvailable);
    // The handlers posted to the never-run loops own the services' state (and that state owns
    // the group): run them out, after the services stopped, so that nothing is left behind.
    group->start();
    group->shutdown();
}

}  // namespace comet::ha::loops_test
