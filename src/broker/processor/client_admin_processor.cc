#include "broker/processor/client_admin_processor.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include <ctime>
#include <memory>
#include <mutex>
#include <set>

#include "broker/processor/broker_processors.h"
#include "broker/stats/broker_stats_manager.h"
#include "protocol/json_body.h"
#include "protocol/message_id.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::broker {

using protocol::RemotingCommand;
namespace RC = protocol::ResponseCode;
namespace Req = protocol::RequestCode;

namespace {

// A required header field; null (with a SYSTEM_ERROR answer like Java's header decoder) when
// absent.
const std::string* required(const RemotingCommand& req, const Reply& reply, const char* name) {
    const std::string* v = req.ext(name);
    if (v == nullptr) {
        reply_code(reply, req, RC::kSystemError, fmt::format("the custom field {} is null", name));
    }
    return v;
}

bool ext_bool(const RemotingCommand& req, const char* name) {
    const std::string* v = req.ext(name);
    return v != nullptr && *v == "true";
}

// fastjson form of a MessageQueue (as a value or, raw, as a map key).
std::string mq_json(const std::string& broker, int32_t qid, const std::string& topic) {
    protocol::JsonWriter w;
    w.begin_object().member("brokerName", broker).member("queueId", qid).member("topic", topic);
    w.end_object();
    return w.take();
}

std::string subscription_json(const SubscriptionData& s) {
    rapidjson::Document doc;
    rapidjson::Value v = s.to_json(doc.GetAllocator());
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buf);
    v.Accept(writer);
    return buf.GetString();
}

// Java UtilAll#timeMillisToHumanString2 ("yyyy-MM-dd HH:mm:ss,SSS", local time).
std::string human_time(int64_t millis) {
    const std::time_t secs = static_cast<std::time_t>(millis / 1000);
    std::tm tm{};
    localtime_r(&secs, &tm);
    return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02},{:03}", tm.tm_year + 1900,
                       tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis % 1000);
}

// MQVersion.getVersionDesc for the versions too old for client admin requests.
std::string version_desc(int32_t v) {
    static constexpr const char* kNames[] = {"V3_0_0_SNAPSHOT", "V3_0_0_ALPHA1",
                                             "V3_0_0_BETA1",    "V3_0_0_BETA2",
                                             "V3_0_0_BETA3",    "V3_0_0_BETA4",
                                             "V3_0_0_BETA5",    "V3_0_0_BETA6_SNAPSHOT",
                                             "V3_0_0_BETA6",    "V3_0_0_BETA7_SNAPSHOT",
                                             "V3_0_0_BETA7",    "V3_0_0_BETA8_SNAPSHOT",
                                             "V3_0_0_BETA8",    "V3_0_0_BETA9_SNAPSHOT",
                                             "V3_0_0_BETA9",    "V3_0_0_FINAL",
                                             "V3_0_1_SNAPSHOT", "V3_0_1",
                                             "V3_0_2_SNAPSHOT", "V3_0_2",
                                             "V3_0_3_SNAPSHOT", "V3_0_3",
                                             "V3_0_4_SNAPSHOT", "V3_0_4",
                                             "V3_0_5_SNAPSHOT", "V3_0_5",
                                             "V3_0_6_SNAPSHOT", "V3_0_6"};
    if (v >= 0 && v < static_cast<int32_t>(std::size(kNames))) {
        return kNames[v];
    }
    return std::to_string(v);
}

// The error of a failed call. Out of line: inlined into a callback, g++ 12 warns that the
// variant's Status "may be used uninitialized" (a false positive).
[[gnu::noinline]] Status error_of(const Result<RemotingCommand>& r) { return r.status(); }

std::string client_addr_of(BrokerContext& ctx, ChannelId channel) {
    if (ctx.find_channel) {
        if (auto conn = ctx.find_channel(channel)) {
            return conn->remote_address();
        }
    }
    return "";
}

// A client the broker sends an admin request to: its clientId and live connection.
struct AdminTarget {
    std::string client_id;
    net::ConnectionPtr conn;
};

// The live connections of the group's clients (only the one whose clientId is `wanted`, when
// given), all of which must take client admin requests (V3_0_7_SNAPSHOT): refused when a client
// met before is older.
std::optional<Refusal> admin_targets(BrokerContext& ctx, const ConsumerGroupInfo& info,
                                     const std::string* wanted, std::vector<AdminTarget>* out) {
    const bool one = wanted != nullptr && !wanted->empty();
    for (const auto& [id, ch] : info.channels) {
        if (ch.version < kVersionClientAdmin) {
            return Refusal{RC::kSystemError, "the client does not support this feature. version=" +
                                                 version_desc(ch.version)};
        }
        if (one && *wanted != ch.client_id) {
            continue;
        }
        if (ctx.find_channel) {
            if (auto conn = ctx.find_channel(id)) {
                out->push_back({ch.client_id, std::move(conn)});
            }
        }
        if (one) {
            break;
        }
    }
    return std::nullopt;
}

// The offsets a reset moves the group to on each write queue of the topic: the queue's end
// (`timestamp` -1) or the message nearest `timestamp`, never ahead of the committed offset
// unless `force`. Refused when the group has no offset on a queue (it never consumed here).
std::optional<Refusal> reset_offset_table(BrokerContext& ctx, const std::string& group,
                                          const std::string& topic, int32_t write_queue_nums,
                                          int64_t timestamp, bool force,
                                          std::map<int32_t, int64_t>* table) {
    for (int32_t q = 0; q < write_queue_nums; ++q) {
        const int64_t consumer_offset = ctx.offsets->query_offset(group, topic, q);
        if (consumer_offset == -1) {
            return Refusal{RC::kSystemError,
                           fmt::format("THe consumer group <{}> not exist", group)};
        }
        int64_t at = timestamp == -1
                         ? ctx.store->max_offset_in_queue(topic, q)
                         : ctx.store->offset_in_queue_by_time_nearest(topic, q, timestamp);
        if (at < 0) {
            at = 0;
        }
        (*table)[q] = (force || at < consumer_offset) ? at : consumer_offset;
    }
    return std::nullopt;
}

// ResetOffsetBody {"offsetTable":{mq:offset}} (C++ clients: ResetOffsetBodyForC, a list).
std::string reset_offset_body(const std::map<int32_t, int64_t>& table, const std::string& broker,
                              const std::string& topic, bool c_form) {
    protocol::JsonWriter w;
    w.begin_object().key("offsetTable");
    if (c_form) {
        w.begin_array();
        for (const auto& [q, off] : table) {
            w.begin_object()
                .member("brokerName", broker)
                .member("offset", off)
                .member("queueId", q)
                .member("topic", topic)
                .end_object();
        }
        w.end_array();
    } else {
        w.begin_object();
        for (const auto& [q, off] : table) {
            w.raw_key(mq_json(broker, q, topic)).value(off);
        }
        w.end_object();
    }
    w.end_object();
    return w.take();
}

// RESET_CONSUMER_CLIENT_OFFSET, one-way, to every client of the group.
RemotingCommand reset_offset_notice(const std::string& topic, const std::string& group,
                                    int64_t timestamp, bool force, std::string body) {
    RemotingCommand notice = RemotingCommand::request(Req::kResetConsumerClientOffset);
    notice.language = protocol::LanguageCode::kJava;
    notice.flag |= protocol::kFlagOneway;
    notice.set_ext("topic", topic);
    notice.set_ext("group", group);
    notice.set_ext("timestamp", std::to_string(timestamp));
    notice.set_ext("isForce", force ? "true" : "false");
    notice.body = std::move(body);
    return notice;
}

// INVOKE_BROKER_TO_GET_CONSUMER_STATUS in flight: collects the clients' answers; the last
// callback (or the request itself, when no client was asked) writes the response.
struct ConsumerStatusGather {
    std::mutex mu;
    size_t pending = 0;
    std::map<std::string, std::string> tables;  // clientId -> messageQueueTable JSON
    RemotingCommand req;
    Reply reply;

    // Keeps a client's messageQueueTable from a successful answer; true for the last answer.
    bool add(const std::string& client, const Result<RemotingCommand>& r) {
        std::lock_guard<std::mutex> l(mu);
        if (r.is_ok() && r->code == RC::kSuccess && !r->body.empty()) {
            auto doc = protocol::parse_json_body(r->body);
            if (doc.is_ok() && doc->IsObject()) {
                auto m = doc->FindMember("messageQueueTable");
                if (m != doc->MemberEnd()) {
                    rapidjson::StringBuffer buf;
                    rapidjson::Writer<rapidjson::StringBuffer> writer(buf);
                    m->value.Accept(writer);
                    tables[client] = buf.GetString();
                }
            }
        }
        return --pending == 0;
    }

    // GetConsumerStatusBody {"consumerTable":{clientId:{mq:offset}},"messageQueueTable":{}}.
    void answer() {
        protocol::JsonWriter w;
        w.begin_object().key("consumerTable").begin_object();
        for (const auto& [client, table] : tables) {
            w.key(client).raw(table);
        }
        w.end_object().key("messageQueueTable").begin_object().end_object().end_object();
        RemotingCommand resp = make_response(req, RC::kSuccess);
        resp.body = w.take();
        reply(std::move(resp), {});
    }
};

}  // namespace

std::string connection_json(const ClientChannelInfo& info, const std::string& client_addr) {
    protocol::JsonWriter w;
    w.begin_object()
        .member("clientAddr", client_addr)
        .member("clientId", info.client_id)
        .member("language", std::string(protocol::language_name(info.language)))
        .member("version", info.version)
        .end_object();
    return w.take();
}

std::vector<int32_t> ClientAdminProcessor::handled_codes() {
    return {Req::kGetConsumerConnectionList, Req::kGetProducerConnectionList,
            Req::kInvokeBrokerToResetOffset, Req::kInvokeBrokerToGetConsumerStatus,
            Req::kQueryTopicConsumeByWho,    Req::kQueryConsumeTimeSpan,
            Req::kCloneGroupOffset,          Req::kGetBrokerConsumeStats,
            Req::kGetConsumerRunningInfo,    Req::kConsumeMessageDirectly};
}

void ClientAdminProcessor::process(const RequestContext& rc, RemotingCommand req,
                                   const Reply& reply) {
    switch (req.code) {
        case Req::kGetConsumerConnectionList:
            consumer_connection_list(req, reply);
            return;
        case Req::kGetProducerConnectionList:
            reply(producer_connection_list(ctx_, req), {});
            return;
        case Req::kInvokeBrokerToResetOffset:
            spdlog::info("[reset-offset] requested by {}", rc.remote_address);
            reset_offset(req, reply);
            return;
        case Req::kInvokeBrokerToGetConsumerStatus:
            consumer_status(req, reply);
            return;
        case Req::kQueryTopicConsumeByWho:
            topic_consume_by_who(req, reply);
            return;
        case Req::kQueryConsumeTimeSpan:
            consume_time_span(req, reply);
            return;
        case Req::kCloneGroupOffset:
            clone_group_offset(req, reply);
            return;
        case Req::kGetBrokerConsumeStats:
            broker_consume_stats(req, reply);
            return;
        case Req::kGetConsumerRunningInfo:
        case Req::kConsumeMessageDirectly:
            call_consumer(std::move(req), reply);
            return;
        default:
            reply_code(reply, req, RC::kRequestCodeNotSupported,
                       fmt::format("request type {} not supported", req.code));
    }
}

void ClientAdminProcessor::consumer_connection_list(const RemotingCommand& req,
                                                    const Reply& reply) {
    const std::string* group = required(req, reply, "consumerGroup");
    if (group == nullptr) {
        return;
    }
    auto info = ctx_.consumers->group(*group);
    if (!info) {
        reply_code(reply, req, RC::kConsumerNotOnline,
                   fmt::format("the consumer group[{}] not online", *group));
        return;
    }
    protocol::JsonWriter w;
    w.begin_object().key("connectionSet").begin_array();
    for (const auto& [id, ch] : info->channels) {
        w.raw(connection_json(ch, client_addr_of(ctx_, id)));
    }
    w.end_array()
        .member("consumeFromWhere", info->consume_from_where)
        .member("consumeType", info->consume_type)
        .member("messageModel", info->message_model)
        .key("subscriptionTable")
        .begin_object();
    for (const auto& [topic, sub] : info->subscriptions) {
        w.key(topic).raw(subscription_json(sub));
    }
    w.end_object().end_object();
    RemotingCommand resp = make_response(req, RC::kSuccess);
    resp.body = w.take();
    reply(std::move(resp), {});
}

// Java Broker2Client#resetOffset. Differs: Comet also stores the new offsets when it answers
// SUCCESS, so the group starts there even if a client ignores the notice (4.9.8 leaves storing
// to the clients' next commit).
void ClientAdminProcessor::reset_offset(const RemotingCommand& req, const Reply& reply) {
    const std::string* topic = required(req, reply, "topic");
    const std::string* group = topic != nullptr ? required(req, reply, "group") : nullptr;
    const std::string* ts_text = group != nullptr ? required(req, reply, "timestamp") : nullptr;
    if (ts_text == nullptr) {
        return;
    }
    int64_t timestamp = 0;
    try {
        timestamp = std::stoll(*ts_text);
    } catch (...) {
        reply_code(reply, req, RC::kSystemError,
                   fmt::format("the custom field timestamp is not a number: {}", *ts_text));
        return;
    }
    const bool force = ext_bool(req, "isForce");
    const bool for_cpp = req.language == protocol::LanguageCode::kCpp;
    auto t = ctx_.topics->select(*topic);
    if (!t) {
        reply_code(reply, req, RC::kSystemError,
                   "[reset-offset] reset offset failed, no topic in this broker. topic=" + *topic);
        return;
    }
    const std::string broker = ctx_.config->get().broker_name;
    std::map<int32_t, int64_t> table;
    if (auto no = reset_offset_table(ctx_, *group, *topic, t->write_queue_nums, timestamp, force,
                                     &table)) {
        reply_refusal(reply, req, std::move(*no));
        return;
    }
    auto info = ctx_.consumers->group(*group);
    if (!info || info->channels.empty()) {
        reply_code(reply, req, RC::kConsumerNotOnline,
                   fmt::format("Consumer not online, so can not reset offset, Group: {} Topic: {} "
                               "Timestamp: {}",
                               *group, *topic, timestamp));
        return;
    }
    const RemotingCommand notice = reset_offset_notice(
        *topic, *group, timestamp, force, reset_offset_body(table, broker, *topic, for_cpp));
    std::vector<AdminTarget> targets;
    if (auto no = admin_targets(ctx_, *info, nullptr, &targets)) {
        reply_refusal(reply, req, std::move(*no));
        return;
    }
    for (const auto& [q, off] : table) {
        ctx_.offsets->commit_offset(*group, *topic, q, off);
    }
    for (const AdminTarget& target : targets) {
        target.conn->invoke_oneway(notice);
        spdlog::info("[reset-offset] reset offset of topic={} group={} sent to {}", *topic, *group,
                     target.conn->remote_address());
    }
    RemotingCommand resp = make_response(req, RC::kSuccess);
    resp.body = reset_offset_body(table, broker, *topic, false);
    reply(std::move(resp), {});
}

// Java Broker2Client#getConsumeStatus: asks every consumer of the group (or the one whose
// clientId is clientAddr) for its offsets with GET_CONSUMER_STATUS_FROM_CLIENT and answers
// GetConsumerStatusBody {"consumerTable":{clientId:{mq:offset}},"messageQueueTable":{}}.
// Clients that fail or time out (5 s) are left out, as in Java.
void ClientAdminProcessor::consumer_status(const RemotingCommand& req, const Reply& reply) {
    const std::string* topic = required(req, reply, "topic");
    const std::string* group = topic != nullptr ? required(req, reply, "group") : nullptr;
    if (group == nullptr) {
        return;
    }
    const std::string* wanted = req.ext("clientAddr");
    auto info = ctx_.consumers->group(*group);
    if (!info || info->channels.empty()) {
        reply_code(reply, req, RC::kSystemError,
                   fmt::format("No Any Consumer online in the consumer group: [{}]", *group));
        return;
    }
    std::vector<AdminTarget> targets;
    if (auto no = admin_targets(ctx_, *info, wanted, &targets)) {
        reply_refusal(reply, req, std::move(*no));
        return;
    }
    auto gather = std::make_shared<ConsumerStatusGather>();
    gather->pending = targets.size();
    gather->req = req;
    gather->req.body.clear();
    gather->reply = reply;
    if (targets.empty()) {
        gather->answer();
        return;
    }
    for (auto& t : targets) {
        RemotingCommand ask = RemotingCommand::request(Req::kGetConsumerStatusFromClient);
        ask.language = protocol::LanguageCode::kJava;
        ask.set_ext("topic", *topic);
        ask.set_ext("group", *group);
        t.conn->invoke_async(std::move(ask), std::chrono::milliseconds(5000),
                             [gather, client = t.client_id](Result<RemotingCommand> r) {
                                 if (gather->add(client, r)) {
                                     gather->answer();
                                 }
                             });
    }
}

void ClientAdminProcessor::topic_consume_by_who(const RemotingCommand& req, const Reply& reply) {
    const std::string* topic = required(req, reply, "topic");
    if (topic == nullptr) {
        return;
    }
    std::set<std::string> groups;
    for (auto& g : ctx_.consumers->groups_subscribing(*topic)) {
        groups.insert(std::move(g));
    }
    for (const auto& g : ctx_.offsets->groups_of_topic(*topic)) {
        groups.insert(g);
    }
    protocol::JsonWriter w;
    w.begin_object().key("groupList").begin_array();
    for (const auto& g : groups) {
        w.value(g);
    }
    w.end_array().end_object();
    RemotingCommand resp = make_response(req, RC::kSuccess);
    resp.body = w.take();
    reply(std::move(resp), {});
}

void ClientAdminProcessor::consume_time_span(const RemotingCommand& req, const Reply& reply) {
    const std::string* topic = required(req, reply, "topic");
    const std::string* group = topic != nullptr ? required(req, reply, "group") : nullptr;
    if (group == nullptr) {
        return;
    }
    auto t = ctx_.topics->select(*topic);
    if (!t) {
        reply_code(reply, req, RC::kTopicNotExist, fmt::format("topic[{}] not exist", *topic));
        return;
    }
    const std::string broker = ctx_.config->get().broker_name;
    const int64_t now = ctx_.clock->wall_millis();
    protocol::JsonWriter w;
    w.begin_object().key("consumeTimeSpanSet").begin_array();
    for (int32_t q = 0; q < t->write_queue_nums; ++q) {
        const int64_t min_time = ctx_.store->earliest_message_time(*topic, q);
        const int64_t max = ctx_.store->max_offset_in_queue(*topic, q);
        const int64_t max_time = ctx_.store->message_store_time(*topic, q, max - 1);
        const int64_t consumer_offset = ctx_.offsets->query_offset(*group, *topic, q);
        const int64_t consume_time =
            consumer_offset > 0 ? ctx_.store->message_store_time(*topic, q, consumer_offset - 1)
                                : min_time;
        int64_t delay = 0;
        if (consumer_offset < max) {
            delay = now - ctx_.store->message_store_time(*topic, q, consumer_offset);
        }
        w.begin_object()
            .member("consumeTimeStamp", consume_time)
            .member("consumeTimeStampStr", human_time(consume_time))
            .member("delayTime", delay)
            .member("maxTimeStamp", max_time)
            .member("maxTimeStampStr", human_time(max_time))
            .key("messageQueue")
            .raw(mq_json(broker, q, *topic))
            .member("minTimeStamp", min_time)
            .member("minTimeStampStr", human_time(min_time))
            .end_object();
    }
    w.end_array().end_object();
    RemotingCommand resp = make_response(req, RC::kSuccess);
    resp.body = w.take();
    reply(std::move(resp), {});
}

// Java AdminBrokerProcessor#cloneGroupOffset. Differs: each topic of the loop is cloned (Java
// passes the request's topic, so without -t it clones nothing), and the destination keeps its
// offsets of queues the source has none for (Java replaces the whole map).
void ClientAdminProcessor::clone_group_offset(const RemotingCommand& req, const Reply& reply) {
    const std::string* src = required(req, reply, "srcGroup");
    const std::string* dest = src != nullptr ? required(req, reply, "destGroup") : nullptr;
    if (dest == nullptr) {
        return;
    }
    const std::string* topic = req.ext("topic");
    const bool offline = ext_bool(req, "offline");
    std::set<std::string> topics;
    if (topic == nullptr || topic->empty()) {
        topics = ctx_.offsets->topics_of_group(*src);
    } else {
        topics.insert(*topic);
    }
    for (const auto& tp : topics) {
        if (!ctx_.topics->select(tp)) {
            spdlog::warn("[cloneGroupOffset] topic {} does not exist", tp);
            continue;
        }
        if (!offline) {
            auto info = ctx_.consumers->group(*src);
            if (info && !info->subscriptions.empty() && info->subscriptions.count(tp) == 0) {
                spdlog::warn("[cloneGroupOffset] group {} does not subscribe topic {}", *src, tp);
                continue;
            }
        }
        for (const auto& [q, off] : ctx_.offsets->query_offsets(*src, tp)) {
            ctx_.offsets->commit_offset(*dest, tp, q, off);
        }
    }
    reply_code(reply, req, RC::kSuccess);
}

// Java AdminBrokerProcessor#fetchAllConsumeStatsInBroker: ConsumeStatsList
// {"brokerAddr":..,"consumeStatsList":[{group:[ConsumeStats...]}],"totalDiff":N}.
void ClientAdminProcessor::broker_consume_stats(const RemotingCommand& req, const Reply& reply) {
    const bool order_only = ext_bool(req, "isOrder");
    const BrokerConfig cfg = ctx_.config->get();
    int64_t total_diff = 0;
    protocol::JsonWriter w;
    w.begin_object().member("brokerAddr", cfg.broker_addr()).key("consumeStatsList").begin_array();
    for (const auto& group_cfg : ctx_.groups->all()) {
        const std::string& group = group_cfg.group_name;
        auto info = ctx_.consumers->group(group);
        w.begin_object().key(group).begin_array();
        for (const auto& topic : ctx_.offsets->topics_of_group(group)) {
            auto t = ctx_.topics->select(topic);
            if (!t || (order_only && !t->order)) {
                continue;
            }
            if (info && !info->subscriptions.empty() && info->subscriptions.count(topic) == 0) {
                continue;
            }
            // 4.9.8 BrokerStatsManager#tpsGroupGetNums: GROUP_GET_NUMS' minute tps.
            double consume_tps = 0;
            if (ctx_.stats_manager != nullptr) {
                if (auto s = ctx_.stats_manager->in_minute(kGroupGetNums, topic + "@" + group)) {
                    consume_tps = s->tps;
                }
            }
            w.begin_object().member("consumeTps", consume_tps).key("offsetTable").begin_object();
            for (int32_t q = 0; q < t->write_queue_nums; ++q) {
                const int64_t broker_offset =
                    std::max<int64_t>(0, ctx_.store->max_offset_in_queue(topic, q));
                const int64_t consumer_offset =
                    std::max<int64_t>(0, ctx_.offsets->query_offset(group, topic, q));
                int64_t last = 0;
                if (consumer_offset > 0) {
                    last = std::max<int64_t>(
                        0, ctx_.store->message_store_time(topic, q, consumer_offset - 1));
                }
                total_diff += broker_offset - consumer_offset;
                w.raw_key(mq_json(cfg.broker_name, q, topic))
                    .begin_object()
                    .member("brokerOffset", broker_offset)
                    .member("consumerOffset", consumer_offset)
                    .member("lastTimestamp", last)
                    .end_object();
            }
            w.end_object().end_object();
        }
        w.end_array().end_object();
    }
    w.end_array().member("totalDiff", total_diff).end_object();
    RemotingCommand resp = make_response(req, RC::kSuccess);
    resp.body = w.take();
    reply(std::move(resp), {});
}

void ClientAdminProcessor::call_consumer(RemotingCommand req, const Reply& reply) {
    // Copies: set_ext below may move the ext fields (ExtFields invalidates on insertion).
    const std::string* group_field = required(req, reply, "consumerGroup");
    const std::string* client_field =
        group_field != nullptr ? required(req, reply, "clientId") : nullptr;
    if (client_field == nullptr) {
        return;
    }
    const std::string group_text = *group_field;
    const std::string client_text = *client_field;
    const std::string* group = &group_text;
    const std::string* client_id = &client_text;
    if (req.code == Req::kConsumeMessageDirectly) {
        const std::string* msg_field = required(req, reply, "msgId");
        if (msg_field == nullptr) {
            return;
        }
        const std::string msg_id = *msg_field;
        // Java consumeMessageDirectly: the stored message's bytes as the body.
        req.set_ext("brokerName", ctx_.config->get().broker_name);
        if (auto id = protocol::decode_offset_msg_id(msg_id); id.is_ok()) {
            if (auto raw = ctx_.store->raw_message_at(id->physical_offset)) {
                req.body = std::move(*raw);
            }
        }
    }
    std::optional<ClientChannelInfo> target;
    if (auto info = ctx_.consumers->group(*group)) {
        for (const auto& [id, ch] : info->channels) {
            if (ch.client_id == *client_id) {
                target = ch;
            }
        }
    }
    net::ConnectionPtr conn;
    if (target && ctx_.find_channel) {
        conn = ctx_.find_channel(target->channel);
    }
    if (!target || conn == nullptr) {
        reply_code(reply, req, RC::kSystemError,
                   fmt::format("The Consumer <{}> <{}> not online", *group, *client_id));
        return;
    }
    if (target->version < kVersionCallConsumer) {
        reply_code(reply, req, RC::kSystemError,
                   fmt::format("The Consumer <{}> Version <{}> too low to finish, please upgrade "
                               "it to V3_1_8_SNAPSHOT",
                               *client_id, version_desc(target->version)));
        return;
    }
    RemotingCommand forward = RemotingCommand::request(req.code);
    forward.language = protocol::LanguageCode::kJava;
    forward.ext_fields = req.ext_fields;
    forward.body = req.body;
    const std::string group_name = *group;
    const std::string client_name = *client_id;
    RemotingCommand original = std::move(req);
    original.body.clear();
    auto relay = [original = std::move(original), reply, group_name,
                  client_name](Result<RemotingCommand> r) {
        if (r.is_ok()) {
            RemotingCommand resp = std::move(r).value();
            resp.serialize_type = original.serialize_type;
            reply(std::move(resp), {});
            return;
        }
        const Status st = error_of(r);
        const bool timeout = st.code() == Errc::kTimeout;
        reply_code(
            reply, original, timeout ? RC::kConsumeMsgTimeout : RC::kSystemError,
            fmt::format("{} <{}> <{}> {}: {}", timeout ? "consumer" : "invoke consumer", group_name,
                        client_name, timeout ? "Timeout" : "Exception", st.message()));
    };
    conn->invoke_async(std::move(forward), std::chrono::milliseconds(10000), std::move(relay));
}

}  // namespace comet::broker
