// ControllerLogStorage: entries and hard state survive reopening; truncation is durable and
// ordered before later appends; a torn or corrupt record ends the log and is cut; an unsynced
// tail may be lost but synced entries stay; and a random sequence of operations gives the same
// answers as raft::MemoryLogStorage, before and after simulated crashes.
#include "controller/controller_log_storage.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/crc32.h"
#include "base/rng.h"
#include "log_dir_fixture.h"
#include "raft/memory_log_storage.h"

namespace comet::controller {
namespace {

using raft::Entry;
using raft::EntryType;
using raft::HardState;
using raft::LogIndex;
using raft::NodeId;
using raft::SharedBytes;
using raft::Term;

Entry entry(int64_t index, int64_t term, std::string_view payload,
            EntryType type = EntryType::kNormal) {
    return Entry{Term(term), LogIndex(index), type, SharedBytes::copy_of(payload)};
}

int64_t file_size(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return -1;
    }
    return static_cast<int64_t>(st.st_size);
}

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void cut_file(const std::string& path, int64_t size) {
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(size)), 0) << path;
}

class ControllerLogStorageTest : public ControllerLogDirTest {
protected:
    std::string log_path() const { return dir_ + "/log"; }
    std::string hs_path() const { return dir_ + "/hardstate"; }

    // Every entry of s, read one by one.
    static std::vector<Entry> all(const raft::LogStorage& s) {
        std::vector<Entry> out;
        if (s.last_index().value() > 0) {
            EXPECT_TRUE(s.read(LogIndex(1), s.last_index(), SIZE_MAX, &out).is_ok());
        }
        return out;
    }
    static void expect_same(const std::vector<Entry>& a, const std::vector<Entry>& b) {
        ASSERT_EQ(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i) {
            EXPECT_EQ(a[i].index, b[i].index) << i;
            EXPECT_EQ(a[i].term, b[i].term) << i;
            EXPECT_EQ(a[i].type, b[i].type) << i;
            EXPECT_EQ(a[i].payload.view(), b[i].payload.view()) << i;
        }
    }
};

TEST_F(ControllerLogStorageTest, EmptyLogAndRoundTripAcrossReopen) {
    {
        auto s = open();
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(s->first_index(), LogIndex(1));
        EXPECT_EQ(s->last_index(), LogIndex(0));
        EXPECT_EQ(s->term_at(LogIndex(0)), Term(0));
        EXPECT_EQ(s->term_at(LogIndex(1)), std::nullopt);
        EXPECT_EQ(s->term_at(LogIndex(-1)), std::nullopt);
        EXPECT_EQ(s->hard_state(), HardState{});
        EXPECT_EQ(file_size(log_path()), int64_t{ControllerLogStorage::kHeaderSize});
        std::vector<Entry> es = {entry(1, 1, "", EntryType::kNoOp), entry(2, 1, "alpha"),
                                 entry(3, 2, std::string(300, 'x'))};
        ASSERT_TRUE(s->append(es).is_ok());
        ASSERT_TRUE(s->append({}).is_ok());
        EXPECT_EQ(s->last_index(), LogIndex(3));
        EXPECT_EQ(s->term_at(LogIndex(2)), Term(1));
        EXPECT_EQ(s->term_at(LogIndex(3)), Term(2));
        EXPECT_EQ(s->term_at(LogIndex(4)), std::nullopt);
        expect_same(all(*s), es);
        ASSERT_TRUE(s->sync().is_ok());
    }
    auto s = open();
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->recovered_cut_bytes(), 0);
    EXPECT_EQ(s->last_index(), LogIndex(3));
    EXPECT_EQ(s->term_at(LogIndex(1)), Term(1));
    EXPECT_EQ(s->term_at(LogIndex(3)), Term(2));
    expect_same(all(*s), {entry(1, 1, "", EntryType::kNoOp), entry(2, 1, "alpha"),
                          entry(3, 2, std::string(300, 'x'))});
    // Appending after reopen continues the file.
    ASSERT_TRUE(s->append(std::vector<Entry>{entry(4, 2, "four")}).is_ok());
    ASSERT_TRUE(s->sync().is_ok());
    s = open();
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->last_index(), LogIndex(4));
    EXPECT_EQ(all(*s)[3].payload.view(), "four");
}

TEST_F(ControllerLogStorageTest, ReadStopsAtMaxBytesAfterAtLeastOneEntry) {
    auto s = open();
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(
        s->append(std::vector<Entry>{entry(1, 1, "aaaa"), entry(2, 1, "bbbb"), entry(3, 1, "cccc")})
            .is_ok());
    std::vector<Entry> out;
    ASSERT_TRUE(s->read(LogIndex(1), LogIndex(3), 0, &out).is_ok());
    ASSERT_EQ(out.size(), 1u);  // at least one, even over the budget
    out.clear();
    ASSERT_TRUE(s->read(LogIndex(1), LogIndex(3), 8, &out).is_ok());
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[1].index, LogIndex(2));
    out.clear();
    ASSERT_TRUE(s->read(LogIndex(2), LogIndex(3), 100, &out).is_ok());
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].payload.view(), "bbbb");
    out.clear();
    ASSERT_TRUE(s->read(LogIndex(3), LogIndex(2), 100, &out).is_ok());
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(s->read(LogIndex(0), LogIndex(1), 100, &out).code(), Errc::kInvalidArgument);
    EXPECT_EQ(s->read(LogIndex(1), LogIndex(4), 100, &out).code(), Errc::kInvalidArgument);
}

TEST_F(ControllerLogStorageTest, BadCallsAreRejectedWithoutChangingTheLog) {
    auto s = open();
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(s->append(std::vector<Entry>{entry(1, 2, "a")}).is_ok());
    const int64_t size = file_size(log_path());
    EXPECT_EQ(s->append(std::vector<Entry>{entry(3, 2, "gap")}).code(), Errc::kInvalidArgument);
    EXPECT_EQ(s->append(std::vector<Entry>{entry(1, 2, "again")}).code(), Errc::kInvalidArgument);
    EXPECT_EQ(s->append(std::vector<Entry>{entry(2, 1, "lower term")}).code(),
              Errc::kInvalidArgument);
    EXPECT_EQ(s->append(std::vector<Entry>{entry(2, 2, "ok"), entry(4, 2, "gap")}).code(),
              Errc::kInvalidArgument);
    EXPECT_EQ(s->append(std::vector<Entry>{entry(2, 2, "t", static_cast<EntryType>(9))}).code(),
              Errc::kInvalidArgument);
    EXPECT_EQ(s->truncate_suffix(LogIndex(0)).code(), Errc::kInvalidArgument);
    EXPECT_EQ(s->truncate_suffix(LogIndex(-5)).code(), Errc::kInvalidArgument);
    EXPECT_TRUE(s->truncate_suffix(LogIndex(2)).is_ok());  // past the end: nothing to do
    EXPECT_EQ(s->last_index(), LogIndex(1));
    EXPECT_EQ(file_size(log_path()), size);
    EXPECT_FALSE(s->failed());
}

TEST_F(ControllerLogStorageTest, TruncateThenAppendThenReopen) {
    {
        auto s = open();
        ASSERT_NE(s, nullptr);
        std::vector<Entry> es;
        for (int64_t i = 1; i <= 5; ++i) {
            es.push_back(entry(i, 1, "old" + std::to_string(i)));
        }
        ASSERT_TRUE(s->append(es).is_ok());
        ASSERT_TRUE(s->sync().is_ok());
        ASSERT_TRUE(s->truncate_suffix(LogIndex(3)).is_ok());
        EXPECT_EQ(s->last_index(), LogIndex(2));
        EXPECT_EQ(s->term_at(LogIndex(3)), std::nullopt);
        ASSERT_TRUE(
            s->append(std::vector<Entry>{entry(3, 2, "new3"), entry(4, 2, "new4")}).is_ok());
        ASSERT_TRUE(s->sync().is_ok());
    }
    {
        auto s = open();
        ASSERT_NE(s, nullptr);
        expect_same(all(*s), {entry(1, 1, "old1"), entry(2, 1, "old2"), entry(3, 2, "new3"),
                              entry(4, 2, "new4")});
        // A truncation is durable on return, without sync(): the file ends at the cut.
        ASSERT_TRUE(s->truncate_suffix(LogIndex(2)).is_ok());
    }
    auto s = open();
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->recovered_cut_bytes(), 0);
    expect_same(all(*s), {entry(1, 1, "old1")});
    ASSERT_TRUE(s->truncate_suffix(LogIndex(1)).is_ok());
    EXPECT_EQ(s->last_index(), LogIndex(0));
    EXPECT_EQ(file_size(log_path()), int64_t{ControllerLogStorage::kHeaderSize});
}

TEST_F(ControllerLogStorageTest, HardStateRoundTripAndAtomicReplacement) {
    const HardState a{Term(3), NodeId(2), LogIndex(0)};
    const HardState b{Term(4), NodeId(0), LogIndex(1)};
    {
        auto s = open();
        ASSERT_NE(s, nullptr);
        ASSERT_TRUE(s->save_hard_state(a).is_ok());
        EXPECT_EQ(s->hard_state(), a);
        EXPECT_FALSE(std::filesystem::exists(hs_path()));  // volatile until sync()
    }
    {
        auto s = open();
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(s->hard_state(), HardState{});  // the unsynced one is gone
        ASSERT_TRUE(s->save_hard_state(a).is_ok());
        ASSERT_TRUE(s->sync().is_ok());
        EXPECT_EQ(file_size(hs_path()), int64_t{ControllerLogStorage::kHardStateSize});
        EXPECT_FALSE(std::filesystem::exists(hs_path() + ".tmp"));
    }
    const std::string bytes_a = read_file(hs_path());
    {
        auto s = open();
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(s->hard_state(), a);
        ASSERT_TRUE(s->append(std::vector<Entry>{entry(1, 4, "x")}).is_ok());
        ASSERT_TRUE(s->save_hard_state(b).is_ok());
        ASSERT_TRUE(s->sync().is_ok());
    }
    {
        // A crash during a replacement leaves a temp file beside the old one: open() keeps the
        // old hard state and removes the temp file.
        write_file(hs_path() + ".tmp", "half-written");
        auto s = open();
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(s->hard_state(), b);
        EXPECT_FALSE(std::filesystem::exists(hs_path() + ".tmp"));
    }
    // The file is whole or absent, never torn; a damaged one is corruption, not a default.
    std::string bad = bytes_a;
    bad[14] = static_cast<char>(bad[14] ^ 0x01);
    write_file(hs_path(), bad);
    auto r = ControllerLogStorage::open(dir_);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Errc::kCorruption);
    EXPECT_NE(r.status().message().find("hardstate"), std::string::npos);
    write_file(hs_path(), bytes_a.substr(0, 20));
    EXPECT_EQ(ControllerLogStorage::open(dir_).status().code(), Errc::kCorruption);
}

TEST_F(ControllerLogStorageTest, TornLastRecordRecoversThePreviousEntries) {
    int64_t two = 0;
    {
        auto s = open();
        ASSERT_NE(s, nullptr);
        ASSERT_TRUE(
            s->append(std::vector<Entry>{entry(1, 1, "first"), entry(2, 1, "second")}).is_ok());
        two = file_size(log_path());
        ASSERT_TRUE(s->append(std::vector<Entry>{entry(3, 1, "the third entry")}).is_ok());
        ASSERT_TRUE(s->sync().is_ok());
    }
    const std::string whole = read_file(log_path());
    ASSERT_EQ(static_cast<int64_t>(whole.size()),
              two + int64_t{ControllerLogStorage::kRecordOverhead} + 15);
    for (int64_t cut = two; cut < static_cast<int64_t>(whole.size()); ++cut) {
        SCOPED_TRACE(cut);
        write_file(log_path(), whole.substr(0, static_cast<size_t>(cut)));
        {
            auto s = open();
            ASSERT_NE(s, nullptr);
            EXPECT_EQ(s->last_index(), LogIndex(2));
            EXPECT_EQ(s->recovered_cut_bytes(), cut - two);
            EXPECT_FALSE(s->lost_committed_entries());
            EXPECT_EQ(file_size(log_path()), two);  // the torn bytes are cut
            expect_same(all(*s), {entry(1, 1, "first"), entry(2, 1, "second")});
        }
        auto s = open();  // and the cut log is clean
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(s->recovered_cut_bytes(), 0);
    }
    // A torn header (the file was being created) is an empty log.
    for (int64_t cut : {int64_t{1}, int64_t{15}}) {
        write_file(log_path(), whole.substr(0, static_cast<size_t>(cut)));
        auto s = open();
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(s->last_index(), LogIndex(0));
        ASSERT_TRUE(s->append(std::vector<Entry>{entry(1, 1, "again")}).is_ok());
        ASSERT_TRUE(s->sync().is_ok());
        s = open();
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(s->last_index(), LogIndex(1));
    }
}

TEST_F(ControllerLogStorageTest, CorruptRecordInTheMiddleCutsThere) {
    std::vector<int64_t> ends;  // file size after each entry
    {
        auto s = open();
        ASSERT_NE(s, nullptr);
        for (int64_t i = 1; i <= 5; ++i) {
            ASSERT_TRUE(
                s->append(std::vector<Entry>{entry(i, 1, "payload" + std::to_string(i))}).is_ok());
            ends.push_back(file_size(log_path()));
        }
        ASSERT_TRUE(s->save_hard_state(HardState{Term(1), NodeId(1), LogIndex(4)}).is_ok());
        ASSERT_TRUE(s->sync().is_ok());
    }
    const std::string whole = read_file(log_path());
    // Flip one payload byte of entry 3 (its crc no longer matches).
    std::string bad = whole;
    bad[static_cast<size_t>(ends[1]) + ControllerLogStorage::kRecordOverhead + 2] ^= 0x20;
    write_file(log_path(), bad);
    {
        auto s = open();
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(s->last_index(), LogIndex(2));
        EXPECT_EQ(file_size(log_path()), ends[1]);
        EXPECT_EQ(s->recovered_cut_bytes(), ends[4] - ends[1]);
        // Entries 3 and 4 were committed: recovery reports the loss and lowers the commit.
        EXPECT_TRUE(s->lost_committed_entries());
        EXPECT_EQ(s->hard_state().commit, LogIndex(2));
        EXPECT_EQ(s->hard_state().term, Term(1));
        EXPECT_EQ(s->hard_state().voted_for, NodeId(1));
    }
    // A damaged length field or index ends the log just the same.
    bad = whole;
    bad[static_cast<size_t>(ends[2]) + 1] = '\x7f';  // length of entry 4
    write_file(log_path(), bad);
    EXPECT_EQ(open()->last_index(), LogIndex(3));
    bad = whole;
    bad[static_cast<size_t>(ends[0])] = '\0';  // entry 2 length = 0: impossible
    bad[static_cast<size_t>(ends[0]) + 1] = '\0';
    bad[static_cast<size_t>(ends[0]) + 2] = '\0';
    bad[static_cast<size_t>(ends[0]) + 3] = '\0';
    write_file(log_path(), bad);
    EXPECT_EQ(open()->last_index(), LogIndex(1));
    // Zeroed blocks past a synced prefix (writeback of a later page first) end the log too.
    bad = whole.substr(0, static_cast<size_t>(ends[1])) + std::string(4096, '\0');
    write_file(log_path(), bad);
    EXPECT_EQ(open()->last_index(), LogIndex(2));
}

TEST_F(ControllerLogStorageTest, ForeignOrNewerFilesAreRejected) {
    { ASSERT_NE(open(), nullptr); }
    const std::string header = read_file(log_path());
    std::string bad = header;
    bad[0] = 'X';
    write_file(log_path(), bad);
    auto r = ControllerLogStorage::open(dir_);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Errc::kCorruption);
    EXPECT_NE(r.status().message().find("/raft/log"), std::string::npos);
    bad = header;
    bad[13] ^= 1;  // header crc
    write_file(log_path(), bad);
    EXPECT_EQ(ControllerLogStorage::open(dir_).status().code(), Errc::kCorruption);
    // Version 3 with a matching crc: unsupported, not corrupt (2 is a compacted log).
    bad = header;
    bad[11] = 3;
    const uint32_t c = crc32(bad.data(), 12);
    for (int i = 0; i < 4; ++i) {
        bad[static_cast<size_t>(12 + i)] = static_cast<char>(c >> (24 - 8 * i));
    }
    write_file(log_path(), bad);
    EXPECT_EQ(ControllerLogStorage::open(dir_).status().code(), Errc::kUnsupported);
    // A directory that cannot be created: kIoError naming it.
    write_file(root_ + "/plain", "x");
    r = ControllerLogStorage::open(root_ + "/plain/raft");
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Errc::kIoError);
    EXPECT_NE(r.status().message().find("plain"), std::string::npos);
}

TEST_F(ControllerLogStorageTest, UnsyncedTailMayBeLostSyncedEntriesRemain) {
    int64_t synced = 0;
    int64_t four = 0;
    std::string whole;
    {
        auto s = open();
        ASSERT_NE(s, nullptr);
        ASSERT_TRUE(s->save_hard_state(HardState{Term(1), NodeId(1), LogIndex(0)}).is_ok());
        ASSERT_TRUE(
            s->append(std::vector<Entry>{entry(1, 1, "a"), entry(2, 1, "b"), entry(3, 1, "c")})
                .is_ok());
        ASSERT_TRUE(s->sync().is_ok());
        synced = file_size(log_path());
        // A new term, saved but not synced, and entries of it appended but not synced.
        ASSERT_TRUE(s->save_hard_state(HardState{Term(2), NodeId(2), LogIndex(3)}).is_ok());
        ASSERT_TRUE(s->append(std::vector<Entry>{entry(4, 2, "d")}).is_ok());
        four = file_size(log_path());
        ASSERT_TRUE(s->append(std::vector<Entry>{entry(5, 2, "e"), entry(6, 2, "f")}).is_ok());
        whole = read_file(log_path());
    }
    // Power loss with none of the unsynced bytes on disk (the hard state file was never
    // rewritten: it is only written by sync()).
    cut_file(log_path(), synced);
    {
        auto s = open();
        ASSERT_NE(s, nullptr);
        expect_same(all(*s), {entry(1, 1, "a"), entry(2, 1, "b"), entry(3, 1, "c")});
        EXPECT_EQ(s->hard_state(), (HardState{Term(1), NodeId(1), LogIndex(0)}));
    }
    // Power loss with entry 4 and part of entry 5 on disk: the term of entry 4 is taken, with
    // no vote (the vote for node 2 was never synced, so it was never sent either).
    write_file(log_path(), whole.substr(0, static_cast<size_t>(four) + 7));
    auto s = open();
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->last_index(), LogIndex(4));
    EXPECT_EQ(s->recovered_cut_bytes(), 7);
    EXPECT_EQ(s->hard_state(), (HardState{Term(2), NodeId(0), LogIndex(0)}));
    EXPECT_FALSE(s->lost_committed_entries());
    // The raised term is written by the next sync.
    ASSERT_TRUE(s->sync().is_ok());
    s = open();
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->hard_state(), (HardState{Term(2), NodeId(0), LogIndex(0)}));
}

// The same random operations against MemoryLogStorage (the reference) and the file storage.
// A crash cuts the log file anywhere between its synced length and its end (unsynced bytes
// partly lost, the last record possibly torn) and reopens; the reference then crashes keeping
// the same number of entries. Invariants of the Raft core are respected by the generator:
// terms never fall, truncations never go below the commit index.
TEST_F(ControllerLogStorageTest, MatchesMemoryLogStorageUnderRandomOperationsAndCrashes) {
    for (uint64_t seed = 1; seed <= 6; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        std::filesystem::remove_all(root_);
        Rng rng(seed);
        raft::MemoryLogStorage mem;
        auto disk = open();
        ASSERT_NE(disk, nullptr);
        int64_t durable_size = file_size(log_path());
        HardState durable_hs;
        std::vector<int64_t> ends;  // file end after entry i + 1 (mirrors the record layout)
        int crashes = 0;
        for (int step = 0; step < 150; ++step) {
            SCOPED_TRACE("step " + std::to_string(step));
            const int64_t op = rng.uniform(0, 99);
            const int64_t last = mem.last_index().value();
            const HardState hs = mem.hard_state();
            if (op < 40) {  // append 1..3 entries of the current term
                std::vector<Entry> es;
                const int64_t n = rng.uniform(1, 3);
                for (int64_t k = 1; k <= n; ++k) {
                    std::string p(static_cast<size_t>(rng.uniform(0, 40)), '\0');
                    for (char& ch : p) {
                        ch = static_cast<char>(rng.uniform(0, 255));
                    }
                    const EntryType type =
                        p.empty() && rng.chance(0.5) ? EntryType::kNoOp : EntryType::kNormal;
                    es.push_back(entry(last + k, std::max<int64_t>(hs.term.value(), 1), p, type));
                    const int64_t prev =
                        ends.empty() ? int64_t{ControllerLogStorage::kHeaderSize} : ends.back();
                    ends.push_back(prev + int64_t{ControllerLogStorage::kRecordOverhead} +
                                   static_cast<int64_t>(p.size()));
                }
                ASSERT_TRUE(mem.append(es).is_ok());
                ASSERT_TRUE(disk->append(es).is_ok());
                ASSERT_EQ(file_size(log_path()), ends.back());
            } else if (op < 52) {  // truncate above the commit index
                if (last > hs.commit.value()) {
                    const int64_t from = rng.uniform(hs.commit.value() + 1, last);
                    ASSERT_TRUE(mem.truncate_suffix(LogIndex(from)).is_ok());
                    ASSERT_TRUE(disk->truncate_suffix(LogIndex(from)).is_ok());
                    ends.resize(static_cast<size_t>(from - 1));
                    durable_size = file_size(log_path());  // durable on return
                }
            } else if (op < 70) {  // new term / vote / commit
                HardState next = hs;
                if (rng.chance(0.4)) {
                    next.term += 1;
                    next.voted_for = NodeId(static_cast<int32_t>(rng.uniform(0, 3)));
                }
                next.commit = LogIndex(rng.uniform(hs.commit.value(), last));
                ASSERT_TRUE(mem.save_hard_state(next).is_ok());
                ASSERT_TRUE(disk->save_hard_state(next).is_ok());
            } else if (op < 88) {
                ASSERT_TRUE(mem.sync().is_ok());
                ASSERT_TRUE(disk->sync().is_ok());
                durable_size = file_size(log_path());
                durable_hs = mem.hard_state();
            } else {  // crash: keep a random part of the unsynced bytes
                ++crashes;
                const int64_t end = file_size(log_path());
                const int64_t cut = rng.chance(0.3) ? end : rng.uniform(durable_size, end);
                disk.reset();
                cut_file(log_path(), cut);
                disk = open();
                ASSERT_NE(disk, nullptr);
                size_t kept = 0;
                while (kept < ends.size() && ends[kept] <= cut) {
                    ++kept;
                }
                ends.resize(kept);
                ASSERT_EQ(disk->last_index().value(), static_cast<int64_t>(kept));
                ASSERT_GE(disk->last_index(), mem.durable_last_index());
                mem.crash(kept - static_cast<size_t>(mem.durable_last_index().value()), false);
                ASSERT_EQ(mem.last_index(), disk->last_index());
                // The hard state is the synced one, its term raised to the last entry's.
                HardState want = durable_hs;
                if (kept > 0 && *mem.term_at(mem.last_index()) > want.term) {
                    want.term = *mem.term_at(mem.last_index());
                    want.voted_for = raft::kNoNode;
                }
                EXPECT_EQ(disk->hard_state(), want);
                EXPECT_FALSE(disk->lost_committed_entries());
                ASSERT_TRUE(mem.save_hard_state(disk->hard_state()).is_ok());
                ASSERT_TRUE(mem.sync().is_ok());
                durable_size = file_size(log_path());
                durable_hs = disk->hard_state();
                // What recovery found counts as durable; the reference agrees.
                ASSERT_TRUE(disk->sync().is_ok());
            }
            // Compare everything observable.
            ASSERT_EQ(disk->last_index(), mem.last_index());
            EXPECT_EQ(disk->hard_state(), mem.hard_state());
            for (int64_t i = -1; i <= mem.last_index().value() + 1; ++i) {
                ASSERT_EQ(disk->term_at(LogIndex(i)), mem.term_at(LogIndex(i))) << i;
            }
            expect_same(all(*disk), all(mem));
            if (mem.last_index().value() > 0) {
                const int64_t lo = rng.uniform(1, mem.last_index().value());
                const int64_t hi = rng.uniform(lo, mem.last_index().value());
                const auto max_bytes = static_cast<size_t>(rng.uniform(0, 100));
                std::vector<Entry> a;
                std::vector<Entry> b;
                ASSERT_TRUE(disk->read(LogIndex(lo), LogIndex(hi), max_bytes, &a).is_ok());
                ASSERT_TRUE(mem.read(LogIndex(lo), LogIndex(hi), max_bytes, &b).is_ok());
                expect_same(a, b);
            }
        }
        EXPECT_GT(crashes, 0);
        // A clean reopen after a final sync gives back everything.
        ASSERT_TRUE(disk->sync().is_ok());
        disk = open();
        ASSERT_NE(disk, nullptr);
        EXPECT_EQ(disk->hard_state(), mem.hard_state());
        expect_same(all(*disk), all(mem));
    }
}

}  // namespace
}  // namespace comet::controller
