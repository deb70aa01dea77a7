#pragma once
// BrokerMetrics: the broker's Prometheus metrics (docs/metrics.md). Hot-path counters are
// bumped by the send and pull processors and the CommitLog flush; everything else (store,
// replication, DLedger, controller mode, consumer lag) is read when /metrics is scraped.
//
// Owner: BrokerController (declared before the store and the server, so it outlives both).
// Threads: on_* from the I/O, executor and flush threads: relaxed atomics, and per-thread caches
// for the per-topic children (no lock, allocation or formatting per message once a thread has
// seen a topic). Collectors run on the "HttpServer" thread at scrape time.

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "base/mutex.h"
#include "metrics/endpoint.h"
#include "metrics/registry.h"
#include "store/flush.h"
#include "store/put_message_status.h"

namespace comet::broker {

class BrokerMetrics final : public store::FlushObserver {
public:
    // The counters one topic's puts bump, resolved once per send on the request's thread.
    struct TopicIn {
        metrics::Counter* messages = nullptr;  // rocketmq_messages_in_total
        metrics::Counter* bytes = nullptr;     // rocketmq_throughput_in_total
        metrics::Histogram* size = nullptr;    // rocketmq_message_size
        mutable std::atomic<uint64_t> sends{0};  // stored send requests (stats times)
    };

    // Cumulative totals per stats key for BrokerStatsManager: (value, times).
    struct StatTotals {
        std::map<std::string, std::pair<int64_t, int64_t>> topic_put_nums;  // by topic
        std::map<std::string, std::pair<int64_t, int64_t>> topic_put_size;  // by topic
        std::map<std::string, std::pair<int64_t, int64_t>> group_get_nums;  // by topic@group
        std::map<std::string, std::pair<int64_t, int64_t>> group_get_size;  // by topic@group
    };
    // Reads the hot-path counters (locks the families; once a second from the scheduler).
    StatTotals stat_totals() const;

    // const labels: cluster, node_type="broker", node_id=brokerName (RocketMQ 5's), broker_id.
    BrokerMetrics(const std::string& cluster, const std::string& broker_name, int64_t broker_id);

    metrics::Registry& registry() { return registry_; }
    const net::RpcObserver* rpc_observer() const { return &rpc_; }

    // RocketMQ 5's message_type label values the broker can tell apart.
    enum class MessageType : uint8_t { kNormal, kDelay, kTransaction };
    // Send path, before the put: the counters of `topic` (the real topic of a delayed or half
    // message).
    const TopicIn* topic_in(std::string_view topic, MessageType type);
    // Send path, in the put's completion. `in` may be null (not stored: only the result counts).
    void on_put(const TopicIn* in, store::PutMessageStatus status, int64_t messages,
                int64_t body_bytes, std::chrono::nanoseconds took);
    // Pull path: a PULL_MESSAGE answered with messages, and the store read time of any pull.
    void on_pull_found(std::string_view topic, std::string_view group, int64_t messages,
                       int64_t bytes);
    void on_pull_read(std::chrono::nanoseconds took);

    // store::FlushObserver (the CommitLog's flush thread).
    void on_flush(std::chrono::nanoseconds took, int64_t bytes) const override;

private:
    metrics::Registry registry_;
    metrics::RpcMetrics rpc_;
    metrics::CounterFamily& messages_in_;
    metrics::CounterFamily& throughput_in_;
    metrics::HistogramFamily& message_size_;
    metrics::CounterFamily& messages_out_;
    metrics::CounterFamily& throughput_out_;
    metrics::CounterFamily& pulls_found_;
    metrics::Histogram* put_latency_;
    metrics::Histogram* pull_read_latency_;
    metrics::Histogram* flush_latency_;
    metrics::Counter* flush_bytes_;
    // comet_put_results_total by status, one child per PutMessageStatus value.
    std::array<metrics::Counter*, 16> put_results_{};
    const uint64_t id_;  // keys the per-thread TopicIn cache

    mutable Mutex mu_;
    std::map<std::string, std::unique_ptr<TopicIn>, std::less<>> topics_in_ GUARDED_BY(mu_);
};

// True for topics RocketMQ 5 labels is_system="true" (TopicValidator#isSystemTopic: the
// RMQ_SYS_ prefix and the broker's own topics).
bool is_system_topic_name(std::string_view topic);

}  // namespace comet::broker
