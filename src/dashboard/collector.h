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
