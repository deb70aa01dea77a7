#pragma once
// AdminSource: ClusterSource over client::AdminClient (the same RPCs as mqadmin's clusterList,
// brokerStatus, topicList, topicStatus, getBrokerConfig and consumerProgress, but per broker
// address so the Collector decides which member to ask).
// Owner: DashboardService. Threads: every call is synchronous and bounded by the client's
// rpc_timeout; thread-safe (AdminClient is).

#include <memory>
#include <string>

#include "client/admin_client.h"
#include "dashboard/cluster_source.h"

namespace comet::dashboard {

class AdminSource final : public ClusterSource {
public:
    explicit AdminSource(client::ClientConfig config);
    ~AdminSource() override;

    Status start();
    void shutdown();

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

private:
    Result<protocol::RemotingCommand> call_ok(const std::string& addr,
                                              protocol::RemotingCommand req, std::string_view what);
    std::unique_ptr<client::AdminClient> admin_;
};

}  // namespace comet::dashboard
