#pragma once
// Collector: one poll of the cluster into a ClusterSnapshot. Asks the name server for clusters,
// broker groups and topics, every member for its runtime info (in parallel, so a hung broker
// costs one RPC timeout per poll), and each group's answering master for its config (the
// durability contract), topic stats, consumer offsets and consume stats. Members the name
// server stops listing (a killed broker is unregistered when its connection closes) are kept,
// probed and shown as not registered until they have been silent for `forget_after`.
//
// Owner: DashboardService. Threads: collect() from one thread at a time (the polling thread);
// it starts and joins one short-lived thread per member for runtime_info().

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "dashboard/cluster_source.h"
#include "dashboard/snapshot.h"

namespace comet::dashboard {

struct CollectorOptions {
    // A member neither registered nor answering for this long is dropped from the view.
    std::chrono::milliseconds forget_after{std::chrono::minutes(10)};
    // Topics beyond this many (by name) are listed without routes or stats.
    size_t max_topics = 500;
};

class Collector {
public:
    explicit Collector(ClusterSource& source, CollectorOptions options = {});

    // Requires: not called concurrently. `now_ms`: wall clock, stamped on the snapshot.
    ClusterSnapshot collect(int64_t now_ms);

private:
    struct Known {
        std::string cluster;
        int64_t broker_id = -1;
        std::string role;
        // The last answer's descriptive fields, shown while the member is down.
        std::string version;
        std::string broker_role;
        std::string dledger_role;
        std::string dledger_id;
        bool registered = false;  // in the last answer of the name server
        int64_t last_registered_ms = 0;
        int64_t last_seen_ms = 0;
    };
    using GroupKey = std::pair<std::string, std::string>;  // (cluster, brokerName)
    using Groups = std::map<GroupKey, GroupView>;
    using RuntimeByAddr = std::map<std::string, KvMap>;  // members that answered
    // What the group step learned, for the topic and consumer group steps.
    struct Masters {
        std::map<std::string, DurabilityView> durability;  // brokerName -> contract
        std::map<std::string, std::string> master_of;      // brokerName -> answering master
    };

    // The steps of collect(), in order.
    Groups list_members(const protocol::ClusterInfo& info, bool namesrv_answered, int64_t now_ms);
    RuntimeByAddr poll_runtime_info(Groups& groups, int64_t now_ms);
    Masters summarize_groups(Groups& groups, RuntimeByAddr& runtime, int64_t now_ms,
                             ClusterSnapshot* snap);
    void collect_topics(const protocol::ClusterInfo& info, const Masters& masters,
                        ClusterSnapshot* snap);
    void collect_consumer_groups(const Masters& masters, ClusterSnapshot* snap);

    // Helpers of the steps.
    void add_remembered_members(const std::set<std::pair<std::string, std::string>>& registered,
                                bool namesrv_answered, int64_t now_ms, Groups* groups);
    void remember_members(GroupView& g, const RuntimeByAddr& runtime, int64_t now_ms);
    void poll_topic(const Masters& masters, TopicView* t);
    void add_consume_stats(const std::string& addr, const std::string& group,
                           ConsumerGroupView* cg);

    ClusterSource& source_;
    CollectorOptions options_;
    uint64_t seq_ = 0;
    // (brokerName, addr) -> what was last known of a member.
    std::map<std::pair<std::string, std::string>, Known> known_;
};

// RocketMQ's system topics (TopicValidator), plus cluster and broker names registered as
// topics, and %RETRY% / %DLQ% topics.
bool is_system_topic(const std::string& topic, const protocol::ClusterInfo& info);

}  // namespace comet::dashboard
