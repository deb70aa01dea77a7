#include "broker/replication/escape_bridge.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "broker/metadata/topic_config.h"
#include "net/remoting_client.h"
#include "protocol/namesrv_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"
#include "protocol/send_headers.h"

namespace comet::broker {

namespace RC = protocol::ResponseCode;
namespace Req = protocol::RequestCode;

namespace {
constexpr std::string_view kInnerProducerGroup = "InnerProducerGroup";
constexpr std::string_view kAutoCreateTopicKey = "TBW102";
}  // namespace

Result<EscapeTarget> pick_escape_target(const protocol::TopicRouteData& route,
                                        const std::string& topic,
                                        const std::string& own_broker_name, uint32_t pick) {
    std::vector<EscapeTarget> candidates;
    for (const protocol::QueueData& q : route.queue_datas) {
        if (q.broker_name == own_broker_name || !perm_writeable(q.perm)) {
            continue;
        }
        const std::string* master = nullptr;
        for (const protocol::BrokerData& b : route.broker_datas) {
            if (b.broker_name != q.broker_name) {
                continue;
            }
            auto it = b.broker_addrs.find(0);
            if (it != b.broker_addrs.end() && !it->second.empty()) {
                master = &it->second;
            }
        }
        if (master == nullptr) {
            continue;
        }
        for (int32_t i = 0; i < q.write_queue_nums; ++i) {
            candidates.push_back(EscapeTarget{q.broker_name, *master, i});
        }
    }
    if (candidates.empty()) {
        return Status::error(Errc::kNotFound,
                             "no writable queue of topic {} on a master of another group than {}",
                             topic, own_broker_name);
    }
    return candidates[pick % candidates.size()];
}

EscapeBridge::EscapeBridge(std::string own_broker_name, Network net)
    : own_broker_name_(std::move(own_broker_name)), net_(std::move(net)) {}

protocol::RemotingCommand EscapeBridge::build_request(const protocol::MessageExt& msg,
                                                      const EscapeTarget& target) {
    protocol::SendMessageRequestHeaderV2 h;
    const std::string* pgroup = msg.property(protocol::property::kProducerGroup);
    h.a = pgroup != nullptr ? *pgroup : std::string(kInnerProducerGroup);
    h.b = msg.topic;
    h.c = std::string(kAutoCreateTopicKey);
    h.d = 4;
    h.e = target.queue_id;
    h.f = msg.sys_flag;
    h.g = msg.born_timestamp;
    h.h = msg.flag;
    h.i = protocol::message_properties_to_string(msg.properties);
    h.j = msg.reconsume_times;
    h.k = false;
    h.m = false;
    h.n = target.broker_name;
    auto req = protocol::RemotingCommand::request(Req::kSendMessageV2);
    h.to_ext(req);
    req.body = msg.body;
    return req;
}

Result<protocol::RemotingCommand> EscapeBridge::escape(const protocol::MessageExt& msg) {
    COMET_ASSIGN_OR_RETURN(auto route, net_.route(msg.topic));
    const uint32_t pick = next_.fetch_add(1, std::memory_order_relaxed);
    COMET_ASSIGN_OR_RETURN(auto target,
                           pick_escape_target(route, msg.topic, own_broker_name_, pick));
    return net_.send(target.addr, build_request(msg, target));
}

EscapeBridge::Network EscapeBridge::remote_network(
    net::RemotingClient* client, std::function<std::vector<std::string>()> namesrvs,
    Duration timeout) {
    Network n;
    n.route = [client, namesrvs = std::move(namesrvs),
               timeout](const std::string& topic) -> Result<protocol::TopicRouteData> {
        Status last = Status::error(Errc::kUnavailable, "no name server configured");
        for (const std::string& addr : namesrvs()) {
            protocol::GetRouteInfoRequestHeader h;
            h.topic = topic;
            auto req = protocol::RemotingCommand::request(Req::kGetRouteinfoByTopic);
            h.to_ext(req);
            auto r = client->invoke_sync(addr, std::move(req), timeout);
            if (!r.is_ok()) {
                last = r.status();
                continue;
            }
            if (r.value().code != RC::kSuccess) {
                last = Status::error(Errc::kNotFound, "route of topic {} from {}: code {} {}",
                                     topic, addr, r.value().code, r.value().remark.value_or(""));
                continue;
            }
            return protocol::TopicRouteData::decode(r.value().body);
        }
        return last;
    };
    n.send = [client, timeout](const std::string& addr, protocol::RemotingCommand req) {
        return client->invoke_sync(addr, std::move(req), timeout);
    };
    return n;
}

}  // namespace comet::broker
