// EntryLog: the entries file and the hard state survive reopening; a torn or zeroed record ends
// the log; truncation and cut_beyond are durable at once.
#include "dledger/entry_log.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "../store/message_store_test_util.h"

namespace comet::dledger {
namespace {

class EntryLogTest : public store::testing::StoreDirTest {
protected:
    void SetUp() override {
        StoreDirTest::SetUp();
        dir_ = root_ + "/dledger";
    }
    std::unique_ptr<EntryLog> open() {
        auto log = EntryLog::open(dir_);
        EXPECT_TRUE(log.is_ok()) << log.status().to_string();
        return log.is_ok() ? std::move(log).value() : nullptr;
    }
    static EntryRecord rec(int64_t start, int32_t size, int64_t term) {
        return EntryRecord{start, size, raft::EntryType::kNormal, raft::Term(term)};
    }
    std::string dir_;
};

TEST_F(EntryLogTest, BaseRecordsAndHardStateSurviveReopen) {
    {
        auto log = open();
        EXPECT_FALSE(log->has_base());
        ASSERT_TRUE(log->set_base(4096).is_ok());
        ASSERT_TRUE(log->append(rec(4096, 100, 1)).is_ok());
        ASSERT_TRUE(log->append(EntryRecord{4196, 0, raft::EntryType::kNoOp, raft::Term(2)}).is_ok());
        ASSERT_TRUE(log->append(rec(4196, 50, 2)).is_ok());
        EXPECT_FALSE(log->append(rec(9999, 1, 2)).is_ok()) << "a gap must be refused";
        ASSERT_TRUE(log->sync().is_ok());
        log->set_hard_state(raft::HardState{raft::Term(2), raft::NodeId(3), raft::LogIndex(2)});
        ASSERT_TRUE(log->sync_hard_state(false).is_ok());
    }
    auto log = open();
    ASSERT_TRUE(log->has_base());
    EXPECT_EQ(log->base_offset(), 4096);
    ASSERT_EQ(log->last_index(), raft::LogIndex(3));
    EXPECT_EQ(log->at(raft::LogIndex(2)).type, raft::EntryType::kNoOp);
    EXPECT_EQ(log->at(raft::LogIndex(3)).term, raft::Term(2));
    EXPECT_EQ(log->end_offset(), 4246);
    EXPECT_EQ(log->end_of(raft::LogIndex(0)), 4096);
    EXPECT_EQ(log->end_of(raft::LogIndex(1)), 4196);
    EXPECT_EQ(log->hard_state(),
              (raft::HardState{raft::Term(2), raft::NodeId(3), raft::LogIndex(2)}));
}

TEST_F(EntryLogTest, ATornOrZeroedRecordEndsTheLog) {
    {
        auto log = open();
        ASSERT_TRUE(log->set_base(0).is_ok());
        for (int i = 0; i < 4; ++i) {
            ASSERT_TRUE(log->append(rec(i * 10, 10, 1)).is_ok());
        }
        ASSERT_TRUE(log->sync().is_ok());
    }
    // Flip a byte of record 3 and leave half a record after record 4.
    const std::string path = dir_ + "/entries";
    const int fd = ::open(path.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    const char junk = 0x5a;
    ASSERT_EQ(::pwrite(fd, &junk, 1, EntryLog::kRecordSize * 3 + 5), 1);
    const char half[16] = {1, 2, 3};
    ASSERT_EQ(::pwrite(fd, half, sizeof half, EntryLog::kRecordSize * 5), 16);
    ::close(fd);
    auto log = open();
    EXPECT_EQ(log->last_index(), raft::LogIndex(2));
    EXPECT_EQ(log->end_offset(), 20);
    EXPECT_EQ(std::filesystem::file_size(path), EntryLog::kRecordSize * 3);
    ASSERT_TRUE(log->append(rec(20, 5, 2)).is_ok());
}

// Decision 035: the file grows by 1 MiB of zeros at a time (records then land in bytes that
// exist on disk: an fdatasync commits no metadata); the zeros end the log at reopen.
TEST_F(EntryLogTest, GrowsByZeroedMebibytesAndReopensToItsRecords) {
    const std::string path = dir_ + "/entries";
    constexpr int64_t kMiB = 1 << 20;
    const auto per_mib = static_cast<int>(kMiB / EntryLog::kRecordSize);
    {
        auto log = open();
        ASSERT_TRUE(log->set_base(0).is_ok());
        EXPECT_EQ(std::filesystem::file_size(path), EntryLog::kRecordSize);
        ASSERT_TRUE(log->append(rec(0, 10, 1)).is_ok());
        EXPECT_EQ(std::filesystem::file_size(path), EntryLog::kRecordSize + kMiB);
        for (int i = 1; i < per_mib; ++i) {  // fills the first MiB exactly
            ASSERT_TRUE(log->append(rec(i * 10, 10, 1)).is_ok());
        }
        EXPECT_EQ(std::filesystem::file_size(path), EntryLog::kRecordSize + kMiB);
        ASSERT_TRUE(log->append(rec(per_mib * 10, 10, 1)).is_ok());
        EXPECT_EQ(std::filesystem::file_size(path), EntryLog::kRecordSize + 2 * kMiB);
        ASSERT_TRUE(log->sync().is_ok());
    }
    {
        auto log = open();
        EXPECT_EQ(log->last_index(), raft::LogIndex(per_mib + 1));
        EXPECT_EQ(log->end_offset(), (per_mib + 1) * 10);
        EXPECT_EQ(std::filesystem::file_size(path), EntryLog::kRecordSize * (per_mib + 2))
            << "the zeros are cut at open";
        ASSERT_TRUE(log->truncate_from(raft::LogIndex(10)).is_ok());
        EXPECT_EQ(std::filesystem::file_size(path), EntryLog::kRecordSize * 10);
        ASSERT_TRUE(log->append(rec(90, 7, 2)).is_ok());
        EXPECT_EQ(std::filesystem::file_size(path), EntryLog::kRecordSize * 10 + kMiB);
        ASSERT_TRUE(log->sync().is_ok());
    }
    auto log = open();
    ASSERT_EQ(log->last_index(), raft::LogIndex(10));
    EXPECT_EQ(log->at(raft::LogIndex(10)).size, 7);
    EXPECT_EQ(log->at(raft::LogIndex(10)).term, raft::Term(2));
}

TEST_F(EntryLogTest, TruncateAndCutBeyondAreDurableAtOnce) {
    {
        auto log = open();
        ASSERT_TRUE(log->set_base(0).is_ok());
        for (int i = 0; i < 6; ++i) {
            ASSERT_TRUE(log->append(rec(i * 10, 10, 1)).is_ok());
        }
        ASSERT_TRUE(log->sync().is_ok());
        log->set_hard_state(raft::HardState{raft::Term(1), raft::NodeId(1), raft::LogIndex(6)});
        ASSERT_TRUE(log->sync_hard_state(true).is_ok());
        ASSERT_TRUE(log->truncate_from(raft::LogIndex(6)).is_ok());
        // The CommitLog lost everything past byte 35: entries 4 and 5 go, commit follows.
        auto dropped = log->cut_beyond(35);
        ASSERT_TRUE(dropped.is_ok());
        EXPECT_EQ(*dropped, 2);
        EXPECT_EQ(log->last_index(), raft::LogIndex(3));
        EXPECT_EQ(log->hard_state().commit, raft::LogIndex(3));
        // No sync(): the cut must already be on disk.
    }
    auto log = open();
    EXPECT_EQ(log->last_index(), raft::LogIndex(3));
    // The hard state file says commit 6; it is clamped to the log end.
    EXPECT_EQ(log->hard_state().commit, raft::LogIndex(3));
}

TEST_F(EntryLogTest, ACorruptHardStateOrHeaderFailsOpenWithTheFileName) {
    {
        auto log = open();
        ASSERT_TRUE(log->set_base(0).is_ok());
        log->set_hard_state(raft::HardState{raft::Term(5), raft::NodeId(2), raft::LogIndex(0)});
        ASSERT_TRUE(log->sync_hard_state(false).is_ok());
    }
    {
        const int fd = ::open((dir_ + "/hardstate").c_str(), O_RDWR);
        const char junk = 0x7f;
        ASSERT_EQ(::pwrite(fd, &junk, 1, 9), 1);
        ::close(fd);
        auto log = EntryLog::open(dir_);
        ASSERT_FALSE(log.is_ok());
        EXPECT_NE(log.status().message().find("hardstate"), std::string::npos);
        std::filesystem::remove(dir_ + "/hardstate");
    }
    const int fd = ::open((dir_ + "/entries").c_str(), O_RDWR);
    const char junk = 'X';
    ASSERT_EQ(::pwrite(fd, &junk, 1, 0), 1);
    ::close(fd);
    auto log = EntryLog::open(dir_);
    ASSERT_FALSE(log.is_ok());
    EXPECT_NE(log.status().message().find("entries"), std::string::npos);
}

TEST_F(EntryLogTest, EntriesOfANewerTermThanTheHardStateRaiseTheTerm) {
    {
        auto log = open();
        ASSERT_TRUE(log->set_base(0).is_ok());
        log->set_hard_state(raft::HardState{raft::Term(4), raft::NodeId(2), raft::LogIndex(0)});
        ASSERT_TRUE(log->sync_hard_state(true).is_ok());
        // A follower learns term 5 from an append and is killed before its sync: the record is
        // in the page cache, the new hard state never written.
        ASSERT_TRUE(log->append(rec(0, 10, 5)).is_ok());
    }
    auto log = open();
    EXPECT_EQ(log->hard_state().term, raft::Term(5));
    EXPECT_EQ(log->hard_state().voted_for, raft::kNoNode);
    EXPECT_TRUE(log->hard_state_pending());
}

TEST_F(EntryLogTest, TheEpochFileFollowsTermsAndTruncation) {
    const std::string epochs = dir_ + "/epochFileCheckpoint";
    {
        auto log = EntryLog::open(dir_, epochs);
        ASSERT_TRUE(log.is_ok());
        ASSERT_TRUE((*log)->set_base(1000).is_ok());
        ASSERT_TRUE((*log)->append(rec(1000, 10, 1)).is_ok());
        ASSERT_TRUE((*log)->append(rec(1010, 10, 1)).is_ok());
        ASSERT_TRUE((*log)->append(rec(1020, 10, 3)).is_ok());
        ASSERT_TRUE((*log)->append(rec(1030, 10, 4)).is_ok());
        ASSERT_TRUE((*log)->sync().is_ok());
        ASSERT_TRUE((*log)->sync_hard_state(true).is_ok());
        ASSERT_TRUE((*log)->truncate_from(raft::LogIndex(4)).is_ok());
        EXPECT_EQ((*log)->epochs(),
                  (std::vector<store::EpochEntry>{{1, 1000}, {3, 1020}}));
    }
    store::EpochFile file(epochs);
    ASSERT_TRUE(file.load().is_ok());
    EXPECT_EQ(file.entries(), (std::vector<store::EpochEntry>{{1, 1000}, {3, 1020}}));
    // Rebuilt from the entries at open, whatever the file said.
    std::filesystem::remove(epochs);
    std::filesystem::remove(epochs + ".bak");
    auto log = EntryLog::open(dir_, epochs);
    ASSERT_TRUE(log.is_ok());
    EXPECT_EQ((*log)->epochs(), (std::vector<store::EpochEntry>{{1, 1000}, {3, 1020}}));
    ASSERT_TRUE(file.load().is_ok());
    EXPECT_EQ(file.entries().size(), 2u);
}

}  // namespace
}  // namespace comet::dledger
