#pragma once
// Producer-side view of a topic's route (Java TopicPublishInfo) and queue selection
// (Java MQFaultStrategy#selectOneMessageQueue). Built from a TopicRouteData; immutable except
// for the round-robin counter.
//
// Owner: the producer's route cache (shared_ptr, replaced on refresh). Threads: any.

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "client/client_types.h"
#include "client/latency_fault_tolerance.h"
#include "protocol/route_bodies.h"

namespace comet::client {

class TopicPublishInfo {
public:
    TopicPublishInfo(std::vector<MessageQueue> queues, bool order_topic)
        : queues_(std::move(queues)), order_topic_(order_topic) {}

    const std::vector<MessageQueue>& queues() const { return queues_; }
    bool ok() const { return !queues_.empty(); }
    bool order_topic() const { return order_topic_; }

    // Round robin over every queue, skipping `last_broker` (the broker the previous attempt
    // failed on) and brokers `faults` marks unavailable, while another choice exists.
    // Requires: ok().
    MessageQueue select(const std::string& last_broker, const LatencyFaultTolerance* faults);

    // Writable queues of `topic` on brokers that have a master (Java
    // topicRouteData2TopicPublishInfo). Sorted by broker name, then queue id.
    static std::shared_ptr<TopicPublishInfo> from_route(const std::string& topic,
                                                        const protocol::TopicRouteData& route);
    // Readable queues (Java topicRouteData2TopicSubscribeInfo), sorted.
    static std::vector<MessageQueue> subscribe_queues(const std::string& topic,
                                                      const protocol::TopicRouteData& route);

private:
    const std::vector<MessageQueue> queues_;
    const bool order_topic_;
    std::atomic<uint32_t> send_which_queue_{0};
};

// AllocateMessageQueueAveragely: the contiguous share of `all` that consumer `cid` gets among
// `cids`. Both lists must be sorted identically on every consumer. Empty when cid is not in
// cids.
std::vector<MessageQueue> allocate_averagely(const std::string& cid,
                                             const std::vector<MessageQueue>& all,
                                             const std::vector<std::string>& cids);

}  // namespace comet::client
