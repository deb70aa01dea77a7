#pragma once
// LogStorage: where a Raft node keeps its log and hard state. The core calls it synchronously
// from its single thread; an implementation may buffer writes (page cache, mapped file) as long
// as sync() later makes them durable in order.
//
// Contract (see docs/raft.md "Persistence ordering"):
//  - append() and save_hard_state() may be volatile until the driver calls sync(); the core
//    never calls sync() itself. It asks the driver to (Ready::persist) and waits for
//    RaftNode::persisted() before sending anything that depends on the writes.
//  - truncate_suffix() may also be volatile, but a later sync() must never make durable a log
//    that mixes entries appended after the truncation with truncated ones (write order holds).
//  - After a crash the storage holds a prefix of the appended log that includes everything
//    synced; any unsynced tail may be partly present.
//  - Entries are opaque payload bytes plus term and index; an implementation may keep them in
//    its own format (DLedger: CommitLog messages with terms kept beside them) and hand out
//    SharedBytes views instead of copies.
//  - Snapshots and compaction (Raft §7) are optional: a storage without snapshots keeps the
//    defaults below and the core never sends or installs a snapshot for it. A compacting
//    storage keeps the latest snapshot (index, term, data) and the entries after it:
//    first_index() = snapshot index + 1, term_at(snapshot index) = snapshot term, and
//    last_index() >= snapshot index even when no entry follows it.
//  - A storage without snapshots may still lose a prefix to retention (DLedger's log is the
//    CommitLog, whose old segments are deleted by age): first_index() is then the first entry
//    it can still read, and term_at() may go on answering below it. A follower that needs
//    entries before first_index() cannot be caught up by this leader (RaftNode leaves it
//    behind and reports it).

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "base/status.h"
#include "raft/types.h"

namespace comet::raft {

class LogStorage {
public:
    virtual ~LogStorage() = default;

    // Lowest index whose entry can be read: 1, the snapshot's index + 1, or (no snapshot) the
    // first entry retention kept. Never above last_index() + 1.
    virtual LogIndex first_index() const = 0;
    // 0 when the log is empty; the snapshot's index when only the snapshot is left.
    virtual LogIndex last_index() const = 0;
    // Term of the entry at `index`; Term(0) for index 0; the snapshot's term at its index;
    // always known at first_index() - 1 (a leader sends it as an append's previous term);
    // nullopt above last_index(); below first_index() - 1 nullopt unless the storage still
    // knows the term (retention without snapshots).
    virtual std::optional<Term> term_at(LogIndex index) const = 0;

    // Requires: entries are contiguous and entries.front().index == last_index() + 1.
    virtual Status append(std::span<const Entry> entries) = 0;
    // Removes entries [from, last_index()]. Requires: first_index() <= from.
    virtual Status truncate_suffix(LogIndex from) = 0;
    // Appends entries [lo, hi] to *out, stopping early (but after at least one entry) once
    // max_bytes of payload have been read. Requires: first_index() <= lo, hi <= last_index().
    virtual Status read(LogIndex lo, LogIndex hi, size_t max_bytes,
                        std::vector<Entry>* out) const = 0;

    virtual HardState hard_state() const = 0;
    virtual Status save_hard_state(const HardState& hs) = 0;

    // Driver-only: makes every write made so far durable. Never called by RaftNode.
    virtual Status sync() = 0;

    // The latest snapshot (index 0 when none). Its data stays valid while the copy lives.
    virtual Snapshot snapshot() const { return {}; }
    // Makes `s` the storage's snapshot, durably before returning (a crash after it returns
    // recovers s; a crash during it recovers either s or the previous state, never a mix).
    // Every write made before the call is durable on return too, as after sync(): the hard
    // state must never be older than the snapshot's term after a crash.
    // Entries up to s.index are discarded. Entries after it are kept when the log holds
    // s.index with term s.term (Raft §7: "retain log entries following it"), else the whole
    // log is discarded and last_index() becomes s.index. Requires: s.index > snapshot().index.
    // Default: kUnsupported (a storage that never compacts).
    virtual Status save_snapshot(const Snapshot& s) {
        (void)s;
        return Status::error(Errc::kUnsupported, "this log storage does not keep snapshots");
    }
};

}  // namespace comet::raft
