// Determinism: the same event log gives the same state on every replica, through the byte
// encoding, and from a snapshot taken midway.
#include <gtest/gtest.h>

#include <map>

#include "controller/events.h"
#include "controller/replicas_info_manager.h"
#include "controller_test_util.h"

namespace comet::controller {
namespace {

TEST(Replay, SameEventsGiveIdenticalSnapshots) {
    int total_events = 0;
    int ignored = 0;
    std::map<EventType, int> by_type;
    for (uint64_t seed = 1; seed <= 50; ++seed) {
        SCOPED_TRACE(seed);
        const std::vector<Event> log = testing::random_workload(seed, 300);
        total_events += static_cast<int>(log.size());
        for (const Event& e : log) {
            ++by_type[event_type(e)];
        }
        ReplicasInfoManager a;
        ReplicasInfoManager b;
        std::optional<ReplicasInfoManager> c;  // restored from a's snapshot halfway
        for (size_t i = 0; i < log.size(); ++i) {
            if (i == log.size() / 2) {
                auto restored = ReplicasInfoManager::decode_snapshot(a.encode_snapshot());
                ASSERT_TRUE(restored.is_ok()) << restored.status().to_string();
                c.emplace(std::move(restored).value());
            }
            Status sa = a.apply(log[i]);
            auto decoded = decode(encode(log[i]));
            ASSERT_TRUE(decoded.is_ok());
            Status sb = b.apply(*decoded);
            EXPECT_EQ(sa.code(), sb.code()) << describe(log[i]);
            if (!sa.is_ok()) {
                ++ignored;
            }
            if (c) {
                EXPECT_EQ(c->apply(log[i]).code(), sa.code());
                c->check_invariants();
            }
            a.check_invariants();
            b.check_invariants();
        }
        EXPECT_EQ(a.encode_snapshot(), b.encode_snapshot());
        ASSERT_TRUE(c.has_value());
        EXPECT_EQ(c->encode_snapshot(), a.encode_snapshot());
    }
    // The workload must exercise something: many events, some of them stale.
    EXPECT_GT(total_events, 2000);
    EXPECT_GT(ignored, 0);
    EXPECT_EQ(by_type.size(), 5u);
    for (const auto& [type, n] : by_type) {
        EXPECT_GT(n, 5) << event_type_name(type);
    }
}

}  // namespace
}  // namespace comet::controller
