#pragma once
// FakeSource: a ClusterSource answering from tables, for the dashboard's unit tests. An address
// in `down` fails every broker request with kTimeout, as a SIGSTOPped broker does.

#include <set>
#include <string>

#include "dashboard/cluster_source.h"

namespace comet::dashboard::testing {

struct FakeSource : ClusterSource {
    protocol::ClusterInfo info;
    bool namesrv_down = false;
    std::vector<std::string> topics;
    std::map<std::string, protocol::TopicRouteData> routes;
    std::map<std::string, KvMap> runtime;
    std::map<std::string, KvMap> config;
    std::map<std::pair<std::string, std::string>, protocol::TopicStatsTable> stats;  // addr, topic
    std::map<std::string, protocol::ConsumerOffsetSerializeWrapper> offsets;
    std::map<std::pair<std::string, std::string>, protocol::ConsumeStats> consume;  // addr, group
    std::set<std::string> down;

    Result<protocol::ClusterInfo> cluster_info() override;
    Result<std::vector<std::string>> topic_list() override;
    Result<protocol::TopicRouteData> topic_route(const std::string& topic) override;
    Result<KvMap> runtime_info(const std::string& addr) override;
    Result<KvMap> broker_config(const std::string& addr) override;
    Result<protocol::TopicStatsTable> topic_stats(const std::string& addr,
                                                  const std::string& topic) override;
    Result<protocol::ConsumerOffsetSerializeWrapper> consumer_offsets(
        const std::string& addr) override;
    Result<protocol::ConsumeStats> consume_stats(const std::string& addr,
                                                 const std::string& group) override;

    // Registers `name` in `cluster` with brokerId -> addr.
    void add_group(const std::string& cluster, const std::string& name,
                   std::map<int64_t, std::string> addrs);
};

// A master's haConnectionInfo.N value.
std::string ha_connection(int64_t broker_id, int64_t diff, bool in_sync);

}  // namespace comet::dashboard::testing
