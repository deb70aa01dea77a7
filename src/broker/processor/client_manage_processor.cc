#include <spdlog/spdlog.h>

#include "broker/metadata/json_file.h"
#include "broker/processor/broker_processors.h"
#include "protocol/admin_headers.h"
#include "protocol/json_body.h"
#include "protocol/pull_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::broker {

using protocol::RemotingCommand;
namespace RC = protocol::ResponseCode;
namespace Req = protocol::RequestCode;

void ClientManageProcessor::process(const RequestContext& rc, RemotingCommand req,
                                    const Reply& reply) {
    switch (req.code) {
        case Req::kHeartBeat:
            heart_beat(rc, req, reply);
            return;
        case Req::kUnregisterClient: {
            auto h = protocol::UnregisterClientRequestHeader::from_ext(req);
            if (!h.is_ok()) {
                reply_code(reply, req, RC::kSystemError, h.status().message());
                return;
            }
            if (h->producer_group && !h->producer_group->empty()) {
                ctx_.producers->unregister_producer(*h->producer_group, rc.channel);
            }
            if (h->consumer_group && !h->consumer_group->empty()) {
                auto g = ctx_.groups->get(*h->consumer_group);
                const bool notify = g ? g->notify_consumer_ids_changed_enable : true;
                ctx_.consumers->unregister_consumer(*h->consumer_group, rc.channel, notify);
            }
            reply_code(reply, req, RC::kSuccess);
            return;
        }
        case Req::kCheckClientConfig:
            check_client_config(req, reply);
            return;
        default:
            reply_code(reply, req, RC::kRequestCodeNotSupported,
                       fmt::format("request type {} not supported", req.code));
    }
}

// ClientManageProcessor#checkClientConfig (4.9): a TAG subscription (or none) is fine; a SQL92
// one is refused with RocketMQ's remark when enablePropertyFilter is off (so the consumer fails
// at start instead of receiving unfiltered messages), and otherwise compiled:
// SUBSCRIPTION_PARSE_FAILED with the compiler's message (and position) when it does not.
void ClientManageProcessor::check_client_config(const RemotingCommand& req, const Reply& reply) {
    rapidjson::Document doc;
    if (!req.body.empty() && parse_lenient_json(req.body, "CheckClientRequestBody", &doc).is_ok() &&
        doc.IsObject()) {
        auto sub = doc.FindMember("subscriptionData");
        if (sub != doc.MemberEnd() && sub->value.IsObject()) {
            const std::string type = json_string(sub->value, "expressionType", "TAG");
            if (!is_tag_type(type)) {
                if (!ctx_.config->snapshot()->enable_property_filter || ctx_.filters == nullptr) {
                    reply_code(reply, req, RC::kSystemError,
                               property_filter_unsupported_remark(type));
                    return;
                }
                auto compiled = ctx_.filters->compile(type, json_string(sub->value, "subString"));
                if (!compiled.is_ok()) {
                    reply_code(reply, req, RC::kSubscriptionParseFailed,
                               compiled.status().message());
                    return;
                }
            }
        }
    }
    reply_code(reply, req, RC::kSuccess);
}

void ClientManageProcessor::heart_beat(const RequestContext& rc, const RemotingCommand& req,
                                       const Reply& reply) {
    rapidjson::Document doc;
    Status st = parse_lenient_json(req.body, "HeartbeatData", &doc);
    if (!st.is_ok() || !doc.IsObject()) {
        reply_code(
            reply, req, RC::kSystemError,
            "decode heartbeat body failed: " + (st.is_ok() ? "not an object" : st.message()));
        return;
    }
    ClientChannelInfo channel;
    channel.channel = rc.channel;
    channel.client_id = json_string(doc, "clientID");
    channel.language = req.language;
    channel.version = req.version;
    if (channel.client_id.empty()) {
        reply_code(reply, req, RC::kSystemError, "heartbeat without clientID");
        return;
    }
    bool topics_changed = false;
    auto consumers = doc.FindMember("consumerDataSet");
    if (consumers != doc.MemberEnd() && consumers->value.IsArray()) {
        for (const auto& c : consumers->value.GetArray()) {
            if (!c.IsObject()) {
                continue;
            }
            const std::string group = json_string(c, "groupName");
            if (group.empty()) {
                continue;
            }
            auto group_cfg = ctx_.groups->find(group);
            bool notify = true;
            if (group_cfg) {
                notify = group_cfg->notify_consumer_ids_changed_enable;
                int32_t topic_sys_flag = json_bool(c, "unitMode", false) ? 2 : 0;
                auto created = ctx_.topics->create_in_send_back(
                    retry_topic(group), group_cfg->retry_queue_nums, kPermRead | kPermWrite,
                    topic_sys_flag);
                topics_changed = topics_changed || created.created;
            }
            std::vector<SubscriptionData> subs;
            auto set = c.FindMember("subscriptionDataSet");
            if (set != c.MemberEnd() && set->value.IsArray()) {
                for (const auto& s : set->value.GetArray()) {
                    if (!s.IsObject()) {
                        continue;
                    }
                    subs.push_back(SubscriptionData::from_json(s));
                }
            }
            ctx_.consumers->register_consumer(
                group, channel, json_string(c, "consumeType", "CONSUME_PASSIVELY"),
                json_string(c, "messageModel", "CLUSTERING"),
                json_string(c, "consumeFromWhere", "CONSUME_FROM_LAST_OFFSET"), subs, notify);
            if (ctx_.filters != nullptr) {
                // Java DefaultConsumerIdsChangeListener on REGISTER: compile the SQL92 ones.
                ctx_.filters->register_group(group, subs);
            }
        }
    }
    auto producers = doc.FindMember("producerDataSet");
    if (producers != doc.MemberEnd() && producers->value.IsArray()) {
        for (const auto& p : producers->value.GetArray()) {
            const std::string group = json_string(p, "groupName");
            if (!group.empty()) {
                ctx_.producers->register_producer(group, channel);
            }
        }
    }
    if (topics_changed && ctx_.on_topics_changed) {
        ctx_.on_topics_changed();
    }
    reply_code(reply, req, RC::kSuccess);
}

std::span<const ConsumerManageProcessor::Route> ConsumerManageProcessor::routes() {
    static constexpr Route kRoutes[] = {
        {Req::kGetConsumerListByGroup, &ConsumerManageProcessor::consumer_list_by_group},
        {Req::kQueryConsumerOffset, &ConsumerManageProcessor::query_consumer_offset},
        {Req::kUpdateConsumerOffset, &ConsumerManageProcessor::update_consumer_offset},
    };
    return kRoutes;
}

ConsumerManageProcessor::Handler ConsumerManageProcessor::handler_for(int32_t code) {
    for (const Route& r : routes()) {
        if (r.code == code) {
            return r.handler;
        }
    }
    return nullptr;
}

std::vector<int32_t> ConsumerManageProcessor::handled_codes() {
    std::vector<int32_t> codes;
    for (const Route& r : routes()) {
        codes.push_back(r.code);
    }
    return codes;
}

void ConsumerManageProcessor::process(const RequestContext& rc, RemotingCommand req,
                                      const Reply& reply) {
    (void)rc;
    const Handler handler = handler_for(req.code);
    if (handler == nullptr) {
        reply_code(reply, req, RC::kRequestCodeNotSupported,
                   fmt::format("request type {} not supported", req.code));
        return;
    }
    (this->*handler)(req, reply);
}

void ConsumerManageProcessor::consumer_list_by_group(const RemotingCommand& req,
                                                     const Reply& reply) {
    auto h = protocol::GetConsumerListByGroupRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        reply_code(reply, req, RC::kSystemError, h.status().message());
        return;
    }
    auto info = ctx_.consumers->group(h->consumer_group);
    const auto ids = info ? info->client_ids() : std::vector<std::string>{};
    if (ids.empty()) {
        reply_code(reply, req, RC::kSystemError,
                   fmt::format("no consumer for this group, {}", h->consumer_group));
        return;
    }
    protocol::JsonWriter w;
    w.begin_object().key("consumerIdList").begin_array();
    for (const auto& id : ids) {
        w.value(id);
    }
    w.end_array().end_object();
    RemotingCommand resp = make_response(req, RC::kSuccess);
    resp.body = w.take();
    reply(std::move(resp), {});
}

void ConsumerManageProcessor::query_consumer_offset(const RemotingCommand& req,
                                                    const Reply& reply) {
    auto h = protocol::QueryConsumerOffsetRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        reply_code(reply, req, RC::kSystemError, h.status().message());
        return;
    }
    const int64_t stored = ctx_.offsets->query_offset(h->consumer_group, h->topic, h->queue_id);
    protocol::QueryConsumerOffsetResponseHeader rh;
    if (stored >= 0) {
        rh.offset = stored;
        RemotingCommand resp = make_response(req, RC::kSuccess);
        rh.to_ext(resp);
        reply(std::move(resp), {});
        return;
    }
    if (h->set_zero_if_not_found.has_value() && !*h->set_zero_if_not_found) {
        reply_code(reply, req, RC::kQueryNotFound,
                   "Not found, do not set to zero, maybe this group boot first");
        return;
    }
    const int64_t min = ctx_.store->min_offset_in_queue(h->topic, h->queue_id);
    bool first_in_memory = true;
    if (auto unit = ctx_.store->consume_queue_unit(h->topic, h->queue_id, 0)) {
        first_in_memory = ctx_.store->is_in_memory(unit->physical_offset);
    }
    if (min <= 0 && first_in_memory) {
        rh.offset = 0;
        RemotingCommand resp = make_response(req, RC::kSuccess);
        rh.to_ext(resp);
        reply(std::move(resp), {});
        return;
    }
    reply_code(reply, req, RC::kQueryNotFound,
               "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first");
}

void ConsumerManageProcessor::update_consumer_offset(const RemotingCommand& req,
                                                     const Reply& reply) {
    auto h = protocol::UpdateConsumerOffsetRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        reply_code(reply, req, RC::kSystemError, h.status().message());
        return;
    }
    auto t = ctx_.topics->select(h->topic);
    if (!t) {
        reply_code(reply, req, RC::kTopicNotExist, fmt::format("Topic {} not exist!", h->topic));
        return;
    }
    if (h->queue_id < 0 || h->queue_id >= std::max(t->read_queue_nums, t->write_queue_nums)) {
        reply_code(reply, req, RC::kInvalidParameter,
                   fmt::format("QueueId {} is invalid for topic {}", h->queue_id, h->topic));
        return;
    }
    ctx_.offsets->commit_offset(h->consumer_group, h->topic, h->queue_id, h->commit_offset);
    reply_code(reply, req, RC::kSuccess);
}

void QueryMessageProcessor::process(const RequestContext& rc, RemotingCommand req,
                                    const Reply& reply) {
    (void)rc;
    if (req.code == Req::kViewMessageById) {
        auto h = protocol::ViewMessageRequestHeader::from_ext(req);
        if (!h.is_ok()) {
            reply_code(reply, req, RC::kSystemError, h.status().message());
            return;
        }
        auto raw = ctx_.store->raw_message_at(h->offset);
        if (!raw) {
            reply_code(reply, req, RC::kSystemError,
                       fmt::format("can not find message by the offset, {}", h->offset));
            return;
        }
        RemotingCommand resp = make_response(req, RC::kSuccess);
        resp.body = std::move(*raw);
        reply(std::move(resp), {});
        return;
    }
    auto h = protocol::QueryMessageRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        reply_code(reply, req, RC::kSystemError, h.status().message());
        return;
    }
    const BrokerConfig cfg = ctx_.config->get();
    int32_t max_num = h->max_num;
    if (max_num <= 0 || max_num > cfg.default_query_max_num) {
        max_num = cfg.default_query_max_num;
    }
    store::QueryMessageResult r =
        ctx_.store->query_message(h->topic, h->key, max_num, h->begin_timestamp, h->end_timestamp);
    if (r.messages.empty()) {
        reply_code(reply, req, RC::kQueryNotFound,
                   "can not find message, maybe time range not correct");
        return;
    }
    RemotingCommand resp = make_response(req, RC::kSuccess);
    protocol::QueryMessageResponseHeader rh;
    rh.index_last_update_timestamp = r.index_last_update_timestamp;
    rh.index_last_update_phyoffset = r.index_last_update_phy_offset.value();
    rh.to_ext(resp);
    for (const auto& v : r.messages) {
        resp.body.append(v.bytes());
    }
    reply(std::move(resp), {});
}

}  // namespace comet::broker
