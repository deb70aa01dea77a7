// mqadmin commands of RocketMQ 4.9.8 that look into a broker's queues and consumers:
// queryCq (QUERY_CONSUME_QUEUE), cleanExpiredCQ (CLEAN_EXPIRED_CONSUMEQUEUE), consumerStatus
// (GET_CONSUMER_CONNECTION_LIST + GET_CONSUMER_RUNNING_INFO) and queryMsgTraceById (the trace
// topic's records of a message, 4.9.8's trace body format). Names, options and output lines
// follow RocketMQ's tools; docs/mqadmin.md lists the differences.

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "client/admin_client.h"
#include "mqadmin/admin_util.h"
#include "mqadmin/commands.h"
#include "mqadmin/running_info.h"
#include "protocol/admin_bodies.h"
#include "protocol/json_body.h"
#include "protocol/json_text.h"
#include "protocol/request_code.h"

namespace comet::mqadmin {
namespace {

namespace Req = protocol::RequestCode;
using client::AdminClient;

// Member readers for bodies shown as they came: numbers and numeric strings convert like
// fastjson; an absent, null or unreadable member gives 0 / false / `fallback`.
int64_t member_int(const rapidjson::Value& v, const char* key) {
    int64_t out = 0;
    (void)protocol::read_int64(v, key, &out);
    return out;
}
double member_double(const rapidjson::Value& v, const char* key) {
    double out = 0;
    (void)protocol::read_double(v, key, &out);
    return out;
}
bool member_bool(const rapidjson::Value& v, const char* key) {
    bool out = false;
    (void)protocol::read_bool(v, key, &out);
    return out;
}
std::string member_string(const rapidjson::Value& v, const char* key,
                          const std::string& fallback = {}) {
    std::string out = fallback;
    if (!protocol::read_string(v, key, &out).is_ok()) {
        return fallback;
    }
    return out;
}

// Like fastjson's JSON.toJSONString(value, true): tab-indented.
std::string pretty(const rapidjson::Value& v) {
    rapidjson::StringBuffer buf;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
    w.SetIndent('\t', 1);
    v.Accept(w);
    return std::string(buf.GetString(), buf.GetSize());
}

constexpr const char* kRule = "======================================\n";

// 4.9.8 QueryConsumeQueueCommand: -b, else the master of the topic route's first broker.
Status cmd_query_cq(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    const std::string topic = ctx.opts.get('t');
    COMET_ASSIGN_OR_RETURN(const int64_t queue_id, ctx.opts.get_int('q', 0));
    COMET_ASSIGN_OR_RETURN(const int64_t index, ctx.opts.get_int('i', 0));
    COMET_ASSIGN_OR_RETURN(const int64_t count, ctx.opts.get_int('c', 10));
    std::string broker = ctx.opts.get('b');
    if (broker.empty()) {
        auto route = admin->topic_route(topic);
        if (!route.is_ok() || route->broker_datas.empty() ||
            route->broker_datas.front().broker_addrs.count(0) == 0) {
            return Status::error(Errc::kNotFound, "No topic route data!");
        }
        broker = route->broker_datas.front().broker_addrs.at(0);
    }
    auto req = protocol::RemotingCommand::request(Req::kQueryConsumeQueue);
    req.set_ext("topic", topic);
    req.set_ext("queueId", std::to_string(queue_id));
    req.set_ext("index", std::to_string(index));
    req.set_ext("count", std::to_string(count));
    if (ctx.opts.has('g')) {
        req.set_ext("consumerGroup", ctx.opts.get('g'));
    }
    COMET_ASSIGN_OR_RETURN(auto resp, call_ok(*admin, broker, std::move(req), "query cq"));
    if (resp.body.empty()) {
        // 4.9.8 answers SUCCESS without a body when the index is outside the queue (its tool
        // then fails decoding); the remark says why.
        return Status::error(Errc::kNotFound, "{}", resp.remark.value_or("empty answer"));
    }
    rapidjson::Document doc;
    doc.Parse(resp.body.data(), resp.body.size());
    if (doc.HasParseError() || !doc.IsObject()) {
        return Status::error(Errc::kCorruption, "QueryConsumeQueueResponseBody is not JSON");
    }
    auto sub = doc.FindMember("subscriptionData");
    if (sub != doc.MemberEnd() && sub->value.IsObject()) {
        fmt::print(ctx.out, "Subscription data: \n{}\n{}", pretty(sub->value), kRule);
    }
    auto filter = doc.FindMember("filterData");
    if (filter != doc.MemberEnd() && filter->value.IsString()) {
        fmt::print(ctx.out, "Filter data: \n{}\n{}", filter->value.GetString(), kRule);
    }
    fmt::print(ctx.out, "Queue data: \nmax: {}, min: {}\n{}", member_int(doc, "maxQueueIndex"),
               member_int(doc, "minQueueIndex"), kRule);
    auto data = doc.FindMember("queueData");
    if (data != doc.MemberEnd() && data->value.IsArray()) {
        int64_t i = index;
        for (const auto& u : data->value.GetArray()) {
            auto eval = u.FindMember("eval");
            fmt::print(ctx.out,
                       "idx: {}\nConsumeQueueData{{physicOffset={}, physicSize={}, tagsCode={}, "
                       "extendDataJson='{}', bitMap='{}', eval={}, msg='{}'}}\n{}",
                       i, member_int(u, "physicOffset"), member_int(u, "physicSize"),
                       member_int(u, "tagsCode"), member_string(u, "extendDataJson", "null"),
                       member_string(u, "bitMap", "null"),
                       eval != u.MemberEnd() && eval->value.IsBool() && eval->value.GetBool()
                           ? "true"
                           : "false",
                       member_string(u, "msg", "null"), kRule);
            ++i;
        }
    }
    return Status::ok();
}

// Every broker address (masters and slaves) of `cluster`, or of every cluster when empty
// (Java ClusterInfo#retrieveAllAddrByCluster over retrieveAllClusterNames).
Result<std::vector<std::string>> cluster_addrs(AdminClient& admin, const std::string& cluster) {
    COMET_ASSIGN_OR_RETURN(auto info, admin.cluster_info());
    std::vector<std::string> addrs;
    for (const auto& [name, brokers] : info.cluster_addr_table) {
        if (!cluster.empty() && name != cluster) {
            continue;
        }
        for (const auto& b : brokers) {
            auto it = info.broker_addr_table.find(b);
            if (it == info.broker_addr_table.end()) {
                continue;
            }
            for (const auto& [id, a] : it->second.broker_addrs) {
                addrs.push_back(a);
            }
        }
    }
    return addrs;
}

// 4.9.8 CleanExpiredCQSubCommand: CLEAN_EXPIRED_CONSUMEQUEUE on -b, else on every broker of
// -c (of every cluster without it); `success`, or `false` when no broker was asked.
Status cmd_clean_expired_cq(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    std::vector<std::string> addrs;
    if (ctx.opts.has('b')) {
        addrs.push_back(ctx.opts.get('b'));
    } else {
        COMET_ASSIGN_OR_RETURN(addrs, cluster_addrs(*admin, ctx.opts.get('c')));
    }
    for (const auto& a : addrs) {
        Status st = call_ok(*admin, a, protocol::RemotingCommand::request(Req::kCleanExpiredConsumequeue),
                            "clean expired consume queue")
                        .status();
        if (!st.is_ok()) {
            return st;
        }
    }
    fmt::print(ctx.out, "{}\n", addrs.empty() ? "false" : "success");
    return Status::ok();
}

// ---- consumerStatus ----

// Java UtilAll.timeMillisToHumanString: local "yyyyMMddHHmmssSSS".
std::string compact_time(int64_t ms) {
    const std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    localtime_r(&secs, &tm);
    return fmt::format("{:04}{:02}{:02}{:02}{:02}{:02}{:03}", tm.tm_year + 1900, tm.tm_mon + 1,
                       tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
}

struct ProcessQueueInfo {
    int64_t commit_offset = 0;
    int64_t cached_min = 0;
    int64_t cached_max = 0;
    int64_t cached_count = 0;
    int64_t cached_mib = 0;
    int64_t tx_min = 0;
    int64_t tx_max = 0;
    int64_t tx_count = 0;
    bool locked = false;
    int64_t try_unlock_times = 0;
    int64_t last_lock = 0;
    bool dropped = false;
    int64_t last_pull = 0;
    int64_t last_consume = 0;

    // Java ProcessQueueInfo#toString.
    std::string text() const {
        return fmt::format(
            "ProcessQueueInfo [commitOffset={}, cachedMsgMinOffset={}, cachedMsgMaxOffset={}, "
            "cachedMsgCount={}, cachedMsgSizeInMiB={}, transactionMsgMinOffset={}, "
            "transactionMsgMaxOffset={}, transactionMsgCount={}, locked={}, tryUnlockTimes={}, "
            "lastLockTimestamp={}, droped={}, lastPullTimestamp={}, lastConsumeTimestamp={}]",
            commit_offset, cached_min, cached_max, cached_count, cached_mib, tx_min, tx_max,
            tx_count, locked, try_unlock_times, compact_time(last_lock), dropped,
            compact_time(last_pull), compact_time(last_consume));
    }
};

struct ConsumeStatus {
    double pull_rt = 0, pull_tps = 0, consume_rt = 0, consume_ok_tps = 0, consume_failed_tps = 0;
    int64_t consume_failed_msgs = 0;
};

struct Subscription {
    std::string topic;
    std::string sub_string;
    std::string expression_type;
    bool class_filter_mode = false;
    std::string tags;  // the tagsSet and codeSet as JSON, for equality
    // Java SubscriptionData#compareTo: topic@subString.
    bool operator<(const Subscription& o) const {
        return topic + "@" + sub_string < o.topic + "@" + o.sub_string;
    }
    bool operator==(const Subscription&) const = default;
};

// Java ConsumerRunningInfo as the client sends it (GET_CONSUMER_RUNNING_INFO body).
struct ConsumerRunningInfo {
    std::map<std::string, std::string> properties;
    std::vector<Subscription> subscriptions;  // sorted like Java's TreeSet
    std::map<protocol::MessageQueue, ProcessQueueInfo> mq_table;
    std::map<std::string, ConsumeStatus> status_table;
    std::optional<std::string> jstack;

    static Result<ConsumerRunningInfo> decode(std::string_view body) {
        COMET_ASSIGN_OR_RETURN(auto doc, protocol::parse_json_body(body));
        COMET_RETURN_IF_ERROR(protocol::expect_object(doc, "ConsumerRunningInfo"));
        ConsumerRunningInfo info;
        COMET_RETURN_IF_ERROR(protocol::read_string_map(doc, "properties", &info.properties));
        if (const auto* subs = protocol::find_member(doc, "subscriptionSet");
            subs != nullptr && subs->IsArray()) {
            for (const auto& s : subs->GetArray()) {
                Subscription sub;
                sub.topic = member_string(s, "topic");
                sub.sub_string = member_string(s, "subString");
                sub.expression_type = member_string(s, "expressionType");
                sub.class_filter_mode = member_bool(s, "classFilterMode");
                for (const char* k : {"tagsSet", "codeSet"}) {
                    if (const auto* t = protocol::find_member(s, k)) {
                        sub.tags += protocol::json_value_text(*t);
                    }
                }
                info.subscriptions.push_back(std::move(sub));
            }
            std::sort(info.subscriptions.begin(), info.subscriptions.end());
        }
        if (const auto* mqs = protocol::find_member(doc, "mqTable"); mqs != nullptr && mqs->IsObject()) {
            for (const auto& m : mqs->GetObject()) {
                COMET_ASSIGN_OR_RETURN(
                    auto mq, protocol::MessageQueue::decode(
                                 std::string_view(m.name.GetString(), m.name.GetStringLength())));
                const auto& v = m.value;
                ProcessQueueInfo pq;
                pq.commit_offset = member_int(v, "commitOffset");
                pq.cached_min = member_int(v, "cachedMsgMinOffset");
                pq.cached_max = member_int(v, "cachedMsgMaxOffset");
                pq.cached_count = member_int(v, "cachedMsgCount");
                pq.cached_mib = member_int(v, "cachedMsgSizeInMiB");
                pq.tx_min = member_int(v, "transactionMsgMinOffset");
                pq.tx_max = member_int(v, "transactionMsgMaxOffset");
                pq.tx_count = member_int(v, "transactionMsgCount");
                pq.locked = member_bool(v, "locked");
                pq.try_unlock_times = member_int(v, "tryUnlockTimes");
                pq.last_lock = member_int(v, "lastLockTimestamp");
                pq.dropped = member_bool(v, "droped");
                pq.last_pull = member_int(v, "lastPullTimestamp");
                pq.last_consume = member_int(v, "lastConsumeTimestamp");
                info.mq_table[mq] = pq;
            }
        }
        if (const auto* st = protocol::find_member(doc, "statusTable"); st != nullptr && st->IsObject()) {
            for (const auto& m : st->GetObject()) {
                ConsumeStatus cs;
                cs.pull_rt = member_double(m.value, "pullRT");
                cs.pull_tps = member_double(m.value, "pullTPS");
                cs.consume_rt = member_double(m.value, "consumeRT");
                cs.consume_ok_tps = member_double(m.value, "consumeOKTPS");
                cs.consume_failed_tps = member_double(m.value, "consumeFailedTPS");
                cs.consume_failed_msgs = member_int(m.value, "consumeFailedMsgs");
                info.status_table[std::string(m.name.GetString(), m.name.GetStringLength())] = cs;
            }
        }
        std::optional<std::string> jstack;
        COMET_RETURN_IF_ERROR(protocol::read_string(doc, "jstack", &jstack));
        info.jstack = jstack;
        return info;
    }

    bool push() const {
        auto it = properties.find("PROP_CONSUME_TYPE");
        return it != properties.end() && it->second == "CONSUME_PASSIVELY";
    }

    // Java ConsumerRunningInfo#formatString (properties in name order).
    std::string format() const {
        std::string out = "#Consumer Properties#\n";
        for (const auto& [k, v] : properties) {
            out += fmt::format("{:<40}: {}\n", k, v);
        }
        out += "\n\n#Consumer Subscription#\n";
        int i = 0;
        for (const auto& s : subscriptions) {
            out += fmt::format("{:03} Topic: {:<40} ClassFilter: {:<8} SubExpression: {}\n", ++i,
                               s.topic, s.class_filter_mode, s.sub_string);
        }
        out += "\n\n#Consumer Offset#\n";
        out += fmt::format("{:<64}  {:<32}  {:<4}  {:<20}\n", "#Topic", "#Broker Name", "#QID",
                           "#Consumer Offset");
        for (const auto& [mq, pq] : mq_table) {
            out += fmt::format("{:<32}  {:<32}  {:<4}  {:<20}\n", mq.topic, mq.broker_name,
                               mq.queue_id, pq.commit_offset);
        }
        out += "\n\n#Consumer MQ Detail#\n";
        out += fmt::format("{:<64}  {:<32}  {:<4}  {:<20}\n", "#Topic", "#Broker Name", "#QID",
                           "#ProcessQueueInfo");
        for (const auto& [mq, pq] : mq_table) {
            out += fmt::format("{:<64}  {:<32}  {:<4}  {}\n", mq.topic, mq.broker_name,
                               mq.queue_id, pq.text());
        }
        out += "\n\n#Consumer RT&TPS#\n";
        out += fmt::format("{:<64}  {:>14} {:>14} {:>14} {:>14} {:>18} {:>25}\n", "#Topic",
                           "#Pull RT", "#Pull TPS", "#Consume RT", "#ConsumeOK TPS",
                           "#ConsumeFailed TPS", "#ConsumeFailedMsgsInHour");
        for (const auto& [topic, cs] : status_table) {
            out += fmt::format("{:<32}  {:>14.2f} {:>14.2f} {:>14.2f} {:>14.2f} {:>18.2f} {:>25}\n",
                               topic, cs.pull_rt, cs.pull_tps, cs.consume_rt, cs.consume_ok_tps,
                               cs.consume_failed_tps, cs.consume_failed_msgs);
        }
        if (jstack) {
            out += "\n\n#Consumer jstack#\n" + *jstack;
        }
        return out;
    }
};

// Java MessageQueue#toString.
std::string mq_text(const protocol::MessageQueue& mq) {
    return fmt::format("MessageQueue [topic={}, brokerName={}, queueId={}]", mq.topic,
                       mq.broker_name, mq.queue_id);
}

// Java ConsumerRunningInfo#analyzeSubscription: push consumers started over two minutes ago
// must all have the same, non-empty subscription set.
bool analyze_subscription(const std::map<std::string, ConsumerRunningInfo>& table, int64_t now) {
    const ConsumerRunningInfo& first = table.begin()->second;
    int64_t started = 0;
    if (auto it = first.properties.find("PROP_CONSUMER_START_TIMESTAMP");
        it != first.properties.end()) {
        started = std::strtoll(it->second.c_str(), nullptr, 10);
    }
    if (!first.push() || now - started <= 2 * 60 * 1000) {
        return true;
    }
    const ConsumerRunningInfo* prev = &first;
    for (const auto& [id, info] : table) {
        if (info.subscriptions != prev->subscriptions) {
            return false;
        }
        prev = &info;
    }
    return !prev->subscriptions.empty();
}

// Java ConsumerRunningInfo#analyzeProcessQueue.
std::string analyze_process_queue(const std::string& client_id, const ConsumerRunningInfo& info,
                                  int64_t now) {
    std::string out;
    if (!info.push()) {
        return out;
    }
    auto it = info.properties.find("PROP_CONSUMEORDERLY");
    const bool orderly = it != info.properties.end() && it->second == "true";
    for (const auto& [mq, pq] : info.mq_table) {
        if (orderly) {
            if (!pq.locked) {
                out += fmt::format("{} {} can't lock for a while, {}ms\n", client_id, mq_text(mq),
                                   now - pq.last_lock);
            } else if (pq.dropped && pq.try_unlock_times > 0) {
                out += fmt::format("{} {} unlock {} times, still failed\n", client_id, mq_text(mq),
                                   pq.try_unlock_times);
            }
        } else {
            const int64_t diff = now - pq.last_consume;
            if (diff > 60 * 1000 && pq.cached_count > 0) {
                out += fmt::format("{} {} can't consume for a while, maybe blocked, {}ms\n",
                                   client_id, mq_text(mq), diff);
            }
        }
    }
    return out;
}

// Java DefaultMQAdminExtImpl#getConsumerRunningInfo: GET_CONSUMER_RUNNING_INFO through the
// first broker of the group's retry topic, which asks the client.
Result<ConsumerRunningInfo> running_info(AdminClient& admin, const std::string& group,
                                        const std::string& client_id, bool jstack) {
    COMET_ASSIGN_OR_RETURN(auto route, admin.topic_route("%RETRY%" + group));
    for (const auto& bd : route.broker_datas) {
        if (bd.broker_addrs.empty()) {
            continue;
        }
        auto master = bd.broker_addrs.find(0);
        const std::string addr =
            master != bd.broker_addrs.end() ? master->second : bd.broker_addrs.begin()->second;
        auto req = protocol::RemotingCommand::request(Req::kGetConsumerRunningInfo);
        req.set_ext("consumerGroup", group);
        req.set_ext("clientId", client_id);
        req.set_ext("jstackEnable", jstack ? "true" : "false");
        COMET_ASSIGN_OR_RETURN(auto resp,
                               call_ok(admin, addr, std::move(req), "get consumer running info"));
        return ConsumerRunningInfo::decode(resp.body);
    }
    return Status::error(Errc::kNotFound, "no broker serves %RETRY%{}", group);
}

int64_t now_millis() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// 4.9.8 ConsumerStatusSubCommand. With -i: that client's running info. Without: the group's
// clients (connection list from -b, else from the retry topic's brokers), each one's running
// info written to `<now>/<clientId>` under the working directory, then the analysis.
Status cmd_consumer_status(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    const std::string group = ctx.opts.get('g');
    const bool jstack = ctx.opts.has('s');
    if (ctx.opts.has('i')) {
        COMET_ASSIGN_OR_RETURN(auto info, running_info(*admin, group, ctx.opts.get('i'), jstack));
        fmt::print(ctx.out, "{}", info.format());
        return Status::ok();
    }
    protocol::ConsumerConnection cc;
    if (ctx.opts.has('b')) {
        auto req = protocol::RemotingCommand::request(Req::kGetConsumerConnectionList);
        req.set_ext("consumerGroup", group);
        COMET_ASSIGN_OR_RETURN(
            auto resp, call_ok(*admin, ctx.opts.get('b'), std::move(req), "consumer connection"));
        COMET_ASSIGN_OR_RETURN(cc, protocol::ConsumerConnection::decode(resp.body));
    } else {
        COMET_ASSIGN_OR_RETURN(cc, admin->consumer_connection(group, "%RETRY%" + group));
    }
    const int64_t now = now_millis();
    fmt::print(ctx.out, "{:<10} {:<40} {:<20} {}\n", "#Index", "#ClientId", "#Version",
               "#ConsumerRunningInfoFile");
    std::map<std::string, ConsumerRunningInfo> table;
    int index = 1;
    for (const auto& conn : cc.connection_set) {
        auto info = running_info(*admin, group, conn.client_id, jstack);
        if (!info.is_ok()) {
            // Java prints the exception and goes on with the next client.
            fmt::print(stderr, "{}: {}\n", conn.client_id, info.status().to_string());
            continue;
        }
        const std::string path = fmt::format("{}/{}", now, conn.client_id);
        std::error_code ec;
        std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
        if (std::FILE* f = std::fopen(path.c_str(), "w")) {
            const std::string text = info->format();
            std::fwrite(text.data(), 1, text.size(), f);
            std::fclose(f);
        }
        fmt::print(ctx.out, "{:<10} {:<40} {:<20} {}\n", index++, conn.client_id,
                   version_desc(conn.version), path);
        table.emplace(conn.client_id, std::move(info).value());
    }
    if (table.empty()) {
        return Status::ok();
    }
    if (analyze_subscription(table, now)) {
        fmt::print(ctx.out, "\n\nSame subscription in the same group of consumer");
        fmt::print(ctx.out, "\n\nRebalance OK\n");  // Java analyzeRebalance is always true
        for (const auto& [id, info] : table) {
            fmt::print(ctx.out, "{}", analyze_process_queue(id, info, now_millis()));
        }
    } else {
        fmt::print(ctx.out, "\n\nWARN: Different subscription in the same group of consumer!!!");
    }
    return Status::ok();
}

// ---- queryMsgTraceById ----

// One record of a trace message body relevant to the printout (4.9.8 TraceView).
struct TraceView {
    std::string type;  // Pub, SubBefore, SubAfter, EndTransaction
    std::string msg_id;
    std::string group;
    int64_t timestamp = 0;
    int64_t cost_ms = 0;
    bool success = false;
    std::string client_host;
};

// Java String#split with a one-character separator: trailing empty parts dropped.
std::vector<std::string> java_split(std::string_view s, char sep) {
    std::vector<std::string> out;
    size_t from = 0;
    while (true) {
        const size_t at = s.find(sep, from);
        out.emplace_back(s.substr(from, at == std::string_view::npos ? std::string_view::npos
                                                                     : at - from));
        if (at == std::string_view::npos) {
            break;
        }
        from = at + 1;
    }
    while (!out.empty() && out.back().empty()) {
        out.pop_back();
    }
    return out;
}

bool java_bool(const std::string& s) {
    if (s.size() != 4) {
        return false;
    }
    std::string lower;
    for (char c : s) {
        lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return lower == "true";
}

// 4.9.8 TraceDataEncoder#decoderFromTraceDataString + TraceView#decodeFromTraceTransData: the
// records of `body` (CONTENT_SPLITOR 0x01 between fields, FIELD_SPLITOR 0x02 after each record)
// that name `msg_id`. Unreadable records are skipped (Java would throw).
std::vector<TraceView> decode_trace(const std::string& msg_id, const protocol::MessageExt& msg) {
    std::vector<TraceView> out;
    std::string host = msg.born_host.to_string();
    if (const size_t colon = host.rfind(':'); colon != std::string::npos) {
        host.resize(colon);  // Java getBornHostString: the address only
    }
    for (const auto& record : java_split(msg.body, '\x02')) {
        const auto f = java_split(record, '\x01');
        if (f.empty()) {
            continue;
        }
        TraceView v;
        v.type = f[0];
        v.client_host = host;
        try {
            if (f[0] == "Pub" && f.size() >= 12) {
                v.timestamp = std::stoll(f[1]);
                v.group = f[3];
                v.msg_id = f[5];
                v.cost_ms = std::stoll(f[10]);
                if (f.size() == 13) {
                    v.success = java_bool(f[12]);
                } else if (f.size() >= 14) {
                    v.success = java_bool(f[13]);
                }
            } else if (f[0] == "SubBefore" && f.size() >= 8) {
                v.timestamp = std::stoll(f[1]);
                v.group = f[3];
                v.msg_id = f[5];
            } else if (f[0] == "SubAfter" && f.size() >= 6) {
                v.msg_id = f[2];
                v.cost_ms = std::stoll(f[3]);
                v.success = java_bool(f[4]);
                if (f.size() >= 9) {
                    v.timestamp = std::stoll(f[7]);
                    v.group = f[8];
                }
            } else if (f[0] == "EndTransaction" && f.size() >= 13) {
                v.timestamp = std::stoll(f[1]);
                v.group = f[3];
                v.msg_id = f[5];
            } else {
                continue;
            }
        } catch (const std::exception&) {
            continue;
        }
        if (v.msg_id == msg_id) {
            out.push_back(std::move(v));
        }
    }
    return out;
}

// "yyyy-MM-dd HH:mm:ss" (local time), Java DateFormatUtils.
std::string trace_time(int64_t ms) {
    const std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    localtime_r(&secs, &tm);
    return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1,
                       tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

// 4.9.8 QueryMsgTraceByIdSubCommand: the trace topic's messages keyed by the message id (up to
// 64), their Pub records, then the SubAfter records grouped by consumer group.
Status cmd_query_msg_trace_by_id(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    const std::string msg_id = ctx.opts.get('i');
    const std::string topic = ctx.opts.get('t', "RMQ_SYS_TRACE_TOPIC");
    COMET_ASSIGN_OR_RETURN(auto msgs, admin->query_msg_by_key(topic, msg_id, 64, 0, now_millis()));
    std::vector<TraceView> views;
    for (const auto& m : msgs) {
        for (auto& v : decode_trace(msg_id, m)) {
            views.push_back(std::move(v));
        }
    }
    const auto row = [&](const char* type, const TraceView& v) {
        fmt::print(ctx.out, "{:<10} {:<20} {:<20} {:<20} {:<10} {:<10}\n", type, v.group,
                   v.client_host, trace_time(v.timestamp), fmt::format("{}ms", v.cost_ms),
                   v.success ? "success" : "failed");
    };
    std::map<std::string, std::vector<const TraceView*>> by_group;
    for (const auto& v : views) {
        if (v.type == "Pub") {
            fmt::print(ctx.out, "{:<10} {:<20} {:<20} {:<20} {:<10} {:<10}\n", "#Type",
                       "#ProducerGroup", "#ClientHost", "#SendTime", "#CostTimes", "#Status");
            row("Pub", v);
            fmt::print(ctx.out, "\n");
        }
        if (v.type == "SubAfter") {
            by_group[v.group].push_back(&v);
        }
    }
    for (const auto& [group, list] : by_group) {
        fmt::print(ctx.out, "{:<10} {:<20} {:<20} {:<20} {:<10} {:<10}\n", "#Type",
                   "#ConsumerGroup", "#ClientHost", "#ConsumerTime", "#CostTimes", "#Status");
        for (const TraceView* v : list) {
            row("Sub", *v);
        }
        fmt::print(ctx.out, "\n");
    }
    return Status::ok();
}

}  // namespace

std::vector<Command> queue_commands() {
    return {
        {"queryCq",
         "Query cq command.",
         {opt('t', "topic", true, "topic name"), opt('q', "queue", true, "queue num, ie. 1"),
          opt('i', "index", true, "start queue index."), opt('c', "count", false, "how many."),
          opt('b', "broker", false, "broker addr."),
          opt('g', "consumer", false, "consumer group.")},
         cmd_query_cq},
        {"cleanExpiredCQ",
         "Clean expired ConsumeQueue on broker.",
         {opt('b', "brokerAddr", false, "Broker address"),
          opt('c', "cluster", false, "clustername")},
         cmd_clean_expired_cq},
        {"consumerStatus",
         "Query consumer's internal data structure",
         {opt('g', "consumerGroup", true, "consumer group name"),
          opt('i', "clientId", false, "The consumer's client id"),
          opt('b', "brokerAddr", false, "broker address"),
          opt('s', "jstack", false, "Run jstack command in the consumer progress", false)},
         cmd_consumer_status},
        {"queryMsgTraceById",
         "query a message trace",
         {opt('i', "msgId", true, "Message Id"),
          opt('t', "traceTopic", false, "The name value of message trace topic")},
         cmd_query_msg_trace_by_id},
    };
}

GroupRunningReport analyze_group_running_info(AdminClient& admin, const std::string& group,
                                              const std::vector<std::string>& client_ids,
                                              int64_t now_ms) {
    std::map<std::string, ConsumerRunningInfo> table;
    for (const auto& id : client_ids) {
        if (auto info = running_info(admin, group, id, false); info.is_ok()) {
            table.emplace(id, std::move(info).value());
        }
    }
    GroupRunningReport report;
    if (table.empty()) {
        return report;
    }
    report.same_subscription = analyze_subscription(table, now_ms);
    for (const auto& [id, info] : table) {
        ClientRunningSummary c;
        c.client_id = id;
        auto prop = [&info](const char* key) {
            auto it = info.properties.find(key);
            return it != info.properties.end() ? it->second : std::string();
        };
        c.consumer_group = prop("consumerGroup");
        c.consume_type = prop("PROP_CONSUME_TYPE");
        c.consume_orderly = prop("PROP_CONSUMEORDERLY") == "true";
        for (const auto& s : info.subscriptions) {
            c.subscriptions.push_back(s.topic + "@" + s.sub_string);
        }
        c.mq_count = info.mq_table.size();
        for (const auto& [mq, pq] : info.mq_table) {
            c.cached_msg_count += pq.cached_count;
        }
        c.process_queue_report = analyze_process_queue(id, info, now_ms);
        report.clients.push_back(std::move(c));
    }
    return report;
}

}  // namespace comet::mqadmin
