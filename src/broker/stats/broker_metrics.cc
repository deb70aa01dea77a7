#include "broker/stats/broker_metrics.h"

#include <unordered_map>

#include "base/check.h"

namespace comet::broker {
namespace {

std::atomic<uint64_t> g_next_id{1};

std::string_view bool_label(bool b) { return b ? "true" : "false"; }

}  // namespace

bool is_system_topic_name(std::string_view topic) {
    static constexpr std::string_view kSystem[] = {
        "TBW102",          "SELF_TEST_TOPIC",        "OFFSET_MOVED_EVENT",
        "SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRANS_OP_HALF_TOPIC",
        "TRANS_CHECK_MAX_TIME_TOPIC", "RMQ_SYS_TRACE_TOPIC"};
    if (topic.substr(0, 8) == "RMQ_SYS_") {
        return true;
    }
    for (const auto s : kSystem) {
        if (topic == s) {
            return true;
        }
    }
    return false;
}

BrokerMetrics::BrokerMetrics(const std::string& cluster, const std::string& broker_name,
                             int64_t broker_id)
    : registry_({{"cluster", cluster},
                 {"node_type", "broker"},
                 {"node_id", broker_name},
                 {"broker_id", std::to_string(broker_id)}}),
      rpc_(&registry_),
      messages_in_(registry_.counter("rocketmq_messages_in_total",
                                     "Messages stored by sends, by topic.",
                                     {"topic", "message_type", "is_system"})),
      throughput_in_(registry_.counter("rocketmq_throughput_in_total",
                                       "Message body bytes stored by sends, by topic.",
                                       {"topic", "message_type", "is_system"})),
      message_size_(registry_.histogram("rocketmq_message_size",
                                        "Size of stored message bodies in bytes.",
                                        {"topic", "message_type"},
                                        metrics::message_size_bounds())),
      messages_out_(registry_.counter("rocketmq_messages_out_total",
                                      "Messages returned by pulls, by topic and consumer group.",
                                      {"topic", "consumer_group", "is_retry", "is_system"})),
      throughput_out_(registry_.counter(
          "rocketmq_throughput_out_total",
          "Stored message bytes returned by pulls, by topic and consumer group.",
          {"topic", "consumer_group", "is_retry", "is_system"})),
      pulls_found_(registry_.counter("comet_pulls_found_total",
                                     "PULL_MESSAGE requests answered with messages, by topic and "
                                     "consumer group.",
                                     {"topic", "consumer_group"})),
      put_latency_(registry_
                       .histogram("comet_put_latency_seconds",
                                  "Send requests from decoding to the store's answer (flush and "
                                  "replica waits included).",
                                  {}, metrics::latency_seconds_bounds())
                       .with({})),
      pull_read_latency_(registry_
                             .histogram("comet_pull_read_latency_seconds",
                                        "Store reads of PULL_MESSAGE requests (long-poll waits "
                                        "excluded).",
                                        {}, metrics::latency_seconds_bounds())
                             .with({})),
      flush_latency_(registry_
                         .histogram("comet_flush_latency_seconds",
                                    "CommitLog msync rounds that made progress.", {},
                                    metrics::latency_seconds_bounds())
                         .with({})),
      flush_bytes_(registry_
                       .counter("comet_flush_bytes_total", "CommitLog bytes made durable by msync.")
                       .with({})),
      id_(g_next_id.fetch_add(1, std::memory_order_relaxed)) {
    auto& results = registry_.counter(
        "comet_put_results_total",
        "Send results by store status (PUT_OK, FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE, "
        "IN_SYNC_REPLICAS_NOT_ENOUGH, ...).",
        {"status"});
    for (size_t i = 0; i < put_results_.size(); ++i) {
        const auto s = static_cast<store::PutMessageStatus>(i);
        if (i <= static_cast<size_t>(store::PutMessageStatus::kInSyncReplicasNotEnough)) {
            put_results_[i] = results.with({store::put_message_status_name(s)});
        }
    }
}

const BrokerMetrics::TopicIn* BrokerMetrics::topic_in(std::string_view topic, MessageType mt) {
    // Per-thread cache: a hit is one hash lookup on a reused key buffer.
    struct Cache {
        std::string key;
        std::unordered_map<uint64_t, std::unordered_map<std::string, const TopicIn*>> by_owner;
    };
    thread_local Cache cache;
    cache.key.assign(topic);
    cache.key.push_back(static_cast<char>(mt));
    auto& mine = cache.by_owner[id_];
    if (const auto it = mine.find(cache.key); it != mine.end()) {
        return it->second;
    }
    const std::string_view type = mt == MessageType::kDelay         ? "Delay"
                                  : mt == MessageType::kTransaction ? "Transaction"
                                                                    : "Normal";
    const std::string_view system = bool_label(is_system_topic_name(topic));
    const TopicIn* in = nullptr;
    {
        MutexLock lock(mu_);
        auto it = topics_in_.find(cache.key);
        if (it == topics_in_.end()) {
            auto fresh = std::make_unique<TopicIn>();
            fresh->messages = messages_in_.with({topic, type, system});
            fresh->bytes = throughput_in_.with({topic, type, system});
            fresh->size = message_size_.with({topic, type});
            it = topics_in_.emplace(cache.key, std::move(fresh)).first;
        }
        in = it->second.get();
    }
    mine.emplace(cache.key, in);
    return in;
}

void BrokerMetrics::on_put(const TopicIn* in, store::PutMessageStatus status, int64_t messages,
                           int64_t body_bytes, std::chrono::nanoseconds took) {
    const auto i = static_cast<size_t>(status);
    if (i < put_results_.size() && put_results_[i] != nullptr) {
        put_results_[i]->inc();
    }
    put_latency_->observe(std::chrono::duration<double>(took).count());
    if (in == nullptr || !store::is_stored(status) || messages <= 0) {
        return;
    }
    in->messages->inc(static_cast<uint64_t>(messages));
    in->sends.fetch_add(1, std::memory_order_relaxed);
    in->bytes->inc(static_cast<uint64_t>(body_bytes));
    const double each = static_cast<double>(body_bytes) / static_cast<double>(messages);
    for (int64_t m = 0; m < messages; ++m) {
        in->size->observe(each);
    }
}

void BrokerMetrics::on_pull_found(std::string_view topic, std::string_view group,
                                  int64_t messages, int64_t bytes) {
    const bool retry = topic.substr(0, 7) == "%RETRY%";
    const std::string_view retry_l = bool_label(retry);
    const std::string_view system_l = bool_label(is_system_topic_name(topic));
    messages_out_.cached({topic, group, retry_l, system_l})->inc(static_cast<uint64_t>(messages));
    throughput_out_.cached({topic, group, retry_l, system_l})->inc(static_cast<uint64_t>(bytes));
    pulls_found_.cached({topic, group})->inc();
}

namespace {

std::string_view label(const metrics::Labels& labels, std::string_view name) {
    for (const auto& [k, v] : labels) {
        if (k == name) {
            return v;
        }
    }
    return {};
}

// Adds a family's samples to `out` keyed topic@group: .first when `first`, else .second.
void add_by_group(const metrics::FamilySnapshot& snap,
                  std::map<std::string, std::pair<int64_t, int64_t>>* out, bool first) {
    for (const auto& s : snap.samples) {
        std::string key(label(s.labels, "topic"));
        key.push_back('@');
        key.append(label(s.labels, "consumer_group"));
        auto& slot = (*out)[key];
        (first ? slot.first : slot.second) += static_cast<int64_t>(s.value);
    }
}

}  // namespace

BrokerMetrics::StatTotals BrokerMetrics::stat_totals() const {
    StatTotals t;
    {
        MutexLock lock(mu_);
        for (const auto& [key, in] : topics_in_) {
            const std::string topic = key.substr(0, key.size() - 1);  // minus the type byte
            const auto sends = static_cast<int64_t>(in->sends.load(std::memory_order_relaxed));
            auto& nums = t.topic_put_nums[topic];
            nums.first += static_cast<int64_t>(in->messages->value());
            nums.second += sends;
            auto& size = t.topic_put_size[topic];
            size.first += static_cast<int64_t>(in->bytes->value());
            size.second += sends;
        }
    }
    add_by_group(messages_out_.snapshot(), &t.group_get_nums, true);
    add_by_group(throughput_out_.snapshot(), &t.group_get_size, true);
    const auto pulls = pulls_found_.snapshot();
    add_by_group(pulls, &t.group_get_nums, false);
    add_by_group(pulls, &t.group_get_size, false);
    return t;
}

void BrokerMetrics::on_pull_read(std::chrono::nanoseconds took) {
    pull_read_latency_->observe(std::chrono::duration<double>(took).count());
}

void BrokerMetrics::on_flush(std::chrono::nanoseconds took, int64_t bytes) const {
    flush_latency_->observe(std::chrono::duration<double>(took).count());
    if (bytes > 0) {
        flush_bytes_->inc(static_cast<uint64_t>(bytes));
    }
}

}  // namespace comet::broker
