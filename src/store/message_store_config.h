#pragma once
// MessageStoreConfig: the store's settings, named and defaulted like RocketMQ's
// org.apache.rocketmq.store.config.MessageStoreConfig (the Java key is in each comment).
// A plain value struct: owned by whoever builds the store, copied into components at open,
// never mutated while the store runs.

#include <cstdint>
#include <string>

namespace comet::store {

enum class FlushDiskType { kAsyncFlush, kSyncFlush };  // ASYNC_FLUSH / SYNC_FLUSH

struct MessageStoreConfig {
    std::string store_path_root_dir;     // storePathRootDir; default $HOME/store
    std::string store_path_commit_log;   // storePathCommitLog; empty: <root>/commitlog
    int64_t mapped_file_size_commit_log = 1024LL * 1024 * 1024;  // mappedFileSizeCommitLog, 1 GiB
    int64_t mapped_file_size_consume_queue = 300000LL * 20;      // mappedFileSizeConsumeQueue
    FlushDiskType flush_disk_type = FlushDiskType::kAsyncFlush;  // flushDiskType
    int32_t flush_interval_commit_log_ms = 500;     // flushIntervalCommitLog
    int32_t flush_commit_log_least_pages = 4;       // flushCommitLogLeastPages
    int32_t flush_commit_log_thorough_interval_ms = 10 * 1000;  // flushCommitLogThoroughInterval
    bool flush_commit_log_timed = true;             // flushCommitLogTimed (sleep, not wait)
    int64_t sync_flush_timeout_ms = 5 * 1000;       // syncFlushTimeout
    int32_t max_message_size = 1024 * 1024 * 4;     // maxMessageSize, 4 MiB
    bool check_crc_on_recover = true;               // checkCRCOnRecover
    int32_t file_reserved_time_hours = 72;          // fileReservedTime
    std::string delete_when = "04";                 // deleteWhen
    int32_t disk_max_used_space_ratio = 75;         // diskMaxUsedSpaceRatio (percent)
    int32_t delete_commit_log_files_interval_ms = 100;  // deleteCommitLogFilesInterval
    int32_t destroy_mapped_file_interval_forcibly_ms = 1000 * 120;  // destroyMapedFileIntervalForcibly
    bool warm_mapped_file_enable = false;           // warmMapedFileEnable
    // Comet only: commitLogZeroFill = auto | true | false. New CommitLog segments are written
    // with zeros before use, so a sync of new bytes commits no file system metadata (decision
    // 035). auto (the broker resolves it into zero_fill_commit_log): on with
    // enableDLegerCommitLog, where every acknowledgement waits for syncs on a majority.
    std::string commit_log_zero_fill = "auto";
    bool zero_fill_commit_log = false;
    // Comet only (no Java key): bytes of the current CommitLog segment kept faulted in ahead of
    // the write position by PrefaultService (and of the next segment by its pre-allocation);
    // 0 disables. A sliding-window warmMapedFile: puts copy into resident pages.
    int64_t commit_log_prefault_ahead_bytes = 16LL * 1024 * 1024;
    // Comet only: commitLogWriteBufferSize. Puts encode into a write buffer of this many bytes
    // and a commit thread writes it into the segment files with pwritev(); a put completes once
    // its bytes are in the page cache (so an acknowledged ASYNC_FLUSH message survives a
    // process crash exactly as when written through the mapping). 0 writes through the mapping
    // (RocketMQ's default path; PrefaultService then keeps pages faulted in). At least 64 KiB;
    // a put larger than the buffer is written directly once the buffer drained. Small on
    // purpose (cache-resident). docs/decisions/018-commitlog-write-buffer.md.
    int64_t commit_log_write_buffer_bytes = 4LL * 1024 * 1024;
    bool auto_message_version_on_topic_len = true;  // autoMessageVersionOnTopicLen
    bool enabled_append_prop_crc = false;           // enabledAppendPropCRC (not implemented: ignored)
    bool duplication_enable = false;                // duplicationEnable (keep physical offsets)
    // osPageCacheBusyTimeOutMills. Java: the put lock held longer than this marks the page
    // cache busy. Here: a put waiting this long for write-buffer space is refused with
    // OS_PAGE_CACHE_BUSY, and so is every put after it until the commit thread frees space.
    int32_t os_page_cache_busy_timeout_ms = 1000;
    // Test only (testOnlyCommitStallMillis, no Java key): the commit thread sleeps this long
    // before each round that has bytes to write, and no other thread writes the write buffer,
    // as if the disk took that long per write. 0 (the default) in production.
    int64_t commit_stall_ms_for_test = 0;
    // --- ConsumeQueue, index, dispatch, get path, retention (storequeue) ---
    int32_t max_hash_slot_num = 5000000;            // maxHashSlotNum
    int32_t max_index_num = 5000000 * 4;            // maxIndexNum
    bool message_index_enable = true;               // messageIndexEnable
    int32_t flush_interval_consume_queue_ms = 1000; // flushIntervalConsumeQueue
    int32_t flush_consume_queue_least_pages = 2;    // flushConsumeQueueLeastPages
    int32_t clean_resource_interval_ms = 10000;     // cleanResourceInterval
    // messageDelayLevel: delivery time of SCHEDULE_TOPIC_XXXX units (tagsCode).
    std::string message_delay_level = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h";
    int32_t max_transfer_bytes_on_message_in_memory = 1024 * 256;  // maxTransferBytesOnMessageInMemory
    int32_t max_transfer_count_on_message_in_memory = 32;          // maxTransferCountOnMessageInMemory
    int32_t max_transfer_bytes_on_message_in_disk = 1024 * 64;     // maxTransferBytesOnMessageInDisk
    int32_t max_transfer_count_on_message_in_disk = 8;             // maxTransferCountOnMessageInDisk
    int32_t access_message_in_memory_max_ratio = 40;               // accessMessageInMemoryMaxRatio (%)
    bool offset_check_in_slave = false;             // offsetCheckInSlave
    bool slave_role = false;  // brokerRole == SLAVE: puts refused, offsets not corrected

    // Broker address stamped into STOREHOSTADDRESS (brokerIP1 : listenPort on the broker side).
    std::string store_host = "127.0.0.1:10911";

    // <root>/commitlog unless store_path_commit_log is set.
    std::string commit_log_dir() const;
    // <root>/checkpoint
    std::string checkpoint_path() const;
    // <root>/abort
    std::string abort_file_path() const;
    // <root>/consumequeue
    std::string consume_queue_dir() const;
};

// $HOME/store (./store when HOME is unset): RocketMQ's default storePathRootDir.
std::string default_store_path_root_dir();

}  // namespace comet::store
