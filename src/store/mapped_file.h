#pragma once
// MappedFile: one fixed-size segment of a log (CommitLog or ConsumeQueue), memory-mapped
// read/write. Named by its start offset as 20 zero-padded decimal digits (RocketMQ's
// UtilAll.offset2FileName). Mirrors Java org.apache.rocketmq.store.logfile.DefaultMappedFile.
//
// Ownership: always held by std::shared_ptr. MappedFileQueue keeps one reference; readers keep
// more through MappedView, so a file deleted by retention stays mapped until the last reader is
// done (the name is unlinked at once, the mapping is released by the destructor).
//
// Threads: one writer at a time (the owner's append critical section) writes bytes through
// data() and then publishes them with set_wrote_position() (release). Readers on any thread
// read up to wrote_position() (acquire). flush() is called by one flush thread at a time.
// Invariant: 0 <= flushed_position() <= wrote_position() <= file_size().
//
// The file is fallocate'd to its full size before mapping, so a full disk fails open() with an
// error instead of raising SIGBUS later through the mapping. With `zero_fill` it is also written
// with zeros before it is published (decision 035): fallocate leaves unwritten extents, and the
// first sync of every page written into one converts the extent, a metadata change that costs
// a journal commit (two device flushes) on top of the data's own. Writes into a fully written
// file change no metadata, so write_back() and one later device flush make them durable.
//
// A new file's directory entry is made durable (fsync of the directory) by its first flush()
// that writes data, before that data, not at creation: creating a file costs no journal commit
// on the creating thread (the dispatch thread creating a ConsumeQueue, a put rolling over), and
// no flushed byte can be in a file whose name could vanish in a crash.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace comet::store {

class MappedFile;

// A read-only window into a MappedFile. Holding it keeps the mapping alive, so the network
// layer can send the bytes straight from the page cache.
struct MappedView {
    std::shared_ptr<const MappedFile> file;
    const uint8_t* data = nullptr;
    size_t size = 0;
    int64_t start_offset = 0;  // global (log) offset of data[0]

    std::string_view bytes() const { return {reinterpret_cast<const char*>(data), size}; }
    bool empty() const { return size == 0; }
};

class MappedFile : public std::enable_shared_from_this<MappedFile> {
public:
    // Opens (creating when missing) `dir/<20-digit file_from_offset>` of exactly file_size
    // bytes. An existing file of another size is an error (kCorruption). A new file is
    // allocated on disk; its name is made durable by its first flush().
    static Result<std::shared_ptr<MappedFile>> open(const std::string& dir,
                                                    int64_t file_from_offset, int64_t file_size,
                                                    bool zero_fill = false);
    // Opens the file at `path` whose name must be a 20-digit offset. `zero_fill`: a new file is
    // written with zeros and synced before its name appears; an existing file is asked
    // (FIEMAP) whether every block is written. Either way fully_written() tells the result.
    static Result<std::shared_ptr<MappedFile>> open_path(const std::string& path,
                                                         int64_t file_size,
                                                         bool zero_fill = false);

    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const std::string& file_name() const { return path_; }
    int64_t file_from_offset() const { return file_from_offset_; }
    int64_t file_size() const { return file_size_; }

    int32_t wrote_position() const { return wrote_position_.load(std::memory_order_acquire); }
    int32_t flushed_position() const { return flushed_position_.load(std::memory_order_acquire); }
    bool is_full() const { return wrote_position() >= file_size_; }
    int64_t last_modified_millis() const;  // mtime of the file (retention by time)
    // Last store timestamp written into this file (set by the owner; 0 if unknown).
    int64_t store_timestamp() const { return store_timestamp_.load(std::memory_order_relaxed); }
    void set_store_timestamp(int64_t ms) { store_timestamp_.store(ms, std::memory_order_relaxed); }

    // Writable base of the mapping. Requires: the caller is the single writer and writes only
    // at or beyond wrote_position().
    uint8_t* data() { return base_; }
    const uint8_t* data() const { return base_; }

    // Publishes bytes written through data() up to `pos`. Requires: single writer.
    void set_wrote_position(int32_t pos);
    // Copies `bytes` at wrote_position() and publishes them. Returns false (writing nothing)
    // when they do not fit.
    bool append(std::string_view bytes);
    // Writes `bytes` at wrote_position() with pwrite() (never through the mapping) and
    // publishes them: the pages are never dirtied through a page table, so no write fault, and
    // a later flush need not write-protect them (one TLB shootdown per page otherwise); nor
    // does a first write into a page of a new (fallocate'd, unwritten) file take a journal
    // handle, as a write fault there does. For small records (ConsumeQueue units).
    // Returns false (writing nothing) when they do not fit; kIoError when pwrite fails
    // (nothing published). Same single-writer contract as append().
    Result<bool> append_written(std::string_view bytes);
    // Writes head then tail (at most two spans: a wrapped ring buffer) at wrote_position() with
    // one pwritev() and publishes them. The bytes reach the page cache without touching the
    // mapping: no write fault and no zero-filling of fresh pages (a copy over the new page
    // cache page instead), which is what makes the CommitLog's write-buffer path cheaper than
    // storing through the mapping. Same single-writer contract as append(). Errors:
    // kInvalidArgument when they do not fit, kIoError/kResourceExhausted from pwritev; nothing
    // is published on error.
    Status write_at_end(std::string_view head, std::string_view tail = {});
    // Recovery / truncation only: sets wrote and flushed positions (no writer running).
    void set_positions(int32_t pos);

    // Flushes the dirty range [flushed_position, wrote_position) to disk (msync). With
    // least_pages > 0, flushes only if at least that many 4 KiB pages are dirty (or the file
    // is full). Returns the new flushed position, or kIoError (the caller makes the store
    // read-only: a failed flush is never retried and reported as success).
    Result<int32_t> flush(int32_t least_pages);

    // Every block of the file is allocated and written on disk (no hole, no unwritten extent),
    // as known at open (zero_fill) and not undone by zero_tail() since.
    bool fully_written() const { return fully_written_.load(std::memory_order_acquire); }
    // The first half of a flush without the device flush: writes [flushed page, wrote_position)
    // to the device and waits for it (sync_file_range), after making a new file's name durable.
    // Returns the position written back. Requires fully_written() (no metadata to commit): the
    // bytes are durable once any fsync/fdatasync on the same device that starts after this
    // returns has returned (ext4 and XFS flush the device cache on every fsync); the caller
    // then records it with mark_flushed(). Errors as flush().
    Result<int32_t> write_back();
    // Records [0, pos) durable (after write_back() and a device flush). Never moves backwards.
    void mark_flushed(int32_t pos);

    // View of [pos, pos + size) within this file; nullopt unless it lies within the written
    // bytes. Requires: the MappedFile is owned by a shared_ptr.
    std::optional<MappedView> select(int32_t pos, int32_t size) const;
    // View of [pos, wrote_position).
    std::optional<MappedView> select(int32_t pos) const;

    // Zeroes [wrote_position, file_size) on disk (hole punch and re-allocate, or memset when the
    // file system cannot punch holes) and makes it durable. Truncation only; no writer running.
    Status zero_tail();

    // Unlinks the file from the directory; the mapping lives until the last reference drops.
    Status destroy();
    bool destroyed() const { return destroyed_.load(); }

    // Touches every page so the first writes do not fault (warmMapedFileEnable).
    void warm();
    // Faults [from, from + len) in writable (madvise MADV_POPULATE_WRITE) without changing a
    // byte, so it is safe while the writer appends. Returns false when the kernel cannot
    // (before Linux 5.14); the writer then takes the faults itself.
    bool prefault(int64_t from, int64_t len);

private:
    MappedFile(std::string path, int64_t from, int64_t size, int fd, uint8_t* base);
    Status sync_name_if_pending();

    const std::string path_;
    const int64_t file_from_offset_;
    const int64_t file_size_;
    int fd_;
    uint8_t* base_;
    std::atomic<int32_t> wrote_position_{0};
    std::atomic<int32_t> flushed_position_{0};
    std::atomic<int64_t> store_timestamp_{0};
    std::atomic<bool> destroyed_{false};
    std::atomic<bool> dir_sync_pending_{false};  // created; name not yet made durable
    std::atomic<bool> fully_written_{false};
};

// 20-digit zero-padded decimal (UtilAll.offset2FileName).
std::string offset_to_file_name(int64_t offset);
// Parses a 20-digit file name; nullopt if it is not one.
std::optional<int64_t> file_name_to_offset(std::string_view name);

inline constexpr int32_t kOsPageSize = 4096;

// Test-only fault injection: while set, MappedFile::flush() fails with EIO without syncing.
void set_flush_fault_for_test(bool fail);
// Test-only fault injection: while set, MappedFile::write_at_end() fails with EIO.
void set_write_fault_for_test(bool fail);

}  // namespace comet::store
