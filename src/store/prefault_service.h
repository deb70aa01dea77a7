#pragma once
// PrefaultService: keeps a window of the CommitLog's current segment ahead of the write
// position faulted in writable, on its own thread ("PrefaultMapped"), so the put critical
// section copies into resident pages instead of taking a page fault (with the file system's
// block zeroing) every 4 KiB while holding the put lock. A sliding-window form of RocketMQ's
// warmMappedFile: only `ahead` bytes are touched, so at most that much zero-filled page cache
// is dirtied ahead of real data.
//
// Owner: CommitLog. Threads: wants()/request() from put threads (outside the put lock; a relaxed
// atomic compare on the fast path, a mutex + notify once per ahead/4 bytes); the worker.
// Lock: mu_ guards the request; never held while faulting pages in.
// Invariant: the worker only faults pages in (MappedFile::prefault), never writes a byte, so
// it can race with the writer harmlessly.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <thread>

#include "base/mutex.h"
#include "store/mapped_file.h"

namespace comet::store {

class PrefaultService {
public:
    // ahead: window size in bytes (0 disables the service: on_written() does nothing).
    explicit PrefaultService(int64_t ahead);
    ~PrefaultService();  // calls shutdown()

    void start();
    void shutdown();

    // Fast check after an append ending at global offset `end`: whether request() is due.
    bool wants(int64_t end) const {
        return ahead_ > 0 && end >= next_signal_.load(std::memory_order_relaxed);
    }
    // The writer appended to `file` up to `wrote` (position in the file): fault in the window
    // after it.
    void request(const std::shared_ptr<MappedFile>& file, int32_t wrote);

    // Bytes faulted in by the worker so far (stats, tests).
    int64_t prefaulted_bytes() const { return prefaulted_.load(std::memory_order_relaxed); }
    // False once the kernel refused MADV_POPULATE_WRITE (the service then stays idle).
    bool supported() const { return supported_.load(std::memory_order_relaxed); }

private:
    void run();

    const int64_t ahead_;
    // Global offset from which the next on_written() signals the worker.
    std::atomic<int64_t> next_signal_{0};
    std::atomic<int64_t> prefaulted_{0};
    std::atomic<bool> supported_{true};

    Mutex mu_;
    std::condition_variable_any cv_;
    std::shared_ptr<MappedFile> file_ GUARDED_BY(mu_);
    int64_t target_ GUARDED_BY(mu_) = 0;  // fault in up to here (position in file_)
    int64_t done_ GUARDED_BY(mu_) = 0;    // faulted in up to here
    bool stopping_ GUARDED_BY(mu_) = false;
    std::thread thread_;
};

}  // namespace comet::store
