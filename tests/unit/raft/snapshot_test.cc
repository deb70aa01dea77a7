// Log compaction and InstallSnapshot (Raft paper §7) in the core and MemoryLogStorage.
#include <gtest/gtest.h>

#include "cluster_helper.h"
#include "raft/memory_log_storage.h"
#include "raft/message_codec.h"
#include "raft/raft_node.h"

namespace comet::raft {
namespace {

using testing::make_entries;
using testing::TestCluster;

std::vector<std::string> payloads(int from, int to) {
    std::vector<std::string> out;
    for (int i = from; i <= to; ++i) {
        out.push_back("v" + std::to_string(i));
    }
    return out;
}

TEST(MemoryLogStorageSnapshotTest, CompactionKeepsTheSuffixAndTheSnapshotTerm) {
    MemoryLogStorage s;
    ASSERT_TRUE(s.append(make_entries(1, 3, 1)).is_ok());
    ASSERT_TRUE(s.append(make_entries(4, 3, 2)).is_ok());
    ASSERT_TRUE(
        s.save_snapshot(Snapshot{LogIndex(4), Term(2), SharedBytes::copy_of("s4")}).is_ok());
    EXPECT_EQ(s.first_index(), LogIndex(5));
    EXPECT_EQ(s.last_index(), LogIndex(6));
    EXPECT_EQ(s.term_at(LogIndex(4)), Term(2));
    EXPECT_FALSE(s.term_at(LogIndex(3)).has_value());
    EXPECT_EQ(s.term_at(LogIndex(0)), Term(0));
    EXPECT_EQ(s.snapshot().data.view(), "s4");
    std::vector<Entry> out;
    EXPECT_FALSE(s.read(LogIndex(4), LogIndex(5), 1 << 20, &out).is_ok());
    ASSERT_TRUE(s.read(LogIndex(5), LogIndex(6), 1 << 20, &out).is_ok());
    EXPECT_EQ(out.front().payload.view(), "p5");
    EXPECT_FALSE(s.truncate_suffix(LogIndex(4)).is_ok());
    EXPECT_FALSE(s.save_snapshot(Snapshot{LogIndex(4), Term(2), {}}).is_ok());
    // The snapshot and everything written before it survive a crash.
    s.crash(0, false);
    EXPECT_EQ(s.first_index(), LogIndex(5));
    EXPECT_EQ(s.last_index(), LogIndex(6));
}

TEST(MemoryLogStorageSnapshotTest, ASnapshotThatDoesNotMatchTheLogReplacesIt) {
    MemoryLogStorage s;
    ASSERT_TRUE(s.append(make_entries(1, 5, 1)).is_ok());
    (void)s.take_changed_from();
    // The leader's entry 3 has term 2: our entries from 3 on are not its log.
    ASSERT_TRUE(s.save_snapshot(Snapshot{LogIndex(3), Term(2), SharedBytes::copy_of("x")}).is_ok());
    EXPECT_EQ(s.first_index(), LogIndex(4));
    EXPECT_EQ(s.last_index(), LogIndex(3));
    EXPECT_EQ(s.term_at(LogIndex(3)), Term(2));
    EXPECT_EQ(s.take_changed_from(), LogIndex(3));
    // Beyond the log's end: the log is empty after it too.
    ASSERT_TRUE(s.save_snapshot(Snapshot{LogIndex(9), Term(3), {}}).is_ok());
    EXPECT_EQ(s.first_index(), LogIndex(10));
    EXPECT_EQ(s.last_index(), LogIndex(9));
    ASSERT_TRUE(s.append(make_entries(10, 1, 3)).is_ok());
    EXPECT_EQ(s.last_index(), LogIndex(10));
}

TEST(MessageCodecSnapshotTest, InstallSnapshotChunksRoundTripAndOtherTypesKeepTheirBytes) {
    Message m;
    m.type = MessageType::kInstallSnapshot;
    m.from = NodeId(1);
    m.to = NodeId(2);
    m.term = Term(3);
    m.index = LogIndex(40);
    m.log_term = Term(2);
    m.commit = LogIndex(41);
    m.snapshot_offset = 5;
    m.snapshot_size = 12;
    m.snapshot_done = false;
    m.data = SharedBytes::copy_of("chunk");
    std::string wire;
    encode_message(m, 7, &wire);
    int64_t tag = 0;
    auto d = decode_message(std::make_shared<const std::string>(wire), &tag);
    ASSERT_TRUE(d.is_ok()) << d.status().to_string();
    EXPECT_EQ(d.value().snapshot_offset, 5);
    EXPECT_EQ(d.value().snapshot_size, 12);
    EXPECT_FALSE(d.value().snapshot_done);
    EXPECT_EQ(d.value().data.view(), "chunk");
    EXPECT_EQ(d.value().index, LogIndex(40));
    // A truncated chunk is corruption, not a crash.
    for (size_t cut = 1; cut < wire.size(); ++cut) {
        auto bad = decode_message(std::make_shared<const std::string>(wire.substr(0, cut)), &tag);
        EXPECT_FALSE(bad.is_ok()) << cut;
    }
    // An append carries no snapshot fields (DLedger's wire bytes are unchanged).
    Message a;
    a.type = MessageType::kAppend;
    std::string aw;
    encode_message(a, 0, &aw);
    EXPECT_EQ(aw.size(), 1 + 1 + 4 + 4 + 8 * 4 + 1 + 8 + 8 + 8 + 4U);
}

TEST(RaftSnapshotTest, LaggingFollowerCatchesUpByChunkedInstallSnapshot) {
    TestCluster c(3, [](RaftConfig& rc) { rc.max_snapshot_chunk_bytes = 4; });
    ASSERT_TRUE(c.elect(1));
    c.isolate(3);
    for (int i = 1; i <= 10; ++i) {
        ASSERT_TRUE(c.propose(1, "v" + std::to_string(i)).is_ok());
        c.deliver_all();
    }
    c.tick_all(3);
    ASSERT_EQ(c.node(1).commit_index(), LogIndex(11));
    ASSERT_TRUE(c.compact(1).is_ok());
    ASSERT_TRUE(c.compact(2).is_ok());
    EXPECT_EQ(c.storage(1).first_index(), LogIndex(12));
    EXPECT_EQ(c.storage(1).last_index(), LogIndex(11));
    c.heal();
    ASSERT_TRUE(c.propose(1, "v11").is_ok());
    c.tick_all(20);
    EXPECT_EQ(c.leader(), 1);
    EXPECT_EQ(c.snapshots_installed(3), 1);
    EXPECT_EQ(c.storage(3).first_index(), LogIndex(12));
    EXPECT_EQ(c.storage(3).snapshot().data.view(), c.storage(1).snapshot().data.view());
    EXPECT_EQ(c.applied(3), payloads(1, 11));
    EXPECT_EQ(c.node(1).match_index(NodeId(3)), LogIndex(12));
    c.check_all();
}

TEST(RaftSnapshotTest, ALostChunkIsResentAfterTwoSilentHeartbeats) {
    TestCluster c(3, [](RaftConfig& rc) { rc.max_snapshot_chunk_bytes = 3; });
    ASSERT_TRUE(c.elect(1));
    c.isolate(3);
    for (int i = 1; i <= 4; ++i) {
        ASSERT_TRUE(c.propose(1, "v" + std::to_string(i)).is_ok());
    }
    c.deliver_all();
    c.tick_all(3);
    ASSERT_TRUE(c.compact(1).is_ok());
    c.heal();
    int dropped = 0;
    c.drop_if_ = [&](const Message& m) {
        // Lose the second chunk once.
        if (m.type == MessageType::kInstallSnapshot && m.snapshot_offset == 3 && dropped == 0) {
            ++dropped;
            return true;
        }
        return false;
    };
    c.tick_all(40);
    EXPECT_EQ(dropped, 1);
    EXPECT_EQ(c.snapshots_installed(3), 1);
    EXPECT_EQ(c.applied(3), payloads(1, 4));
}

TEST(RaftSnapshotTest, RestartRestoresTheSnapshotThenReplaysTheRest) {
    TestCluster c(3);
    ASSERT_TRUE(c.elect(1));
    for (int i = 1; i <= 5; ++i) {
        ASSERT_TRUE(c.propose(1, "v" + std::to_string(i)).is_ok());
    }
    c.deliver_all();
    c.tick_all(3);
    ASSERT_TRUE(c.compact(2).is_ok());
    const LogIndex snap = c.storage(2).first_index() - 1;
    ASSERT_GE(snap, LogIndex(5));
    ASSERT_TRUE(c.propose(1, "v6").is_ok());
    c.tick_all(3);
    c.crash(2);
    c.restart(2);
    EXPECT_GE(c.node(2).applied_index(), snap);
    EXPECT_GE(c.node(2).commit_index(), snap);
    c.tick_all(10);
    EXPECT_EQ(c.applied(2), payloads(1, 6));
    EXPECT_EQ(c.snapshots_installed(2), 0);
}

TEST(RaftSnapshotTest, CompactRejectsIndexesNotYetAppliedAndIgnoresOldOnes) {
    TestCluster c(3);
    ASSERT_TRUE(c.elect(1));
    ASSERT_TRUE(c.propose(1, "v1").is_ok());
    c.deliver_all();
    c.tick_all(2);
    RaftNode& n = c.node(1);
    EXPECT_EQ(n.compact(n.applied_index() + 1, {}).code(), Errc::kInvalidArgument);
    ASSERT_TRUE(c.compact(1).is_ok());
    const LogIndex first = c.storage(1).first_index();
    ASSERT_TRUE(n.compact(LogIndex(1), {}).is_ok());
    EXPECT_EQ(c.storage(1).first_index(), first);
    n.check_invariants();
}

TEST(RaftSnapshotTest, AFollowerWhoseCommitCoversTheSnapshotAnswersWithoutInstalling) {
    TestCluster c(3);
    ASSERT_TRUE(c.elect(1));
    for (int i = 1; i <= 3; ++i) {
        ASSERT_TRUE(c.propose(1, "v" + std::to_string(i)).is_ok());
    }
    c.deliver_all();
    c.tick_all(3);
    const LogIndex commit = c.node(2).commit_index();
    ASSERT_EQ(commit, LogIndex(4));
    Message m;
    m.type = MessageType::kInstallSnapshot;
    m.from = NodeId(1);
    m.to = NodeId(2);
    m.term = c.node(1).term();
    m.index = LogIndex(3);
    m.log_term = c.node(1).term();
    m.snapshot_size = 2;
    m.snapshot_done = true;
    m.data = SharedBytes::copy_of("zz");
    c.queue().clear();
    ASSERT_TRUE(c.node(2).step(m).is_ok());
    Ready rd = c.node(2).take_ready();
    EXPECT_FALSE(rd.snapshot.has_value());
    ASSERT_EQ(rd.messages.size(), 1U);
    EXPECT_EQ(rd.messages[0].type, MessageType::kInstallSnapshotResponse);
    EXPECT_TRUE(rd.messages[0].snapshot_done);
    EXPECT_EQ(rd.messages[0].commit, commit);
    EXPECT_EQ(c.storage(2).first_index(), LogIndex(1));
}

TEST(RaftSnapshotTest, MalformedAndOutOfOrderChunksAreRefusedWithoutCrashing) {
    TestCluster c(3);
    ASSERT_TRUE(c.elect(1));
    c.deliver_all();
    Message m;
    m.type = MessageType::kInstallSnapshot;
    m.from = NodeId(1);
    m.to = NodeId(2);
    m.term = c.node(1).term();
    m.index = LogIndex(50);
    m.log_term = c.node(1).term();
    m.snapshot_offset = 4;  // the follower holds nothing of it yet
    m.snapshot_size = 10;
    m.data = SharedBytes::copy_of("abc");
    c.queue().clear();
    ASSERT_TRUE(c.node(2).step(m).is_ok());
    Ready rd = c.node(2).take_ready();
    ASSERT_EQ(rd.messages.size(), 1U);
    EXPECT_TRUE(rd.messages[0].reject);
    EXPECT_EQ(rd.messages[0].snapshot_offset, 0);
    m.snapshot_size = 5;  // chunk runs past the stated size
    ASSERT_TRUE(c.node(2).step(m).is_ok());
    EXPECT_TRUE(c.node(2).take_ready().messages.empty());
    c.node(2).check_invariants();
}

}  // namespace
}  // namespace comet::raft
