#pragma once
// CommitLog: the single append-only log of every stored message (Java
// org.apache.rocketmq.store.CommitLog). Records are RocketMQ's stored-message format
// (protocol/message_decoder.h, docs/formats/stored-message.md) in fixed-size segments
// (docs/formats/commitlog.md). A record never spans two segments: when record + 8 bytes do not
// fit, the rest of the segment gets an 8-byte blank filler [int32 remaining][int32 0xCBD43194]
// and the record goes to the next segment.
//
// Put path: the message is encoded outside any lock into a thread-local buffer; then, in one
// short critical section (put_mu_), the queue offset (topicQueueTable) and physical offset are
// assigned, STORETIMESTAMP/QUEUEOFFSET/PHYSICALOFFSET patched and the bytes copied into the
// mapping. After the lock: SYNC_FLUSH puts (WAIT != false) complete when the group fsync that
// covers them finishes (or FLUSH_DISK_TIMEOUT after syncFlushTimeout); others complete at once.
// No thread blocks on the disk; completions run on the put thread or the flush threads.
//
// Owner: the message store. Threads: put_* from any thread; reads from any thread; recovery
// and append_data (HA slave) with puts stopped or from one replication thread.
// Lock order: put_mu_ -> MappedFileQueue::mu_. put_mu_ is never held across fsync or a
// callback. Invariants: max_offset() only grows (except through recovery/truncate); every
// topic-queue's offsets are dense; flushed_offset() <= max_offset().
// Torn tail: after a crash the last record may be partial or corrupt; recovery scans forward
// (magic, sizes, PHYSICALOFFSET == position, CRC when checkCRCOnRecover), cuts at the first bad
// record, zeroes the rest of that segment and deletes later ones, logging offset and reason.

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "protocol/message_ext.h"
#include "store/commit_log_running_flags.h"
#include "store/flush.h"
#include "store/mapped_file.h"
#include "store/mapped_file_queue.h"
#include "store/message_store_config.h"
#include "store/prefault_service.h"
#include "store/put_message_status.h"

namespace comet::store {

class AllocateMappedFileService;
class StoreCheckpoint;

// A SEND_BATCH_MESSAGE put (Java MessageExtBatch): every message of `body` (§5.7) becomes
// one record with consecutive queue offsets in topic/queue_id.
struct MessageBatch {
    std::string topic;
    int32_t queue_id = 0;
    int32_t sys_flag = 0;
    int64_t born_timestamp = 0;
    protocol::HostAddress born_host;
    std::string body;  // §5.7 entries
    // Batch-level properties appended to every record's own (RocketMQ adds CLUSTER and WAIT).
    protocol::MessageProperties properties;
};

// What recovery did (for logs, stats and the store facade).
struct RecoveryResult {
    PhysicalOffset max_offset{0};  // end of the last valid record: ConsumeQueues truncate to it
    PhysicalOffset scan_from{0};   // where the forward scan started
    int64_t records_scanned = 0;
    int64_t bytes_truncated = 0;   // segment space dropped past max_offset (incl. unwritten)
    std::string cut_reason;        // empty when nothing invalid was found
};

class CommitLog {
public:
    using PutCompletion = std::function<void(const PutMessageResult&)>;
    // Called on the put thread after each append (outside the lock) with the new max offset.
    using AppendListener = std::function<void(PhysicalOffset max_offset)>;

    // Opens the log directory and maps existing segments (no recovery yet). clock and flags
    // are borrowed; allocator and checkpoint may be null. Errors: bad config, unreadable or
    // inconsistent segments.
    static Result<std::unique_ptr<CommitLog>> open(const MessageStoreConfig& config, Clock* clock,
                                                   AllocateMappedFileService* allocator,
                                                   StoreCheckpoint* checkpoint,
                                                   RunningFlags* flags);
    ~CommitLog();

    // Recovery; call one of them once, before start(). Normal: after a clean shutdown, scans
    // the last 3 segments. Abnormal: starts at the newest segment whose first message is older
    // than the checkpoint's min timestamp and verifies each record (CRC per checkCRCOnRecover).
    Result<RecoveryResult> recover_normally();
    Result<RecoveryResult> recover_abnormally();

    void start();
    // Stops accepting puts, flushes and completes every pending put.
    void shutdown();

    // msg is only read (STOREHOST is this log's; the offsets and STORETIMESTAMP are assigned).
    void put_message(const protocol::MessageExt& msg, PutCompletion done);
    void put_messages(MessageBatch batch, PutCompletion done);
    // Future-returning forms (tests, tools).
    std::future<PutMessageResult> put_message(protocol::MessageExt msg);
    std::future<PutMessageResult> put_messages(MessageBatch batch);

    // HA slave: appends raw CommitLog bytes received from the master at `start`, which must be
    // max_offset(). Records and fillers must be whole per segment, as the master wrote them.
    Status append_data(PhysicalOffset start, std::string_view data);

    PhysicalOffset min_offset() const;  // first byte still on disk (0 when empty)
    PhysicalOffset max_offset() const { return PhysicalOffset(max_offset_.load()); }
    PhysicalOffset flushed_offset() const { return PhysicalOffset(queue_.flushed_where()); }
    // Bytes from `offset` up to the end of written data in its segment, at most max_bytes;
    // nullopt when no segment holds offset or nothing is written there yet.
    std::optional<MappedView> get_data(PhysicalOffset offset,
                                       int64_t max_bytes = INT64_MAX) const;
    // Exactly [offset, offset + size), or nullopt.
    std::optional<MappedView> get_message(PhysicalOffset offset, int32_t size) const;
    // Decodes the record at offset. Errors: kNotFound (no data), kCorruption.
    Result<protocol::MessageExt> lookup_message(PhysicalOffset offset, bool read_body = true) const;
    // Start of the segment after the one holding offset (Java rollNextFile).
    PhysicalOffset roll_next_file(PhysicalOffset offset) const;
    // Visits records from `from` (a record start) to max_offset(), skipping fillers. fn
    // returns false to stop. Errors: kCorruption at an undecodable record.
    Status for_each_record(PhysicalOffset from,
                           const std::function<bool(PhysicalOffset, std::string_view)>& fn) const;

    // topicQueueTable: next queue offset per "topic-queueId".
    QueueOffset next_queue_offset(std::string_view topic, int32_t queue_id) const;
    void set_topic_queue_table(std::unordered_map<std::string, int64_t> table);
    std::unordered_map<std::string, int64_t> topic_queue_table() const;
    void remove_queue_from_topic_queue_table(std::string_view topic, int32_t queue_id);
    // Rebuilds topicQueueTable by scanning the whole log (tools and tests; the store sets it
    // from its ConsumeQueues instead). Cost grows with the log size.
    Status rebuild_topic_queue_table();

    void set_append_listener(AppendListener listener);

    RunningFlags& running_flags() { return *flags_; }
    FlushService& flush_service() { return *flush_; }
    MappedFileQueue& mapped_file_queue() { return queue_; }
    const MessageStoreConfig& config() const { return config_; }
    const protocol::HostAddress& store_host() const { return store_host_; }

    PrefaultService& prefault_service() { return prefault_; }

    // COMET_CHECKs the invariants (contiguous segments, flushed <= max).
    void check_invariants() const;

    static std::string queue_key(std::string_view topic, int32_t queue_id);

private:
    struct Slice {
        size_t pos;  // in the encoded buffer
        int32_t size;
        int32_t sys_flag;
    };

    CommitLog(const MessageStoreConfig& config, Clock* clock, AllocateMappedFileService* allocator,
              StoreCheckpoint* checkpoint, RunningFlags* flags, protocol::HostAddress store_host);

    // topicQueueTable keyed by "topic-queueId", looked up by string_view (no allocation).
    struct KeyHash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    using QueueTable = std::unordered_map<std::string, int64_t, KeyHash, std::equal_to<>>;

    // Appends pre-encoded records under put_mu_ and finishes the put.
    void append_and_complete(const std::string& encoded, const std::vector<Slice>& slices,
                             std::string_view key, bool wait_store_msg_ok, PutCompletion done);
    PutMessageResult append_locked(const std::string& encoded, const std::vector<Slice>& slices,
                                   std::string_view key) REQUIRES(put_mu_);
    Result<RecoveryResult> recover_from(size_t first_index, bool check_crc);

    const MessageStoreConfig config_;
    Clock* const clock_;
    StoreCheckpoint* const checkpoint_;
    RunningFlags* const flags_;
    const protocol::HostAddress store_host_;
    MappedFileQueue queue_;
    std::unique_ptr<FlushService> flush_;
    PrefaultService prefault_;

    mutable Mutex put_mu_;
    QueueTable topic_queue_table_ GUARDED_BY(put_mu_);
    std::atomic<int64_t> max_offset_{0};
    // Puts are accepted from open() (SYNC_FLUSH puts made before start() complete once the
    // flush thread runs) until shutdown().
    std::atomic<bool> accepting_{true};
    AppendListener listener_;
};

}  // namespace comet::store
