#include <spdlog/spdlog.h>

#include <charconv>
#include <random>
#include <span>

#include "base/check.h"
#include "base/inline_string.h"
#include "broker/processor/broker_processors.h"
#include "broker/replication/escape_bridge.h"
#include "broker/replication/replication_service.h"
#include "broker/stats/broker_metrics.h"
#include "broker/stats/broker_stats_manager.h"
#include "broker/transaction/transactional_message_service.h"
#include "broker/transaction/transactional_message_util.h"
#include "protocol/message_decoder.h"
#include "protocol/pull_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"
#include "protocol/send_headers.h"

namespace comet::broker {

using protocol::RemotingCommand;
namespace RC = protocol::ResponseCode;
namespace Req = protocol::RequestCode;

namespace {

// Client version from which header maxReconsumeTimes is honoured (MQVersion V3_4_9).
constexpr int32_t kVersionHonoursMaxReconsume = 121;

int32_t random_queue(int32_t n) {
    thread_local std::mt19937 gen(std::random_device{}());
    if (n <= 1) {
        return 0;
    }
    return static_cast<int32_t>(gen() % static_cast<uint32_t>(n));
}

protocol::HostAddress host_of(const std::string& addr) {
    // Consecutive sends on a thread mostly come from one connection: its address is parsed once.
    struct Last {
        std::string text;
        protocol::HostAddress host = protocol::HostAddress::ipv4(127, 0, 0, 1, 0);
    };
    thread_local Last last;
    if (addr == last.text && !addr.empty()) {
        return last.host;
    }
    auto h = protocol::parse_host_address(addr);
    const protocol::HostAddress host =
        h.is_ok() ? h.value() : protocol::HostAddress::ipv4(127, 0, 0, 1, 0);
    last.text.assign(addr);
    last.host = host;
    return host;
}

// The store append of one message (body `body`) or of a batch (`msg.body` holds the §5.7
// entries), through the replication service when there is one (quorum decision, slave
// refusal, durability); straight to the store otherwise (processor unit tests). A single
// message and `body` are read only before this returns (MessageStorePort::put_message); a
// batch is moved from.
void put_through(BrokerContext& ctx, protocol::MessageExt& msg, std::string_view body, bool batch,
                 bool wait_store_msg_ok, ReplicationService::Done done) {
    // ReplicationService::put runs `append` (at most once) before it returns, so `msg` may be
    // captured by reference: no copy, no allocation on the send path.
    auto append = [&ctx, &msg, body, batch](ReplicationService::PutCallback cb) {
        if (batch) {
            ctx.store->put_messages(std::move(msg), std::move(cb));
        } else {
            ctx.store->put_message(msg, body, std::move(cb));
        }
    };
    static_assert(ReplicationService::PutFn::fits_inline<decltype(append)>(),
                  "the append must fit ReplicationService::PutFn inline (no allocation)");
    if (ctx.replication == nullptr) {
        append([done = std::move(done)](store::PutMessageResult r) {
            done(std::move(r), SendDurability{});
        });
        return;
    }
    ctx.replication->put(wait_store_msg_ok, append, std::move(done));
}

// MSG_REGION and TRACE_ON, which 4.9.8 puts on every send response.
void add_send_response_ext(const BrokerConfig& cfg, RemotingCommand* resp) {
    resp->set_ext("MSG_REGION", cfg.region_id);
    resp->set_ext("TRACE_ON", cfg.trace_on ? "true" : "false");
}

// Java TopicConfig#toString (perm as PermName#perm2String: "RW-").
std::string topic_config_to_string(const TopicConfig& t) {
    std::string perm = "---";
    if ((t.perm & kPermRead) != 0) {
        perm[0] = 'R';
    }
    if ((t.perm & kPermWrite) != 0) {
        perm[1] = 'W';
    }
    if ((t.perm & kPermInherit) != 0) {
        perm[2] = 'X';
    }
    return fmt::format(
        "TopicConfig [topicName={}, readQueueNums={}, writeQueueNums={}, perm={}, "
        "topicFilterType={}, topicSysFlag={}, order={}]",
        t.topic_name, t.read_queue_nums, t.write_queue_nums, perm,
        topic_filter_type_name(t.topic_filter_type), t.topic_sys_flag, t.order ? "true" : "false");
}

// The UNIQ_KEY a send's response echoes as transactionId, kept by the completion: a client's is
// 32 hex characters, held inline (issue 16).
using TransactionId = InlineString<48>;

// The decimal text of `v` in `buf`.
std::string_view decimal(int64_t v, char (&buf)[24]) {
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    return std::string_view(buf, static_cast<size_t>(r.ptr - buf));
}

// The message a send fills and puts, one per thread, refilled for every send so that its
// strings and properties keep their capacity (issue 16). The store reads it only before the
// put returns (MessageStorePort::put_message), so it is free again once put_through() has
// returned and no completion refers to it. A send that finds it taken (one started by a
// completion of another send on the same thread) gets a message of its own.
class SendMessageLease {
public:
    SendMessageLease() {
        Slot& s = slot();
        if (s.busy) {
            own_.emplace();
            msg_ = &*own_;
        } else {
            s.busy = true;
            s.msg.clear();
            msg_ = &s.msg;
        }
    }
    ~SendMessageLease() {
        if (!own_) {
            slot().busy = false;
        }
    }
    SendMessageLease(const SendMessageLease&) = delete;
    SendMessageLease& operator=(const SendMessageLease&) = delete;
    protocol::MessageExt& msg() { return *msg_; }

private:
    struct Slot {
        protocol::MessageExt msg;
        bool busy = false;
    };
    static Slot& slot() {
        thread_local Slot s;
        return s;
    }
    std::optional<protocol::MessageExt> own_;
    protocol::MessageExt* msg_ = nullptr;
};

// The command a send's completion answers with, one per thread: the fields are set afresh for
// every response, the strings keep their capacity (issue 16). Same content as
// make_response(req, code, remark); the caller assigns the send's extFields.
RemotingCommand& send_response_for(int32_t opaque, protocol::SerializeType serialize_type,
                                   int32_t code, std::optional<std::string> remark) {
    thread_local RemotingCommand resp;
    resp.reset_as_response(opaque, code, std::move(remark));
    resp.serialize_type = serialize_type;
    return resp;
}

// Answers a refused send. Every answer to a send carries MSG_REGION and TRACE_ON, refusals
// included (Java SendMessageProcessor adds both before its first check).
void refuse_send(const RemotingCommand& req, const BrokerConfig& cfg, const SendReply& reply,
                 Refusal refusal) {
    RemotingCommand resp = make_response(req, refusal.code, std::move(refusal.remark));
    add_send_response_ext(cfg, &resp);
    reply(resp);
}

// The group's max reconsume times, or the request's from clients that send it (V3_4_9).
int32_t max_reconsume_times(const SubscriptionGroupConfig& group_cfg, int32_t client_version,
                            const std::optional<int32_t>& from_header) {
    if (client_version >= kVersionHonoursMaxReconsume && from_header) {
        return *from_header;
    }
    return group_cfg.retry_max_times;
}

// Check: the broker takes sends now (startAcceptSendRequestTimeStamp, write permission) and
// `topic` is a name one may send to.
std::optional<Refusal> check_send_accepted(const BrokerConfig& cfg, const std::string& topic,
                                           int64_t now) {
    if (cfg.start_accept_send_request_time_stamp > now) {
        return Refusal{RC::kSystemError, fmt::format("broker unable to service, until {}",
                                                     cfg.start_accept_send_request_time_stamp)};
    }
    if (!perm_writeable(cfg.broker_permission)) {
        return Refusal{RC::kNoPermission,
                       fmt::format("the broker[{}] sending message is forbidden", cfg.broker_ip1)};
    }
    if (Status st = validate_topic(topic); !st.is_ok()) {
        return Refusal{RC::kSystemError, st.message()};  // 4.9.8 TopicValidator#validateTopic
    }
    if (is_not_allowed_send_topic(topic)) {
        return Refusal{RC::kNoPermission,
                       fmt::format("Sending message to topic[{}] is forbidden.", topic)};
    }
    return std::nullopt;
}

// Route: creates the topic of a send that has no config yet (a retry topic with one queue, any
// other from its default topic); null when it may not be created. May write topics.json.
std::optional<TopicConfig> create_send_topic(BrokerContext& ctx,
                                             const protocol::SendMessageRequestHeader& header) {
    int32_t sys_flag = 0;
    if (header.unit_mode.value_or(false)) {
        sys_flag = is_retry_topic(header.topic) ? 2 : 1;
    }
    TopicConfigManager::CreateResult created;
    if (is_retry_topic(header.topic)) {
        created =
            ctx.topics->create_in_send_back(header.topic, 1, kPermRead | kPermWrite, sys_flag);
    } else {
        created = ctx.topics->create_in_send(header.topic, header.default_topic,
                                             header.default_topic_queue_nums, sys_flag);
    }
    if (created.created && ctx.on_topics_changed) {
        ctx.on_topics_changed();
    }
    return created.config;
}

// Check: the queue exists and the topic may be written; the body is not empty and within
// maxMessageSize.
std::optional<Refusal> check_send_target(const RequestContext& rc,
                                         const protocol::SendMessageRequestHeader& header,
                                         const TopicConfig& topic_cfg, const BrokerConfig& cfg,
                                         std::string_view body) {
    const int32_t queue_limit = std::max(topic_cfg.write_queue_nums, topic_cfg.read_queue_nums);
    if (header.queue_id >= queue_limit) {
        // 4.9.8 AbstractSendMessageProcessor#msgCheck: SYSTEM_ERROR, naming the TopicConfig.
        return Refusal{
            RC::kSystemError,
            fmt::format("request queueId[{}] is illegal, {} Producer: {}", header.queue_id,
                        topic_config_to_string(topic_cfg), rc.remote_address)};
    }
    if (!perm_writeable(topic_cfg.perm)) {
        return Refusal{RC::kNoPermission,
                       fmt::format("the topic[{}] sending message is forbidden", header.topic)};
    }
    if (static_cast<int64_t>(body.size()) > cfg.max_message_size) {
        return Refusal{RC::kMessageIllegal,
                       fmt::format("the message body size {} is over the limit {}", body.size(),
                                   cfg.max_message_size)};
    }
    if (body.empty()) {
        return Refusal{RC::kMessageIllegal, "the message body is empty"};
    }
    return std::nullopt;
}

// Check and route a send before its message is built: the broker takes it, its topic exists
// (created on its first send when allowed; `topic_cfg` is set), its queue and body are valid.
std::optional<Refusal> check_send(BrokerContext& ctx, const RequestContext& rc,
                                  const protocol::SendMessageRequestHeader& header,
                                  const BrokerConfig& cfg, std::string_view body,
                                  std::optional<TopicConfig>* topic_cfg) {
    if (auto no = check_send_accepted(cfg, header.topic, ctx.clock->wall_millis())) {
        return no;
    }
    if (!*topic_cfg) {
        *topic_cfg = ctx.topics->select(header.topic);
    }
    if (!*topic_cfg) {
        *topic_cfg = create_send_topic(ctx, header);
        if (!*topic_cfg) {
            return Refusal{RC::kTopicNotExist,
                           fmt::format("topic[{}] not exist, apply first please! "
                                       "http://rocketmq.apache.org/docs/faq/",
                                       header.topic)};
        }
    }
    return check_send_target(rc, header, **topic_cfg, cfg, body);
}

// Decode: fills `msg` (this thread's reused one, cleared) from the send's header; the body stays
// in the request. A negative queueId picks a random writable queue.
void fill_send_message(BrokerContext& ctx, const RequestContext& rc,
                       const protocol::SendMessageRequestHeader& header,
                       const TopicConfig& topic_cfg, protocol::MessageExt* msg) {
    msg->topic = header.topic;
    msg->queue_id =
        header.queue_id < 0 ? random_queue(topic_cfg.write_queue_nums) : header.queue_id;
    msg->flag = header.flag;
    msg->sys_flag = header.sys_flag;
    if (topic_cfg.topic_filter_type == TopicFilterType::kMultiTag) {
        msg->sys_flag |= protocol::sysflag::kMultiTags;
    }
    msg->born_timestamp = header.born_timestamp;
    msg->born_host = host_of(rc.remote_address);
    msg->store_host = ctx.store->store_host();
    msg->reconsume_times = header.reconsume_times.value_or(0);
    if (header.properties) {
        msg->properties.assign_from_string(*header.properties);
    }
}

// Check: a batch is not for a retry topic and its body holds at least one §5.7 entry.
std::optional<Refusal> check_batch_send(const std::string& topic, std::string_view body) {
    if (is_retry_topic(topic)) {
        return Refusal{RC::kMessageIllegal, "batch request does not support retry group"};
    }
    thread_local std::vector<protocol::BatchEntry> entries;  // kept: no allocation per batch
    const Status st = protocol::decode_batch_body(body, &entries);
    if (!st.is_ok() || entries.empty()) {
        return Refusal{RC::kMessageIllegal,
                       st.is_ok() ? std::string("the batch is empty") : st.message()};
    }
    return std::nullopt;
}

// Route: a message for a retry topic past the group's max reconsume times (or, while the group
// holds orderly locks, at it) goes to the group's DLQ instead, never delayed.
std::optional<Refusal> route_retry_send(BrokerContext& ctx, int32_t client_version,
                                        const protocol::SendMessageRequestHeader& header,
                                        protocol::MessageExt* msg) {
    const std::string group = msg->topic.substr(kRetryGroupTopicPrefix.size());
    auto group_cfg = ctx.groups->find(group);
    if (!group_cfg) {
        return Refusal{RC::kSubscriptionGroupNotExist,
                       fmt::format("subscription group not exist, {}", group)};
    }
    const int32_t max_reconsume =
        max_reconsume_times(*group_cfg, client_version, header.max_reconsume_times);
    if (msg->reconsume_times > max_reconsume ||
        (msg->reconsume_times > 0 && ctx.locks->group_has_live_locks(group) &&
         msg->reconsume_times >= max_reconsume)) {
        const std::string dlq = dlq_topic(group);
        auto created = ctx.topics->create_in_send_back(dlq, 1, kPermRead | kPermWrite, 0);
        if (created.created && ctx.on_topics_changed) {
            ctx.on_topics_changed();
        }
        if (!created.config) {
            return Refusal{RC::kSystemError, fmt::format("topic[{}] not exist", dlq)};
        }
        msg->topic = dlq;
        msg->queue_id = random_queue(created.config->write_queue_nums);
        msg->set_property(protocol::property::kDelayTimeLevel, "-1");
    }
    return std::nullopt;
}

// Check and route the filled message: a batch's entries; a message for a retry topic past the
// group's max reconsume times goes to the DLQ.
std::optional<Refusal> check_send_message(BrokerContext& ctx, int32_t client_version,
                                          const protocol::SendMessageRequestHeader& header,
                                          bool batch, std::string_view body,
                                          protocol::MessageExt* msg) {
    if (batch) {
        if (auto no = check_batch_send(msg->topic, body)) {
            return no;
        }
    }
    if (is_retry_topic(msg->topic)) {
        return route_retry_send(ctx, client_version, header, msg);
    }
    return std::nullopt;
}

// Check: transactions (docs/transactions.md). Java decides on the TRAN_MSG property alone; a
// prepared or rollback sysFlag without it would be stored but never dispatched to a
// ConsumeQueue (lost), so Comet refuses that instead of answering SEND_OK.
std::optional<Refusal> check_transaction_send(const BrokerConfig& cfg,
                                              const protocol::MessageExt& msg, bool prepared,
                                              bool batch, bool transactions_enabled) {
    const int32_t tran_type = protocol::sysflag::transaction_value(msg.sys_flag);
    if (prepared && cfg.reject_transaction_message) {
        return Refusal{
            RC::kNoPermission,
            fmt::format("the broker[{}] sending transaction message is forbidden", cfg.broker_ip1)};
    }
    if (prepared && (batch || !transactions_enabled)) {
        return Refusal{RC::kNoPermission,
                       fmt::format("the broker[{}] sending transaction message is forbidden: {}",
                                   cfg.broker_ip1,
                                   batch ? "a batch cannot be transactional"
                                         : "transactional messages are not enabled")};
    }
    if (!prepared && (tran_type == protocol::sysflag::kTransactionPreparedType ||
                      tran_type == protocol::sysflag::kTransactionRollbackType)) {
        return Refusal{RC::kNoPermission,
                       fmt::format("the broker[{}] refuses a prepared/rollback sysFlag without "
                                   "TRAN_MSG=true: it would never be delivered",
                                   cfg.broker_ip1)};
    }
    return std::nullopt;
}

// Where a send is stored and what its answer names.
struct SendPlacement {
    bool wait_store_msg_ok = true;  // WAIT=false: no wait for flush or replication
    int32_t answered_queue = 0;     // the queue the client asked for (REAL_QID of a delayed one)
};

// Route: a single message leaves WAIT out of its stored properties and goes to its system topic
// when it is a half (no delay for halves) or delayed; a batch is stored as it came.
SendPlacement place_send_message(BrokerContext& ctx, const BrokerConfig& cfg, bool prepared,
                                 bool batch, protocol::MessageExt* msg) {
    SendPlacement placed;
    msg->set_property(protocol::property::kCluster, cfg.broker_cluster_name);
    // WAIT=false: the producer does not wait for flush or replication (Java isWaitStoreMsgOK).
    const std::string* wait_prop = msg->property(protocol::property::kWaitStoreMsgOk);
    placed.wait_store_msg_ok = wait_prop == nullptr || *wait_prop != "false";
    // A half or delayed message is stored in a system topic but the response names its real
    // queue (REAL_QID), as Java's does.
    placed.answered_queue = msg->queue_id;
    if (!batch) {
        msg->erase_property(protocol::property::kWaitStoreMsgOk);
        if (prepared) {
            // Java TransactionalMessageBridge#parseHalfMessageInner; no delay for halves.
            ctx.transactions->ensure_topics();
            to_half_message(msg);
        } else {
            apply_schedule_topic(ctx.delay_levels, msg);
        }
    }
    if (const std::string* rq = msg->property(protocol::property::kRealQueueId);
        rq != nullptr && msg->topic == kScheduleTopic) {
        placed.answered_queue = std::atoi(rq->c_str());
    }
    return placed;
}

// The UNIQ_KEY the response echoes as transactionId; nullopt when the message has none.
std::optional<TransactionId> transaction_id_of(const protocol::MessageExt& msg) {
    std::optional<TransactionId> id;
    if (const std::string* uk = msg.property(protocol::property::kUniqClientMessageIdKeyIdx)) {
        id.emplace(*uk);
    }
    return id;
}

// The topic's put counters, resolved before the append (per-thread cache) so that the
// completion only bumps atomics; a delayed or half message counts for its real topic.
struct SendMetrics {
    const BrokerMetrics::TopicIn* topic_in = nullptr;  // null: metrics off
    std::chrono::steady_clock::time_point started{};
};

SendMetrics start_send_metrics(BrokerContext& ctx, const protocol::MessageExt& msg, bool prepared) {
    SendMetrics m;
    if (ctx.metrics == nullptr) {
        return m;
    }
    m.started = std::chrono::steady_clock::now();
    using MT = BrokerMetrics::MessageType;
    const MT type = prepared                      ? MT::kTransaction
                    : msg.topic == kScheduleTopic ? MT::kDelay
                                                  : MT::kNormal;
    const std::string* real =
        type != MT::kNormal ? msg.property(protocol::property::kRealTopic) : nullptr;
    m.topic_in = ctx.metrics->topic_in(real != nullptr ? *real : msg.topic, type);
    return m;
}

// Complete: a send's completion, run once by the store / flush / HA with the put's result. It
// counts the put and answers the producer (not a oneway one) with the
// SendMessageResponseHeader. Of the request it keeps only what the response needs, and it fits
// ReplicationService::Done inline: no allocation per send.
struct SendCompletion {
    BrokerContext* ctx;
    int32_t opaque;
    protocol::SerializeType serialize_type;
    SendReply reply;
    std::optional<TransactionId> transaction_id;
    int32_t answered_queue;
    std::shared_ptr<const BrokerConfig> cfg;  // the snapshot the send was checked with
    bool oneway;
    SendMetrics metrics;
    int64_t body_bytes;

    void operator()(store::PutMessageResult r, SendDurability dur) {
        const std::string& region = cfg->region_id;
        const std::string_view trace_on = cfg->trace_on ? "true" : "false";
        PutResponse pr = map_put_status(r);
        count(r);
        if (oneway) {
            return;
        }
        RemotingCommand& resp =
            send_response_for(opaque, serialize_type, pr.code, std::move(pr.remark));
        if (store::is_stored(r.status)) {
            assign_stored_fields(r, dur, region, trace_on, &resp);
        } else {
            resp.ext_fields.assign_sorted({{"MSG_REGION", region}, {"TRACE_ON", trace_on}});
        }
        reply(resp);
    }

    void count(const store::PutMessageResult& r) const {
        if (ctx->metrics != nullptr) {
            ctx->metrics->on_put(metrics.topic_in, r.status, r.append.msg_num, body_bytes,
                                 std::chrono::steady_clock::now() - metrics.started);
        }
        if (store::is_stored(r.status)) {
            ctx->stats->put_messages.fetch_add(r.append.msg_num, std::memory_order_relaxed);
        } else {
            ctx->stats->put_failures.fetch_add(1, std::memory_order_relaxed);
        }
    }

    // SendMessageResponseHeader (msgId, queueId, queueOffset, transactionId = the UNIQ_KEY,
    // MSG_REGION, TRACE_ON) and the durability: replicas holding it when answered
    // (docs/replication.md). In key order, as ExtFields keeps them.
    void assign_stored_fields(const store::PutMessageResult& r, SendDurability dur,
                              std::string_view region, std::string_view trace_on,
                              RemotingCommand* resp) const {
        char queue_id[24];
        char queue_offset[24];
        char replicas[24];
        const std::string_view qid = decimal(answered_queue, queue_id);
        const std::string_view qoff = decimal(r.append.logics_offset.value(), queue_offset);
        const std::string_view reps = decimal(dur.replicas, replicas);
        std::pair<std::string_view, std::string_view> fields[8];
        size_t n = 0;
        fields[n++] = {"MSG_REGION", region};
        fields[n++] = {"TRACE_ON", trace_on};
        if (dur.degraded) {
            fields[n++] = {"degraded", "true"};
        }
        fields[n++] = {"msgId", r.append.msg_id};
        fields[n++] = {"queueId", qid};
        fields[n++] = {"queueOffset", qoff};
        fields[n++] = {"replicas", reps};
        if (transaction_id.has_value()) {
            fields[n++] = {"transactionId", transaction_id->view()};
        }
        resp->ext_fields.assign_sorted(std::span(fields, n));
    }
};
static_assert(ReplicationService::Done::fits_inline<SendCompletion>(),
              "the send completion must fit ReplicationService::Done inline (no allocation)");

// Where CONSUMER_SEND_MSG_BACK puts a message: the group's retry topic, or its DLQ.
struct SendBackTarget {
    std::string topic;
    int32_t queue_id = 0;
};

// Route: the group's retry topic (created on first use, writable) and a random queue of it.
std::optional<Refusal> retry_target(BrokerContext& ctx,
                                    const protocol::ConsumerSendMsgBackRequestHeader& header,
                                    const SubscriptionGroupConfig& group_cfg,
                                    SendBackTarget* target) {
    target->topic = retry_topic(header.group);
    target->queue_id = random_queue(group_cfg.retry_queue_nums);
    const int32_t topic_sys_flag = header.unit_mode.value_or(false) ? 2 : 0;
    auto created = ctx.topics->create_in_send_back(target->topic, group_cfg.retry_queue_nums,
                                                   kPermRead | kPermWrite, topic_sys_flag);
    if (created.created && ctx.on_topics_changed) {
        ctx.on_topics_changed();
    }
    if (!created.config) {
        return Refusal{RC::kSystemError, fmt::format("topic[{}] not exist", target->topic)};
    }
    if (!perm_writeable(created.config->perm)) {
        return Refusal{RC::kNoPermission,
                       fmt::format("the topic[{}] sending message is forbidden", target->topic)};
    }
    return std::nullopt;
}

// Route: past the group's max reconsume times, or asked with a negative delay level, the
// message goes to the group's DLQ (DELAY 0); otherwise it is delayed by the requested level
// (3 + its reconsume times when the client left it 0). Sets the DELAY property of `old`.
std::optional<Refusal> route_send_back(BrokerContext& ctx, int32_t client_version,
                                       const protocol::ConsumerSendMsgBackRequestHeader& header,
                                       const SubscriptionGroupConfig& group_cfg,
                                       protocol::MessageExt* old, SendBackTarget* target) {
    int32_t delay_level = header.delay_level;
    const int32_t max_reconsume =
        max_reconsume_times(group_cfg, client_version, header.max_reconsume_times);
    if (old->reconsume_times >= max_reconsume || delay_level < 0) {
        target->topic = dlq_topic(header.group);
        auto dlq = ctx.topics->create_in_send_back(target->topic, 1, kPermRead | kPermWrite, 0);
        if (dlq.created && ctx.on_topics_changed) {
            ctx.on_topics_changed();
        }
        if (!dlq.config) {
            return Refusal{RC::kSystemError, fmt::format("topic[{}] not exist", target->topic)};
        }
        target->queue_id = random_queue(dlq.config->write_queue_nums);
        old->set_property(protocol::property::kDelayTimeLevel, "0");
        spdlog::info("send back: message at {} of group {} goes to {} after {} reconsumes",
                     header.offset, header.group, target->topic, old->reconsume_times);
    } else {
        if (delay_level == 0) {
            delay_level = 3 + old->reconsume_times;
        }
        old->set_property(protocol::property::kDelayTimeLevel, std::to_string(delay_level));
    }
    return std::nullopt;
}

// The message a send-back stores: the original's body (moved out of `old`), flags and
// properties on the target, one more reconsume, ORIGIN_MESSAGE_ID kept from the first send back.
protocol::MessageExt send_back_message(BrokerContext& ctx,
                                       const protocol::ConsumerSendMsgBackRequestHeader& header,
                                       const SendBackTarget& target, protocol::MessageExt* old) {
    protocol::MessageExt msg;
    msg.topic = target.topic;
    msg.queue_id = target.queue_id;
    msg.body = std::move(old->body);
    msg.flag = old->flag;
    msg.sys_flag = old->sys_flag;
    msg.born_timestamp = old->born_timestamp;
    msg.born_host = old->born_host;
    msg.store_host = ctx.store->store_host();
    msg.reconsume_times = old->reconsume_times + 1;
    msg.properties = old->properties;
    if (msg.property(protocol::property::kOriginMessageId) == nullptr) {
        msg.set_property(protocol::property::kOriginMessageId,
                         header.origin_msg_id.value_or(old->msg_id));
    }
    return msg;
}

// Append (acting master, docs/replication.md): the group has no master, so the retry/DLQ
// message goes to another group's master with its DELAY property; that master schedules it.
// Blocks this executor thread for the route lookup and the send.
void escape_send_back(BrokerContext& ctx, const protocol::MessageExt& msg,
                      const RemotingCommand& req, const Reply& reply) {
    auto r = ctx.escape->escape(msg);
    if (!r.is_ok()) {
        reply_code(reply, req, RC::kSystemError,
                   fmt::format("PUT_TO_REMOTE_BROKER_FAIL: {}", r.status().message()));
    } else if (r.value().code == RC::kSuccess) {
        ctx.stats->put_messages.fetch_add(1, std::memory_order_relaxed);
        reply_code(reply, req, RC::kSuccess);
    } else {
        reply_code(reply, req, r.value().code, r.value().remark.value_or(""));
    }
}

// Append and complete: the send-back message goes to this store; the answer follows the put.
// `old` is the original message (it names the SNDBCK_PUT_NUMS key).
void store_send_back(BrokerContext& ctx, const std::string& group, const protocol::MessageExt& old,
                     protocol::MessageExt& msg, RemotingCommand req, const Reply& reply) {
    // SNDBCK_PUT_NUMS key (4.9.8): the original topic (RETRY_TOPIC) else the message's, @group.
    const std::string* retry_of = old.property(protocol::property::kRetryTopic);
    std::string sndbck_key = (retry_of != nullptr ? *retry_of : old.topic) + "@" + group;
    auto done = [&ctx, req = std::move(req), reply, sndbck_key = std::move(sndbck_key)](
                    store::PutMessageResult r, SendDurability dur) {
        (void)dur;
        if (r.status == store::PutMessageStatus::kPutOk) {
            ctx.stats->put_messages.fetch_add(1, std::memory_order_relaxed);
            if (ctx.stats_manager != nullptr) {
                ctx.stats_manager->add(kSndbckPutNums, sndbck_key, 1, 1);
            }
            reply_code(reply, req, RC::kSuccess);
            return;
        }
        if (!store::is_stored(r.status)) {
            const PutResponse pr = map_put_status(r);
            reply_code(reply, req, pr.code, pr.remark);
            return;
        }
        // Stored but not PUT_OK (a flush or replica wait that did not end well; in DLedger
        // mode not committed by a majority, so a leader change may cut it): RocketMQ answers
        // SYSTEM_ERROR naming the status, and the consumer sends the message back itself.
        std::string remark(store::put_message_status_name(r.status));
        if (!r.remark.empty()) {
            remark += ": " + r.remark;
        }
        reply_code(reply, req, RC::kSystemError, std::move(remark));
    };
    // Java sets WAIT=false on send-back messages: no flush or replica wait, except in DLedger
    // mode, where every put waits for its majority commit (ReplicationService::put).
    put_through(ctx, msg, msg.body, false, false, std::move(done));
}

}  // namespace

SendReply send_reply_of(Reply reply) {
    return [reply = std::move(reply)](RemotingCommand& resp) { reply(std::move(resp), {}); };
}

void SendMessageProcessor::process(const RequestContext& rc, RemotingCommand req,
                                   const Reply& reply) {
    if (req.code == Req::kConsumerSendMsgBack) {
        send_back(rc, std::move(req), reply);
    } else {
        send(rc, std::move(req), reply);
    }
}

bool SendMessageProcessor::try_send_inline(const RequestContext& rc, RemotingCommand& req,
                                           Reply&& reply) {
    SendReply send_reply = send_reply_of(std::move(reply));
    return try_send_inline(rc, req, send_reply);
}

bool SendMessageProcessor::try_send_inline(const RequestContext& rc, RemotingCommand& req,
                                           SendReply& reply) {
    if (req.code == Req::kConsumerSendMsgBack) {
        return false;
    }
    // The topic config when this send may run here; null: the executor's path.
    auto inline_topic = [&](const std::string& topic,
                            const std::optional<std::string>& props) -> std::optional<TopicConfig> {
        if (is_retry_topic(topic)) {
            return std::nullopt;
        }
        // A half message may create the transaction system topics (topics.json): executor.
        if (props && props->find(protocol::property::kTransactionPrepared) != std::string::npos) {
            return std::nullopt;
        }
        return ctx_.topics->select(topic);  // null: auto-creation persists topics.json
    };
    if (req.typed_send_v2 != nullptr) {
        // Fast path (decision 020): checked on the typed header, whose strings are then moved
        // out, not copied.
        auto topic_cfg = inline_topic(req.typed_send_v2->b, req.typed_send_v2->i);
        if (!topic_cfg) {
            return false;
        }
        auto header = protocol::take_send_message_header(req);
        COMET_CHECK(header.is_ok(), "a typed send header failed to convert");
        send_decoded(rc, header.value(), std::move(topic_cfg), std::move(req), std::move(reply));
        // Its strings serve the next header decoded on this thread (issue 16).
        protocol::recycle_send_header(std::move(header).value());
        return true;
    }
    auto header_r = protocol::decode_send_message_header(req);
    if (!header_r.is_ok()) {
        RemotingCommand resp = make_response(req, RC::kSystemError, header_r.status().message());
        reply(resp);
        return true;
    }
    auto topic_cfg = inline_topic(header_r.value().topic, header_r.value().properties);
    if (!topic_cfg) {
        return false;
    }
    send_decoded(rc, header_r.value(), std::move(topic_cfg), std::move(req), std::move(reply));
    return true;
}

void SendMessageProcessor::send(const RequestContext& rc, RemotingCommand req, const Reply& reply) {
    auto header_r = protocol::decode_send_message_header(req);
    if (!header_r.is_ok()) {
        reply_code(reply, req, RC::kSystemError, header_r.status().message());
        return;
    }
    send_decoded(rc, header_r.value(), std::nullopt, std::move(req), send_reply_of(reply));
}

void SendMessageProcessor::send_decoded(const RequestContext& rc,
                                        const protocol::SendMessageRequestHeader& header,
                                        std::optional<TopicConfig> topic_cfg, RemotingCommand req,
                                        SendReply reply) {
    // Read once per send, shared with the completion (no copy of the config per message).
    std::shared_ptr<const BrokerConfig> cfg_snapshot = ctx_.config->snapshot();
    const BrokerConfig& cfg = *cfg_snapshot;
    // The body may still be in the request's frame (RemotingCommand::borrowed_body): it is
    // read only before put_through() returns, and copied once, into the CommitLog.
    const std::string_view body = req.body_view();
    if (auto no = check_send(ctx_, rc, header, cfg, body, &topic_cfg)) {
        refuse_send(req, cfg, reply, std::move(*no));
        return;
    }
    SendMessageLease lease;
    protocol::MessageExt& msg = lease.msg();
    fill_send_message(ctx_, rc, header, *topic_cfg, &msg);
    const bool batch = protocol::is_batch_send(req, header);
    if (auto no = check_send_message(ctx_, req.version, header, batch, body, &msg)) {
        refuse_send(req, cfg, reply, std::move(*no));
        return;
    }
    const bool prepared = is_transaction_prepared(msg);
    if (auto no = check_transaction_send(cfg, msg, prepared, batch, ctx_.transactions != nullptr)) {
        refuse_send(req, cfg, reply, std::move(*no));
        return;
    }
    const SendPlacement placed = place_send_message(ctx_, cfg, prepared, batch, &msg);

    SendCompletion done{.ctx = &ctx_,
                        .opaque = req.opaque,
                        .serialize_type = req.serialize_type,
                        .reply = std::move(reply),
                        .transaction_id = transaction_id_of(msg),
                        .answered_queue = placed.answered_queue,
                        .cfg = std::move(cfg_snapshot),
                        .oneway = req.is_oneway(),
                        .metrics = start_send_metrics(ctx_, msg, prepared),
                        .body_bytes = static_cast<int64_t>(body.size())};
    if (batch) {
        msg.body.assign(body);  // a batch put consumes its message (MessageStorePort::put_messages)
    }
    put_through(ctx_, msg, body, batch, placed.wait_store_msg_ok, std::move(done));
}

void SendMessageProcessor::send_back(const RequestContext& rc, RemotingCommand req,
                                     const Reply& reply) {
    auto header_r = protocol::ConsumerSendMsgBackRequestHeader::from_ext(req);
    if (!header_r.is_ok()) {
        reply_code(reply, req, RC::kSystemError, header_r.status().message());
        return;
    }
    const auto header = std::move(header_r).value();
    const std::shared_ptr<const BrokerConfig> cfg_snapshot = ctx_.config->snapshot();
    const BrokerConfig& cfg = *cfg_snapshot;
    auto group_cfg = ctx_.groups->find(header.group);
    if (!group_cfg) {
        reply_code(reply, req, RC::kSubscriptionGroupNotExist,
                   fmt::format("subscription group not exist, {}", header.group));
        return;
    }
    if (!perm_writeable(cfg.broker_permission)) {
        reply_code(reply, req, RC::kNoPermission,
                   fmt::format("the broker[{}] sending message is forbidden", cfg.broker_ip1));
        return;
    }
    if (group_cfg->retry_queue_nums <= 0) {
        reply_code(reply, req, RC::kSuccess);
        return;
    }
    SendBackTarget target;
    if (auto no = retry_target(ctx_, header, *group_cfg, &target)) {
        reply_refusal(reply, req, std::move(*no));
        return;
    }
    auto original = ctx_.store->look_message_by_offset(header.offset);
    if (!original) {
        reply_code(reply, req, RC::kSystemError,
                   fmt::format("look message by offset failed, {}", header.offset));
        return;
    }
    protocol::MessageExt& old = *original;
    if (old.property(protocol::property::kRetryTopic) == nullptr) {
        old.set_property(protocol::property::kRetryTopic, old.topic);
    }
    old.set_property(protocol::property::kWaitStoreMsgOk, "false");
    if (auto no = route_send_back(ctx_, req.version, header, *group_cfg, &old, &target)) {
        reply_refusal(reply, req, std::move(*no));
        return;
    }
    protocol::MessageExt msg = send_back_message(ctx_, header, target, &old);
    if (cfg.enable_remote_escape && ctx_.escape != nullptr && ctx_.is_acting_master &&
        ctx_.is_acting_master()) {
        escape_send_back(ctx_, msg, req, reply);
        return;
    }
    apply_schedule_topic(ctx_.delay_levels, &msg);
    (void)rc;
    store_send_back(ctx_, header.group, old, msg, std::move(req), reply);
}

}  // namespace comet::broker
