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
    const BrokerConfig cfg = ctx_.config->get();
    if (!perm_readable(cfg.broker_permission)) {
        reply_code(reply, req, RC::kNoPermission,
                   fmt::format("the broker[{}] pulling message is forbidden", cfg.broker_ip1));
        return;
    }
    auto group_cfg = ctx_.groups->find(h.consumer_group);
    if (!group_cfg) {
        reply_code(reply, req, RC::kSubscriptionGroupNotExist,
                   fmt::format("subscription group [{}] does not exist", h.consumer_group));
        return;
    }
    if (!group_cfg->consume_enable) {
        reply_code(reply, req, RC::kNoPermission,
                   fmt::format("subscription group no permission, {}", h.consumer_group));
        return;
    }
    const bool has_suspend = (h.sys_flag & protocol::kPullFlagSuspend) != 0;
    const bool has_commit = (h.sys_flag & protocol::kPullFlagCommitOffset) != 0;
    const bool has_subscription = (h.sys_flag & protocol::kPullFlagSubscription) != 0;

    auto topic_cfg = ctx_.topics->select(h.topic);
    if (!topic_cfg) {
        reply_code(reply, req, RC::kTopicNotExist,
                   fmt::format("topic[{}] not exist, apply first please! "
                               "http://rocketmq.apache.org/docs/faq/",
                               h.topic));
        return;
    }
    if (!perm_readable(topic_cfg->perm)) {
        reply_code(reply, req, RC::kNoPermission,
                   fmt::format("the topic[{}] pulling message is forbidden", h.topic));
        return;
    }
    if (h.queue_id < 0 || h.queue_id >= topic_cfg->read_queue_nums) {
        reply_code(reply, req, RC::kInvalidParameter,
                   fmt::format("queueId[{}] is illegal, topic:[{}] topicConfig.readQueueNums:[{}] "
                               "consumer:[{}]",
                               h.queue_id, h.topic, topic_cfg->read_queue_nums, rc.remote_address));
        return;
    }
    std::optional<SubscriptionData> sub;
    std::shared_ptr<const filter::Expression> sql;  // the compiled filter of a SQL92 subscription
    if (has_subscription) {
        const std::string type = h.expression_type.value_or("TAG");
        if (is_tag_type(type)) {
            auto built = build_subscription(h.topic, h.subscription.value_or("*"), type);
            if (!built.is_ok()) {
                reply_code(reply, req, RC::kSubscriptionParseFailed,
                           "parse the consumer's subscription failed: " + built.status().message());
                return;
            }
            sub = std::move(built).value();
        } else {
            // Java FilterAPI.build + ConsumerFilterManager.build. Differs: where Java's
            // compile error leaves no filter (and, with asserts off, serves the queue
            // unfiltered), Comet answers SUBSCRIPTION_PARSE_FAILED with the position.
            const std::string expr = h.subscription.value_or("");
            if (expr.empty()) {
                reply_code(
                    reply, req, RC::kSubscriptionParseFailed,
                    "parse the consumer's subscription failed: Expression can't be null! " + type);
                return;
            }
            SubscriptionData s;
            s.topic = h.topic;
            s.sub_string = expr;
            s.expression_type = type;
            s.sub_version = h.sub_version;
            sub = std::move(s);
            if (cfg.enable_property_filter && ctx_.filters != nullptr) {
                auto compiled = ctx_.filters->compile(type, expr);
                if (!compiled.is_ok()) {
                    reply_code(
                        reply, req, RC::kSubscriptionParseFailed,
                        "parse the consumer's subscription failed: " + compiled.status().message());
                    return;
                }
                sql = std::move(compiled).value();
            }
        }
    } else {
        auto info = ctx_.consumers->group(h.consumer_group);
        if (!info) {
            reply_code(
                reply, req, RC::kSubscriptionNotExist,
                fmt::format("the consumer's group info not exist, group: {}", h.consumer_group));
            return;
        }
        if (!group_cfg->consume_broadcast_enable && info->message_model == "BROADCASTING") {
            reply_code(reply, req, RC::kNoPermission,
                       fmt::format("the consumer group[{}] can not consume by broadcast way",
                                   h.consumer_group));
            return;
        }
        auto it = info->subscriptions.find(h.topic);
        if (it == info->subscriptions.end()) {
            reply_code(reply, req, RC::kSubscriptionNotExist,
                       fmt::format("the consumer's subscription not exist, group: {} topic: {}",
                                   h.consumer_group, h.topic));
            return;
        }
        if (it->second.sub_version < h.sub_version) {
            reply_code(reply, req, RC::kSubscriptionNotLatest,
                       "the consumer's subscription not latest");
            return;
        }
        if (!is_tag_type(it->second.expression_type)) {
            // The filter the group's heartbeats registered (Java ConsumerFilterManager.get).
            auto data = ctx_.filters != nullptr ? ctx_.filters->get(h.topic, h.consumer_group)
                                                : std::nullopt;
            if (!data) {
                reply_code(reply, req, RC::kFilterDataNotExist,
                           "The broker's consumer filter data is not exist!Your expression may be "
                           "wrong!");
                return;
            }
            if (data->client_version < h.sub_version) {
                reply_code(reply, req, RC::kFilterDataNotLatest,
                           "the consumer's consumer filter data not latest");
                return;
            }
            sql = data->compiled;
        }
        sub = it->second;
    }
    // PullMessageProcessor: a non-TAG subscription without a property filter is refused (and
    // never served unfiltered).
    if (sub && !is_tag_type(sub->expression_type) && (!cfg.enable_property_filter || !sql)) {
        reply_code(reply, req, RC::kSystemError,
                   property_filter_unsupported_remark(sub->expression_type));
        return;
    }

    std::optional<store::TagsCodeFilter> tag_filter;
    std::optional<ExpressionMessageFilter> sql_filter;
    if (sql) {
        sql_filter.emplace(sql);
    } else if (cfg.filter_support_retry && ctx_.filters != nullptr && is_retry_topic(h.topic) &&
               (!sub || sub->matches_all())) {
        // Java ExpressionForRetryMessageFilter: retried messages are judged by the group's
        // filter on their original topic.
        sql_filter.emplace(nullptr, ctx_.filters, h.topic.substr(kRetryGroupTopicPrefix.size()));
    } else if (sub && !sub->matches_all()) {
        std::vector<int64_t> codes(sub->code_set.begin(), sub->code_set.end());
        tag_filter.emplace(std::move(codes));
    }
    const store::MessageFilter* filter = nullptr;
    if (sql_filter) {
        filter = &*sql_filter;
    } else if (tag_filter) {
        filter = &*tag_filter;
    }
    const int32_t max_nums = std::max(1, std::min(h.max_msg_nums, cfg.max_msg_nums_batch * 32));
    const auto read_started = std::chrono::steady_clock::now();
    store::GetMessageResult result = ctx_.store->get_message(h.consumer_group, h.topic, h.queue_id,
                                                             h.queue_offset, max_nums, filter);
    if (ctx_.metrics != nullptr) {
        ctx_.metrics->on_pull_read(std::chrono::steady_clock::now() - read_started);
    }

    protocol::PullMessageResponseHeader rh;
    rh.next_begin_offset = result.next_begin_offset.value();
    rh.min_offset = result.min_offset.value();
    rh.max_offset = result.max_offset.value();
    PullSituation situation;
    situation.is_slave = !cfg.is_master();
    situation.master_is_minimum =
        !ctx_.min_broker_id_in_group || ctx_.min_broker_id_in_group() == 0;
    situation.slave_read_enable = cfg.slave_read_enable;
    situation.lagging = result.suggest_pulling_from_slave;
    situation.found = result.status == store::GetMessageStatus::kFound;
    situation.group_broker_id = group_cfg->broker_id;
    situation.which_broker_when_consume_slowly = group_cfg->which_broker_when_consume_slowly;
    const SuggestBroker suggest = suggest_which_broker(situation);
    rh.suggest_which_broker_id = suggest.broker_id;
    const int32_t code = suggest.retry_at_master ? RC::kPullRetryImmediately
                                                 : pull_code(result.status, h.queue_offset);

    // Commit offset carried by the request (first execution only; RocketMQ 5 tryCommitOffset
    // stores it whatever the role: clients clear the flag when they pull from a slave).
    if (allow_suspend && has_commit) {
        ctx_.offsets->commit_offset(h.consumer_group, h.topic, h.queue_id, h.commit_offset);
    }

    if (code == RC::kPullNotFound && allow_suspend && has_suspend) {
        const int64_t hold_ms =
            cfg.long_polling_enable ? h.suspend_timeout_millis : cfg.short_polling_time_mills;
        HeldPullRequest held;
        held.topic = h.topic;
        held.queue_id = h.queue_id;
        held.pull_from_offset = h.queue_offset;
        held.deadline =
            ctx_.clock->now() + std::chrono::milliseconds(std::max<int64_t>(hold_ms, 0));
        held.subscription = sub;
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
        return;
    }

    RemotingCommand resp =
        make_response(req, code, std::string(store::get_message_status_name(result.status)));
    rh.to_ext(resp);
    std::vector<net::SharedBuffer> body;
    if (code == RC::kSuccess) {
        ctx_.stats->got_messages.fetch_add(result.message_count(), std::memory_order_relaxed);
        if (ctx_.metrics != nullptr) {
            ctx_.metrics->on_pull_found(h.topic, h.consumer_group, result.message_count(),
                                        result.buffer_total_size);
        }
        if (ctx_.stats_manager != nullptr) {
            const std::string group_key = h.topic + "@" + h.consumer_group;
            if (result.suggest_pulling_from_slave) {
                ctx_.stats_manager->add(kGroupGetFromDiskNums, group_key, result.message_count(), 1);
                ctx_.stats_manager->add(kGroupGetFromDiskSize, group_key,
                                        result.buffer_total_size, 1);
            }
            const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - pass_started);
            ctx_.stats_manager->add(
                kGroupGetLatency, fmt::format("{}@{}@{}", h.queue_id, h.topic, h.consumer_group),
                took.count(), 1);
        }
        body.reserve(result.messages.size());
        bool all_owned = true;
        for (const auto& v : result.messages) {
            all_owned = all_owned && v.file != nullptr;
        }
        if (!all_owned) {  // views without an owning file: copy while they are valid
            for (const auto& v : result.messages) {
                resp.body.append(v.bytes());
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
    }
    reply(std::move(resp), std::move(body));
}

}  // namespace comet::broker
