#pragma once
// DefaultMqProducer: the RocketMQ producer (Java DefaultMQProducer + DefaultMQProducerImpl).
// Route lookup through MqClientInstance (cached; refreshed every 30 s and after a failed send),
// round-robin queue selection avoiding the broker that just failed and brokers penalised by
// LatencyFaultTolerance, SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE requests, UNIQ_KEY message ids,
// retries on another broker, a total send timeout per message.
//
// Owner: the application. Threads: send* are thread-safe (but the blocking ones must not be
// called from a send callback); async callbacks run on a client I/O
// thread (or the calling thread when nothing was sent) and must not block.
// Differences from Java: bodies are never compressed; no namespaces. Transactions:
// TransactionMqProducer (transaction_producer.h).

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "client/client_config.h"
#include "client/client_types.h"
#include "client/latency_fault_tolerance.h"
#include "client/mq_client_instance.h"
#include "client/topic_publish_info.h"
#include "protocol/message_id.h"

namespace comet::client {

struct ProducerConfig {
    ClientConfig client;
    std::string group = "DEFAULT_PRODUCER";
    std::chrono::milliseconds send_timeout{3000};  // sendMsgTimeout: all attempts of one send
    int retry_times_when_send_failed = 2;          // sync
    int retry_times_when_send_async_failed = 2;    // async
    int default_topic_queue_nums = 4;
    size_t max_message_size = 4 * 1024 * 1024;
    bool send_latency_fault_enable = true;
};

using SendCallback = std::function<void(Result<SendResult>)>;

class DefaultMqProducer {
public:
    explicit DefaultMqProducer(ProducerConfig config, Clock* clock = &SystemClock::instance());
    ~DefaultMqProducer();
    DefaultMqProducer(const DefaultMqProducer&) = delete;
    DefaultMqProducer& operator=(const DefaultMqProducer&) = delete;

    Status start();
    void shutdown();

    // Blocks until stored (or every attempt failed). Errors: kInvalidArgument (bad message),
    // kNotFound (no route), kTimeout, kUnavailable (broker refused: code and remark in text).
    Result<SendResult> send(Message msg);
    // Calls `callback` exactly once. May be called from a send callback (a client I/O thread):
    // it never blocks there (a route not cached yet fails the send instead of being awaited).
    void send_async(Message msg, SendCallback callback);
    // Fire and forget: returns when the request is written (one attempt, no retry).
    Status send_oneway(Message msg);
    // One SEND_BATCH_MESSAGE: every message must have the same topic and no delay level.
    Result<SendResult> send_batch(std::vector<Message> msgs);
    void send_batch_async(std::vector<Message> msgs, SendCallback callback);
    // To a given queue; no retry on another broker.
    Result<SendResult> send_to_queue(Message msg, const MessageQueue& mq);

    MqClientInstance& instance() { return *instance_; }
    const LatencyFaultTolerance& faults() const { return faults_; }
    // The publish info used for `topic`. Rebuilt from the instance's cached route once a second;
    // when the route is unknown it is fetched (blocking) only if `may_block`, else fetched in
    // the background while the previous info keeps being used.
    Result<std::shared_ptr<TopicPublishInfo>> publish_info(const std::string& topic,
                                                           bool may_block = true);

private:
    struct Prepared;  // a request ready to go, with bookkeeping
    Result<std::shared_ptr<Prepared>> prepare(std::vector<Message> msgs, bool batch);
    // may_block: false on client I/O threads (retries), where no blocking RPC is allowed.
    void attempt_async(std::shared_ptr<Prepared> p, SendCallback callback, bool may_block);
    void refresh_route_in_background(const std::string& topic);
    // The master of `topic`'s broker failed (connection) or refused as not master (a DLedger
    // follower, a deposed leader): fetch the route now instead of at the next 30 s poll, at
    // most once per kMasterLostRefresh per topic (docs/dledger.md, "Clients").
    void on_master_lost(const std::string& topic);
    void update_fault(const std::string& broker, Duration elapsed, bool isolation);
    protocol::RemotingCommand build_request(const Prepared& p, const MessageQueue& mq) const;
    Result<SendResult> process_response(const Prepared& p, const MessageQueue& mq,
                                        const protocol::RemotingCommand& resp) const;

    const ProducerConfig config_;
    Clock* const clock_;
    std::unique_ptr<MqClientInstance> instance_;
    LatencyFaultTolerance faults_;
    protocol::MessageClientIdSetter id_setter_;
    std::string born_host_;

    Mutex mu_;
    struct PublishEntry {
        std::shared_ptr<TopicPublishInfo> info;
        TimePoint expires;
    };
    std::map<std::string, PublishEntry> publish_ GUARDED_BY(mu_);
    std::map<std::string, TimePoint> master_lost_refresh_ GUARDED_BY(mu_);
};

// Status codes after which Java retries a send on another broker.
bool retryable_send_code(int32_t code);

}  // namespace comet::client
