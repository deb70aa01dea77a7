#include "client/topic_publish_info.h"

#include <algorithm>

namespace comet::client {

MessageQueue TopicPublishInfo::select(const std::string& last_broker,
                                      const LatencyFaultTolerance* faults) {
    const size_t n = queues_.size();
    const uint32_t start = send_which_queue_.fetch_add(1, std::memory_order_relaxed);
    auto pick = [&](bool need_available, bool avoid_last) -> const MessageQueue* {
        for (size_t i = 0; i < n; ++i) {
            const MessageQueue& mq = queues_[(start + i) % n];
            if (avoid_last && mq.broker_name == last_broker) {
                continue;
            }
            if (need_available && faults != nullptr && !faults->is_available(mq.broker_name)) {
                continue;
            }
            return &mq;
        }
        return nullptr;
    };
    const bool avoid = !last_broker.empty();
    if (const MessageQueue* mq = pick(true, avoid)) {
        return *mq;
    }
    if (const MessageQueue* mq = pick(true, false)) {
        return *mq;
    }
    // Every broker is penalised: take the least bad one, as Java's pickOneAtLeast.
    if (faults != nullptr) {
        if (auto best = faults->pick_one_at_least()) {
            for (size_t i = 0; i < n; ++i) {
                const MessageQueue& mq = queues_[(start + i) % n];
                if (mq.broker_name == *best) {
                    return mq;
                }
            }
        }
    }
    if (const MessageQueue* mq = pick(false, avoid)) {
        return *mq;
    }
    return queues_[start % n];
}

std::shared_ptr<TopicPublishInfo> TopicPublishInfo::from_route(
    const std::string& topic, const protocol::TopicRouteData& route) {
    std::vector<protocol::QueueData> qds = route.queue_datas;
    std::sort(qds.begin(), qds.end(),
              [](const auto& a, const auto& b) { return a.broker_name < b.broker_name; });
    std::vector<MessageQueue> queues;
    for (const auto& qd : qds) {
        if ((qd.perm & protocol::kPermWrite) == 0) {
            continue;
        }
        bool has_master = false;
        for (const auto& bd : route.broker_datas) {
            if (bd.broker_name == qd.broker_name && bd.broker_addrs.count(0) != 0) {
                has_master = true;
            }
        }
        if (!has_master) {
            continue;
        }
        for (int32_t i = 0; i < qd.write_queue_nums; ++i) {
            queues.push_back(MessageQueue{topic, qd.broker_name, i});
        }
    }
    const bool order = route.order_topic_conf.has_value() && !route.order_topic_conf->empty();
    return std::make_shared<TopicPublishInfo>(std::move(queues), order);
}

std::vector<MessageQueue> TopicPublishInfo::subscribe_queues(
    const std::string& topic, const protocol::TopicRouteData& route) {
    std::vector<MessageQueue> queues;
    for (const auto& qd : route.queue_datas) {
        if ((qd.perm & protocol::kPermRead) == 0) {
            continue;
        }
        for (int32_t i = 0; i < qd.read_queue_nums; ++i) {
            queues.push_back(MessageQueue{topic, qd.broker_name, i});
        }
    }
    std::sort(queues.begin(), queues.end());
    return queues;
}

std::vector<MessageQueue> allocate_averagely(const std::string& cid,
                                             const std::vector<MessageQueue>& all,
                                             const std::vector<std::string>& cids) {
    std::vector<MessageQueue> result;
    auto it = std::find(cids.begin(), cids.end(), cid);
    if (it == cids.end() || all.empty()) {
        return result;
    }
    const size_t index = static_cast<size_t>(it - cids.begin());
    const size_t n = all.size();
    const size_t c = cids.size();
    const size_t mod = n % c;
    const size_t average = n <= c ? 1 : (mod > 0 && index < mod ? n / c + 1 : n / c);
    const size_t start = (mod > 0 && index < mod) ? index * average : index * average + mod;
    if (start >= n) {
        return result;
    }
    const size_t range = std::min(average, n - start);
    for (size_t i = 0; i < range; ++i) {
        result.push_back(all[(start + i) % n]);
    }
    return result;
}

}  // namespace comet::client
