#pragma once
// DispatchHints: what the put path already knows about each record it appends (topic, queue,
// offsets, tags code, keys), handed to the dispatcher so that it need not read the record back
// through the mapping and decode it (issue 16: that read-back was about a quarter of the
// broker's CPU per send). A hint is only a shortcut: the dispatcher uses one whose offset is
// the record it is at and falls back to decoding the bytes for anything else (records written
// by replication, batches, the end-of-segment filler, hints that did not fit).
//
// Owner: CommitLog (write-buffer mode). Threads: one producer at a time (the CommitLog's put
// lock serialises them), one consumer at a time (the dispatcher's reput lock); lock-free
// single-producer/single-consumer ring of fixed capacity, slots reused without allocating once
// their strings have grown. invalidate() from the truncating thread (puts are not running).
// Invariant: a hint whose generation differs from the current one is never handed out, so the
// records a truncation cut can never be dispatched from their hints.

#include <atomic>
#include <cstdint>
#include <vector>

#include "store/reput.h"

namespace comet::store {

class DispatchHints {
public:
    // Requires: capacity is a power of two.
    explicit DispatchHints(size_t capacity = 4096);
    DispatchHints(const DispatchHints&) = delete;
    DispatchHints& operator=(const DispatchHints&) = delete;

    // Producer: the slot to fill, or null when the ring is full (the record is then decoded).
    DispatchRequest* begin_push();
    // Producer: publishes the slot begin_push() returned.
    void end_push();

    // Consumer: when the next hint describes the record at `offset` and that record ends by
    // `limit`, swaps it into *out (strings keep their capacity on both sides) and returns true.
    // Hints for offsets below `offset` (already passed) or of an older generation are dropped.
    bool take(int64_t offset, int64_t limit, DispatchRequest* out);

    // Every hint published so far becomes unusable (CommitLog truncation).
    void invalidate() { generation_.fetch_add(1, std::memory_order_acq_rel); }

    size_t capacity() const { return slots_.size(); }

private:
    struct Slot {
        DispatchRequest req;
        uint64_t generation = 0;
    };

    std::vector<Slot> slots_;
    const uint64_t mask_;
    std::atomic<uint64_t> generation_{0};
    alignas(64) std::atomic<uint64_t> head_{0};  // written by the producer
    alignas(64) std::atomic<uint64_t> tail_{0};  // written by the consumer
};

}  // namespace comet::store
