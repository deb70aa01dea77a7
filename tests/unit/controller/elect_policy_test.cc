#include "controller/elect_policy.h"

#include <gtest/gtest.h>

#include "controller_test_util.h"

namespace comet::controller {
namespace {

using testing::FakeLiveness;

ElectInput input(std::set<int64_t> sync, std::optional<int64_t> old_master = std::nullopt,
                 std::optional<int64_t> designated = std::nullopt) {
    ElectInput in;
    in.cluster_name = testing::kCluster;
    in.broker_name = testing::kBroker;
    for (int64_t id : sync) {
        in.sync_state_set.insert(BrokerId(id));
    }
    if (old_master) {
        in.old_master = BrokerId(*old_master);
    }
    if (designated) {
        in.designated = BrokerId(*designated);
    }
    return in;
}

std::optional<int64_t> run(const ElectInput& in, const FakeLiveness& live) {
    auto m = elect_master(in, live);
    if (!m) {
        return std::nullopt;
    }
    return m->value();
}

TEST(ElectPolicy, OnlyAliveSyncStateSetMembersAreCandidates) {
    FakeLiveness live;
    live.alive = {3, 4};
    EXPECT_EQ(run(input({1, 2}), live), std::nullopt);
    live.alive = {2, 3};
    EXPECT_EQ(run(input({1, 2}), live), 2);
}

TEST(ElectPolicy, UncleanFallsBackToAllAliveReplicas) {
    FakeLiveness live;
    live.alive = {3};
    ElectInput in = input({1, 2});
    in.all_replicas = std::set<BrokerId>{BrokerId(1), BrokerId(2), BrokerId(3)};
    EXPECT_EQ(run(in, live), 3);
    // The SyncStateSet is still preferred when it has a candidate.
    live.alive = {2, 3};
    live.set_info(3, 9, 1000);
    live.set_info(2, 1, 10);
    EXPECT_EQ(run(in, live), 2);
}

TEST(ElectPolicy, AliveOldMasterIsKept) {
    FakeLiveness live;
    live.alive = {1, 2};
    live.set_info(2, 5, 100);  // better than the master, but the master stays
    live.set_info(1, 1, 1);
    EXPECT_EQ(run(input({1, 2}, 1), live), 1);
    EXPECT_EQ(run(input({1, 2}, 1, 1), live), 1);  // designating the master keeps it too
}

TEST(ElectPolicy, DesignatedWinsOnlyAsCandidate) {
    FakeLiveness live;
    live.alive = {1, 2, 3};
    EXPECT_EQ(run(input({1, 2}, 1, 2), live), 2);
    EXPECT_EQ(run(input({1, 2}, 1, 3), live), std::nullopt);  // not in sync
    live.alive = {1};
    EXPECT_EQ(run(input({1, 2}, 1, 2), live), std::nullopt);  // dead
    // Unclean: a designated out-of-sync replica may win in the second round.
    live.alive = {1, 3};
    ElectInput in = input({1, 2}, 1, 3);
    in.all_replicas = std::set<BrokerId>{BrokerId(1), BrokerId(2), BrokerId(3)};
    EXPECT_EQ(run(in, live), 3);
}

TEST(ElectPolicy, HighestEpochThenOffsetThenLowestPriorityThenLowestId) {
    FakeLiveness live;
    live.alive = {1, 2, 3, 4};
    live.set_info(1, 2, 500);
    live.set_info(2, 3, 100);  // highest epoch wins despite a smaller offset
    live.set_info(3, 1, 900);
    EXPECT_EQ(run(input({1, 2, 3}), live), 2);

    live.set_info(1, 3, 500);  // same epoch: larger offset wins
    EXPECT_EQ(run(input({1, 2, 3}), live), 1);

    live.set_info(1, 3, 100, 5);  // same epoch and offset: lower priority value wins
    live.set_info(2, 3, 100, 2);
    EXPECT_EQ(run(input({1, 2}), live), 2);

    live.set_info(1, 3, 100, 2);  // all equal: lowest id (deterministic tie-break)
    EXPECT_EQ(run(input({1, 2}), live), 1);

    // A candidate without live info ranks last.
    EXPECT_EQ(run(input({4, 3}), live), 3);
    live.info.clear();
    EXPECT_EQ(run(input({4, 3}), live), 3);  // nobody has info: lowest id
}

TEST(ElectPolicy, RanksBeforeIsAStrictOrder) {
    BrokerLiveInfo a;
    a.epoch = 1;
    a.max_offset = INT64_MIN;  // extreme values must not overflow
    BrokerLiveInfo b = a;
    b.max_offset = INT64_MAX;
    EXPECT_TRUE(ranks_before(BrokerId(1), &b, BrokerId(2), &a));
    EXPECT_FALSE(ranks_before(BrokerId(2), &a, BrokerId(1), &b));
    EXPECT_FALSE(ranks_before(BrokerId(1), &a, BrokerId(1), &a));
    EXPECT_TRUE(ranks_before(BrokerId(9), &a, BrokerId(1), nullptr));
}

}  // namespace
}  // namespace comet::controller
