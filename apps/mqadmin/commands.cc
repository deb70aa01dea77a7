#include "mqadmin/commands.h"

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "client/admin_client.h"
#include "client/producer.h"
#include "client/pull_consumer.h"
#include "mqadmin/admin_util.h"
#include "protocol/json_body.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::mqadmin {

namespace {

using client::AdminClient;
using protocol::MessageExt;

constexpr const char* kToolsConsumerGroup = "TOOLS_CONSUMER";
constexpr const char* kToolsProducerGroup = "TOOLS_PRODUCER";

// Broker addresses named by -b (one address) or -c (every master of a cluster).
Result<std::vector<std::string>> target_brokers(const Context& ctx, AdminClient& admin) {
    if (ctx.opts.has('b')) {
        return std::vector<std::string>{ctx.opts.get('b')};
    }
    if (ctx.opts.has('c')) {
        COMET_ASSIGN_OR_RETURN(auto addrs, admin.cluster_master_addrs(ctx.opts.get('c')));
        if (addrs.empty()) {
            return Status::error(Errc::kNotFound, "cluster {} has no master broker",
                                 ctx.opts.get('c'));
        }
        return addrs;
    }
    return Status::error(Errc::kInvalidArgument,
                         "one of -b brokerAddr or -c clusterName is "
                         "required");
}

// Bodies are shown as text on one line: UTF-8 passes through, control bytes show as \n, \r,
// \t or \xNN so every message stays one row of a table.
std::string printable(const std::string& body) {
    std::string out;
    out.reserve(body.size());
    for (unsigned char ch : body) {
        if (ch == '\n') {
            out += "\\n";
        } else if (ch == '\r') {
            out += "\\r";
        } else if (ch == '\t') {
            out += "\\t";
        } else if (ch < 0x20 || ch == 0x7f) {
            out += fmt::format("\\x{:02x}", ch);
        } else {
            out.push_back(static_cast<char>(ch));
        }
    }
    return out;
}

// Java QueryMsgByIdSubCommand#printMsg layout ("%-20s %s").
void print_message(std::FILE* out, const MessageExt& msg) {
    auto line = [&](std::string_view k, const std::string& v) {
        fmt::print(out, "{:<20} {}\n", k, v);
    };
    line("OffsetID:", msg.msg_id);
    line("MsgId:", msg.unique_id());
    line("Topic:", msg.topic);
    line("Tags:", "[" + msg.tags() + "]");
    line("Keys:", "[" + msg.keys() + "]");
    line("Queue ID:", std::to_string(msg.queue_id));
    line("Queue Offset:", std::to_string(msg.queue_offset));
    line("CommitLog Offset:", std::to_string(msg.commit_log_offset));
    line("Reconsume Times:", std::to_string(msg.reconsume_times));
    line("Born Timestamp:", human_time(msg.born_timestamp));
    line("Store Timestamp:", human_time(msg.store_timestamp));
    line("Born Host:", msg.born_host.to_string());
    line("Store Host:", msg.store_host.to_string());
    line("System Flag:", std::to_string(msg.sys_flag));
    line("Properties:", properties_text(msg));
    line("Message Body:", printable(msg.body));
}

std::vector<std::string> split_words(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    std::string w;
    while (in >> w) {
        out.push_back(w);
    }
    return out;
}

// ---- topics ----

Status cmd_update_topic(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    client::TopicCreateOptions o;
    COMET_ASSIGN_OR_RETURN(int64_t r, ctx.opts.get_int('r', 8));
    COMET_ASSIGN_OR_RETURN(int64_t w, ctx.opts.get_int('w', 8));
    COMET_ASSIGN_OR_RETURN(int64_t p, ctx.opts.get_int('p', 6));
    COMET_ASSIGN_OR_RETURN(bool order, ctx.opts.get_bool('o', false));
    if (r <= 0 || w <= 0 || r > 1024 || w > 1024) {
        return Status::error(Errc::kInvalidArgument, "queue numbers must be in 1..1024");
    }
    if (p < 0 || p > 15) {
        return Status::error(Errc::kInvalidArgument, "perm must be in 0..15 (2=W 4=R 6=RW)");
    }
    o.read_queue_nums = static_cast<int32_t>(r);
    o.write_queue_nums = static_cast<int32_t>(w);
    o.perm = static_cast<int32_t>(p);
    o.order = order;
    const std::string topic = ctx.opts.get('t');
    COMET_ASSIGN_OR_RETURN(auto addrs, target_brokers(ctx, *admin));
    for (const auto& a : addrs) {
        COMET_RETURN_IF_ERROR(admin->create_topic(a, topic, o));
        fmt::print(ctx.out, "create topic to {} success.\n", a);
    }
    fmt::print(ctx.out,
               "TopicConfig [topicName={}, readQueueNums={}, writeQueueNums={}, perm={}, "
               "topicFilterType=SINGLE_TAG, topicSysFlag=0, order={}]\n",
               topic, o.read_queue_nums, o.write_queue_nums, protocol::perm_to_string(o.perm),
               o.order);
    return Status::ok();
}

Status cmd_delete_topic(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    const std::string topic = ctx.opts.get('t');
    const std::string cluster = ctx.opts.get('c');
    COMET_RETURN_IF_ERROR(admin->delete_topic(cluster, topic));
    fmt::print(ctx.out, "delete topic [{}] from cluster [{}] success.\n", topic, cluster);
    fmt::print(ctx.out, "delete topic [{}] from NameServer success.\n", topic);
    return Status::ok();
}

Status cmd_topic_list(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    COMET_ASSIGN_OR_RETURN(auto topics, admin->topic_list());
    if (!ctx.opts.has('c')) {
        for (const auto& t : topics) {
            fmt::print(ctx.out, "{}\n", t);
        }
        return Status::ok();
    }
    // -c: the cluster(s) each topic's brokers belong to.
    fmt::print(ctx.out, "{:<20}  {:<48}\n", "#Cluster Name", "#Topic");
    for (const auto& t : topics) {
        auto route = admin->topic_route(t);
        if (!route.is_ok()) {
            continue;  // deleted meanwhile
        }
        std::set<std::string> clusters;
        for (const auto& bd : route->broker_datas) {
            clusters.insert(bd.cluster);
        }
        for (const auto& c : clusters) {
            fmt::print(ctx.out, "{:<20}  {:<48}\n", c, t);
        }
    }
    return Status::ok();
}

Status cmd_topic_route(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    COMET_ASSIGN_OR_RETURN(auto route, admin->topic_route(ctx.opts.get('t')));
    if (ctx.opts.has('l')) {
        fmt::print(ctx.out, "{:<45} {:<32} {:<50} {:<10} {:<11} {:<5}\n", "#ClusterName",
                   "#BrokerName", "#BrokerAddrs", "#ReadQueue", "#WriteQueue", "#Perm");
        for (const auto& qd : route.queue_datas) {
            std::string cluster;
            std::string addrs;
            for (const auto& bd : route.broker_datas) {
                if (bd.broker_name == qd.broker_name) {
                    cluster = bd.cluster;
                    for (const auto& [id, a] : bd.broker_addrs) {
                        addrs += fmt::format("{}{}:{}", addrs.empty() ? "" : ", ", id, a);
                    }
                }
            }
            fmt::print(ctx.out, "{:<45} {:<32} {:<50} {:<10} {:<11} {:<5}\n", cluster,
                       qd.broker_name, "{" + addrs + "}", qd.read_queue_nums, qd.write_queue_nums,
                       qd.perm);
        }
        return Status::ok();
    }
    // Like Java's JSON.toJSONString(route, true): the route as pretty JSON.
    const std::string json = route.encode();
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    if (doc.HasParseError()) {
        fmt::print(ctx.out, "{}\n", json);
        return Status::ok();
    }
    rapidjson::StringBuffer buf;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> writer(buf);
    writer.SetIndent('\t', 1);
    doc.Accept(writer);
    fmt::print(ctx.out, "{}\n", buf.GetString());
    return Status::ok();
}

Status cmd_topic_status(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    COMET_ASSIGN_OR_RETURN(auto stats, admin->topic_stats(ctx.opts.get('t')));
    fmt::print(ctx.out, "{:<32}  {:<4}  {:<20}  {:<20}    {}\n", "#Broker Name", "#QID",
               "#Min Offset", "#Max Offset", "#Last Updated");
    for (const auto& [mq, off] : stats.offset_table) {
        fmt::print(ctx.out, "{:<32}  {:<4}  {:<20}  {:<20}    {}\n", mq.broker_name, mq.queue_id,
                   off.min_offset, off.max_offset,
                   off.last_update_timestamp > 0 ? human_time(off.last_update_timestamp) : "");
    }
    return Status::ok();
}

// ---- cluster and brokers ----

// First number of a "a b c" TPS triple (10 s / 1 min / 10 min).
double first_number(const std::map<std::string, std::string>& kv, const std::string& key) {
    auto it = kv.find(key);
    if (it == kv.end()) {
        return 0;
    }
    return std::strtod(it->second.c_str(), nullptr);
}

std::string value_or(const std::map<std::string, std::string>& kv, const std::string& key,
                     const std::string& fallback) {
    auto it = kv.find(key);
    return it == kv.end() ? fallback : it->second;
}

Status cmd_cluster_list(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    COMET_ASSIGN_OR_RETURN(auto info, admin->cluster_info());
    const std::string only = ctx.opts.get('c');
    fmt::print(ctx.out, "{:<16}  {:<22}  {:<4}  {:<22} {:<16} {:>19} {:>19} {:>10} {:>5} {:>6}\n",
               "#Cluster Name", "#Broker Name", "#BID", "#Addr", "#Version", "#InTPS(LOAD)",
               "#OutTPS(LOAD)", "#PCWait(ms)", "#Hour", "#SPACE");
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    for (const auto& [cluster, names] : info.cluster_addr_table) {
        if (!only.empty() && cluster != only) {
            continue;
        }
        for (const auto& name : names) {
            auto b = info.broker_addr_table.find(name);
            if (b == info.broker_addr_table.end()) {
                continue;
            }
            for (const auto& [id, a] : b->second.broker_addrs) {
                std::map<std::string, std::string> kv;
                if (auto rt = admin->broker_runtime_info(a); rt.is_ok()) {
                    kv = std::move(rt).value();
                }
                const std::string in_tps =
                    fmt::format("{:.2f}({},{}ms)", first_number(kv, "putTps"),
                                value_or(kv, "sendThreadPoolQueueSize", "0"),
                                value_or(kv, "sendThreadPoolQueueHeadWaitTimeMills", "0"));
                const std::string out_tps =
                    fmt::format("{:.2f}({},{}ms)", first_number(kv, "getTransferedTps"),
                                value_or(kv, "pullThreadPoolQueueSize", "0"),
                                value_or(kv, "pullThreadPoolQueueHeadWaitTimeMills", "0"));
                const int64_t earliest = std::strtoll(
                    value_or(kv, "earliestMessageTimeStamp", "0").c_str(), nullptr, 10);
                const double hours = earliest > 0 ? (now_ms - earliest) / 3600000.0 : 0.0;
                const double space =
                    std::strtod(value_or(kv, "commitLogDiskRatio", "0").c_str(), nullptr);
                fmt::print(ctx.out,
                           "{:<16}  {:<22}  {:<4}  {:<22} {:<16} {:>19} {:>19} {:>10} {:>5.2f} "
                           "{:>5.4f}\n",
                           cluster, name, id, a, value_or(kv, "brokerVersionDesc", "?"), in_tps,
                           out_tps, value_or(kv, "pageCacheLockTimeMills", "0"), hours, space);
            }
        }
    }
    return Status::ok();
}

Status cmd_broker_status(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    COMET_ASSIGN_OR_RETURN(auto addrs, target_brokers(ctx, *admin));
    const bool many = ctx.opts.has('c');
    for (const auto& a : addrs) {
        COMET_ASSIGN_OR_RETURN(auto kv, admin->broker_runtime_info(a));
        for (const auto& [k, v] : kv) {
            if (many) {
                fmt::print(ctx.out, "{:<24} {:<32}: {}\n", a, k, v);
            } else {
                fmt::print(ctx.out, "{:<32}: {}\n", k, v);
            }
        }
    }
    return Status::ok();
}

Status cmd_get_broker_config(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    COMET_ASSIGN_OR_RETURN(auto addrs, target_brokers(ctx, *admin));
    for (const auto& a : addrs) {
        COMET_ASSIGN_OR_RETURN(auto kv, admin->broker_config(a));
        fmt::print(ctx.out, "============{}============\n", a);
        for (const auto& [k, v] : kv) {
            fmt::print(ctx.out, "{:<50}=  {}\n", k, v);
        }
    }
    return Status::ok();
}

Status cmd_update_broker_config(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    COMET_ASSIGN_OR_RETURN(auto addrs, target_brokers(ctx, *admin));
    const std::string key = ctx.opts.get('k');
    if (key.empty() || key.find_first_of("=\n") != std::string::npos) {
        return Status::error(Errc::kInvalidArgument, "bad config key '{}'", key);
    }
    for (const auto& a : addrs) {
        COMET_RETURN_IF_ERROR(admin->update_broker_config(a, {{key, ctx.opts.get('v')}}));
        fmt::print(ctx.out, "update broker config success, {}\n", a);
    }
    return Status::ok();
}

// ---- groups ----

Status cmd_update_sub_group(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    protocol::SubscriptionGroupConfig g;
    g.group_name = ctx.opts.get('g');
    COMET_ASSIGN_OR_RETURN(g.consume_enable, ctx.opts.get_bool('s', g.consume_enable));
    COMET_ASSIGN_OR_RETURN(g.consume_from_min_enable,
                           ctx.opts.get_bool('m', g.consume_from_min_enable));
    COMET_ASSIGN_OR_RETURN(g.consume_broadcast_enable,
                           ctx.opts.get_bool('d', g.consume_broadcast_enable));
    COMET_ASSIGN_OR_RETURN(g.consume_message_orderly,
                           ctx.opts.get_bool('o', g.consume_message_orderly));
    COMET_ASSIGN_OR_RETURN(g.notify_consumer_ids_changed_enable,
                           ctx.opts.get_bool('a', g.notify_consumer_ids_changed_enable));
    COMET_ASSIGN_OR_RETURN(int64_t q, ctx.opts.get_int('q', g.retry_queue_nums));
    COMET_ASSIGN_OR_RETURN(int64_t r, ctx.opts.get_int('r', g.retry_max_times));
    COMET_ASSIGN_OR_RETURN(g.broker_id, ctx.opts.get_int('i', g.broker_id));
    COMET_ASSIGN_OR_RETURN(g.which_broker_when_consume_slowly,
                           ctx.opts.get_int('w', g.which_broker_when_consume_slowly));
    if (q < 0 || q > 1024 || r < -1 || r > 10000) {
        return Status::error(Errc::kInvalidArgument, "bad retryQueueNums or retryMaxTimes");
    }
    g.retry_queue_nums = static_cast<int32_t>(q);
    g.retry_max_times = static_cast<int32_t>(r);
    COMET_ASSIGN_OR_RETURN(auto addrs, target_brokers(ctx, *admin));
    for (const auto& a : addrs) {
        COMET_RETURN_IF_ERROR(admin->update_subscription_group(a, g));
        fmt::print(ctx.out, "create subscription group to {} success.\n", a);
    }
    fmt::print(ctx.out,
               "SubscriptionGroupConfig [groupName={}, consumeEnable={}, "
               "consumeFromMinEnable={}, consumeBroadcastEnable={}, consumeMessageOrderly={}, "
               "retryQueueNums={}, retryMaxTimes={}, brokerId={}, "
               "whichBrokerWhenConsumeSlowly={}, notifyConsumerIdsChangedEnable={}]\n",
               g.group_name, g.consume_enable, g.consume_from_min_enable,
               g.consume_broadcast_enable, g.consume_message_orderly, g.retry_queue_nums,
               g.retry_max_times, g.broker_id, g.which_broker_when_consume_slowly,
               g.notify_consumer_ids_changed_enable);
    return Status::ok();
}

Status cmd_consumer_progress(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    std::optional<std::string> topic;
    if (ctx.opts.has('t')) {
        topic = ctx.opts.get('t');
    }
    COMET_ASSIGN_OR_RETURN(auto stats, admin->consume_stats(ctx.opts.get('g'), topic));
    fmt::print(ctx.out, "{:<64}  {:<32}  {:<4}  {:<20}  {:<20}  {:<20}  {}\n", "#Topic",
               "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset", "#Diff", "#LastTime");
    int64_t diff_total = 0;
    for (const auto& [mq, w] : stats.offset_table) {
        const int64_t diff = w.broker_offset - w.consumer_offset;
        diff_total += diff;
        fmt::print(ctx.out, "{:<64}  {:<32}  {:<4}  {:<20}  {:<20}  {:<20}  {}\n", mq.topic,
                   mq.broker_name, mq.queue_id, w.broker_offset, w.consumer_offset, diff,
                   w.last_timestamp > 0 ? human_time(w.last_timestamp) : "N/A");
    }
    fmt::print(ctx.out, "\nConsume TPS: {:.2f}\n", stats.consume_tps);
    fmt::print(ctx.out, "Diff Total: {}\n", diff_total);
    return Status::ok();
}

// ---- messages ----

Status cmd_query_msg_by_id(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    const auto ids = split_words(ctx.opts.get('i'));
    if (ids.empty()) {
        return Status::error(Errc::kInvalidArgument, "empty message id");
    }
    for (const auto& id : ids) {
        // An offset msg id names the broker and CommitLog offset. A client msg id (UNIQ_KEY)
        // has the same shape, so when viewing by offset fails and -t is given, look the id up
        // in the topic's key index (the broker indexes UNIQ_KEY like Java's).
        auto msg = admin->query_msg_by_id(id);
        if (msg.is_ok() && (!ctx.opts.has('t') || msg->topic == ctx.opts.get('t'))) {
            print_message(ctx.out, *msg);
            continue;
        }
        if (!ctx.opts.has('t')) {
            return Status(msg.status().code(),
                          fmt::format("query message {} failed: {} (for a client msg id give "
                                      "the topic with -t)",
                                      id, msg.status().message()));
        }
        COMET_ASSIGN_OR_RETURN(auto found,
                               admin->query_msg_by_key(ctx.opts.get('t'), id, 32, 0,
                                                       std::numeric_limits<int64_t>::max()));
        bool any = false;
        for (const auto& m : found) {
            if (m.unique_id() == id) {
                print_message(ctx.out, m);
                any = true;
            }
        }
        if (!any) {
            return Status::error(Errc::kNotFound, "no message with id {}", id);
        }
    }
    return Status::ok();
}

Status cmd_query_msg_by_key(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    COMET_ASSIGN_OR_RETURN(int64_t begin, ctx.opts.get_int('b', 0));
    COMET_ASSIGN_OR_RETURN(int64_t end, ctx.opts.get_int('e', std::numeric_limits<int64_t>::max()));
    COMET_ASSIGN_OR_RETURN(int64_t max_num, ctx.opts.get_int('c', 64));
    if (max_num <= 0 || max_num > 64 * 1024) {
        return Status::error(Errc::kInvalidArgument, "maxNum must be in 1..65536");
    }
    COMET_ASSIGN_OR_RETURN(auto msgs,
                           admin->query_msg_by_key(ctx.opts.get('t'), ctx.opts.get('k'),
                                                   static_cast<int32_t>(max_num), begin, end));
    fmt::print(ctx.out, "{:<50} {:>4} {:>10}  {}\n", "#Message ID", "#QID", "#Offset", "#Body");
    for (const auto& m : msgs) {
        fmt::print(ctx.out, "{:<50} {:>4} {:>10}  {}\n", m.unique_id(), m.queue_id, m.queue_offset,
                   printable(m.body));
    }
    return Status::ok();
}

Status cmd_query_msg_by_offset(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    COMET_ASSIGN_OR_RETURN(int64_t qid, ctx.opts.get_int('i', 0));
    COMET_ASSIGN_OR_RETURN(int64_t offset, ctx.opts.get_int('o', 0));
    if (qid < 0 || qid > INT32_MAX || offset < 0) {
        return Status::error(Errc::kInvalidArgument, "bad queue id or offset");
    }
    protocol::MessageQueue mq;
    mq.topic = ctx.opts.get('t');
    mq.broker_name = ctx.opts.get('b');
    mq.queue_id = static_cast<int32_t>(qid);
    COMET_ASSIGN_OR_RETURN(auto msg, admin->query_msg_by_offset(mq, offset));
    print_message(ctx.out, msg);
    return Status::ok();
}

Status cmd_send_message(Context& ctx) {
    COMET_RETURN_IF_ERROR(require_namesrv(ctx));
    client::ProducerConfig pc;
    pc.client = client_config(ctx);
    pc.group = kToolsProducerGroup;
    client::DefaultMqProducer producer(pc);
    COMET_RETURN_IF_ERROR(producer.start());
    client::Message msg(ctx.opts.get('t'), ctx.opts.get('p'), ctx.opts.get('c'), ctx.opts.get('k'));
    Result<client::SendResult> res =
        Status::error(Errc::kInternal, "send not attempted");  // replaced below
    if (ctx.opts.has('b') || ctx.opts.has('i')) {
        if (!ctx.opts.has('b') || !ctx.opts.has('i')) {
            return Status::error(Errc::kInvalidArgument,
                                 "-b brokerName and -i queueId go together");
        }
        COMET_ASSIGN_OR_RETURN(int64_t qid, ctx.opts.get_int('i', 0));
        if (qid < 0 || qid > INT32_MAX) {
            return Status::error(Errc::kInvalidArgument, "bad queue id {}", qid);
        }
        protocol::MessageQueue mq{msg.topic, ctx.opts.get('b'), static_cast<int32_t>(qid)};
        res = producer.send_to_queue(std::move(msg), mq);
    } else {
        res = producer.send(std::move(msg));
    }
    producer.shutdown();
    COMET_RETURN_IF_ERROR(res.status());
    fmt::print(ctx.out, "{:<32}  {:<4}  {:<20}    {:<32}  {}\n", "#Broker Name", "#QID",
               "#Send Result", "#MsgId", "#OffsetMsgId");
    fmt::print(ctx.out, "{:<32}  {:<4}  {:<20}    {:<32}  {}\n", res->message_queue.broker_name,
               res->message_queue.queue_id, client::send_status_name(res->status), res->msg_id,
               res->offset_msg_id);
    return Status::ok();
}

Status cmd_consume_message(Context& ctx) {
    COMET_RETURN_IF_ERROR(require_namesrv(ctx));
    COMET_ASSIGN_OR_RETURN(int64_t count, ctx.opts.get_int('c', 128));
    COMET_ASSIGN_OR_RETURN(int64_t begin_ts, ctx.opts.get_int('s', 0));
    COMET_ASSIGN_OR_RETURN(int64_t end_ts,
                           ctx.opts.get_int('e', std::numeric_limits<int64_t>::max()));
    COMET_ASSIGN_OR_RETURN(int64_t qid, ctx.opts.get_int('i', -1));
    COMET_ASSIGN_OR_RETURN(int64_t start_offset, ctx.opts.get_int('o', -1));
    if (count <= 0) {
        return Status::error(Errc::kInvalidArgument, "MessageNumber (-c) must be positive");
    }
    if (ctx.opts.has('o') && !ctx.opts.has('i')) {
        return Status::error(Errc::kInvalidArgument, "-o offset needs -i queueId");
    }
    client::PullConsumerConfig pc;
    pc.client = client_config(ctx);
    pc.group = ctx.opts.get('g', kToolsConsumerGroup);
    client::DefaultMqPullConsumer consumer(pc);
    COMET_RETURN_IF_ERROR(consumer.start());
    const std::string topic = ctx.opts.get('t');
    COMET_ASSIGN_OR_RETURN(auto queues, consumer.fetch_subscribe_message_queues(topic));
    int64_t printed = 0;
    bool matched_queue = false;
    for (const auto& mq : queues) {
        if (ctx.opts.has('b') && mq.broker_name != ctx.opts.get('b')) {
            continue;
        }
        if (qid >= 0 && mq.queue_id != qid) {
            continue;
        }
        matched_queue = true;
        COMET_ASSIGN_OR_RETURN(int64_t min_off, consumer.min_offset(mq));
        COMET_ASSIGN_OR_RETURN(int64_t max_off, consumer.max_offset(mq));
        // An empty queue may report min offset -1; pulls start at 0 at the earliest.
        int64_t offset = std::max<int64_t>({start_offset, min_off, 0});
        // Bounded: each round advances the offset or stops.
        while (offset < max_off && printed < count) {
            const int32_t batch = static_cast<int32_t>(std::min<int64_t>(32, count - printed));
            COMET_ASSIGN_OR_RETURN(auto pr, consumer.pull(mq, "*", offset, batch));
            if (pr.status != client::PullStatus::kFound) {
                if (pr.next_begin_offset <= offset) {
                    break;
                }
                offset = pr.next_begin_offset;
                continue;
            }
            fmt::print(ctx.out, "Consume ok\n");
            for (const auto& m : pr.messages) {
                if (m.store_timestamp < begin_ts || m.store_timestamp > end_ts) {
                    continue;
                }
                fmt::print(ctx.out,
                           "MSGID: {} MessageQueue [topic={}, brokerName={}, queueId={}] "
                           "QueueOffset: {} BODY: {}\n",
                           m.unique_id(), m.topic, mq.broker_name, m.queue_id, m.queue_offset,
                           printable(m.body));
                ++printed;
            }
            if (pr.next_begin_offset <= offset) {
                break;
            }
            offset = pr.next_begin_offset;
        }
    }
    consumer.shutdown();
    if (!matched_queue) {
        return Status::error(Errc::kNotFound, "no readable queue of topic {} matches", topic);
    }
    fmt::print(ctx.out, "Consumed {} message(s)\n", printed);
    return Status::ok();
}

// The addresses of every broker of group `broker_name` (master and slaves), from the name server.
Result<std::vector<std::string>> group_addrs(AdminClient& admin, const std::string& broker_name) {
    COMET_ASSIGN_OR_RETURN(auto info, admin.cluster_info());
    auto it = info.broker_addr_table.find(broker_name);
    if (it == info.broker_addr_table.end() || it->second.broker_addrs.empty()) {
        return Status::error(Errc::kNotFound, "broker {} is not registered with the name server",
                             broker_name);
    }
    std::vector<std::string> out;
    for (const auto& [id, addr] : it->second.broker_addrs) {
        out.push_back(addr);
    }
    return out;
}

// getBrokerEpoch (RocketMQ 5): each replica's epoch list (controller mode).
Status cmd_get_broker_epoch(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    COMET_ASSIGN_OR_RETURN(auto addrs, group_addrs(*admin, ctx.opts.get('b')));
    for (const auto& a : addrs) {
        COMET_ASSIGN_OR_RETURN(std::string body, admin->broker_epoch_cache(a));
        COMET_ASSIGN_OR_RETURN(auto doc, protocol::parse_json_body(body));
        auto str = [&](const char* k) -> std::string {
            return doc.HasMember(k) && doc[k].IsString() ? doc[k].GetString() : "";
        };
        auto num = [](const rapidjson::Value& v, const char* k) -> int64_t {
            return v.HasMember(k) && v[k].IsInt64() ? v[k].GetInt64() : 0;
        };
        fmt::print(ctx.out, "\n#clusterName\t{}\n#brokerName\t{}\n#brokerAddr\t{}\n#brokerId\t{}\n",
                   str("clusterName"), str("brokerName"), a, num(doc, "brokerId"));
        if (doc.HasMember("epochList") && doc["epochList"].IsArray()) {
            for (const auto& e : doc["epochList"].GetArray()) {
                fmt::print(ctx.out,
                           "#Epoch: EpochEntry{{epoch={}, startOffset={}, endOffset={}}}\n",
                           num(e, "epoch"), num(e, "startOffset"), num(e, "endOffset"));
            }
        }
    }
    return Status::ok();
}

// dledgerStatus: one line per peer of a DLedger group: role, term, leader, indexes and lag.
Status cmd_dledger_status(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    COMET_ASSIGN_OR_RETURN(auto addrs, group_addrs(*admin, ctx.opts.get('b')));
    std::vector<std::pair<std::string, std::map<std::string, std::string>>> peers;
    std::map<std::string, int64_t> match_offset;  // peer id -> leader's view of its log end
    int64_t committed = 0;
    for (const auto& a : addrs) {
        COMET_ASSIGN_OR_RETURN(auto kv, admin->broker_runtime_info(a));
        if (kv.count("dledgerRole") == 0) {
            return Status::error(Errc::kFailedPrecondition, "{} is not in DLedger mode", a);
        }
        if (kv["dledgerRole"] == "Leader") {
            committed = std::atoll(kv["dledgerCommittedOffset"].c_str());
            std::stringstream list(kv["dledgerPeerMatch"]);
            std::string item;
            while (std::getline(list, item, ';')) {
                const size_t c2 = item.rfind(':');
                const size_t c1 = item.find(':');
                if (c1 != std::string::npos && c2 != std::string::npos && c1 < c2) {
                    match_offset[item.substr(0, c1)] = std::atoll(item.substr(c2 + 1).c_str());
                }
            }
        }
        peers.emplace_back(a, std::move(kv));
    }
    fmt::print(ctx.out, "{:<8} {:<22} {:<10} {:<6} {:<8} {:<9} {:<12} {:<12} {:<16} {}\n", "#Peer",
               "#Addr", "#Role", "#Term", "#Leader", "#Writable", "#LastIndex", "#CommitIndex",
               "#CommittedOffset", "#LagBytes");
    for (auto& [a, kv] : peers) {
        const std::string id = kv["dledgerSelfId"];
        const std::string lag =
            match_offset.count(id) != 0 ? std::to_string(committed - match_offset[id]) : "-";
        fmt::print(ctx.out, "{:<8} {:<22} {:<10} {:<6} {:<8} {:<9} {:<12} {:<12} {:<16} {}\n", id,
                   a, kv["dledgerRole"], kv["dledgerTerm"], kv["dledgerLeaderId"],
                   kv["dledgerWritable"], kv["dledgerLastIndex"], kv["dledgerCommitIndex"],
                   kv["dledgerCommittedOffset"], lag);
    }
    return Status::ok();
}

// The peer of `addrs` that reports itself DLedger leader, with its runtime info.
std::optional<std::pair<std::string, std::map<std::string, std::string>>> leader_of(
    AdminClient& admin, const std::vector<std::string>& addrs) {
    for (const auto& a : addrs) {
        auto kv = admin.broker_runtime_info(a);
        if (kv.is_ok() && (*kv)["dledgerRole"] == "Leader") {
            return std::make_pair(a, std::move(kv).value());
        }
    }
    return std::nullopt;
}

// transferLeader: asks the group's leader to hand leadership to peer -p, then waits (bounded,
// 10 s) until that peer reports itself the writable leader, asking again every second while
// another peer leads (a transfer the leader gave up after its election timeout).
Status cmd_transfer_leader(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    const std::string target = ctx.opts.get('p');
    COMET_ASSIGN_OR_RETURN(auto addrs, group_addrs(*admin, ctx.opts.get('b')));
    auto leader = leader_of(*admin, addrs);
    if (!leader) {
        return Status::error(Errc::kUnavailable, "group {} has no leader right now",
                             ctx.opts.get('b'));
    }
    const std::string leader_id = leader->second["dledgerSelfId"];
    if (leader_id == target) {
        fmt::print(ctx.out, "{} already leads group {}\n", target, ctx.opts.get('b'));
        return Status::ok();
    }
    auto ask = [&](const std::string& addr) -> Status {
        auto req =
            protocol::RemotingCommand::request(protocol::RequestCode::kDledgerLeadershipTransfer);
        req.ext_fields["transferId"] = target;
        COMET_ASSIGN_OR_RETURN(auto resp, admin->instance().remoting().invoke_sync(
                                              addr, std::move(req), std::chrono::seconds(5)));
        if (resp.code != protocol::ResponseCode::kSuccess) {
            return Status::error(Errc::kFailedPrecondition, "{} refused: {}", addr,
                                 resp.remark.value_or(""));
        }
        return Status::ok();
    };
    COMET_RETURN_IF_ERROR(ask(leader->first));
    for (int i = 1; i <= 100; ++i) {
        auto now = leader_of(*admin, addrs);
        if (now && now->second["dledgerSelfId"] == target &&
            now->second["dledgerWritable"] == "true") {
            fmt::print(ctx.out, "leadership of {} moved from {} to {} (term {})\n",
                       ctx.opts.get('b'), leader_id, target, now->second["dledgerTerm"]);
            return Status::ok();
        }
        // A transfer lasts one election timeout: the leader gives up when the target has not
        // caught up by then (a busy machine, a slow disk). Ask again, once a second, whoever
        // leads now.
        if (i % 10 == 0 && now && now->second["dledgerSelfId"] != target) {
            (void)ask(now->first);
        }
        ::usleep(100 * 1000);
    }
    return Status::error(Errc::kTimeout, "{} did not become the leader within 10 s", target);
}

OptionSpec broker_addr_option() {
    return opt('b', "brokerAddr", false, "broker address (ip:port)");
}
OptionSpec cluster_option() { return opt('c', "clusterName", false, "cluster name"); }
OptionSpec topic_option() { return opt('t', "topic", true, "topic name"); }

// updateTopic, deleteTopic, topicList, topicRoute, topicStatus.
std::vector<Command> topic_admin_commands() {
    const OptionSpec topic = topic_option();
    return {
        {"updateTopic",
         "Update or create topic",
         {broker_addr_option(), cluster_option(), topic,
          opt('r', "readQueueNums", false, "read queue nums (8)"),
          opt('w', "writeQueueNums", false, "write queue nums (8)"),
          opt('p', "perm", false, "topic's permission: 2 W, 4 R, 6 RW (6)"),
          opt('o', "order", false, "set topic's order (true|false)")},
         cmd_update_topic},
        {"deleteTopic",
         "Delete topic from broker and NameServer",
         {topic, opt('c', "clusterName", true, "delete topic from which cluster")},
         cmd_delete_topic},
        {"topicList",
         "Fetch all topic list from name server",
         {opt('c', "clusterModel", false, "show the cluster of each topic", false)},
         cmd_topic_list},
        {"topicRoute",
         "Examine topic route info",
         {topic, opt('l', "list", false, "print in list (table) format", false)},
         cmd_topic_route},
        {"topicStatus", "Examine topic status info", {topic}, cmd_topic_status},
    };
}

// clusterList, brokerStatus, the DLedger and epoch views, getBrokerConfig, updateBrokerConfig.
std::vector<Command> cluster_broker_commands() {
    const OptionSpec broker_addr = broker_addr_option();
    const OptionSpec cluster = cluster_option();
    return {
        {"clusterList",
         "List cluster infos",
         {opt('c', "clusterName", false, "only this cluster")},
         cmd_cluster_list},
        {"brokerStatus",
         "Fetch broker runtime status data",
         {broker_addr, cluster},
         cmd_broker_status},
        {"getBrokerEpoch",
         "Fetch broker epoch entries (controller mode)",
         {opt('b', "brokerName", true, "which broker group")},
         cmd_get_broker_epoch},
        {"dledgerStatus",
         "Show a DLedger group: each peer's role, term, leader, indexes and lag (Comet)",
         {opt('b', "brokerName", true, "the group's brokerName")},
         cmd_dledger_status},
        {"transferLeader",
         "Hand a DLedger group's leadership to one of its peers (Comet)",
         {opt('b', "brokerName", true, "the group's brokerName"),
          opt('p', "peerId", true, "the peer to lead, as in dLegerPeers (e.g. n1)")},
         cmd_transfer_leader},
        {"getBrokerConfig",
         "Get broker config by cluster or special broker",
         {broker_addr, cluster},
         cmd_get_broker_config},
        {"updateBrokerConfig",
         "Update broker's config",
         {broker_addr, cluster, opt('k', "key", true, "config key"),
          opt('v', "value", true, "config value")},
         cmd_update_broker_config},
    };
}

// updateSubGroup, consumerProgress.
std::vector<Command> consumer_group_commands() {
    return {
        {"updateSubGroup",
         "Update or create subscription group",
         {broker_addr_option(), cluster_option(),
          opt('g', "groupName", true, "consumer group name"),
          opt('s', "consumeEnable", false, "consume enable (true)"),
          opt('m', "consumeFromMinEnable", false, "from min offset (true)"),
          opt('d', "consumeBroadcastEnable", false, "broadcast (true)"),
          opt('o', "consumeMessageOrderly", false, "orderly (false)"),
          opt('q', "retryQueueNums", false, "retry queue nums (1)"),
          opt('r', "retryMaxTimes", false, "retry max times (16)"),
          opt('i', "brokerId", false, "consumer from which broker id (0)"),
          opt('w', "whichBrokerWhenConsumeSlowly", false, "which broker id when slow (1)"),
          opt('a', "notifyConsumerIdsChanged", false, "notify consumer ids changed (true)")},
         cmd_update_sub_group},
        {"consumerProgress",
         "Query consumer's progress, speed",
         {opt('g', "groupName", true, "consumer group name"),
          opt('t', "topicName", false, "only this topic")},
         cmd_consumer_progress},
    };
}

// queryMsgById, queryMsgByKey, queryMsgByOffset, sendMessage, consumeMessage.
std::vector<Command> message_commands() {
    const OptionSpec topic = topic_option();
    return {
        {"queryMsgById",
         "Query Message by Id",
         {opt('i', "msgId", true, "message id(s), space separated"),
          opt('t', "topic", false, "topic, to look up a client (UNIQ_KEY) message id")},
         cmd_query_msg_by_id},
        {"queryMsgByKey",
         "Query Message by Key",
         {topic, opt('k', "msgKey", true, "message key"),
          opt('b', "beginTimestamp", false, "begin timestamp (ms)"),
          opt('e', "endTimestamp", false, "end timestamp (ms)"),
          opt('c', "maxNum", false, "the maximum number of messages returned (64)")},
         cmd_query_msg_by_key},
        {"queryMsgByOffset",
         "Query Message by offset",
         {topic, opt('b', "brokerName", true, "broker name"), opt('i', "queueId", true, "queue id"),
          opt('o', "offset", true, "queue offset")},
         cmd_query_msg_by_offset},
        {"sendMessage",
         "Send a message",
         {topic, opt('p', "body", true, "UTF-8 string format of the message body"),
          opt('k', "key", false, "message keys"), opt('c', "tags", false, "message tags"),
          opt('b', "broker", false, "send to this broker name"),
          opt('i', "qid", false, "send to this queue id")},
         cmd_send_message},
        {"consumeMessage",
         "Consume message",
         {topic, opt('b', "brokerName", false, "only this broker name"),
          opt('i', "queueId", false, "only this queue id"),
          opt('o', "offset", false, "queue offset to start from (needs -i)"),
          opt('g', "consumerGroup", false, "consumer group name (TOOLS_CONSUMER)"),
          opt('s', "beginTimestamp", false, "only messages stored at or after (ms)"),
          opt('e', "endTimestamp", false, "only messages stored at or before (ms)"),
          opt('c', "MessageNumber", false, "number of messages to consume (128)")},
         cmd_consume_message},
    };
}

// The commands implemented in this file, in the order `mqadmin help` lists them.
std::vector<Command> build_commands() {
    std::vector<Command> v = topic_admin_commands();
    append_commands(&v, cluster_broker_commands());
    append_commands(&v, consumer_group_commands());
    append_commands(&v, message_commands());
    return v;
}

void print_command_list(std::FILE* out) {
    fmt::print(out, "The most commonly used mqadmin commands are:\n");
    for (const auto& c : commands()) {
        fmt::print(out, "   {:<25} {}\n", c.name, c.summary);
    }
    fmt::print(out, "\nSee 'mqadmin help <command>' for more information on a specific command.\n");
}

}  // namespace

void append_commands(std::vector<Command>* to, std::vector<Command> more) {
    for (Command& c : more) {
        to->push_back(std::move(c));
    }
}

const std::vector<Command>& commands() {
    static const std::vector<Command> all = [] {
        std::vector<Command> v = build_commands();
        append_commands(&v, controller_commands());
        append_commands(&v, durability_commands());
        append_commands(&v, client_admin_commands());
        append_commands(&v, ops_commands());
        append_commands(&v, queue_commands());
        append_commands(&v, monitor_commands());
        append_commands(&v, container_commands());
        return v;
    }();
    return all;
}

const Command* find_command(const std::string& name) {
    for (const auto& c : commands()) {
        if (c.name == name) {
            return &c;
        }
    }
    return nullptr;
}

int run_mqadmin(int argc, char** argv, std::FILE* out, std::FILE* err) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || (args[0] == "help" && args.size() == 1) || args[0] == "-h" ||
        args[0] == "--help") {
        print_command_list(out);
        return 0;
    }
    if (args[0] == "help") {
        const Command* c = find_command(args[1]);
        if (c == nullptr) {
            fmt::print(err, "ERROR: the command '{}' does not exist.\n", args[1]);
            print_command_list(err);
            return 2;
        }
        fmt::print(out, "{}", format_usage(c->name, c->options));
        return 0;
    }
    const Command* c = find_command(args[0]);
    if (c == nullptr) {
        fmt::print(err, "ERROR: the command '{}' does not exist.\n", args[0]);
        print_command_list(err);
        return 2;
    }
    auto parsed = parse_options(c->options, std::vector<std::string>(args.begin() + 1, args.end()));
    if (!parsed.is_ok()) {
        fmt::print(err, "ERROR: {}\n{}", parsed.status().message(),
                   format_usage(c->name, c->options));
        return 2;
    }
    if (parsed->has('h')) {
        fmt::print(out, "{}", format_usage(c->name, c->options));
        return 0;
    }
    Context ctx{*parsed, parsed->get('n'), out};
    if (ctx.namesrv_addr.empty()) {
        if (const char* env = std::getenv("NAMESRV_ADDR"); env != nullptr) {
            ctx.namesrv_addr = env;
        }
    }
    Status st = c->run(ctx);
    std::fflush(out);
    if (!st.is_ok()) {
        fmt::print(err, "ERROR: {} command failed: {}: {}\n", c->name, errc_name(st.code()),
                   st.message());
        return 1;
    }
    return 0;
}

}  // namespace comet::mqadmin
