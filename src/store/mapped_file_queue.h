#pragma once
// MappedFileQueue: the ordered segments of one log in one directory (the CommitLog, or one
// ConsumeQueue). Segment i starts at global offset i * file_size (relative to the first one);
// names are 20-digit start offsets. Mirrors Java org.apache.rocketmq.store.MappedFileQueue.
//
// Owner: CommitLog or ConsumeQueue. Threads: the writer (under its owner's append lock) calls
// get_last_mapped_file(.., create); the flush thread calls flush(); readers on any thread call
// find_mapped_file_by_offset(); retention calls delete_expired_*. mu_ guards the segment list
// and is held only to copy or edit that list (never across file creation, msync or unlink).
// Invariants: segments are contiguous and ascending: files_[i+1].from == files_[i].from +
// file_size; flushed_where_ <= the write end of the queue.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "store/mapped_file.h"

namespace comet::store {

class AllocateMappedFileService;

class MappedFileQueue {
public:
    // allocator may be null (files are then created inline on the put path).
    MappedFileQueue(std::string dir, int64_t mapped_file_size,
                    AllocateMappedFileService* allocator);

    // Maps every 20-digit file in the directory (creating the directory if missing). Every
    // loaded file starts with wrote = flushed = file size; recovery then truncates.
    // Errors: a file of the wrong size, or a gap between consecutive files (kCorruption).
    Status load();

    const std::string& dir() const { return dir_; }
    int64_t mapped_file_size() const { return mapped_file_size_; }
    // Bytes at the head of each segment the allocator pre-creates in the background to fault
    // in writable before handing it over (0: none). Set before the first put.
    void set_prefault_on_preallocate(int64_t bytes) { prefault_on_preallocate_ = bytes; }
    // New segments are zero-filled on disk and loaded ones checked (MappedFile::open_path's
    // zero_fill; decision 035): with an allocator, those its worker pre-creates; without one,
    // every segment (inline). Set before load().
    void set_zero_fill(bool on) { zero_fill_ = on; }

    // The last segment; when it is full or absent and `create` is set, creates the next one,
    // starting at `start_offset` rounded down to a segment boundary if the queue is empty.
    // Errors: file creation failed (disk full, I/O) — the caller reports
    // CREATE_MAPPED_FILE_FAILED.
    Result<std::shared_ptr<MappedFile>> get_last_mapped_file(int64_t start_offset, bool create);
    // The segment that holds log offset `offset` for a writer that tracks its own position
    // (the CommitLog's write buffer: the last segment's wrote_position lags behind). Creates
    // the next segment when `offset` is the end of the last one (or the first when the queue is
    // empty, rounded down to a segment boundary). Errors: creation failed, or `offset` lies
    // before the last segment or past the end of the last one (kInvalidArgument).
    Result<std::shared_ptr<MappedFile>> get_mapped_file_for_write(int64_t offset);
    // The last segment or null.
    std::shared_ptr<MappedFile> last_mapped_file() const;
    std::shared_ptr<MappedFile> first_mapped_file() const;
    // The segment containing `offset`; with return_first_on_not_found, the first segment when
    // the offset is below the first one (already deleted). Null otherwise.
    std::shared_ptr<MappedFile> find_mapped_file_by_offset(
        int64_t offset, bool return_first_on_not_found = false) const;
    std::vector<std::shared_ptr<MappedFile>> files() const;  // snapshot, ascending
    size_t file_count() const;

    int64_t min_offset() const;  // start of the first segment, -1 if empty
    int64_t max_offset() const;  // first byte not yet written (from + wrote of the last segment)
    int64_t flushed_where() const { return flushed_where_.load(std::memory_order_acquire); }
    void set_flushed_where(int64_t v) { flushed_where_.store(v, std::memory_order_release); }
    // Bytes written but not yet flushed.
    int64_t how_much_fall_behind() const { return max_offset() - flushed_where(); }

    // Flushes from flushed_where() in the segment that holds it (Java MappedFileQueue#flush).
    // Returns true when something new became durable. Errors from msync are returned as is
    // (the caller turns the store read-only).
    Result<bool> flush(int32_t least_pages);

    // The first half of a flush whose device flush the caller does (decision 035): writes back
    // every segment from flushed_where() to the end (MappedFile::write_back) and returns the
    // end written back, or nullopt (nothing written) when one of those segments is not
    // fully_written() (the caller then uses flush()). Errors as flush().
    Result<std::optional<int64_t>> write_back();
    // After write_back() returned `where` and a device flush: records [.., where) flushed in
    // the segments and in flushed_where().
    void mark_flushed(int64_t where);

    // Cuts everything at and beyond `offset`: the segment holding it is truncated to
    // offset - from and its bytes past that are zeroed (so stale records can never reappear
    // behind new ones), later segments are destroyed (Java truncateDirtyFiles). Requires: no
    // writer running (recovery, or a role change with puts stopped).
    Status truncate_dirty_files(int64_t offset);

    // Deletes leading segments whose mtime is older than expired_ms before now_ms (retention),
    // never the last (active) one, at most max_files per call (0 = no limit). clean_immediately
    // deletes regardless of age (disk nearly full). A segment ending above `keep_from` is kept
    // (and so is every one after it). Returns how many were deleted.
    int delete_expired_file_by_time(int64_t expired_ms, int64_t now_ms, bool clean_immediately,
                                    int max_files, int64_t keep_from = INT64_MAX);
    // ConsumeQueue retention: deletes leading segments whose last `unit_size` unit holds a
    // physical offset (first 8 bytes, big-endian) below `offset`. Never the last segment.
    int delete_expired_file_by_offset(int64_t offset, int32_t unit_size);
    // Deletes the leading segments for which `pred` returns true, stopping at the first false.
    // Never deletes the last segment.
    int delete_leading_files_while(const std::function<bool(const MappedFile&)>& pred,
                                   int max_files);

    // Destroys every segment and forgets them (a queue removed by an admin, or a test).
    void destroy();

    // Debug invariant check (contiguous segments); COMET_CHECK on violation.
    void check_invariants() const;

private:
    // Creates (through the allocator when there is one) and appends the segment starting at
    // create_offset, unless another thread appended it meanwhile.
    Result<std::shared_ptr<MappedFile>> create_segment(int64_t create_offset);

    const std::string dir_;
    const int64_t mapped_file_size_;
    AllocateMappedFileService* const allocator_;
    int64_t prefault_on_preallocate_ = 0;
    bool zero_fill_ = false;
    mutable Mutex mu_;
    std::vector<std::shared_ptr<MappedFile>> files_ GUARDED_BY(mu_);
    std::atomic<int64_t> flushed_where_{0};
};

}  // namespace comet::store
