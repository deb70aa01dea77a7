#include "broker/controller/sync_state_policy.h"

#include <gtest/gtest.h>

namespace comet::broker {
namespace {

using V = ControllerPutDecision::Verdict;
using std::chrono::milliseconds;

TEST(SyncStatePolicy, PutDecisionFollowsTheSyncStateSet) {
    struct Case {
        ControllerQuorum q;
        size_t set_size;
        bool wait;
        V verdict;
        int32_t need;
    };
    const std::vector<Case> cases = {
        // allAckInSyncStateSet: every member.
        {{1, 1, true, false}, 1, true, V::kPutOkNow, 1},
        {{1, 1, true, false}, 3, true, V::kWaitForSlaves, 3},
        // minInSyncReplicas refuses a small set before anything is written, even without WAIT.
        {{1, 2, true, false}, 1, true, V::kInSyncReplicasNotEnough, 2},
        {{1, 2, true, false}, 1, false, V::kInSyncReplicasNotEnough, 2},
        {{1, 2, true, false}, 2, true, V::kWaitForSlaves, 2},
        // Without allAck: inSyncReplicas, refused when above the set ...
        {{2, 1, false, false}, 3, true, V::kWaitForSlaves, 2},
        {{3, 1, false, false}, 2, true, V::kInSyncReplicasNotEnough, 3},
        // ... unless enableAutoInSyncReplicas lowers it to the set (not below minInSync).
        {{3, 1, false, true}, 2, true, V::kWaitForSlaves, 2},
        {{3, 1, false, true}, 1, true, V::kPutOkNow, 1},
        // A put that does not wait for the store never waits for replicas.
        {{1, 1, true, false}, 3, false, V::kPutOkNow, 1},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[i];
        const ControllerPutDecision d = decide_controller_put(c.q, c.set_size, c.wait);
        EXPECT_EQ(d.verdict, c.verdict) << "case " << i;
        EXPECT_EQ(d.need_ack_nums, c.need) << "case " << i;
    }
}

TEST(SyncStatePolicy, ConfirmOffsetIsTheLowestInSetAckAndCountsAbsentMembers) {
    const std::vector<ReplicaProgress> slaves = {
        {2, 700, true, {}}, {3, 400, true, {}}, {4, 100, true, {}}};
    EXPECT_EQ(confirm_offset(1000, {1}, 1, slaves, true), 1000);
    EXPECT_EQ(confirm_offset(1000, {1, 2}, 1, slaves, true), 700);
    EXPECT_EQ(confirm_offset(1000, {1, 2, 3}, 1, slaves, true), 400);
    // 4 is connected but outside the set: it does not hold consumers back.
    EXPECT_EQ(confirm_offset(1000, {1, 2, 3}, 1, slaves, true), 400);
    // 5 is in the set but was never heard from: nothing beyond 0 is confirmed.
    EXPECT_EQ(confirm_offset(1000, {1, 2, 5}, 1, slaves, true), 0);
    // A disconnected member keeps counting with its last ack until the set shrinks.
    std::vector<ReplicaProgress> gone = {{2, 650, false, {}}};
    EXPECT_EQ(confirm_offset(1000, {1, 2}, 1, gone, true), 650);
    // allAckInSyncStateSet off: the master's end.
    EXPECT_EQ(confirm_offset(1000, {1, 2, 3}, 1, slaves, false), 1000);
}

TEST(SyncStatePolicy, SetShrinksForLaggingOrGoneSlavesAndExpandsForCaughtUpOnes) {
    const TimePoint now = TimePoint{} + std::chrono::hours(1);
    const Duration max_lag = milliseconds(15000);
    const std::vector<ReplicaProgress> slaves = {
        {2, 1000, true, now - milliseconds(100)},    // caught up
        {3, 900, true, now - milliseconds(20000)},   // connected, behind for too long
        {4, 1000, true, now - milliseconds(50)},     // outside, caught up
        {5, 400, true, now},                         // outside, below the confirm offset
    };
    // Shrink: 3 leaves, 6 (no connection) leaves; expand: 4 joins, 5 does not.
    auto next = next_sync_state_set({1, 2, 3, 6}, 1, slaves, 900, 0, now, max_lag, true);
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(*next, (std::set<int64_t>{1, 2, 4}));
    // Without the periodic shrink only the expansion happens.
    next = next_sync_state_set({1, 2, 3, 6}, 1, slaves, 900, 0, now, max_lag, false);
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(*next, (std::set<int64_t>{1, 2, 3, 4, 6}));
    // A slave below the current epoch's start offset has not seen this master's data yet.
    next = next_sync_state_set({1, 2}, 1, slaves, 900, 1001, now, max_lag, false);
    EXPECT_FALSE(next.has_value());
    // Nothing to change: nullopt; the master is never dropped.
    next = next_sync_state_set({1, 2, 4}, 1, slaves, 1000, 0, now, max_lag, true);
    EXPECT_FALSE(next.has_value());
    next = next_sync_state_set({1}, 1, {}, 0, 0, now, max_lag, true);
    EXPECT_FALSE(next.has_value());
    // An async learner replicates but never joins.
    ReplicaProgress learner{7, 1000, true, now, true};
    next = next_sync_state_set({1}, 1, {learner}, 0, 0, now, max_lag, true);
    EXPECT_FALSE(next.has_value());
}

}  // namespace
}  // namespace comet::broker
