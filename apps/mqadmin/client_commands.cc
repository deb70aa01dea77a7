// mqadmin commands of RocketMQ 4.9.8 about broker permissions on the name servers and about
// clients and consume offsets: wipeWritePerm, addWritePerm, consumerConnection,
// producerConnection, brokerConsumeStats, resetOffsetByTime, cloneGroupOffset. Names, options and
// output lines follow RocketMQ's tools (MQAdminStartup); docs/mqadmin.md lists the differences.

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <ctime>
#include <map>
#include <memory>
#include <set>

#include "client/admin_client.h"
#include "mqadmin/admin_util.h"
#include "mqadmin/commands.h"
#include "protocol/admin_bodies.h"
#include "protocol/json_body.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::mqadmin {
namespace {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using client::AdminClient;

// Java UtilAll#frontStringAtLeast.
std::string front(const std::string& s, size_t n) { return s.size() > n ? s.substr(0, n) : s; }

// "yyyy-MM-dd HH:mm:ss" (local time).
std::string date_time(int64_t ms) {
    const std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    localtime_r(&secs, &tm);
    return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1,
                       tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

// The master address of every broker group serving `topic`.
Result<std::vector<std::pair<std::string, std::string>>> masters_of(AdminClient& admin,
                                                                    const std::string& topic) {
    COMET_ASSIGN_OR_RETURN(auto route, admin.topic_route(topic));
    std::vector<std::pair<std::string, std::string>> out;  // brokerName, address
    for (const auto& bd : route.broker_datas) {
        auto m = bd.broker_addrs.find(0);
        if (m != bd.broker_addrs.end()) {
            out.emplace_back(bd.broker_name, m->second);
        }
    }
    if (out.empty()) {
        return Status::error(Errc::kNotFound, "topic {} has no master broker", topic);
    }
    return out;
}

Status operate_write_perm(Context& ctx, bool wipe) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    const std::string broker_name = ctx.opts.get('b');
    const char* verb = wipe ? "wipe" : "add";
    for (const auto& ns : admin->instance().namesrv_addrs()) {
        auto req = protocol::RemotingCommand::request(wipe ? Req::kWipeWritePermOfBroker
                                                           : Req::kAddWritePermOfBroker);
        req.set_ext("brokerName", broker_name);
        auto resp = call_ok(*admin, ns, std::move(req), "write perm");
        if (resp.is_ok()) {
            const std::string* n = resp->ext(wipe ? "wipeTopicCount" : "addTopicCount");
            fmt::print(ctx.out, "{} write perm of broker[{}] in name server[{}] OK, {}\n", verb,
                       broker_name, ns, n != nullptr ? *n : "0");
        } else {
            fmt::print(ctx.out, "{} write perm of broker[{}] in name server[{}] Failed\n", verb,
                       broker_name, ns);
        }
    }
    return Status::ok();
}

Status cmd_wipe_write_perm(Context& ctx) { return operate_write_perm(ctx, true); }
Status cmd_add_write_perm(Context& ctx) { return operate_write_perm(ctx, false); }

Status cmd_consumer_connection(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    const std::string group = ctx.opts.get('g');
    protocol::ConsumerConnection cc;
    if (ctx.opts.has('b')) {
        auto req = protocol::RemotingCommand::request(Req::kGetConsumerConnectionList);
        req.set_ext("consumerGroup", group);
        COMET_ASSIGN_OR_RETURN(
            auto resp, call_ok(*admin, ctx.opts.get('b'), std::move(req), "consumer connection"));
        COMET_ASSIGN_OR_RETURN(cc, protocol::ConsumerConnection::decode(resp.body));
    } else {
        // Java examineConsumerConnectionInfo: the brokers of the group's retry topic.
        COMET_ASSIGN_OR_RETURN(cc, admin->consumer_connection(group, "%RETRY%" + group));
    }
    fmt::print(ctx.out, "{:<36} {:<22} {:<10} {}\n", "#ClientId", "#ClientAddr", "#Language",
               "#Version");
    for (const auto& c : cc.connection_set) {
        fmt::print(ctx.out, "{:<36} {:<22} {:<10} {}\n", c.client_id, c.client_addr, c.language,
                   version_desc(c.version));
    }
    fmt::print(ctx.out, "\nBelow is subscription:\n");
    fmt::print(ctx.out, "{:<20} {}\n", "#Topic", "#SubExpression");
    for (const auto& [topic, sd] : cc.subscription_table) {
        fmt::print(ctx.out, "{:<20} {}\n", topic, sd.sub_string);
    }
    fmt::print(ctx.out, "\n");
    fmt::print(ctx.out, "ConsumeType: {}\n", cc.consume_type.value_or("null"));
    fmt::print(ctx.out, "MessageModel: {}\n", cc.message_model.value_or("null"));
    fmt::print(ctx.out, "ConsumeFromWhere: {}\n", cc.consume_from_where.value_or("null"));
    return Status::ok();
}

Status cmd_producer_connection(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    const std::string group = ctx.opts.get('g');
    COMET_ASSIGN_OR_RETURN(auto masters, masters_of(*admin, ctx.opts.get('t')));
    // Java examineProducerConnectionInfo: the first master of the topic that answers.
    Status last = Status::ok();
    for (const auto& [name, addr] : masters) {
        auto req = protocol::RemotingCommand::request(Req::kGetProducerConnectionList);
        req.set_ext("producerGroup", group);
        auto resp = call_ok(*admin, addr, std::move(req), "producer connection");
        if (!resp.is_ok()) {
            last = resp.status();
            continue;
        }
        COMET_ASSIGN_OR_RETURN(auto pc, protocol::ProducerConnection::decode(resp->body));
        int i = 1;
        for (const auto& c : pc.connection_set) {
            fmt::print(ctx.out, "{:04}  {:<32} {:<22} {:<8} {}\n", i++, c.client_id, c.client_addr,
                       c.language, version_desc(c.version));
        }
        return Status::ok();
    }
    return last;
}

// statsAll's figures of one stats key on one broker: VIEW_BROKER_STATS_DATA's minute tps and
// StatsAllSubCommand#compute24HourSum (the day sum, else the hour's, else the minute's).
// Any error (never counted, broker down) counts as nothing, as in RocketMQ.
struct KeyStats {
    double tps = 0;
    int64_t sum24h = 0;
};

KeyStats view_stats(AdminClient& admin, const std::string& addr, const std::string& name,
                    const std::string& key) {
    KeyStats out;
    auto req = protocol::RemotingCommand::request(Req::kViewBrokerStatsData);
    req.set_ext("statsName", name);
    req.set_ext("statsKey", key);
    auto resp = call_ok(admin, addr, std::move(req), "view broker stats data");
    if (!resp.is_ok()) {
        return out;
    }
    auto doc = protocol::parse_json_body(resp.value().body);
    if (!doc.is_ok() || !doc.value().IsObject()) {
        return out;
    }
    const auto sum_of = [&](const char* span) -> int64_t {
        auto it = doc.value().FindMember(span);
        if (it == doc.value().MemberEnd() || !it->value.IsObject()) {
            return 0;
        }
        auto s = it->value.FindMember("sum");
        return s != it->value.MemberEnd() && s->value.IsInt64() ? s->value.GetInt64() : 0;
    };
    if (auto m = doc.value().FindMember("statsMinute");
        m != doc.value().MemberEnd() && m->value.IsObject()) {
        auto t = m->value.FindMember("tps");
        if (t != m->value.MemberEnd() && t->value.IsNumber()) {
            out.tps = t->value.GetDouble();
        }
    }
    for (const char* span : {"statsDay", "statsHour", "statsMinute"}) {
        if (const int64_t s = sum_of(span); s != 0) {
            out.sum24h = s;
            break;
        }
    }
    return out;
}

// The consumer groups of `topic` (QUERY_TOPIC_CONSUME_BY_WHO), over every master.
std::set<std::string> groups_of(AdminClient& admin,
                                const std::vector<std::pair<std::string, std::string>>& masters,
                                const std::string& topic) {
    std::set<std::string> out;
    for (const auto& [name, addr] : masters) {
        auto req = protocol::RemotingCommand::request(Req::kQueryTopicConsumeByWho);
        req.set_ext("topic", topic);
        auto resp = call_ok(admin, addr, std::move(req), "query topic consume by who");
        if (!resp.is_ok()) {
            continue;
        }
        auto doc = protocol::parse_json_body(resp.value().body);
        if (!doc.is_ok() || !doc.value().IsObject()) {
            continue;
        }
        auto list = doc.value().FindMember("groupList");
        if (list != doc.value().MemberEnd() && list->value.IsArray()) {
            for (const auto& g : list->value.GetArray()) {
                if (g.IsString()) {
                    out.insert(g.GetString());
                }
            }
        }
    }
    return out;
}

// RocketMQ 4.9.8 StatsAllSubCommand: per topic (retry and DLQ topics skipped) and consumer
// group, the accumulation, in/out TPS of the last minute and the messages of the last day.
Status cmd_stats_all(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    const bool active = ctx.opts.has('a');
    std::vector<std::string> topics;
    if (ctx.opts.has('t')) {
        topics.push_back(ctx.opts.get('t'));
    } else {
        COMET_ASSIGN_OR_RETURN(topics, admin->topic_list());
    }
    fmt::print(ctx.out, "{:<64}  {:<64} {:>12} {:>11} {:>11} {:>14} {:>14}\n", "#Topic",
               "#Consumer Group", "#Accumulation", "#InTPS", "#OutTPS", "#InMsg24Hour",
               "#OutMsg24Hour");
    for (const auto& topic : topics) {
        if (topic.rfind("%RETRY%", 0) == 0 || topic.rfind("%DLQ%", 0) == 0) {
            continue;
        }
        auto masters = masters_of(*admin, topic);
        if (!masters.is_ok()) {
            continue;
        }
        double in_tps = 0;
        int64_t in_day = 0;
        for (const auto& [name, addr] : masters.value()) {
            const KeyStats k = view_stats(*admin, addr, "TOPIC_PUT_NUMS", topic);
            in_tps += k.tps;
            in_day += k.sum24h;
        }
        const std::set<std::string> groups = groups_of(*admin, masters.value(), topic);
        if (groups.empty()) {
            if (!active || in_day > 0) {
                fmt::print(ctx.out, "{:<64}  {:<64} {:>12} {:>11.2f} {:>11} {:>14} {:>14}\n",
                           front(topic, 64), "", 0, in_tps, "", in_day, "NO_CONSUMER");
            }
            continue;
        }
        for (const auto& group : groups) {
            int64_t accumulation = 0;
            if (auto cs = admin->consume_stats(group, topic); cs.is_ok()) {
                for (const auto& [mq, w] : cs.value().offset_table) {
                    accumulation += w.broker_offset - w.consumer_offset;
                }
            }
            if (accumulation < 0) {
                accumulation = 0;
            }
            double out_tps = 0;
            int64_t out_day = 0;
            for (const auto& [name, addr] : masters.value()) {
                const KeyStats k = view_stats(*admin, addr, "GROUP_GET_NUMS", topic + "@" + group);
                out_tps += k.tps;
                out_day += k.sum24h;
            }
            if (!active || in_day > 0 || out_day > 0) {
                fmt::print(ctx.out, "{:<64}  {:<64} {:>12} {:>11.2f} {:>11.2f} {:>14} {:>14}\n",
                           front(topic, 64), front(group, 64), accumulation, in_tps, out_tps,
                           in_day, out_day);
            }
        }
    }
    return Status::ok();
}

Status cmd_broker_consume_stats(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    COMET_ASSIGN_OR_RETURN(const bool order, ctx.opts.get_bool('o', false));
    COMET_ASSIGN_OR_RETURN(const int64_t level, ctx.opts.get_int('l', 0));
    auto req = protocol::RemotingCommand::request(Req::kGetBrokerConsumeStats);
    req.set_ext("isOrder", order ? "true" : "false");
    COMET_ASSIGN_OR_RETURN(
        auto resp, call_ok(*admin, ctx.opts.get('b'), std::move(req), "broker consume stats"));
    COMET_ASSIGN_OR_RETURN(auto doc, protocol::parse_json_body(resp.body));
    fmt::print(ctx.out, "{:<64}  {:<64}  {:<32}  {:<4}  {:<20}  {:<20}  {:<20}  {}\n", "#Topic",
               "#Group", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset", "#Diff",
               "#LastTime");
    auto list = doc.FindMember("consumeStatsList");
    if (list != doc.MemberEnd() && list->value.IsArray()) {
        for (const auto& by_group : list->value.GetArray()) {
            if (!by_group.IsObject()) {
                continue;
            }
            for (const auto& g : by_group.GetObject()) {
                const std::string group = g.name.GetString();
                if (!g.value.IsArray()) {
                    continue;
                }
                for (const auto& stats : g.value.GetArray()) {
                    COMET_ASSIGN_OR_RETURN(auto cs, protocol::ConsumeStats::from_json(stats));
                    for (const auto& [mq, w] : cs.offset_table) {
                        const int64_t diff = w.broker_offset - w.consumer_offset;
                        if (diff < level || w.last_timestamp <= 0) {
                            continue;  // RocketMQ prints only queues with a last timestamp
                        }
                        fmt::print(
                            ctx.out, "{:<64}  {:<64}  {:<32}  {:<4}  {:<20}  {:<20}  {:<20}  {}\n",
                            front(mq.topic, 64), group, front(mq.broker_name, 32), mq.queue_id,
                            w.broker_offset, w.consumer_offset, diff, date_time(w.last_timestamp));
                    }
                }
            }
        }
    }
    auto total = doc.FindMember("totalDiff");
    fmt::print(ctx.out, "\nDiff Total: {}\n",
               total != doc.MemberEnd() && total->value.IsInt64() ? total->value.GetInt64() : 0);
    return Status::ok();
}

// ResetOffsetByTimeOldCommand: no consumer online, so the offsets are written with
// UPDATE_CONSUMER_OFFSET from SEARCH_OFFSET_BY_TIMESTAMP (or the max offset for "now").
// `banner` false: skipAccumulatedMessage, which prints the table only.
Status reset_offset_old(Context& ctx, AdminClient& admin, const std::string& group,
                        const std::string& topic, int64_t timestamp, bool force,
                        const std::string& ts_text, bool banner) {
    COMET_ASSIGN_OR_RETURN(auto masters, masters_of(admin, topic));
    COMET_ASSIGN_OR_RETURN(auto stats, admin.topic_stats(topic));
    if (banner) {
        fmt::print(ctx.out,
                   "rollback consumer offset by specified consumerGroup[{}], topic[{}], "
                   "force[{}], timestamp(string)[{}], timestamp(long)[{}]\n",
                   group, topic, force, ts_text, timestamp);
    }
    fmt::print(ctx.out, "{:<20}  {:<20}  {:<20}  {:<20}  {:<20}  {:<20}\n", "#brokerName",
               "#queueId", "#brokerOffset", "#consumerOffset", "#timestampOffset",
               "#rollbackOffset");
    for (const auto& [mq, off] : stats.offset_table) {
        std::string addr;
        for (const auto& [name, a] : masters) {
            if (name == mq.broker_name) {
                addr = a;
            }
        }
        if (addr.empty()) {
            continue;
        }
        auto q = protocol::RemotingCommand::request(Req::kQueryConsumerOffset);
        q.set_ext("consumerGroup", group);
        q.set_ext("topic", topic);
        q.set_ext("queueId", std::to_string(mq.queue_id));
        COMET_ASSIGN_OR_RETURN(auto qr, admin.instance().invoke(addr, std::move(q)));
        // A queue the group never consumed counts from its min offset (Java: topic stats).
        int64_t consumer_offset = off.min_offset;
        if (qr.code == RC::kSuccess && qr.ext("offset") != nullptr) {
            consumer_offset = std::stoll(*qr.ext("offset"));
        }
        auto s = protocol::RemotingCommand::request(
            timestamp == -1 ? Req::kGetMaxOffset : Req::kSearchOffsetByTimestamp);
        s.set_ext("topic", topic);
        s.set_ext("queueId", std::to_string(mq.queue_id));
        if (timestamp != -1) {
            s.set_ext("timestamp", std::to_string(timestamp));
        }
        COMET_ASSIGN_OR_RETURN(auto sr, call_ok(admin, addr, std::move(s), "search offset"));
        const int64_t reset = sr.ext("offset") != nullptr ? std::stoll(*sr.ext("offset")) : 0;
        int64_t rollback = consumer_offset;
        if (force || reset <= consumer_offset) {
            rollback = reset;
            auto u = protocol::RemotingCommand::request(Req::kUpdateConsumerOffset);
            u.set_ext("consumerGroup", group);
            u.set_ext("topic", topic);
            u.set_ext("queueId", std::to_string(mq.queue_id));
            u.set_ext("commitOffset", std::to_string(reset));
            COMET_RETURN_IF_ERROR(call_ok(admin, addr, std::move(u), "update offset").status());
        }
        fmt::print(ctx.out, "{:<20}  {:<20}  {:<20}  {:<20}  {:<20}  {:<20}\n",
                   front(mq.broker_name, 32), mq.queue_id, off.max_offset, consumer_offset, reset,
                   rollback);
    }
    return Status::ok();
}

// INVOKE_BROKER_TO_RESET_OFFSET on every master of `topic` (timestamp -1: the max offset),
// falling back to reset_offset_old when no consumer of `group` is online; prints the offsets.
Status reset_offsets(Context& ctx, AdminClient& admin_client, const std::string& group,
                     const std::string& topic, int64_t timestamp, bool force, bool for_cpp,
                     const std::string& ts_text, bool banner);

Status cmd_reset_offset_by_time(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    const std::string group = ctx.opts.get('g');
    const std::string topic = ctx.opts.get('t');
    const std::string ts_text = ctx.opts.get('s');
    int64_t timestamp = -1;
    if (ts_text != "now") {
        try {
            size_t used = 0;
            timestamp = std::stoll(ts_text, &used);
            if (used != ts_text.size()) {
                throw std::invalid_argument(ts_text);
            }
        } catch (...) {
            // yyyy-MM-dd#HH:mm:ss:SSS (local time)
            std::tm tm{};
            int ms = 0;
            if (std::sscanf(ts_text.c_str(), "%d-%d-%d#%d:%d:%d:%d", &tm.tm_year, &tm.tm_mon,
                            &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7) {
                return Status::error(Errc::kInvalidArgument,
                                     "timestamp '{}' is not now, millis or "
                                     "yyyy-MM-dd#HH:mm:ss:SSS",
                                     ts_text);
            }
            tm.tm_year -= 1900;
            tm.tm_mon -= 1;
            tm.tm_isdst = -1;
            timestamp = static_cast<int64_t>(std::mktime(&tm)) * 1000 + ms;
        }
    }
    COMET_ASSIGN_OR_RETURN(const bool force, ctx.opts.get_bool('f', true));
    return reset_offsets(ctx, *admin, group, topic, timestamp, force, ctx.opts.has('c'), ts_text,
                         true);
}

// skipAccumulatedMessage: resetOffsetByTime to the max offset (timestamp -1), as 4.9.8's
// SkipAccumulationSubCommand, printing only the offset table.
Status cmd_skip_accumulated_message(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    COMET_ASSIGN_OR_RETURN(const bool force, ctx.opts.get_bool('f', true));
    return reset_offsets(ctx, *admin, ctx.opts.get('g'), ctx.opts.get('t'), -1, force, false,
                         "now", false);
}

Status reset_offsets(Context& ctx, AdminClient& admin_client, const std::string& group,
                     const std::string& topic, int64_t timestamp, bool force, bool for_cpp,
                     const std::string& ts_text, bool banner) {
    AdminClient* admin = &admin_client;
    COMET_ASSIGN_OR_RETURN(auto masters, masters_of(*admin, topic));
    std::map<std::pair<std::string, int32_t>, int64_t> table;
    for (const auto& [name, addr] : masters) {
        auto req = protocol::RemotingCommand::request(Req::kInvokeBrokerToResetOffset);
        if (for_cpp) {
            req.language = protocol::LanguageCode::kCpp;
        } else {
            req.language = protocol::LanguageCode::kJava;
        }
        req.set_ext("topic", topic);
        req.set_ext("group", group);
        req.set_ext("timestamp", std::to_string(timestamp));
        req.set_ext("isForce", force ? "true" : "false");
        COMET_ASSIGN_OR_RETURN(auto resp, admin->instance().invoke(addr, std::move(req)));
        if (resp.code == RC::kConsumerNotOnline) {
            return reset_offset_old(ctx, *admin, group, topic, timestamp, force, ts_text,
                                    banner);
        }
        if (resp.code != RC::kSuccess) {
            return client::response_error(fmt::format("reset offset at {}", addr), resp);
        }
        COMET_ASSIGN_OR_RETURN(auto doc, protocol::parse_json_body(resp.body));
        auto ot = doc.FindMember("offsetTable");
        if (ot != doc.MemberEnd() && ot->value.IsObject()) {
            for (const auto& e : ot->value.GetObject()) {
                // fastjson MessageQueue key: {"brokerName":..,"queueId":..,"topic":..}
                auto mq = protocol::MessageQueue::decode(
                    std::string_view(e.name.GetString(), e.name.GetStringLength()));
                if (!mq.is_ok() || !e.value.IsInt64()) {
                    continue;
                }
                table[{mq->broker_name, mq->queue_id}] = e.value.GetInt64();
            }
        }
    }
    if (banner) {
        fmt::print(ctx.out,
                   "rollback consumer offset by specified group[{}], topic[{}], force[{}], "
                   "timestamp(string)[{}], timestamp(long)[{}]\n",
                   group, topic, force, ts_text, timestamp);
    }
    fmt::print(ctx.out, "{:<40}  {:<40}  {:<40}\n", "#brokerName", "#queueId", "#offset");
    for (const auto& [k, off] : table) {
        fmt::print(ctx.out, "{:<40}  {:<40}  {:<40}\n", front(k.first, 32), k.second, off);
    }
    return Status::ok();
}

Status cmd_clone_group_offset(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    const std::string src = ctx.opts.get('s');
    const std::string dest = ctx.opts.get('d');
    const std::string topic = ctx.opts.get('t');
    COMET_ASSIGN_OR_RETURN(const bool offline, ctx.opts.get_bool('o', false));
    COMET_ASSIGN_OR_RETURN(auto masters, masters_of(*admin, topic));
    for (const auto& [name, addr] : masters) {
        auto req = protocol::RemotingCommand::request(Req::kCloneGroupOffset);
        req.set_ext("srcGroup", src);
        req.set_ext("destGroup", dest);
        req.set_ext("topic", topic);
        req.set_ext("offline", offline ? "true" : "false");
        COMET_RETURN_IF_ERROR(call_ok(*admin, addr, std::move(req), "clone group offset").status());
    }
    fmt::print(ctx.out, "clone group offset success. srcGroup[{}], destGroup=[{}], topic[{}]", src,
               dest, topic);
    return Status::ok();
}

}  // namespace

std::vector<Command> client_admin_commands() {
    return {
        {"wipeWritePerm",
         "Wipe write perm of broker in all name server you defined in the -n param",
         {opt('b', "brokerName", true, "broker name")},
         cmd_wipe_write_perm},
        {"addWritePerm",
         "Add write perm of broker in all name server you defined in the -n param",
         {opt('b', "brokerName", true, "broker name")},
         cmd_add_write_perm},
        {"consumerConnection",
         "Query consumer's socket connection, client version and subscription",
         {opt('g', "consumerGroup", true, "consumer group name"),
          opt('b', "brokerAddr", false, "broker address")},
         cmd_consumer_connection},
        {"producerConnection",
         "Query producer's socket connection and client version",
         {opt('g', "producerGroup", true, "producer group name"),
          opt('t', "topic", true, "topic name")},
         cmd_producer_connection},
        {"brokerConsumeStats",
         "Fetch broker consume stats data",
         {opt('b', "brokerAddr", true, "Broker address"),
          opt('t', "timeoutMillis", false, "request timeout Millis"),
          opt('l', "level", false, "threshold of print diff"),
          opt('o', "order", false, "order topic")},
         cmd_broker_consume_stats},
        {"statsAll",
         "Topic and Consumer tps stats",
         {opt('a', "activeTopic", false, "print active topic only", false),
          opt('t', "topic", false, "print select topic only")},
         cmd_stats_all},
        {"resetOffsetByTime",
         "Reset consumer offset by timestamp(without client restart).",
         {opt('g', "group", true, "set the consumer group"),
          opt('t', "topic", true, "set the topic"),
          opt('s', "timestamp", true,
              "set the timestamp[now|currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]"),
          opt('f', "force", false, "set the force rollback by timestamp switch[true|false]"),
          opt('c', "cplus", false, "reset c++ client offset", false)},
         cmd_reset_offset_by_time},
        {"skipAccumulatedMessage",
         "Skip all messages that are accumulated (not consumed) currently",
         {opt('g', "group", true, "set the consumer group"),
          opt('t', "topic", true, "set the topic"),
          opt('f', "force", false, "set the force rollback by timestamp switch[true|false]")},
         cmd_skip_accumulated_message},
        {"cloneGroupOffset",
         "clone offset from other group.",
         {opt('s', "srcGroup", true, "set source consumer group"),
          opt('d', "destGroup", true, "set destination consumer group"),
          opt('t', "topic", true, "set the topic"),
          opt('o', "offline", false, "the group or the topic is offline")},
         cmd_clone_group_offset},
    };
}

}  // namespace comet::mqadmin
