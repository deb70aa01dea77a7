#pragma once
// CommitLogStorage: raft::LogStorage over the broker's own CommitLog. An entry's payload is the
// CommitLog bytes it covers (whole stored-message records, or a segment's blank filler), never
// a copy in another format; EntryLog keeps the range and term of each entry.
//
// Two ways an entry arrives (docs/dledger.md, "Write path"):
//  - leader (set_leader_mode(true)): the send path already appended the records through the
//    normal put (offsets, queue offsets and store timestamps assigned as in master-slave mode);
//    the driver proposes views of those bytes, and append() only records the range.
//  - follower: append() writes the payload at the CommitLog end (CommitLog::append_data), the
//    same bytes at the same offsets as on the leader.
// truncate_suffix() cuts EntryLog first, then the CommitLog (MessageStore::truncate_log), so a
// crash in between leaves CommitLog bytes past the last entry, which the next open cuts.
//
// Owner: the DLedger driver thread (every LogStorage call); truncated_bytes() from any thread.

#include <atomic>
#include <memory>

#include "base/mutex.h"
#include "dledger/entry_log.h"
#include "raft/log_storage.h"
#include "store/message_store.h"

namespace comet::dledger {

class CommitLogStorage final : public raft::LogStorage {
public:
    CommitLogStorage(EntryLog& log, store::MessageStore& store);

    void set_leader_mode(bool on) { leader_mode_ = on; }
    EntryLog& entry_log() { return log_; }

    // The first entry whose CommitLog bytes retention kept (it deletes whole old segments and
    // keeps no snapshot): entries before it cannot be read, though their terms stay known.
    raft::LogIndex first_index() const override;
    raft::LogIndex last_index() const override { return log_.last_index(); }
    std::optional<raft::Term> term_at(raft::LogIndex index) const override;
    Status append(std::span<const raft::Entry> entries) override;
    Status truncate_suffix(raft::LogIndex from) override;
    Status read(raft::LogIndex lo, raft::LogIndex hi, size_t max_bytes,
                std::vector<raft::Entry>* out) const override;
    raft::HardState hard_state() const override { return log_.hard_state(); }
    Status save_hard_state(const raft::HardState& hs) override;
    // CommitLog flush (the store's group commit), then the entries file, then the hard state
    // when term or vote changed.
    Status sync() override;

    // The part of sync() that may run on another thread (the driver's flush thread): CommitLog
    // flush and the entries file's fdatasync. Serialised with truncate_suffix() by io_mu_.
    // When both live on one device, one device flush serves both (decision 035,
    // FlushService::flush_all_then): the entries file's fdatasync flushes the CommitLog's
    // written-back segments too.
    Status sync_data();
    bool one_device_flush() const { return same_device_; }

    int64_t end_of(raft::LogIndex i) const { return log_.end_of(i); }
    // CommitLog bytes removed by truncate_suffix() so far (divergent tails). Any thread: read
    // live by runtime_info(), so a status query right after a truncation already counts it.
    int64_t truncated_bytes() const { return truncated_bytes_.load(std::memory_order_relaxed); }

    // Tests only: every later append, read, truncation and sync fails with kIoError (a disk
    // gone bad). Any thread.
    void inject_io_error_for_test() { injected_error_.store(true, std::memory_order_relaxed); }

private:
    EntryLog& log_;
    bool same_device_ = false;  // the CommitLog and the entries file share a block device
    store::MessageStore& store_;
    bool leader_mode_ = false;
    std::atomic<int64_t> truncated_bytes_{0};
    std::atomic<bool> injected_error_{false};
    Status injected() const;
    Mutex io_mu_;  // sync_data() vs. truncate_suffix(): no flush of files being cut
};

}  // namespace comet::dledger
