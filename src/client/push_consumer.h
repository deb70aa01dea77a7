#pragma once
// DefaultMqPushConsumer: clustering-mode push consumer (Java DefaultMQPushConsumer +
// RebalancePushImpl + ConsumeMessageConcurrently/OrderlyService, simplified).
// - HEART_BEAT with the group's subscriptions (and %RETRY%<group>) to every master.
// - Rebalance: average allocation of each subscribed topic's queues over the group's consumer
//   ids, every rebalance_interval and at once on NOTIFY_CONSUMER_IDS_CHANGED.
// - One long-polling pull chain per assigned queue (at most one pull in flight per queue).
// - Messages of a queue are consumed strictly in queue order, one batch at a time, on the
//   consume thread pool; queues run in parallel.
// - Concurrent mode: RECONSUME_LATER -> CONSUMER_SEND_MSG_BACK (redelivery via %RETRY%).
//   Orderly mode: queues are locked on the broker (LOCK_BATCH_MQ) before they are pulled;
//   SUSPEND retries the same batch after suspend_current_queue_time, up to
//   max_reconsume_times, then sends it back.
// - Offsets: kept locally, UPDATE_CONSUMER_OFFSET every persist interval, on queue removal and
//   on shutdown; also piggybacked on pulls (commitOffset flag).
//
// Owner: the application. Threads: the client timer thread (rebalance, offset commit, delayed
// pulls), I/O threads (pull callbacks, which only queue work), "consume" pool threads
// (listeners). Locks: mu_ (queue table) before ProcessQueue::mu (pending messages); neither is
// held across an RPC or a listener call.

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "client/client_config.h"
#include "client/client_types.h"
#include "client/consumer_stats.h"
#include "client/mq_client_instance.h"
#include "net/thread_pool_executor.h"
#include "protocol/heartbeat_body.h"

namespace comet::client {

enum class ConsumeStatus { kConsumeSuccess, kReconsumeLater };
enum class ConsumeOrderlyStatus { kSuccess, kSuspendCurrentQueueAMoment };

using MessageListenerConcurrently =
    std::function<ConsumeStatus(const std::vector<MessageExt>&, const MessageQueue&)>;
using MessageListenerOrderly =
    std::function<ConsumeOrderlyStatus(const std::vector<MessageExt>&, const MessageQueue&)>;

struct PushConsumerConfig {
    ClientConfig client;
    std::string group = "DEFAULT_CONSUMER";
    ConsumeFromWhere consume_from_where = ConsumeFromWhere::kLastOffset;
    int64_t consume_timestamp = 0;  // ms, for kTimestamp
    size_t consume_threads = 4;
    int32_t pull_batch_size = 32;
    size_t consume_message_batch_max_size = 1;
    size_t pull_threshold_for_queue = 1000;  // pending messages before pulls pause
    std::chrono::milliseconds rebalance_interval{20000};
    std::chrono::milliseconds broker_suspend_max{15000};
    std::chrono::milliseconds pull_timeout_when_suspend{30000};
    std::chrono::milliseconds pull_delay_on_error{3000};
    std::chrono::milliseconds suspend_current_queue_time{1000};
    int32_t max_reconsume_times = 16;
};

// ResetOffsetBody's offsetTable: {MessageQueue-as-key: offset} (Java form) or a list of
// {brokerName, offset, queueId, topic} (the form a C++ admin request gets).
Result<std::map<MessageQueue, int64_t>> decode_reset_offset_body(std::string_view body);

class DefaultMqPushConsumer {
public:
    explicit DefaultMqPushConsumer(PushConsumerConfig config);
    ~DefaultMqPushConsumer();
    DefaultMqPushConsumer(const DefaultMqPushConsumer&) = delete;
    DefaultMqPushConsumer& operator=(const DefaultMqPushConsumer&) = delete;

    // Before start(). expression: "*" or "tagA || tagB".
    void subscribe(const std::string& topic, const std::string& expression = "*");
    // Before start(). A SQL92 selector is checked with every master of the topic at start()
    // (CHECK_CLIENT_CONFIG), travels in heartbeats, and its pulls carry no subscription (the
    // broker applies the filter its heartbeats registered), as Java's client does by default.
    void subscribe(const std::string& topic, const MessageSelector& selector);
    void register_listener(MessageListenerConcurrently listener);
    void register_listener_orderly(MessageListenerOrderly listener);

    // Errors: no listener / subscription, no name server, route lookup failure, a SQL92
    // subscription a broker refuses (kFailedPrecondition with its code and remark).
    Status start();
    // Stops pulling, finishes the batches being consumed, commits offsets, unregisters.
    void shutdown();

    // Queues assigned to this consumer right now (sorted).
    std::vector<MessageQueue> assigned_queues() const;
    // Runs a rebalance on the timer thread as soon as possible.
    void rebalance_soon();
    MqClientInstance& instance() { return *instance_; }
    const std::string& group() const { return config_.group; }

    // Broker-initiated admin requests (Java ClientRemotingProcessor), registered by start():
    // RESET_CONSUMER_CLIENT_OFFSET (220): drops the queues of the topic held here (without
    // writing their old offsets back), commits the new offsets and resumes pulling from them.
    void reset_offset(const std::string& topic, const std::map<MessageQueue, int64_t>& table);
    // GET_CONSUMER_STATUS_FROM_CLIENT (221): the offsets held for `topic`'s queues.
    std::map<MessageQueue, int64_t> offsets_of(const std::string& topic) const;
    // GET_CONSUMER_RUNNING_INFO (307): 4.9.8's ConsumerRunningInfo JSON.
    std::string running_info_json() const;
    // CONSUME_MESSAGE_DIRECTLY (309): runs the listener on `msg`; 4.9.8's
    // ConsumeMessageDirectlyResult JSON.
    std::string consume_directly_json(MessageExt msg, const std::string& broker_name);

private:
    struct ProcessQueue {
        ProcessQueue(MessageQueue q, int64_t now_ms)
            : mq(std::move(q)),
              last_pull_ms(now_ms),
              last_consume_ms(now_ms),
              last_lock_ms(now_ms) {}
        const MessageQueue mq;
        // Wall-clock ms of the last pull sent, batch consumed and lock granted (Java
        // ProcessQueue's last*Timestamp, all starting at creation); for the running info.
        std::atomic<int64_t> last_pull_ms;
        std::atomic<int64_t> last_consume_ms;
        std::atomic<int64_t> last_lock_ms;
        std::atomic<bool> dropped{false};
        std::atomic<bool> locked{false};
        std::atomic<int64_t> consumed_offset{-1};  // next offset to commit
        // The topic's pull and consume counters (the running info's statusTable); set before
        // the queue is shared, owned by the consumer's stats_.
        ConsumerStats::Counters* stats = nullptr;
        int64_t next_offset = 0;         // only the pull chain touches it
        int32_t orderly_reconsumes = 0;  // only the drain touches it
        Mutex mu;
        std::deque<MessageExt> pending GUARDED_BY(mu);
        bool consuming GUARDED_BY(mu) = false;
        // The batch a drain moved out of `pending` and is consuming (count, first and last
        // offset); counted with `pending` in the running info.
        size_t in_consume GUARDED_BY(mu) = 0;
        int64_t in_consume_first GUARDED_BY(mu) = 0;
        int64_t in_consume_last GUARDED_BY(mu) = 0;
        // Pulled bodies not decoded yet, in pull order after `pending`: the pull callback (I/O
        // thread) only checks their record chain; the drain decodes them on the consume thread,
        // where their messages are also freed.
        struct RawChunk {
            std::string body;
            size_t records = 0;
            int64_t first_offset = 0;  // queue offsets of its first and last record
            int64_t last_offset = 0;
            int64_t next_begin_offset = 0;  // the pull position after it
        };
        std::deque<RawChunk> raw GUARDED_BY(mu);
        size_t raw_records GUARDED_BY(mu) = 0;
        // The drain's messages, kept from drain to drain with their buffers (a raw chunk is
        // decoded over them; up to 4 MiB of bodies, see drain()): only the drain running
        // (`consuming`) touches them.
        std::vector<MessageExt> drain_taken;
        std::vector<MessageExt> drain_batch;
    };
    using PqPtr = std::shared_ptr<ProcessQueue>;

    std::vector<protocol::ConsumerData> consumer_data() const;
    void register_admin_handlers();
    // running_info_json()'s parts. One queue's ProcessQueueInfo under mqTable: called under
    // mu_, takes pq.mu (the lock order of the class comment).
    static void write_process_queue_info(protocol::JsonWriter& w, const MessageQueue& mq,
                                         ProcessQueue& pq, bool orderly);
    void write_running_properties(protocol::JsonWriter& w) const;  // "properties"
    void write_status_table(protocol::JsonWriter& w) const;        // "statusTable"
    void do_rebalance();
    void rebalance_topic(const std::string& topic);
    Result<int64_t> compute_pull_from(const MessageQueue& mq);
    void lock_queues(const std::vector<PqPtr>& pqs);
    void pull(const PqPtr& pq);
    void pull_later(const PqPtr& pq, Duration delay);
    void on_pull(const PqPtr& pq, Result<PullResult> r);
    void submit_drain(const PqPtr& pq);
    static bool scan_records(std::string_view body, ProcessQueue::RawChunk* out);
    void drain(const PqPtr& pq);
    // drain()'s steps: take_chunk -> decode_chunk (raw chunks only) -> consume_taken ->
    // put_back. Only the drain running (`consuming` set) calls them.
    //
    // What take_chunk() took: the pull position after a raw chunk (-1 for messages taken from
    // `pending`) and the queue offset of the last message taken.
    struct DrainChunk {
        int64_t pull_position = -1;
        int64_t last_offset = 0;
    };
    // What consume_taken() did: messages consumed from the front of drain_taken, and whether
    // the batch after them is to be consumed again later.
    struct ConsumedChunk {
        size_t done = 0;
        bool retry = false;
    };
    // Takes pq.mu: moves up to a chunk of `pending` into drain_taken, or else the oldest raw
    // chunk's body into *raw_body. False, with `consuming` cleared, when there is nothing left.
    static bool take_chunk(ProcessQueue& pq, std::string* raw_body, DrainChunk* chunk);
    // Decodes a raw chunk's body into drain_taken (emptied, with an error log, on a bad body).
    void decode_chunk(ProcessQueue& pq, std::string_view raw_body,
                      const protocol::SubscriptionData& sub, int64_t last_offset);
    // Runs the listener over drain_taken in batches of at most max_batch (no lock held).
    ConsumedChunk consume_taken(const PqPtr& pq, size_t max_batch);
    // Takes pq.mu: puts what was not consumed back at the front of `pending`, or else moves
    // the offset to commit past the chunk.
    static void put_back(ProcessQueue& pq, size_t done, const DrainChunk& chunk);
    // Consumes one batch; true when done with it (offsets may advance), false to retry later.
    bool consume_batch(const PqPtr& pq, const std::vector<MessageExt>& batch);
    void persist_offsets(bool oneway);
    void remove_queue(const PqPtr& pq);
    const protocol::SubscriptionData* subscription(const std::string& topic) const;

    const PushConsumerConfig config_;
    std::unique_ptr<MqClientInstance> instance_;
    std::shared_ptr<net::ThreadPoolExecutor> consume_pool_;
    MessageListenerConcurrently listener_;
    MessageListenerOrderly orderly_listener_;
    std::map<std::string, protocol::SubscriptionData> subscriptions_;  // fixed after start()
    std::atomic<bool> stopping_{false};
    std::atomic<bool> started_{false};
    int64_t start_timestamp_ = 0;
    ConsumerStats stats_;  // sampled every second on the client's scheduler

    mutable Mutex mu_;
    std::map<MessageQueue, PqPtr> queues_ GUARDED_BY(mu_);
};

}  // namespace comet::client
