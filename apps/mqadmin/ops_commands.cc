// mqadmin commands of RocketMQ 4.9.8 for day-to-day operation: subscription groups and topic
// permissions (deleteSubGroup, updateTopicPerm, topicClusterList), name server settings and KV
// configs (getNamesrvConfig, updateNamesrvConfig, updateKvConfig, deleteKvConfig,
// updateOrderConf) and message inspection (queryMsgByUniqueKey, printMsg). Names, options and
// output lines follow RocketMQ's tools; docs/mqadmin.md lists the differences.

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "client/admin_client.h"
#include "client/producer.h"
#include "client/pull_consumer.h"
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
using protocol::MessageExt;

// Java NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG.
constexpr const char* kOrderTopicNamespace = "ORDER_TOPIC_CONFIG";

// The same request to every name server (Java MQClientAPIImpl puts KV configs and name server
// configs on each address of the list); fails on the first refusal.
Status to_every_namesrv(AdminClient& admin, const protocol::RemotingCommand& req,
                        std::string_view what) {
    for (const auto& ns : admin.instance().namesrv_addrs()) {
        protocol::RemotingCommand copy = req;
        COMET_RETURN_IF_ERROR(call_ok(admin, ns, std::move(copy), what).status());
    }
    return Status::ok();
}

// Java CommandUtil.fetchMasterAddrByClusterName.
Result<std::vector<std::string>> cluster_masters(AdminClient& admin, const std::string& cluster) {
    COMET_ASSIGN_OR_RETURN(auto addrs, admin.cluster_master_addrs(cluster));
    if (addrs.empty()) {
        return Status::error(Errc::kNotFound, "cluster {} has no master broker", cluster);
    }
    return addrs;
}

// ---- groups and topics ----

Status delete_group_at(AdminClient& admin, const std::string& addr, const std::string& group) {
    auto req = protocol::RemotingCommand::request(Req::kDeleteSubscriptionGroup);
    req.set_ext("groupName", group);
    return call_ok(admin, addr, std::move(req), "delete subscription group").status();
}

Status cmd_delete_sub_group(Context& ctx) {
    const std::string group = ctx.opts.get('g');
    if (!ctx.opts.has('b') && !ctx.opts.has('c')) {
        return Status::error(Errc::kInvalidArgument,
                             "one of -b brokerAddr or -c clusterName is required");
    }
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    if (ctx.opts.has('b')) {
        const std::string addr = ctx.opts.get('b');
        COMET_RETURN_IF_ERROR(delete_group_at(*admin, addr, group));
        fmt::print(ctx.out, "delete subscription group [{}] from broker [{}] success.\n", group,
                   addr);
        return Status::ok();
    }
    const std::string cluster = ctx.opts.get('c');
    COMET_ASSIGN_OR_RETURN(auto masters, cluster_masters(*admin, cluster));
    for (const auto& m : masters) {
        COMET_RETURN_IF_ERROR(delete_group_at(*admin, m, group));
        fmt::print(ctx.out,
                   "delete subscription group [{}] from broker [{}] in cluster [{}] success.\n",
                   group, m, cluster);
    }
    // Like Java: the group's retry and dead-letter topics go too; a failure there is reported
    // but does not fail the command (the group itself is gone).
    for (const std::string& topic : {"%RETRY%" + group, "%DLQ%" + group}) {
        Status st = admin->delete_topic(cluster, topic);
        if (st.is_ok()) {
            fmt::print(ctx.out, "delete topic [{}] from cluster [{}] success.\n", topic, cluster);
            fmt::print(ctx.out, "delete topic [{}] from NameServer success.\n", topic);
        } else {
            std::fflush(ctx.out);
            fmt::print(stderr, "delete topic [{}] failed: {}\n", topic, st.message());
        }
    }
    return Status::ok();
}

Status cmd_update_topic_perm(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(int64_t perm, ctx.opts.get_int('p', 0));
    if (perm != 2 && perm != 4 && perm != 6) {
        return Status::error(Errc::kInvalidArgument, "perm must be 2 (W), 4 (R) or 6 (RW)");
    }
    if (!ctx.opts.has('b') && !ctx.opts.has('c')) {
        return Status::error(Errc::kInvalidArgument,
                             "one of -b brokerAddr or -c clusterName is required");
    }
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    const std::string topic = ctx.opts.get('t');
    COMET_ASSIGN_OR_RETURN(auto route, admin->topic_route(topic));
    if (route.queue_datas.empty()) {
        return Status::error(Errc::kNotFound, "topic {} has no queue data", topic);
    }
    // Like Java: the first QueueData of the route gives queue numbers and the old perm.
    const auto& qd = route.queue_datas.front();
    const int32_t old_perm = qd.perm;
    if (perm == old_perm) {
        fmt::print(ctx.out, "new perm equals to the old one!\n");
        return Status::ok();
    }
    client::TopicCreateOptions o;
    o.read_queue_nums = qd.read_queue_nums;
    o.write_queue_nums = qd.write_queue_nums;
    o.perm = static_cast<int32_t>(perm);
    std::vector<std::string> addrs;
    if (ctx.opts.has('b')) {
        addrs.push_back(ctx.opts.get('b'));
    } else {
        COMET_ASSIGN_OR_RETURN(addrs, cluster_masters(*admin, ctx.opts.get('c')));
    }
    for (const auto& a : addrs) {
        COMET_RETURN_IF_ERROR(admin->create_topic(a, topic, o));
        fmt::print(ctx.out, "update topic perm from {} to {} in {} success.\n", old_perm, perm, a);
    }
    if (ctx.opts.has('b')) {
        fmt::print(ctx.out,
                   "TopicConfig [topicName={}, readQueueNums={}, writeQueueNums={}, perm={}, "
                   "topicFilterType=SINGLE_TAG, topicSysFlag={}, order=false]\n",
                   topic, o.read_queue_nums, o.write_queue_nums, protocol::perm_to_string(o.perm),
                   qd.topic_sys_flag);
    }
    return Status::ok();
}

Status cmd_topic_cluster_list(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    COMET_ASSIGN_OR_RETURN(auto route, admin->topic_route(ctx.opts.get('t')));
    std::set<std::string> clusters;
    for (const auto& bd : route.broker_datas) {
        clusters.insert(bd.cluster);
    }
    for (const auto& c : clusters) {
        fmt::print(ctx.out, "{}\n", c);
    }
    return Status::ok();
}

// ---- name server configs ----

// The name servers named by -n ("a;b"), as Java splits them.
std::vector<std::string> namesrv_list(const Context& ctx) {
    std::vector<std::string> out;
    std::string cur;
    for (char ch : ctx.namesrv_addr + ";") {
        if (ch == ';') {
            if (!cur.empty()) {
                out.push_back(cur);
            }
            cur.clear();
        } else if (ch != ' ') {
            cur.push_back(ch);
        }
    }
    return out;
}

Status cmd_get_namesrv_config(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    for (const auto& ns : namesrv_list(ctx)) {
        COMET_ASSIGN_OR_RETURN(
            auto resp,
            call_ok(*admin, ns, protocol::RemotingCommand::request(Req::kGetNamesrvConfig),
                    "get name server config"));
        fmt::print(ctx.out, "============{}============\n", ns);
        // The body is Java Properties text: one "key=value" per line.
        size_t pos = 0;
        while (pos < resp.body.size()) {
            size_t nl = resp.body.find('\n', pos);
            if (nl == std::string::npos) {
                nl = resp.body.size();
            }
            std::string line = resp.body.substr(pos, nl - pos);
            pos = nl + 1;
            if (!line.empty() && line.back() == '\r') {
                line.pop_back();
            }
            const size_t eq = line.find('=');
            if (line.empty() || line[0] == '#' || eq == std::string::npos) {
                continue;
            }
            fmt::print(ctx.out, "{:<50}=  {}\n", line.substr(0, eq), line.substr(eq + 1));
        }
    }
    return Status::ok();
}

Status cmd_update_namesrv_config(Context& ctx) {
    const std::string key = ctx.opts.get('k');
    const std::string value = ctx.opts.get('v');
    if (key.empty() || key.find_first_of("=\n") != std::string::npos ||
        value.find('\n') != std::string::npos) {
        return Status::error(Errc::kInvalidArgument, "bad config key or value");
    }
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    const auto servers = namesrv_list(ctx);
    for (const auto& ns : servers) {
        auto req = protocol::RemotingCommand::request(Req::kUpdateNamesrvConfig);
        req.body = key + "=" + value + "\n";
        COMET_RETURN_IF_ERROR(
            call_ok(*admin, ns, std::move(req), "update name server config").status());
    }
    std::string list = "[";
    for (size_t i = 0; i < servers.size(); ++i) {
        list += (i == 0 ? "" : ", ") + servers[i];
    }
    list += "]";
    fmt::print(ctx.out, "update name server config success!{}\n{} : {}\n", list, key, value);
    return Status::ok();
}

Status put_kv(AdminClient& admin, const std::string& ns, const std::string& key,
              const std::string& value) {
    auto req = protocol::RemotingCommand::request(Req::kPutKvConfig);
    req.set_ext("namespace", ns);
    req.set_ext("key", key);
    req.set_ext("value", value);
    return to_every_namesrv(admin, req, "put kv config");
}

Status delete_kv(AdminClient& admin, const std::string& ns, const std::string& key) {
    auto req = protocol::RemotingCommand::request(Req::kDeleteKvConfig);
    req.set_ext("namespace", ns);
    req.set_ext("key", key);
    return to_every_namesrv(admin, req, "delete kv config");
}

Status cmd_update_kv_config(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    COMET_RETURN_IF_ERROR(put_kv(*admin, ctx.opts.get('s'), ctx.opts.get('k'), ctx.opts.get('v')));
    fmt::print(ctx.out, "create or update kv config to namespace success.\n");
    return Status::ok();
}

Status cmd_delete_kv_config(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    COMET_RETURN_IF_ERROR(delete_kv(*admin, ctx.opts.get('s'), ctx.opts.get('k')));
    fmt::print(ctx.out, "delete kv config from namespace success.\n");
    return Status::ok();
}

// Java getKVConfig: the first name server that answers.
Result<std::string> get_kv(AdminClient& admin, const std::string& ns, const std::string& key) {
    Status last = Status::error(Errc::kUnavailable, "no name server");
    for (const auto& addr : admin.instance().namesrv_addrs()) {
        auto req = protocol::RemotingCommand::request(Req::kGetKvConfig);
        req.set_ext("namespace", ns);
        req.set_ext("key", key);
        auto resp = call_ok(admin, addr, std::move(req), "get kv config");
        if (resp.is_ok()) {
            const std::string* v = resp->ext("value");
            return v != nullptr ? *v : std::string();
        }
        last = resp.status();
    }
    return last;
}

Status cmd_update_order_conf(Context& ctx) {
    const std::string topic = ctx.opts.get('t');
    const std::string method = ctx.opts.get('m');
    if (method != "get" && method != "put" && method != "delete") {
        return Status::error(Errc::kInvalidArgument, "method (-m) must be put, get or delete");
    }
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    if (method == "get") {
        COMET_ASSIGN_OR_RETURN(std::string conf, get_kv(*admin, kOrderTopicNamespace, topic));
        fmt::print(ctx.out, "get orderConf success. topic=[{}], orderConf=[{}] \n", topic, conf);
    } else if (method == "put") {
        const std::string conf = ctx.opts.get('v');
        if (conf.find_first_not_of(" \t") == std::string::npos) {
            return Status::error(Errc::kInvalidArgument, "please set orderConf with option -v.");
        }
        COMET_RETURN_IF_ERROR(put_kv(*admin, kOrderTopicNamespace, topic, conf));
        fmt::print(ctx.out, "update orderConf success. topic=[{}], orderConf=[{}]\n", topic, conf);
    } else {
        COMET_RETURN_IF_ERROR(delete_kv(*admin, kOrderTopicNamespace, topic));
        fmt::print(ctx.out, "delete orderConf success. topic=[{}]\n", topic);
    }
    return Status::ok();
}

// ---- messages ----

// The group names of a GroupList body ({"groupList":[...]}).
std::set<std::string> group_list(const std::string& body) {
    std::set<std::string> out;
    auto doc = protocol::parse_json_body(body);
    if (!doc.is_ok() || !doc->IsObject() || !doc->HasMember("groupList") ||
        !(*doc)["groupList"].IsArray()) {
        return out;
    }
    for (const auto& g : (*doc)["groupList"].GetArray()) {
        if (g.IsString()) {
            out.insert(g.GetString());
        }
    }
    return out;
}

// Java DefaultMQAdminExtImpl#messageTrackDetail: for each group consuming the topic, whether
// it consumed this message (its consumer offset passed the message's queue offset).
Status print_message_track(Context& ctx, AdminClient& admin, const MessageExt& msg) {
    COMET_ASSIGN_OR_RETURN(auto route, admin.topic_route(msg.topic));
    std::set<std::string> groups;
    for (const auto& bd : route.broker_datas) {
        auto m = bd.broker_addrs.find(0);
        if (m == bd.broker_addrs.end()) {
            continue;
        }
        auto req = protocol::RemotingCommand::request(Req::kQueryTopicConsumeByWho);
        req.set_ext("topic", msg.topic);
        auto resp = call_ok(admin, m->second, std::move(req), "query topic consume by who");
        if (resp.is_ok()) {
            groups.merge(group_list(resp->body));
        }
    }
    if (groups.empty()) {
        fmt::print(ctx.out, "\n\nWARN: No Consumer\n");
        return Status::ok();
    }
    fmt::print(ctx.out, "\n\n");
    for (const auto& g : groups) {
        std::string type;
        std::string desc = "null";
        auto cc = admin.consumer_connection(g, "%RETRY%" + g);
        if (!cc.is_ok()) {
            type = "NOT_ONLINE";
            desc = cc.status().message();
        } else if (cc->message_model.value_or("") == "BROADCASTING") {
            type = "CONSUME_BROADCASTING";
        } else {
            auto stats = admin.consume_stats(g, msg.topic);
            type = "NOT_CONSUME_YET";
            if (!stats.is_ok()) {
                type = "UNKNOWN";
                desc = stats.status().message();
            } else {
                for (const auto& [mq, w] : stats->offset_table) {
                    if (mq.queue_id == msg.queue_id && w.consumer_offset > msg.queue_offset &&
                        mq.topic == msg.topic) {
                        type = "CONSUMED";
                    }
                }
            }
        }
        fmt::print(ctx.out, "MessageTrack [consumerGroup={}, trackType={}, exceptionDesc={}]", g,
                   type, desc);
    }
    fmt::print(ctx.out, "\n");
    return Status::ok();
}

// Java createBodyFile: the body to /tmp/rocketmq/msgbodys/<msgId>.
Result<std::string> write_body_file(const MessageExt& msg) {
    ::mkdir("/tmp/rocketmq", 0755);
    ::mkdir("/tmp/rocketmq/msgbodys", 0755);
    const std::string path = "/tmp/rocketmq/msgbodys/" + msg.unique_id();
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
        return Status::error(Errc::kIoError, "cannot write {}", path);
    }
    const size_t n = std::fwrite(msg.body.data(), 1, msg.body.size(), f);
    const bool ok = std::fclose(f) == 0 && n == msg.body.size();
    if (!ok) {
        return Status::error(Errc::kIoError, "cannot write {}", path);
    }
    return path;
}

// Java consumeMessageDirectly: CONSUME_MESSAGE_DIRECTLY to the broker that stored the message,
// which hands it to the client -d of group -g; prints the client's ConsumeMessageDirectlyResult.
Status consume_directly(Context& ctx, AdminClient& admin, const MessageExt& msg) {
    auto req = protocol::RemotingCommand::request(Req::kConsumeMessageDirectly);
    req.set_ext("consumerGroup", ctx.opts.get('g'));
    req.set_ext("clientId", ctx.opts.get('d'));
    req.set_ext("msgId", msg.msg_id);
    COMET_ASSIGN_OR_RETURN(auto resp, call_ok(admin, msg.store_host.to_string(), std::move(req),
                                              "consume message directly"));
    COMET_ASSIGN_OR_RETURN(auto doc, protocol::parse_json_body(resp.body));
    auto text = [&](const char* k) -> std::string {
        if (!doc.IsObject() || !doc.HasMember(k)) {
            return "null";
        }
        const auto& v = doc[k];
        if (v.IsString()) {
            return v.GetString();
        }
        if (v.IsBool()) {
            return v.GetBool() ? "true" : "false";
        }
        if (v.IsInt64()) {
            return std::to_string(v.GetInt64());
        }
        return "null";
    };
    fmt::print(ctx.out,
               "ConsumeMessageDirectlyResult [order={}, autoCommit={}, consumeResult={}, "
               "remark={}, spentTimeMills={}]\n",
               text("order"), text("autoCommit"), text("consumeResult"), text("remark"),
               text("spentTimeMills"));
    return Status::ok();
}

Status cmd_query_msg_by_unique_key(Context& ctx) {
    if (ctx.opts.has('g') != ctx.opts.has('d')) {
        return Status::error(Errc::kInvalidArgument,
                             "-g consumerGroup and -d clientId go together");
    }
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    const std::string id = ctx.opts.get('i');
    const std::string topic = ctx.opts.get('t');
    // Like Java viewMessage(topic, msgId): an offset msg id first, else the UNIQ_KEY index.
    std::optional<MessageExt> msg;
    if (auto byid = admin->query_msg_by_id(id); byid.is_ok() && byid->topic == topic) {
        msg = std::move(byid).value();
    } else {
        COMET_ASSIGN_OR_RETURN(
            auto found,
            admin->query_msg_by_key(topic, id, 32, 0, std::numeric_limits<int64_t>::max()));
        for (auto& m : found) {
            if (m.unique_id() == id) {
                msg = std::move(m);
                break;
            }
        }
    }
    if (!msg) {
        return Status::error(Errc::kNotFound, "no message with id {} in topic {}", id, topic);
    }
    if (ctx.opts.has('g')) {
        return consume_directly(ctx, *admin, *msg);
    }
    COMET_ASSIGN_OR_RETURN(std::string body_path, write_body_file(*msg));
    auto line = [&](std::string_view k, const std::string& v) {
        fmt::print(ctx.out, "{:<20} {}\n", k, v);
    };
    line("Topic:", msg->topic);
    line("Tags:", "[" + msg->tags() + "]");
    line("Keys:", "[" + msg->keys() + "]");
    line("Queue ID:", std::to_string(msg->queue_id));
    line("Queue Offset:", std::to_string(msg->queue_offset));
    line("CommitLog Offset:", std::to_string(msg->commit_log_offset));
    line("Reconsume Times:", std::to_string(msg->reconsume_times));
    line("Born Timestamp:", human_time(msg->born_timestamp));
    line("Store Timestamp:", human_time(msg->store_timestamp));
    line("Born Host:", msg->born_host.to_string());
    line("Store Host:", msg->store_host.to_string());
    line("System Flag:", std::to_string(msg->sys_flag));
    line("Properties:", properties_text(*msg));
    line("Message Body Path:", body_path);
    return print_message_track(ctx, *admin, *msg);
}

// Java PrintMessageSubCommand#timestampFormat: milliseconds, or "yyyy-MM-dd#HH:mm:ss:SSS" local.
Result<int64_t> parse_timestamp(const std::string& s) {
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (!s.empty() && end != nullptr && *end == '\0') {
        return static_cast<int64_t>(v);
    }
    std::tm tm{};
    int ms = 0;
    if (std::sscanf(s.c_str(), "%d-%d-%d#%d:%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7) {
        return Status::error(Errc::kInvalidArgument,
                             "bad timestamp '{}': milliseconds or yyyy-MM-dd#HH:mm:ss:SSS", s);
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_isdst = -1;
    return static_cast<int64_t>(std::mktime(&tm)) * 1000 + ms;
}

// SEARCH_OFFSET_BY_TIMESTAMP on the queue's master.
Result<int64_t> search_offset(client::DefaultMqPullConsumer& consumer,
                              const protocol::MessageQueue& mq, int64_t timestamp) {
    auto addr = consumer.instance().find_broker_master(mq.broker_name);
    if (!addr) {
        return Status::error(Errc::kNotFound, "no master address for broker {}", mq.broker_name);
    }
    auto req = protocol::RemotingCommand::request(Req::kSearchOffsetByTimestamp);
    req.set_ext("topic", mq.topic);
    req.set_ext("queueId", std::to_string(mq.queue_id));
    req.set_ext("timestamp", std::to_string(timestamp));
    COMET_ASSIGN_OR_RETURN(auto resp, consumer.instance().invoke(*addr, std::move(req)));
    if (resp.code != RC::kSuccess) {
        return client::response_error("search offset by timestamp", resp);
    }
    const std::string* off = resp.ext("offset");
    if (off == nullptr) {
        return Status::error(Errc::kInternal, "search offset response without offset");
    }
    return static_cast<int64_t>(std::strtoll(off->c_str(), nullptr, 10));
}

std::string queue_text(const protocol::MessageQueue& mq) {
    return fmt::format("MessageQueue [topic={}, brokerName={}, queueId={}]", mq.topic,
                       mq.broker_name, mq.queue_id);
}

// Java MessageExt#toString (Message#toString inside; the body as a byte array).
std::string message_text(const MessageExt& m, const std::string& broker_name) {
    std::string bytes = "[";
    for (size_t i = 0; i < m.body.size(); ++i) {
        bytes += fmt::format("{}{}", i == 0 ? "" : ", ",
                             static_cast<int>(static_cast<int8_t>(m.body[i])));
    }
    bytes += "]";
    return fmt::format(
        "MessageExt [brokerName={}, queueId={}, storeSize={}, queueOffset={}, sysFlag={}, "
        "bornTimestamp={}, bornHost=/{}, storeTimestamp={}, storeHost=/{}, msgId={}, "
        "commitLogOffset={}, bodyCRC={}, reconsumeTimes={}, preparedTransactionOffset={}, "
        "toString()=Message{{topic='{}', flag={}, properties={}, body={}, transactionId='null'}}]",
        broker_name, m.queue_id, m.store_size, m.queue_offset, m.sys_flag, m.born_timestamp,
        m.born_host.to_string(), m.store_timestamp, m.store_host.to_string(), m.msg_id,
        m.commit_log_offset, m.body_crc, m.reconsume_times, m.prepared_transaction_offset, m.topic,
        m.flag, properties_text(m), bytes);
}

Status cmd_print_msg(Context& ctx) {
    COMET_RETURN_IF_ERROR(require_namesrv(ctx));
    const std::string topic = ctx.opts.get('t');
    const std::string charset = ctx.opts.get('c', "UTF-8");
    if (charset != "UTF-8" && charset != "utf-8" && charset != "UTF8") {
        return Status::error(Errc::kUnsupported, "only the UTF-8 charset is supported");
    }
    const std::string expression = ctx.opts.get('s', "*");
    COMET_ASSIGN_OR_RETURN(bool print_body, ctx.opts.get_bool('d', true));
    std::optional<int64_t> begin;
    std::optional<int64_t> end;
    if (ctx.opts.has('b')) {
        COMET_ASSIGN_OR_RETURN(begin, parse_timestamp(ctx.opts.get('b')));
    }
    if (ctx.opts.has('e')) {
        COMET_ASSIGN_OR_RETURN(end, parse_timestamp(ctx.opts.get('e')));
    }
    client::PullConsumerConfig pc;
    pc.client = client_config(ctx);
    pc.group = "TOOLS_CONSUMER";
    client::DefaultMqPullConsumer consumer(pc);
    COMET_RETURN_IF_ERROR(consumer.start());
    COMET_ASSIGN_OR_RETURN(auto queues, consumer.fetch_subscribe_message_queues(topic));
    for (const auto& mq : queues) {
        COMET_ASSIGN_OR_RETURN(int64_t min_off, consumer.min_offset(mq));
        COMET_ASSIGN_OR_RETURN(int64_t max_off, consumer.max_offset(mq));
        if (begin) {
            COMET_ASSIGN_OR_RETURN(min_off, search_offset(consumer, mq, *begin));
        }
        if (end) {
            COMET_ASSIGN_OR_RETURN(max_off, search_offset(consumer, mq, *end));
        }
        fmt::print(ctx.out, "minOffset={}, maxOffset={}, {}\n", min_off, max_off, queue_text(mq));
        // Bounded: each round advances the offset or stops.
        for (int64_t offset = std::max<int64_t>(min_off, 0); offset < max_off;) {
            auto pr = consumer.pull(mq, expression, offset, 32);
            if (!pr.is_ok()) {
                std::fflush(ctx.out);
                fmt::print(stderr, "pull {} at {} failed: {}\n", queue_text(mq), offset,
                           pr.status().message());
                break;
            }
            const int64_t next = pr->next_begin_offset;
            if (pr->status == client::PullStatus::kFound) {
                for (const auto& m : pr->messages) {
                    fmt::print(ctx.out, "MSGID: {} {} BODY: {}\n", m.unique_id(),
                               message_text(m, mq.broker_name),
                               print_body ? m.body : std::string("NOT PRINT BODY"));
                }
            } else if (pr->status == client::PullStatus::kNoMatchedMsg) {
                fmt::print(ctx.out, "{} no matched msg. status=NO_MATCHED_MSG, offset={}\n",
                           queue_text(mq), next);
            } else {
                fmt::print(ctx.out, "{} print msg finished. status={}, offset={}\n", queue_text(mq),
                           client::pull_status_name(pr->status), next);
                break;
            }
            if (next <= offset) {
                break;
            }
            offset = next;
        }
        fmt::print(ctx.out, "--------------------------------------------------------\n");
    }
    consumer.shutdown();
    return Status::ok();
}

Status cmd_print_msg_by_queue(Context& ctx) {
    COMET_RETURN_IF_ERROR(require_namesrv(ctx));
    const std::string charset = ctx.opts.get('c', "UTF-8");
    if (charset != "UTF-8" && charset != "utf-8" && charset != "UTF8") {
        return Status::error(Errc::kUnsupported, "only the UTF-8 charset is supported");
    }
    COMET_ASSIGN_OR_RETURN(bool print_msg, ctx.opts.get_bool('p', false));
    COMET_ASSIGN_OR_RETURN(bool print_body, ctx.opts.get_bool('d', false));
    COMET_ASSIGN_OR_RETURN(bool by_tag, ctx.opts.get_bool('f', false));
    COMET_ASSIGN_OR_RETURN(int64_t qid, ctx.opts.get_int('i', 0));
    if (qid < 0 || qid > INT32_MAX) {
        return Status::error(Errc::kInvalidArgument, "bad queue id");
    }
    const std::string expression = ctx.opts.get('s', "*");
    const protocol::MessageQueue mq{ctx.opts.get('t'), ctx.opts.get('a'),
                                    static_cast<int32_t>(qid)};
    client::PullConsumerConfig pc;
    pc.client = client_config(ctx);
    pc.group = "TOOLS_CONSUMER";
    client::DefaultMqPullConsumer consumer(pc);
    COMET_RETURN_IF_ERROR(consumer.start());
    // The route makes the broker's address known to the client.
    COMET_RETURN_IF_ERROR(consumer.fetch_subscribe_message_queues(mq.topic).status());
    COMET_ASSIGN_OR_RETURN(int64_t min_off, consumer.min_offset(mq));
    COMET_ASSIGN_OR_RETURN(int64_t max_off, consumer.max_offset(mq));
    if (ctx.opts.has('b')) {
        COMET_ASSIGN_OR_RETURN(int64_t t, parse_timestamp(ctx.opts.get('b')));
        COMET_ASSIGN_OR_RETURN(min_off, search_offset(consumer, mq, t));
    }
    if (ctx.opts.has('e')) {
        COMET_ASSIGN_OR_RETURN(int64_t t, parse_timestamp(ctx.opts.get('e')));
        COMET_ASSIGN_OR_RETURN(max_off, search_offset(consumer, mq, t));
    }
    std::map<std::string, int64_t> tag_counts;
    for (int64_t offset = std::max<int64_t>(min_off, 0); offset < max_off;) {
        COMET_ASSIGN_OR_RETURN(auto pr, consumer.pull(mq, expression, offset, 32));
        if (pr.status != client::PullStatus::kFound) {
            break;
        }
        for (const auto& m : pr.messages) {
            if (by_tag && m.tags().find_first_not_of(" \t") != std::string::npos) {
                ++tag_counts[m.tags()];
            }
            if (print_msg) {
                fmt::print(ctx.out, "MSGID: {} {} BODY: {}\n", m.unique_id(),
                           message_text(m, mq.broker_name),
                           print_body ? m.body : std::string("NOT PRINT BODY"));
            }
        }
        if (pr.next_begin_offset <= offset) {
            break;
        }
        offset = pr.next_begin_offset;
    }
    consumer.shutdown();
    // Like Java: by count, largest first (ties by tag name here, for a stable order).
    std::vector<std::pair<std::string, int64_t>> counts(tag_counts.begin(), tag_counts.end());
    std::stable_sort(counts.begin(), counts.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [tag, n] : counts) {
        fmt::print(ctx.out, "Tag: {:<30} Count: {}\n", tag, n);
    }
    return Status::ok();
}

// ---- send checks ----

Result<int64_t> positive_int(const Context& ctx, char c, int64_t fallback, int64_t max) {
    COMET_ASSIGN_OR_RETURN(int64_t v, ctx.opts.get_int(c, fallback));
    if (v <= 0 || v > max) {
        return Status::error(Errc::kInvalidArgument, "-{} must be in 1..{}", c, max);
    }
    return v;
}

int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

client::ProducerConfig producer_config(const Context& ctx, std::string group) {
    client::ProducerConfig pc;
    pc.client = client_config(ctx);
    pc.group = std::move(group);
    return pc;
}

// Java SendResult#toString.
std::string send_result_text(const client::SendResult& r) {
    return fmt::format(
        "SendResult [sendStatus={}, msgId={}, offsetMsgId={}, messageQueue={}, queueOffset={}]",
        client::send_status_name(r.status), r.msg_id, r.offset_msg_id, queue_text(r.message_queue),
        r.queue_offset);
}

Status cmd_send_msg_status(Context& ctx) {
    COMET_RETURN_IF_ERROR(require_namesrv(ctx));
    const std::string broker_name = ctx.opts.get('b');
    COMET_ASSIGN_OR_RETURN(int64_t size, positive_int(ctx, 's', 128, 4 * 1024 * 1024));
    COMET_ASSIGN_OR_RETURN(int64_t count, positive_int(ctx, 'c', 50, 1000000));
    // Java buildMessage: "hello jodie" repeated until at least `size` bytes, to the topic named
    // after the broker (every broker serves it while brokerTopicEnable is on).
    auto build = [&](int64_t n) {
        std::string body;
        for (int64_t i = 0; i < n; i += 11) {
            body += "hello jodie";
        }
        return client::Message(broker_name, body);
    };
    client::DefaultMqProducer producer(producer_config(ctx, "PID_SMSC"));
    COMET_RETURN_IF_ERROR(producer.start());
    Status st = producer.send(build(16)).status();  // warm-up, like Java
    for (int64_t i = 0; st.is_ok() && i < count; ++i) {
        const int64_t begin = now_ms();
        auto r = producer.send(build(size));
        if (!r.is_ok()) {
            st = r.status();
            break;
        }
        fmt::print(ctx.out, "rt:{}ms, SendResult={}\n", now_ms() - begin, send_result_text(*r));
    }
    producer.shutdown();
    return st;
}

Status cmd_check_msg_send_rt(Context& ctx) {
    COMET_RETURN_IF_ERROR(require_namesrv(ctx));
    const std::string topic = ctx.opts.get('t');
    COMET_ASSIGN_OR_RETURN(int64_t amount, positive_int(ctx, 'a', 100, 1000000));
    COMET_ASSIGN_OR_RETURN(int64_t size, positive_int(ctx, 's', 128, 4 * 1024 * 1024));
    if (amount < 2) {
        return Status::error(Errc::kInvalidArgument,
                             "-a amount must be >= 2: the first message is a warm-up sample");
    }
    client::DefaultMqProducer producer(producer_config(ctx, fmt::format("CHECK_RT_{}", now_ms())));
    COMET_RETURN_IF_ERROR(producer.start());
    auto info = producer.publish_info(topic);
    if (!info.is_ok()) {
        producer.shutdown();
        return info.status();
    }
    const auto queues = (*info)->queues();
    if (queues.empty()) {
        producer.shutdown();
        return Status::error(Errc::kNotFound, "topic {} has no writable queue", topic);
    }
    const std::string body(static_cast<size_t>(size), 'a');
    fmt::print(ctx.out, "{:<32}  {:<4}  {:<20}    {}\n", "#Broker Name", "#QID", "#Send Result",
               "#RT");
    int64_t elapsed = 0;
    for (int64_t i = 0; i < amount; ++i) {
        // Like Java's selector: queue i modulo the number of queues.
        const auto& mq = queues[static_cast<size_t>(i) % queues.size()];
        const int64_t start = now_ms();
        const bool ok = producer.send_to_queue(client::Message(topic, body), mq).is_ok();
        const int64_t end = now_ms();
        if (i != 0) {
            elapsed += end - start;
        }
        fmt::print(ctx.out, "{:<32}  {:<4}  {:<20}    {}\n", mq.broker_name, mq.queue_id, ok,
                   end - start);
    }
    producer.shutdown();
    fmt::print(ctx.out, "Avg RT: {:.2f}\n", static_cast<double>(elapsed) / (amount - 1));
    return Status::ok();
}

// "yyyy-MM-dd HH:mm:ss" in GMT+8, as Java's getCurTime.
std::string gmt8_time() {
    const std::time_t secs = static_cast<std::time_t>(now_ms() / 1000 + 8 * 3600);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1,
                       tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

Status cmd_cluster_rt(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(int64_t amount, positive_int(ctx, 'a', 100, 1000000));
    COMET_ASSIGN_OR_RETURN(int64_t size, positive_int(ctx, 's', 128, 4 * 1024 * 1024));
    COMET_ASSIGN_OR_RETURN(int64_t interval, positive_int(ctx, 'i', 10, 86400));
    COMET_ASSIGN_OR_RETURN(bool tlog, ctx.opts.get_bool('p', false));
    const std::string room = ctx.opts.get('m', "noname");
    if (amount < 2) {
        return Status::error(Errc::kInvalidArgument,
                             "-a amount must be >= 2: the first message is a warm-up sample and "
                             "is excluded from the RT calculation");
    }
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    COMET_ASSIGN_OR_RETURN(auto info, admin->cluster_info());
    std::vector<std::string> clusters;
    if (ctx.opts.has('c')) {
        clusters.push_back(ctx.opts.get('c'));
    } else {
        for (const auto& [c, names] : info.cluster_addr_table) {
            clusters.push_back(c);
        }
    }
    client::DefaultMqProducer producer(
        producer_config(ctx, fmt::format("CLUSTER_RT_{}", now_ms())));
    COMET_RETURN_IF_ERROR(producer.start());
    if (!tlog) {
        fmt::print(ctx.out, "{:<24}  {:<24}  {:<4}  {:<8}  {:<8}\n", "#Cluster Name",
                   "#Broker Name", "#RT", "#successCount", "#failCount");
    }
    const std::string body(static_cast<size_t>(size), 'a');
    // Like Java: measure every broker, sleep -i seconds, again, until the process is stopped.
    while (true) {
        for (const auto& cluster : clusters) {
            auto it = info.cluster_addr_table.find(cluster);
            if (it == info.cluster_addr_table.end()) {
                fmt::print(ctx.out, "cluster [{}] not exist\n", cluster);
                break;
            }
            for (const auto& broker_name : it->second) {
                int64_t elapsed = 0;
                int64_t ok = 0;
                int64_t failed = 0;
                for (int64_t i = 0; i < amount; ++i) {
                    const int64_t start = now_ms();
                    if (producer.send(client::Message(broker_name, body)).is_ok()) {
                        ++ok;
                    } else {
                        ++failed;
                    }
                    if (i != 0) {
                        elapsed += now_ms() - start;
                    }
                }
                const double rt = static_cast<double>(elapsed) / (amount - 1);
                if (!tlog) {
                    fmt::print(ctx.out, "{:<24}  {:<24}  {:<8}  {:<16}  {:<16}\n", cluster,
                               broker_name, fmt::format("{:.2f}", rt), ok, failed);
                } else {
                    fmt::print(ctx.out, "{}|{}|{}|{}|{:.0f}\n", gmt8_time(), room, cluster,
                               broker_name, rt);
                }
            }
        }
        std::fflush(ctx.out);
        ::sleep(static_cast<unsigned>(interval));
    }
}

// ---- allocation ----

// Java AllocateMessageQueueAveragely#allocate for client `cid` among `cids`.
std::vector<protocol::MessageQueue> allocate_averagely(
    const std::vector<protocol::MessageQueue>& all, const std::vector<std::string>& cids,
    const std::string& cid) {
    std::vector<protocol::MessageQueue> out;
    const auto pos = std::find(cids.begin(), cids.end(), cid);
    if (pos == cids.end() || all.empty()) {
        return out;
    }
    const size_t index = static_cast<size_t>(pos - cids.begin());
    const size_t n = all.size();
    const size_t k = cids.size();
    const size_t mod = n % k;
    const size_t average = n <= k ? 1 : (mod > 0 && index < mod ? n / k + 1 : n / k);
    const size_t start = (mod > 0 && index < mod) ? index * average : index * average + mod;
    const size_t range = start >= n ? 0 : std::min(average, n - start);
    for (size_t i = 0; i < range; ++i) {
        out.push_back(all[(start + i) % n]);
    }
    return out;
}

Status cmd_allocate_mq(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    const std::string topic = ctx.opts.get('t');
    std::vector<std::string> ips;
    std::string cur;
    for (char ch : ctx.opts.get('i') + ",") {
        if (ch == ',') {
            ips.push_back(cur);
            cur.clear();
        } else {
            cur.push_back(ch);
        }
    }
    COMET_ASSIGN_OR_RETURN(auto route, admin->topic_route(topic));
    // Java topicRouteData2TopicSubscribeInfo: readQueueNums queues of each readable broker.
    std::vector<protocol::MessageQueue> all;
    for (const auto& qd : route.queue_datas) {
        if ((qd.perm & protocol::kPermRead) == 0) {
            continue;
        }
        for (int32_t q = 0; q < qd.read_queue_nums; ++q) {
            all.push_back(protocol::MessageQueue{topic, qd.broker_name, q});
        }
    }
    std::sort(all.begin(), all.end());
    // RebalanceResult as compact JSON:
    // {"result":{"<ip>":[{"brokerName":..,"queueId":..,"topic":..}]}}
    std::map<std::string, std::vector<protocol::MessageQueue>> result;
    for (const auto& ip : ips) {
        result[ip] = allocate_averagely(all, ips, ip);
    }
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("result");
    w.StartObject();
    for (const auto& [ip, mqs] : result) {
        w.Key(ip.c_str(), static_cast<rapidjson::SizeType>(ip.size()));
        w.StartArray();
        for (const auto& mq : mqs) {
            w.StartObject();
            w.Key("brokerName");
            w.String(mq.broker_name.c_str(),
                     static_cast<rapidjson::SizeType>(mq.broker_name.size()));
            w.Key("queueId");
            w.Int(mq.queue_id);
            w.Key("topic");
            w.String(mq.topic.c_str(), static_cast<rapidjson::SizeType>(mq.topic.size()));
            w.EndObject();
        }
        w.EndArray();
    }
    w.EndObject();
    w.EndObject();
    fmt::print(ctx.out, "{}\n", buf.GetString());
    return Status::ok();
}

// ---- store maintenance ----

// CLEAN_UNUSED_TOPIC on -b, or on every broker (masters and slaves) of -c, else of every
// cluster: each drops the ConsumeQueues of topics it has no topic config for.
Status cmd_clean_unused_topic(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    std::vector<std::string> addrs;
    if (ctx.opts.has('b')) {
        addrs.push_back(ctx.opts.get('b'));
    } else {
        COMET_ASSIGN_OR_RETURN(auto info, admin->cluster_info());
        for (const auto& [cluster, names] : info.cluster_addr_table) {
            if (ctx.opts.has('c') && cluster != ctx.opts.get('c')) {
                continue;
            }
            for (const auto& name : names) {
                auto b = info.broker_addr_table.find(name);
                if (b == info.broker_addr_table.end()) {
                    continue;
                }
                for (const auto& [id, a] : b->second.broker_addrs) {
                    addrs.push_back(a);
                }
            }
        }
        if (addrs.empty()) {
            return Status::error(Errc::kNotFound, "no broker in cluster {}",
                                 ctx.opts.get('c', "(any)"));
        }
    }
    for (const auto& a : addrs) {
        Status st = call_ok(*admin, a, protocol::RemotingCommand::request(Req::kCleanUnusedTopic),
                            "clean unused topic")
                        .status();
        if (!st.is_ok()) {
            fmt::print(ctx.out, "false\n");
            return st;
        }
    }
    fmt::print(ctx.out, "success\n");
    return Status::ok();
}

// deleteSubGroup, updateTopicPerm, topicClusterList.
std::vector<Command> ops_group_topic_commands() {
    return {
        {"deleteSubGroup",
         "Delete subscription group from broker.",
         {opt('b', "brokerAddr", false, "delete subscription group from which broker"),
          opt('c', "clusterName", false, "delete subscription group from which cluster"),
          opt('g', "groupName", true, "subscription group name")},
         cmd_delete_sub_group},
        {"updateTopicPerm",
         "Update topic perm",
         {opt('b', "brokerAddr", false, "create topic to which broker"),
          opt('c', "clusterName", false, "create topic to which cluster"),
          opt('t', "topic", true, "topic name"),
          opt('p', "perm", true, "set topic's permission(2|4|6), intro[2:W; 4:R; 6:RW]")},
         cmd_update_topic_perm},
        {"topicClusterList",
         "get cluster info for topic",
         {opt('t', "topic", true, "topic name")},
         cmd_topic_cluster_list},
    };
}

// queryMsgByUniqueKey, printMsg.
std::vector<Command> ops_message_commands() {
    return {
        {"queryMsgByUniqueKey",
         "Query Message by Unique key",
         {opt('i', "msgId", true, "Message Id"),
          opt('g', "consumerGroup", false, "consumer group name"),
          opt('d', "clientId", false, "The consumer's client id"),
          opt('t', "topic", true, "The topic of msg")},
         cmd_query_msg_by_unique_key},
        {"printMsg",
         "Print Message Detail.",
         {opt('t', "topic", true, "topic name"),
          opt('c', "charsetName", false, "CharsetName (only UTF-8)"),
          opt('s', "subExpression", false, "Subscribe Expression(eg: TagA || TagB)"),
          opt('b', "beginTimestamp", false,
              "Begin timestamp[currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]"),
          opt('e', "endTimestamp", false,
              "End timestamp[currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]"),
          opt('d', "printBody", false, "print body")},
         cmd_print_msg},
    };
}

// The name server's configuration and KV table: getNamesrvConfig, updateNamesrvConfig,
// updateKvConfig, deleteKvConfig, updateOrderConf.
std::vector<Command> ops_namesrv_config_commands() {
    return {
        {"getNamesrvConfig", "Get configs of name server.", {}, cmd_get_namesrv_config},
        {"updateNamesrvConfig",
         "Update configs of name server.",
         {opt('k', "key", true, "config key"), opt('v', "value", true, "config value")},
         cmd_update_namesrv_config},
        {"updateKvConfig",
         "Create or update KV config.",
         {opt('s', "namespace", true, "set the namespace"),
          opt('k', "key", true, "set the key name"), opt('v', "value", true, "set the key value")},
         cmd_update_kv_config},
        {"deleteKvConfig",
         "Delete KV config.",
         {opt('s', "namespace", true, "set the namespace"),
          opt('k', "key", true, "set the key name")},
         cmd_delete_kv_config},
        {"updateOrderConf",
         "Create or update or delete order conf",
         {opt('t', "topic", true, "topic name"),
          opt('v', "orderConf", false, "set order conf [eg. brokerName1:num;brokerName2:num]"),
          opt('m', "method", true, "option type [eg. put|get|delete")},
         cmd_update_order_conf},
    };
}

// printMsgByQueue (listed after the name server commands, as RocketMQ lists it).
std::vector<Command> ops_queue_print_commands() {
    return {
        {"printMsgByQueue",
         "Print Message Detail",
         {opt('t', "topic", true, "topic name"), opt('a', "brokerName", true, "broker name"),
          opt('i', "queueId", true, "queue id"),
          opt('c', "charsetName", false, "CharsetName (only UTF-8)"),
          opt('s', "subExpression", false, "Subscribe Expression(eg: TagA || TagB)"),
          opt('b', "beginTimestamp", false,
              "Begin timestamp[currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]"),
          opt('e', "endTimestamp", false,
              "End timestamp[currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]"),
          opt('p', "printMsg", false, "print msg. eg: true | false(default)"),
          opt('d', "printBody", false, "print body. eg: true | false(default)"),
          opt('f', "calculate", false, "calculate by tag. eg: true | false(default)")},
         cmd_print_msg_by_queue},
    };
}

// Send probes: sendMsgStatus, clusterRT, checkMsgSendRT.
std::vector<Command> ops_send_probe_commands() {
    return {
        {"sendMsgStatus",
         "send msg to broker.",
         {opt('b', "brokerName", true, "Broker Name"),
          opt('s', "messageSize", false, "Message Size, Default: 128"),
          opt('c', "count", false, "send message count, Default: 50")},
         cmd_send_msg_status},
        {"clusterRT",
         "List All clusters Message Send RT.",
         {opt('a', "amount", false, "message amount | default 100"),
          opt('s', "size", false, "message size | default 128 Byte"),
          opt('c', "cluster", false, "cluster name | default display all cluster"),
          opt('p', "printLog", false, "print as tlog | default false"),
          opt('m', "machineRoom", false, "machine room name | default noname"),
          opt('i', "interval", false, "print interval | default 10 seconds")},
         cmd_cluster_rt},
        {"checkMsgSendRT",
         "check message send response time",
         {opt('t', "topic", true, "topic name"),
          opt('a', "amount", false, "message amount | default 100"),
          opt('s', "size", true, "message size | default 128 Byte")},
         cmd_check_msg_send_rt},
    };
}

// allocateMQ, cleanUnusedTopic.
std::vector<Command> ops_queue_topic_maintenance_commands() {
    return {
        {"allocateMQ",
         "Allocate MQ",
         {opt('t', "topic", true, "topic name"), opt('i', "ipList", true, "ipList")},
         cmd_allocate_mq},
        {"cleanUnusedTopic",
         "Clean unused topic on broker.",
         {opt('b', "brokerAddr", false, "Broker address"),
          opt('c', "cluster", false, "clustername")},
         cmd_clean_unused_topic},
    };
}

}  // namespace

std::vector<Command> ops_commands() {
    std::vector<Command> v = ops_group_topic_commands();
    append_commands(&v, ops_message_commands());
    append_commands(&v, ops_namesrv_config_commands());
    append_commands(&v, ops_queue_print_commands());
    append_commands(&v, ops_send_probe_commands());
    append_commands(&v, ops_queue_topic_maintenance_commands());
    return v;
}

}  // namespace comet::mqadmin
