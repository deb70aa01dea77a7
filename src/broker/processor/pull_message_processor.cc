#include <spdlog/spdlog.h>

#include "broker/filter/expression_message_filter.h"
#include "broker/processor/broker_processors.h"
#include "broker/replication/broker_member_group.h"
#include "broker/stats/broker_metrics.h"
#include "broker/stats/broker_stats_manager.h"
#include "protocol/pull_headers.h"
#include "protocol/response_code.h"

namespace comet::broker {

using protocol::RemotingCommand;
namespace RC = protocol::ResponseCode;

namespace {

// Pull status -> response code (Java PullMessageProcessor, master side).
int32_t pull_code(store::GetMessageStatus s, int64_t request_offset) {
    using G = store::GetMessageStatus;
    switch (s) {
        case G::kFound:
            return RC::kSuccess;
        case G::kMessageWasRemoving:
        case G::kNoMatchedMessage:
            return RC::kPullRetryImmediately;
        case G::kNoMatchedLogicQueue:
        case G::kNoMessageInQueue:
            return request_offset != 0 ? RC::kPullOffsetMoved : RC::kPullNotFound;
        case G::kOffsetFoundNull:
        case G::kOffsetOverflowOne:
            return RC::kPullNotFound;
        case G::kOffsetOverflowBadly:
        case G::kOffsetTooSmall:
            return RC::kPullOffsetMoved;
    }
    return RC::kSystemError;
}

// Check: the broker may be read, and the group exists and may consume (`group_cfg` is set).
std::optional<Refusal> check_pull_group(BrokerContext& ctx,
                                        const protocol::PullMessageRequestHeader& h,
                                        const BrokerConfig& cfg,
                                        std::optional<SubscriptionGroupConfig>* group_cfg) {
    if (!perm_readable(cfg.broker_permission)) {
        return Refusal{RC::kNoPermission,
                       fmt::format("the broker[{}] pulling message is forbidden", cfg.broker_ip1)};
    }
    *group_cfg = ctx.groups->find(h.consumer_group);
    if (!*group_cfg) {
        return Refusal{RC::kSubscriptionGroupNotExist,
                       fmt::format("subscription group [{}] does not exist", h.consumer_group)};
    }
    if (!(*group_cfg)->consume_enable) {
        return Refusal{RC::kNoPermission,
                       fmt::format("subscription group no permission, {}", h.consumer_group)};
    }
    return std::nullopt;
}

// Check: the topic exists and may be read, and the queue is one of its read queues.
std::optional<Refusal> check_pull_queue(BrokerContext& ctx, const RequestContext& rc,
                                        const protocol::PullMessageRequestHeader& h) {
    auto topic_cfg = ctx.topics->select(h.topic);
    if (!topic_cfg) {
        return Refusal{RC::kTopicNotExist, fmt::format("topic[{}] not exist, apply first please! "
                                                       "http://rocketmq.apache.org/docs/faq/",
                                                       h.topic)};
    }
    if (!perm_readable(topic_cfg->perm)) {
        return Refusal{RC::kNoPermission,
                       fmt::format("the topic[{}] pulling message is forbidden", h.topic)};
    }
    if (h.queue_id < 0 || h.queue_id >= topic_cfg->read_queue_nums) {
        return Refusal{
            RC::kInvalidParameter,
            fmt::format("queueId[{}] is illegal, topic:[{}] topicConfig.readQueueNums:[{}] "
                        "consumer:[{}]",
                        h.queue_id, h.topic, topic_cfg->read_queue_nums, rc.remote_address)};
    }
    return std::nullopt;
}

// The subscription a pull is served with (nullopt: none, every message) and the compiled
// filter of a SQL92 one.
struct PullSubscription {
    std::optional<SubscriptionData> sub;
    std::shared_ptr<const filter::Expression> sql;
};

// Route: the subscription the pull carries (sysFlag SUBSCRIPTION): a tag expression, or SQL92
// compiled here (Java FilterAPI.build + ConsumerFilterManager.build).
std::optional<Refusal> subscription_of_request(BrokerContext& ctx, const BrokerConfig& cfg,
                                               const protocol::PullMessageRequestHeader& h,
                                               PullSubscription* out) {
    const std::string type = h.expression_type.value_or("TAG");
    if (is_tag_type(type)) {
        auto built = build_subscription(h.topic, h.subscription.value_or("*"), type);
        if (!built.is_ok()) {
            return Refusal{RC::kSubscriptionParseFailed,
                           "parse the consumer's subscription failed: " + built.status().message()};
        }
        out->sub = std::move(built).value();
        return std::nullopt;
    }
    // Differs: where Java's compile error leaves no filter (and, with asserts off, serves the
    // queue unfiltered), Comet answers SUBSCRIPTION_PARSE_FAILED with the position.
    const std::string expr = h.subscription.value_or("");
    if (expr.empty()) {
        return Refusal{
            RC::kSubscriptionParseFailed,
            "parse the consumer's subscription failed: Expression can't be null! " + type};
    }
    SubscriptionData s;
    s.topic = h.topic;
    s.sub_string = expr;
    s.expression_type = type;
    s.sub_version = h.sub_version;
    out->sub = std::move(s);
    if (cfg.enable_property_filter && ctx.filters != nullptr) {
        auto compiled = ctx.filters->compile(type, expr);
        if (!compiled.is_ok()) {
            return Refusal{
                RC::kSubscriptionParseFailed,
                "parse the consumer's subscription failed: " + compiled.status().message()};
        }
        out->sql = std::move(compiled).value();
    }
    return std::nullopt;
}

// Route: the subscription the group's heartbeats registered for the topic, and for SQL92 the
// filter they compiled (Java ConsumerFilterManager.get); both at least the pull's subVersion.
std::optional<Refusal> subscription_of_group(BrokerContext& ctx,
                                             const protocol::PullMessageRequestHeader& h,
                                             const SubscriptionGroupConfig& group_cfg,
                                             PullSubscription* out) {
    auto info = ctx.consumers->group(h.consumer_group);
    if (!info) {
        return Refusal{
            RC::kSubscriptionNotExist,
            fmt::format("the consumer's group info not exist, group: {}", h.consumer_group)};
    }
    if (!group_cfg.consume_broadcast_enable && info->message_model == "BROADCASTING") {
        return Refusal{RC::kNoPermission,
                       fmt::format("the consumer group[{}] can not consume by broadcast way",
                                   h.consumer_group)};
    }
    auto it = info->subscriptions.find(h.topic);
    if (it == info->subscriptions.end()) {
        return Refusal{RC::kSubscriptionNotExist,
                       fmt::format("the consumer's subscription not exist, group: {} topic: {}",
                                   h.consumer_group, h.topic)};
    }
    if (it->second.sub_version < h.sub_version) {
        return Refusal{RC::kSubscriptionNotLatest, "the consumer's subscription not latest"};
    }
    if (!is_tag_type(it->second.expression_type)) {
        auto data =
            ctx.filters != nullptr ? ctx.filters->get(h.topic, h.consumer_group) : std::nullopt;
        if (!data) {
            return Refusal{RC::kFilterDataNotExist,
                           "The broker's consumer filter data is not exist!Your expression may be "
                           "wrong!"};
        }
        if (data->client_version < h.sub_version) {
            return Refusal{RC::kFilterDataNotLatest,
                           "the consumer's consumer filter data not latest"};
        }
        out->sql = data->compiled;
    }
    out->sub = it->second;
    return std::nullopt;
}

// Route and check: the pull's subscription, from the request or from the group's heartbeats.
// A non-TAG subscription without a property filter is refused (and never served unfiltered).
std::optional<Refusal> resolve_pull_subscription(BrokerContext& ctx, const BrokerConfig& cfg,
                                                 const protocol::PullMessageRequestHeader& h,
                                                 const SubscriptionGroupConfig& group_cfg,
                                                 PullSubscription* out) {
    const bool has_subscription = (h.sys_flag & protocol::kPullFlagSubscription) != 0;
    std::optional<Refusal> no = has_subscription ? subscription_of_request(ctx, cfg, h, out)
                                                 : subscription_of_group(ctx, h, group_cfg, out);
    if (no) {
        return no;
    }
    const std::optional<SubscriptionData>& sub = out->sub;
    if (sub && !is_tag_type(sub->expression_type) && (!cfg.enable_property_filter || !out->sql)) {
        return Refusal{RC::kSystemError, property_filter_unsupported_remark(sub->expression_type)};
    }
    return std::nullopt;
}

// The store's filter for the read, built in the caller's `tag_filter` / `sql_filter`: the
// SQL92 expression; for a retry topic under filterSupportRetry the group's filter on each
// message's original topic (Java ExpressionForRetryMessageFilter); else the tags. Null: every
// message matches.
const store::MessageFilter* pull_filter(BrokerContext& ctx, const BrokerConfig& cfg,
                                        const protocol::PullMessageRequestHeader& h,
                                        const PullSubscription& s,
                                        std::optional<store::TagsCodeFilter>* tag_filter,
                                        std::optional<ExpressionMessageFilter>* sql_filter) {
    if (s.sql) {
        sql_filter->emplace(s.sql);
    } else if (cfg.filter_support_retry && ctx.filters != nullptr && is_retry_topic(h.topic) &&
               (!s.sub || s.sub->matches_all())) {
        sql_filter->emplace(nullptr, ctx.filters, h.topic.substr(kRetryGroupTopicPrefix.size()));
    } else if (s.sub && !s.sub->matches_all()) {
        std::vector<int64_t> codes(s.sub->code_set.begin(), s.sub->code_set.end());
        tag_filter->emplace(std::move(codes));
    }
    if (*sql_filter) {
        return &**sql_filter;
    }
    if (*tag_filter) {
        return &**tag_filter;
    }
    return nullptr;
}

// Read: up to maxMsgNums (at most 32 batches of maxMsgNumsBatch) messages from the queue.
store::GetMessageResult read_pull(BrokerContext& ctx, const BrokerConfig& cfg,
                                  const protocol::PullMessageRequestHeader& h,
                                  const store::MessageFilter* filter) {
    const int32_t max_nums = std::max(1, std::min(h.max_msg_nums, cfg.max_msg_nums_batch * 32));
    const auto read_started = std::chrono::steady_clock::now();
    store::GetMessageResult result = ctx.store->get_message(h.consumer_group, h.topic, h.queue_id,
                                                            h.queue_offset, max_nums, filter);
    if (ctx.metrics != nullptr) {
        ctx.metrics->on_pull_read(std::chrono::steady_clock::now() - read_started);
    }
    return result;
}

// The answer to a read: the response code, and in `rh` the queue's offsets and the broker the
// consumer should pull from next (suggest_which_broker).
int32_t pull_answer(BrokerContext& ctx, const BrokerConfig& cfg,
                    const protocol::PullMessageRequestHeader& h,
                    const SubscriptionGroupConfig& group_cfg, const store::GetMessageResult& result,
                    protocol::PullMessageResponseHeader* rh) {
    rh->next_begin_offset = result.next_begin_offset.value();
    rh->min_offset = result.min_offset.value();
    rh->max_offset = result.max_offset.value();
    PullSituation situation;
    situation.is_slave = !cfg.is_master();
    situation.master_is_minimum = !ctx.min_broker_id_in_group || ctx.min_broker_id_in_group() == 0;
    situation.slave_read_enable = cfg.slave_read_enable;
    situation.lagging = result.suggest_pulling_from_slave;
    situation.found = result.status == store::GetMessageStatus::kFound;
    situation.group_broker_id = group_cfg.broker_id;
    situation.which_broker_when_consume_slowly = group_cfg.which_broker_when_consume_slowly;
    const SuggestBroker suggest = suggest_which_broker(situation);
    rh->suggest_which_broker_id = suggest.broker_id;
    return suggest.retry_at_master ? RC::kPullRetryImmediately
                                   : pull_code(result.status, h.queue_offset);
}

// A pull that found nothing, parked until a message arrives or the hold times out (long
// polling; short polling when longPollingEnable is off). `wake` is left to the caller.
HeldPullRequest held_pull(BrokerContext& ctx, const BrokerConfig& cfg,
                          const protocol::PullMessageRequestHeader& h,
                          const std::optional<SubscriptionData>& sub) {
    const int64_t hold_ms =
        cfg.long_polling_enable ? h.suspend_timeout_millis : cfg.short_polling_time_mills;
    HeldPullRequest held;
    held.topic = h.topic;
    held.queue_id = h.queue_id;
    held.pull_from_offset = h.queue_offset;
    held.deadline = ctx.clock->now() + std::chrono::milliseconds(std::max<int64_t>(hold_ms, 0));
    held.subscription = sub;
    return held;
}

// Counts a pull that found messages: totals, metrics, and the group's statistics (messages read
// from disk when the consumer lags, GROUP_GET_LATENCY since `pass_started`).
void count_pull_found(BrokerContext& ctx, const protocol::PullMessageRequestHeader& h,
                      const store::GetMessageResult& result,
                      std::chrono::steady_clock::time_point pass_started) {
    ctx.stats->got_messages.fetch_add(result.message_count(), std::memory_order_relaxed);
    if (ctx.metrics != nullptr) {
        ctx.metrics->on_pull_found(h.topic, h.consumer_group, result.message_count(),
                                   result.buffer_total_size);
    }
    if (ctx.stats_manager == nullptr) {
        return;
    }
    const std::string group_key = h.topic + "@" + h.consumer_group;
    if (result.suggest_pulling_from_slave) {
        ctx.stats_manager->add(kGroupGetFromDiskNums, group_key, result.message_count(), 1);
        ctx.stats_manager->add(kGroupGetFromDiskSize, group_key, result.buffer_total_size, 1);
    }
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - pass_started);
    ctx.stats_manager->add(kGroupGetLatency,
                           fmt::format("{}@{}@{}", h.queue_id, h.topic, h.consumer_group),
                           took.count(), 1);
}

// The found messages as the response's extra body: the store's mapped bytes, uncopied, each
// held by its file; when a view has no owning file, every message is copied into resp.body.
std::vector<net::SharedBuffer> pull_body(store::GetMessageResult& result, RemotingCommand* resp) {
    std::vector<net::SharedBuffer> body;
    body.reserve(result.messages.size());
    bool all_owned = true;
    for (const auto& v : result.messages) {
        all_owned = all_owned && v.file != nullptr;
    }
    if (!all_owned) {  // views without an owning file: copy while they are valid
        for (const auto& v : result.messages) {
            resp->body.append(v.bytes());
        }
        result.messages.clear();
    }
    for (auto& v : result.messages) {
        net::SharedBuffer b;
        b.data = reinterpret_cast<const char*>(v.data);
        b.size = v.size;
        b.owner = v.file;
        body.push_back(std::move(b));
    }
    return body;
}

}  // namespace

SuggestBroker suggest_which_broker(const PullSituation& p) {
    SuggestBroker s;
    if (p.slave_read_enable) {
        // Consumer too slow (its data is out of memory): send it to a slave; otherwise to the
        // group's configured broker (brokerId, 0 by default).
        s.broker_id = p.lagging ? p.which_broker_when_consume_slowly : p.group_broker_id;
    }
    if (p.is_slave && !p.lagging && p.master_is_minimum) {
        s.broker_id = 0;
        s.retry_at_master = !p.found;
    }
    return s;
}

void PullMessageProcessor::process_request(const RequestContext& rc, RemotingCommand req,
                                           const Reply& reply, bool allow_suspend) {
    const auto pass_started = std::chrono::steady_clock::now();  // GROUP_GET_LATENCY
    auto header_r = protocol::decode_pull_message_header(req);
    if (!header_r.is_ok()) {
        reply_code(reply, req, RC::kSystemError, header_r.status().message());
        return;
    }
    const auto h = std::move(header_r).value();
    // The current config, shared: a pull reads it without copying its strings (as sends do).
    const std::shared_ptr<const BrokerConfig> cfg_snapshot = ctx_.config->snapshot();
    const BrokerConfig& cfg = *cfg_snapshot;
    std::optional<SubscriptionGroupConfig> group_cfg;
    if (auto no = check_pull_group(ctx_, h, cfg, &group_cfg)) {
        reply_refusal(reply, req, std::move(*no));
        return;
    }
    if (auto no = check_pull_queue(ctx_, rc, h)) {
        reply_refusal(reply, req, std::move(*no));
        return;
    }
    PullSubscription subscription;
    if (auto no = resolve_pull_subscription(ctx_, cfg, h, *group_cfg, &subscription)) {
        reply_refusal(reply, req, std::move(*no));
        return;
    }

    std::optional<store::TagsCodeFilter> tag_filter;
    std::optional<ExpressionMessageFilter> sql_filter;
    const store::MessageFilter* filter =
        pull_filter(ctx_, cfg, h, subscription, &tag_filter, &sql_filter);
    store::GetMessageResult result = read_pull(ctx_, cfg, h, filter);
    protocol::PullMessageResponseHeader rh;
    const int32_t code = pull_answer(ctx_, cfg, h, *group_cfg, result, &rh);

    // Commit offset carried by the request (first execution only; RocketMQ 5 tryCommitOffset
    // stores it whatever the role: clients clear the flag when they pull from a slave).
    if (allow_suspend && (h.sys_flag & protocol::kPullFlagCommitOffset) != 0) {
        ctx_.offsets->commit_offset(h.consumer_group, h.topic, h.queue_id, h.commit_offset);
    }
    if (code == RC::kPullNotFound && allow_suspend &&
        (h.sys_flag & protocol::kPullFlagSuspend) != 0) {
        suspend(rc, req, reply, held_pull(ctx_, cfg, h, subscription.sub));
        return;
    }

    RemotingCommand resp =
        make_response(req, code, std::string(store::get_message_status_name(result.status)));
    rh.to_ext(resp);
    std::vector<net::SharedBuffer> body;
    if (code == RC::kSuccess) {
        count_pull_found(ctx_, h, result, pass_started);
        body = pull_body(result, &resp);
    }
    reply(std::move(resp), std::move(body));
}

void PullMessageProcessor::suspend(const RequestContext& rc, const RemotingCommand& req,
                                   const Reply& reply, HeldPullRequest held) {
    // Re-execution must not commit the offset again nor suspend again.
    held.wake = [this, rc, req, reply]() mutable {
        auto run = [this, rc, req = std::move(req), reply]() mutable {
            process_request(rc, std::move(req), reply, false);
        };
        if (ctx_.run_on_pull_executor) {
            ctx_.run_on_pull_executor(std::move(run));
        } else {
            run();
        }
    };
    ctx_.stats->pulls_suspended.fetch_add(1, std::memory_order_relaxed);
    ctx_.holds->suspend(std::move(held));
}

}  // namespace comet::broker
