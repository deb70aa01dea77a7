#include "controller/broker_live_info.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <vector>

namespace comet::controller {
namespace {

using std::chrono::milliseconds;

TimePoint at(int64_t ms) { return TimePoint(milliseconds(ms)); }

void beat(BrokerHeartbeatManager& m, int64_t now_ms, int64_t id, int32_t epoch, int64_t offset,
          std::optional<Millis> timeout = std::nullopt,
          std::optional<int32_t> prio = std::nullopt) {
    m.on_heartbeat(at(now_ms), "c", "b", BrokerId(id), "addr" + std::to_string(id), epoch, offset,
                   offset, timeout, prio);
}

TEST(BrokerHeartbeatManager, ActiveUntilTimeoutInclusive) {
    BrokerHeartbeatManager m;
    EXPECT_FALSE(m.is_active(at(0), "c", "b", BrokerId(1)));
    beat(m, 1000, 1, 1, 10);
    EXPECT_TRUE(m.is_active(at(11000), "c", "b", BrokerId(1)));  // last + 10000 >= now
    EXPECT_FALSE(m.is_active(at(11001), "c", "b", BrokerId(1)));
    beat(m, 2000, 2, 1, 10, Millis(500));
    EXPECT_TRUE(m.is_active(at(2500), "c", "b", BrokerId(2)));
    EXPECT_FALSE(m.is_active(at(2501), "c", "b", BrokerId(2)));
    EXPECT_FALSE(m.is_active(at(2000), "c", "other", BrokerId(2)));
}

TEST(BrokerHeartbeatManager, DefaultsAndProgressRule) {
    BrokerHeartbeatManager m;
    m.on_heartbeat(at(0), "c", "b", BrokerId(1), "a", std::nullopt, std::nullopt, std::nullopt,
                   std::nullopt, std::nullopt);
    const BrokerLiveInfo* i = m.find("c", "b", BrokerId(1));
    ASSERT_NE(i, nullptr);
    EXPECT_EQ(i->epoch, -1);
    EXPECT_EQ(i->max_offset, -1);
    EXPECT_EQ(i->heartbeat_timeout, Millis(10000));
    EXPECT_EQ(i->election_priority, INT32_MAX);

    beat(m, 1, 1, 2, 100, std::nullopt, 3);
    EXPECT_EQ(i->epoch, 2);
    EXPECT_EQ(i->max_offset, 100);
    EXPECT_EQ(i->election_priority, 3);
    beat(m, 2, 1, 2, 50);  // offset went back: kept (Java), priority refreshed
    EXPECT_EQ(i->max_offset, 100);
    EXPECT_EQ(i->election_priority, INT32_MAX);
    EXPECT_EQ(i->last_update, at(2));
    beat(m, 3, 1, 1, 900);  // older epoch: kept
    EXPECT_EQ(i->epoch, 2);
    beat(m, 4, 1, 3, 0);  // newer epoch: taken
    EXPECT_EQ(i->epoch, 3);
    EXPECT_EQ(i->max_offset, 0);
}

TEST(BrokerHeartbeatManager, ScanRemovesInactiveInKeyOrder) {
    BrokerHeartbeatManager m;
    beat(m, 0, 2, 1, 1);
    beat(m, 0, 1, 1, 1);
    beat(m, 9000, 3, 1, 1);
    auto gone = m.scan_not_active(at(10001));
    ASSERT_EQ(gone.size(), 2u);
    EXPECT_EQ(gone[0].broker_id, BrokerId(1));
    EXPECT_EQ(gone[1].broker_id, BrokerId(2));
    EXPECT_EQ(m.size(), 1u);
    m.remove("c", "b", BrokerId(3));
    EXPECT_EQ(m.size(), 0u);
}

TEST(MasterLease, BrokerSide) {
    EXPECT_FALSE(master_lease_valid(at(0), std::nullopt, Millis(100)));
    EXPECT_TRUE(master_lease_valid(at(100), at(0), Millis(100)));
    EXPECT_FALSE(master_lease_valid(at(101), at(0), Millis(100)));
}

TEST(MasterLease, ControllerSide) {
    MasterLeaseConfig c{Millis(100), Millis(10), Millis(20)};
    // Tracking window: 100 + 10 + 20 after tracking_since, nothing expires.
    EXPECT_FALSE(master_lease_expired(at(130), std::nullopt, at(0), c));
    EXPECT_TRUE(master_lease_expired(at(131), std::nullopt, at(0), c));
    // Heard at 500: expired only after 500 + 110.
    EXPECT_FALSE(master_lease_expired(at(610), at(500), at(0), c));
    EXPECT_TRUE(master_lease_expired(at(611), at(500), at(0), c));
    // Just became leader at 600: also wait out the window.
    EXPECT_FALSE(master_lease_expired(at(700), at(500), at(600), c));
    EXPECT_TRUE(master_lease_expired(at(731), at(500), at(600), c));
}

// Only a granted lease holds back a replacement: heartbeats that were refused one (a deposed
// master's) keep the broker alive but leave the lease mark where the last grant put it.
TEST(MasterLease, OnlyGrantedHeartbeatsMoveTheLeaseMark) {
    BrokerHeartbeatManager m(MasterLeaseConfig{Millis(800), Millis(200), Millis(0)}, at(0));
    beat(m, 1000, 1, 1, 1);
    m.grant_lease(at(1000), "c", "b", BrokerId(1));
    for (int64_t t = 1200; t <= 3000; t += 200) {
        beat(m, t, 1, 1, 1);  // heard, not granted
    }
    auto view = m.view(at(3000));
    EXPECT_TRUE(view.is_alive("c", "b", BrokerId(1)));
    EXPECT_TRUE(view.lease_expired("c", "b", BrokerId(1)));  // 1000 + 800 + 200 < 3000
    EXPECT_FALSE(m.view(at(2000)).lease_expired("c", "b", BrokerId(1)));
    m.grant_lease(at(3000), "c", "b", BrokerId(1));
    EXPECT_FALSE(m.view(at(4000)).lease_expired("c", "b", BrokerId(1)));
    EXPECT_TRUE(m.view(at(4001)).lease_expired("c", "b", BrokerId(1)));
    // A replica never granted a lease has none to wait for once the tracking window is over.
    beat(m, 3000, 2, 1, 1);
    EXPECT_TRUE(m.view(at(3000)).lease_expired("c", "b", BrokerId(2)));
}

TEST(MasterLease, ManagerKeepsLeaseAfterLiveInfoIsDropped) {
    BrokerHeartbeatManager m(MasterLeaseConfig{Millis(15000), Millis(1000), Millis(1000)}, at(0));
    beat(m, 100000, 1, 1, 1);
    m.grant_lease(at(100000), "c", "b", BrokerId(1));
    m.scan_not_active(at(110001));  // heartbeat timeout 10 s: dropped
    m.remove("c", "b", BrokerId(1));
    EXPECT_EQ(m.find("c", "b", BrokerId(1)), nullptr);
    auto view = m.view(at(115000));
    EXPECT_FALSE(view.is_alive("c", "b", BrokerId(1)));
    EXPECT_FALSE(view.lease_expired("c", "b", BrokerId(1)));  // 15 s + 1 s not yet over
    EXPECT_TRUE(m.view(at(116001)).lease_expired("c", "b", BrokerId(1)));
    m.on_become_leader(at(116001));
    EXPECT_FALSE(m.view(at(116002)).lease_expired("c", "b", BrokerId(1)));
}

// Property: with clocks that agree on rate, whenever the controller may replace the master, the
// master's own lease check already fails, whatever the delays and losses of heartbeats and acks.
TEST(MasterLease, NeverOverlapsUnderRandomDelays) {
    const Millis lease(1000);
    const MasterLeaseConfig cfg{lease, Millis(50), Millis(0)};
    uint64_t x = 88172645463325252ull;
    auto rnd = [&](uint64_t n) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return static_cast<int64_t>(x % n);
    };
    for (int run = 0; run < 100; ++run) {
        // Broker clock = real time + offset (any offset); controller clock = real time.
        const int64_t broker_offset = rnd(1000000) - 500000;
        std::optional<TimePoint> last_received;    // controller clock
        std::optional<TimePoint> last_acked_send;  // broker clock
        // Per real millisecond: does a heartbeat reach the controller; which acks reach the broker
        // (value: the broker-clock send time of the acknowledged heartbeat).
        std::vector<char> arrives(21000, 0);
        std::multimap<int64_t, int64_t> acks;
        const int64_t stop = 8000 + rnd(4000);  // the master stops heartbeating (dies, partitioned)
        int checks = 0;
        for (int64_t t = 0; t < 20000; ++t) {                // real ms
            if (t % 100 == 0 && t < stop && rnd(10) != 0) {  // 10% of heartbeats lost
                const int64_t arrive = t + rnd(300);
                arrives[arrive] = 1;
                if (rnd(10) != 0) {  // 10% of acks lost
                    acks.emplace(arrive + rnd(300), t + broker_offset);
                }
            }
            if (arrives[t]) {
                last_received = at(t);
            }
            auto [lo, hi] = acks.equal_range(t);
            for (auto it = lo; it != hi; ++it) {
                if (!last_acked_send || at(it->second) > *last_acked_send) {
                    last_acked_send = at(it->second);
                }
            }
            if (!last_received) {
                continue;
            }
            const auto& seen = last_received;
            if (master_lease_expired(at(t), seen, at(-100000), cfg)) {
                ++checks;
                ASSERT_FALSE(master_lease_valid(at(t + broker_offset), last_acked_send, lease))
                    << "run " << run << " t " << t;
            }
        }
        EXPECT_GT(checks, 0);
    }
}

}  // namespace
}  // namespace comet::controller
