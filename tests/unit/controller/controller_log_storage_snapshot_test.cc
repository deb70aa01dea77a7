// ControllerLogStorage snapshots and compaction: round trips, and a kill after every step of
// save_snapshot (stop_after_step_for_test) restarts with the same state.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "controller/controller_log_storage.h"
#include "log_dir_fixture.h"

namespace comet::controller {
namespace {

using raft::Entry;
using raft::EntryType;
using raft::LogIndex;
using raft::SharedBytes;
using raft::Snapshot;
using raft::Term;

Entry entry(int64_t index, int64_t term) {
    return Entry{Term(term), LogIndex(index), EntryType::kNormal,
                 SharedBytes::copy_of("e" + std::to_string(index) + "t" + std::to_string(term))};
}

class ControllerLogSnapshotTest : public ControllerLogDirTest {
protected:
    // Appends entries [from, to] of `term` and syncs.
    static void fill(ControllerLogStorage& s, int64_t from, int64_t to, int64_t term) {
        std::vector<Entry> es;
        for (int64_t i = from; i <= to; ++i) {
            es.push_back(entry(i, term));
        }
        ASSERT_TRUE(s.append(es).is_ok());
        ASSERT_TRUE(s.sync().is_ok());
    }
    // The entries [first, last] hold entry(i, term_of(i)).
    static void expect_entries(const ControllerLogStorage& s, int64_t first, int64_t last,
                               int64_t split, int64_t t1, int64_t t2) {
        ASSERT_EQ(s.first_index(), LogIndex(first));
        ASSERT_EQ(s.last_index(), LogIndex(last));
        if (first > last) {
            return;
        }
        std::vector<Entry> out;
        ASSERT_TRUE(s.read(LogIndex(first), LogIndex(last), SIZE_MAX, &out).is_ok());
        ASSERT_EQ(out.size(), static_cast<size_t>(last - first + 1));
        for (const Entry& e : out) {
            const int64_t t = e.index.value() <= split ? t1 : t2;
            EXPECT_EQ(e.term, Term(t)) << e.index.value();
            EXPECT_EQ(e.payload.view(), entry(e.index.value(), t).payload.view())
                << e.index.value();
        }
    }
};

TEST_F(ControllerLogSnapshotTest, CompactionKeepsTheSuffixAcrossReopenAndAppends) {
    {
        auto s = open();
        fill(*s, 1, 5, 1);
        fill(*s, 6, 10, 2);
        ASSERT_TRUE(s->save_hard_state({Term(2), raft::kNoNode, LogIndex(8)}).is_ok());
        ASSERT_TRUE(
            s->save_snapshot(Snapshot{LogIndex(7), Term(2), SharedBytes::copy_of("S7")}).is_ok());
        expect_entries(*s, 8, 10, 5, 1, 2);
        EXPECT_EQ(s->term_at(LogIndex(7)), Term(2));
        EXPECT_EQ(s->term_at(LogIndex(6)), std::nullopt);
        EXPECT_FALSE(s->truncate_suffix(LogIndex(7)).is_ok());
        EXPECT_FALSE(s->save_snapshot(Snapshot{LogIndex(7), Term(2), {}}).is_ok());
        // The hard state went to disk with the snapshot (step 0).
        EXPECT_EQ(read_file(dir_ + "/hardstate").size(), ControllerLogStorage::kHardStateSize);
        fill(*s, 11, 11, 2);
        ASSERT_TRUE(s->truncate_suffix(LogIndex(10)).is_ok());
        fill(*s, 10, 10, 2);
    }
    auto s = open();
    EXPECT_EQ(s->recovered_cut_bytes(), 0);
    expect_entries(*s, 8, 10, 5, 1, 2);
    EXPECT_EQ(s->snapshot().index, LogIndex(7));
    EXPECT_EQ(s->snapshot().term, Term(2));
    EXPECT_EQ(s->snapshot().data.view(), "S7");
    EXPECT_EQ(s->hard_state().commit, LogIndex(8));
    const std::string log = read_file(dir_ + "/log");
    EXPECT_EQ(get_be32(reinterpret_cast<const uint8_t*>(log.data()) + 8),
              ControllerLogStorage::kCompactedLogVersion);
    // A second compaction leaves only the snapshot.
    ASSERT_TRUE(
        s->save_snapshot(Snapshot{LogIndex(10), Term(2), SharedBytes::copy_of("S10")}).is_ok());
    s = open();
    expect_entries(*s, 11, 10, 0, 2, 2);
    EXPECT_EQ(s->term_at(LogIndex(10)), Term(2));
    EXPECT_EQ(read_file(dir_ + "/log").size(), ControllerLogStorage::kHeaderSize);
}

TEST_F(ControllerLogSnapshotTest, AKillAfterAnyCompactionStepRestartsWithTheSameState) {
    for (int step = 1; step <= 6; ++step) {
        SCOPED_TRACE("stopped after step " + std::to_string(step));
        std::filesystem::remove_all(root_);
        {
            auto s = open();
            fill(*s, 1, 4, 1);
            ASSERT_TRUE(s->save_snapshot(Snapshot{LogIndex(2), Term(1), SharedBytes::copy_of("S2")})
                            .is_ok());
            fill(*s, 5, 12, 3);
            s->stop_after_step_for_test(step);
            EXPECT_FALSE(
                s->save_snapshot(Snapshot{LogIndex(9), Term(3), SharedBytes::copy_of("S9")})
                    .is_ok());
            EXPECT_TRUE(s->failed());
            EXPECT_FALSE(s->append(std::vector<Entry>{entry(13, 3)}).is_ok());
        }
        auto s = open();
        ASSERT_NE(s, nullptr);
        // Before the rename the old snapshot stands; from it on the new one. Either way every
        // entry after the snapshot is there, with the same bytes.
        const int64_t snap = step >= 2 ? 9 : 2;
        EXPECT_EQ(s->snapshot().index, LogIndex(snap));
        EXPECT_EQ(s->snapshot().data.view(), step >= 2 ? "S9" : "S2");
        expect_entries(*s, snap + 1, 12, 4, 1, 3);
        EXPECT_EQ(s->recovered_cut_bytes(), 0);
        EXPECT_FALSE(std::filesystem::exists(dir_ + "/snapshot.tmp"));
        EXPECT_FALSE(std::filesystem::exists(dir_ + "/log.tmp"));
        // And it goes on: append, compact again, reopen.
        fill(*s, 13, 13, 3);
        ASSERT_TRUE(
            s->save_snapshot(Snapshot{LogIndex(11), Term(3), SharedBytes::copy_of("S11")}).is_ok());
        s = open();
        expect_entries(*s, 12, 13, 4, 1, 3);
    }
}

TEST_F(ControllerLogSnapshotTest, AnInstalledSnapshotReplacesADivergentLogEvenIfKilledMidway) {
    for (int step = 0; step <= 6; ++step) {
        SCOPED_TRACE("stopped after step " + std::to_string(step));
        std::filesystem::remove_all(root_);
        {
            auto s = open();
            fill(*s, 1, 10, 1);
            s->stop_after_step_for_test(step);
            // The leader's entry 8 has term 2: our 8..10 are not its log.
            const Status st =
                s->save_snapshot(Snapshot{LogIndex(8), Term(2), SharedBytes::copy_of("L8")});
            EXPECT_EQ(st.is_ok(), step == 0) << st.to_string();
            if (step == 0) {
                expect_entries(*s, 9, 8, 0, 2, 2);
            }
        }
        auto s = open();
        ASSERT_NE(s, nullptr);
        if (step == 1) {
            expect_entries(*s, 1, 10, 10, 1, 1);  // nothing changed yet
            continue;
        }
        EXPECT_EQ(s->snapshot().index, LogIndex(8));
        expect_entries(*s, 9, 8, 0, 2, 2);
        EXPECT_EQ(s->term_at(LogIndex(8)), Term(2));
        EXPECT_EQ(s->hard_state().term, Term(2));  // raised to the snapshot's term, no vote
        fill(*s, 9, 9, 2);
        s = open();
        expect_entries(*s, 9, 9, 0, 2, 2);
    }
}

TEST_F(ControllerLogSnapshotTest, ASnapshotBeyondTheLogAndADamagedSnapshotFile) {
    {
        auto s = open();
        fill(*s, 1, 3, 1);
        ASSERT_TRUE(
            s->save_snapshot(Snapshot{LogIndex(20), Term(4), SharedBytes::copy_of("far")}).is_ok());
        expect_entries(*s, 21, 20, 0, 4, 4);
        fill(*s, 21, 22, 4);
    }
    {
        auto s = open();
        expect_entries(*s, 21, 22, 0, 4, 4);
        EXPECT_EQ(s->snapshot().data.view(), "far");
    }
    // The snapshot is renamed into place only when durable: damage is corruption, and the
    // controller refuses to start rather than lose the state.
    std::string bytes = read_file(dir_ + "/snapshot");
    bytes[33] ^= 1;
    std::ofstream(dir_ + "/snapshot", std::ios::binary | std::ios::trunc) << bytes;
    auto bad = ControllerLogStorage::open(dir_);
    ASSERT_FALSE(bad.is_ok());
    EXPECT_EQ(bad.status().code(), Errc::kCorruption);
}

}  // namespace
}  // namespace comet::controller
