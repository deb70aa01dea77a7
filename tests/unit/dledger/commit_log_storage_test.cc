// CommitLogStorage over a real MessageStore: a follower stores the leader's bytes at the same
// offsets; truncation cuts the entries file and the CommitLog; and every crash point of a
// truncation or of a leader's put recovers to one consistent prefix, with ConsumeQueues only up
// to the commit (recovery_keep_end + dispatch limit).
#include "dledger/commit_log_storage.h"

#include <gtest/gtest.h>

#include "../store/message_store_test_util.h"
#include "dledger/dledger_server.h"

namespace comet::dledger {
namespace {

using store::testing::make_message;
using store::testing::tiny_config;

class CommitLogStorageTest : public store::testing::StoreDirTest {
protected:
    struct Peer {
        // The dispatch limit the store's dispatch thread reads; the test thread moves it (the
        // broker reads the server's committed offset the same way, never the entry log).
        std::shared_ptr<std::atomic<int64_t>> limit = std::make_shared<std::atomic<int64_t>>(-1);
        std::string root;
        std::unique_ptr<EntryLog> log;
        std::unique_ptr<store::MessageStore> store;
        std::unique_ptr<CommitLogStorage> storage;
    };

    // Opens (or reopens) a peer's entry log and store the way the broker does.
    void open_peer(Peer& p, const std::string& name) {
        p.storage.reset();
        p.store.reset();
        p.log.reset();
        p.root = root_ + "/" + name;
        auto log = EntryLog::open(p.root + "/dledger");
        ASSERT_TRUE(log.is_ok()) << log.status().to_string();
        p.log = std::move(log).value();
        EntryLog* entries = p.log.get();
        store::MessageStoreOptions o;
        o.start_scheduler = false;
        o.recovery_keep_end = [entries](store::PhysicalOffset end) {
            return recovery_keep_end(*entries, end);
        };
        p.limit->store(-1);
        auto limit = p.limit;
        o.dispatch_limit = [entries, limit] {
            const int64_t l = limit->load();  // -1: recovery, on the opening thread
            return l >= 0 ? store::PhysicalOffset(l) : committed_end_at_open(*entries);
        };
        auto s = store::MessageStore::open(tiny_config(p.root), clock_, o);
        ASSERT_TRUE(s.is_ok()) << s.status().to_string();
        p.store = std::move(s).value();
        p.limit->store(committed_end_at_open(*p.log).value());
        p.store->start();
        p.storage = std::make_unique<CommitLogStorage>(*p.log, *p.store);
    }
    void crash(Peer& p) {
        p.storage.reset();
        p.store->halt_for_test();
        p.store.reset();
        p.log.reset();
    }
    // The leader's put of `n` messages, then the proposal of the new bytes as one entry.
    void leader_put_and_propose(Peer& leader, int n, int64_t term) {
        for (int i = 0; i < n; ++i) {
            auto r = leader.store->put_message(make_message("T", 0, "m" + std::to_string(i)))
                         .get();
            ASSERT_TRUE(r.ok());
        }
        leader.storage->set_leader_mode(true);
        const int64_t start = leader.log->end_offset();
        const int64_t end = leader.store->commit_log().max_offset().value();
        auto view = leader.store->commit_log().get_data(store::PhysicalOffset(start), end - start);
        ASSERT_TRUE(view.has_value());
        raft::Entry e;
        e.term = raft::Term(term);
        e.index = leader.log->last_index() + 1;
        e.payload = raft::SharedBytes(view->file, view->data, view->size);
        ASSERT_TRUE(leader.storage->append(std::span<const raft::Entry>(&e, 1)).is_ok());
        ASSERT_TRUE(leader.storage->sync().is_ok());
    }
    // Replicates leader entries [from, last] to the follower.
    void replicate(Peer& leader, Peer& follower, raft::LogIndex from) {
        std::vector<raft::Entry> entries;
        ASSERT_TRUE(leader.storage->read(from, leader.log->last_index(), SIZE_MAX, &entries).is_ok());
        ASSERT_TRUE(follower.storage->append(entries).is_ok());
        ASSERT_TRUE(follower.storage->sync().is_ok());
    }
    // A leader and a follower that both hold two entries of `first` and `second` messages.
    void two_entries_replicated(Peer& leader, Peer& follower, int first, int second) {
        open_peer(leader, "leader");
        open_peer(follower, "follower");
        leader_put_and_propose(leader, first, 1);
        leader_put_and_propose(leader, second, 1);
        replicate(leader, follower, raft::LogIndex(1));
    }
    void set_commit(Peer& p, int64_t commit) {
        p.log->set_hard_state(raft::HardState{raft::Term(1), raft::NodeId(1), raft::LogIndex(commit)});
        ASSERT_TRUE(p.log->sync_hard_state(true).is_ok());
        p.limit->store(p.log->end_of(raft::LogIndex(commit)));
    }

    ManualClock clock_;
};

TEST_F(CommitLogStorageTest, AFollowerHoldsTheLeadersBytesAtTheSameOffsets) {
    Peer leader, follower;
    two_entries_replicated(leader, follower, 3, 2);
    EXPECT_EQ(follower.log->last_index(), raft::LogIndex(2));
    EXPECT_EQ(follower.storage->term_at(raft::LogIndex(2)), raft::Term(1));
    const int64_t end = leader.store->commit_log().max_offset().value();
    ASSERT_EQ(follower.store->commit_log().max_offset().value(), end);
    auto a = leader.store->commit_log().get_data(store::PhysicalOffset(0), end);
    auto b = follower.store->commit_log().get_data(store::PhysicalOffset(0), end);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->bytes(), b->bytes());
    // Nothing is dispatched before it commits; then the records keep the leader's offsets.
    ASSERT_TRUE(follower.store->dispatch_now().is_ok());
    EXPECT_EQ(follower.store->get_max_offset_in_queue("T", 0).value(), 0);
    set_commit(follower, 2);
    ASSERT_TRUE(follower.store->dispatch_now().is_ok());
    EXPECT_EQ(follower.store->get_max_offset_in_queue("T", 0).value(), 5);
    // A leader entry that claims bytes the CommitLog does not have is refused.
    raft::Entry bogus;
    bogus.term = raft::Term(1);
    bogus.index = leader.log->last_index() + 1;
    bogus.payload = raft::SharedBytes::copy_of("xxxx");
    EXPECT_FALSE(leader.storage->append(std::span<const raft::Entry>(&bogus, 1)).is_ok());
}

TEST_F(CommitLogStorageTest, TruncateSuffixCutsTheEntriesFileAndTheCommitLog) {
    Peer leader, follower;
    two_entries_replicated(leader, follower, 2, 2);
    const int64_t keep = follower.log->end_of(raft::LogIndex(1));
    ASSERT_TRUE(follower.storage->truncate_suffix(raft::LogIndex(2)).is_ok());
    EXPECT_EQ(follower.log->last_index(), raft::LogIndex(1));
    EXPECT_EQ(follower.store->commit_log().max_offset().value(), keep);
    EXPECT_EQ(follower.storage->truncated_bytes(), leader.log->end_offset() - keep);
    // The follower takes the next entry from the new leader at the cut.
    replicate(leader, follower, raft::LogIndex(2));
    EXPECT_EQ(follower.store->commit_log().max_offset(), leader.store->commit_log().max_offset());
}

TEST_F(CommitLogStorageTest, CrashAfterCuttingTheEntriesFileRecoversTheShorterLog) {
    Peer leader, follower;
    two_entries_replicated(leader, follower, 2, 3);
    set_commit(follower, 1);
    const int64_t keep = follower.log->end_of(raft::LogIndex(1));
    // truncate_suffix's first step only, then kill -9.
    ASSERT_TRUE(follower.log->truncate_from(raft::LogIndex(2)).is_ok());
    crash(follower);
    open_peer(follower, "follower");
    EXPECT_EQ(follower.log->last_index(), raft::LogIndex(1));
    EXPECT_EQ(follower.store->commit_log().max_offset().value(), keep);
    EXPECT_EQ(follower.store->get_max_offset_in_queue("T", 0).value(), 2);
}

TEST_F(CommitLogStorageTest, CrashWithBytesNeverProposedCutsThemAtRecovery) {
    Peer leader;
    open_peer(leader, "leader");
    leader_put_and_propose(leader, 2, 1);
    set_commit(leader, 1);
    const int64_t proposed = leader.log->end_offset();
    // Acknowledged by the store, not yet proposed (the leader dies before its driver runs).
    ASSERT_TRUE(leader.store->put_message(make_message("T", 0, "unproposed")).get().ok());
    ASSERT_GT(leader.store->commit_log().max_offset().value(), proposed);
    crash(leader);
    open_peer(leader, "leader");
    EXPECT_EQ(leader.store->commit_log().max_offset().value(), proposed);
    EXPECT_EQ(leader.store->get_max_offset_in_queue("T", 0).value(), 2);
    // The next put reuses the freed queue offset: no hole, no reuse of a committed one.
    store::PutMessageResult r = leader.store->put_message(make_message("T", 0, "next")).get();
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.append.logics_offset.value(), 2);
}

TEST_F(CommitLogStorageTest, RecoveryDispatchesOnlyUpToTheRecordedCommit) {
    Peer leader, follower;
    two_entries_replicated(leader, follower, 2, 3);
    // Dispatched without any limit (as a store written before the limit existed would be).
    follower.store->set_dispatch_limit({});
    ASSERT_TRUE(follower.store->dispatch_now().is_ok());
    ASSERT_EQ(follower.store->get_max_offset_in_queue("T", 0).value(), 5);
    set_commit(follower, 1);
    crash(follower);
    open_peer(follower, "follower");
    // Entry 2 is kept (it may still commit) but its records are not in the ConsumeQueue.
    EXPECT_EQ(follower.log->last_index(), raft::LogIndex(2));
    EXPECT_EQ(follower.store->get_max_offset_in_queue("T", 0).value(), 2);
    EXPECT_EQ(follower.store->dispatched_offset().value(), follower.log->end_of(raft::LogIndex(1)));
}

TEST_F(CommitLogStorageTest, AStoreWrittenInMasterSlaveModeKeepsItsDataAsTheBase) {
    Peer p;
    {
        auto s = store::MessageStore::open(tiny_config(root_ + "/ms"), clock_);
        ASSERT_TRUE(s.is_ok());
        (*s)->start();
        for (int i = 0; i < 4; ++i) {
            ASSERT_TRUE((*s)->put_message(make_message("T", 0, "old" + std::to_string(i))).get().ok());
        }
        (*s)->shutdown();
    }
    open_peer(p, "ms");
    ASSERT_TRUE(p.log->has_base());
    EXPECT_EQ(p.log->base_offset(), p.store->commit_log().max_offset().value());
    EXPECT_EQ(p.store->get_max_offset_in_queue("T", 0).value(), 4);
    leader_put_and_propose(p, 1, 1);
    EXPECT_EQ(p.log->at(raft::LogIndex(1)).start, p.log->base_offset());
}

// Retention deletes old CommitLog segments: first_index() is the first entry whose bytes are all
// still there, so the Raft core never reads (or promises) what is gone.
TEST_F(CommitLogStorageTest, FirstIndexIsTheFirstEntryRetentionKept) {
    Peer leader;
    open_peer(leader, "leader");
    // Entries of 8 messages over 4 KiB segments: the log spans several segments.
    for (int i = 0; i < 12; ++i) {
        leader_put_and_propose(leader, 8, 1);
    }
    EXPECT_EQ(leader.storage->first_index(), raft::LogIndex(1));
    store::CommitLog& cl = leader.store->commit_log();
    ASSERT_GT(cl.mapped_file_queue().delete_expired_file_by_time(0, clock_.wall_millis(),
                                                                 /*clean_immediately=*/true, 100),
              0);
    const int64_t min = cl.min_offset().value();
    ASSERT_GT(min, 0);
    const raft::LogIndex first = leader.storage->first_index();
    ASSERT_GT(first, raft::LogIndex(1));
    ASSERT_LE(first, leader.log->last_index());
    EXPECT_GE(leader.log->at(first).start, min);
    EXPECT_LT(leader.log->at(first - 1).start, min);
    std::vector<raft::Entry> out;
    EXPECT_TRUE(leader.storage->read(first, first, SIZE_MAX, &out).is_ok());
    EXPECT_EQ(leader.storage->read(first - 1, first - 1, SIZE_MAX, &out).code(), Errc::kNotFound);
    // Terms stay known below it (the entries file keeps every record).
    EXPECT_EQ(leader.storage->term_at(first - 1), raft::Term(1));
}

}  // namespace
}  // namespace comet::dledger
