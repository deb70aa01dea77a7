#include "namesrv/default_request_processor.h"

#include "base/crc32.h"
#include "base/logging.h"
#include "base/properties.h"
#include "protocol/ha_headers.h"
#include "protocol/namesrv_headers.h"
#include "protocol/route_bodies.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::namesrv {

namespace rc = protocol::RequestCode;
namespace rs = protocol::ResponseCode;
using protocol::RemotingCommand;

namespace {

RemotingCommand error(const RemotingCommand& req, int32_t code, std::string remark) {
    return RemotingCommand::response_to(req, code, std::move(remark));
}

RemotingCommand ok(const RemotingCommand& req) {
    return RemotingCommand::response_to(req, rs::kSuccess);
}

// Header decode failures answer SYSTEM_ERROR with the decoder's message, as Java's
// RemotingCommandException does.
RemotingCommand bad_header(const RemotingCommand& req, const Status& st) {
    return error(req, rs::kSystemError, st.message());
}

// Moves a decoded REGISTER_BROKER body into the request: topics keyed by their topicName (the
// table key when a config names none); a topic without any name is refused.
Status take_topic_configs(protocol::RegisterBrokerBody* body, RegisterBrokerRequest* r) {
    auto& wrapper = body->topic_config_serialize_wrapper;
    for (auto& [name, tc] : wrapper.topic_config_table) {
        if (tc.topic_name.empty()) {
            tc.topic_name = name;
        }
        if (tc.topic_name.empty()) {
            return Status::error(Errc::kInvalidArgument, "topicConfigTable.{}: empty topicName",
                                 name);
        }
        std::string key = tc.topic_name;
        r->topic_config_table[std::move(key)] = std::move(tc);
    }
    r->data_version = wrapper.data_version;
    r->filter_server_list = std::move(body->filter_server_list);
    return Status::ok();
}

// TopicList body; brokerAddr is left out when empty (null in Java).
std::string topic_list_body(std::vector<std::string> topics, const std::string& broker_addr) {
    protocol::TopicList list;
    list.topic_list = std::move(topics);
    if (!broker_addr.empty()) {
        list.broker_addr = broker_addr;
    }
    return list.encode();
}

}  // namespace

DefaultRequestProcessor::DefaultRequestProcessor(RouteInfoManager& routes, KvConfigManager& kv,
                                                 const NamesrvConfig& config,
                                                 ConfigRegistry& registry)
    : routes_(routes), kv_(kv), config_(config), registry_(registry) {}

std::vector<int32_t> DefaultRequestProcessor::handled_codes() {
    return {rc::kPutKvConfig,         rc::kGetKvConfig,
            rc::kDeleteKvConfig,      rc::kGetKvlistByNamespace,
            rc::kRegisterBroker,      rc::kUnregisterBroker,
            rc::kGetRouteinfoByTopic, rc::kGetBrokerClusterInfo,
            rc::kGetAllTopicListFromNameserver, rc::kGetTopicsByCluster,
            rc::kDeleteTopicInNamesrv, rc::kGetBrokerMemberGroup,
            rc::kQueryDataVersion,    rc::kBrokerHeartbeat,
            rc::kUpdateNamesrvConfig, rc::kGetNamesrvConfig,
            rc::kWipeWritePermOfBroker, rc::kAddWritePermOfBroker,
            rc::kGetSystemTopicListFromNs};
}

RemotingCommand DefaultRequestProcessor::handle(const RemotingCommand& req, ChannelId channel) {
    switch (req.code) {
        case rc::kPutKvConfig: return put_kv_config(req);
        case rc::kGetKvConfig: return get_kv_config(req);
        case rc::kDeleteKvConfig: return delete_kv_config(req);
        case rc::kGetKvlistByNamespace: return get_kv_list_by_namespace(req);
        case rc::kRegisterBroker: return register_broker(req, channel);
        case rc::kUnregisterBroker: return unregister_broker(req);
        case rc::kGetRouteinfoByTopic: return get_route_info_by_topic(req);
        case rc::kGetBrokerClusterInfo: return get_broker_cluster_info(req);
        case rc::kGetAllTopicListFromNameserver: return get_all_topic_list(req);
        case rc::kGetTopicsByCluster: return get_topics_by_cluster(req);
        case rc::kDeleteTopicInNamesrv: return delete_topic_in_namesrv(req);
        case rc::kGetBrokerMemberGroup: return get_broker_member_group(req);
        case rc::kQueryDataVersion: return query_data_version(req);
        case rc::kBrokerHeartbeat: return broker_heartbeat(req);
        case rc::kUpdateNamesrvConfig: return update_config(req);
        case rc::kGetNamesrvConfig: return get_config(req);
        case rc::kWipeWritePermOfBroker: return operate_write_perm(req);
        case rc::kAddWritePermOfBroker: return operate_write_perm(req);
        case rc::kGetSystemTopicListFromNs: return get_system_topic_list(req);
        default:
            return error(req, rs::kRequestCodeNotSupported,
                         fmt::format(" request type {} not supported", req.code));
    }
}

void DefaultRequestProcessor::process(const net::ConnectionPtr& conn, RemotingCommand request,
                                      net::Responder respond) {
    RemotingCommand response = handle(request, conn ? conn->id() : 0);
    if (!respond.is_oneway()) {
        respond(std::move(response));
    } else if (response.code != rs::kSuccess) {
        spdlog::warn("one-way {} from {} failed: {} {}", request.code,
                     conn ? conn->remote_address() : std::string("?"), response.code,
                     response.remark.value_or(""));
    }
}

RemotingCommand DefaultRequestProcessor::put_kv_config(const RemotingCommand& req) {
    auto h = protocol::PutKvConfigRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return bad_header(req, h.status());
    }
    Status st = kv_.put(h->name_space, h->key, h->value);
    if (!st.is_ok()) {
        return error(req, rs::kSystemError, st.message());
    }
    return ok(req);
}

RemotingCommand DefaultRequestProcessor::get_kv_config(const RemotingCommand& req) {
    auto h = protocol::GetKvConfigRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return bad_header(req, h.status());
    }
    std::optional<std::string> v = kv_.get(h->name_space, h->key);
    if (!v) {
        return error(req, rs::kQueryNotFound,
                     fmt::format("No config item, Namespace: {} Key: {}", h->name_space, h->key));
    }
    RemotingCommand resp = ok(req);
    protocol::GetKvConfigResponseHeader out;
    out.value = *v;
    out.to_ext(resp);
    return resp;
}

RemotingCommand DefaultRequestProcessor::delete_kv_config(const RemotingCommand& req) {
    auto h = protocol::DeleteKvConfigRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return bad_header(req, h.status());
    }
    Status st = kv_.remove(h->name_space, h->key);
    if (!st.is_ok()) {
        return error(req, rs::kSystemError, st.message());
    }
    return ok(req);
}

RemotingCommand DefaultRequestProcessor::get_kv_list_by_namespace(const RemotingCommand& req) {
    auto h = protocol::GetKvListByNamespaceRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return bad_header(req, h.status());
    }
    auto table = kv_.list(h->name_space);
    if (!table) {
        return error(req, rs::kQueryNotFound,
                     fmt::format("No config item, Namespace: {}", h->name_space));
    }
    RemotingCommand resp = ok(req);
    resp.body = protocol::KvTable{*table}.encode();
    return resp;
}

RemotingCommand DefaultRequestProcessor::register_broker(const RemotingCommand& req,
                                                         ChannelId channel) {
    auto h = protocol::RegisterBrokerRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return bad_header(req, h.status());
    }
    if (h->body_crc32 != 0) {
        const int32_t crc = static_cast<int32_t>(crc32(req.body) & 0x7FFFFFFF);
        if (crc != h->body_crc32) {
            spdlog::warn("register broker {} {}: body crc32 {} does not match header {}",
                         h->broker_name, h->broker_addr, crc, h->body_crc32);
            return error(req, rs::kSystemError, "crc32 not match");
        }
    }
    RegisterBrokerRequest r;
    r.cluster_name = h->cluster_name;
    r.broker_addr = h->broker_addr;
    r.broker_name = h->broker_name;
    r.broker_id = h->broker_id;
    r.ha_server_addr = h->ha_server_addr;
    r.heartbeat_timeout_millis = h->heartbeat_timeout_millis;
    r.enable_acting_master = h->enable_acting_master.value_or(false);
    r.zone_name = h->zone_name;
    r.channel = channel;
    if (!req.body.empty()) {
        Result<protocol::RegisterBrokerBody> body =
            protocol::RegisterBrokerBody::decode_body(req.body, h->compressed, req.version);
        Status topics = body.is_ok() ? take_topic_configs(&body.value(), &r) : body.status();
        if (!topics.is_ok()) {
            spdlog::warn("register broker {} {}: bad body: {}", h->broker_name, h->broker_addr,
                         topics.message());
            return error(req, rs::kSystemError,
                         fmt::format("register broker body: {}", topics.message()));
        }
    }
    Result<RegisterBrokerResult> result = routes_.register_broker(r);
    if (after_membership_change_) {
        after_membership_change_();
    }
    if (!result.is_ok()) {
        return error(req, rs::kSystemError,
                     fmt::format("register broker failed: {}", result.status().message()));
    }
    RemotingCommand resp = ok(req);
    protocol::RegisterBrokerResponseHeader out;
    if (!result->ha_server_addr.empty()) {
        out.ha_server_addr = result->ha_server_addr;
    }
    if (!result->master_addr.empty()) {
        out.master_addr = result->master_addr;
    }
    out.to_ext(resp);
    if (config_.return_order_topic_config_to_broker.load()) {
        if (auto table = kv_.list(kNamespaceOrderTopicConfig)) {
            resp.body = protocol::KvTable{*table}.encode();
        }
    }
    return resp;
}

RemotingCommand DefaultRequestProcessor::unregister_broker(const RemotingCommand& req) {
    auto h = protocol::UnRegisterBrokerRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return bad_header(req, h.status());
    }
    routes_.unregister_broker(h->cluster_name, h->broker_addr, h->broker_name, h->broker_id);
    if (after_membership_change_) {
        after_membership_change_();
    }
    return ok(req);
}

RemotingCommand DefaultRequestProcessor::get_route_info_by_topic(const RemotingCommand& req) {
    auto h = protocol::GetRouteInfoRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return bad_header(req, h.status());
    }
    routes_.set_support_acting_master(config_.support_acting_master.load());
    std::optional<TopicRouteData> route = routes_.pick_topic_route_data(h->topic);
    if (!route) {
        return error(req, rs::kTopicNotExist,
                     fmt::format("No topic route info in name server for the topic: {}\nSee "
                                 "http://rocketmq.apache.org/docs/faq/ for further details.",
                                 h->topic));
    }
    if (config_.order_message_enable.load()) {
        route->order_topic_conf = kv_.get(kNamespaceOrderTopicConfig, h->topic);
    }
    RemotingCommand resp = ok(req);
    resp.body = route->encode(
        protocol::route_key_style(req.version, h->accept_standard_json_only.value_or(false)));
    return resp;
}

RemotingCommand DefaultRequestProcessor::get_broker_cluster_info(const RemotingCommand& req) {
    RemotingCommand resp = ok(req);
    resp.body = routes_.get_all_cluster_info().encode();
    return resp;
}

RemotingCommand DefaultRequestProcessor::get_all_topic_list(const RemotingCommand& req) {
    if (!config_.enable_all_topic_list.load()) {
        return error(req, rs::kSystemError, "disable");
    }
    RemotingCommand resp = ok(req);
    resp.body = topic_list_body(routes_.get_all_topic_list(), {});
    return resp;
}

RemotingCommand DefaultRequestProcessor::get_topics_by_cluster(const RemotingCommand& req) {
    const std::string* cluster = req.ext("cluster");
    if (cluster == nullptr) {
        return error(req, rs::kSystemError, "the custom field cluster is null");
    }
    RemotingCommand resp = ok(req);
    resp.body = topic_list_body(routes_.get_topics_by_cluster(*cluster), {});
    return resp;
}

RemotingCommand DefaultRequestProcessor::operate_write_perm(const RemotingCommand& req) {
    const std::string* broker_name = req.ext("brokerName");
    if (broker_name == nullptr) {
        return error(req, rs::kSystemError, "the custom field brokerName is null");
    }
    const bool wipe = req.code == rc::kWipeWritePermOfBroker;
    const int count = wipe ? routes_.wipe_write_perm_of_broker(*broker_name)
                           : routes_.add_write_perm_of_broker(*broker_name);
    spdlog::info("{} write perm of broker[{}]: {} topics", wipe ? "wipe" : "add", *broker_name,
                 count);
    RemotingCommand resp = ok(req);
    resp.set_ext(wipe ? "wipeTopicCount" : "addTopicCount", std::to_string(count));
    return resp;
}

RemotingCommand DefaultRequestProcessor::get_system_topic_list(const RemotingCommand& req) {
    std::string broker_addr;
    std::vector<std::string> topics = routes_.get_system_topic_list(&broker_addr);
    RemotingCommand resp = ok(req);
    resp.body = topic_list_body(std::move(topics), broker_addr);
    return resp;
}

RemotingCommand DefaultRequestProcessor::delete_topic_in_namesrv(const RemotingCommand& req) {
    auto h = protocol::DeleteTopicFromNamesrvRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return bad_header(req, h.status());
    }
    routes_.delete_topic(h->topic, h->cluster_name);
    return ok(req);
}

RemotingCommand DefaultRequestProcessor::get_broker_member_group(const RemotingCommand& req) {
    auto h = protocol::GetBrokerMemberGroupRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return bad_header(req, h.status());
    }
    RemotingCommand resp = ok(req);
    resp.body = protocol::GetBrokerMemberGroupResponseBody{
        routes_.get_broker_member_group(h->cluster_name, h->broker_name)}
                    .encode();
    return resp;
}

RemotingCommand DefaultRequestProcessor::query_data_version(const RemotingCommand& req) {
    auto h = protocol::QueryDataVersionRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return bad_header(req, h.status());
    }
    DataVersion version;
    if (!req.body.empty()) {
        auto v = DataVersion::decode(req.body);
        if (!v.is_ok()) {
            return error(req, rs::kSystemError,
                         fmt::format("bad DataVersion body: {}", v.status().message()));
        }
        version = *v;
    }
    const bool changed =
        routes_.is_broker_topic_config_changed(h->cluster_name, h->broker_addr, version);
    if (!changed) {
        routes_.update_broker_info_update_timestamp(h->cluster_name, h->broker_addr);
    }
    RemotingCommand resp = ok(req);
    protocol::QueryDataVersionResponseHeader out;
    out.changed = changed;
    out.to_ext(resp);
    if (auto stored = routes_.query_broker_topic_config(h->cluster_name, h->broker_addr)) {
        resp.body = stored->encode();
    }
    return resp;
}

RemotingCommand DefaultRequestProcessor::broker_heartbeat(const RemotingCommand& req) {
    auto h = protocol::BrokerHeartbeatRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return bad_header(req, h.status());
    }
    routes_.update_broker_info_update_timestamp(h->cluster_name, h->broker_addr);
    return ok(req);
}

RemotingCommand DefaultRequestProcessor::update_config(const RemotingCommand& req) {
    if (req.body.empty()) {
        return error(req, rs::kSystemError, "UPDATE_NAMESRV_CONFIG without a body");
    }
    auto entries = parse_properties(req.body, "UPDATE_NAMESRV_CONFIG");
    if (!entries.is_ok()) {
        return error(req, rs::kSystemError,
                     fmt::format("string2Properties error: {}", entries.status().message()));
    }
    std::vector<std::string> warnings;
    Status st = registry_.update(*entries, &warnings);
    for (const std::string& w : warnings) {
        spdlog::warn("UPDATE_NAMESRV_CONFIG: {}", w);
    }
    if (!st.is_ok()) {
        return error(req, rs::kSystemError, st.message());
    }
    spdlog::info("name server config updated: {}", properties_to_text(*entries));
    return ok(req);
}

RemotingCommand DefaultRequestProcessor::get_config(const RemotingCommand& req) {
    RemotingCommand resp = ok(req);
    resp.body = registry_.to_properties_text();
    return resp;
}

}  // namespace comet::namesrv
