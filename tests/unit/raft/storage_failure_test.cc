// A node whose storage fails, and a leader whose log no longer holds what a follower needs
// (retention without snapshots, as DLedger's CommitLog): injected through MemoryLogStorage's
// fault hooks on TestCluster.
#include <gtest/gtest.h>

#include "cluster_helper.h"
#include "raft/raft_node.h"

namespace comet::raft {
namespace {

using testing::TestCluster;

Status io_error() { return Status::error(Errc::kIoError, "injected: disk gone"); }

// Node 1 leads term 1 with "a" committed everywhere.
void elect_one_with_a(TestCluster& c) {
    ASSERT_TRUE(c.elect(1));
    ASSERT_TRUE(c.propose(1, "a").is_ok());
    c.deliver_all();
    ASSERT_EQ(c.node(1).commit_index(), LogIndex(2));
}

TEST(RaftStorageFailureTest, LeaderWhoseWriteFailsStepsDownAndStaysDown) {
    TestCluster c(3);
    elect_one_with_a(c);
    c.may_fail_.insert(1);
    c.storage(1).fail_writes(io_error());
    EXPECT_FALSE(c.propose(1, "b").is_ok());
    // Not a leader any more, at once: the driver sees the role change in the same round.
    EXPECT_EQ(c.node(1).role(), Role::kFollower);
    EXPECT_EQ(c.node(1).leader(), kNoNode);
    EXPECT_FALSE(c.node(1).failure().is_ok());
    EXPECT_EQ(c.node(1).failure().code(), Errc::kIoError);
    // The others elect a leader and commit without it; node 1 never leads again.
    c.tick_all(100);
    const int leader = c.leader();
    ASSERT_TRUE(leader == 2 || leader == 3) << leader;
    ASSERT_TRUE(c.propose(leader, "c").is_ok());
    c.deliver_all();
    EXPECT_EQ(c.applied(2).back(), "c");
    EXPECT_EQ(c.applied(3).back(), "c");
    EXPECT_EQ(c.node(1).role(), Role::kFollower);
}

TEST(RaftStorageFailureTest, LeaderWhoseReadFailsStepsDown) {
    TestCluster c(3);
    elect_one_with_a(c);
    c.isolate(3);
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(c.propose(1, "x").is_ok());
    }
    c.deliver_all();
    // Entries the log says it holds cannot be read: the log is broken, not just behind.
    c.may_fail_.insert(1);
    c.storage(1).fail_reads(io_error());
    c.heal();
    c.tick_all(10);
    EXPECT_NE(c.node(1).role(), Role::kLeader);
    EXPECT_FALSE(c.node(1).failure().is_ok());
}

TEST(RaftStorageFailureTest, FailedFollowerStopsAcknowledgingAndVoting) {
    TestCluster c(3);
    elect_one_with_a(c);
    c.may_fail_.insert(2);
    c.storage(2).fail_writes(io_error());
    ASSERT_TRUE(c.propose(1, "b").is_ok());
    c.deliver_all();
    EXPECT_FALSE(c.node(2).failure().is_ok());
    EXPECT_EQ(c.storage(2).last_index(), LogIndex(2));
    // Committed with node 3 alone; node 2 acknowledged nothing it does not hold.
    EXPECT_EQ(c.node(1).commit_index(), LogIndex(3));
    EXPECT_EQ(c.node(1).match_index(NodeId(2)), LogIndex(2));
    // Without node 1, node 3 cannot win: node 2 grants no vote any more.
    c.isolate(1);
    c.tick_all(100);
    EXPECT_NE(c.node(3).role(), Role::kLeader);
}

TEST(RaftStorageFailureTest, DriverReportedSyncFailureStepsTheLeaderDown) {
    TestCluster c(3);
    elect_one_with_a(c);
    c.may_fail_.insert(1);
    c.node(1).fail_storage(io_error());
    EXPECT_EQ(c.node(1).role(), Role::kFollower);
    EXPECT_EQ(c.node(1).tick().code(), Errc::kIoError);
    EXPECT_FALSE(c.node(1).propose({}).is_ok());
}

// DLedger's log is the CommitLog, whose retention deletes old segments without a snapshot:
// a follower that was away longer than retention needs entries the leader no longer has. The
// leader must go on serving with the rest and report the follower, not stop.
TEST(RaftStorageFailureTest, FollowerBelowTheRetainedLogIsLeftBehindNotFatal) {
    TestCluster c(3);
    elect_one_with_a(c);
    c.isolate(3);
    for (int i = 0; i < 5; ++i) {
        ASSERT_TRUE(c.propose(1, "x" + std::to_string(i)).is_ok());
    }
    c.deliver_all();
    ASSERT_EQ(c.node(1).commit_index(), LogIndex(7));
    c.storage(1).drop_prefix(LogIndex(5), /*report=*/true);
    c.heal();
    c.tick_all(20);
    EXPECT_TRUE(c.node(1).failure().is_ok()) << c.node(1).failure().to_string();
    EXPECT_EQ(c.node(1).role(), Role::kLeader);
    EXPECT_EQ(c.node(1).term(), Term(1));  // node 3 did not disrupt it either
    EXPECT_EQ(c.node(1).followers_behind_log(), 1u);
    ASSERT_TRUE(c.propose(1, "after").is_ok());
    c.deliver_all();
    EXPECT_EQ(c.applied(2).back(), "after");
    EXPECT_LT(c.storage(3).last_index(), LogIndex(5));
    // Once the follower no longer needs the deleted entries (re-seeded from another peer, here:
    // the log is whole again) it is caught up as usual.
    c.storage(1).drop_prefix(LogIndex(0), /*report=*/true);
    c.tick_all(10);
    EXPECT_EQ(c.node(1).followers_behind_log(), 0u);
    EXPECT_EQ(c.applied(3).back(), "after");
    c.check_all();
}

TEST(RaftStorageFailureTest, FollowerRightAtTheRetainedStartIsCaughtUp) {
    TestCluster c(3);
    elect_one_with_a(c);
    c.isolate(3);
    for (int i = 0; i < 5; ++i) {
        ASSERT_TRUE(c.propose(1, "x" + std::to_string(i)).is_ok());
    }
    c.deliver_all();
    // Node 3 holds [1, 2]: it needs 3 on, which is still there; 2's term is still known.
    ASSERT_EQ(c.storage(3).last_index(), LogIndex(2));
    c.storage(1).drop_prefix(LogIndex(3), /*report=*/true);
    c.heal();
    c.tick_all(10);
    EXPECT_EQ(c.node(1).followers_behind_log(), 0u);
    EXPECT_EQ(c.storage(3).last_index(), c.storage(1).last_index());
    EXPECT_EQ(c.applied(3).back(), "x4");
    c.check_all();
}

}  // namespace
}  // namespace comet::raft
