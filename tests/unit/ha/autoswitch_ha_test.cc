// AutoSwitch (controller-mode) master <-> slave over 127.0.0.1 inside one process, on in-memory
// fakes of HaStorePort and EpochPort. Every wait is bounded (deadline loop with short sleeps on
// real time: the sockets are real, so a ManualClock cannot drive them); nothing asserts on time.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "ha/autoswitch_codec.h"
#include "ha/epoch_port.h"
#include "ha/ha_client.h"
#include "ha/ha_service.h"
#include "net/asio.h"
#include "ha_test_helper.h"

namespace comet::ha {
namespace {

using namespace std::chrono_literals;
using testing::wait_until;
using store::EpochEntry;

// A CommitLog as one string, read in segments of `segment` bytes (reads never cross one).
class FakeStore final : public HaStorePort {
public:
    explicit FakeStore(int64_t segment = 4096) : segment_(segment) {}

    int64_t min_offset() const override { return 0; }
    int64_t max_offset() const override {
        MutexLock l(mu_);
        return static_cast<int64_t>(bytes_.size());
    }
    int64_t last_file_start() const override {
        int64_t max = max_offset();
        return max - max % segment_;
    }
    std::optional<HaChunk> read(int64_t offset, int64_t max_bytes) const override {
        MutexLock l(mu_);
        auto size = static_cast<int64_t>(bytes_.size());
        if (offset < 0 || offset >= size) {
            return std::nullopt;
        }
        int64_t n = std::min({max_bytes, size - offset, segment_ - offset % segment_});
        auto piece = std::make_shared<std::string>(
            bytes_.substr(static_cast<size_t>(offset), static_cast<size_t>(n)));
        HaChunk c;
        c.bytes = *piece;
        c.keep = std::move(piece);
        return c;
    }
    Status append(int64_t start, std::string_view data) override {
        MutexLock l(mu_);
        if (start != static_cast<int64_t>(bytes_.size())) {
            return Status::error(Errc::kInvalidArgument, "append at {} but the log ends at {}",
                                 start, bytes_.size());
        }
        bytes_.append(data);
        return Status::ok();
    }

    void put(const std::string& data) {
        MutexLock l(mu_);
        bytes_ += data;
    }
    void truncate(int64_t end) {
        MutexLock l(mu_);
        bytes_.resize(static_cast<size_t>(end));
    }
    std::string all() const {
        MutexLock l(mu_);
        return bytes_;
    }

private:
    const int64_t segment_;
    mutable Mutex mu_;
    std::string bytes_ GUARDED_BY(mu_);
};

// The epoch file and confirm offset over a FakeStore, with what the HA code did to it.
class FakeEpochs final : public EpochPort {
public:
    FakeEpochs(FakeStore& store, std::vector<EpochEntry> entries)
        : store_(store), entries_(std::move(entries)) {}

    std::vector<EpochEntry> epochs() const override {
        MutexLock l(mu_);
        return entries_;
    }
    int64_t confirm_offset() const override {
        MutexLock l(mu_);
        return master_confirm_;
    }
    Status truncate_to(int64_t end) override {
        MutexLock l(mu_);
        ++truncate_calls_;
        if (fail_truncations_ > 0) {
            --fail_truncations_;
            return Status::error(Errc::kIoError, "injected truncate failure at {}", end);
        }
        store_.truncate(end);
        std::erase_if(entries_, [end](const EpochEntry& e) { return e.start_offset >= end; });
        return Status::ok();
    }
    Status begin_epoch(int64_t epoch, int64_t start_offset) override {
        MutexLock l(mu_);
        if (!entries_.empty() &&
            (epoch <= entries_.back().epoch || start_offset < entries_.back().start_offset)) {
            ++bad_begins_;
            return Status::error(Errc::kInvalidArgument, "epoch {}@{} after {}@{}", epoch,
                                 start_offset, entries_.back().epoch, entries_.back().start_offset);
        }
        entries_.push_back({epoch, start_offset});
        return Status::ok();
    }
    void set_confirm_offset(int64_t offset) override {
        int64_t max = store_.max_offset();
        MutexLock l(mu_);
        if (offset > max) {
            ++confirm_above_max_;
        }
        slave_confirm_ = offset;
    }

    void set_master_confirm(int64_t v) {
        MutexLock l(mu_);
        master_confirm_ = v;
    }
    void add_epoch(EpochEntry e) {
        MutexLock l(mu_);
        entries_.push_back(e);
    }
    void fail_next_truncations(int n) {
        MutexLock l(mu_);
        fail_truncations_ = n;
    }
    int64_t slave_confirm() const {
        MutexLock l(mu_);
        return slave_confirm_;
    }
    int confirm_above_max() const {
        MutexLock l(mu_);
        return confirm_above_max_;
    }
    int truncate_calls() const {
        MutexLock l(mu_);
        return truncate_calls_;
    }
    int bad_begins() const {
        MutexLock l(mu_);
        return bad_begins_;
    }

private:
    FakeStore& store_;
    mutable Mutex mu_;
    std::vector<EpochEntry> entries_ GUARDED_BY(mu_);
    int64_t master_confirm_ GUARDED_BY(mu_) = 0;
    int64_t slave_confirm_ GUARDED_BY(mu_) = -1;
    int confirm_above_max_ GUARDED_BY(mu_) = 0;
    int truncate_calls_ GUARDED_BY(mu_) = 0;
    int fail_truncations_ GUARDED_BY(mu_) = 0;
    int bad_begins_ GUARDED_BY(mu_) = 0;
};

// Distinct bytes per position, so a misplaced copy shows.
std::string pattern(size_t n, char tag) {
    std::string s(n, tag);
    for (size_t i = 0; i < n; i += 7)
        s[i] = static_cast<char>('0' + i % 10);
    return s;
}

HaServiceConfig auto_switch_master_config() {
    HaServiceConfig c;
    c.broker_name = "broker-a";
    c.listen_host = "127.0.0.1";
    c.transfer_batch_size = 1000;
    c.heartbeat_interval = 100ms;
    c.housekeeping_interval = 2000ms;
    c.tick_interval = 5ms;
    c.auto_switch = true;
    c.quorum.broker_role = BrokerRole::kSyncMaster;
    c.quorum.total_replicas = 2;
    c.quorum.in_sync_replicas = 2;
    return c;
}

HaClientConfig auto_switch_slave_config(uint16_t port, int64_t broker_id = 2) {
    HaClientConfig c;
    c.master_host = "127.0.0.1";
    c.master_port = port;
    c.broker_name = "broker-a";
    c.broker_id = broker_id;
    c.heartbeat_interval = 100ms;
    c.housekeeping_interval = 2000ms;
    c.reconnect_interval = 50ms;
    c.tick_interval = 5ms;
    c.auto_switch = true;
    return c;
}

// Raw socket posing as an AutoSwitch slave.
struct AutoSwitchSlave {
    asio::io_context io;
    asio::ip::tcp::socket sock{io};
    AutoSwitchMasterStreamDecoder dec;
    explicit AutoSwitchSlave(uint16_t port) { sock.connect({asio::ip::make_address("127.0.0.1"), port}); }
    void send(const std::string& b) { asio::write(sock, asio::buffer(b)); }
    // Next message from the master; nullopt when the master closed. Blocks on the socket (the
    // master's heartbeats or its close end the wait).
    std::optional<AutoSwitchMasterStreamDecoder::Message> next() {
        std::array<char, 65536> buf;
        for (;;) {
            auto r = dec.next();
            EXPECT_TRUE(r.is_ok()) << r.status().to_string();
            if (!r.is_ok())
                return std::nullopt;
            if (r.value())
                return std::move(*r.value());
            std::error_code ec;
            size_t n = sock.read_some(asio::buffer(buf), ec);
            if (ec)
                return std::nullopt;
            dec.feed(std::string_view(buf.data(), n));
        }
    }
};

TEST(AutoSwitchHa, DivergentSlaveIsTruncatedThenFollowsTheNewEpoch) {
    SystemClock& clock = SystemClock::instance();
    const int64_t x = 3000;  // epoch 1 ends here on both; then they diverge
    const std::string common = pattern(x, 'a');
    FakeStore mstore, sstore;
    mstore.put(common + pattern(5000, 'c'));  // master: epoch 3 from x
    sstore.put(common + pattern(1800, 'b'));  // slave: an epoch 2 the master never had
    FakeEpochs mep(mstore, {{1, 0}, {3, x}});
    FakeEpochs sep(sstore, {{1, 0}, {2, x}});
    mep.set_master_confirm(mstore.max_offset());

    auto svc = HaService::start(auto_switch_master_config(), mstore, clock, &mep);
    ASSERT_TRUE(svc.is_ok()) << svc.status().to_string();
    auto cli = HaClient::start(auto_switch_slave_config(svc.value()->port()), sstore, clock, &sep);
    ASSERT_TRUE(cli.is_ok()) << cli.status().to_string();

    ASSERT_TRUE(wait_until([&] { return sstore.all() == mstore.all(); }))
        << "slave " << sstore.max_offset() << " master " << mstore.max_offset();
    EXPECT_EQ(sep.epochs(), (std::vector<EpochEntry>{{1, 0}, {3, x}}));
    auto st = cli.value()->stats();
    EXPECT_EQ(st.truncations, 1);
    EXPECT_EQ(st.handshakes, 1);
    EXPECT_EQ(st.protocol_errors, 0);
    EXPECT_EQ(sep.bad_begins(), 0);

    // The master saw brokerControllerId 2 and an ack for everything; it keeps up with new data.
    ASSERT_TRUE(wait_until([&] {
        auto acks = svc.value()->slave_ack_offsets();
        return acks.size() == 1 && acks[0] == mstore.max_offset();
    }));
    auto slaves = svc.value()->slaves();
    ASSERT_EQ(slaves.size(), 1u);
    EXPECT_EQ(slaves[0].broker_id, 2);
    EXPECT_FALSE(slaves[0].async_learner);
    EXPECT_NE(slaves[0].caught_up_at, TimePoint{});

    const TimePoint before_put = clock.now();
    mstore.put(pattern(2500, 'd'));
    svc.value()->notify_new_data();
    ASSERT_TRUE(wait_until([&] { return sstore.all() == mstore.all(); }));
    ASSERT_TRUE(wait_until([&] {
        auto s = svc.value()->slaves();
        return s.size() == 1 && s[0].caught_up_at >= before_put;
    }));
    EXPECT_EQ(sep.epochs(), (std::vector<EpochEntry>{{1, 0}, {3, x}}));
    EXPECT_EQ(cli.value()->stats().truncations, 1);
}

TEST(AutoSwitchHa, FramesNeverSpanTwoEpochs) {
    SystemClock& clock = SystemClock::instance();
    const int64_t boundary = 2500;  // not a multiple of the 1000-byte batch
    FakeStore mstore;
    mstore.put(pattern(boundary, 'a') + pattern(4200, 'b'));
    FakeEpochs mep(mstore, {{1, 0}, {2, boundary}});
    mep.set_master_confirm(1234);
    auto svc = HaService::start(auto_switch_master_config(), mstore, clock, &mep).value();

    AutoSwitchSlave raw(svc->port());
    raw.send(encode_autoswitch_slave_handshake({false, true, 5}));
    auto hs = raw.next();
    ASSERT_TRUE(hs);
    ASSERT_EQ(hs->kind, AutoSwitchMasterStreamDecoder::Message::Kind::kHandshake);
    EXPECT_EQ(hs->handshake.max_offset, mstore.max_offset());
    EXPECT_EQ(hs->handshake.last_epoch, 2);
    EXPECT_EQ(hs->handshake.epochs, mep.epochs());
    raw.send(encode_autoswitch_report(0));

    std::string copy;
    std::vector<int64_t> frame_starts;
    while (static_cast<int64_t>(copy.size()) < mstore.max_offset()) {
        auto m = raw.next();
        ASSERT_TRUE(m) << "master closed after " << copy.size() << " bytes";
        ASSERT_EQ(m->kind, AutoSwitchMasterStreamDecoder::Message::Kind::kTransfer);
        if (m->data.empty())
            continue;
        const auto& h = m->header;
        const auto end = h.offset + static_cast<int64_t>(m->data.size());
        ASSERT_EQ(h.offset, static_cast<int64_t>(copy.size()));
        ASSERT_LE(m->data.size(), 1000u);
        if (h.offset < boundary) {
            EXPECT_EQ(h.epoch, 1);
            EXPECT_EQ(h.epoch_start_offset, 0);
            EXPECT_LE(end, boundary) << "frame [" << h.offset << ", " << end << ") spans epochs";
        } else {
            EXPECT_EQ(h.epoch, 2);
            EXPECT_EQ(h.epoch_start_offset, boundary);
        }
        EXPECT_EQ(h.confirm_offset, 1234);
        frame_starts.push_back(h.offset);
        copy += m->data;
    }
    EXPECT_EQ(copy, mstore.all());
    EXPECT_EQ(frame_starts,
              (std::vector<int64_t>{0, 1000, 2000, 2500, 3500, 4096, 5096, 6096}));  // segments
    ASSERT_TRUE(wait_until([&] { return svc->slaves().size() == 1; }));
    EXPECT_EQ(svc->slaves()[0].broker_id, 5);
    EXPECT_TRUE(svc->slaves()[0].async_learner);
    // Caught up to nothing yet: it asked for 0 and acked nothing since.
    EXPECT_EQ(svc->slaves()[0].caught_up_at, TimePoint{});

    // A real empty slave ends with the master's bytes and epoch list.
    FakeStore sstore;
    FakeEpochs sep(sstore, {});
    auto cli = HaClient::start(auto_switch_slave_config(svc->port(), 3), sstore, clock, &sep).value();
    ASSERT_TRUE(wait_until([&] { return sstore.all() == mstore.all(); }));
    EXPECT_EQ(sep.epochs(), mep.epochs());
    EXPECT_EQ(cli->stats().truncations, 0);
    EXPECT_EQ(sep.truncate_calls(), 0);
}

TEST(AutoSwitchHa, ConfirmOffsetReachesSlaveCappedAtItsMax) {
    SystemClock& clock = SystemClock::instance();
    FakeStore mstore, sstore;
    mstore.put(pattern(6000, 'a'));
    FakeEpochs mep(mstore, {{1, 0}});
    FakeEpochs sep(sstore, {});
    mep.set_master_confirm(1234);
    auto svc = HaService::start(auto_switch_master_config(), mstore, clock, &mep).value();
    auto cli = HaClient::start(auto_switch_slave_config(svc->port()), sstore, clock, &sep).value();
    ASSERT_TRUE(wait_until([&] { return sstore.all() == mstore.all(); }));
    ASSERT_TRUE(wait_until([&] { return sep.slave_confirm() == 1234; }));

    // A confirm offset above what the slave holds is capped at the slave's max offset.
    mep.set_master_confirm(mstore.max_offset() + 1000);
    ASSERT_TRUE(wait_until([&] { return sep.slave_confirm() == sstore.max_offset(); }));
    mstore.put(pattern(3000, 'b'));
    mep.set_master_confirm(mstore.max_offset() + 1000);
    svc->notify_new_data();
    ASSERT_TRUE(wait_until([&] {
        return sstore.max_offset() == mstore.max_offset() &&
               sep.slave_confirm() == mstore.max_offset();
    }));
    EXPECT_EQ(sep.confirm_above_max(), 0);
}

TEST(AutoSwitchHa, SlaveWithNoCommonEpochIsRefusedAndRetries) {
    SystemClock& clock = SystemClock::instance();
    FakeStore mstore, sstore;
    mstore.put(pattern(3000, 'a'));
    sstore.put(pattern(2000, 'z'));
    FakeEpochs mep(mstore, {{1, 0}, {2, 1000}});
    FakeEpochs sep(sstore, {{7, 0}});
    auto svc = HaService::start(auto_switch_master_config(), mstore, clock, &mep).value();
    auto cli = HaClient::start(auto_switch_slave_config(svc->port()), sstore, clock, &sep).value();
    // Refused at least twice: it reconnected after the first refusal and was refused again.
    ASSERT_TRUE(wait_until([&] { return cli->stats().no_consistent_point >= 2; }));
    EXPECT_GE(cli->stats().connects, 2);
    EXPECT_EQ(cli->stats().handshakes, 0);
    EXPECT_EQ(sep.truncate_calls(), 0);
    EXPECT_EQ(sstore.all(), pattern(2000, 'z'));
    EXPECT_EQ(sep.epochs(), (std::vector<EpochEntry>{{7, 0}}));
}

TEST(AutoSwitchHa, FailedTruncationClosesAndRetries) {
    SystemClock& clock = SystemClock::instance();
    FakeStore mstore, sstore;
    const std::string common = pattern(1500, 'a');
    mstore.put(common + pattern(1000, 'm'));
    sstore.put(common + pattern(700, 's'));
    FakeEpochs mep(mstore, {{1, 0}, {3, 1500}});
    FakeEpochs sep(sstore, {{1, 0}, {2, 1500}});
    sep.fail_next_truncations(1);
    auto svc = HaService::start(auto_switch_master_config(), mstore, clock, &mep).value();
    auto cli = HaClient::start(auto_switch_slave_config(svc->port()), sstore, clock, &sep).value();
    ASSERT_TRUE(wait_until([&] { return sstore.all() == mstore.all(); }));
    EXPECT_EQ(sep.truncate_calls(), 2);
    EXPECT_GE(cli->stats().protocol_errors, 1);
    EXPECT_GE(cli->stats().connects, 2);
    EXPECT_EQ(sep.epochs(), (std::vector<EpochEntry>{{1, 0}, {3, 1500}}));
}

TEST(AutoSwitchHa, SlaveAheadInTheSameEpochIsCutToTheMastersEnd) {
    // The old master wrote more of epoch 1 than the new one kept; the new one started epoch 2.
    SystemClock& clock = SystemClock::instance();
    FakeStore mstore, sstore;
    const std::string common = pattern(1200, 'a');
    mstore.put(common + pattern(800, 'n'));
    sstore.put(common + pattern(900, 'o'));
    FakeEpochs mep(mstore, {{1, 0}, {2, 1200}});
    FakeEpochs sep(sstore, {{1, 0}});
    auto svc = HaService::start(auto_switch_master_config(), mstore, clock, &mep).value();
    auto cli = HaClient::start(auto_switch_slave_config(svc->port()), sstore, clock, &sep).value();
    ASSERT_TRUE(wait_until([&] { return sstore.all() == mstore.all(); }));
    EXPECT_EQ(sep.epochs(), mep.epochs());
    EXPECT_EQ(cli->stats().truncations, 1);
}

TEST(AutoSwitchHa, EmptyNewEpochOnTheMasterReachesTheSlaveByHeartbeat) {
    SystemClock& clock = SystemClock::instance();
    FakeStore mstore, sstore;
    mstore.put(pattern(1500, 'a'));
    FakeEpochs mep(mstore, {{1, 0}});
    FakeEpochs sep(sstore, {});
    auto svc = HaService::start(auto_switch_master_config(), mstore, clock, &mep).value();
    auto cli = HaClient::start(auto_switch_slave_config(svc->port()), sstore, clock, &sep).value();
    ASSERT_TRUE(wait_until([&] { return sstore.all() == mstore.all(); }));
    mep.add_epoch({4, 1500});  // re-elected: a new epoch, no data yet
    ASSERT_TRUE(wait_until([&] { return sep.epochs() == mep.epochs(); }));
    mstore.put(pattern(700, 'b'));
    svc->notify_new_data();
    ASSERT_TRUE(wait_until([&] { return sstore.all() == mstore.all(); }));
    EXPECT_EQ(sep.epochs(), (std::vector<EpochEntry>{{1, 0}, {4, 1500}}));
    EXPECT_EQ(cli->stats().protocol_errors, 0);
}

TEST(AutoSwitchHa, MasterRejectsBadHandshakes) {
    SystemClock& clock = SystemClock::instance();
    FakeStore mstore;
    mstore.put(pattern(100, 'a'));
    FakeEpochs mep(mstore, {{1, 0}});
    auto svc = HaService::start(auto_switch_master_config(), mstore, clock, &mep).value();
    {
        AutoSwitchSlave zero(svc->port());  // brokerControllerId 0
        zero.send(encode_autoswitch_slave_handshake({false, false, 0}));
        EXPECT_FALSE(zero.next());
    }
    {
        AutoSwitchSlave eager(svc->port());  // reports before its handshake
        eager.send(encode_autoswitch_report(0));
        EXPECT_FALSE(eager.next());
    }
    {
        AutoSwitchSlave classic(svc->port());  // a classic 8-byte report: state 0 = READY
        classic.send(std::string(12, '\0'));
        EXPECT_FALSE(classic.next());
    }
    ASSERT_TRUE(wait_until([&] { return svc->rejected_connections() == 3; }));
    EXPECT_TRUE(svc->slaves().empty());
}

TEST(AutoSwitchHa, SyncFromLastFileStartsAtTheLastSegment) {
    SystemClock& clock = SystemClock::instance();
    FakeStore mstore(1000);
    mstore.put(pattern(3400, 'a'));
    FakeEpochs mep(mstore, {{1, 0}});
    auto svc = HaService::start(auto_switch_master_config(), mstore, clock, &mep).value();
    AutoSwitchSlave raw(svc->port());
    raw.send(encode_autoswitch_slave_handshake({true, false, 9}));
    ASSERT_TRUE(raw.next());  // handshake
    raw.send(encode_autoswitch_report(0));
    std::optional<AutoSwitchMasterStreamDecoder::Message> m;
    do {
        m = raw.next();
        ASSERT_TRUE(m);
    } while (m->data.empty());
    EXPECT_EQ(m->header.offset, 3000);
    EXPECT_EQ(m->data, mstore.all().substr(3000));
}

TEST(AutoSwitchHa, ClassicModeFillsCaughtUpToo) {
    SystemClock& clock = SystemClock::instance();
    FakeStore mstore, sstore;
    mstore.put(pattern(5000, 'a'));
    HaServiceConfig mc = auto_switch_master_config();
    mc.auto_switch = false;
    HaClientConfig sc = auto_switch_slave_config(0);
    sc.auto_switch = false;
    auto svc = HaService::start(mc, mstore, clock).value();
    sc.master_port = svc->port();
    auto cli = HaClient::start(sc, sstore, clock).value();
    ASSERT_TRUE(wait_until([&] { return sstore.all() == mstore.all(); }));
    ASSERT_TRUE(wait_until([&] {
        auto s = svc->slaves();
        return s.size() == 1 && s[0].caught_up_at != TimePoint{};
    }));
}

TEST(AutoSwitchHa, AutoSwitchNeedsAnEpochPort) {
    SystemClock& clock = SystemClock::instance();
    FakeStore store;
    EXPECT_FALSE(HaService::start(auto_switch_master_config(), store, clock).is_ok());
    EXPECT_FALSE(HaClient::start(auto_switch_slave_config(1), store, clock).is_ok());
}

}  // namespace
}  // namespace comet::ha

namespace comet::ha {
namespace {

TEST(AutoSwitchHa, OnlySlavesTheAckFilterAcceptsCountTowardsAPut) {
    // Controller mode: a put waits for SyncStateSet members; a caught-up slave outside the set
    // must not complete it.
    SystemClock& clock = SystemClock::instance();
    FakeStore mstore, in_set, outside;
    mstore.put(pattern(4000, 'a'));
    FakeEpochs mep(mstore, {{1, 0}});
    FakeEpochs in_ep(in_set, {});
    FakeEpochs out_ep(outside, {});
    mep.set_master_confirm(4000);
    auto svc = HaService::start(auto_switch_master_config(), mstore, clock, &mep).value();
    std::atomic<bool> accept_2{false};
    svc->set_ack_filter([&](int64_t id) { return id == 2 && accept_2.load(); });
    auto outsider = HaClient::start(auto_switch_slave_config(svc->port(), 3), outside, clock, &out_ep).value();
    ASSERT_TRUE(wait_until([&] { return outside.max_offset() == mstore.max_offset(); }));
    std::atomic<int> done{0};
    std::atomic<int> status{-1};
    svc->group_transfer().put_request(4000, 2, 5s, [&](store::PutMessageStatus st) {
        status = static_cast<int>(st);
        ++done;
    });
    EXPECT_TRUE(svc->slave_ack_offsets().empty());  // slave 3 is not counted
    auto member = HaClient::start(auto_switch_slave_config(svc->port(), 2), in_set, clock, &in_ep).value();
    ASSERT_TRUE(wait_until([&] { return in_set.max_offset() == mstore.max_offset(); }));
    EXPECT_EQ(done.load(), 0);  // slave 2 holds it but is not a member yet
    accept_2 = true;
    svc->recount_acks();
    ASSERT_TRUE(wait_until([&] { return done.load() == 1; }));
    EXPECT_EQ(status.load(), static_cast<int>(store::PutMessageStatus::kPutOk));
    EXPECT_EQ(svc->slave_ack_offsets(), std::vector<int64_t>{4000});
}

}  // namespace
}  // namespace comet::ha
