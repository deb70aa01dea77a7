#include "controller/events.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "controller/replicas_info_manager.h"
#include "controller_test_util.h"

namespace comet::controller {
namespace {

std::vector<Event> sample_events() {
    return {
        AlterSyncStateSetEvent{"broker-a", {BrokerId(1), BrokerId(3)}, SyncStateSetEpoch(7)},
        AlterSyncStateSetEvent{"", {}, SyncStateSetEpoch(0)},
        ApplyBrokerIdEvent{"c", "broker-a", "127.0.0.1:10911", BrokerId(2),
                           "127.0.0.1:10911;1700000000000"},
        ElectMasterEvent{"broker-a", true, BrokerId(2), MasterEpoch(4), SyncStateSetEpoch(9)},
        ElectMasterEvent{"broker-b", false, BrokerId(0), MasterEpoch(-1), SyncStateSetEpoch(0)},
        CleanBrokerDataEvent{"broker-a", {}},
        CleanBrokerDataEvent{"broker-a", {BrokerId(1), BrokerId(INT64_MAX)}},
        UpdateBrokerAddressEvent{"c", "broker-a", std::string("10.0.0.1:1\0x", 12), BrokerId(3)},
    };
}

TEST(EventCodec, RoundTripsEveryType) {
    for (const Event& e : sample_events()) {
        SCOPED_TRACE(describe(e));
        const std::string bytes = encode(e);
        ASSERT_GE(bytes.size(), 2u);
        EXPECT_EQ(bytes[0], 1);  // version
        EXPECT_EQ(static_cast<uint8_t>(bytes[1]), static_cast<uint8_t>(event_type(e)));
        auto back = decode(bytes);
        ASSERT_TRUE(back.is_ok()) << back.status().to_string();
        EXPECT_EQ(*back, e);
    }
}

TEST(EventCodec, ExactLayoutOfElectMaster) {
    const std::string bytes =
        encode(ElectMasterEvent{"b", true, BrokerId(2), MasterEpoch(4), SyncStateSetEpoch(9)});
    const std::string want("\x01\x03"
                           "\x00\x00\x00\x01"
                           "b"
                           "\x01"
                           "\x00\x00\x00\x00\x00\x00\x00\x02"
                           "\x00\x00\x00\x04"
                           "\x00\x00\x00\x09",
                           2 + 4 + 1 + 1 + 8 + 4 + 4);
    EXPECT_EQ(bytes, want);
}

TEST(EventCodec, EveryTruncationIsAnError) {
    for (const Event& e : sample_events()) {
        const std::string bytes = encode(e);
        for (size_t n = 0; n < bytes.size(); ++n) {
            auto r = decode(std::string_view(bytes).substr(0, n));
            EXPECT_FALSE(r.is_ok()) << describe(e) << " cut at " << n;
        }
        auto trailing = decode(bytes + "x");
        EXPECT_EQ(trailing.status().code(), Errc::kCorruption);
    }
}

TEST(EventCodec, BadVersionTypeAndLengths) {
    std::string bytes = encode(sample_events()[0]);
    bytes[0] = 2;
    EXPECT_EQ(decode(bytes).status().code(), Errc::kUnsupported);
    bytes[0] = 1;
    bytes[1] = 4;  // READ_EVENT: never produced
    EXPECT_EQ(decode(bytes).status().code(), Errc::kUnsupported);
    bytes[1] = 99;
    EXPECT_EQ(decode(bytes).status().code(), Errc::kUnsupported);
    // A string length far beyond the input.
    const std::string huge("\x01\x01\xff\xff\xff\xff", 6);
    EXPECT_EQ(decode(huge).status().code(), Errc::kCorruption);
    // An ElectMaster with elected byte 2.
    std::string em = encode(sample_events()[3]);
    em[2 + 4 + 8] = 2;
    EXPECT_FALSE(decode(em).is_ok());
}

// Deterministic pseudo-random garbage and bit flips never crash the decoder.
TEST(EventCodec, GarbageNeverCrashes) {
    uint64_t x = 0x9E3779B97F4A7C15ull;
    auto next = [&] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    int ok = 0;
    for (int i = 0; i < 20000; ++i) {
        std::string bytes;
        if (i % 2 == 0) {
            bytes.resize(next() % 64);
            for (char& c : bytes) {
                c = static_cast<char>(next());
            }
            if (!bytes.empty()) {
                bytes[0] = 1;
            }
        } else {
            const auto events = sample_events();
            bytes = encode(events[next() % events.size()]);
            bytes[next() % bytes.size()] ^= static_cast<char>(1u << (next() % 8));
        }
        auto r = decode(bytes);
        if (r.is_ok()) {
            ++ok;
            EXPECT_EQ(encode(*r), bytes);  // anything accepted re-encodes identically
        }
    }
    EXPECT_GT(ok, 0);
}

// ---- snapshot ----

ReplicasInfoManager sample_manager() {
    using namespace testing;
    ReplicasInfoManager m;
    setup_set(m, 3);
    FakeLiveness live;
    live.alive = {1, 2};
    apply_all(m, m.handle_alter_sync_state_set(alter_req(1, 1), sss({1, 2}, 1), live));
    auto other = apply_req(1, "broker-b");
    other.register_check_code = "10.9.9.9:1;5";
    apply_all(m, m.handle_apply_broker_id(other));
    return m;
}

TEST(Snapshot, RoundTrip) {
    ReplicasInfoManager m = sample_manager();
    const std::string bytes = m.encode_snapshot();
    auto back = ReplicasInfoManager::decode_snapshot(bytes);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    EXPECT_EQ(back->broker_sets(), m.broker_sets());
    EXPECT_EQ(back->encode_snapshot(), bytes);
    back->check_invariants();
    auto empty = ReplicasInfoManager::decode_snapshot(ReplicasInfoManager().encode_snapshot());
    ASSERT_TRUE(empty.is_ok());
    EXPECT_TRUE(empty->broker_sets().empty());
}

TEST(Snapshot, CorruptionIsDetected) {
    const std::string bytes = sample_manager().encode_snapshot();
    for (size_t n = 0; n < bytes.size(); ++n) {
        EXPECT_FALSE(ReplicasInfoManager::decode_snapshot(bytes.substr(0, n)).is_ok()) << n;
    }
    for (size_t i = 0; i < bytes.size(); ++i) {
        std::string bad = bytes;
        bad[i] ^= 0x20;
        auto r = ReplicasInfoManager::decode_snapshot(bad);
        EXPECT_FALSE(r.is_ok()) << "flip at " << i;
    }
    std::string v2 = bytes;
    v2[4] = 2;
    EXPECT_EQ(ReplicasInfoManager::decode_snapshot(v2).status().code(), Errc::kUnsupported);
}

}  // namespace
}  // namespace comet::controller
