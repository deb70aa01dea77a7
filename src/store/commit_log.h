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
// assigned and STORETIMESTAMP/QUEUEOFFSET/PHYSICALOFFSET patched. Then, by configuration:
// - write buffer (commitLogWriteBufferSize > 0, the default): the bytes are copied into the
//   WriteRing at the reserved offset and the put is queued; the commit thread
//   ("CommitRealTime") writes every reserved range into its segment with pwritev() (one call
//   per segment per round, however many puts it holds), publishes it (max_offset(), the
//   segment's wrote_position) and completes the queued puts in order. No page of the mapping
//   is ever write-faulted. A put that does not fit the ring (a huge batch) waits for the ring
//   to drain and writes itself.
// - through the mapping (0): the bytes are copied into the mapping inside the lock
//   (PrefaultService keeps the pages ahead faulted in); the put completes on its own thread.
// Completion: SYNC_FLUSH puts (WAIT != false) complete when the group fsync that covers them
// finishes (or FLUSH_DISK_TIMEOUT after syncFlushTimeout); others once their bytes are
// published. Either way an acknowledged message is in the page cache (survives kill -9).
// No thread blocks on the disk; completions run on the put, commit or flush threads.
//
// Readers (dispatch, pulls, HA) only ever see published bytes: max_offset() and each segment's
// wrote_position() advance after the bytes are in the file.
//
// Owner: the message store. Threads: put_* from any thread; reads from any thread; recovery
// and append_data (HA slave) with puts stopped or from one replication thread.
// Lock order: put_mu_ -> MappedFileQueue::mu_, put_mu_ -> commit_mu_. Queued puts pass from
// the putting threads (one at a time, under put_mu_) to the commit thread through a
// single-producer single-consumer slot ring (no lock, no allocation per put).
// put_mu_ is never held across fsync or a callback; the commit thread never takes put_mu_.
// Invariants: max_offset() only grows (except through recovery/truncate); max_offset() <=
// reserved_offset() <= max_offset() + ring capacity; every topic-queue's offsets are dense;
// flushed_offset() <= max_offset(); queued puts complete in offset order, each exactly once.
// Torn tail: after a crash the last record may be partial or corrupt; recovery scans forward
// (magic, sizes, PHYSICALOFFSET == position, CRC when checkCRCOnRecover), cuts at the first bad
// record, zeroes the rest of that segment and deletes later ones, logging offset and reason.

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "protocol/message_ext.h"
#include "store/commit_log_running_flags.h"
#include "store/dispatch_hints.h"
#include "store/flush.h"
#include "store/mapped_file.h"
#include "store/mapped_file_queue.h"
#include "store/message_store_config.h"
#include "store/prefault_service.h"
#include "store/put_message_status.h"
#include "store/stored_message_encoder.h"
#include "store/write_ring.h"

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
    int64_t bytes_truncated = 0;  // segment space dropped past max_offset (incl. unwritten)
    std::string cut_reason;       // empty when nothing invalid was found
};

class CommitLog {
public:
    // Room for a store::PutCompletion and MessageStore's statistics around it, inline.
    using PutCompletion = InlineFunction<void(PutMessageResult&&), 512>;
    // Called outside the put lock with the new max offset whenever bytes are published: on the
    // put thread (mapping path, inline commit), the commit thread or the HA thread (append_data).
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

    // msg is only read, and only before this returns (STOREHOST is this log's; the offsets and
    // STORETIMESTAMP are assigned): the record is encoded into the log or the write buffer
    // before any completion runs.
    void put_message(const protocol::MessageExt& msg, PutCompletion done);
    // Same, with the body `body` (msg.body is not read), read likewise only before this
    // returns: a body still in a request's frame is copied once, into the log (issue 16).
    void put_message(const protocol::MessageExt& msg, std::string_view body, PutCompletion done);
    void put_messages(MessageBatch batch, PutCompletion done);
    // Future-returning forms (tests, tools).
    std::future<PutMessageResult> put_message(const protocol::MessageExt& msg);
    std::future<PutMessageResult> put_messages(MessageBatch batch);

    // Put batches (decision 028). Between begin_put_batch() and end_put_batch() on one thread
    // (a server I/O thread around the requests of one socket read), puts to a write-buffered
    // log neither wake the commit thread nor commit inline: end_put_batch() writes the ring
    // and completes them on this thread, one pwritev and no thread hand-off for the batch.
    // When another thread holds the commit round, end_put_batch() waits for it: when it
    // returns, the batch's puts have completed (or wait for SYNC_FLUSH / replication, as any
    // put). Completions run with the batch closed (a put they make takes the ordinary path).
    // Not nestable; no-ops for a log without a write buffer.
    // With defer_notify, the wake-ups the batch's appends owe the dispatch (append listener)
    // and flush threads wait for after_put_batch_written(), which the caller must then call
    // once the batch's replies were handed to the socket: a reply never waits behind a futex
    // call, or behind the woken thread on a busy core.
    static void begin_put_batch(bool defer_notify = false);
    static void end_put_batch();
    static void after_put_batch_written();

    // HA slave: appends raw CommitLog bytes received from the master at `start`, which must be
    // max_offset(). Records and fillers must be whole per segment, as the master wrote them.
    // wake_flush=false: the caller makes the bytes durable itself (a DLedger follower's flush
    // thread syncs them before its ack), so the flush service is not woken for them.
    Status append_data(PhysicalOffset start, std::string_view data, bool wake_flush = true);
    // Cuts the log at `end` (a record boundary at or below max_offset()): bytes past it are
    // zeroed and made durable, later segments deleted, max/reserved/flushed positions set to
    // `end`. Puts queued in the write buffer are written first. Callers stop puts beforehand
    // (DLedger: a deposed leader's unreplicated tail, a follower's divergent tail). The next
    // queue offsets are not touched (MessageStore::reload_queue_offsets()). Errors: `end`
    // beyond the log or below its first segment, I/O.
    Status truncate_to(PhysicalOffset end);

    PhysicalOffset min_offset() const;  // first byte still on disk (0 when empty)
    // End of published bytes (readable, and what recovery would find after kill -9).
    PhysicalOffset max_offset() const { return PhysicalOffset(max_offset_.load()); }
    // End of bytes assigned to puts; ahead of max_offset() while the commit thread catches up.
    PhysicalOffset reserved_offset() const {
        return ring_ ? PhysicalOffset(reserved_pub_.load()) : max_offset();
    }
    // Java DefaultMessageStore#isOSPageCacheBusy, for the write buffer: a put has waited
    // longer than osPageCacheBusyTimeOutMills for space and the commit thread has freed none
    // since. While true every put is refused with OS_PAGE_CACHE_BUSY before it takes the put
    // lock. Always false without a write buffer. One relaxed load when not busy; any thread.
    bool is_os_page_cache_busy() const;
    // How long (ms) puts have been waiting for write-buffer space; 0 when none waits. With
    // lock_time_ms() (the append in the put lock) it makes pageCacheLockTimeMills.
    int64_t ring_wait_millis() const;
    // Test only: the commit thread sleeps `stall` before each round with bytes to write and no
    // other thread writes the write buffer (a disk that slow); 0 ends it. Any thread.
    void set_commit_stall_for_test(std::chrono::milliseconds stall);
    // Commit rounds that wrote something (write buffer only; benchmarks: puts per pwritev).
    int64_t commit_rounds() const { return commit_rounds_.load(std::memory_order_relaxed); }
    // Capacity of the write buffer in bytes (0: puts write through the mapping).
    size_t write_buffer_capacity() const { return ring_ ? ring_->capacity() : 0; }
    // What each single-message put appended, for the dispatcher (write buffer only; null
    // otherwise). See store/dispatch_hints.h.
    DispatchHints* dispatch_hints() const { return hints_.get(); }
    PhysicalOffset flushed_offset() const { return PhysicalOffset(queue_.flushed_where()); }
    // How long the append holding put_mu_ now has held it since it stamped its messages, in ms;
    // 0 when no append is in the lock (Java CommitLog#lockTimeMills, pageCacheLockTimeMills).
    int64_t lock_time_ms() const {
        const int64_t begin = begin_in_lock_ms_.load(std::memory_order_relaxed);
        return begin > 0 ? std::max<int64_t>(0, clock_->wall_millis() - begin) : 0;
    }
    // Bytes from `offset` up to the end of written data in its segment, at most max_bytes;
    // nullopt when no segment holds offset or nothing is written there yet.
    std::optional<MappedView> get_data(PhysicalOffset offset, int64_t max_bytes = INT64_MAX) const;
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

    // A put whose bytes are in the write ring, waiting for the commit thread. One cache line
    // (written by the putting thread, read by the commit thread); the PutMessageResult (with
    // its message ids) is built by the commit thread.
    struct alignas(64) PendingPut {
        int64_t wrote_offset = 0;
        int64_t logics_offset = 0;
        int64_t store_timestamp = 0;
        int32_t wrote_bytes = 0;
        bool wait_store_msg_ok = false;
        bool batch = false;  // record starts in batch_pos_[slot]
        PutCompletion done;
        int64_t end() const { return wrote_offset + wrote_bytes; }  // after its last byte
    };
    static constexpr uint64_t kPendingSlots = 4096;  // power of two

    // Appends pre-encoded records (patching offsets into `encoded`) and finishes the put.
    // One message not yet encoded: the write-buffer path encodes it straight into the ring.
    struct SingleRecord {
        const protocol::MessageExt* msg;
        std::string_view body;  // the record's body (msg->body is not read)
        std::string_view props;
        StoredRecordLayout layout;
        uint32_t body_crc;
        // Whether the append leaves the dispatcher a hint; then the properties dispatch needs
        // (views into `props`) and the tags code.
        bool hinted;
        DispatchProperties scanned;
        int64_t tags_code;
    };

    // Put steps (commit_log_append.cc). The ones every put runs are always inlined (defined in
    // that file, their only user): the put path compiles as the single body it was, without a
    // call per step. Each check returns the failure to complete the put with, or nullopt when
    // the put goes on.
    // SERVICE_NOT_AVAILABLE when puts are not accepted or the store is not writeable.
    [[gnu::always_inline]] inline std::optional<PutMessageResult> refuse_put() const;
    [[gnu::always_inline]] inline std::optional<PutMessageResult> check_properties_and_topic(
        const protocol::MessageExt& msg, std::string_view props) const;
    // Whether a record of `total` bytes exceeds maxMessageSize (plus header room) or a segment.
    [[gnu::always_inline]] inline bool record_too_large(int64_t total) const;
    // One message, write buffer: sized now, encoded in the put lock straight into the ring.
    // `slices` is the caller's per-thread scratch; `done` is moved from or called.
    [[gnu::always_inline]] inline void put_single_to_ring(const protocol::MessageExt& msg,
                                                          std::string_view body,
                                                          std::string_view props,
                                                          std::vector<Slice>& slices,
                                                          PutCompletion& done);
    // One message, mapping path: encoded into the per-thread buffer, then appended.
    [[gnu::always_inline]] inline void put_single_encoded(const protocol::MessageExt& msg,
                                                          std::string_view body,
                                                          std::string_view props,
                                                          std::vector<Slice>& slices,
                                                          PutCompletion& done);
    // A batch's per-thread scratch (entries, properties, slices, the message being encoded).
    struct BatchScratch;
    // MessageBatch limits: no transaction, no delay level, topic length.
    static std::optional<PutMessageResult> check_batch(const MessageBatch& batch);
    // Encodes every entry of scratch.entries into `buf` (scratch.slices: one per record);
    // *wait_ok: every message waits for its store (SYNC_FLUSH).
    std::optional<PutMessageResult> encode_batch(const MessageBatch& batch, BatchScratch& scratch,
                                                 std::string& buf, bool* wait_ok) const;

    // encoded: the records, or null when `single` is to be encoded in place (write buffer only).
    void append_and_complete(std::string* encoded, const SingleRecord* single,
                             const std::vector<Slice>& slices, std::string_view key,
                             bool wait_store_msg_ok, PutCompletion done);
    PutMessageResult append_locked(const std::string& encoded, const std::vector<Slice>& slices,
                                   std::string_view key) REQUIRES(put_mu_);
    // Write-buffer form: reserves, patches, copies into the ring and queues the put (or writes
    // it directly when it cannot fit the ring). Returns nullopt when queued (`done` was moved),
    // or the failure (nothing reserved, `done` untouched).
    std::optional<PutMessageResult> append_to_ring_locked(
        std::string* encoded, const SingleRecord* single, const std::vector<Slice>& slices,
        std::string_view key, bool wait_store_msg_ok, PutCompletion& done) REQUIRES(put_mu_);
    // Where a write-buffer put goes: `gap` bytes of blank filler at `at` (END_OF_FILE; 0: none),
    // then the records, `total` bytes at phys(), stamped store_ts, the first counting record
    // taking first_queue_offset.
    struct RingPlacement {
        int64_t at;
        int64_t gap;
        int64_t total;
        int64_t store_ts;
        int64_t first_queue_offset;
        int64_t phys() const { return at + gap; }
    };
    // The topicQueueTable entry for `key` (created at 0): the next queue offset.
    [[gnu::always_inline]] inline int64_t& queue_offset_slot_locked(std::string_view key)
        REQUIRES(put_mu_);
    // Points write_file_ at the segment holding `at`; *gap: the filler before records of
    // `total` bytes reserved from `at` when they do not fit the rest of that segment (the
    // caller then moves write_file_ to the next segment, at + *gap).
    // Errors: a segment could not be created.
    [[gnu::always_inline]] inline Status select_ring_segment_locked(int64_t at, int64_t total,
                                                                    int64_t* gap) REQUIRES(put_mu_);
    // The records as bytes: *encoded, or `single` encoded into the per-thread buffer (for the
    // paths that cannot encode in place: a record wrapping the ring, a direct write).
    std::string& records_bytes(std::string* encoded, const SingleRecord* single,
                               int64_t total) const;
    // Fits the ring: filler and records into the ring, offsets patched. Returns the next queue
    // offset.
    [[gnu::always_inline]] inline int64_t copy_into_ring_locked(std::string* encoded,
                                                                const SingleRecord* single,
                                                                const std::vector<Slice>& slices,
                                                                const RingPlacement& place)
        REQUIRES(put_mu_);
    // Larger than the ring (a huge batch; the ring is drained): filler and records written
    // straight into the segments. The failure (the store is then read-only), or nullopt with
    // *next_queue_offset set.
    std::optional<PutMessageResult> write_past_ring_locked(
        std::string* encoded, const SingleRecord* single, const std::vector<Slice>& slices,
        const RingPlacement& place, int64_t* next_queue_offset) REQUIRES(put_mu_);
    // Fills the next pending slot for the commit thread (moves `done`) and publishes it.
    [[gnu::always_inline]] inline void queue_pending_put_locked(const RingPlacement& place,
                                                                const std::vector<Slice>& slices,
                                                                bool wait_store_msg_ok,
                                                                PutCompletion& done)
        REQUIRES(put_mu_);
    // Leaves the dispatcher a hint for a single-message put (none when the hint ring is full).
    [[gnu::always_inline]] inline void push_put_hint_locked(const SingleRecord& single,
                                                            const RingPlacement& place,
                                                            int64_t next_queue_offset)
        REQUIRES(put_mu_);
    // Waits (put_mu_ held: puts queue behind) until [.., end) fits the ring and a pending slot
    // is free. kUnavailable when the store stopped being writable, no commit thread runs, or
    // the caller is the commit thread itself (a completion that puts while the ring is full).
    // bounded (puts): kBusy once this put waited osPageCacheBusyTimeOutMills, or at once when
    // an earlier put did and no space was freed since (is_os_page_cache_busy()). Unbounded
    // (replicated bytes, truncation): waits until space or kUnavailable.
    enum class RingSpace { kFree, kUnavailable, kBusy };
    RingSpace wait_for_ring_space(int64_t end, bool bounded) REQUIRES(put_mu_);
    // Writes `bytes` at log offset `at` == max_offset() straight into the segment files (the
    // ring is drained). Records never span segments; `at` may sit at a segment start.
    Status write_direct_locked(int64_t at, std::string_view bytes) REQUIRES(put_mu_);
    // Dispatch hints for replicated bytes (append_data) just written at `start`: decoded here,
    // where they are hot, instead of read back through the mapping by the dispatcher.
    void hint_replicated_locked(int64_t start, std::string_view data) REQUIRES(put_mu_);
    // After an earlier chunk ended inside a record: *pos, where hints resume in the chunk at
    // `start` (clearing that state), or false when no record of this chunk can be found.
    bool resume_replicated_hints_locked(int64_t start, std::string_view data, size_t* pos)
        REQUIRES(put_mu_);
    // The chunk ends inside the record at `at` (`left` bytes of it at `rest`): remembers where
    // the next record starts, or its first bytes when fewer than 8 arrived.
    void note_hint_cut_locked(int64_t at, const uint8_t* rest, size_t left) REQUIRES(put_mu_);
    // After a put's bytes are published: SYNC_FLUSH wait or completion.
    // (r and done may be moved from.)
    void finish_put(PutMessageResult& r, bool wait_store_msg_ok, PutCompletion& done);
    // A PUT_OK result for records at [phys, phys + bytes) (msg_num and ids: fill_msg_ids).
    static PutMessageResult appended(int64_t phys, int32_t bytes, int64_t store_ts,
                                     int64_t first_queue_offset);
    // msg_num = count and the offset message ids of the records starting at
    // wrote_offset + start_of(i), comma-separated (one record: one id).
    void fill_msg_ids(PutMessageResult* r, size_t count,
                      const std::function<int64_t(size_t)>& start_of) const;
    // Patches QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP of every slice of the records at
    // `base` (to be written at log offset phys); returns the next queue offset.
    static int64_t patch_records(uint8_t* base, const std::vector<Slice>& slices, int64_t phys,
                                 int64_t qo, int64_t store_ts);
    void run_committer();
    // One commit round: writes [max_offset, reserved) to the segments, publishes it, completes
    // the queued puts it covers. False when there was nothing to do.
    bool commit_once();
    bool commit_round_locked() REQUIRES(commit_round_mu_);
    // The append listener and the async flush thread learn that the log reached `end`
    // (`advanced`: bytes were written, not only puts completed): now, or at
    // after_put_batch_written() when this thread has a put batch open.
    void notify_appended(int64_t end, bool advanced);
    void run_notify(int64_t end, bool advanced);
    // An idle log: the putting thread commits (and completes) itself. False when it did not.
    bool try_commit_inline();
    // end_put_batch(): commit rounds on this thread until the puts made so far are covered.
    void commit_deferred() EXCLUDES(commit_round_mu_);
    // Writes the next chunk of [max_offset, reserved) from the ring into the segments and
    // publishes it; returns the new max offset. A failed write makes the store read-only.
    int64_t write_ring_locked() REQUIRES(commit_round_mu_);
    // A put waiting for ring space writes a chunk itself (try-lock; false when it did not).
    bool help_commit();
    // Test only: whether a commit stall is set (then only the commit thread writes the ring).
    bool commit_stalled_for_test() const {
        return commit_stall_ms_for_test_.load(std::memory_order_relaxed) > 0;
    }
    // Commit thread, test only: sleeps out the stall before a round with bytes to write (cut
    // short by shutdown or by the stall being lifted).
    void sleep_out_commit_stall_for_test();
    void wake_committer();
    Result<RecoveryResult> recover_from(size_t first_index, bool check_crc);
    // Checks records from files[first_index] on and returns where valid data ends; fills res's
    // scan start, record count and cut reason.
    int64_t scan_valid_records(const std::vector<std::shared_ptr<MappedFile>>& files,
                               size_t first_index, bool check_crc, RecoveryResult* res) const;
    // After recovery: puts reserve from `end` and look the write segment up again.
    void reset_put_positions(int64_t end) EXCLUDES(put_mu_);

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
    // Store timestamp of the append in put_mu_ now, 0 between appends (lock_time_ms()).
    std::atomic<int64_t> begin_in_lock_ms_{0};

    // Write buffer (null when puts write through the mapping).
    std::unique_ptr<WriteRing> ring_;
    std::unique_ptr<DispatchHints> hints_;  // with ring_
    // The last replicated chunk ended inside a record: the CommitLog's end is no record
    // boundary, so hint_replicated_locked waits for a chunk that starts a segment.
    bool hint_lost_ GUARDED_BY(put_mu_) = false;
    // While hint_lost_: where the record after the one an earlier chunk ended inside starts
    // (-1: unknown, wait for a segment start).
    int64_t hint_resume_at_ GUARDED_BY(put_mu_) = -1;
    // The first bytes (< 8) of that record when the chunk ended within its TOTALSIZE/magic.
    std::array<uint8_t, 8> hint_carry_ GUARDED_BY(put_mu_){};
    size_t hint_carry_len_ GUARDED_BY(put_mu_) = 0;
    int64_t hint_carry_at_ GUARDED_BY(put_mu_) = 0;
    DispatchRequest hint_scratch_ GUARDED_BY(put_mu_);  // decode target when the ring is full
    int64_t reserved_ GUARDED_BY(put_mu_) = 0;
    // Segment holding reserved_ (cached: no queue lookup per put); reset by recovery.
    std::shared_ptr<MappedFile> write_file_ GUARDED_BY(put_mu_);
    // Ring bytes / slots seen free by the last check (cached: the common put reads none of the
    // commit thread's cache lines). Only ever behind the truth, so a stale value is safe.
    int64_t ring_room_end_ GUARDED_BY(put_mu_) = 0;
    uint64_t slot_room_end_ GUARDED_BY(put_mu_) = 0;
    std::atomic<int64_t> reserved_pub_{0};  // reserved_, published after the bytes are in
    // Pending slots: slot i % kPendingSlots is written by the putting thread holding put_mu_,
    // then published by slot_head_ (release) before reserved_pub_; the commit thread (holding
    // commit_round_mu_) completes slots in order and frees them by advancing slot_tail_.
    std::unique_ptr<PendingPut[]> slots_;
    // Per slot, batches only: every record's start relative to wrote_offset.
    std::unique_ptr<std::vector<uint32_t>[]> batch_pos_;
    std::atomic<uint64_t> slot_head_{0};
    std::atomic<uint64_t> slot_tail_{0};
    Mutex commit_round_mu_;  // one commit round at a time (thread vs. shutdown drain)
    Mutex commit_mu_;        // commit thread sleep/wake, ring-space waits
    std::condition_variable_any commit_cv_;
    std::condition_variable_any space_cv_;
    bool commit_wake_ GUARDED_BY(commit_mu_) = false;
    bool commit_stop_ GUARDED_BY(commit_mu_) = false;
    // True until the commit thread runs: puts before start() commit inline (as the mapping path
    // completes them at once).
    std::atomic<bool> committer_idle_{true};
    std::atomic<bool> committer_running_{false};
    std::atomic<bool> space_wanted_{false};
    std::atomic<bool> commit_failed_{false};
    std::atomic<int64_t> commit_rounds_{0};
    std::atomic<int64_t> last_round_ns_{0};             // steady clock at the end of the last round
    std::atomic<int64_t> commit_stall_ms_for_test_{0};  // see set_commit_stall_for_test
    // Steady-clock ns (clock_->now()) since which puts wait for ring space; 0: none waits.
    // Set by a waiting put (under put_mu_); cleared when it gets space or when a commit round
    // frees some. Left set by a put refused after osPageCacheBusyTimeOutMills: the busy state.
    std::atomic<int64_t> ring_wait_since_ns_{0};
    std::string commit_failure_ GUARDED_BY(commit_round_mu_);
    std::thread committer_;
    // Puts are accepted from open() (SYNC_FLUSH puts made before start() complete once the
    // flush thread runs) until shutdown().
    std::atomic<bool> accepting_{true};
    AppendListener listener_;
};

}  // namespace comet::store
