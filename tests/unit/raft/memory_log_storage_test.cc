#include "raft/memory_log_storage.h"

#include <gtest/gtest.h>

#include "cluster_helper.h"

namespace comet::raft {
namespace {

using testing::make_entries;

TEST(MemoryLogStorageTest, AppendReadTermAndTruncate) {
    MemoryLogStorage s;
    EXPECT_EQ(s.last_index(), LogIndex(0));
    EXPECT_EQ(s.term_at(LogIndex(0)), Term(0));
    EXPECT_FALSE(s.term_at(LogIndex(1)).has_value());
    ASSERT_TRUE(s.append(make_entries(1, 3, 1)).is_ok());
    ASSERT_TRUE(s.append(make_entries(4, 2, 2)).is_ok());
    EXPECT_EQ(s.last_index(), LogIndex(5));
    EXPECT_EQ(s.term_at(LogIndex(3)), Term(1));
    EXPECT_EQ(s.term_at(LogIndex(4)), Term(2));
    std::vector<Entry> out;
    ASSERT_TRUE(s.read(LogIndex(2), LogIndex(4), 1 << 20, &out).is_ok());
    ASSERT_EQ(out.size(), 3U);
    EXPECT_EQ(out[0].payload.view(), "p2");
    // The byte limit stops the read but always returns at least one entry.
    out.clear();
    ASSERT_TRUE(s.read(LogIndex(1), LogIndex(5), 1, &out).is_ok());
    EXPECT_EQ(out.size(), 1U);
    ASSERT_TRUE(s.truncate_suffix(LogIndex(4)).is_ok());
    EXPECT_EQ(s.last_index(), LogIndex(3));
}

TEST(MemoryLogStorageTest, RejectsGapsAndBadRanges) {
    MemoryLogStorage s;
    EXPECT_EQ(s.append(make_entries(2, 1, 1)).code(), Errc::kInvalidArgument);
    std::vector<Entry> out;
    EXPECT_EQ(s.read(LogIndex(1), LogIndex(1), 10, &out).code(), Errc::kInvalidArgument);
    EXPECT_EQ(s.truncate_suffix(LogIndex(0)).code(), Errc::kInvalidArgument);
}

TEST(MemoryLogStorageTest, CrashKeepsSyncedPrefixAndSyncedHardState) {
    MemoryLogStorage s;
    ASSERT_TRUE(s.append(make_entries(1, 3, 1)).is_ok());
    ASSERT_TRUE(s.save_hard_state(HardState{Term(1), NodeId(2), LogIndex(2)}).is_ok());
    ASSERT_TRUE(s.sync().is_ok());
    ASSERT_TRUE(s.append(make_entries(4, 3, 1)).is_ok());
    ASSERT_TRUE(s.save_hard_state(HardState{Term(2), NodeId(3), LogIndex(2)}).is_ok());
    EXPECT_EQ(s.unsynced_count(), 3U);
    s.crash(0, false);
    EXPECT_EQ(s.last_index(), LogIndex(3));
    EXPECT_EQ(s.hard_state().term, Term(1));
    EXPECT_EQ(s.hard_state().voted_for, NodeId(2));
}

TEST(MemoryLogStorageTest, TornTailKeepsPartOfUnsyncedEntriesAndTheirHardState) {
    MemoryLogStorage s;
    ASSERT_TRUE(s.append(make_entries(1, 2, 1)).is_ok());
    ASSERT_TRUE(s.sync().is_ok());
    ASSERT_TRUE(s.save_hard_state(HardState{Term(3), NodeId(1), LogIndex(0)}).is_ok());
    ASSERT_TRUE(s.append(make_entries(3, 4, 3)).is_ok());
    s.crash(2, false);
    EXPECT_EQ(s.last_index(), LogIndex(4));
    EXPECT_EQ(s.hard_state().term, Term(3));  // written before the surviving entries
    EXPECT_EQ(s.durable_last_index(), LogIndex(4));
}

TEST(MemoryLogStorageTest, TruncationIsNeverUndoneBySync) {
    MemoryLogStorage s;
    ASSERT_TRUE(s.append(make_entries(1, 4, 1)).is_ok());
    ASSERT_TRUE(s.sync().is_ok());
    ASSERT_TRUE(s.truncate_suffix(LogIndex(3)).is_ok());
    EXPECT_EQ(s.durable_last_index(), LogIndex(2));
    ASSERT_TRUE(s.append(make_entries(3, 1, 2)).is_ok());
    s.crash(0, false);
    EXPECT_EQ(s.last_index(), LogIndex(2));
}

TEST(MemoryLogStorageTest, ChangedFromTracksLowestTouchedIndex) {
    MemoryLogStorage s;
    ASSERT_TRUE(s.append(make_entries(1, 5, 1)).is_ok());
    EXPECT_EQ(s.take_changed_from(), LogIndex(1));
    EXPECT_EQ(s.take_changed_from(), LogIndex(6));  // nothing changed
    ASSERT_TRUE(s.truncate_suffix(LogIndex(4)).is_ok());
    ASSERT_TRUE(s.append(make_entries(4, 2, 2)).is_ok());
    EXPECT_EQ(s.take_changed_from(), LogIndex(4));
}

TEST(SharedBytesTest, CopyOfOwnsItsBytes) {
    SharedBytes b;
    {
        std::string src = "hello";
        b = SharedBytes::copy_of(src);
        src[0] = 'j';
    }
    EXPECT_EQ(b.view(), "hello");
    SharedBytes c = b;  // shares, no copy
    EXPECT_EQ(c.data(), b.data());
    EXPECT_TRUE(SharedBytes::copy_of("").empty());
}

}  // namespace
}  // namespace comet::raft
