#pragma once
// MessageStore: the store facade the broker talks to (Java DefaultMessageStore). It owns the
// CommitLog, the ConsumeQueues, the IndexService, the dispatch thread, retention, stats and the
// `abort` marker, and runs recovery at open().
//
// Recovery (open): `abort` present => the last run did not shut down cleanly.
//   1. CommitLog recovery (normal: last segments; abnormal: from the checkpoint, CRC-checked,
//      torn tail cut) gives the CommitLog end E.
//   2. ConsumeQueues are recovered (torn units cut) and every unit pointing at or beyond E is
//      cut. After an abnormal exit, index files that may hold unflushed entries are dropped.
//   3. Dispatch restarts from the last ConsumeQueue position (normal) or from where the
//      CommitLog scan started (abnormal: the checkpoint's logics timestamp, so only the
//      unflushed tail is re-read) and runs synchronously up to E; redispatch is idempotent.
//   4. The CommitLog's next queue offsets are set from the ConsumeQueue max offsets; `abort` is
//      created. shutdown() flushes everything, writes the checkpoint and removes `abort`.
//
// Threads: put_*/get_* and lookups from any thread. Internal threads: the CommitLog's flush
// threads, "ReputMessage" (dispatch), "StoreScheduler" (ConsumeQueue/index flush every
// flushIntervalConsumeQueue, retention every cleanResourceInterval, stats sampling, waiter
// expiry). Lock order: no facade lock is held while calling into CommitLog, ConsumeQueueStore
// or IndexService; each of those has its own short lock.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "protocol/message_ext.h"
#include "store/clean_service.h"
#include "store/commit_log.h"
#include "store/consume_queue_store.h"
#include "store/get_message_result.h"
#include "store/index_file_service.h"
#include "store/message_store_config.h"
#include "store/put_message_status.h"
#include "store/reput.h"
#include "store/reput_arrival.h"
#include "store/store_stats.h"

namespace comet::store {

class AllocateMappedFileService;
class StoreCheckpoint;

// SEARCH_OFFSET_BY_TIMESTAMP boundary (Java BoundaryType).
// SEARCH_OFFSET_BY_TIMESTAMP rules. kLower / kUpper: RocketMQ 5's boundaryType. kNearest:
// RocketMQ 4.9.8 (requests without boundaryType), ConsumeQueue#getOffsetInQueueByTime.
enum class BoundaryType { kLower, kUpper, kNearest };

struct MessageStoreOptions {
    // Disk usage source for retention/disk-full; null = statvfs. Must outlive the store.
    const DiskUsageProbe* disk_probe = nullptr;
    // Run retention/flush/stats on the scheduler thread (tests turn it off and call
    // run_scheduled_tasks_once() by hand).
    bool start_scheduler = true;
    // Physical memory the accessMessageInMemoryMaxRatio rules are taken of; 0 = the machine's
    // (sysconf). Tests set a small figure to reach the "in disk" side without GiBs of data.
    int64_t physical_memory_bytes = 0;
    // Dispatch limit in force from the start, recovery's redispatch included (DLedger: the
    // committed offset read from its own files before the store opens). Empty: the write end.
    std::function<PhysicalOffset()> dispatch_limit;
    // The owner of dispatch_limit calls wake_dispatch() after every raise of the limit, and
    // appended bytes are never dispatchable before that (DLedger: only a commit makes them
    // so): appends do not wake the dispatcher, so an append costs it no wake-up.
    bool only_limit_raises_wake_dispatch = false;
    // How long the dispatcher sleeps after a pass that found nothing, unless woken. RocketMQ's
    // ReputMessageService polls every 1 ms; here every raise of the dispatchable end wakes it
    // (appends through the append listener, the owners of dispatch_limit by wake_dispatch()),
    // so the wait is only a safety net, and an idle broker is not woken 1,000 times a second.
    std::chrono::milliseconds dispatch_idle_wait{100};
    // While appends keep coming and no one waits for what dispatch produces (no held pull, no
    // arrival waiter), the dispatcher passes at most once per this interval instead of being
    // woken by every read batch's appends; the first append after a quiet spell, and any
    // append while someone waits, still wake it at once. Java's dispatcher polls every 1 ms.
    // 0: every append wakes it.
    std::chrono::microseconds dispatch_busy_interval{1000};
    // Called once during recovery with the recovered CommitLog end E; returns the offset the
    // log must be cut to (<= E; DLedger: the end of its last entry, so bytes a crashed leader
    // wrote but never proposed are gone). Empty: keep E. An error fails open().
    std::function<Result<PhysicalOffset>(PhysicalOffset recovered_end)> recovery_keep_end;
    // Retention keeps every CommitLog segment that ends above this offset (DLedger: what a
    // follower still needs, decision 040), except when the disk must be freed at once
    // (diskSpaceCleanForciblyRatio). Called on the scheduler thread. Empty: no floor.
    std::function<PhysicalOffset()> retention_floor;
};

class MessageStore {
public:
    using PutCompletion = store::PutCompletion;

    // Loads and recovers the store under config.store_path_root_dir. The clock must outlive
    // the store. Errors: unreadable/inconsistent files, a root that cannot be created.
    static Result<std::unique_ptr<MessageStore>> open(const MessageStoreConfig& config,
                                                      Clock& clock,
                                                      MessageStoreOptions options = {});
    ~MessageStore();  // shutdown() if still running
    MessageStore(const MessageStore&) = delete;
    MessageStore& operator=(const MessageStore&) = delete;

    void start();
    // Stops puts, lets dispatch catch up, flushes CommitLog/ConsumeQueues/index, writes the
    // checkpoint and removes `abort`. Idempotent.
    void shutdown();
    // Test helper for crash simulation: stops every thread without flushing or removing
    // `abort`, as if the process had been killed.
    void halt_for_test();

    // --- put path (completions may run on the caller's or a flush thread) ---
    // msg is only read, and only before put_message returns (CommitLog::put_message): the
    // caller may reuse it at once; a completion must not refer to it.
    void put_message(const protocol::MessageExt& msg, PutCompletion done);
    // Same, with the body `body` (msg.body is not read), likewise read only before this
    // returns (issue 16: a send's body is copied from its frame straight into the log).
    void put_message(const protocol::MessageExt& msg, std::string_view body, PutCompletion done);
    void put_messages(MessageBatch batch, PutCompletion done);
    std::future<PutMessageResult> put_message(const protocol::MessageExt& msg);
    std::future<PutMessageResult> put_messages(MessageBatch batch);

    // --- get path (DefaultMessageStore#getMessage) ---
    // filter may be null (match all). max_total_bytes caps the bytes of the batch (the first
    // message is always returned); <= 0 uses maxTransferBytesOnMessageInMemory.
    GetMessageResult get_message(std::string_view group, std::string_view topic, int32_t queue_id,
                                 QueueOffset offset, int32_t max_msg_nums, int64_t max_total_bytes,
                                 const MessageFilter* filter);

    QueueOffset get_max_offset_in_queue(std::string_view topic, int32_t queue_id) const;
    // 0 for a queue that holds nothing yet, as 4.9.8 (whose lookup creates the queue).
    QueueOffset get_min_offset_in_queue(std::string_view topic, int32_t queue_id) const;
    // CommitLog offset of the unit at consume_queue_offset; 0 when absent (Java).
    PhysicalOffset get_commit_log_offset_in_queue(std::string_view topic, int32_t queue_id,
                                                  QueueOffset consume_queue_offset) const;
    // SEARCH_OFFSET_BY_TIMESTAMP: kLower = first offset stored at or after timestamp (max
    // offset if none), kUpper = last offset stored at or before it (min offset if none),
    // kNearest = 4.9.8's search (offset_in_queue_by_time_nearest).
    QueueOffset get_offset_in_queue_by_time(std::string_view topic, int32_t queue_id,
                                            int64_t timestamp_ms,
                                            BoundaryType boundary = BoundaryType::kLower) const;
    // RocketMQ 4.9.8 ConsumeQueue#getOffsetInQueueByTime, step for step: picks the first
    // ConsumeQueue file whose mtime is >= timestamp (else the last), binary-searches its units
    // by store time (units below the CommitLog's min offset count as older), and answers the
    // unit with that exact time, else the closer of its two neighbours (the left one on a
    // tie), else the only neighbour found. So a time after the last message gives the last
    // message's offset (not the max offset); 0 when the queue or a message is missing.
    QueueOffset offset_in_queue_by_time_nearest(std::string_view topic, int32_t queue_id,
                                                int64_t timestamp_ms) const;
    // Store time of the first message of the queue; -1 when none.
    int64_t get_earliest_message_time(std::string_view topic, int32_t queue_id) const;
    // Store time of the oldest message in the CommitLog; -1 when empty.
    int64_t get_earliest_message_time() const;
    // Store time of the message at offset in queue; -1 when absent.
    int64_t get_message_store_timestamp(std::string_view topic, int32_t queue_id,
                                        QueueOffset offset) const;

    // VIEW_MESSAGE_BY_ID: the record at a physical offset. Errors: kNotFound, kCorruption.
    Result<protocol::MessageExt> look_message_by_offset(PhysicalOffset offset) const;
    // The record's bytes (no copy). nullopt when absent.
    std::optional<MappedView> select_one_message_by_offset(PhysicalOffset offset) const;
    // By offset message id (§5.4). Errors: kInvalidArgument (bad id), kNotFound.
    Result<protocol::MessageExt> look_message_by_msg_id(std::string_view offset_msg_id) const;
    // QUERY_MESSAGE: messages of topic whose KEYS or UNIQ_KEY contain key, stored within
    // [begin_ms, end_ms], newest first, at most max_num (capped at 64).
    QueryMessageResult query_message(std::string_view topic, std::string_view key, int32_t max_num,
                                     int64_t begin_ms, int64_t end_ms) const;

    // --- offsets, dispatch ---
    PhysicalOffset get_min_phy_offset() const;
    PhysicalOffset get_max_phy_offset() const;
    // DefaultMessageStore#checkInDiskByCommitOffset negated: the record at this CommitLog
    // offset is within accessMessageInMemoryMaxRatio % of physical memory of the log's end.
    bool is_in_memory(int64_t phy_offset) const;
    // Offset up to which CommitLog records are in ConsumeQueues/index (now_dispatched).
    PhysicalOffset dispatched_offset() const { return reput_->reput_from_offset(); }
    int64_t dispatch_behind_bytes() const { return reput_->behind(); }
    // Restricts dispatch to [.., limit()] (DLedger: committed index; controller: confirm
    // offset). Default: the CommitLog's write end. Any time (the dispatch thread picks it up on
    // its next pass); `limit` runs on the dispatch thread.
    void set_dispatch_limit(std::function<PhysicalOffset()> limit);
    // Cuts the CommitLog at `end` (a record boundary) with puts stopped by the caller: the
    // crash-safe truncation shared by DLedger and controller mode (CommitLog::truncate_to).
    // ConsumeQueue units and index entries can only exist below the dispatch limit, which
    // callers keep at or below `end`. Errors: `end` below what is already dispatched (that
    // would cut records consumers may have seen), I/O.
    Status truncate_log(PhysicalOffset end);
    // Controller mode's confirm offset as the checkpoint keeps it (confirmPhyOffset): written
    // with the next checkpoint flush, read back at the next start.
    int64_t checkpoint_confirm_offset() const;
    void set_checkpoint_confirm_offset(int64_t offset);
    // Sets the next queue offset of every queue from its ConsumeQueue (after a role change:
    // a new leader whose CommitLog grew by replication, once dispatch has caught up).
    void reload_queue_offsets();
    // Runs dispatch now on the calling thread (tests; recovery). Returns records dispatched.
    Result<int64_t> dispatch_now();
    // Wakes the dispatch thread at once (someone waits for dispatch to reach a point).
    void wake_dispatch() { reput_->wakeup(); }
    // The dispatchable end rose (an append, a DLedger commit, a raised confirm offset): wakes
    // the dispatcher at once when a consumer waits (held pulls, arrival waiters) or it sleeps
    // idle; otherwise it passes within dispatch_busy_interval (decision 037).
    void note_dispatchable();
    // A count of consumers waiting for new messages (the broker's held pulls); while it is
    // above zero every append wakes the dispatcher at once (dispatch_busy_interval). The
    // counter must outlive the store or be reset to null first.
    void set_dispatch_waiters(const std::atomic<int64_t>* waiting) {
        dispatch_waiters_.store(waiting, std::memory_order_release);
    }
    // Condition-variable notifications of the dispatcher so far (bench, tests).
    int64_t dispatch_wake_calls() const { return reput_ ? reput_->wake_calls() : 0; }
    void set_message_arriving_listener(MessageArrivingListener* listener);
    ArrivalWaiters& arrival_waiters() { return waiters_; }

    // --- admin ---
    // DELETE_TOPIC_IN_BROKER: removes the topics' ConsumeQueues and their next-offset entries.
    // CommitLog records stay until retention. Returns queues removed.
    int delete_topics(const std::set<std::string>& topics);
    // CLEAN_EXPIRED_CONSUMEQUEUE (Java cleanExpiredConsumerQueue): removes the ConsumeQueues
    // whose last unit ends below the CommitLog's min offset (their records are gone), and
    // their next-offset entries. Returns queues removed.
    int clean_expired_consumer_queues();
    // Removes ConsumeQueues of topics not in `keep`.
    int clean_unused_topics(const std::set<std::string>& keep);
    void execute_delete_files_manually() { clean_->execute_delete_files_manually(); }

    // --- stats ---
    // GET_BROKER_RUNTIME_INFO keys (Java getRuntimeInfo + dispatch lag).
    std::map<std::string, std::string> runtime_info() const;
    StoreStatsService& stats() { return stats_; }
    bool is_disk_full() const { return clean_->is_disk_full(); }
    // Java isOSPageCacheBusy: puts are being refused with OS_PAGE_CACHE_BUSY (the write buffer
    // could not drain for osPageCacheBusyTimeOutMills; CommitLog::is_os_page_cache_busy).
    bool is_os_page_cache_busy() const { return commit_log_->is_os_page_cache_busy(); }
    bool last_exit_ok() const { return last_exit_ok_; }
    const RecoveryResult& recovery_result() const { return recovery_; }

    // --- scheduled work (the scheduler thread calls these; tests may call them directly) ---
    // Flushes ConsumeQueues + index and advances the checkpoint's logics/index timestamps.
    Status flush_consume_queues(int32_t least_pages);
    void run_clean_once() { clean_->run_once(); }

    CommitLog& commit_log() { return *commit_log_; }
    ConsumeQueueStore& consume_queues() { return *cqs_; }
    IndexService& index_service() { return *index_; }
    const MessageStoreConfig& config() const { return config_; }
    // COMET_CHECKs: dispatched <= CommitLog max; every queue's min <= max.
    void check_invariants() const;

private:
    class Reader;

    MessageStore(const MessageStoreConfig& config, Clock& clock, MessageStoreOptions options);
    // open(): load_components -> recover_components -> redispatch_after_recovery, then the
    // clean service, the append listener and the `abort` marker.
    Status load_and_recover();
    // Creates the root directory, notes how the last run ended and loads the checkpoint, the
    // CommitLog, the ConsumeQueues and the index files. Returns where the index needs rebuilding
    // from (IndexService::load).
    Result<int64_t> load_components();
    // ConsumeQueue and CommitLog recovery (recovery_), the kept end, and the ConsumeQueue units
    // past the recovered end or the dispatch limit cut.
    Status recover_components();
    // options_.recovery_keep_end: cuts the recovered CommitLog back to the end the replicated log
    // keeps. Error: that end is beyond the recovered one.
    Status cut_to_kept_end();
    // Dispatches what the ConsumeQueues and the index miss (from the earliest of them, or the
    // scan start after a crash), then reloads the queue offsets.
    Status redispatch_after_recovery(int64_t index_rebuild_from);
    void create_reput_service();
    void create_clean_service();
    Status dispatch(const DispatchRequest& req);
    // The dispatcher's pass end: writes the staged ConsumeQueue units, then announces the
    // pass's arrivals (listener, waiters).
    Status end_dispatch_pass();
    std::optional<PutMessageResult> check_store_status() const;
    CommitLog::PutCompletion wrap_completion(PutCompletion done, TimePoint begin);
    int64_t store_time_of(const CqUnit& unit) const;
    QueueOffset next_offset_correction(QueueOffset old_offset, QueueOffset new_offset) const;
    bool is_in_disk(int64_t phy_offset, int64_t max_phy) const;
    // get_message()'s arguments as its steps use them.
    struct GetRequest {
        QueueOffset offset;
        int32_t max_msg_nums;
        int64_t max_total_bytes;
        const MessageFilter* filter;  // null: every message matches
        bool schedule_topic;          // tags codes are delivery times: not filtered by tag
        int64_t max_phy;              // the CommitLog's end when the get began
    };
    // Sets r's queue bounds; the queue's units from `offset` on, or nullopt with r's status and
    // next offset set when `offset` cannot be read in cq.
    std::optional<MappedView> queue_units_at(const ConsumeQueue& cq, std::string_view topic,
                                             int32_t queue_id, QueueOffset offset,
                                             GetMessageResult& r) const;
    // Adds the messages of `units` (from req.offset) that pass the filter until the batch is
    // full; sets r's status, next offset and slave suggestion.
    void read_queue_units(const MappedView& units, const GetRequest& req,
                          GetMessageResult& r) const;
    // Java isTheBatchFull: whether a message of next_size bytes no longer goes into r. Inline
    // (defined in message_store.cc, its only user): it runs once per message pulled.
    inline bool batch_full(const GetMessageResult& r, int32_t next_size, bool in_disk,
                           const GetRequest& req) const;
    void scheduler_loop();
    Status create_abort_file();

    const MessageStoreConfig config_;
    Clock& clock_;
    const MessageStoreOptions options_;
    const DiskUsageProbe& probe_;
    RunningFlags flags_;
    // Puts refused while not writeable; every 10000th is logged. Per store: several stores in
    // one process (mqbrokercontainer) each log their own first refusal.
    mutable std::atomic<int64_t> refused_puts_{0};
    std::unique_ptr<StoreCheckpoint> checkpoint_;
    std::unique_ptr<AllocateMappedFileService> allocator_;
    std::unique_ptr<CommitLog> commit_log_;
    std::unique_ptr<ConsumeQueueStore> cqs_;
    std::unique_ptr<IndexService> index_;
    std::unique_ptr<Reader> reader_;
    std::unique_ptr<ReputMessageService> reput_;
    std::unique_ptr<CleanService> clean_;
    StoreStatsService stats_;
    ArrivalWaiters waiters_;
    std::atomic<MessageArrivingListener*> listener_{nullptr};
    std::atomic<const std::atomic<int64_t>*> dispatch_waiters_{nullptr};
    // The current dispatch pass (dispatch thread only): arrivals to announce once the pass's
    // ConsumeQueue units are written, and the last record's store timestamp.
    struct PassArrival {
        ConsumeQueue* cq;  // held by the ConsumeQueueStore until its end_pass()
        QueueOffset next;
        int64_t tags_code;
        int64_t store_timestamp;
    };
    std::vector<PassArrival> pass_arrivals_;
    int64_t pass_store_ts_ = 0;
    mutable Mutex dispatch_limit_mu_;
    std::shared_ptr<const std::function<PhysicalOffset()>> dispatch_limit_
        GUARDED_BY(dispatch_limit_mu_);
    std::atomic<int64_t> last_dispatched_store_ts_{0};
    bool last_exit_ok_ = true;
    bool opened_ = false;  // load_and_recover() completed
    RecoveryResult recovery_;
    int64_t total_physical_memory_ = 0;

    std::atomic<bool> running_{false};
    std::atomic<bool> shutdown_{false};
    Mutex sched_mu_;
    std::condition_variable_any sched_cv_;
    bool sched_stop_ GUARDED_BY(sched_mu_) = false;
    std::thread scheduler_;
};

}  // namespace comet::store
