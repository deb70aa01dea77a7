#pragma once
// DefaultRequestProcessor: answers every name server request code (Java namesrv
// DefaultRequestProcessor + ClientRequestProcessor). handle() is the whole logic and touches no
// socket, so tests call it directly; process() adapts it to net::RequestProcessor.
//
// Codes: PUT/GET/DELETE_KV_CONFIG, GET_KVLIST_BY_NAMESPACE, REGISTER_BROKER (JSON or compressed
// body, CRC check), UNREGISTER_BROKER, GET_ROUTEINFO_BY_TOPIC, GET_BROKER_CLUSTER_INFO,
// GET_ALL_TOPIC_LIST_FROM_NAMESERVER, GET_TOPICS_BY_CLUSTER, DELETE_TOPIC_IN_NAMESRV,
// GET_BROKER_MEMBER_GROUP, QUERY_DATA_VERSION, BROKER_HEARTBEAT, UPDATE/GET_NAMESRV_CONFIG.
// Bad requests get RocketMQ's answer: SYSTEM_ERROR with the header decoding error ("the custom
// field brokerName is null"), TOPIC_NOT_EXIST / QUERY_NOT_FOUND with RocketMQ's remarks.
//
// Owner: NamesrvController. Threads: any executor thread; all state lives in the managers,
// which lock themselves. The referenced objects must outlive the processor.

#include <functional>
#include <vector>

#include "base/config.h"
#include "namesrv/kv_config_manager.h"
#include "namesrv/namesrv_config.h"
#include "namesrv/route_info_manager.h"
#include "net/processor.h"
#include "protocol/remoting_command.h"

namespace comet::namesrv {

// NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG
inline constexpr const char* kNamespaceOrderTopicConfig = "ORDER_TOPIC_CONFIG";

class DefaultRequestProcessor final : public net::RequestProcessor {
public:
    DefaultRequestProcessor(RouteInfoManager& routes, KvConfigManager& kv,
                            const NamesrvConfig& config, ConfigRegistry& registry);

    // The response to `request` (for one-way requests the caller drops it). `channel`
    // identifies the connection a REGISTER_BROKER arrived on (0 = none).
    protocol::RemotingCommand handle(const protocol::RemotingCommand& request, ChannelId channel);

    void process(const net::ConnectionPtr& conn, protocol::RemotingCommand request,
                 net::Responder respond) override;

    // Called after REGISTER_BROKER / UNREGISTER_BROKER were applied (the controller sends the
    // queued NOTIFY_MIN_BROKER_ID_CHANGE requests). Set before serving.
    void set_after_membership_change(std::function<void()> hook) {
        after_membership_change_ = std::move(hook);
    }

    // Request codes handle() answers.
    static std::vector<int32_t> handled_codes();

private:
    using Cmd = protocol::RemotingCommand;
    Cmd put_kv_config(const Cmd& req);
    Cmd get_kv_config(const Cmd& req);
    Cmd delete_kv_config(const Cmd& req);
    Cmd get_kv_list_by_namespace(const Cmd& req);
    Cmd register_broker(const Cmd& req, ChannelId channel);
    Cmd unregister_broker(const Cmd& req);
    Cmd get_route_info_by_topic(const Cmd& req);
    Cmd get_broker_cluster_info(const Cmd& req);
    Cmd get_all_topic_list(const Cmd& req);
    Cmd get_topics_by_cluster(const Cmd& req);
    Cmd operate_write_perm(const Cmd& req);  // WIPE_ / ADD_WRITE_PERM_OF_BROKER
    Cmd get_system_topic_list(const Cmd& req);
    Cmd delete_topic_in_namesrv(const Cmd& req);
    Cmd get_broker_member_group(const Cmd& req);
    Cmd query_data_version(const Cmd& req);
    Cmd broker_heartbeat(const Cmd& req);
    Cmd update_config(const Cmd& req);
    Cmd get_config(const Cmd& req);

    RouteInfoManager& routes_;
    KvConfigManager& kv_;
    const NamesrvConfig& config_;
    ConfigRegistry& registry_;
    std::function<void()> after_membership_change_;
};

}  // namespace comet::namesrv
