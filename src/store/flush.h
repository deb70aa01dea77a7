#pragma once
// FlushService: makes CommitLog bytes durable. One thread "FlushCommitLog".
// - ASYNC_FLUSH (Java FlushRealTimeService): every flushIntervalCommitLog ms, flushes when at
//   least flushCommitLogLeastPages pages are dirty, and everything every
//   flushCommitLogThoroughInterval ms.
// - SYNC_FLUSH (Java GroupCommitService): puts register a waiter (end offset, deadline,
//   completion). The thread takes the highest end offset waited for, flushes up to it (one
//   msync per dirty segment) and completes every waiter it covers: many puts, one fsync.
//   Waiters that pass their deadline first are completed with FLUSH_DISK_TIMEOUT by a second
//   thread "FlushTimeoutReaper", so a hung fsync cannot hold a put forever.
// A failed msync marks the store not writable (RunningFlags) and completes every pending
// waiter with FLUSH_DISK_TIMEOUT and a remark; it is never retried and reported as success.
//
// Owner: CommitLog. Threads: wait_for_flush() from the put path (any thread, after the append
// lock is released); the two internal threads. Completions run on the flush or reaper thread
// and must not block (they post to an executor). mu_ guards the waiter list; it is never held
// across msync or a completion call.
// Invariant: each waiter is completed exactly once.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "store/commit_log_running_flags.h"
#include "store/message_store_config.h"
#include "store/put_message_status.h"

namespace comet::store {

class MappedFileQueue;
class StoreCheckpoint;

// Told about every msync round of the CommitLog that made progress (metrics). Called on the
// flushing thread, with no lock held; must be quick and must not call back into the store.
class FlushObserver {
public:
    virtual ~FlushObserver() = default;
    virtual void on_flush(std::chrono::nanoseconds took, int64_t bytes) const = 0;
};

class FlushService {
public:
    // status: kPutOk (flushed), kFlushDiskTimeout (deadline passed or flush failed).
    using FlushCompletion = std::function<void(PutMessageStatus status, const std::string& remark)>;

    // checkpoint may be null. All pointers must outlive the service.
    FlushService(const MessageStoreConfig& config, MappedFileQueue* queue, Clock* clock,
                 RunningFlags* flags, StoreCheckpoint* checkpoint);
    ~FlushService();  // calls shutdown()

    void start();
    // Stops the threads after a final full flush; pending waiters are completed with the
    // outcome of that flush (OK if it covered them, FLUSH_DISK_TIMEOUT otherwise).
    void shutdown();

    // SYNC_FLUSH: calls `done` once bytes up to end_offset are durable or the timeout passes.
    // Completes at once (OK) when they already are.
    void wait_for_flush(PhysicalOffset end_offset, FlushCompletion done);
    // ASYNC_FLUSH: nudges the flush thread (flushCommitLogTimed=false wakes it at once).
    void wakeup();
    // wakeup(), when the log written up to `written_end` has something the woken thread would
    // flush: flushCommitLogLeastPages pages not yet flushed, or a segment filled; otherwise
    // the interval comes soon enough. (Java wakes an untimed flush thread on every put, and it
    // goes back to sleep having flushed nothing: a futex call and two context switches per
    // send at a low rate.)
    void wakeup_for(int64_t written_end);

    // Flushes up to everything written now, on the calling thread (tests, shutdown).
    // Returns false if an msync failed.
    bool flush_all();
    // flush_all() whose device flush is `device_flush`, which must fsync or fdatasync a file
    // on the CommitLog's device (decision 035: DLedger's entries file). When every segment to
    // flush is fully written, they are written back without a device flush, device_flush()
    // then flushes the device for both, and only then are they recorded flushed: one device
    // flush instead of two. Otherwise flush_all(), then device_flush(). A CommitLog failure
    // makes the store read-only as flush_all() does; device_flush()'s error is returned as is
    // (nothing recorded flushed).
    Status flush_all_then(const std::function<Status()>& device_flush);
    // Completes waiters whose deadline has passed (the reaper calls this; tests with a
    // ManualClock call it directly). Returns how many timed out.
    int expire_timeouts();
    // One group-commit round on the calling thread (tests): flush to the highest waited-for
    // offset and complete the covered waiters. Returns how many were completed.
    int group_commit_once();

    int64_t fsync_count() const;  // msync calls that made progress
    int64_t wakeups() const { return wakeups_.load(std::memory_order_relaxed); }  // wakeup() calls
    // Any time, from any thread. The observer must outlive the service or be reset (null)
    // before it goes away.
    void set_observer(const FlushObserver* observer) {
        observer_.store(observer, std::memory_order_release);
    }
    size_t pending_waiters() const;

private:
    struct Waiter {
        int64_t end_offset;
        TimePoint deadline;
        FlushCompletion done;
    };

    std::atomic<int64_t> wakeups_{0};

    void run_sync();
    void run_async();
    void run_reaper();
    // Flushes until flushed_where >= target (or no progress). False on msync failure.
    bool flush_to(int64_t target, int32_t least_pages);
    bool flush_to_locked(int64_t target, int32_t least_pages) REQUIRES(flush_mu_);
    // A flush that made `bytes` durable: the observer and fsync_count().
    void count_flush(std::chrono::steady_clock::time_point started, int64_t bytes);
    // The checkpoint's physicMsgTimestamp once the flush covered what was written at its start.
    void note_checkpoint(int64_t store_timestamp, int64_t max_at_start);
    void complete_covered(int64_t flushed, bool failed);
    void mark_failed(const Status& st);

    const MessageStoreConfig config_;
    MappedFileQueue* const queue_;
    Clock* const clock_;
    RunningFlags* const flags_;
    StoreCheckpoint* const checkpoint_;

    mutable Mutex mu_;
    std::condition_variable_any cv_;         // flush thread: new waiters / wakeup / stop
    std::condition_variable_any reaper_cv_;  // reaper: stop
    std::list<Waiter> waiters_ GUARDED_BY(mu_);
    bool wakeup_ GUARDED_BY(mu_) = false;
    bool stopping_ GUARDED_BY(mu_) = false;
    bool failed_ GUARDED_BY(mu_) = false;
    std::string failure_ GUARDED_BY(mu_);
    int64_t fsyncs_ GUARDED_BY(mu_) = 0;

    Mutex flush_mu_;  // serialises flush_to (flush thread vs. flush_all)
    std::thread thread_;
    std::thread reaper_;
    std::atomic<const FlushObserver*> observer_{nullptr};
};

}  // namespace comet::store
