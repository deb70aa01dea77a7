#pragma once
// MemoryLogStorage: LogStorage in memory, for unit tests, benchmarks and the simulator. It models
// durability: writes are volatile until sync(), and crash() throws away an unsynced tail (keeping
// a random-length part of it, like a torn page cache flush) and unsynced hard state.
// Snapshots (save_snapshot) are durable at once, as the contract asks; the entries they cover
// are dropped, so first_index() = snapshot index + 1.
// Owner: one RaftNode driver; single-threaded. Invariant: durable_len_ <= entries_.size();
// entries_[i] has index snap_.index + 1 + i.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/rng.h"
#include "raft/log_storage.h"

namespace comet::raft {

class MemoryLogStorage final : public LogStorage {
public:
    MemoryLogStorage() = default;

    LogIndex first_index() const override {
        return report_retained_ ? std::max(snap_.index + 1, retained_from_) : snap_.index + 1;
    }
    LogIndex last_index() const override {
        return snap_.index + static_cast<int64_t>(entries_.size());
    }
    std::optional<Term> term_at(LogIndex index) const override;
    Status append(std::span<const Entry> entries) override;
    Status truncate_suffix(LogIndex from) override;
    Status read(LogIndex lo, LogIndex hi, size_t max_bytes, std::vector<Entry>* out) const override;
    HardState hard_state() const override { return hard_state_; }
    Status save_hard_state(const HardState& hs) override;
    Status sync() override;
    Snapshot snapshot() const override { return snap_; }
    Status save_snapshot(const Snapshot& s) override;

    // Simulated power loss: keeps the synced log plus up to `keep_unsynced` more entries of the
    // unsynced tail, and the last synced hard state (or, when keep_unsynced_hard_state, the
    // latest one: an unsynced write may also have reached the disk).
    void crash(size_t keep_unsynced, bool keep_unsynced_hard_state);
    // Power loss under DLedger mode's storage rules (docs/dledger.md, "Files"): each entry is
    // CommitLog bytes plus a record in another file, the hard state a third file written only by
    // a sync that finds term or vote changed. The unsynced tails of the two log files survive
    // independently (keep_data / keep_records entries each); recovery keeps the entries that
    // have both and cuts the rest; an unsynced hard state never survives, and a kept entry of a
    // newer term than the durable hard state raises the term (no vote), as EntryLog::load does.
    void crash_split(size_t keep_data, size_t keep_records);

    // Direct access for checkers. Requires: first_index() <= index <= last_index().
    const Entry& entry(LogIndex index) const;
    LogIndex durable_last_index() const { return snap_.index + static_cast<int64_t>(durable_len_); }
    const HardState& durable_hard_state() const { return durable_hard_state_; }
    size_t unsynced_count() const { return entries_.size() - durable_len_; }
    // Lowest index whose entry changed (appended, replaced or removed) since the last call, or
    // last_index() + 1 when nothing changed; resets the mark. Lets checkers work incrementally.
    LogIndex take_changed_from();

    // Fault injection for tests. Every later append, truncate_suffix, save_hard_state and
    // save_snapshot (fail_writes) or read (fail_reads) returns `st`; Status::ok() clears it.
    void fail_writes(Status st) { write_error_ = std::move(st); }
    void fail_reads(Status st) { read_error_ = std::move(st); }
    // Retention without a snapshot, as DLedger's CommitLog deletes old segments: entries before
    // `keep_from` can no longer be read (kNotFound) while their terms stay known. With
    // `report` first_index() says so; without it first_index() does not move (a storage whose
    // first_index() ignores retention).
    void drop_prefix(LogIndex keep_from, bool report) {
        retained_from_ = keep_from;
        report_retained_ = report;
    }

private:
    size_t pos(LogIndex i) const { return static_cast<size_t>((i - snap_.index) - 1); }

    Snapshot snap_;
    std::vector<Entry> entries_;  // entries_[i] has index snap_.index + 1 + i
    size_t durable_len_ = 0;
    int64_t changed_from_ = INT64_MAX;  // lowest changed index
    HardState hard_state_;
    HardState durable_hard_state_;
    Status write_error_;
    Status read_error_;
    LogIndex retained_from_;  // drop_prefix(): entries before it are unreadable
    bool report_retained_ = false;
};

}  // namespace comet::raft
