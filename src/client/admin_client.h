#pragma once
// AdminClient: the RPCs behind mqadmin (Java DefaultMQAdminExt / MQClientAPIImpl admin parts):
// topics (create, delete, list, route, stats), cluster list, broker runtime info and config,
// subscription groups, consumer progress (GET_CONSUME_STATS), message queries by offset id, key
// and queue offset. Every call is synchronous and bounded by config.rpc_timeout per RPC.
//
// Owner: the tool. Threads: thread-safe; do not call from a client callback.
// Errors: transport errors as kUnavailable / kTimeout; a non-success response as a Status whose
// message carries the RocketMQ code name and the broker's remark; bad bodies as kCorruption.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "client/client_config.h"
#include "client/client_types.h"
#include "client/mq_client_instance.h"
#include "protocol/admin_bodies.h"
#include "protocol/route_bodies.h"

namespace comet::client {

struct TopicCreateOptions {
    int32_t read_queue_nums = 8;
    int32_t write_queue_nums = 8;
    int32_t perm = protocol::kPermRead | protocol::kPermWrite;
    bool order = false;
};

class AdminClient {
public:
    explicit AdminClient(ClientConfig config);
    ~AdminClient();
    AdminClient(const AdminClient&) = delete;
    AdminClient& operator=(const AdminClient&) = delete;

    Status start();
    void shutdown();

    // Name server queries.
    Result<protocol::ClusterInfo> cluster_info();
    Result<std::vector<std::string>> topic_list();
    Result<protocol::TopicRouteData> topic_route(const std::string& topic);
    // Master addresses of a cluster (from cluster_info()).
    Result<std::vector<std::string>> cluster_master_addrs(const std::string& cluster);

    // Topic management. create_topic on one broker address; create_topic_in_cluster on every
    // master of the cluster. delete_topic removes it from the cluster's masters and the name
    // servers.
    Status create_topic(const std::string& broker_addr, const std::string& topic,
                        const TopicCreateOptions& options);
    Status create_topic_in_cluster(const std::string& cluster, const std::string& topic,
                                   const TopicCreateOptions& options);
    Status delete_topic(const std::string& cluster, const std::string& topic);
    // Min/max offsets of every queue of `topic` on every broker of its route.
    Result<protocol::TopicStatsTable> topic_stats(const std::string& topic);

    // Broker queries.
    Result<std::map<std::string, std::string>> broker_runtime_info(const std::string& broker_addr);
    Result<std::map<std::string, std::string>> broker_config(const std::string& broker_addr);
    // GET_BROKER_EPOCH_CACHE (controller mode): the EpochEntryCache JSON body.
    Result<std::string> broker_epoch_cache(const std::string& broker_addr);
    Status update_broker_config(const std::string& broker_addr,
                                const std::map<std::string, std::string>& properties);
    Status update_subscription_group(const std::string& broker_addr,
                                     const protocol::SubscriptionGroupConfig& config);
    // Consumer progress of `group` (optionally one topic), merged over the brokers of the
    // topic (or of the group's retry topic when no topic is given).
    Result<protocol::ConsumeStats> consume_stats(const std::string& group,
                                                 const std::optional<std::string>& topic = {});
    Result<protocol::ConsumerConnection> consumer_connection(const std::string& group,
                                                             const std::string& topic);

    // Message queries.
    Result<MessageExt> query_msg_by_id(const std::string& offset_msg_id);
    Result<std::vector<MessageExt>> query_msg_by_key(const std::string& topic,
                                                     const std::string& key, int32_t max_num,
                                                     int64_t begin_ms, int64_t end_ms);
    Result<MessageExt> query_msg_by_offset(const MessageQueue& mq, int64_t offset);

    MqClientInstance& instance() { return *instance_; }

private:
    Result<protocol::RemotingCommand> call_ok(const std::string& addr,
                                              protocol::RemotingCommand req,
                                              std::string_view what);
    std::unique_ptr<MqClientInstance> instance_;
};

}  // namespace comet::client
