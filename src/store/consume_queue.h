#pragma once
// ConsumeQueue: the logical queue of one topic/queueId, 20-byte units (consume_queue_unit.h)
// in <root>/consumequeue/<topic>/<queueId>/<20-digit byte offset> segments of
// mappedFileSizeConsumeQueue bytes. Logical offset n lives at byte n * 20. Mirrors Java
// org.apache.rocketmq.store.ConsumeQueue (4.9.x). Format: docs/formats/consumequeue.md.
//
// Owner: MessageStore (one per topic/queue, in its ConsumeQueueTable).
// Threads: put_message_position_info() and the staging calls only from the dispatch (reput)
// thread (or recovery, with it stopped); readers
// (get_index_buffer, get_unit, min/max) on any thread: they see units once the MappedFile's
// wrote position is published (release/acquire). recover(), truncate_dirty_logic_files() and
// destroy() run with dispatch stopped. Retention (delete_expired_file/correct_min_offset) runs on
// the clean thread; it only deletes leading segments, never the one being written.
// Invariants: units are appended in CommitLog order, so physical offsets ascend within a
// queue (blank pre-fill units excepted); min_offset <= max_offset.
// Torn tail: a unit with size <= 0 ends the data; recover() cuts there, and the store then cuts
// units that point at or beyond the recovered CommitLog end.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "store/consume_queue_unit.h"
#include "store/mapped_file_queue.h"
#include "store/put_message_status.h"

namespace comet::store {

class ConsumeQueue {
public:
    // root_dir: <storePathRootDir>/consumequeue. mapped_file_size must be a multiple of 20.
    ConsumeQueue(std::string topic, int32_t queue_id, const std::string& root_dir,
                 int64_t mapped_file_size, AllocateMappedFileService* allocator = nullptr);

    const std::string& topic() const { return topic_; }
    int32_t queue_id() const { return queue_id_; }
    const std::string& dir() const { return queue_.dir(); }

    // Maps the existing segments. Errors: kCorruption (wrong size or gap), kIoError.
    Status load();
    // Finds the end of valid units in the last three segments and cuts the rest (Java
    // ConsumeQueue#recover). Sets max_physic_offset(). Requires: dispatch stopped.
    Status recover();
    // Cuts every unit whose physical offset is >= phy_offset (the CommitLog was cut there).
    // Requires: dispatch stopped.
    Status truncate_dirty_logic_files(PhysicalOffset phy_offset);

    // Appends a unit at logical offset cq_offset (dispatch thread only). A unit whose
    // CommitLog bytes end at or before max_physic_offset() was already built and is ignored
    // (redispatch after recovery is idempotent). A queue's first segment created at a
    // non-zero offset is pre-filled with blank units up to it.
    // Errors: kResourceExhausted / kIoError when a segment cannot be created;
    // kFailedPrecondition when cq_offset leaves a gap (the unit is not written).
    Status put_message_position_info(const CqUnit& unit, QueueOffset cq_offset);

    // Dispatch passes (ConsumeQueueStore::stage_message_position_info): the unit joins the
    // queue's staged run and is written with the rest of the run by commit_staged(), one
    // pwrite() per run; readers see it only then. Units are always written with pwrite(),
    // never through the mapping, so the queue's pages are never dirty in a page table: no
    // write faults, and a flush need not write-protect them page by page (each a TLB
    // shootdown; ~6 % of the broker's CPU at full send rate, issue 16). Same checks and errors
    // as put_message_position_info(). *registered is set when the queue had nothing staged in
    // the current pass: the caller must then call commit_staged() and end_pass() once.
    Status stage_message_position_info(const CqUnit& unit, QueueOffset cq_offset,
                                       bool* registered);
    // Writes and publishes the staged run. kIoError from pwrite: nothing is published and the
    // run is dropped (dispatch then re-reads those records from the CommitLog).
    Status commit_staged();
    // The pass is over (after commit_staged()); drops a run that could not be written.
    // Between passes nothing is staged. Only the dispatch thread touches the staged run:
    // truncate_dirty_logic_files() may run while a pass is staging (controller mode cuts a
    // rejoining replica's log with its dispatcher running, below everything dispatchable), so
    // it leaves the run alone.
    void end_pass();
    bool in_pass() const { return in_pass_; }  // dispatch thread only

    QueueOffset min_offset_in_queue() const {
        return QueueOffset(min_logic_offset_.load(std::memory_order_acquire) / kCqStoreUnitSize);
    }
    // Number of units = next logical offset to be written (0 for an empty queue).
    QueueOffset max_offset_in_queue() const {
        return QueueOffset(queue_.max_offset() / kCqStoreUnitSize);
    }
    // End (offset + size) of the last unit appended; -1 when none since load.
    PhysicalOffset max_physic_offset() const {
        return PhysicalOffset(max_physic_offset_.load(std::memory_order_acquire));
    }
    // Java ConsumeQueue#getLastOffset: end (offset + size) of the last valid unit of the last
    // segment, read from the file; -1 when that segment holds none (a queue just created or
    // just rolled). Units below min still count (retention keeps the last segment).
    int64_t last_offset() const;
    // Units between min and max (Java getMessageTotalInQueue).
    int64_t message_total_in_queue() const {
        return max_offset_in_queue().value() - min_offset_in_queue().value();
    }

    // The units from `start` to the end of the segment holding it (Java getIndexBuffer); the
    // view keeps the segment mapped. nullopt when start < min or its segment is gone.
    std::optional<MappedView> get_index_buffer(QueueOffset start) const;
    // One unit; nullopt outside [min, max) or when the segment is gone.
    std::optional<CqUnit> get_unit(QueueOffset offset) const;
    // First logical offset of the next segment (Java rollNextFile).
    QueueOffset roll_next_file(QueueOffset offset) const;

    // Retention: deletes leading segments whose last unit points below min_phy_offset, then
    // moves min_offset to the first unit at or beyond it. Returns segments deleted.
    int delete_expired_file(PhysicalOffset min_phy_offset);
    // Sets min_offset to the first (non-blank) unit whose physical offset >= min_phy_offset.
    void correct_min_offset(PhysicalOffset min_phy_offset);

    // Flushes dirty units (least_pages as MappedFile::flush). Errors: kIoError.
    Result<bool> flush(int32_t least_pages) { return queue_.flush(least_pages); }
    int64_t flushed_where() const { return queue_.flushed_where(); }
    // Deletes every segment and the queue's directory (topic deletion).
    void destroy();

    MappedFileQueue& mapped_file_queue() { return queue_; }

private:
    // Logical byte offset of the first unit with phy >= phy_offset in [lo, hi) units.
    int64_t first_unit_at_or_beyond(PhysicalOffset phy_offset) const;

    const std::string topic_;
    const int32_t queue_id_;
    const int64_t mapped_file_size_;
    // Appends one unit to the staged run (starting a run after the checks of a new segment,
    // a gap or a unit built again).
    Status stage_unit(const CqUnit& unit, QueueOffset cq_offset);

    MappedFileQueue queue_;
    std::atomic<int64_t> min_logic_offset_{0};   // bytes
    std::atomic<int64_t> max_physic_offset_{-1};  // end of the last unit's message
    // The staged run (dispatch thread only, like every writer call): units for
    // [staged_from_, staged_from_ + staged_.size()) of staged_file_, not yet written.
    static constexpr size_t kMaxStagedBytes = 64 * 1024;
    std::string staged_;
    std::shared_ptr<MappedFile> staged_file_;
    int64_t staged_from_ = 0;
    int64_t staged_max_phy_ = -1;  // end of the last staged unit's message
    bool in_pass_ = false;         // registered with the current pass
};

}  // namespace comet::store
