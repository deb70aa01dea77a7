#include "client/admin_client.h"

#include <algorithm>
#include <future>

#include "client/consumer_api.h"
#include "protocol/admin_headers.h"
#include "protocol/message_decoder.h"
#include "protocol/message_id.h"
#include "protocol/namesrv_headers.h"
#include "protocol/pull_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::client {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;

AdminClient::AdminClient(ClientConfig config)
    : instance_(std::make_unique<MqClientInstance>(std::move(config))) {}

AdminClient::~AdminClient() { shutdown(); }

Status AdminClient::start() { return instance_->start(); }

void AdminClient::shutdown() { instance_->shutdown(); }

Result<protocol::RemotingCommand> AdminClient::call_ok(const std::string& addr,
                                                       protocol::RemotingCommand req,
                                                       std::string_view what) {
    COMET_ASSIGN_OR_RETURN(auto resp, instance_->invoke(addr, std::move(req)));
    if (resp.code != RC::kSuccess) {
        return response_error(fmt::format("{} at {}", what, addr), resp);
    }
    return resp;
}

Result<protocol::ClusterInfo> AdminClient::cluster_info() {
    COMET_ASSIGN_OR_RETURN(auto resp, instance_->invoke_namesrv(
                                          protocol::RemotingCommand::request(
                                              Req::kGetBrokerClusterInfo)));
    if (resp.code != RC::kSuccess) {
        return response_error("cluster info", resp);
    }
    return protocol::ClusterInfo::decode(resp.body);
}

Result<std::vector<std::string>> AdminClient::topic_list() {
    COMET_ASSIGN_OR_RETURN(auto resp, instance_->invoke_namesrv(protocol::RemotingCommand::request(
                                          Req::kGetAllTopicListFromNameserver)));
    if (resp.code != RC::kSuccess) {
        return response_error("topic list", resp);
    }
    COMET_ASSIGN_OR_RETURN(auto list, protocol::TopicList::decode(resp.body));
    std::sort(list.topic_list.begin(), list.topic_list.end());
    return list.topic_list;
}

Result<protocol::TopicRouteData> AdminClient::topic_route(const std::string& topic) {
    return instance_->fetch_route(topic);
}

Result<std::vector<std::string>> AdminClient::cluster_master_addrs(const std::string& cluster) {
    COMET_ASSIGN_OR_RETURN(auto info, cluster_info());
    auto it = info.cluster_addr_table.find(cluster);
    if (it == info.cluster_addr_table.end()) {
        return Status::error(Errc::kNotFound, "cluster {} not found", cluster);
    }
    std::vector<std::string> out;
    for (const auto& name : it->second) {
        auto b = info.broker_addr_table.find(name);
        if (b == info.broker_addr_table.end()) {
            continue;
        }
        auto m = b->second.broker_addrs.find(0);
        if (m != b->second.broker_addrs.end()) {
            out.push_back(m->second);
        }
    }
    return out;
}

Status AdminClient::create_topic(const std::string& broker_addr, const std::string& topic,
                                 const TopicCreateOptions& o) {
    if (topic.empty() || o.read_queue_nums <= 0 || o.write_queue_nums <= 0) {
        return Status::error(Errc::kInvalidArgument, "bad topic name or queue numbers");
    }
    protocol::CreateTopicRequestHeader h;
    h.topic = topic;
    h.default_topic = kAutoCreateTopicKey;
    h.read_queue_nums = o.read_queue_nums;
    h.write_queue_nums = o.write_queue_nums;
    h.perm = o.perm;
    h.topic_filter_type = "SINGLE_TAG";
    h.order = o.order;
    auto req = protocol::RemotingCommand::request(Req::kUpdateAndCreateTopic);
    h.to_ext(req);
    return call_ok(broker_addr, std::move(req), "create topic " + topic).status();
}

Status AdminClient::create_topic_in_cluster(const std::string& cluster, const std::string& topic,
                                            const TopicCreateOptions& options) {
    COMET_ASSIGN_OR_RETURN(auto addrs, cluster_master_addrs(cluster));
    if (addrs.empty()) {
        return Status::error(Errc::kNotFound, "cluster {} has no master", cluster);
    }
    for (const auto& a : addrs) {
        COMET_RETURN_IF_ERROR(create_topic(a, topic, options));
    }
    return Status::ok();
}

Status AdminClient::delete_topic(const std::string& cluster, const std::string& topic) {
    COMET_ASSIGN_OR_RETURN(auto addrs, cluster_master_addrs(cluster));
    for (const auto& a : addrs) {
        protocol::DeleteTopicRequestHeader h;
        h.topic = topic;
        auto req = protocol::RemotingCommand::request(Req::kDeleteTopicInBroker);
        h.to_ext(req);
        COMET_RETURN_IF_ERROR(call_ok(a, std::move(req), "delete topic " + topic).status());
    }
    for (const auto& ns : instance_->namesrv_addrs()) {
        protocol::DeleteTopicFromNamesrvRequestHeader h;
        h.topic = topic;
        auto req = protocol::RemotingCommand::request(Req::kDeleteTopicInNamesrv);
        h.to_ext(req);
        COMET_RETURN_IF_ERROR(call_ok(ns, std::move(req), "delete topic " + topic).status());
    }
    return Status::ok();
}

Result<protocol::TopicStatsTable> AdminClient::topic_stats(const std::string& topic) {
    COMET_ASSIGN_OR_RETURN(auto route, instance_->fetch_route(topic));
    protocol::TopicStatsTable all;
    for (const auto& bd : route.broker_datas) {
        auto m = bd.broker_addrs.find(0);
        if (m == bd.broker_addrs.end()) {
            continue;
        }
        protocol::GetTopicStatsInfoRequestHeader h;
        h.topic = topic;
        auto req = protocol::RemotingCommand::request(Req::kGetTopicStatsInfo);
        h.to_ext(req);
        COMET_ASSIGN_OR_RETURN(auto resp, call_ok(m->second, std::move(req), "topic stats"));
        COMET_ASSIGN_OR_RETURN(auto t, protocol::TopicStatsTable::decode(resp.body));
        all.offset_table.insert(t.offset_table.begin(), t.offset_table.end());
        all.topic_put_tps += t.topic_put_tps;
    }
    return all;
}

Result<std::map<std::string, std::string>> AdminClient::broker_runtime_info(
    const std::string& broker_addr) {
    COMET_ASSIGN_OR_RETURN(
        auto resp, call_ok(broker_addr, protocol::RemotingCommand::request(Req::kGetBrokerRuntimeInfo),
                           "broker runtime info"));
    COMET_ASSIGN_OR_RETURN(auto kv, protocol::KvTable::decode(resp.body));
    return kv.table;
}

Result<std::string> AdminClient::broker_epoch_cache(const std::string& broker_addr) {
    COMET_ASSIGN_OR_RETURN(
        auto resp, call_ok(broker_addr, protocol::RemotingCommand::request(Req::kGetBrokerEpochCache),
                           "broker epoch cache"));
    return resp.body;
}

Result<std::map<std::string, std::string>> AdminClient::broker_config(
    const std::string& broker_addr) {
    COMET_ASSIGN_OR_RETURN(
        auto resp, call_ok(broker_addr, protocol::RemotingCommand::request(Req::kGetBrokerConfig),
                           "get broker config"));
    return protocol::parse_properties_text(resp.body);
}

Status AdminClient::update_broker_config(const std::string& broker_addr,
                                         const std::map<std::string, std::string>& properties) {
    auto req = protocol::RemotingCommand::request(Req::kUpdateBrokerConfig);
    req.body = protocol::encode_properties_text(properties);
    return call_ok(broker_addr, std::move(req), "update broker config").status();
}

Status AdminClient::update_subscription_group(const std::string& broker_addr,
                                              const protocol::SubscriptionGroupConfig& config) {
    auto req = protocol::RemotingCommand::request(Req::kUpdateAndCreateSubscriptionGroup);
    req.body = config.encode();
    return call_ok(broker_addr, std::move(req), "update subscription group").status();
}

Result<protocol::ConsumeStats> AdminClient::consume_stats(const std::string& group,
                                                          const std::optional<std::string>& topic) {
    COMET_ASSIGN_OR_RETURN(auto route, instance_->fetch_route(topic ? *topic : retry_topic(group)));
    protocol::ConsumeStats all;
    for (const auto& bd : route.broker_datas) {
        auto m = bd.broker_addrs.find(0);
        if (m == bd.broker_addrs.end()) {
            continue;
        }
        protocol::GetConsumeStatsRequestHeader h;
        h.consumer_group = group;
        h.topic = topic;
        auto req = protocol::RemotingCommand::request(Req::kGetConsumeStats);
        h.to_ext(req);
        COMET_ASSIGN_OR_RETURN(auto resp, call_ok(m->second, std::move(req), "consume stats"));
        COMET_ASSIGN_OR_RETURN(auto s, protocol::ConsumeStats::decode(resp.body));
        all.offset_table.insert(s.offset_table.begin(), s.offset_table.end());
        all.consume_tps += s.consume_tps;
    }
    return all;
}

Result<protocol::ConsumerConnection> AdminClient::consumer_connection(const std::string& group,
                                                                      const std::string& topic) {
    COMET_ASSIGN_OR_RETURN(auto route, instance_->fetch_route(topic));
    Status last = Status::error(Errc::kNotFound, "topic {} has no master", topic);
    for (const auto& bd : route.broker_datas) {
        auto m = bd.broker_addrs.find(0);
        if (m == bd.broker_addrs.end()) {
            continue;
        }
        protocol::GetConsumerConnectionListRequestHeader h;
        h.consumer_group = group;
        auto req = protocol::RemotingCommand::request(Req::kGetConsumerConnectionList);
        h.to_ext(req);
        auto resp = call_ok(m->second, std::move(req), "consumer connection");
        if (!resp.is_ok()) {
            last = resp.status();
            continue;
        }
        return protocol::ConsumerConnection::decode(resp->body);
    }
    return last;
}

Result<MessageExt> AdminClient::query_msg_by_id(const std::string& offset_msg_id) {
    COMET_ASSIGN_OR_RETURN(auto id, protocol::decode_offset_msg_id(offset_msg_id));
    protocol::ViewMessageRequestHeader h;
    h.offset = id.physical_offset;
    auto req = protocol::RemotingCommand::request(Req::kViewMessageById);
    h.to_ext(req);
    COMET_ASSIGN_OR_RETURN(auto resp,
                           call_ok(id.store_host.to_string(), std::move(req), "view message"));
    return protocol::decode_message(resp.body);
}

Result<std::vector<MessageExt>> AdminClient::query_msg_by_key(const std::string& topic,
                                                              const std::string& key,
                                                              int32_t max_num, int64_t begin_ms,
                                                              int64_t end_ms) {
    COMET_ASSIGN_OR_RETURN(auto route, instance_->fetch_route(topic));
    std::vector<MessageExt> out;
    for (const auto& bd : route.broker_datas) {
        auto m = bd.broker_addrs.find(0);
        if (m == bd.broker_addrs.end()) {
            continue;
        }
        protocol::QueryMessageRequestHeader h;
        h.topic = topic;
        h.key = key;
        h.max_num = max_num;
        h.begin_timestamp = begin_ms;
        h.end_timestamp = end_ms;
        auto req = protocol::RemotingCommand::request(Req::kQueryMessage);
        h.to_ext(req);
        COMET_ASSIGN_OR_RETURN(auto resp, instance_->invoke(m->second, std::move(req)));
        if (resp.code == RC::kQueryNotFound) {
            continue;
        }
        if (resp.code != RC::kSuccess) {
            return response_error("query message by key", resp);
        }
        COMET_ASSIGN_OR_RETURN(auto msgs, protocol::decode_messages(resp.body));
        for (auto& msg : msgs) {
            // The index matches hashes; keep only real key matches (Java does the same).
            const std::string keys = msg.keys();
            bool match = msg.unique_id() == key;
            size_t pos = 0;
            while (!match && pos <= keys.size()) {
                size_t sp = keys.find(' ', pos);
                if (keys.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos) == key) {
                    match = true;
                }
                if (sp == std::string::npos) {
                    break;
                }
                pos = sp + 1;
            }
            if (match && msg.topic == topic) {
                out.push_back(std::move(msg));
            }
        }
    }
    if (out.empty()) {
        return Status::error(Errc::kNotFound, "no message of topic {} with key {}", topic, key);
    }
    return out;
}

Result<MessageExt> AdminClient::query_msg_by_offset(const MessageQueue& mq, int64_t offset) {
    COMET_RETURN_IF_ERROR(master_addr(*instance_, mq.broker_name, mq.topic).status());
    const auto sub = build_subscription(mq.topic, "*", 0);
    protocol::PullMessageRequestHeader h;
    h.consumer_group = "TOOLS_CONSUMER";
    h.topic = mq.topic;
    h.queue_id = mq.queue_id;
    h.queue_offset = offset;
    h.max_msg_nums = 1;
    h.sys_flag = protocol::kPullFlagSubscription;
    h.subscription = "*";
    h.expression_type = "TAG";
    h.broker_name = mq.broker_name;
    std::promise<Result<PullResult>> done;
    auto fut = done.get_future();
    pull_async(*instance_, h, sub, mq.broker_name, instance_->config().rpc_timeout,
               [&done](Result<PullResult> r) { done.set_value(std::move(r)); });
    COMET_ASSIGN_OR_RETURN(auto r, fut.get());
    if (r.status != PullStatus::kFound || r.messages.empty()) {
        return Status::error(Errc::kNotFound, "no message at offset {} of {}:{}:{} ({})", offset,
                             mq.topic, mq.broker_name, mq.queue_id, pull_status_name(r.status));
    }
    return r.messages.front();
}

}  // namespace comet::client
