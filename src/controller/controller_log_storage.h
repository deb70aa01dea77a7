#pragma once
// ControllerLogStorage: the durable raft::LogStorage of controller mode. The controller's Raft
// log (one encoded event per entry, docs/formats/controller-events.md) and its hard state live
// in two files under one directory (<controllerStorePath>/raft), plus the latest state machine
// snapshot once the log was compacted (Raft §7). Byte layout and recovery:
// docs/formats/controller-events.md, "Raft log file", and docs/formats/controller-snapshot.md.
//
//   log        16-byte header [magic "CMTCTLOG"][be32 version][be32 crc32 of bytes 0..11],
//              version 1 = records from index 1, version 2 = a log rewritten by compaction
//              (records from the snapshot's index + 1; older builds refuse it instead of
//              cutting it), then one record per entry, each directly after the previous:
//              [be32 len][be32 crc32 of the len bytes that follow][be64 term][be64 index]
//              [u8 type][payload]      (len = 17 + payload size)
//   hardstate  36 bytes [magic "CMTCTLHS"][be32 version = 1][be64 term][be32 voted_for]
//              [be64 commit][be32 crc32 of bytes 0..31], replaced atomically (write
//              hardstate.tmp, fdatasync, rename, fsync the directory).
//   snapshot   [magic "CMTCTLSN"][be32 version = 1][be64 index][be64 term][be32 size]
//              [size bytes: ReplicasInfoManager::encode_snapshot()][be32 crc32 of all before],
//              replaced atomically like the hard state.
//
// Compaction (save_snapshot, crash-safe at every step): (0) sync the log and hard state;
// (1) write snapshot.tmp and fdatasync it; (2) rename it over snapshot; (3) fsync the dir;
// (4) write log.tmp (a version 2 header and the records after the snapshot that are kept) and
// fdatasync it; (5) rename it over log; (6) fsync the dir. A kill before (2) leaves the old
// snapshot and the whole log; after (2) the new snapshot and a log that may still begin before
// it: open() skips records the snapshot covers, and when the log holds the snapshot's index
// with another term (an InstallSnapshot that replaced a divergent log) drops everything after
// it too. Leftover .tmp files are deleted at open.
//
// Durability (raft/log_storage.h contract): append() pwrite()s its records at the end of the
// log (one write per call) and stays volatile until sync(). sync() fdatasyncs the log, then
// writes the hard state file when the hard state differs from the one on disk (term, vote or
// commit; controller commits are rare, so no attempt is made to skip commit-only changes).
// truncate_suffix() ftruncates at the first removed record and fdatasyncs at once, before any
// later append can be written: after that call no byte of a removed record exists on disk, so
// no later crash or sync can produce a log mixing removed entries with newer ones (without the
// fdatasync the journaled size change and the new data blocks could reach disk in either order,
// leaving old bytes after new ones). Truncations are rare, so the extra flush costs nothing.
//
// Recovery (open): records are read in order; the first one that is short, has an impossible
// length, fails its CRC, has the wrong index, an unknown type or a term lower than its
// predecessor's ends the log, and the file is cut there (ftruncate + fdatasync). Unsynced
// appends may survive partly; page-cache writeback may even leave a later record without an
// earlier one, which the in-order scan drops. A log that holds entries of a newer term than the
// durable hard state (appends reached disk, the hard state's sync did not) raises the term with
// no vote, as dledger::EntryLog does: an entry of term T means a leader of term T existed, and
// any vote this node granted in T was synced before it was sent. A commit beyond the recovered
// log (committed entries cut: corruption) is lowered to the log end and reported by
// lost_committed_entries(), for RaftConfig::lost_durable_entries.
//
// Memory: every entry after the snapshot (index, term, type, payload, file offset) and the
// snapshot's bytes are kept in memory; controller entries are small events and the driver
// compacts every controllerSnapshotEveryEntries. open() reads the whole file once and hands out
// payload views into that buffer; appended payloads are kept as the caller's SharedBytes.
//
// Errors: kIoError naming the operation and file (a failed write, truncate or fdatasync also
// leaves the storage failed: every later mutation returns kIoError until it is reopened; a sync
// is never retried and reported good), kCorruption for a foreign or damaged header or hard
// state file, kUnsupported for another version, kInvalidArgument for bad calls (never a crash).
//
// Owner: the controller's Raft driver; one thread calls everything (no locks). The only file in
// src/controller that touches the disk; it uses raft/ headers only (no comet_raft symbols).
// Invariants: slots_[i] is index snap_.index + 1 + i; slots_ offsets ascend from kHeaderSize;
// end_ is the byte just past the last record and the size of the log file; terms never
// decrease (and are >= the snapshot's).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "raft/log_storage.h"
#include "raft/types.h"

namespace comet::controller {

class ControllerLogStorage final : public raft::LogStorage {
public:
    static constexpr size_t kHeaderSize = 16;
    static constexpr size_t kRecordOverhead = 25;  // len, crc, term, index, type
    static constexpr size_t kHardStateSize = 36;
    static constexpr uint32_t kVersion = 1;
    static constexpr uint32_t kCompactedLogVersion = 2;
    static constexpr size_t kSnapshotOverhead = 36;  // header 32 + crc 4
    static constexpr size_t kMaxSnapshot = size_t{1} << 30;
    // Appends of a larger payload are rejected; at open, a larger length ends the log.
    static constexpr size_t kMaxPayload = size_t{16} << 20;

    // Opens (creating the directory and files when absent) the log under `dir` and recovers it
    // (see the class comment). Errors: kIoError, kCorruption, kUnsupported.
    static Result<std::unique_ptr<ControllerLogStorage>> open(const std::string& dir);
    ~ControllerLogStorage() override;
    ControllerLogStorage(const ControllerLogStorage&) = delete;
    ControllerLogStorage& operator=(const ControllerLogStorage&) = delete;

    raft::LogIndex first_index() const override { return snap_.index + 1; }
    raft::LogIndex last_index() const override {
        return snap_.index + static_cast<int64_t>(slots_.size());
    }
    std::optional<raft::Term> term_at(raft::LogIndex index) const override;
    // Errors: kInvalidArgument (not contiguous from last_index() + 1, a term lower than the last
    // entry's, an unknown type, a payload above kMaxPayload), kIoError.
    Status append(std::span<const raft::Entry> entries) override;
    // Durable on return (see the class comment). from > last_index() is a no-op.
    // Errors: kInvalidArgument (from < 1), kIoError.
    Status truncate_suffix(raft::LogIndex from) override;
    // Errors: kInvalidArgument (lo < 1 or hi > last_index()); lo > hi reads nothing.
    Status read(raft::LogIndex lo, raft::LogIndex hi, size_t max_bytes,
                std::vector<raft::Entry>* out) const override;
    raft::HardState hard_state() const override { return hs_; }
    // Volatile until sync(). Never fails.
    Status save_hard_state(const raft::HardState& hs) override;
    // fdatasync of the log (when appended to since the last flush), then the hard state file
    // when it changed. Errors: kIoError (the storage is failed from then on).
    Status sync() override;
    raft::Snapshot snapshot() const override { return snap_; }
    // The compaction steps of the class comment; durable on return. Errors: kInvalidArgument
    // (s.index not above the current snapshot, data above kMaxSnapshot), kIoError (failed from
    // then on; reopening recovers the old or the new state).
    Status save_snapshot(const raft::Snapshot& s) override;

    const std::string& dir() const { return dir_; }
    std::string log_path() const { return dir_ + "/log"; }
    std::string hard_state_path() const { return dir_ + "/hardstate"; }
    std::string snapshot_path() const { return dir_ + "/snapshot"; }
    // Tests: save_snapshot stops (as if killed) right after compaction step `step` (1..6 of
    // the class comment) and fails the storage; 0 = off.
    void stop_after_step_for_test(int step) { stop_after_step_ = step; }
    // Recovery at open() cut committed entries (see the class comment).
    bool lost_committed_entries() const { return lost_committed_; }
    // Bytes open() cut from the log's tail (0 for a clean log).
    int64_t recovered_cut_bytes() const { return cut_bytes_; }
    // A write, truncate or flush failed; mutations fail until reopened.
    bool failed() const { return failed_; }

private:
    struct Slot {
        int64_t offset = 0;  // of the record's length field in the log file
        raft::Term term;
        raft::EntryType type = raft::EntryType::kNormal;
        raft::SharedBytes payload;
    };

    // What load_log's scan of the records found.
    struct LogScan {
        size_t end = kHeaderSize;  // byte just past the last record kept
        const char* why = "";      // why the scan stopped before the file's end
        bool diverged = false;     // the entry at the snapshot's index has another term
        bool covered = false;      // records the snapshot covers: a compaction was interrupted
    };

    explicit ControllerLogStorage(std::string dir) : dir_(std::move(dir)) {}
    Status load_snapshot();
    // Recovery of the log file (class comment), in steps: a new or torn header is rewritten
    // (init_log); otherwise the header is checked, the records scanned into slots_
    // (scan_records) and the tail cut (finish_recovery).
    Status load_log();
    Status init_log(size_t size);
    LogScan scan_records(const std::shared_ptr<const void>& owner, size_t size);
    Status finish_recovery(const LogScan& scan, size_t size);
    Status rewrite_log();
    bool stop_here(int step);
    Status load_hard_state();
    Status write_hard_state(const raft::HardState& hs);
    Status fail(Status st);
    Status check_usable(const char* op) const;

    std::string dir_;
    int fd_ = -1;
    raft::Snapshot snap_;
    std::vector<Slot> slots_;
    int64_t end_ = 0;
    bool log_dirty_ = false;  // appended since the last fdatasync of the log
    raft::HardState hs_;
    raft::HardState written_hs_;  // what the hardstate file holds
    bool lost_committed_ = false;
    int64_t cut_bytes_ = 0;
    bool failed_ = false;
    int stop_after_step_ = 0;
};

}  // namespace comet::controller
