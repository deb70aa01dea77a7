// Named scenarios for the Raft core (Raft paper / thesis cases), on TestCluster.
#include "raft/raft_node.h"

#include <gtest/gtest.h>

#include "cluster_helper.h"

namespace comet::raft {
namespace {

using testing::TestCluster;

void no_pre_vote_no_check_quorum(RaftConfig& c) {
    c.pre_vote = false;
    c.check_quorum = false;
}

TEST(RaftNodeTest, ElectsLeaderCommitsNoOpAndReplicates) {
    TestCluster c(3);
    ASSERT_TRUE(c.elect(1));
    EXPECT_EQ(c.node(1).term(), Term(1));
    ASSERT_TRUE(c.propose(1, "a").is_ok());
    ASSERT_TRUE(c.propose(1, "b").is_ok());
    c.deliver_all();
    for (int id = 1; id <= 3; ++id) {
        EXPECT_EQ(c.node(id).commit_index(), LogIndex(3)) << id;
        EXPECT_EQ(c.applied(id), (std::vector<std::string>{"a", "b"})) << id;
        EXPECT_EQ(c.node(id).leader(), NodeId(1));
    }
    EXPECT_EQ(c.node(2).propose({}).status().code(), Errc::kUnavailable);
}

// Raft paper Figure 8: a leader must not commit an entry of an earlier term by counting
// replicas, or a later leader may overwrite it.
TEST(RaftNodeTest, Figure8OldTermEntryIsNotCommittedByReplicaCount) {
    TestCluster c(5, [](RaftConfig& cfg) {
        no_pre_vote_no_check_quorum(cfg);
        cfg.max_entries_per_append = 1;
    });
    // (a) S1 leads term 1; its entry at index 2 reaches only S2.
    ASSERT_TRUE(c.elect(1));
    c.deliver_all();
    for (int id = 3; id <= 5; ++id) {
        c.cut(1, id);
    }
    ASSERT_TRUE(c.propose(1, "x").is_ok());
    c.deliver_all();
    EXPECT_EQ(c.storage(2).last_index(), LogIndex(2));
    EXPECT_EQ(c.node(1).commit_index(), LogIndex(1));
    c.crash(1);
    c.heal();
    // (b) S5 wins with S3, S4 and appends its no-op at index 2, which nobody else receives.
    c.drop_if_ = [](const Message& m) {
        return m.from == NodeId(5) && m.type == MessageType::kAppend;
    };
    ASSERT_TRUE(c.elect(5));
    const Term s5_term = c.node(5).term();
    EXPECT_EQ(c.storage(5).term_at(LogIndex(2)), s5_term);
    c.crash(5);
    c.drop_if_ = {};
    // (c) S1 returns and leads a later term; index 2 (term 1) reaches S3 too — a majority with
    // S1 and S2 — but its own no-op at index 3 does not.
    c.restart(1);
    // (An append carrying index 3 is dropped whenever it would be accepted.)
    c.drop_if_ = [&c](const Message& m) {
        return m.from == NodeId(1) && m.type == MessageType::kAppend && !m.entries.empty() &&
               m.entries.back().index >= LogIndex(3) &&
               c.storage(m.to.value()).last_index() >= LogIndex(2);
    };
    ASSERT_TRUE(c.elect(1));
    c.deliver_all();
    for (int id = 2; id <= 4; ++id) {
        ASSERT_EQ(c.storage(id).term_at(LogIndex(2)), Term(1)) << id;
    }
    EXPECT_EQ(c.node(1).commit_index(), LogIndex(1)) << "term-1 entry committed by counting";
    // (d) S1 crashes; S5 (last term newer than theirs) wins and overwrites index 2 everywhere.
    c.crash(1);
    c.drop_if_ = {};
    c.restart(5);
    ASSERT_TRUE(c.elect(5));
    c.deliver_all();
    c.restart(1);
    c.tick_all(10);
    EXPECT_EQ(c.leader(), 5);
    const std::vector<Term> expect = c.log_terms(5);
    ASSERT_EQ(expect.size(), 3U);
    EXPECT_EQ(expect[1], s5_term);
    for (int id = 1; id <= 5; ++id) {
        EXPECT_EQ(c.log_terms(id), expect) << id;
        EXPECT_EQ(c.node(id).commit_index(), LogIndex(3)) << id;
        EXPECT_TRUE(c.applied(id).empty()) << "x was never committed";
    }
}

TEST(RaftNodeTest, VoteDeniedToStaleLog) {
    TestCluster c(3, no_pre_vote_no_check_quorum);
    ASSERT_TRUE(c.elect(1));
    c.isolate(3);
    ASSERT_TRUE(c.propose(1, "a").is_ok());
    c.deliver_all();
    c.heal();
    // Node 3 missed "a": its vote requests must be refused by both up-to-date nodes.
    for (int t = 0; t < 100; ++t) {
        c.tick(3);
        ASSERT_NE(c.node(3).role(), Role::kLeader);
    }
    EXPECT_GT(c.node(3).term(), Term(1));

    // The rule itself, on one message: same last term, shorter log.
    Message v;
    v.type = MessageType::kVote;
    v.from = NodeId(3);
    v.to = NodeId(2);
    v.term = c.node(2).term() + 1;
    v.index = LogIndex(1);
    v.log_term = Term(1);
    c.queue().clear();
    ASSERT_TRUE(c.node(2).step(v).is_ok());
    Ready rd = c.node(2).take_ready();
    ASSERT_EQ(rd.messages.size(), 1U);
    EXPECT_EQ(rd.messages[0].type, MessageType::kVoteResponse);
    EXPECT_TRUE(rd.messages[0].reject);
    EXPECT_EQ(c.node(2).voted_for(), kNoNode);
}

TEST(RaftNodeTest, StaleLeaderAfterPartitionHealsStepsDownAndLosesItsWrites) {
    TestCluster c(3, [](RaftConfig& cfg) { cfg.check_quorum = false; });
    ASSERT_TRUE(c.elect(1));
    ASSERT_TRUE(c.propose(1, "a").is_ok());
    c.deliver_all();
    c.isolate(1);
    ASSERT_TRUE(c.propose(1, "stale").is_ok());  // accepted locally, never committed
    c.tick_all(60);
    const int new_leader = c.leader() == 1 ? 0 : c.leader();
    ASSERT_NE(new_leader, 0);
    EXPECT_EQ(c.node(1).role(), Role::kLeader) << "without check-quorum it still believes";
    ASSERT_TRUE(c.propose(new_leader, "b").is_ok());
    c.deliver_all();
    c.heal();
    c.tick_all(20);
    EXPECT_NE(c.node(1).role(), Role::kLeader);
    EXPECT_EQ(c.node(1).term(), c.node(new_leader).term());
    for (int id = 1; id <= 3; ++id) {
        EXPECT_EQ(c.applied(id), (std::vector<std::string>{"a", "b"})) << id;
        EXPECT_EQ(c.log_terms(id), c.log_terms(new_leader)) << id;
    }
}

TEST(RaftNodeTest, PreVotePreventsTermInflationByAPartitionedNode) {
    TestCluster c(3);
    ASSERT_TRUE(c.elect(1));
    ASSERT_TRUE(c.propose(1, "a").is_ok());
    c.deliver_all();
    c.isolate(3);
    c.tick_all(300);  // ten election timeouts
    EXPECT_EQ(c.node(3).term(), Term(1));
    EXPECT_NE(c.node(3).role(), Role::kLeader);
    c.heal();
    c.tick_all(30);
    EXPECT_EQ(c.leader(), 1);
    EXPECT_EQ(c.node(1).term(), Term(1)) << "the returning node deposed a healthy leader";
    EXPECT_EQ(c.node(3).role(), Role::kFollower);
    EXPECT_EQ(c.applied(3), (std::vector<std::string>{"a"}));
}

TEST(RaftNodeTest, WithoutPreVoteAPartitionedNodeInflatesItsTerm) {
    TestCluster c(3, [](RaftConfig& cfg) { cfg.pre_vote = false; });
    ASSERT_TRUE(c.elect(1));
    c.isolate(3);
    c.tick_all(300);
    EXPECT_GT(c.node(3).term(), Term(3));
    c.heal();
    c.tick_all(60);
    EXPECT_GT(c.node(c.leader() == 0 ? 1 : c.leader()).term(), Term(1))
        << "the leader was disrupted, as expected without pre-vote";
}

TEST(RaftNodeTest, ConflictingSuffixIsTruncatedWithFastBackOff) {
    TestCluster c(3, [](RaftConfig& cfg) { cfg.check_quorum = false; });
    ASSERT_TRUE(c.elect(1));
    ASSERT_TRUE(c.propose(1, "a").is_ok());
    c.deliver_all();
    c.isolate(1);
    for (int i = 0; i < 40; ++i) {
        ASSERT_TRUE(c.propose(1, "x" + std::to_string(i)).is_ok());
    }
    c.tick_all(60);
    const int new_leader = c.leader() == 1 ? 0 : c.leader();
    ASSERT_NE(new_leader, 0);
    for (int i = 0; i < 5; ++i) {
        ASSERT_TRUE(c.propose(new_leader, "b" + std::to_string(i)).is_ok());
    }
    c.deliver_all();
    EXPECT_EQ(c.storage(1).last_index(), LogIndex(42));
    c.append_rejects_delivered_ = 0;
    c.heal();
    c.tick_all(20);
    EXPECT_EQ(c.log_terms(1), c.log_terms(new_leader));
    EXPECT_LT(c.storage(1).last_index(), LogIndex(42));
    // Old leader skips its whole divergent term in one round trip (plus the one from the
    // step-down), not one index per round trip.
    EXPECT_LE(c.append_rejects_delivered_, 4);
    std::vector<std::string> want{"a"};
    for (int i = 0; i < 5; ++i) {
        want.push_back("b" + std::to_string(i));
    }
    EXPECT_EQ(c.applied(1), want);
}

TEST(RaftNodeTest, LeadershipTransferToALaggingNodeCatchesItUpFirst) {
    TestCluster c(3);
    ASSERT_TRUE(c.elect(1));
    c.cut_both(1, 3);
    for (int i = 0; i < 30; ++i) {
        ASSERT_TRUE(c.propose(1, "e" + std::to_string(i)).is_ok());
    }
    c.deliver_all();
    EXPECT_LT(c.storage(3).last_index(), c.storage(1).last_index());
    c.heal();
    const Term before = c.node(1).term();
    ASSERT_TRUE(c.node(1).transfer_leadership(NodeId(3)).is_ok());
    EXPECT_EQ(c.propose(1, "during").code(), Errc::kFailedPrecondition);
    c.deliver_all();
    EXPECT_EQ(c.leader(), 3);
    EXPECT_EQ(c.node(3).term(), before + 1);
    EXPECT_EQ(c.node(1).role(), Role::kFollower);
    ASSERT_TRUE(c.propose(3, "after").is_ok());
    c.deliver_all();
    for (int id = 1; id <= 3; ++id) {
        ASSERT_EQ(c.applied(id).size(), 31U) << id;
        EXPECT_EQ(c.applied(id).back(), "after");
    }
}

TEST(RaftNodeTest, TransferToUnreachableNodeTimesOut) {
    TestCluster c(3);
    ASSERT_TRUE(c.elect(1));
    c.isolate(3);
    ASSERT_TRUE(c.node(1).transfer_leadership(NodeId(3)).is_ok());
    EXPECT_EQ(c.node(1).transfer_target(), NodeId(3));
    c.tick_all(16);
    EXPECT_EQ(c.node(1).transfer_target(), kNoNode);
    EXPECT_EQ(c.leader(), 1);
    EXPECT_TRUE(c.propose(1, "ok").is_ok());
    EXPECT_EQ(c.node(1).transfer_leadership(NodeId(9)).code(), Errc::kInvalidArgument);
    EXPECT_EQ(c.node(2).transfer_leadership(NodeId(3)).code(), Errc::kUnavailable);
}

TEST(RaftNodeTest, PreferredLeaderReceivesLeadershipWhenCaughtUp) {
    TestCluster c(3, [](RaftConfig& cfg) { cfg.preferred_leader = NodeId(2); });
    // Node 1 wins term 1 and hands over to node 2 as soon as it has committed its no-op.
    for (int t = 0; t < 100 && c.node(1).term() == Term(0); ++t) {
        c.tick(1);
    }
    c.tick_all(20);
    EXPECT_EQ(c.leader(), 2);
    EXPECT_EQ(c.node(2).term(), Term(2));
    c.tick_all(100);
    EXPECT_EQ(c.leader(), 2) << "no ping-pong once the preferred node leads";
}

TEST(RaftNodeTest, CheckQuorumStepsDownAnIsolatedLeader) {
    TestCluster c(3);
    ASSERT_TRUE(c.elect(1));
    c.tick_all(5);
    c.isolate(1);
    int ticks = 0;
    while (c.node(1).role() == Role::kLeader && ticks < 100) {
        c.tick(1);
        ++ticks;
    }
    EXPECT_EQ(c.node(1).role(), Role::kFollower);
    EXPECT_LE(ticks, 2 * 15);  // within two minimum election timeouts
    EXPECT_EQ(c.propose(1, "late").code(), Errc::kUnavailable);
}

TEST(RaftNodeTest, VotesWaitForDurableHardState) {
    TestCluster c(3, no_pre_vote_no_check_quorum);
    c.cut_both(1, 3);
    c.set_disk_stalled(2, true);
    for (int t = 0; t < 40 && c.node(1).role() != Role::kCandidate; ++t) {
        c.tick(1);
    }
    ASSERT_EQ(c.node(1).role(), Role::kCandidate);
    c.deliver_all();
    EXPECT_EQ(c.node(2).voted_for(), NodeId(1));
    EXPECT_NE(c.node(1).role(), Role::kLeader) << "grant left before the vote was durable";
    c.set_disk_stalled(2, false);
    c.deliver_all();
    EXPECT_EQ(c.node(1).role(), Role::kLeader);
}

TEST(RaftNodeTest, CandidateSendsVoteRequestsOnlyAfterItsSelfVoteIsDurable) {
    TestCluster c(3, no_pre_vote_no_check_quorum);
    c.set_disk_stalled(1, true);
    for (int t = 0; t < 40 && c.node(1).role() != Role::kCandidate; ++t) {
        c.tick(1, /*deliver=*/false);
    }
    ASSERT_EQ(c.node(1).role(), Role::kCandidate);
    EXPECT_TRUE(c.queue().empty());
    c.set_disk_stalled(1, false);
    EXPECT_EQ(c.queue().size(), 2U);
    c.deliver_all();
    EXPECT_EQ(c.node(1).role(), Role::kLeader);
}

TEST(RaftNodeTest, CommitNeedsDurableAcksFromAMajority) {
    TestCluster c(3);
    ASSERT_TRUE(c.elect(1));
    c.deliver_all();
    const LogIndex before = c.node(1).commit_index();
    c.set_disk_stalled(2, true);
    c.set_disk_stalled(3, true);
    ASSERT_TRUE(c.propose(1, "a").is_ok());
    c.deliver_all();
    EXPECT_EQ(c.node(1).commit_index(), before);
    c.set_disk_stalled(3, false);
    c.deliver_all();
    EXPECT_EQ(c.node(1).commit_index(), before + 1);
    // The leader's own copy counts only once durable; two followers suffice without it.
    c.set_disk_stalled(1, true);
    c.set_disk_stalled(2, false);
    ASSERT_TRUE(c.propose(1, "b").is_ok());
    c.deliver_all();
    EXPECT_EQ(c.node(1).stable_index(), before + 1);
    EXPECT_EQ(c.node(1).commit_index(), before + 2);
    c.set_disk_stalled(1, false);
}

TEST(RaftNodeTest, PipelineIsBoundedByInflightLimitAndRecoversFromLostAcks) {
    TestCluster c(3, [](RaftConfig& cfg) {
        cfg.max_inflight_appends = 2;
        cfg.max_entries_per_append = 1;
    });
    ASSERT_TRUE(c.elect(1));
    c.tick_all(1);
    c.cut(2, 1);  // node 2's acks are lost
    for (int i = 0; i < 10; ++i) {
        ASSERT_TRUE(c.propose(1, "e" + std::to_string(i)).is_ok());
    }
    int to2 = 0;
    int to3 = 0;
    for (const Message& m : c.queue()) {
        if (m.type == MessageType::kAppend && !m.entries.empty()) {
            (m.to == NodeId(2) ? to2 : to3) += 1;
        }
    }
    EXPECT_EQ(to2, 2);
    EXPECT_EQ(to3, 2);
    c.deliver_all();
    EXPECT_EQ(c.storage(3).last_index(), c.storage(1).last_index());
    EXPECT_LT(c.storage(2).last_index(), c.storage(1).last_index());
    c.heal();
    c.tick_all(30);
    EXPECT_EQ(c.storage(2).last_index(), c.storage(1).last_index());
    EXPECT_EQ(c.applied(2).size(), 10U);
}

TEST(RaftNodeTest, AppendBatchesHonourEntryAndByteLimits) {
    TestCluster c(3, [](RaftConfig& cfg) {
        cfg.max_entries_per_append = 4;
        cfg.max_bytes_per_append = 10;
    });
    ASSERT_TRUE(c.elect(1));
    c.tick_all(1);
    c.isolate(2);
    c.isolate(3);
    std::vector<SharedBytes> batch;
    for (int i = 0; i < 9; ++i) {
        batch.push_back(SharedBytes::copy_of("abcd"));
    }
    ASSERT_TRUE(c.node(1).propose(batch).is_ok());
    c.flush();
    for (const Message& m : c.queue()) {
        if (m.type == MessageType::kAppend) {
            EXPECT_LE(m.entries.size(), 2U) << "4-byte payloads, 10-byte limit";
            EXPECT_GE(m.entries.size(), 1U);
        }
    }
}

TEST(RaftNodeTest, CrashRestartKeepsVoteAndCommittedEntries) {
    TestCluster c(3);
    ASSERT_TRUE(c.elect(1));
    ASSERT_TRUE(c.propose(1, "a").is_ok());
    c.deliver_all();
    const Term t = c.node(2).term();
    c.crash(2);
    c.restart(2);
    EXPECT_EQ(c.node(2).term(), t);
    EXPECT_EQ(c.node(2).voted_for(), NodeId(1));
    // The follower's commit index is saved lazily; the leader's next heartbeat restores it
    // and the entries are replayed from storage.
    c.tick_all(10);
    EXPECT_EQ(c.leader(), 1);
    EXPECT_EQ(c.applied(2), (std::vector<std::string>{"a"}));
}

TEST(RaftNodeTest, RejectsMalformedInputWithoutCrashing) {
    TestCluster c(3);
    ASSERT_TRUE(c.elect(1));
    c.deliver_all();
    Message m;
    m.type = MessageType::kAppend;
    m.from = NodeId(1);
    m.to = NodeId(3);  // sent to node 2
    m.term = c.node(2).term();
    EXPECT_EQ(c.node(2).step(m).code(), Errc::kInvalidArgument);
    m.from = NodeId(7);
    m.to = NodeId(2);
    EXPECT_EQ(c.node(2).step(m).code(), Errc::kInvalidArgument);
    // An append with a gap is dropped without a reply.
    m.from = NodeId(1);
    m.index = LogIndex(1);
    m.log_term = Term(1);
    m.entries.push_back(Entry{Term(1), LogIndex(5), EntryType::kNormal, {}});
    c.queue().clear();
    EXPECT_TRUE(c.node(2).step(m).is_ok());
    EXPECT_TRUE(c.node(2).take_ready().messages.empty());
    EXPECT_EQ(c.storage(2).last_index(), LogIndex(1));

    MemoryLogStorage s;
    Rng rng(1);
    RaftConfig bad;
    bad.id = NodeId(1);
    bad.voters = {NodeId(1), NodeId(2), NodeId(2)};
    EXPECT_FALSE(RaftNode::open(bad, &s, &rng).is_ok());
    bad.voters = {NodeId(2), NodeId(3)};
    EXPECT_FALSE(RaftNode::open(bad, &s, &rng).is_ok());
    bad.voters = {NodeId(1), NodeId(2), NodeId(3)};
    bad.heartbeat_interval_ms = 200;
    EXPECT_FALSE(RaftNode::open(bad, &s, &rng).is_ok());
    bad.heartbeat_interval_ms = 50;
    EXPECT_TRUE(RaftNode::open(bad, &s, &rng).is_ok());
}

}  // namespace
}  // namespace comet::raft

namespace comet::raft {
namespace {

std::unique_ptr<RaftNode> open_follower(MemoryLogStorage* s, Rng* rng,
                                        std::initializer_list<int64_t> terms) {
    int64_t idx = 0;
    for (int64_t t : terms) {
        Entry e{Term(t), LogIndex(++idx), EntryType::kNormal, {}};
        EXPECT_TRUE(s->append(std::span<const Entry>(&e, 1)).is_ok());
    }
    EXPECT_TRUE(s->save_hard_state(HardState{Term(3), kNoNode, LogIndex(0)}).is_ok());
    RaftConfig c;
    c.id = NodeId(2);
    c.voters = {NodeId(1), NodeId(2), NodeId(3)};
    auto node = RaftNode::open(c, s, rng);
    EXPECT_TRUE(node.is_ok());
    return std::move(node).value();
}

Message append_from_leader(LogIndex prev, Term prev_term) {
    Message m;
    m.type = MessageType::kAppend;
    m.from = NodeId(1);
    m.to = NodeId(2);
    m.term = Term(3);
    m.index = prev;
    m.log_term = prev_term;
    return m;
}

TEST(RaftNodeTest, RejectCarriesConflictTermAndItsFirstIndex) {
    MemoryLogStorage s;
    Rng rng(3);
    auto node = open_follower(&s, &rng, {1, 1, 2, 2, 2});
    ASSERT_TRUE(node->step(append_from_leader(LogIndex(5), Term(3))).is_ok());
    Ready rd = node->take_ready();
    ASSERT_EQ(rd.messages.size(), 1U);
    EXPECT_TRUE(rd.messages[0].reject);
    EXPECT_EQ(rd.messages[0].conflict_term, Term(2));
    EXPECT_EQ(rd.messages[0].reject_hint, LogIndex(3));
    EXPECT_EQ(rd.messages[0].index, LogIndex(5));
    // prev beyond our log: hint is our log end + 1, no conflict term.
    ASSERT_TRUE(node->step(append_from_leader(LogIndex(9), Term(3))).is_ok());
    rd = node->take_ready();
    ASSERT_EQ(rd.messages.size(), 1U);
    EXPECT_EQ(rd.messages[0].conflict_term, Term(0));
    EXPECT_EQ(rd.messages[0].reject_hint, LogIndex(6));
}

TEST(RaftNodeTest, AcceptedAppendTruncatesOnlyFromTheFirstConflict) {
    MemoryLogStorage s;
    Rng rng(3);
    auto node = open_follower(&s, &rng, {1, 1, 2, 2, 2});
    Message m = append_from_leader(LogIndex(2), Term(1));
    m.entries.push_back(Entry{Term(2), LogIndex(3), EntryType::kNormal, {}});  // same: kept
    m.entries.push_back(Entry{Term(3), LogIndex(4), EntryType::kNormal, {}});  // conflict
    m.commit = LogIndex(4);
    ASSERT_TRUE(node->step(m).is_ok());
    EXPECT_EQ(s.last_index(), LogIndex(4));
    EXPECT_EQ(s.term_at(LogIndex(4)), Term(3));
    Ready rd = node->take_ready();
    EXPECT_TRUE(rd.messages.empty()) << "ack must wait for the truncated log to be durable";
    ASSERT_TRUE(rd.persist.has_value());
    EXPECT_EQ(rd.apply_to, LogIndex(4));
    node->persisted(rd.persist->seq);
    rd = node->take_ready();
    ASSERT_EQ(rd.messages.size(), 1U);
    EXPECT_FALSE(rd.messages[0].reject);
    EXPECT_EQ(rd.messages[0].index, LogIndex(4));
    node->check_invariants();
}

TEST(RaftNodeTest, LeaderLeaseIgnoresVotesButNotTransfers) {
    testing::TestCluster c(3);
    ASSERT_TRUE(c.elect(1));
    c.tick_all(2);
    const Term t = c.node(2).term();
    Message v;
    v.type = MessageType::kVote;
    v.from = NodeId(3);
    v.to = NodeId(2);
    v.term = t + 1;
    v.index = c.storage(3).last_index();
    v.log_term = *c.storage(3).term_at(v.index);
    c.queue().clear();
    ASSERT_TRUE(c.node(2).step(v).is_ok());
    EXPECT_EQ(c.node(2).term(), t) << "a vote inside the leader lease must be ignored";
    EXPECT_TRUE(c.node(2).take_ready().messages.empty());
    v.transfer = true;
    ASSERT_TRUE(c.node(2).step(v).is_ok());
    EXPECT_EQ(c.node(2).term(), t + 1);
    EXPECT_EQ(c.node(2).voted_for(), NodeId(3));
}

}  // namespace
}  // namespace comet::raft

namespace comet::raft::testing {
namespace {

// A follower whose storage lost entries it had acknowledged (a corrupt tail found at
// recovery): the leader's heartbeat reveals the gap, the follower says so (regressed reject),
// and the leader lowers its match and resends. Until repaired it neither campaigns nor votes,
// so it cannot help elect a candidate that lacks committed entries.
TEST(RaftNodeTest, AFollowerThatLostAcknowledgedEntriesIsRepairedAndAbstainsMeanwhile) {
    TestCluster c(3);
    ASSERT_TRUE(c.elect(1));
    for (const char* p : {"a", "b", "c"}) {
        ASSERT_TRUE(c.propose(1, p).is_ok());
    }
    c.deliver_all();
    ASSERT_EQ(c.node(2).commit_index(), c.node(1).last_index());
    const LogIndex full = c.node(1).last_index();

    auto lose_tail = [&] {
        c.crash(2);
        ASSERT_TRUE(c.storage(2).truncate_suffix(LogIndex(2)).is_ok());
        ASSERT_TRUE(c.storage(2).sync().is_ok());
        c.tweak_ = [](RaftConfig& rc) { rc.lost_durable_entries = rc.id == NodeId(2); };
        c.restart(2);
        c.tweak_ = {};
        ASSERT_TRUE(c.node(2).recovering());
    };
    lose_tail();
    c.tick_all(10);
    EXPECT_EQ(c.node(2).last_index(), full);
    EXPECT_FALSE(c.node(2).recovering());
    EXPECT_EQ(c.applied(2), (std::vector<std::string>{"a", "b", "c"}));

    // Lost again, and this time the leader is cut off: 3 alone cannot win, 2 does not run.
    lose_tail();
    c.isolate(1);
    c.tick_all(100);
    EXPECT_NE(c.node(2).role(), Role::kLeader);
    EXPECT_NE(c.node(3).role(), Role::kLeader);
    EXPECT_NE(c.node(2).role(), Role::kCandidate);
    c.heal();
    c.tick_all(100);
    ASSERT_NE(c.leader(), 0);
    EXPECT_NE(c.leader(), 2);
    EXPECT_FALSE(c.node(2).recovering());
    EXPECT_GE(c.node(2).last_index(), full);
    c.check_all();
}

}  // namespace
}  // namespace comet::raft::testing
