#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>

#include "broker/metadata/json_file.h"
#include "broker/processor/broker_processors.h"
#include "broker/replication/replication_service.h"
#include "broker/schedule/schedule_message_service.h"
#include "broker/stats/broker_stats_manager.h"
#include "protocol/admin_headers.h"
#include "protocol/json_body.h"
#include "protocol/pull_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::broker {

using protocol::RemotingCommand;
namespace RC = protocol::ResponseCode;
namespace Req = protocol::RequestCode;

namespace {

template <typename H>
bool decode_or_reply(const RemotingCommand& req, const Reply& reply, H* out) {
    auto h = H::from_ext(req);
    if (!h.is_ok()) {
        reply_code(reply, req, RC::kSystemError, h.status().message());
        return false;
    }
    *out = std::move(h).value();
    return true;
}

void reply_offset(const Reply& reply, const RemotingCommand& req, int64_t offset) {
    RemotingCommand resp = make_response(req, RC::kSuccess);
    protocol::OffsetResponseHeader h;
    h.offset = offset;
    h.to_ext(resp);
    reply(std::move(resp), {});
}

void reply_body(const Reply& reply, const RemotingCommand& req, std::string body) {
    RemotingCommand resp = make_response(req, RC::kSuccess);
    resp.body = std::move(body);
    reply(std::move(resp), {});
}

// fastjson form of a MessageQueue used as a map key (reference §3.2).
std::string mq_key_json(const std::string& broker, int32_t qid, const std::string& topic) {
    protocol::JsonWriter w;
    w.begin_object().member("brokerName", broker).member("queueId", qid).member("topic", topic);
    w.end_object();
    return w.take();
}

// QUERY_CONSUME_QUEUE's filterData: the group's ConsumerFilterData as
// JSON.toJSONString(filterData, true) prints it (tab-indented).
std::string pretty_filter_data(const ConsumerFilterInfo& f, const std::string& group,
                               const std::string& topic) {
    protocol::JsonWriter fw;
    fw.begin_object()
        .member("bornTime", f.born_time_ms)
        .member("clientVersion", f.client_version)
        .member("consumerGroup", group)
        .member("dead", f.dead_time_ms > 0)
        .member("deadTime", f.dead_time_ms)
        .member("expression", f.expression)
        .member("expressionType", f.expression_type)
        .member("topic", topic)
        .end_object();
    const std::string compact = fw.take();
    rapidjson::Document fd;
    fd.Parse(compact.data(), compact.size());
    rapidjson::StringBuffer buf;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> pw(buf);
    pw.SetIndent('\t', 1);
    fd.Accept(pw);
    return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace

std::span<const AdminBrokerProcessor::Route> AdminBrokerProcessor::routes() {
    static constexpr Route kRoutes[] = {
        // Offsets and times of a queue in the store.
        {Req::kGetMaxOffset, &AdminBrokerProcessor::max_offset},
        {Req::kGetMinOffset, &AdminBrokerProcessor::min_offset},
        {Req::kSearchOffsetByTimestamp, &AdminBrokerProcessor::search_offset_by_time},
        {Req::kGetEarliestMsgStoretime, &AdminBrokerProcessor::earliest_msg_store_time},
        {Req::kQueryConsumeQueue, &AdminBrokerProcessor::query_consume_queue},
        // Orderly-consumption locks.
        {Req::kLockBatchMq, &AdminBrokerProcessor::lock_batch_mq},
        {Req::kUnlockBatchMq, &AdminBrokerProcessor::unlock_batch_mq},
        // Topics.
        {Req::kUpdateAndCreateTopic, &AdminBrokerProcessor::create_topic},
        {Req::kDeleteTopicInBroker, &AdminBrokerProcessor::delete_topic},
        {Req::kCleanUnusedTopic, &AdminBrokerProcessor::clean_unused_topic},
        {Req::kCleanExpiredConsumequeue, &AdminBrokerProcessor::clean_expired_consume_queue},
        {Req::kGetAllTopicConfig, &AdminBrokerProcessor::all_topic_config},
        // Subscription groups and offsets.
        {Req::kUpdateAndCreateSubscriptionGroup, &AdminBrokerProcessor::update_subscription_group},
        {Req::kDeleteSubscriptionGroup, &AdminBrokerProcessor::delete_subscription_group},
        {Req::kGetAllSubscriptionGroupConfig, &AdminBrokerProcessor::all_subscription_groups},
        {Req::kGetAllConsumerOffset, &AdminBrokerProcessor::all_consumer_offsets},
        {Req::kGetAllDelayOffset, &AdminBrokerProcessor::all_delay_offsets},
        // Runtime information and statistics.
        {Req::kGetBrokerRuntimeInfo, &AdminBrokerProcessor::runtime_info},
        {Req::kGetTopicStatsInfo, &AdminBrokerProcessor::topic_stats},
        {Req::kGetConsumeStats, &AdminBrokerProcessor::consume_stats},
        {Req::kViewBrokerStatsData, &AdminBrokerProcessor::view_stats},
        // Broker configuration.
        {Req::kGetBrokerConfig, &AdminBrokerProcessor::broker_config},
        {Req::kUpdateBrokerConfig, &AdminBrokerProcessor::update_broker_config},
    };
    return kRoutes;
}

AdminBrokerProcessor::Handler AdminBrokerProcessor::handler_for(int32_t code) {
    for (const Route& r : routes()) {
        if (r.code == code) {
            return r.handler;
        }
    }
    return nullptr;
}

std::vector<int32_t> AdminBrokerProcessor::handled_codes() {
    std::vector<int32_t> codes;
    for (const Route& r : routes()) {
        codes.push_back(r.code);
    }
    return codes;
}

void AdminBrokerProcessor::process(const RequestContext& rc, RemotingCommand req,
                                   const Reply& reply) {
    const Handler handler = handler_for(req.code);
    if (handler == nullptr) {
        reply_code(reply, req, RC::kRequestCodeNotSupported,
                   fmt::format("request type {} not supported", req.code));
        return;
    }
    (this->*handler)(rc, req, reply);
}

void AdminBrokerProcessor::max_offset(const RequestContext& /*rc*/, const RemotingCommand& req,
                                      const Reply& reply) {
    protocol::GetMaxOffsetRequestHeader h;
    if (decode_or_reply(req, reply, &h)) {
        reply_offset(reply, req, ctx_.store->max_offset_in_queue(h.topic, h.queue_id));
    }
}

void AdminBrokerProcessor::min_offset(const RequestContext& /*rc*/, const RemotingCommand& req,
                                      const Reply& reply) {
    protocol::GetMinOffsetRequestHeader h;
    if (decode_or_reply(req, reply, &h)) {
        reply_offset(reply, req, ctx_.store->min_offset_in_queue(h.topic, h.queue_id));
    }
}

void AdminBrokerProcessor::search_offset_by_time(const RequestContext& /*rc*/,
                                                 const RemotingCommand& req, const Reply& reply) {
    protocol::SearchOffsetRequestHeader h;
    if (decode_or_reply(req, reply, &h)) {
        // No boundaryType (RocketMQ 4.x clients): 4.9.8's nearest-message search; with one
        // (5.x clients): the first at/after or last at/before the time.
        reply_offset(
            reply, req,
            h.boundary_type.has_value()
                ? ctx_.store->offset_in_queue_by_time(h.topic, h.queue_id, h.timestamp,
                                                      h.is_upper())
                : ctx_.store->offset_in_queue_by_time_nearest(h.topic, h.queue_id, h.timestamp));
    }
}

void AdminBrokerProcessor::earliest_msg_store_time(const RequestContext& /*rc*/,
                                                   const RemotingCommand& req, const Reply& reply) {
    protocol::GetEarliestMsgStoretimeRequestHeader h;
    if (decode_or_reply(req, reply, &h)) {
        RemotingCommand resp = make_response(req, RC::kSuccess);
        protocol::GetEarliestMsgStoretimeResponseHeader rh;
        rh.timestamp = ctx_.store->earliest_message_time(h.topic, h.queue_id);
        rh.to_ext(resp);
        reply(std::move(resp), {});
    }
}

void AdminBrokerProcessor::lock_batch_mq(const RequestContext& /*rc*/, const RemotingCommand& req,
                                         const Reply& reply) {
    lock_batch(req, reply, true);
}

void AdminBrokerProcessor::unlock_batch_mq(const RequestContext& /*rc*/, const RemotingCommand& req,
                                           const Reply& reply) {
    lock_batch(req, reply, false);
}

void AdminBrokerProcessor::delete_topic(const RequestContext& /*rc*/, const RemotingCommand& req,
                                        const Reply& reply) {
    protocol::TopicRequestHeader h;
    if (!decode_or_reply(req, reply, &h)) {
        return;
    }
    if (ctx_.topics->is_system_topic(h.topic)) {
        reply_code(reply, req, RC::kInvalidParameter,
                   fmt::format("The topic[{}] is conflict with system topic.", h.topic));
        return;
    }
    ctx_.topics->remove(h.topic);
    ctx_.offsets->remove_topic(h.topic);
    ctx_.store->delete_topic(h.topic);
    if (ctx_.on_topics_changed) {
        ctx_.on_topics_changed();
    }
    reply_code(reply, req, RC::kSuccess);
}

// Java DefaultMessageStore#cleanUnusedTopic: ConsumeQueues of topics without a topic config
// go, except the delay and transaction-check topics.
void AdminBrokerProcessor::clean_unused_topic(const RequestContext& /*rc*/,
                                              const RemotingCommand& req, const Reply& reply) {
    std::set<std::string> keep{"SCHEDULE_TOPIC_XXXX", "TRANS_CHECK_MAX_TIME_TOPIC"};
    for (const auto& t : ctx_.topics->all()) {
        keep.insert(t.topic_name);
    }
    const int removed = ctx_.store->clean_unused_topics(keep);
    spdlog::warn("CLEAN_UNUSED_TOPIC: {} ConsumeQueue(s) of unused topics removed", removed);
    reply_code(reply, req, RC::kSuccess);
}

// Java cleanExpiredConsumeQueue: queues whose records the CommitLog no longer holds go;
// always SUCCESS.
void AdminBrokerProcessor::clean_expired_consume_queue(const RequestContext& /*rc*/,
                                                       const RemotingCommand& req,
                                                       const Reply& reply) {
    spdlog::warn("invoke cleanExpiredConsumeQueue start.");
    const int removed = ctx_.store->clean_expired_consume_queues();
    spdlog::warn("invoke cleanExpiredConsumeQueue end: {} ConsumeQueue(s) removed", removed);
    reply_code(reply, req, RC::kSuccess);
}

void AdminBrokerProcessor::all_topic_config(const RequestContext& /*rc*/,
                                            const RemotingCommand& req, const Reply& reply) {
    RemotingCommand resp = make_response(req, RC::kSuccess);
    resp.body = ctx_.topics->encode(false);
    resp.set_ext("totalTopicNum", std::to_string(ctx_.topics->all().size()));
    reply(std::move(resp), {});
}

void AdminBrokerProcessor::update_subscription_group(const RequestContext& /*rc*/,
                                                     const RemotingCommand& req,
                                                     const Reply& reply) {
    auto c = SubscriptionGroupConfig::decode(req.body);
    if (!c.is_ok()) {
        reply_code(reply, req, RC::kSystemError, c.status().message());
        return;
    }
    if (c->group_name.empty()) {
        reply_code(reply, req, RC::kSystemError, "subscription group config without groupName");
        return;
    }
    Status st = ctx_.groups->update(c.value());
    if (!st.is_ok()) {
        reply_code(reply, req, RC::kSystemError, st.message());
        return;
    }
    reply_code(reply, req, RC::kSuccess);
}

void AdminBrokerProcessor::delete_subscription_group(const RequestContext& /*rc*/,
                                                     const RemotingCommand& req,
                                                     const Reply& reply) {
    protocol::DeleteSubscriptionGroupRequestHeader h;
    if (!decode_or_reply(req, reply, &h)) {
        return;
    }
    ctx_.groups->remove(h.group_name);
    if (h.clean_offset.value_or(false)) {
        ctx_.offsets->remove_group(h.group_name);
    }
    reply_code(reply, req, RC::kSuccess);
}

void AdminBrokerProcessor::all_subscription_groups(const RequestContext& /*rc*/,
                                                   const RemotingCommand& req, const Reply& reply) {
    reply_body(reply, req, ctx_.groups->encode(false));
}

void AdminBrokerProcessor::all_consumer_offsets(const RequestContext& /*rc*/,
                                                const RemotingCommand& req, const Reply& reply) {
    reply_body(reply, req, ctx_.offsets->encode(false));
}

void AdminBrokerProcessor::all_delay_offsets(const RequestContext& /*rc*/,
                                             const RemotingCommand& req, const Reply& reply) {
    if (ctx_.schedule == nullptr) {
        reply_code(reply, req, RC::kSystemError, "schedule message service not running");
        return;
    }
    reply_body(reply, req, ctx_.schedule->encode(false));
}

void AdminBrokerProcessor::broker_config(const RequestContext& /*rc*/, const RemotingCommand& req,
                                         const Reply& reply) {
    RemotingCommand resp = make_response(req, RC::kSuccess);
    resp.body = properties_to_string(ctx_.config->get().to_properties());
    // 4.9.8's Configuration DataVersion: the number of updates and the time of the last one
    // (no stateVersion: 5.x added it to DataVersion, and its Configuration never sets it).
    protocol::JsonWriter w;
    w.begin_object()
        .member("counter", ctx_.config->version())
        .member("timestamp", ctx_.config->changed_ms())
        .end_object();
    protocol::GetBrokerConfigResponseHeader rh;
    rh.version = w.take();
    rh.to_ext(resp);
    reply(std::move(resp), {});
}

void AdminBrokerProcessor::update_broker_config(const RequestContext& rc,
                                                const RemotingCommand& req, const Reply& reply) {
    auto props = parse_properties(req.body);
    if (!props.is_ok()) {
        reply_code(reply, req, RC::kSystemError,
                   "string2Properties error: " + props.status().message());
        return;
    }
    // Only an operator's change is held to the start-up-only keys: the broker itself moves its
    // role and id through the same holder (controller mode, DLedger).
    Status st = ctx_.config->snapshot()->check_runtime_update(props.value());
    if (st.is_ok()) {
        st = ctx_.config->update(props.value());
    }
    if (!st.is_ok()) {
        reply_code(reply, req, RC::kSystemError, st.message());
        return;
    }
    spdlog::info("broker config updated by {}: {} keys", rc.remote_address, props.value().size());
    if (ctx_.on_topics_changed) {
        ctx_.on_topics_changed();  // permission changes reach the name servers
    }
    reply_code(reply, req, RC::kSuccess);
}

void AdminBrokerProcessor::lock_batch(const RemotingCommand& req, const Reply& reply, bool lock) {
    rapidjson::Document doc;
    Status st = parse_lenient_json(req.body,
                                   lock ? "LockBatchRequestBody" : "UnlockBatchRequestBody", &doc);
    if (!st.is_ok() || !doc.IsObject()) {
        reply_code(reply, req, RC::kSystemError,
                   st.is_ok() ? std::string("lock body is not an object") : st.message());
        return;
    }
    const std::string group = json_string(doc, "consumerGroup");
    const std::string client = json_string(doc, "clientId");
    if (group.empty() || client.empty()) {
        reply_code(reply, req, RC::kSystemError, "lock body needs consumerGroup and clientId");
        return;
    }
    std::set<MessageQueueId> mqs;
    auto set = doc.FindMember("mqSet");
    if (set != doc.MemberEnd() && set->value.IsArray()) {
        for (const auto& m : set->value.GetArray()) {
            MessageQueueId q;
            q.topic = json_string(m, "topic");
            q.broker_name = json_string(m, "brokerName");
            q.queue_id = static_cast<int32_t>(json_int(m, "queueId", 0));
            mqs.insert(std::move(q));
        }
    }
    if (!lock) {
        ctx_.locks->unlock_batch(group, mqs, client);
        reply_code(reply, req, RC::kSuccess);
        return;
    }
    const auto locked = ctx_.locks->try_lock_batch(group, mqs, client);
    protocol::JsonWriter w;
    w.begin_object().key("lockOKMQSet").begin_array();
    for (const auto& q : locked) {
        w.begin_object()
            .member("brokerName", q.broker_name)
            .member("queueId", q.queue_id)
            .member("topic", q.topic)
            .end_object();
    }
    w.end_array().end_object();
    reply_body(reply, req, w.take());
}

void AdminBrokerProcessor::create_topic(const RequestContext& /*rc*/, const RemotingCommand& req,
                                        const Reply& reply) {
    protocol::CreateTopicRequestHeader h;
    if (!decode_or_reply(req, reply, &h)) {
        return;
    }
    if (Status st = validate_topic(h.topic); !st.is_ok()) {
        reply_code(reply, req, RC::kInvalidParameter, st.message());
        return;
    }
    if (h.topic == ctx_.config->get().broker_cluster_name) {
        reply_code(reply, req, RC::kInvalidParameter,
                   fmt::format("The topic[{}] is conflict with system topic.", h.topic));
        return;
    }
    TopicConfig c;
    c.topic_name = h.topic;
    c.read_queue_nums = h.read_queue_nums;
    c.write_queue_nums = h.write_queue_nums;
    c.perm = h.perm;
    c.topic_filter_type = protocol::topic_filter_type_from_name(h.topic_filter_type);
    c.topic_sys_flag = h.topic_sys_flag.value_or(0);
    c.order = h.order;
    if (auto old = ctx_.topics->select(h.topic)) {
        c.attributes = old->attributes;
    }
    if (h.attributes && !h.attributes->empty()) {
        // "+k=v,+k2=v2,-k3": + adds or replaces, - removes.
        std::string_view rest = *h.attributes;
        while (!rest.empty()) {
            const size_t comma = rest.find(',');
            std::string_view item = rest.substr(0, comma);
            rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
            if (item.size() < 2 || (item[0] != '+' && item[0] != '-')) {
                reply_code(reply, req, RC::kInvalidParameter,
                           fmt::format("attribute '{}' must start with + or -", item));
                return;
            }
            const bool add = item[0] == '+';
            item.remove_prefix(1);
            const size_t eq = item.find('=');
            if (add) {
                if (eq == std::string_view::npos) {
                    reply_code(reply, req, RC::kInvalidParameter,
                               fmt::format("attribute '+{}' needs a value", item));
                    return;
                }
                c.attributes[std::string(item.substr(0, eq))] = std::string(item.substr(eq + 1));
            } else {
                c.attributes.erase(std::string(item));
            }
        }
    }
    Status st = ctx_.topics->update(c);
    if (!st.is_ok()) {
        reply_code(reply, req,
                   st.code() == Errc::kInvalidArgument ? RC::kInvalidParameter : RC::kSystemError,
                   st.message());
        return;
    }
    if (ctx_.on_topics_changed) {
        ctx_.on_topics_changed();
    }
    reply_code(reply, req, RC::kSuccess);
}

void AdminBrokerProcessor::topic_stats(const RequestContext& /*rc*/, const RemotingCommand& req,
                                       const Reply& reply) {
    protocol::TopicRequestHeader h;
    if (!decode_or_reply(req, reply, &h)) {
        return;
    }
    auto t = ctx_.topics->select(h.topic);
    if (!t) {
        reply_code(reply, req, RC::kTopicNotExist, fmt::format("topic[{}] not exist", h.topic));
        return;
    }
    const std::string broker = ctx_.config->get().broker_name;
    protocol::JsonWriter w;
    w.begin_object().key("offsetTable").begin_object();
    for (int32_t q = 0; q < t->write_queue_nums; ++q) {
        const int64_t max = ctx_.store->max_offset_in_queue(h.topic, q);
        const int64_t min = std::max<int64_t>(0, ctx_.store->min_offset_in_queue(h.topic, q));
        int64_t last = 0;
        if (max > 0) {
            last = std::max<int64_t>(0, ctx_.store->message_store_time(h.topic, q, max - 1));
        }
        w.raw_key(mq_key_json(broker, q, h.topic));
        w.begin_object()
            .member("lastUpdateTimestamp", last)
            .member("maxOffset", max)
            .member("minOffset", min)
            .end_object();
    }
    // 4.9.8: TOPIC_PUT_NUMS' per-minute tps of the topic (0 before its first message).
    double put_tps = 0;
    if (ctx_.stats_manager != nullptr) {
        if (auto s = ctx_.stats_manager->in_minute(kTopicPutNums, h.topic)) {
            put_tps = s->tps;
        }
    }
    w.end_object().member("topicPutTps", put_tps).end_object();
    reply_body(reply, req, w.take());
}

namespace {

void write_stats_item(protocol::JsonWriter* w, std::string_view name, const StatsSnapshot& s) {
    w->key(name).begin_object().member("avgpt", s.avgpt).member("sum", s.sum).member("tps", s.tps);
    w->end_object();
}

}  // namespace

// 4.9.8 AdminBrokerProcessor#ViewBrokerStatsData: SYSTEM_ERROR "The stats <name> <key> not
// exist" for an item or key never counted.
void AdminBrokerProcessor::view_stats(const RequestContext& /*rc*/, const RemotingCommand& req,
                                      const Reply& reply) {
    const std::string* name = req.ext("statsName");
    const std::string* key = req.ext("statsKey");
    if (name == nullptr || key == nullptr) {
        reply_code(reply, req, RC::kSystemError,
                   fmt::format("the custom field <{}> is null",
                               name == nullptr ? "statsName" : "statsKey"));
        return;
    }
    std::optional<StatsSnapshot> minute;
    if (ctx_.stats_manager != nullptr) {
        minute = ctx_.stats_manager->in_minute(*name, *key);
    }
    if (!minute) {
        reply_code(reply, req, RC::kSystemError,
                   fmt::format("The stats <{}> <{}> not exist", *name, *key));
        return;
    }
    const StatsSnapshot hour = ctx_.stats_manager->in_hour(*name, *key).value_or(StatsSnapshot{});
    const StatsSnapshot day = ctx_.stats_manager->in_day(*name, *key).value_or(StatsSnapshot{});
    protocol::JsonWriter w;
    w.begin_object();
    write_stats_item(&w, "statsDay", day);
    write_stats_item(&w, "statsHour", hour);
    write_stats_item(&w, "statsMinute", *minute);
    w.end_object();
    reply_body(reply, req, w.take());
}

// 4.9.8 AdminBrokerProcessor#queryConsumeQueue. Comet has no ConsumeQueue extension, so no
// unit carries an ext address: extendDataJson, bitMap and msg stay null and eval false, as
// 4.9.8 answers for a unit without one. Differs: filterData omits the compiled expression.
void AdminBrokerProcessor::query_consume_queue(const RequestContext& /*rc*/,
                                               const RemotingCommand& req, const Reply& reply) {
    protocol::QueryConsumeQueueRequestHeader h;
    if (!decode_or_reply(req, reply, &h)) {
        return;
    }
    const auto bounds = ctx_.store->consume_queue_bounds(h.topic, h.queue_id);
    if (!bounds) {
        reply_code(reply, req, RC::kSystemError,
                   fmt::format("{}@{} is not exist!", h.queue_id, h.topic));
        return;
    }
    protocol::JsonWriter w;
    w.begin_object();
    std::optional<SubscriptionData> sub;
    if (h.consumer_group) {
        sub = ctx_.consumers->find_subscription(*h.consumer_group, h.topic);
        if (!sub) {
            w.member("filterData", fmt::format("{}@{} is not online!", *h.consumer_group, h.topic));
        } else {
            // JSON.toJSONString(filterData, true): "null" for a TAG subscription.
            std::optional<ConsumerFilterInfo> f;
            if (ctx_.filters != nullptr) {
                f = ctx_.filters->describe(h.topic, *h.consumer_group);
            }
            w.member("filterData",
                     f ? pretty_filter_data(*f, *h.consumer_group, h.topic) : std::string("null"));
        }
    }
    w.member("maxQueueIndex", bounds->max_offset).member("minQueueIndex", bounds->min_offset);
    // Java getIndexBuffer: null below the min or at/after the end of the written units; the
    // answer is then SUCCESS without a body, the remark saying why. Otherwise the units from
    // `index` to the end of its segment, at most `count`.
    const auto units =
        ctx_.store->consume_queue_index_buffer(h.topic, h.queue_id, h.index, std::max(0, h.count));
    if (!units) {
        reply_code(reply, req, RC::kSuccess,
                   fmt::format("Index {} of {}@{} is not exist!", h.index, h.queue_id, h.topic));
        return;
    }
    w.key("queueData").begin_array();
    for (const auto& u : *units) {
        w.begin_object()
            .member("eval", false)
            .member("physicOffset", u.physical_offset)
            .member("physicSize", u.size)
            .member("tagsCode", u.tags_code)
            .end_object();
    }
    w.end_array();
    if (sub) {
        rapidjson::Document doc;
        rapidjson::Value v = sub->to_json(doc.GetAllocator());
        rapidjson::StringBuffer buf;
        rapidjson::Writer<rapidjson::StringBuffer> jw(buf);
        v.Accept(jw);
        w.key("subscriptionData").raw(std::string_view(buf.GetString(), buf.GetSize()));
    }
    w.end_object();
    reply_body(reply, req, w.take());
}

void AdminBrokerProcessor::consume_stats(const RequestContext& /*rc*/, const RemotingCommand& req,
                                         const Reply& reply) {
    protocol::GetConsumeStatsRequestHeader h;
    if (!decode_or_reply(req, reply, &h)) {
        return;
    }
    std::set<std::string> topics;
    if (h.topic && !h.topic->empty()) {
        topics.insert(*h.topic);
    } else {
        topics = ctx_.offsets->topics_of_group(h.consumer_group);
    }
    const std::string broker = ctx_.config->get().broker_name;
    // 4.9.8: the sum over the topics of GROUP_GET_NUMS' per-minute tps (topic@group).
    double consume_tps = 0;
    if (ctx_.stats_manager != nullptr) {
        for (const auto& topic : topics) {
            if (auto s =
                    ctx_.stats_manager->in_minute(kGroupGetNums, topic + "@" + h.consumer_group)) {
                consume_tps += s->tps;
            }
        }
    }
    protocol::JsonWriter w;
    w.begin_object().member("consumeTps", consume_tps).key("offsetTable").begin_object();
    for (const auto& topic : topics) {
        auto t = ctx_.topics->select(topic);
        if (!t) {
            continue;
        }
        for (int32_t q = 0; q < t->read_queue_nums; ++q) {
            const int64_t broker_offset =
                std::max<int64_t>(0, ctx_.store->max_offset_in_queue(topic, q));
            int64_t consumer_offset = ctx_.offsets->query_offset(h.consumer_group, topic, q);
            if (consumer_offset < 0) {
                consumer_offset = 0;
            }
            int64_t last = 0;
            if (consumer_offset > 0) {
                last = std::max<int64_t>(
                    0, ctx_.store->message_store_time(topic, q, consumer_offset - 1));
            }
            w.raw_key(mq_key_json(broker, q, topic));
            w.begin_object()
                .member("brokerOffset", broker_offset)
                .member("consumerOffset", consumer_offset)
                .member("lastTimestamp", last)
                .member("pullOffset", consumer_offset)
                .end_object();
        }
    }
    w.end_object().end_object();
    reply_body(reply, req, w.take());
}

namespace {

// Java MixAll#humanReadableByteCount(bytes, false): "512 B", "1.5 KiB", "2.0 GiB".
std::string human_readable_bytes(int64_t bytes) {
    if (bytes < 1024) {
        return fmt::format("{} B", bytes);
    }
    const int exp = static_cast<int>(std::log(static_cast<double>(bytes)) / std::log(1024.0));
    return fmt::format("{:.1f} {}iB", static_cast<double>(bytes) / std::pow(1024.0, exp),
                       "KMGTPE"[exp - 1]);
}

}  // namespace

// The store's keys reshaped as 4.9.8's DefaultMessageStore#getRuntimeInfo and
// AdminBrokerProcessor#prepareRuntimeInfo print them.
void AdminBrokerProcessor::add_store_runtime_info(std::map<std::string, std::string>* t) const {
    auto& table = *t;
    // 4.9.8 prints the unflushed bytes human-readable ("0 B"); the store keeps the number.
    if (auto it = table.find("remainHowManyDataToFlush"); it != table.end()) {
        it->second = human_readable_bytes(std::strtoll(it->second.c_str(), nullptr, 10));
    }
    // Comet writes the CommitLog through its mapping, never through a TransientStorePool:
    // 4.9.8 answers Integer.MAX_VALUE without the pool and omits remainHowManyDataToCommit.
    table["remainTransientStoreBufferNumbs"] = std::to_string(std::numeric_limits<int32_t>::max());
    // ScheduleMessageService#buildRunningStats: "<next offset>,<max offset>" of each delay
    // level's queue in SCHEDULE_TOPIC_XXXX (queue level - 1).
    if (ctx_.schedule != nullptr) {
        for (const auto& [level, offset] : ctx_.schedule->offsets()) {
            table[fmt::format("scheduleMessageOffset_{}", level)] = fmt::format(
                "{},{}", offset, ctx_.store->max_offset_in_queue("SCHEDULE_TOPIC_XXXX", level - 1));
        }
    }
}

void AdminBrokerProcessor::runtime_info(const RequestContext& /*rc*/, const RemotingCommand& req,
                                        const Reply& reply) {
    std::map<std::string, std::string> table = ctx_.store->runtime_info();
    add_store_runtime_info(&table);
    const BrokerConfig cfg = ctx_.config->get();
    table["brokerVersionDesc"] = "V4_9_8";
    table["brokerVersion"] = std::to_string(protocol::kCometVersion);
    // RocketMQ 5 (4.9.8 has no such key): whether the master-only services run here.
    table["brokerActive"] = ctx_.serves_as_master && ctx_.serves_as_master() ? "true" : "false";
    table["msgPutTotalTodayNow"] = std::to_string(ctx_.stats->put_messages.load());
    table["msgGetTotalTodayNow"] = std::to_string(ctx_.stats->got_messages.load());
    // Recorded at local midnight (BrokerController::sample_stats), 0 until the first one.
    table["msgPutTotalYesterdayMorning"] = std::to_string(ctx_.stats->put_yesterday_morning.load());
    table["msgPutTotalTodayMorning"] = std::to_string(ctx_.stats->put_today_morning.load());
    table["msgGetTotalYesterdayMorning"] = std::to_string(ctx_.stats->get_yesterday_morning.load());
    table["msgGetTotalTodayMorning"] = std::to_string(ctx_.stats->get_today_morning.load());
    // putTps, getTransferedTps, getFoundTps, getMissTps, getTotalTps: the store's sliding
    // windows (StoreStatsService, sampled every second), as RocketMQ reports them.
    table["startAcceptSendRequestTimeStamp"] =
        std::to_string(cfg.start_accept_send_request_time_stamp);
    table["bootTimestamp"] = std::to_string(ctx_.stats->start_millis.load());
    table["pullSuspendedTotal"] = std::to_string(ctx_.stats->pulls_suspended.load());
    table["pullRequestsHeld"] = std::to_string(ctx_.holds->held_count());
    table["brokerRole"] = cfg.broker_role;
    if (ctx_.replication != nullptr) {
        for (auto& [k, v] : ctx_.replication->runtime_info()) {
            table[k] = std::move(v);
        }
    }
    if (ctx_.extra_runtime_info) {
        for (auto& [k, v] : ctx_.extra_runtime_info()) {
            table[k] = std::move(v);
        }
    }
    protocol::JsonWriter w;
    w.begin_object().key("table").begin_object();
    for (const auto& [k, v] : table) {
        w.member(k, v);
    }
    w.end_object().end_object();
    reply_body(reply, req, w.take());
}

}  // namespace comet::broker
