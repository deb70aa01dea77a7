#include "broker/processor/reply_message_processor.h"

#include <spdlog/spdlog.h>

#include <memory>
#include <random>

#include "broker/processor/broker_processors.h"
#include "protocol/message_decoder.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"
#include "protocol/send_headers.h"

namespace comet::broker {

using protocol::RemotingCommand;
namespace RC = protocol::ResponseCode;
namespace Req = protocol::RequestCode;

namespace {

constexpr std::string_view kReplyToClient = "REPLY_TO_CLIENT";  // PROPERTY_MESSAGE_REPLY_TO_CLIENT
constexpr std::string_view kPushReplyTime = "PUSH_REPLY_TIME";  // PROPERTY_PUSH_REPLY_TIME

void add_region(const BrokerConfig& cfg, RemotingCommand* resp) {
    resp->set_ext("MSG_REGION", cfg.region_id);
    resp->set_ext("TRACE_ON", cfg.trace_on ? "true" : "false");
}

// Decode: the header is SEND_MESSAGE's (324) or SEND_MESSAGE_V2's short form (325).
Result<protocol::SendMessageRequestHeader> decode_reply_header(RemotingCommand& req) {
    const int32_t code = req.code;
    req.code = code == Req::kSendReplyMessageV2 ? Req::kSendMessageV2 : Req::kSendMessage;
    auto header_r = protocol::decode_send_message_header(req);
    req.code = code;
    return header_r;
}

// Answers a refused reply, with MSG_REGION and TRACE_ON.
void refuse_reply(const RemotingCommand& req, const BrokerConfig& cfg, const Reply& reply,
                  Refusal refusal) {
    RemotingCommand resp = make_response(req, refusal.code, std::move(refusal.remark));
    add_region(cfg, &resp);
    reply(std::move(resp), {});
}

// Check: the broker takes sends now and the topic's name may be sent to.
std::optional<Refusal> check_reply_accepted(const BrokerConfig& cfg, const std::string& topic,
                                            int64_t now) {
    if (cfg.start_accept_send_request_time_stamp > now) {
        return Refusal{RC::kSystemError, fmt::format("broker unable to service, until {}",
                                                     cfg.start_accept_send_request_time_stamp)};
    }
    if (Status st = validate_topic(topic); !st.is_ok()) {
        return Refusal{RC::kSystemError, st.message()};
    }
    if (is_not_allowed_send_topic(topic)) {
        return Refusal{RC::kNoPermission,
                       fmt::format("Sending message to topic[{}] is forbidden.", topic)};
    }
    return std::nullopt;
}

// Route: the reply's topic (created from its default topic on first use) and its queue (a
// random writable one for a negative queueId).
std::optional<Refusal> route_reply(BrokerContext& ctx, const RequestContext& rc,
                                   const protocol::SendMessageRequestHeader& h, int32_t* queue_id) {
    auto topic_cfg = ctx.topics->select(h.topic);
    if (!topic_cfg) {
        auto created =
            ctx.topics->create_in_send(h.topic, h.default_topic, h.default_topic_queue_nums, 0);
        if (created.created && ctx.on_topics_changed) {
            ctx.on_topics_changed();
        }
        topic_cfg = created.config;
    }
    if (!topic_cfg) {
        return Refusal{RC::kTopicNotExist, fmt::format("topic[{}] not exist, apply first please! "
                                                       "http://rocketmq.apache.org/docs/faq/",
                                                       h.topic)};
    }
    if (h.queue_id >= std::max(topic_cfg->write_queue_nums, topic_cfg->read_queue_nums)) {
        return Refusal{RC::kSystemError,
                       fmt::format("request queueId[{}] is illegal, topic {} Producer: {}",
                                   h.queue_id, h.topic, rc.remote_address)};
    }
    *queue_id = h.queue_id;
    if (*queue_id < 0) {
        thread_local std::mt19937 gen(std::random_device{}());
        *queue_id = static_cast<int32_t>(
            gen() % static_cast<uint32_t>(std::max(1, topic_cfg->write_queue_nums)));
    }
    return std::nullopt;
}

// The reply as the message to store and push; its body is moved out of `req`.
std::shared_ptr<protocol::MessageExt> reply_message(BrokerContext& ctx, const RequestContext& rc,
                                                    const protocol::SendMessageRequestHeader& h,
                                                    int32_t queue_id, RemotingCommand* req) {
    auto msg = std::make_shared<protocol::MessageExt>();
    msg->topic = h.topic;
    msg->queue_id = queue_id;
    msg->flag = h.flag;
    msg->sys_flag = h.sys_flag;
    msg->born_timestamp = h.born_timestamp;
    if (auto born = protocol::parse_host_address(rc.remote_address); born.is_ok()) {
        msg->born_host = born.value();
    }
    msg->store_host = ctx.store->store_host();
    msg->reconsume_times = h.reconsume_times.value_or(0);
    if (h.properties) {
        msg->properties = protocol::string_to_message_properties(*h.properties);
    }
    msg->body = std::move(req->body);
    req->body.clear();
    return msg;
}

// storeReplyMessageEnable (default true).
bool store_reply_enabled(const BrokerConfig& cfg) {
    auto it = cfg.extra.find("storeReplyMessageEnable");
    return it == cfg.extra.end() || it->second != "false";
}

// Complete: the answer to the replying consumer. SUCCESS when the push was acknowledged, else
// SYSTEM_ERROR with `remark`; the header names the stored message (`put`, null when not
// stored: msgId "0").
void answer_reply(const RemotingCommand& req, const Reply& reply, int32_t queue_id, bool push_ok,
                  const std::string& remark, const BrokerConfig& cfg,
                  const store::PutMessageResult* put) {
    RemotingCommand resp =
        push_ok ? make_response(req, RC::kSuccess) : make_response(req, RC::kSystemError, remark);
    protocol::SendMessageResponseHeader rh;
    rh.msg_id = "0";  // Java: "set to zero to avoid client decoding exception"
    rh.queue_id = queue_id;
    rh.queue_offset = 0;
    if (put != nullptr && store::is_stored(put->status)) {
        rh.msg_id = put->append.msg_id;
        rh.queue_offset = put->append.logics_offset.value();
    }
    if (push_ok || (put != nullptr && store::is_stored(put->status))) {
        rh.msg_region = cfg.region_id;
        rh.trace_on = cfg.trace_on ? "true" : "false";
        rh.to_ext(resp);
    } else {
        add_region(cfg, &resp);
    }
    reply(std::move(resp), {});
}

// What follows the push (or its failure): the reply is stored (storeReplyMessageEnable) and the
// consumer answered. Copied into the push's callback; of the request it keeps only the header.
struct ReplyFinish {
    BrokerContext* ctx;
    RemotingCommand req;  // its body moved into `msg`
    Reply reply;
    std::shared_ptr<protocol::MessageExt> msg;
    int32_t queue_id;
    bool store_reply;
    BrokerConfig cfg;

    void operator()(bool push_ok, std::string remark) const {
        auto answer = [req = req, reply = reply, queue_id = queue_id, push_ok, remark,
                       cfg = cfg](const store::PutMessageResult* put) {
            answer_reply(req, reply, queue_id, push_ok, remark, cfg, put);
        };
        if (!store_reply) {
            answer(nullptr);
            return;
        }
        // Through the broker's write port: in DLedger mode the reply is named in the answer
        // only once a majority committed it.
        MessageStorePort& port = ctx->writes();
        port.put_message(*msg, [answer, &port](store::PutMessageResult r) {
            if (!port.put_acknowledged(r.status)) {
                spdlog::warn("reply message not stored: {} {}",
                             store::put_message_status_name(r.status), r.remark);
                answer(nullptr);
                return;
            }
            answer(&r);
        });
    }
};

// PUSH_REPLY_MESSAGE_TO_CLIENT with its ReplyMessageRequestHeader, carrying the reply.
RemotingCommand reply_push_request(const RequestContext& rc,
                                   const protocol::SendMessageRequestHeader& h,
                                   const BrokerConfig& cfg, const protocol::MessageExt& msg,
                                   Clock& clock) {
    RemotingCommand push = RemotingCommand::request(Req::kPushReplyMessageToClient);
    push.language = protocol::LanguageCode::kJava;
    push.set_ext("producerGroup", h.producer_group);
    push.set_ext("topic", h.topic);
    push.set_ext("defaultTopic", h.default_topic);
    push.set_ext("defaultTopicQueueNums", std::to_string(h.default_topic_queue_nums));
    push.set_ext("queueId", std::to_string(h.queue_id));
    push.set_ext("sysFlag", std::to_string(h.sys_flag));
    push.set_ext("bornTimestamp", std::to_string(h.born_timestamp));
    push.set_ext("flag", std::to_string(h.flag));
    push.set_ext("properties", protocol::message_properties_to_string(msg.properties));
    push.set_ext("reconsumeTimes", std::to_string(h.reconsume_times.value_or(0)));
    push.set_ext("unitMode", h.unit_mode.value_or(false) ? "true" : "false");
    push.set_ext("bornHost", rc.remote_address);
    push.set_ext("storeHost", cfg.broker_addr());
    push.set_ext("storeTimestamp", std::to_string(clock.wall_millis()));
    push.body = msg.body;
    return push;
}

// Append: pushes the reply to the requesting producer named by REPLY_TO_CLIENT (its clientId in
// the producer table); `finish` runs with the outcome, now or from the push's callback (10 s).
void push_reply(BrokerContext& ctx, const RequestContext& rc,
                const protocol::SendMessageRequestHeader& h, const BrokerConfig& cfg,
                protocol::MessageExt& msg, const ReplyFinish& finish) {
    const std::string* sender = msg.property(kReplyToClient);
    if (sender == nullptr) {
        finish(false, fmt::format("reply message properties[{}] is null", kReplyToClient));
        return;
    }
    std::optional<ClientChannelInfo> target;
    if (ctx.producers != nullptr) {
        target = ctx.producers->find_by_client_id(*sender);
    }
    net::ConnectionPtr conn;
    if (target && ctx.find_channel) {
        conn = ctx.find_channel(target->channel);
    }
    if (conn == nullptr) {
        finish(false, fmt::format("push reply message fail, channel of <{}> not found.", *sender));
        return;
    }
    msg.set_property(kPushReplyTime, std::to_string(ctx.clock->wall_millis()));
    conn->invoke_async(
        reply_push_request(rc, h, cfg, msg, *ctx.clock), std::chrono::milliseconds(10000),
        [finish, who = *sender](Result<RemotingCommand> r) {
            const bool ok = r.is_ok() && r->code == RC::kSuccess;
            finish(ok, ok ? std::string() : "push reply message to " + who + "fail.");
        });
}

}  // namespace

void ReplyMessageProcessor::process(const RequestContext& rc, RemotingCommand req,
                                    const Reply& reply) {
    const BrokerConfig cfg = ctx_.config->get();
    auto header_r = decode_reply_header(req);
    if (!header_r.is_ok()) {
        reply_code(reply, req, RC::kSystemError, header_r.status().message());
        return;
    }
    const protocol::SendMessageRequestHeader h = std::move(header_r).value();
    if (auto no = check_reply_accepted(cfg, h.topic, ctx_.clock->wall_millis())) {
        refuse_reply(req, cfg, reply, std::move(*no));
        return;
    }
    int32_t queue_id = 0;
    if (auto no = route_reply(ctx_, rc, h, &queue_id)) {
        refuse_reply(req, cfg, reply, std::move(*no));
        return;
    }
    auto msg = reply_message(ctx_, rc, h, queue_id, &req);
    const ReplyFinish finish{&ctx_, req, reply, msg, queue_id, store_reply_enabled(cfg), cfg};
    push_reply(ctx_, rc, h, cfg, *msg, finish);
}

}  // namespace comet::broker
