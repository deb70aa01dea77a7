#pragma once
// StoreCheckpoint: the `checkpoint` file (Java org.apache.rocketmq.store.StoreCheckpoint).
// One 4 KiB page, big-endian int64 fields (reference §5.9):
//   0 physicMsgTimestamp   store timestamp of the last CommitLog message known flushed
//   8 logicsMsgTimestamp   same for ConsumeQueues
//  16 indexMsgTimestamp    same for index files
//  24 masterFlushedOffset  (controller mode)
//  32 confirmPhyOffset     (controller mode)
// Abnormal recovery starts from the CommitLog segment whose first message is older than
// min(physic, logics) - 3 s, so recovery time follows the unflushed tail.
//
// Owner: the message store. Threads: setters from the flush threads (CommitLog, ConsumeQueue,
// index), flush() from whichever flushed last; fields are atomics and flush() is serialised
// by mu_. A torn write of the 40 bytes cannot happen within one sector; a missing or short
// file reads as all zero (recovery then scans from the first segment kept).

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "base/mutex.h"
#include "base/status.h"

namespace comet::store {

class StoreCheckpoint {
public:
    static constexpr int kFileSize = 4096;

    // Opens or creates the file at `path` and reads the fields.
    static Result<std::unique_ptr<StoreCheckpoint>> open(const std::string& path);
    ~StoreCheckpoint();

    int64_t physic_msg_timestamp() const { return physic_.load(); }
    int64_t logics_msg_timestamp() const { return logics_.load(); }
    int64_t index_msg_timestamp() const { return index_.load(); }
    int64_t master_flushed_offset() const { return master_flushed_.load(); }
    int64_t confirm_phy_offset() const { return confirm_phy_.load(); }
    void set_physic_msg_timestamp(int64_t v) { physic_.store(v); }
    void set_logics_msg_timestamp(int64_t v) { logics_.store(v); }
    void set_index_msg_timestamp(int64_t v) { index_.store(v); }
    void set_master_flushed_offset(int64_t v) { master_flushed_.store(v); }
    void set_confirm_phy_offset(int64_t v) { confirm_phy_.store(v); }

    // Java getMinTimestamp: min(physic, logics) minus 3 s, floored at 0.
    int64_t min_timestamp() const;
    // Java getMinTimestampIndex: min(min_timestamp(), index).
    int64_t min_timestamp_index() const;

    // Writes the page and fdatasyncs it. Errors: kIoError.
    Status flush();

    const std::string& path() const { return path_; }

private:
    StoreCheckpoint(std::string path, int fd);

    const std::string path_;
    const int fd_;
    Mutex mu_;
    std::atomic<int64_t> physic_{0};
    std::atomic<int64_t> logics_{0};
    std::atomic<int64_t> index_{0};
    std::atomic<int64_t> master_flushed_{0};
    std::atomic<int64_t> confirm_phy_{0};
};

}  // namespace comet::store
