// mqadmin commands of RocketMQ 4.9.8 that look into a broker's queues and consumers:
// queryCq (QUERY_CONSUME_QUEUE), cleanExpiredCQ (CLEAN_EXPIRED_CONSUMEQUEUE) and consumerStatus
// (GET_CONSUMER_CONNECTION_LIST + GET_CONSUMER_RUNNING_INFO). Names, options and output lines
// follow RocketMQ's tools; docs/mqadmin.md lists the differences.

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <string>
#include <vector>

#include "client/admin_client.h"
#include "mqadmin/admin_util.h"
#include "mqadmin/commands.h"
#include "protocol/json_body.h"
#include "protocol/request_code.h"

namespace comet::mqadmin {
namespace {

namespace Req = protocol::RequestCode;
using client::AdminClient;

std::string json_text(const rapidjson::Value& v, const char* name, const std::string& fallback) {
    auto it = v.FindMember(name);
    if (it == v.MemberEnd() || !it->value.IsString()) {
        return fallback;
    }
    return std::string(it->value.GetString(), it->value.GetStringLength());
}

int64_t json_number(const rapidjson::Value& v, const char* name) {
    auto it = v.FindMember(name);
    return it != v.MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : 0;
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
    fmt::print(ctx.out, "Queue data: \nmax: {}, min: {}\n{}", json_number(doc, "maxQueueIndex"),
               json_number(doc, "minQueueIndex"), kRule);
    auto data = doc.FindMember("queueData");
    if (data != doc.MemberEnd() && data->value.IsArray()) {
        int64_t i = index;
        for (const auto& u : data->value.GetArray()) {
            auto eval = u.FindMember("eval");
            fmt::print(ctx.out,
                       "idx: {}\nConsumeQueueData{{physicOffset={}, physicSize={}, tagsCode={}, "
                       "extendDataJson='{}', bitMap='{}', eval={}, msg='{}'}}\n{}",
                       i, json_number(u, "physicOffset"), json_number(u, "physicSize"),
                       json_number(u, "tagsCode"), json_text(u, "extendDataJson", "null"),
                       json_text(u, "bitMap", "null"),
                       eval != u.MemberEnd() && eval->value.IsBool() && eval->value.GetBool()
                           ? "true"
                           : "false",
                       json_text(u, "msg", "null"), kRule);
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
    };
}

}  // namespace comet::mqadmin
