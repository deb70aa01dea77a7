#pragma once
// CleanService: retention (Java CleanCommitLogService + CleanConsumeQueueService) and the
// disk-full guard.
// - CommitLog segments older than fileReservedTime hours are deleted when the hour is in
//   deleteWhen ("04", or "04;16"), or at once when the disk holding the CommitLog is above
//   diskMaxUsedSpaceRatio (%), or after execute_delete_files_manually(). Above
//   diskSpaceCleanForciblyRatio deletion ignores age (clean immediately); above
//   diskSpaceWarningLevelRatio the store is marked DISK_FULL (RunningFlags): puts are refused
//   with SERVICE_NOT_AVAILABLE and an ERROR line is logged; reads keep working. Below it the
//   flag is cleared again.
// - After the CommitLog's min offset moves, ConsumeQueue segments and index files entirely
//   below it are deleted and queue min offsets corrected.
// The active (last) segment is never deleted, so nothing being written is touched.
//
// Owner: MessageStore. Threads: run_once() from the store's scheduler thread (or a test); the
// hooks are called on that thread. Disk usage comes from an injectable DiskUsageProbe so
// tests can simulate a full disk.

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "base/clock.h"
#include "store/commit_log_running_flags.h"
#include "store/message_store_config.h"
#include "store/put_message_status.h"

namespace comet::store {

class ConsumeQueueStore;
class IndexService;

// Fraction (0..1) of the file system holding `path` that is used; negative when unknown.
class DiskUsageProbe {
public:
    virtual ~DiskUsageProbe() = default;
    virtual double used_ratio(const std::string& path) const = 0;
};

// statvfs: (total - free) / total, like Java's File#getTotalSpace/getFreeSpace.
class StatvfsDiskUsageProbe final : public DiskUsageProbe {
public:
    double used_ratio(const std::string& path) const override;
    static StatvfsDiskUsageProbe& instance();
};

// Java UtilAll.isItTimeToDo: is `hour` (0..23) one of the ';'-separated hours in `when`?
bool is_it_time_to_do(std::string_view when, int hour);

class CleanService {
public:
    struct Hooks {
        // Deletes CommitLog segments (never the last) older than expired_ms by mtime, or all
        // but the last when clean_immediately; at most max_files. Returns how many.
        std::function<int(int64_t expired_ms, bool clean_immediately, int max_files)>
            delete_commit_log_files;
        std::function<PhysicalOffset()> commit_log_min_offset;
    };

    CleanService(const MessageStoreConfig& config, const Clock& clock, RunningFlags& flags,
                 const DiskUsageProbe& probe, Hooks hooks, ConsumeQueueStore& cqs,
                 IndexService& index);

    // One round: CommitLog retention, then ConsumeQueue/index retention.
    void run_once();
    // Deletes expired files on the next rounds regardless of deleteWhen (Java: 20 rounds).
    void execute_delete_files_manually() { manual_delete_rounds_.store(20); }

    bool is_disk_full() const { return (flags_.flag_bits() & RunningFlags::kDiskFull) != 0; }
    double last_commit_log_disk_ratio() const { return last_ratio_.load(); }
    int64_t commit_log_files_deleted() const { return cl_deleted_.load(); }

    static constexpr double kDiskSpaceWarningLevelRatio = 0.90;   // Java default
    static constexpr double kDiskSpaceCleanForciblyRatio = 0.85;  // Java default
    static constexpr int kMaxBatchDeleteFiles = 10;

private:
    // Updates DISK_FULL and returns whether space should be reclaimed; sets clean_immediately_.
    bool is_space_to_delete();
    void delete_expired_commit_log();
    void delete_expired_consume_queues();

    const MessageStoreConfig config_;
    const Clock& clock_;
    RunningFlags& flags_;
    const DiskUsageProbe& probe_;
    const Hooks hooks_;
    ConsumeQueueStore& cqs_;
    IndexService& index_;
    std::atomic<int> manual_delete_rounds_{0};
    bool clean_immediately_ = false;
    int64_t last_physical_min_offset_ = 0;
    std::atomic<double> last_ratio_{0};
    std::atomic<int64_t> cl_deleted_{0};
};

}  // namespace comet::store
