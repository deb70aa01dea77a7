#include "client/push_consumer.h"

#include <algorithm>
#include <set>

#include <spdlog/spdlog.h>

#include "base/bytes.h"
#include "base/check.h"
#include "client/consumer_api.h"
#include "client/topic_publish_info.h"
#include "protocol/admin_bodies.h"
#include "protocol/json_body.h"
#include "protocol/message_decoder.h"
#include "protocol/pull_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::client {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using namespace std::chrono_literals;

// The records of a pull body (docs/formats: TOTALSIZE, MAGICCODE, BODYCRC, QUEUEID, FLAG,
// QUEUEOFFSET, ...): their count and first/last queue offsets, without decoding them. False
// when the TOTALSIZE chain does not end exactly at the body's end or a magic code is wrong
// (the decoder would refuse the body).
bool DefaultMqPushConsumer::scan_records(std::string_view body, ProcessQueue::RawChunk* out) {
    constexpr size_t kQueueOffsetAt = protocol::kMsgQueueOffsetPos;
    constexpr size_t kMinRecord = kQueueOffsetAt + 8;
    const auto* bytes = reinterpret_cast<const uint8_t*>(body.data());
    size_t at = 0;
    size_t n = 0;
    while (at < body.size()) {
        if (body.size() - at < kMinRecord) {
            return false;
        }
        const uint64_t total = get_be32(bytes + at);
        const auto magic = static_cast<int32_t>(get_be32(bytes + at + 4));
        if (total < kMinRecord || total > body.size() - at ||
            (magic != protocol::kMessageMagicCodeV1 && magic != protocol::kMessageMagicCodeV2)) {
            return false;
        }
        const auto offset = static_cast<int64_t>(get_be64(bytes + at + kQueueOffsetAt));
        if (n == 0) {
            out->first_offset = offset;
        }
        out->last_offset = offset;
        ++n;
        at += total;
    }
    out->records = n;
    return n > 0;
}

DefaultMqPushConsumer::DefaultMqPushConsumer(PushConsumerConfig config)
    : config_(std::move(config)),
      instance_(std::make_unique<MqClientInstance>(config_.client)),
      consume_pool_(std::make_shared<net::ThreadPoolExecutor>(
          "consume", std::max<size_t>(1, config_.consume_threads), 1000000)) {}

DefaultMqPushConsumer::~DefaultMqPushConsumer() { shutdown(); }

void DefaultMqPushConsumer::subscribe(const std::string& topic, const std::string& expression) {
    subscriptions_[topic] = build_subscription(topic, expression, 0);
}

void DefaultMqPushConsumer::subscribe(const std::string& topic, const MessageSelector& selector) {
    subscriptions_[topic] = build_subscription(topic, selector, 0);
}

void DefaultMqPushConsumer::register_listener(MessageListenerConcurrently listener) {
    listener_ = std::move(listener);
}

void DefaultMqPushConsumer::register_listener_orderly(MessageListenerOrderly listener) {
    orderly_listener_ = std::move(listener);
}

const protocol::SubscriptionData* DefaultMqPushConsumer::subscription(
    const std::string& topic) const {
    auto it = subscriptions_.find(topic);
    return it == subscriptions_.end() ? nullptr : &it->second;
}

std::vector<protocol::ConsumerData> DefaultMqPushConsumer::consumer_data() const {
    protocol::ConsumerData cd;
    cd.group_name = config_.group;
    cd.consume_type = "CONSUME_PASSIVELY";
    cd.message_model = "CLUSTERING";
    cd.consume_from_where = std::string(consume_from_where_name(config_.consume_from_where));
    for (const auto& [t, sub] : subscriptions_) {
        cd.subscription_data_set.push_back(sub);
    }
    return {cd};
}

Status DefaultMqPushConsumer::start() {
    if (!listener_ && !orderly_listener_) {
        return Status::error(Errc::kFailedPrecondition, "no message listener registered");
    }
    if (subscriptions_.empty()) {
        return Status::error(Errc::kFailedPrecondition, "no subscription");
    }
    if (started_.exchange(true)) {
        return Status::ok();
    }
    const int64_t version = SystemClock::instance().wall_millis();
    for (auto& [t, sub] : subscriptions_) {
        sub.sub_version = version;
    }
    if (!orderly_listener_) {
        // Clustering mode also consumes the group's retry topic (Java copySubscription).
        const std::string rt = retry_topic(config_.group);
        subscriptions_[rt] = build_subscription(rt, "*", version);
    }
    start_timestamp_ = version;
    instance_->set_consumer_data_source([this] { return consumer_data(); });
    register_admin_handlers();
    instance_->register_processor(Req::kNotifyConsumerIdsChanged,
                                  [this](protocol::RemotingCommand req) {
                                      rebalance_soon();
                                      return protocol::RemotingCommand::response_to(
                                          req, RC::kSuccess);
                                  });
    COMET_RETURN_IF_ERROR(instance_->start());
    for (const auto& [t, sub] : subscriptions_) {
        auto r = instance_->route(t);
        if (!r.is_ok() && t.rfind(kRetryGroupTopicPrefix, 0) != 0) {
            return Status::error(r.status().code(), "consumer {} cannot subscribe to {}: {}",
                                 config_.group, t, r.status().message());
        }
    }
    for (const auto& [t, sub] : subscriptions_) {
        COMET_RETURN_IF_ERROR(check_client_in_broker(*instance_, config_.group, sub));
    }
    instance_->send_heartbeat_to_all();
    auto& sched = instance_->scheduler();
    sched.schedule_every(0ms, config_.rebalance_interval, [this] { do_rebalance(); });
    sched.schedule_every(config_.client.persist_consumer_offset_interval,
                         config_.client.persist_consumer_offset_interval,
                         [this] { persist_offsets(true); });
    sched.schedule_every(1s, 1s, [this] { stats_.sample(SystemClock::instance().wall_millis()); });
    return Status::ok();
}

void DefaultMqPushConsumer::register_admin_handlers() {
    using protocol::RemotingCommand;
    // Java ClientRemotingProcessor#resetOffset: a one-way notice; ResetOffsetBody's
    // offsetTable is {MessageQueue: offset} (or, for a C++ admin request, a list of
    // {brokerName, offset, queueId, topic}).
    instance_->register_processor(Req::kResetConsumerClientOffset, [this](RemotingCommand req) {
        const std::string* topic = req.ext("topic");
        const std::string* group = req.ext("group");
        if (topic == nullptr || group == nullptr || *group != config_.group) {
            return RemotingCommand::response_to(req, RC::kSystemError, "not this group");
        }
        auto table = decode_reset_offset_body(req.body);
        if (!table.is_ok()) {
            spdlog::warn("RESET_CONSUMER_CLIENT_OFFSET of {} for {}: bad body: {}", *topic,
                         *group, table.status().to_string());
            return RemotingCommand::response_to(req, RC::kSystemError, "bad ResetOffsetBody");
        }
        reset_offset(*topic, *table);
        return RemotingCommand::response_to(req, RC::kSuccess);
    });
    // Java getConsumeStatus: GetConsumerStatusBody {consumerTable, messageQueueTable}.
    instance_->register_processor(Req::kGetConsumerStatusFromClient, [this](RemotingCommand req) {
        const std::string* topic = req.ext("topic");
        protocol::JsonWriter w;
        w.begin_object().key("consumerTable").begin_object().end_object();
        w.key("messageQueueTable").begin_object();
        if (topic != nullptr) {
            for (const auto& [mq, off] : offsets_of(*topic)) {
                w.raw_key(mq.encode()).value(off);
            }
        }
        w.end_object().end_object();
        RemotingCommand resp = RemotingCommand::response_to(req, RC::kSuccess);
        resp.body = w.take();
        return resp;
    });
    instance_->register_processor(Req::kGetConsumerRunningInfo, [this](RemotingCommand req) {
        const std::string* group = req.ext("consumerGroup");
        if (group != nullptr && *group != config_.group) {
            return RemotingCommand::response_to(
                req, RC::kSystemError,
                fmt::format("The Consumer Group <{}> not exist in this consumer", *group));
        }
        RemotingCommand resp = RemotingCommand::response_to(req, RC::kSuccess);
        resp.body = running_info_json();
        return resp;
    });
    instance_->register_processor(Req::kConsumeMessageDirectly, [this](RemotingCommand req) {
        auto msg = protocol::decode_message(req.body);
        if (!msg.is_ok()) {
            return RemotingCommand::response_to(
                req, RC::kSystemError,
                "consumeMessageDirectly: cannot decode the message: " + msg.status().to_string());
        }
        const std::string* broker = req.ext("brokerName");
        RemotingCommand resp = RemotingCommand::response_to(req, RC::kSuccess);
        resp.body = consume_directly_json(std::move(msg).value(), broker ? *broker : "");
        return resp;
    });
}

Result<std::map<MessageQueue, int64_t>> decode_reset_offset_body(std::string_view body) {
    COMET_ASSIGN_OR_RETURN(auto doc, protocol::parse_json_body(body));
    COMET_RETURN_IF_ERROR(protocol::expect_object(doc, "ResetOffsetBody"));
    std::map<MessageQueue, int64_t> out;
    const protocol::JsonValue* t = protocol::find_member(doc, "offsetTable");
    if (t == nullptr) {
        return out;
    }
    if (t->IsArray()) {
        for (const auto& e : t->GetArray()) {
            COMET_ASSIGN_OR_RETURN(MessageQueue mq, MessageQueue::from_json(e));
            int64_t off = 0;
            COMET_RETURN_IF_ERROR(protocol::read_int64(e, "offset", &off));
            out[mq] = off;
        }
        return out;
    }
    COMET_RETURN_IF_ERROR(protocol::expect_object(*t, "offsetTable"));
    for (const auto& m : t->GetObject()) {
        COMET_ASSIGN_OR_RETURN(
            MessageQueue mq,
            MessageQueue::decode(std::string_view(m.name.GetString(), m.name.GetStringLength())));
        COMET_ASSIGN_OR_RETURN(int64_t off, protocol::json_to_int64(m.value, "offsetTable offset"));
        out[mq] = off;
    }
    return out;
}

void DefaultMqPushConsumer::reset_offset(const std::string& topic,
                                         const std::map<MessageQueue, int64_t>& table) {
    if (stopping_) {
        return;
    }
    // Java MQClientInstance#resetOffset: the process queues of the topic are dropped (their
    // pull chains and drains stop, and their old offsets are never persisted), the new offsets
    // are stored, and pulling resumes from them.
    std::vector<PqPtr> dropped;
    {
        MutexLock lock(mu_);
        for (auto it = queues_.begin(); it != queues_.end();) {
            if (it->first.topic == topic && table.count(it->first) != 0) {
                it->second->dropped = true;
                dropped.push_back(it->second);
                it = queues_.erase(it);
            } else {
                ++it;
            }
        }
    }
    std::vector<PqPtr> resumed;
    for (const auto& old : dropped) {
        const int64_t off = table.at(old->mq);
        Status st = update_consumer_offset(*instance_, config_.group, old->mq, off, false);
        if (!st.is_ok()) {
            spdlog::warn("reset offset of {}:{}:{} to {}: {}", old->mq.topic, old->mq.broker_name,
                         old->mq.queue_id, off, st.to_string());
        }
        auto pq = std::make_shared<ProcessQueue>(old->mq, SystemClock::instance().wall_millis());
        pq->stats = old->stats;
        pq->next_offset = off;
        pq->consumed_offset = off;
        pq->locked = old->locked.load();
        {
            MutexLock lock(mu_);
            if (stopping_) {
                return;
            }
            // A rebalance may have re-added the queue meanwhile: keep only this one.
            if (auto it = queues_.find(pq->mq); it != queues_.end()) {
                it->second->dropped = true;
            }
            queues_[pq->mq] = pq;
        }
        resumed.push_back(pq);
    }
    spdlog::info("consumer {} reset {} queue(s) of {}", config_.group, resumed.size(), topic);
    for (const auto& pq : resumed) {
        instance_->scheduler().schedule_after(0ms, [this, pq] { pull(pq); });
    }
}

std::map<MessageQueue, int64_t> DefaultMqPushConsumer::offsets_of(const std::string& topic) const {
    std::map<MessageQueue, int64_t> out;
    MutexLock lock(mu_);
    for (const auto& [mq, pq] : queues_) {
        if (mq.topic == topic) {
            out[mq] = pq->consumed_offset.load();
        }
    }
    return out;
}

std::string DefaultMqPushConsumer::running_info_json() const {
    // ConsumerRunningInfo, members in fastjson's (alphabetical) order; jstack is null here.
    protocol::JsonWriter w;
    w.begin_object().key("mqTable").begin_object();
    {
        MutexLock lock(mu_);
        for (const auto& [mq, pq] : queues_) {
            write_process_queue_info(w, mq, *pq, static_cast<bool>(orderly_listener_));
        }
    }
    w.end_object();
    write_running_properties(w);
    write_status_table(w);
    w.key("subscriptionSet").begin_array();
    for (const auto& [t, sub] : subscriptions_) {
        sub.write_json(w);
    }
    w.end_array().end_object();
    return w.take();
}

void DefaultMqPushConsumer::write_process_queue_info(protocol::JsonWriter& w,
                                                     const MessageQueue& mq, ProcessQueue& pq,
                                                     bool orderly) {
    // Java ProcessQueue#fillProcessQueueInfo: cachedMsg* describe msgTreeMap (what is pulled and
    // not yet consumed), transactionMsg* the batch an orderly consumer took out of it
    // (consumingMsgOrderlyTreeMap); a concurrent consumer keeps its batch in msgTreeMap.
    struct Range {
        int64_t min = 0, max = 0, count = 0;
        void see(int64_t first, int64_t last, int64_t n) {
            if (count == 0) {
                min = first;
            }
            max = last;
            count += n;
        }
    };
    Range cached;
    Range taken;
    int64_t cached_bytes = 0;
    {
        MutexLock plock(pq.mu);
        // In queue order: the batch being consumed, `pending`, then raw chunks.
        if (pq.in_consume > 0) {
            (orderly ? taken : cached)
                .see(pq.in_consume_first, pq.in_consume_last, static_cast<int64_t>(pq.in_consume));
        }
        if (!pq.pending.empty()) {
            cached.see(pq.pending.front().queue_offset, pq.pending.back().queue_offset,
                       static_cast<int64_t>(pq.pending.size()));
            for (const auto& m : pq.pending) {
                cached_bytes += static_cast<int64_t>(m.body.size());
            }
        }
        for (const auto& c : pq.raw) {
            cached.see(c.first_offset, c.last_offset, static_cast<int64_t>(c.records));
            cached_bytes += static_cast<int64_t>(c.body.size());  // records, headers included
        }
    }
    // ProcessQueueInfo. tryUnlockTimes stays 0: this client never defers an orderly unlock.
    w.raw_key(mq.encode())
        .begin_object()
        .member("cachedMsgCount", static_cast<int32_t>(cached.count))
        .member("cachedMsgMaxOffset", cached.max)
        .member("cachedMsgMinOffset", cached.min)
        .member("cachedMsgSizeInMiB", static_cast<int32_t>(cached_bytes / (1024 * 1024)))
        .member("commitOffset", pq.consumed_offset.load())
        .member("droped", pq.dropped.load())
        .member("lastConsumeTimestamp", pq.last_consume_ms.load())
        .member("lastLockTimestamp", pq.last_lock_ms.load())
        .member("lastPullTimestamp", pq.last_pull_ms.load())
        .member("locked", pq.locked.load())
        .member("transactionMsgCount", static_cast<int32_t>(taken.count))
        .member("transactionMsgMaxOffset", taken.max)
        .member("transactionMsgMinOffset", taken.min)
        .member("tryUnlockTimes", int64_t{0})
        .end_object();
}

void DefaultMqPushConsumer::write_running_properties(protocol::JsonWriter& w) const {
    // Properties (Java: the consumer's settings plus the PROP_* entries); values are strings.
    std::map<std::string, std::string> props = {
        {"PROP_CLIENT_VERSION", "V4_9_8"},
        {"PROP_CONSUMEORDERLY", orderly_listener_ ? "true" : "false"},
        {"PROP_CONSUMER_START_TIMESTAMP", std::to_string(start_timestamp_)},
        {"PROP_CONSUME_TYPE", "CONSUME_PASSIVELY"},
        {"PROP_NAMESERVER_ADDR", config_.client.namesrv_addr},
        {"PROP_THREADPOOL_CORE_SIZE", std::to_string(std::max<size_t>(1, config_.consume_threads))},
        {"consumeFromWhere", std::string(consume_from_where_name(config_.consume_from_where))},
        {"consumeMessageBatchMaxSize", std::to_string(config_.consume_message_batch_max_size)},
        {"consumeThreadMax", std::to_string(std::max<size_t>(1, config_.consume_threads))},
        {"consumeThreadMin", std::to_string(std::max<size_t>(1, config_.consume_threads))},
        {"consumerGroup", config_.group},
        {"maxReconsumeTimes", std::to_string(config_.max_reconsume_times)},
        {"messageModel", "CLUSTERING"},
        {"pullBatchSize", std::to_string(config_.pull_batch_size)},
        {"pullThresholdForQueue", std::to_string(config_.pull_threshold_for_queue)},
    };
    w.key("properties").begin_object();
    for (const auto& [k, v] : props) {
        w.member(k, v);
    }
    w.end_object();
}

void DefaultMqPushConsumer::write_status_table(protocol::JsonWriter& w) const {
    // statusTable: one ConsumeStatus per subscribed topic (ConsumerStats; zeros for a topic
    // without an assigned queue, as Java).
    w.key("statusTable").begin_object();
    for (const auto& [t, sub] : subscriptions_) {
        const ConsumerStats::Figures f = stats_.status(t);
        w.key(t)
            .begin_object()
            .member("consumeFailedMsgs", f.consume_failed_msgs)
            .member("consumeFailedTPS", f.consume_failed_tps)
            .member("consumeOKTPS", f.consume_ok_tps)
            .member("consumeRT", f.consume_rt)
            .member("pullRT", f.pull_rt)
            .member("pullTPS", f.pull_tps)
            .end_object();
    }
    w.end_object();
}

std::string DefaultMqPushConsumer::consume_directly_json(MessageExt msg,
                                                         const std::string& broker_name) {
    // Java resetRetryAndNamespace: a message of the group's retry topic is shown under its
    // original topic.
    const std::string rt = retry_topic(config_.group);
    if (const std::string* orig = msg.property(protocol::property::kRetryTopic);
        orig != nullptr && msg.topic == rt) {
        msg.topic = *orig;
    }
    MessageQueue mq;
    mq.topic = msg.topic;
    mq.broker_name = broker_name;
    mq.queue_id = msg.queue_id;
    const int64_t begin = SystemClock::instance().wall_millis();
    std::string result;
    std::optional<std::string> remark;
    const bool orderly = static_cast<bool>(orderly_listener_);
    try {
        if (orderly) {
            result = orderly_listener_({msg}, mq) == ConsumeOrderlyStatus::kSuccess ? "CR_SUCCESS"
                                                                                   : "CR_LATER";
        } else {
            result = listener_({msg}, mq) == ConsumeStatus::kConsumeSuccess ? "CR_SUCCESS"
                                                                           : "CR_LATER";
        }
    } catch (const std::exception& e) {
        result = "CR_THROW_EXCEPTION";
        remark = e.what();
    }
    const int64_t spent = SystemClock::instance().wall_millis() - begin;
    protocol::JsonWriter w;
    w.begin_object()
        .member("autoCommit", true)
        .member("consumeResult", result)
        .member("order", orderly);
    if (remark) {
        w.member("remark", *remark);
    }
    w.member("spentTimeMills", spent).end_object();
    return w.take();
}

void DefaultMqPushConsumer::shutdown() {
    if (!started_.load() || stopping_.exchange(true)) {
        return;
    }
    std::vector<PqPtr> pqs;
    {
        MutexLock lock(mu_);
        for (auto& [mq, pq] : queues_) {
            pqs.push_back(pq);
        }
    }
    for (auto& pq : pqs) {
        pq->dropped = true;
    }
    consume_pool_->shutdown();
    persist_offsets(false);
    if (orderly_listener_) {
        std::map<std::string, std::set<MessageQueue>> by_broker;
        for (auto& pq : pqs) {
            by_broker[pq->mq.broker_name].insert(pq->mq);
        }
        for (auto& [b, mqs] : by_broker) {
            (void)unlock_batch_mq(*instance_, config_.group, b, mqs);
        }
    }
    for (const auto& addr : instance_->all_broker_addrs()) {
        protocol::UnregisterClientRequestHeader h;
        h.client_id = instance_->client_id();
        h.consumer_group = config_.group;
        auto req = protocol::RemotingCommand::request(Req::kUnregisterClient);
        h.to_ext(req);
        (void)instance_->invoke(addr, std::move(req));
    }
    instance_->shutdown();
}

std::vector<MessageQueue> DefaultMqPushConsumer::assigned_queues() const {
    MutexLock lock(mu_);
    std::vector<MessageQueue> out;
    for (const auto& [mq, pq] : queues_) {
        out.push_back(mq);
    }
    return out;
}

void DefaultMqPushConsumer::rebalance_soon() {
    instance_->scheduler().schedule_after(0ms, [this] { do_rebalance(); });
}

void DefaultMqPushConsumer::do_rebalance() {
    if (stopping_) {
        return;
    }
    for (const auto& [topic, sub] : subscriptions_) {
        rebalance_topic(topic);
    }
}

void DefaultMqPushConsumer::rebalance_topic(const std::string& topic) {
    auto route = instance_->route(topic);
    if (!route.is_ok()) {
        return;  // e.g. the retry topic before the broker registered it
    }
    std::vector<MessageQueue> all = TopicPublishInfo::subscribe_queues(topic, *route);
    auto cids = consumer_id_list(*instance_, topic, config_.group);
    if (!cids.is_ok()) {
        spdlog::warn("rebalance of {} for {}: {}", topic, config_.group,
                     cids.status().to_string());
        return;
    }
    std::vector<std::string> ids = *cids;
    std::sort(ids.begin(), ids.end());
    const auto mine = allocate_averagely(instance_->client_id(), all, ids);
    const std::set<MessageQueue> want(mine.begin(), mine.end());

    std::vector<PqPtr> removed;
    std::vector<MessageQueue> added;
    {
        MutexLock lock(mu_);
        for (auto it = queues_.begin(); it != queues_.end();) {
            if (it->first.topic == topic && want.count(it->first) == 0) {
                removed.push_back(it->second);
                it = queues_.erase(it);
            } else {
                ++it;
            }
        }
        for (const auto& mq : want) {
            if (queues_.count(mq) == 0) {
                added.push_back(mq);
            }
        }
    }
    for (auto& pq : removed) {
        remove_queue(pq);
    }
    std::vector<PqPtr> started;
    for (const auto& mq : added) {
        auto from = compute_pull_from(mq);
        if (!from.is_ok()) {
            spdlog::warn("cannot compute the start offset of {}:{}:{}: {}", mq.topic,
                         mq.broker_name, mq.queue_id, from.status().to_string());
            continue;
        }
        auto pq = std::make_shared<ProcessQueue>(mq, SystemClock::instance().wall_millis());
        pq->stats = &stats_.counters(mq.topic);
        pq->next_offset = *from;
        pq->consumed_offset = *from;
        {
            MutexLock lock(mu_);
            if (stopping_) {
                return;
            }
            queues_[mq] = pq;
        }
        started.push_back(pq);
    }
    if (orderly_listener_) {
        std::vector<PqPtr> all_pqs;
        {
            MutexLock lock(mu_);
            for (auto& [mq, pq] : queues_) {
                if (mq.topic == topic) {
                    all_pqs.push_back(pq);
                }
            }
        }
        lock_queues(all_pqs);
    }
    for (auto& pq : started) {
        pull(pq);
    }
}

void DefaultMqPushConsumer::lock_queues(const std::vector<PqPtr>& pqs) {
    std::map<std::string, std::set<MessageQueue>> by_broker;
    for (const auto& pq : pqs) {
        by_broker[pq->mq.broker_name].insert(pq->mq);
    }
    for (const auto& [broker, mqs] : by_broker) {
        auto locked = lock_batch_mq(*instance_, config_.group, broker, mqs);
        for (const auto& pq : pqs) {
            if (pq->mq.broker_name == broker) {
                pq->locked = locked.is_ok() && locked->count(pq->mq) != 0;
                if (pq->locked) {
                    pq->last_lock_ms = SystemClock::instance().wall_millis();
                }
            }
        }
    }
}

Result<int64_t> DefaultMqPushConsumer::compute_pull_from(const MessageQueue& mq) {
    auto stored = query_consumer_offset(*instance_, config_.group, mq);
    if (stored.is_ok() && *stored >= 0) {
        return *stored;
    }
    if (!stored.is_ok() && stored.status().code() != Errc::kNotFound) {
        return stored.status();
    }
    const bool retry = mq.topic.rfind(kRetryGroupTopicPrefix, 0) == 0;
    switch (config_.consume_from_where) {
        case ConsumeFromWhere::kFirstOffset: return int64_t{0};
        case ConsumeFromWhere::kLastOffset:
            return retry ? Result<int64_t>(int64_t{0}) : max_offset(*instance_, mq);
        case ConsumeFromWhere::kTimestamp:
            return retry ? Result<int64_t>(int64_t{0})
                         : search_offset(*instance_, mq, config_.consume_timestamp);
    }
    return int64_t{0};
}

void DefaultMqPushConsumer::remove_queue(const PqPtr& pq) {
    pq->dropped = true;
    const int64_t off = pq->consumed_offset.load();
    if (off >= 0) {
        (void)update_consumer_offset(*instance_, config_.group, pq->mq, off, true);
    }
    if (orderly_listener_) {
        (void)unlock_batch_mq(*instance_, config_.group, pq->mq.broker_name, {pq->mq});
    }
}

void DefaultMqPushConsumer::pull_later(const PqPtr& pq, Duration delay) {
    instance_->scheduler().schedule_after(delay, [this, pq] { pull(pq); });
}

void DefaultMqPushConsumer::pull(const PqPtr& pq) {
    if (stopping_ || pq->dropped) {
        return;
    }
    if (orderly_listener_ && !pq->locked) {
        // Try to (re)lock; the pull chain resumes once the broker grants the lock.
        instance_->scheduler().schedule_after(config_.suspend_current_queue_time, [this, pq] {
            if (stopping_ || pq->dropped) {
                return;
            }
            lock_queues({pq});
            pull(pq);
        });
        return;
    }
    const protocol::SubscriptionData* sub = subscription(pq->mq.topic);
    COMET_CHECK(sub != nullptr, "pulling unsubscribed topic {}", pq->mq.topic);
    pq->last_pull_ms = SystemClock::instance().wall_millis();
    protocol::PullMessageRequestHeader h;
    h.consumer_group = config_.group;
    h.topic = pq->mq.topic;
    h.queue_id = pq->mq.queue_id;
    h.queue_offset = pq->next_offset;
    h.max_msg_nums = config_.pull_batch_size;
    const bool tag_type = sub->expression_type.empty() || sub->expression_type == "TAG";
    // A SQL92 subscription is not posted with the pull (Java postSubscriptionWhenPull=false):
    // the broker uses the one this client's heartbeats registered.
    h.sys_flag = protocol::kPullFlagSuspend | (tag_type ? protocol::kPullFlagSubscription : 0);
    const int64_t commit = pq->consumed_offset.load();
    if (commit > 0) {
        h.sys_flag |= protocol::kPullFlagCommitOffset;
        h.commit_offset = commit;
    }
    h.suspend_timeout_millis = config_.broker_suspend_max.count();
    if (tag_type) {
        h.subscription = sub->sub_string;
    }
    h.sub_version = sub->sub_version;
    h.expression_type = sub->expression_type;
    h.broker_name = pq->mq.broker_name;
    pull_async(
        *instance_, h, *sub, pq->mq.broker_name, config_.pull_timeout_when_suspend,
        [this, pq](Result<PullResult> r) { on_pull(pq, std::move(r)); }, /*decode=*/false);
}

void DefaultMqPushConsumer::on_pull(const PqPtr& pq, Result<PullResult> r) {
    if (stopping_ || pq->dropped) {
        return;
    }
    if (r.is_ok()) {
        // Java incPullRT per answered pull (from the request to its answer, long poll
        // included) and incPullTPS with the messages found.
        pq->stats->pulls.fetch_add(1, std::memory_order_relaxed);
        pq->stats->pull_rt_ms.fetch_add(
            SystemClock::instance().wall_millis() - pq->last_pull_ms.load(),
            std::memory_order_relaxed);
    }
    if (!r.is_ok()) {
        spdlog::debug("pull {}:{}:{} failed: {}", pq->mq.topic, pq->mq.broker_name,
                      pq->mq.queue_id, r.status().to_string());
        pull_later(pq, config_.pull_delay_on_error);
        return;
    }
    PullResult& res = *r;
    ProcessQueue::RawChunk chunk;
    if (res.status == PullStatus::kFound && !res.undecoded_body.empty()) {
        if (!scan_records(res.undecoded_body, &chunk)) {
            spdlog::warn("pull {}:{}:{} at {}: the body's records do not chain; pulling again",
                         pq->mq.topic, pq->mq.broker_name, pq->mq.queue_id, pq->next_offset);
            pull_later(pq, config_.pull_delay_on_error);
            return;
        }
        chunk.body = std::move(res.undecoded_body);
        chunk.next_begin_offset = res.next_begin_offset;
    }
    if (res.status == PullStatus::kFound) {
        pq->stats->pulled_msgs.fetch_add(static_cast<int64_t>(chunk.records + res.messages.size()),
                                         std::memory_order_relaxed);
    }
    pq->next_offset = res.next_begin_offset;
    size_t pending = 0;
    switch (res.status) {
        case PullStatus::kFound: {
            bool submit = false;
            {
                MutexLock lock(pq->mu);
                for (auto& m : res.messages) {
                    pq->pending.push_back(std::move(m));
                }
                if (chunk.records > 0) {
                    pq->raw_records += chunk.records;
                    pq->raw.push_back(std::move(chunk));
                }
                pending = pq->pending.size() + pq->in_consume + pq->raw_records;
                if (!pq->consuming) {
                    pq->consuming = true;
                    submit = true;
                }
            }
            if (submit) {
                submit_drain(pq);
            }
            break;
        }
        case PullStatus::kNoNewMsg:
        case PullStatus::kNoMatchedMsg:
        case PullStatus::kOffsetIllegal: {
            MutexLock lock(pq->mu);
            if (pq->pending.empty() && pq->raw.empty() && !pq->consuming) {
                pq->consumed_offset = res.next_begin_offset;
            }
            break;
        }
    }
    if (pending > config_.pull_threshold_for_queue) {
        pull_later(pq, 50ms);  // flow control: let the listener catch up
    } else {
        pull(pq);
    }
}

void DefaultMqPushConsumer::submit_drain(const PqPtr& pq) {
    if (!consume_pool_->execute([this, pq] { drain(pq); })) {
        MutexLock lock(pq->mu);
        pq->consuming = false;  // pool shut down: stop quietly
    }
}

void DefaultMqPushConsumer::drain(const PqPtr& pq) {
    // Takes, under one lock, up to kDrainChunk (take_chunk) decoded messages from `pending`
    // (moved, not copied) or else the oldest raw chunk, which it decodes here on the consume
    // thread; consumes them in batches of consume_message_batch_max_size, and puts back what
    // was not consumed (a batch to retry, or the rest at shutdown) at the front of `pending`,
    // in order. While `consuming` is set no other drain runs and on_pull only appends, so
    // queue order holds. The pull callback (I/O thread) and this thread meet on pq->mu once
    // per chunk.
    // What a queue's kept messages may hold of bodies between chunks: a drain of 1 KiB
    // messages reuses them, a pull of large ones is freed once consumed.
    constexpr size_t kKeptBodyBytes = 4 << 20;
    const size_t max_batch = std::max<size_t>(1, config_.consume_message_batch_max_size);
    const protocol::SubscriptionData* sub = subscription(pq->mq.topic);
    COMET_CHECK(sub != nullptr, "draining unsubscribed topic {}", pq->mq.topic);
    // pq->drain_taken is decoded over from chunk to chunk and drain to drain (not cleared):
    // each chunk taken replaces what it holds.
    std::string raw_body;
    while (!stopping_ && !pq->dropped) {
        raw_body.clear();
        DrainChunk chunk;
        if (!take_chunk(*pq, &raw_body, &chunk)) {
            return;  // nothing left: `consuming` is cleared
        }
        if (chunk.pull_position >= 0) {
            decode_chunk(*pq, raw_body, *sub, chunk.last_offset);
        }
        const ConsumedChunk consumed = consume_taken(pq, max_batch);
        put_back(*pq, consumed.done, chunk);
        // The messages kept for the next chunk hold at most kKeptBodyBytes of bodies.
        release_if_larger(&pq->drain_taken, kKeptBodyBytes);
        release_if_larger(&pq->drain_batch, kKeptBodyBytes);
        if (consumed.retry) {
            instance_->scheduler().schedule_after(config_.suspend_current_queue_time,
                                                  [this, pq] { submit_drain(pq); });
            return;
        }
    }
    MutexLock lock(pq->mu);
    pq->consuming = false;
}

bool DefaultMqPushConsumer::take_chunk(ProcessQueue& pq, std::string* raw_body, DrainChunk* chunk) {
    constexpr size_t kDrainChunk = 256;
    std::vector<MessageExt>& taken = pq.drain_taken;
    MutexLock lock(pq.mu);
    if (!pq.pending.empty()) {
        const size_t n = std::min(pq.pending.size(), kDrainChunk);
        const auto end = pq.pending.begin() + static_cast<ptrdiff_t>(n);
        taken.assign(std::make_move_iterator(pq.pending.begin()), std::make_move_iterator(end));
        pq.pending.erase(pq.pending.begin(), end);
        pq.in_consume = n;
        pq.in_consume_first = taken.front().queue_offset;
        pq.in_consume_last = chunk->last_offset = taken.back().queue_offset;
        return true;
    }
    if (!pq.raw.empty()) {
        ProcessQueue::RawChunk& c = pq.raw.front();
        raw_body->swap(c.body);
        chunk->pull_position = c.next_begin_offset;
        pq.in_consume = c.records;
        pq.in_consume_first = c.first_offset;
        pq.in_consume_last = chunk->last_offset = c.last_offset;
        pq.raw_records -= c.records;
        pq.raw.pop_front();
        return true;
    }
    pq.consuming = false;
    return false;
}

void DefaultMqPushConsumer::decode_chunk(ProcessQueue& pq, std::string_view raw_body,
                                         const protocol::SubscriptionData& sub,
                                         int64_t last_offset) {
    // Into `drain_taken`'s own messages, decoded over from chunk to chunk (no allocation per
    // message); tags not subscribed are dropped by the decode.
    if (Status st = decode_pulled(raw_body, sub, &pq.drain_taken); !st.is_ok()) {
        pq.drain_taken.clear();
        spdlog::error("consumer {}: dropping pulled messages {}..{} of {}:{}:{}: {}", config_.group,
                      pq.in_consume_first, last_offset, pq.mq.topic, pq.mq.broker_name,
                      pq.mq.queue_id, st.to_string());
    }
}

DefaultMqPushConsumer::ConsumedChunk DefaultMqPushConsumer::consume_taken(const PqPtr& pq,
                                                                          size_t max_batch) {
    std::vector<MessageExt>& taken = pq->drain_taken;
    std::vector<MessageExt>& batch = pq->drain_batch;
    ConsumedChunk out;
    // consumeRT: the listener time of the whole chunk over its listener calls (two clock reads
    // per chunk, not per batch); the same mean as Java's per-batch incConsumeRT.
    const auto began = std::chrono::steady_clock::now();
    int64_t calls = 0;
    while (out.done < taken.size() && !stopping_ && !pq->dropped) {
        const size_t k = std::min(max_batch, taken.size() - out.done);
        const auto first = taken.begin() + static_cast<ptrdiff_t>(out.done);
        // Swapped, not moved, in and out: every message keeps a set of buffers, so the
        // next decode into `taken` reuses them.
        batch.resize(k);
        std::swap_ranges(first, first + static_cast<ptrdiff_t>(k), batch.begin());
        const bool consumed = consume_batch(pq, batch);
        ++calls;
        std::swap_ranges(first, first + static_cast<ptrdiff_t>(k), batch.begin());
        if (!consumed) {
            out.retry = true;  // the same batch again later
            break;
        }
        out.done += k;
        if (out.done < taken.size()) {
            // Java commits the smallest offset still in flight: the next one taken.
            pq->consumed_offset = taken[out.done].queue_offset;
        }
    }
    if (calls > 0) {
        pq->stats->consumes.fetch_add(calls, std::memory_order_relaxed);
        pq->stats->consume_rt_us.fetch_add(std::chrono::duration_cast<std::chrono::microseconds>(
                                               std::chrono::steady_clock::now() - began)
                                               .count(),
                                           std::memory_order_relaxed);
    }
    if (out.done > 0) {
        // Once per chunk, not per batch: a clock read per message showed in profiles.
        pq->last_consume_ms = SystemClock::instance().wall_millis();
    }
    return out;
}

void DefaultMqPushConsumer::put_back(ProcessQueue& pq, size_t done, const DrainChunk& chunk) {
    std::vector<MessageExt>& taken = pq.drain_taken;
    MutexLock lock(pq.mu);
    pq.in_consume = 0;
    if (done < taken.size()) {
        pq.pending.insert(pq.pending.begin(),
                          std::make_move_iterator(taken.begin() + static_cast<ptrdiff_t>(done)),
                          std::make_move_iterator(taken.end()));
    } else if (!pq.pending.empty()) {
        pq.consumed_offset = pq.pending.front().queue_offset;
    } else if (!pq.raw.empty()) {
        pq.consumed_offset = pq.raw.front().first_offset;
    } else {
        // Everything pulled is consumed: the pull position after the chunk (past messages the
        // tag filter dropped), or after the last message taken.
        pq.consumed_offset = chunk.pull_position >= 0 ? chunk.pull_position : chunk.last_offset + 1;
    }
}

bool DefaultMqPushConsumer::consume_batch(const PqPtr& pq, const std::vector<MessageExt>& batch) {
    if (orderly_listener_) {
        if (!pq->locked) {
            return false;
        }
        ConsumeOrderlyStatus s = orderly_listener_(batch, pq->mq);
        const auto n = static_cast<int64_t>(batch.size());
        if (s == ConsumeOrderlyStatus::kSuccess) {
            pq->stats->ok_msgs.fetch_add(n, std::memory_order_relaxed);
            pq->orderly_reconsumes = 0;
            return true;
        }
        pq->stats->failed_msgs.fetch_add(n, std::memory_order_relaxed);  // Java: SUSPEND
        if (++pq->orderly_reconsumes <= config_.max_reconsume_times) {
            return false;
        }
        // Exhausted: hand the batch to the broker (dead-letter path), then move on.
        for (const auto& m : batch) {
            if (!send_message_back(*instance_, config_.group, m, pq->mq.broker_name, 0,
                                   config_.max_reconsume_times)
                     .is_ok()) {
                return false;
            }
        }
        pq->orderly_reconsumes = 0;
        return true;
    }
    ConsumeStatus s = listener_(batch, pq->mq);
    if (s == ConsumeStatus::kConsumeSuccess) {
        pq->stats->ok_msgs.fetch_add(static_cast<int64_t>(batch.size()), std::memory_order_relaxed);
        return true;
    }
    // Java processConsumeResult: RECONSUME_LATER counts the whole batch failed.
    pq->stats->failed_msgs.fetch_add(static_cast<int64_t>(batch.size()), std::memory_order_relaxed);
    for (const auto& m : batch) {
        Status st = send_message_back(*instance_, config_.group, m, pq->mq.broker_name, 0,
                                      config_.max_reconsume_times);
        if (!st.is_ok()) {
            spdlog::warn("send back of {} failed, consuming it again locally: {}", m.unique_id(),
                         st.to_string());
            return false;
        }
    }
    return true;
}

void DefaultMqPushConsumer::persist_offsets(bool oneway) {
    std::vector<PqPtr> pqs;
    {
        MutexLock lock(mu_);
        for (auto& [mq, pq] : queues_) {
            pqs.push_back(pq);
        }
    }
    for (const auto& pq : pqs) {
        const int64_t off = pq->consumed_offset.load();
        if (off >= 0) {
            (void)update_consumer_offset(*instance_, config_.group, pq->mq, off, oneway);
        }
    }
}

}  // namespace comet::client
