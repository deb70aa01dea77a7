#pragma once
// ClusterSource: the RocketMQ admin requests the dashboard's Collector needs, one call per
// request to one name server or broker. AdminSource (admin_source.h) sends them over the wire
// with client::AdminClient; unit tests answer them from tables.
// Threads: runtime_info() may be called from several threads at once (the Collector asks every
// member in parallel so a hung broker costs one timeout per poll, not one per member); the rest
// from the polling thread only.

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "protocol/admin_bodies.h"
#include "protocol/route_bodies.h"

namespace comet::dashboard {

using KvMap = std::map<std::string, std::string>;

class ClusterSource {
public:
    virtual ~ClusterSource() = default;
    // Name server: GET_BROKER_CLUSTER_INFO, GET_ALL_TOPIC_LIST_FROM_NAMESERVER,
    // GET_ROUTEINFO_BY_TOPIC.
    virtual Result<protocol::ClusterInfo> cluster_info() = 0;
    virtual Result<std::vector<std::string>> topic_list() = 0;
    virtual Result<protocol::TopicRouteData> topic_route(const std::string& topic) = 0;
    // Broker at `addr`: GET_BROKER_RUNTIME_INFO, GET_BROKER_CONFIG, GET_TOPIC_STATS_INFO,
    // GET_ALL_CONSUMER_OFFSET, GET_CONSUME_STATS (every topic of the group).
    virtual Result<KvMap> runtime_info(const std::string& addr) = 0;
    virtual Result<KvMap> broker_config(const std::string& addr) = 0;
    virtual Result<protocol::TopicStatsTable> topic_stats(const std::string& addr,
                                                          const std::string& topic) = 0;
    virtual Result<protocol::ConsumerOffsetSerializeWrapper> consumer_offsets(
        const std::string& addr) = 0;
    virtual Result<protocol::ConsumeStats> consume_stats(const std::string& addr,
                                                         const std::string& group) = 0;
};

}  // namespace comet::dashboard
