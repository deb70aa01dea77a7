#pragma once
// EntryLog: the Raft bookkeeping DLedger mode keeps beside the CommitLog. The entries
// themselves are CommitLog bytes (the stored-message format, nothing wrapped); this file only
// says which byte range each Raft entry covers and in which term it was written, plus the hard
// state (term, vote, commit). docs/dledger.md, "Files".
//
// Files under <dir> (= <storePathRootDir>/dledger):
//   entries    32-byte header [magic "CMTRLOG1"][be64 base offset][12 zero][be32 crc32 of 28],
//              then one 32-byte record per entry, index i at 32 * i:
//              [be64 start][be32 size][u8 type][3 zero][be64 term][4 zero][be32 crc32 of 28].
//              The file grows by 1 MiB of zeros at a time; a zeroed record ends the log.
//              Entry 1 starts at the base offset (the CommitLog end when the log was created,
//              so a store written in master-slave mode keeps its data); entry i + 1 starts where
//              entry i ends.
//   hardstate  [magic "CMTRHS01"][be64 term][be32 voted_for][be64 commit][be32 crc32 of 28],
//              replaced atomically (write temp, fsync, rename, fsync dir).
// Crash safety: records are appended with pwrite and made durable by sync(); truncate_from()
// cuts the file (durably) before the caller cuts the CommitLog, so after a crash the entries
// file never describes less than the CommitLog holds of the replicated log, and open() +
// cut_beyond() bring both back to one consistent prefix. A torn or zeroed record ends the log.
//
// Owner: the DLedger driver (one thread), except the read-only accessors marked thread-safe.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "raft/types.h"
#include "store/epoch_file.h"

namespace comet::dledger {

struct EntryRecord {
    int64_t start = 0;
    int32_t size = 0;
    raft::EntryType type = raft::EntryType::kNormal;
    raft::Term term;
    int64_t end() const { return start + size; }
};

class EntryLog {
public:
    static constexpr size_t kRecordSize = 32;

    // Opens (or creates) the files under dir. A new log has no base yet (has_base() false)
    // until set_base(). With `epoch_path`, RocketMQ's epochFileCheckpoint (store::EpochFile)
    // is kept there as a view of the entries: term -> first CommitLog offset, rewritten at open,
    // after a truncation and (when a new term began) with the hard state. Errors: unreadable
    // files, a bad header or hard-state checksum.
    static Result<std::unique_ptr<EntryLog>> open(const std::string& dir,
                                                  const std::string& epoch_path = "");
    ~EntryLog();
    EntryLog(const EntryLog&) = delete;
    EntryLog& operator=(const EntryLog&) = delete;

    bool has_base() const { return has_base_; }
    // Requires: !has_base(). Writes the header durably.
    Status set_base(int64_t base_offset);
    int64_t base_offset() const { return base_; }

    raft::LogIndex last_index() const { return raft::LogIndex(static_cast<int64_t>(recs_.size())); }
    // Requires: 1 <= i <= last_index().
    const EntryRecord& at(raft::LogIndex i) const { return recs_[static_cast<size_t>(i.value() - 1)]; }
    // End of entry i (base for 0). Requires: i <= last_index().
    int64_t end_of(raft::LogIndex i) const { return i.value() == 0 ? base_ : at(i).end(); }
    int64_t end_offset() const { return recs_.empty() ? base_ : recs_.back().end(); }
    // The first entry starting at or after `offset` (last_index() + 1 when none). O(log n).
    raft::LogIndex first_starting_at(int64_t offset) const;

    // Appends one record (volatile until sync()). Requires: r.start == end_offset().
    Status append(const EntryRecord& r);
    // Removes entries [from, last]: the file is cut and made durable at once.
    Status truncate_from(raft::LogIndex from);
    // Drops the entries whose bytes end beyond `log_end` (recovery: the CommitLog lost a torn
    // tail). Returns how many were dropped. Dropping an entry at or below the recorded commit
    // means committed data was lost here (corruption): lost_committed_entries() turns true.
    Result<int64_t> cut_beyond(int64_t log_end);
    // fdatasync of the entries file. Thread-safe (the driver's flush thread calls it while the
    // driver appends): it covers every record appended before the call.
    Status sync() const;
    // Term or vote changed since the hard state was last written.
    bool hard_state_pending() const {
        return hs_.term != written_hs_.term || hs_.voted_for != written_hs_.voted_for;
    }
    // The commit index moved since the hard state was last written.
    bool commit_pending() const { return hs_.commit != written_hs_.commit; }

    bool lost_committed_entries() const { return lost_committed_; }

    raft::HardState hard_state() const { return hs_; }
    // Volatile; sync_hard_state() makes it durable.
    void set_hard_state(const raft::HardState& hs) { hs_ = hs; }
    // Writes the hard state if term or vote changed since it was last written (commit alone
    // is opportunistic, see raft::HardState: the driver forces a write about once a second
    // while it advances), or always when `force`.
    Status sync_hard_state(bool force);

    const std::string& dir() const { return dir_; }
    // Term -> first offset, as in epochFileCheckpoint (empty without an epoch path).
    const std::vector<store::EpochEntry>& epochs() const { return epochs_.entries(); }

private:
    EntryLog() = default;
    Status load();
    Status write_hard_state(const raft::HardState& hs);
    Status rebuild_epochs();

    std::string dir_;
    int fd_ = -1;
    int64_t allocated_ = 0;  // file size: records, then zeros up to here (kGrowBytes steps)
    bool has_base_ = false;
    int64_t base_ = 0;
    std::vector<EntryRecord> recs_;
    raft::HardState hs_;
    raft::HardState written_hs_;
    bool lost_committed_ = false;
    store::EpochFile epochs_{""};
    bool keep_epochs_ = false;
    bool epochs_dirty_ = false;
};

}  // namespace comet::dledger
