// Master <-> slave replication over 127.0.0.1 inside one process, with two real CommitLogs in
// temp dirs. Every wait is bounded (deadline loop with short sleeps on real time: the sockets
// are real, so a ManualClock cannot drive them).
#include "ha/ha_service.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <future>
#include <thread>

#include "../store/commit_log_test_util.h"
#include "ha/ha_client.h"
#include "ha/ha_codec.h"
#include "net/asio.h"
#include "store/commit_log.h"
#include "store/commit_log_running_flags.h"
#include "store/store_checkpoint.h"
#include "ha_test_helper.h"

namespace comet::ha {
namespace {

using namespace std::chrono_literals;
using testing::wait_until;
using store::testing::sample_message;
using store::testing::small_config;
using store::testing::TempDir;

constexpr int64_t kSegment = 64 * 1024;

// A CommitLog in a temp dir, opened and started.
struct LogBox {
    TempDir dir;
    std::unique_ptr<store::StoreCheckpoint> checkpoint;
    store::RunningFlags flags;
    std::unique_ptr<store::CommitLog> log;
    std::unique_ptr<CommitLogHaStore> port;

    explicit LogBox(Clock& clock) {
        auto c = small_config(dir.path(), kSegment);
        checkpoint = store::StoreCheckpoint::open(c.checkpoint_path()).value();
        log = store::CommitLog::open(c, &clock, nullptr, checkpoint.get(), &flags).value();
        EXPECT_TRUE(log->recover_normally().is_ok());
        log->start();
        port = std::make_unique<CommitLogHaStore>(*log);
    }
    ~LogBox() { log->shutdown(); }

    void put_messages(int n, size_t body_size, int tag) {
        for (int i = 0; i < n; ++i) {
            std::string body(body_size, static_cast<char>('a' + (i + tag) % 26));
            auto r = log->put_message(sample_message("HaTopic", i % 4, body)).get();
            ASSERT_TRUE(r.ok()) << store::put_message_status_name(r.status);
        }
    }

    // Every byte from min to max, through the port (segment by segment).
    std::string all_bytes() const {
        std::string out;
        int64_t off = port->min_offset();
        while (off < port->max_offset()) {
            auto c = port->read(off, INT64_MAX);
            if (!c)
                break;
            out.append(c->bytes);
            off += static_cast<int64_t>(c->bytes.size());
        }
        return out;
    }
};

HaServiceConfig master_config() {
    HaServiceConfig c;
    c.broker_name = "broker-a";
    c.listen_host = "127.0.0.1";
    c.transfer_batch_size = 4096;
    c.heartbeat_interval = 200ms;
    c.housekeeping_interval = 2000ms;
    c.tick_interval = 5ms;
    c.quorum.broker_role = BrokerRole::kSyncMaster;
    c.quorum.total_replicas = 2;
    c.quorum.in_sync_replicas = 2;
    return c;
}

HaClientConfig slave_config(uint16_t port) {
    HaClientConfig c;
    c.master_host = "127.0.0.1";
    c.master_port = port;
    c.broker_name = "broker-a";
    c.broker_id = 1;
    c.heartbeat_interval = 100ms;
    c.housekeeping_interval = 2000ms;
    c.reconnect_interval = 50ms;
    c.tick_interval = 5ms;
    return c;
}

// Raw socket posing as a slave, to misbehave on purpose.
struct RawSlave {
    asio::io_context io;
    asio::ip::tcp::socket sock{io};
    explicit RawSlave(uint16_t port) { sock.connect({asio::ip::make_address("127.0.0.1"), port}); }
    void send(const std::string& b) { asio::write(sock, asio::buffer(b)); }
    // Reads until EOF/error or `limit` bytes; returns true when the peer closed.
    bool read_until_closed(size_t limit) {
        std::array<char, 65536> buf;
        size_t total = 0;
        std::error_code ec;
        while (total < limit) {
            size_t n = sock.read_some(asio::buffer(buf), ec);
            if (ec)
                return true;
            total += n;
        }
        return false;
    }
};

TEST(HaService, StreamsWholeCommitLogAcrossSegmentsAndKeepsUp) {
    SystemClock& clock = SystemClock::instance();
    LogBox master(clock), slave(clock);
    master.put_messages(200, 900, 0);  // ~220 KiB: several 64 KiB segments
    ASSERT_GT(master.port->max_offset(), 3 * kSegment);

    auto svc = HaService::start(master_config(), *master.port, clock);
    ASSERT_TRUE(svc.is_ok()) << svc.status().to_string();
    auto cli = HaClient::start(slave_config(svc.value()->port()), *slave.port, clock);
    ASSERT_TRUE(cli.is_ok()) << cli.status().to_string();

    ASSERT_TRUE(wait_until([&] { return slave.port->max_offset() == master.port->max_offset(); }))
        << "slave " << slave.port->max_offset() << " master " << master.port->max_offset();
    EXPECT_EQ(slave.all_bytes(), master.all_bytes());
    // The master saw the slave's ack for everything.
    ASSERT_TRUE(wait_until([&] {
        auto acks = svc.value()->slave_ack_offsets();
        return acks.size() == 1 && acks[0] == master.port->max_offset();
    }));
    auto slaves = svc.value()->slaves();
    ASSERT_EQ(slaves.size(), 1u);
    EXPECT_EQ(slaves[0].broker_id, 1);

    // New puts while connected; a waiting put completes once the slave acks it.
    master.put_messages(50, 500, 7);
    std::promise<store::PutMessageStatus> done;
    svc.value()->group_transfer().put_request(
        master.port->max_offset(), 2, 3s, [&](store::PutMessageStatus s) { done.set_value(s); });
    svc.value()->notify_new_data();
    auto fut = done.get_future();
    ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
    EXPECT_EQ(fut.get(), store::PutMessageStatus::kPutOk);
    ASSERT_TRUE(wait_until([&] { return slave.port->max_offset() == master.port->max_offset(); }));
    EXPECT_EQ(slave.all_bytes(), master.all_bytes());
    EXPECT_EQ(cli.value()->stats().protocol_errors, 0);
    EXPECT_GT(cli.value()->stats().frames, 0);

    cli.value()->shutdown();
    svc.value()->shutdown();
}

TEST(HaService, StreamsPipelinedWithoutWaitingForAcks) {
    // A slave that requests once and never acks still receives everything: the master does not
    // wait for an ack per batch. (If it did, it would stall and drop this silent slave after
    // haHousekeepingInterval, and the read below would end with EOF, not hang.)
    SystemClock& clock = SystemClock::instance();
    LogBox master(clock);
    master.put_messages(150, 900, 3);
    const int64_t end = master.port->max_offset();
    auto svc = HaService::start(master_config(), *master.port, clock).value();
    RawSlave quiet(svc->port());
    quiet.send(encode_handshake({"broker-a", 4}) + encode_report(0));
    TransferDecoder dec;
    std::string copy;
    int frames = 0;
    std::array<char, 65536> buf;
    while (static_cast<int64_t>(copy.size()) < end) {
        std::error_code ec;
        size_t n = quiet.sock.read_some(asio::buffer(buf), ec);
        ASSERT_FALSE(ec) << "master closed after " << copy.size() << " of " << end << " bytes";
        dec.feed(std::string_view(buf.data(), n));
        for (;;) {
            auto f = dec.next();
            ASSERT_TRUE(f.is_ok());
            if (!f.value())
                break;
            if (f.value()->data.empty())
                continue;
            ASSERT_EQ(f.value()->offset, static_cast<int64_t>(copy.size()));
            ASSERT_LE(f.value()->data.size(), 4096u);  // haTransferBatchSize
            copy += f.value()->data;
            ++frames;
        }
    }
    EXPECT_EQ(copy, master.all_bytes());
    EXPECT_GE(frames, static_cast<int>(end / 4096));
    // It acked nothing beyond its request.
    ASSERT_EQ(svc->slave_ack_offsets().size(), 1u);
    EXPECT_EQ(svc->slave_ack_offsets()[0], 0);
}

TEST(HaService, InSyncCountFollowsGap) {
    SystemClock& clock = SystemClock::instance();
    LogBox master(clock), slave(clock);
    master.put_messages(20, 200, 0);
    HaServiceConfig mc = master_config();
    mc.quorum.ha_max_gap_not_in_sync = 1000;
    mc.quorum.enable_slave_acting_master = true;
    auto svc = HaService::start(mc, *master.port, clock).value();
    EXPECT_EQ(svc->in_sync_replica_nums(master.port->max_offset()), 1);
    EXPECT_EQ(svc->decide(true, 2, master.port->max_offset()).verdict,
              QuorumVerdict::kInSyncReplicasNotEnough);

    auto cli = HaClient::start(slave_config(svc->port()), *slave.port, clock).value();
    const int64_t end = master.port->max_offset();
    ASSERT_TRUE(wait_until([&] {
        auto acks = svc->slave_ack_offsets();
        return acks.size() == 1 && acks[0] == end;
    }));
    EXPECT_EQ(svc->in_sync_replica_nums(end), 2);
    EXPECT_EQ(svc->in_sync_replica_nums(end + 999), 2);
    EXPECT_EQ(svc->in_sync_replica_nums(end + 1000), 1);  // gap == haMaxGapNotInSync: out
    auto d = svc->decide(true, 2, end);
    EXPECT_EQ(d.verdict, QuorumVerdict::kWaitForSlaves);
    EXPECT_EQ(d.need_ack_nums, 2);
    EXPECT_EQ(svc->decide(true, 2, end + 5000).verdict, QuorumVerdict::kInSyncReplicasNotEnough);
}

TEST(HaService, HungSlaveIsDroppedAfterHousekeepingInterval) {
    SystemClock& clock = SystemClock::instance();
    LogBox master(clock);
    master.put_messages(300, 1000, 0);  // more than the socket buffers hold
    HaServiceConfig mc = master_config();
    mc.housekeeping_interval = 300ms;
    mc.quorum.ha_max_gap_not_in_sync = 1000;
    auto svc = HaService::start(mc, *master.port, clock).value();
    // Taken before the connection exists: every sign of life the master sees comes after it.
    const auto t0 = std::chrono::steady_clock::now();
    RawSlave hung(svc->port());
    hung.send(encode_handshake({"broker-a", 2}) + encode_report(0));
    ASSERT_TRUE(wait_until([&] { return svc->slaves().size() == 1; }, 30s));
    EXPECT_EQ(svc->in_sync_replica_nums(master.port->max_offset()), 1);  // gap > 1000
    // It never reads or reports again: dropped once 300 ms passed without a report, and not
    // before.
    ASSERT_TRUE(wait_until([&] { return svc->slaves().empty(); }, 30s));
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 300ms);
    EXPECT_EQ(svc->rejected_connections(), 0);  // a timeout, not a protocol violation
    // A waiting put with only the hung slave times out instead of hanging.
    std::promise<store::PutMessageStatus> done;
    svc->group_transfer().put_request(master.port->max_offset(), 2, 100ms,
                                      [&](store::PutMessageStatus s) { done.set_value(s); });
    auto fut = done.get_future();
    ASSERT_EQ(fut.wait_for(30s), std::future_status::ready);
    EXPECT_EQ(fut.get(), store::PutMessageStatus::kFlushSlaveTimeout);
}

TEST(HaService, AckAboveWhatWasSentClosesTheConnection) {
    SystemClock& clock = SystemClock::instance();
    LogBox master(clock);
    master.put_messages(5, 100, 0);
    auto svc = HaService::start(master_config(), *master.port, clock).value();
    RawSlave liar(svc->port());
    // Request from the end (nothing to send), then claim more than was ever sent.
    liar.send(encode_handshake({"broker-a", 3}) + encode_report(master.port->max_offset()) +
              encode_report(master.port->max_offset() + 1));
    EXPECT_TRUE(liar.read_until_closed(1 << 20));
    ASSERT_TRUE(wait_until([&] { return svc->rejected_connections() == 1; }));
    EXPECT_TRUE(svc->slaves().empty());
}

TEST(HaService, FirstRequestBeyondMasterEndIsRejected) {
    SystemClock& clock = SystemClock::instance();
    LogBox master(clock);
    auto svc = HaService::start(master_config(), *master.port, clock).value();
    RawSlave liar(svc->port());
    liar.send(encode_report(1 << 20));  // plain RocketMQ-style report, empty master
    EXPECT_TRUE(liar.read_until_closed(1 << 20));
    ASSERT_TRUE(wait_until([&] { return svc->rejected_connections() == 1; }));
}

TEST(HaService, WrongGroupOrBrokerIdInHandshakeIsRejected) {
    SystemClock& clock = SystemClock::instance();
    LogBox master(clock);
    auto svc = HaService::start(master_config(), *master.port, clock).value();
    {
        RawSlave other(svc->port());
        other.send(encode_handshake({"broker-b", 1}) + encode_report(0));
        EXPECT_TRUE(other.read_until_closed(1 << 20));
    }
    {
        RawSlave master_id(svc->port());
        master_id.send(encode_handshake({"broker-a", 0}) + encode_report(0));
        EXPECT_TRUE(master_id.read_until_closed(1 << 20));
    }
    ASSERT_TRUE(wait_until([&] { return svc->rejected_connections() == 2; }));
    EXPECT_TRUE(svc->slaves().empty());
}

TEST(HaService, PlainRocketMqSlaveAcceptedUnlessHandshakeRequired) {
    SystemClock& clock = SystemClock::instance();
    LogBox master(clock), slave(clock), slave2(clock);
    master.put_messages(30, 300, 0);
    auto svc = HaService::start(master_config(), *master.port, clock).value();
    HaClientConfig sc = slave_config(svc->port());
    sc.send_handshake = false;
    auto cli = HaClient::start(sc, *slave.port, clock).value();
    ASSERT_TRUE(wait_until([&] { return slave.port->max_offset() == master.port->max_offset(); }));
    EXPECT_EQ(svc->slaves().at(0).broker_id, -1);
    cli->shutdown();

    HaServiceConfig strict = master_config();
    strict.require_handshake = true;
    auto svc2 = HaService::start(strict, *master.port, clock).value();
    sc.master_port = svc2->port();
    auto cli2 = HaClient::start(sc, *slave2.port, clock).value();
    ASSERT_TRUE(wait_until([&] { return svc2->rejected_connections() >= 1; }));
    EXPECT_EQ(slave2.port->max_offset(), 0);
}

TEST(HaService, SlaveFollowsMasterAddressChange) {
    SystemClock& clock = SystemClock::instance();
    LogBox master(clock), slave(clock);
    master.put_messages(10, 100, 0);
    uint16_t dead_port = 0;
    {
        asio::io_context io;
        asio::ip::tcp::acceptor a(io, {asio::ip::make_address("127.0.0.1"), 0});
        dead_port = a.local_endpoint().port();
    }  // closed: connects there are refused
    auto cli = HaClient::start(slave_config(dead_port), *slave.port, clock).value();
    auto svc = HaService::start(master_config(), *master.port, clock).value();
    // It tried the dead address and failed (not merely: has not tried yet).
    ASSERT_TRUE(wait_until([&] { return cli->stats().connect_failures >= 1; }, 30s));
    EXPECT_FALSE(cli->stats().connected);
    EXPECT_EQ(cli->stats().connects, 0);
    cli->update_master_address("127.0.0.1", svc->port());
    ASSERT_TRUE(wait_until([&] { return slave.port->max_offset() == master.port->max_offset(); }));
    EXPECT_EQ(cli->stats().connects, 1);
}

TEST(HaService, RejectsBadConfig) {
    SystemClock& clock = SystemClock::instance();
    LogBox master(clock);
    HaServiceConfig c = master_config();
    c.quorum.in_sync_replicas = 3;  // > totalReplicas 2
    auto r = HaService::start(c, *master.port, clock);
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("totalReplicas"), std::string::npos);
    HaClientConfig sc = slave_config(1);
    sc.broker_id = 0;
    EXPECT_FALSE(HaClient::start(sc, *master.port, clock).is_ok());
}

}  // namespace
}  // namespace comet::ha
