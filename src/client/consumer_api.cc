#include "client/consumer_api.h"

#include "protocol/admin_bodies.h"
#include "protocol/message_decoder.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::client {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;

protocol::SubscriptionData build_subscription(const std::string& topic,
                                              const std::string& expression, int64_t version) {
    protocol::SubscriptionData sub;
    sub.topic = topic;
    sub.sub_version = version;
    std::string expr = expression;
    if (expr.empty() || expr == "*") {
        sub.sub_string = "*";
        return sub;
    }
    sub.sub_string = expr;
    size_t pos = 0;
    while (pos <= expr.size()) {
        size_t bar = expr.find("||", pos);
        std::string tag =
            expr.substr(pos, bar == std::string::npos ? std::string::npos : bar - pos);
        const auto b = tag.find_first_not_of(' ');
        const auto e = tag.find_last_not_of(' ');
        if (b != std::string::npos) {
            tag = tag.substr(b, e - b + 1);
            sub.tags_set.insert(tag);
            sub.code_set.insert(java_string_hash(tag));
        }
        if (bar == std::string::npos) {
            break;
        }
        pos = bar + 2;
    }
    return sub;
}

protocol::SubscriptionData build_subscription(const std::string& topic,
                                              const MessageSelector& selector, int64_t version) {
    if (selector.is_tag()) {
        return build_subscription(topic, selector.expression, version);
    }
    protocol::SubscriptionData sub;
    sub.topic = topic;
    sub.sub_version = version;
    sub.sub_string = selector.expression;
    sub.expression_type = selector.type;
    return sub;
}

Status check_client_in_broker(MqClientInstance& inst, const std::string& group,
                              const protocol::SubscriptionData& sub) {
    if (sub.expression_type.empty() || sub.expression_type == "TAG") {
        return Status::ok();
    }
    COMET_ASSIGN_OR_RETURN(auto route, inst.route(sub.topic));
    protocol::JsonWriter w;
    w.begin_object();
    w.key("clientId").value(inst.client_id());
    w.key("group").value(group);
    w.key("subscriptionData").raw(sub.encode());
    w.end_object();
    const std::string body = w.take();
    for (const auto& bd : route.broker_datas) {
        auto master = bd.broker_addrs.find(0);
        if (master == bd.broker_addrs.end()) {
            continue;
        }
        auto req = protocol::RemotingCommand::request(Req::kCheckClientConfig);
        req.body = body;
        COMET_ASSIGN_OR_RETURN(auto resp, inst.invoke(master->second, std::move(req)));
        if (resp.code != RC::kSuccess) {
            return Status::error(Errc::kFailedPrecondition,
                                 "broker {} refuses the {} subscription of group {} to {}: {} {}",
                                 bd.broker_name, sub.expression_type, group, sub.topic,
                                 protocol::response_code_name(resp.code), resp.remark.value_or(""));
        }
    }
    return Status::ok();
}

bool subscribes_all_tags(const protocol::SubscriptionData& sub) {
    return sub.sub_string == "*" || sub.tags_set.empty();
}

bool tags_match(const protocol::SubscriptionData& sub, const std::string& tags) {
    return subscribes_all_tags(sub) || sub.tags_set.count(tags) != 0;
}

namespace {
// Status and header of a PULL_MESSAGE response; the body is left to the caller.
Result<PullResult> pull_result_header(const protocol::RemotingCommand& resp) {
    PullResult r;
    switch (resp.code) {
        case RC::kSuccess:
            r.status = PullStatus::kFound;
            break;
        case RC::kPullNotFound:
            r.status = PullStatus::kNoNewMsg;
            break;
        case RC::kPullRetryImmediately:
            r.status = PullStatus::kNoMatchedMsg;
            break;
        case RC::kPullOffsetMoved:
            r.status = PullStatus::kOffsetIllegal;
            break;
        default:
            return response_error("pull", resp);
    }
    COMET_ASSIGN_OR_RETURN(auto h, protocol::PullMessageResponseHeader::from_ext(resp));
    r.suggest_which_broker_id = h.suggest_which_broker_id;
    r.next_begin_offset = h.next_begin_offset;
    r.min_offset = h.min_offset;
    r.max_offset = h.max_offset;
    return r;
}
}  // namespace

Result<std::vector<MessageExt>> decode_pulled(std::string_view body,
                                              const protocol::SubscriptionData& sub) {
    std::vector<MessageExt> msgs;
    COMET_RETURN_IF_ERROR(decode_pulled(body, sub, &msgs));
    return msgs;
}

Status decode_pulled(std::string_view body, const protocol::SubscriptionData& sub,
                     std::vector<MessageExt>* out) {
    std::vector<MessageExt>& msgs = *out;
    COMET_RETURN_IF_ERROR(protocol::decode_messages(body, {}, &msgs));
    // Filtered in place: the messages are not moved again when every tag matches.
    if (!subscribes_all_tags(sub)) {  // no tags() string per message for "*"
        std::erase_if(msgs, [&](const MessageExt& m) { return !tags_match(sub, m.tags()); });
    }
    for (auto& m : msgs) {
        if (const std::string* real = m.property(protocol::property::kRetryTopic)) {
            if (m.topic.rfind(kRetryGroupTopicPrefix, 0) == 0) {
                m.topic = *real;
            }
        }
    }
    return Status::ok();
}

bool release_if_larger(std::vector<MessageExt>* msgs, size_t max_body_bytes) {
    size_t held = 0;
    for (const MessageExt& m : *msgs) {
        held += m.body.capacity();
    }
    if (held <= max_body_bytes) {
        return false;
    }
    std::vector<MessageExt>().swap(*msgs);
    return true;
}

Result<PullResult> process_pull_response(const protocol::RemotingCommand& resp,
                                         const protocol::SubscriptionData& sub) {
    COMET_ASSIGN_OR_RETURN(PullResult r, pull_result_header(resp));
    if (r.status == PullStatus::kFound) {
        COMET_ASSIGN_OR_RETURN(r.messages, decode_pulled(resp.body, sub));
        if (r.messages.empty()) {
            r.status = PullStatus::kNoMatchedMsg;
        }
    }
    return r;
}

Result<std::string> master_addr(MqClientInstance& inst, const std::string& broker_name,
                                const std::string& topic) {
    if (auto a = inst.find_broker_master(broker_name)) {
        return *a;
    }
    COMET_RETURN_IF_ERROR(inst.route(topic, true).status());
    if (auto a = inst.find_broker_master(broker_name)) {
        return *a;
    }
    return Status::error(Errc::kNotFound, "no master address of broker {}", broker_name);
}

Result<std::string> subscribe_addr(MqClientInstance& inst, const std::string& broker_name,
                                   const std::string& topic) {
    if (auto f = inst.find_broker_address_in_subscribe(broker_name, 0, true)) {
        return f->addr;
    }
    COMET_RETURN_IF_ERROR(inst.route(topic, true).status());
    if (auto f = inst.find_broker_address_in_subscribe(broker_name, 0, false)) {
        return f->addr;
    }
    return Status::error(Errc::kNotFound, "no address of broker {}", broker_name);
}

void pull_async(MqClientInstance& inst, const protocol::PullMessageRequestHeader& header,
                const protocol::SubscriptionData& sub, const std::string& broker_name,
                Duration timeout, PullCallback callback, bool decode) {
    // PullAPIWrapper#pullKernelImpl: the suggested broker, else the next slave, else any member
    // of the group (a slave when the master is gone from the route).
    const MessageQueue mq{header.topic, broker_name, header.queue_id};
    auto found = inst.find_broker_address_in_subscribe(
        broker_name, inst.recalculate_pull_from_which_node(mq), false);
    if (!found) {
        callback(Status::error(Errc::kNotFound, "no address of broker {}", broker_name));
        return;
    }
    protocol::PullMessageRequestHeader h = header;
    if (found->slave) {
        h.sys_flag &= ~protocol::kPullFlagCommitOffset;  // slaves do not take commits
    }
    auto req = protocol::RemotingCommand::request(Req::kPullMessage);
    h.to_ext(req);
    inst.remoting().invoke_async(
        found->addr, std::move(req), timeout,
        [&inst, mq, sub, decode, callback = std::move(callback)](
            Result<protocol::RemotingCommand> resp) {
            if (!resp.is_ok()) {
                callback(resp.status());
                return;
            }
            Result<PullResult> result = Status(Errc::kInternal, "unset");
            if (decode) {
                result = process_pull_response(*resp, sub);
            } else {
                result = pull_result_header(*resp);
                if (result.is_ok() && result->status == PullStatus::kFound) {
                    result->undecoded_body = std::move(resp->body);
                }
            }
            if (result.is_ok()) {
                inst.update_pull_from_which_node(mq, result->suggest_which_broker_id);
            }
            callback(std::move(result));
        });
}

namespace {
Result<int64_t> offset_call(MqClientInstance& inst, const std::string& topic,
                            const std::string& broker_name, protocol::RemotingCommand req,
                            std::string_view what) {
    COMET_ASSIGN_OR_RETURN(auto addr, master_addr(inst, broker_name, topic));
    COMET_ASSIGN_OR_RETURN(auto resp, inst.invoke(addr, std::move(req)));
    if (resp.code != RC::kSuccess) {
        return response_error(what, resp);
    }
    COMET_ASSIGN_OR_RETURN(auto h, protocol::OffsetResponseHeader::from_ext(resp));
    return h.offset;
}
}  // namespace

Result<int64_t> query_consumer_offset(MqClientInstance& inst, const std::string& group,
                                      const MessageQueue& mq) {
    protocol::QueryConsumerOffsetRequestHeader h;
    h.consumer_group = group;
    h.topic = mq.topic;
    h.queue_id = mq.queue_id;
    auto req = protocol::RemotingCommand::request(Req::kQueryConsumerOffset);
    h.to_ext(req);
    // RemoteBrokerOffsetStore: the master, or any member of the group when it is gone.
    COMET_ASSIGN_OR_RETURN(auto addr, subscribe_addr(inst, mq.broker_name, mq.topic));
    COMET_ASSIGN_OR_RETURN(auto resp, inst.invoke(addr, std::move(req)));
    if (resp.code != RC::kSuccess) {
        return response_error("query consumer offset", resp);
    }
    COMET_ASSIGN_OR_RETURN(auto oh, protocol::OffsetResponseHeader::from_ext(resp));
    return oh.offset;
}

Status update_consumer_offset(MqClientInstance& inst, const std::string& group,
                              const MessageQueue& mq, int64_t offset, bool oneway) {
    protocol::UpdateConsumerOffsetRequestHeader h;
    h.consumer_group = group;
    h.topic = mq.topic;
    h.queue_id = mq.queue_id;
    h.commit_offset = offset;
    auto req = protocol::RemotingCommand::request(Req::kUpdateConsumerOffset);
    h.to_ext(req);
    COMET_ASSIGN_OR_RETURN(auto addr, subscribe_addr(inst, mq.broker_name, mq.topic));
    if (oneway) {
        inst.remoting().invoke_oneway_async(addr, std::move(req));
        return Status::ok();
    }
    COMET_ASSIGN_OR_RETURN(auto resp, inst.invoke(addr, std::move(req)));
    if (resp.code != RC::kSuccess) {
        return response_error("update consumer offset", resp);
    }
    return Status::ok();
}

Result<int64_t> max_offset(MqClientInstance& inst, const MessageQueue& mq) {
    protocol::GetMaxOffsetRequestHeader h;
    h.topic = mq.topic;
    h.queue_id = mq.queue_id;
    auto req = protocol::RemotingCommand::request(Req::kGetMaxOffset);
    h.to_ext(req);
    return offset_call(inst, mq.topic, mq.broker_name, std::move(req), "get max offset");
}

Result<int64_t> min_offset(MqClientInstance& inst, const MessageQueue& mq) {
    protocol::GetMinOffsetRequestHeader h;
    h.topic = mq.topic;
    h.queue_id = mq.queue_id;
    auto req = protocol::RemotingCommand::request(Req::kGetMinOffset);
    h.to_ext(req);
    return offset_call(inst, mq.topic, mq.broker_name, std::move(req), "get min offset");
}

Result<int64_t> search_offset(MqClientInstance& inst, const MessageQueue& mq, int64_t timestamp) {
    protocol::SearchOffsetRequestHeader h;
    h.topic = mq.topic;
    h.queue_id = mq.queue_id;
    h.timestamp = timestamp;
    auto req = protocol::RemotingCommand::request(Req::kSearchOffsetByTimestamp);
    h.to_ext(req);
    return offset_call(inst, mq.topic, mq.broker_name, std::move(req), "search offset");
}

Result<std::vector<std::string>> consumer_id_list(MqClientInstance& inst, const std::string& topic,
                                                  const std::string& group) {
    COMET_ASSIGN_OR_RETURN(auto route, inst.route(topic));
    Status last = Status::error(Errc::kNotFound, "topic {} has no broker", topic);
    for (const auto& bd : route.broker_datas) {
        // findBrokerAddrByTopic: the master, else any member (slaves know consumers too).
        auto it = bd.broker_addrs.find(0);
        if (it == bd.broker_addrs.end()) {
            it = bd.broker_addrs.begin();
        }
        if (it == bd.broker_addrs.end()) {
            continue;
        }
        protocol::GetConsumerListByGroupRequestHeader h;
        h.consumer_group = group;
        auto req = protocol::RemotingCommand::request(Req::kGetConsumerListByGroup);
        h.to_ext(req);
        auto resp = inst.invoke(it->second, std::move(req));
        if (!resp.is_ok()) {
            last = resp.status();
            continue;
        }
        if (resp->code != RC::kSuccess) {
            last = response_error("get consumer list", *resp);
            continue;
        }
        COMET_ASSIGN_OR_RETURN(auto body, protocol::ConsumerListBody::decode(resp->body));
        return body.consumer_id_list;
    }
    return last;
}

Status send_message_back(MqClientInstance& inst, const std::string& group, const MessageExt& msg,
                         const std::string& broker_name, int32_t delay_level,
                         int32_t max_reconsume_times) {
    protocol::ConsumerSendMsgBackRequestHeader h;
    h.offset = msg.commit_log_offset;
    h.group = group;
    h.delay_level = delay_level;
    h.origin_msg_id = msg.unique_id();
    h.origin_topic = msg.topic;
    h.unit_mode = false;
    h.max_reconsume_times = max_reconsume_times;
    auto req = protocol::RemotingCommand::request(Req::kConsumerSendMsgBack);
    h.to_ext(req);
    COMET_ASSIGN_OR_RETURN(auto addr, master_addr(inst, broker_name, msg.topic));
    COMET_ASSIGN_OR_RETURN(auto resp, inst.invoke(addr, std::move(req)));
    if (resp.code != RC::kSuccess) {
        return response_error("send message back", resp);
    }
    return Status::ok();
}

Result<std::set<MessageQueue>> lock_batch_mq(MqClientInstance& inst, const std::string& group,
                                             const std::string& broker_name,
                                             const std::set<MessageQueue>& mqs) {
    if (mqs.empty()) {
        return std::set<MessageQueue>{};
    }
    protocol::LockBatchRequestBody body;
    body.consumer_group = group;
    body.client_id = inst.client_id();
    body.mq_set = mqs;
    auto req = protocol::RemotingCommand::request(Req::kLockBatchMq);
    req.body = body.encode();
    COMET_ASSIGN_OR_RETURN(auto addr, master_addr(inst, broker_name, mqs.begin()->topic));
    COMET_ASSIGN_OR_RETURN(auto resp, inst.invoke(addr, std::move(req)));
    if (resp.code != RC::kSuccess) {
        return response_error("lock batch mq", resp);
    }
    COMET_ASSIGN_OR_RETURN(auto locked, protocol::LockBatchResponseBody::decode(resp.body));
    return locked.lock_ok_mq_set;
}

Status unlock_batch_mq(MqClientInstance& inst, const std::string& group,
                       const std::string& broker_name, const std::set<MessageQueue>& mqs) {
    if (mqs.empty()) {
        return Status::ok();
    }
    protocol::UnlockBatchRequestBody body;
    body.consumer_group = group;
    body.client_id = inst.client_id();
    body.mq_set = mqs;
    auto req = protocol::RemotingCommand::request(Req::kUnlockBatchMq);
    req.body = body.encode();
    COMET_ASSIGN_OR_RETURN(auto addr, master_addr(inst, broker_name, mqs.begin()->topic));
    COMET_ASSIGN_OR_RETURN(auto resp, inst.invoke(addr, std::move(req)));
    if (resp.code != RC::kSuccess) {
        return response_error("unlock batch mq", resp);
    }
    return Status::ok();
}

}  // namespace comet::client
