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

}  // namespace

void ReplyMessageProcessor::process(const RequestContext& rc, RemotingCommand req,
                                    const Reply& reply) {
    const BrokerConfig cfg = ctx_.config->get();
    auto refuse = [&](int32_t code, std::string remark) {
        RemotingCommand resp = make_response(req, code, std::move(remark));
        add_region(cfg, &resp);
        reply(std::move(resp), {});
    };
    // The header is SEND_MESSAGE's (324) or SEND_MESSAGE_V2's short form (325).
    const int32_t code = req.code;
    req.code = code == Req::kSendReplyMessageV2 ? Req::kSendMessageV2 : Req::kSendMessage;
    auto header_r = protocol::decode_send_message_header(req);
    req.code = code;
    if (!header_r.is_ok()) {
        reply_code(reply, req, RC::kSystemError, header_r.status().message());
        return;
    }
    const protocol::SendMessageRequestHeader h = std::move(header_r).value();
    if (cfg.start_accept_send_request_time_stamp > ctx_.clock->wall_millis()) {
        refuse(RC::kSystemError, fmt::format("broker unable to service, until {}",
                                             cfg.start_accept_send_request_time_stamp));
        return;
    }
    if (Status st = validate_topic(h.topic); !st.is_ok()) {
        refuse(RC::kSystemError, st.message());
        return;
    }
    if (is_not_allowed_send_topic(h.topic)) {
        refuse(RC::kNoPermission,
               fmt::format("Sending message to topic[{}] is forbidden.", h.topic));
        return;
    }
    auto topic_cfg = ctx_.topics->select(h.topic);
    if (!topic_cfg) {
        auto created =
            ctx_.topics->create_in_send(h.topic, h.default_topic, h.default_topic_queue_nums, 0);
        if (created.created && ctx_.on_topics_changed) {
            ctx_.on_topics_changed();
        }
        topic_cfg = created.config;
    }
    if (!topic_cfg) {
        refuse(RC::kTopicNotExist, fmt::format("topic[{}] not exist, apply first please! "
                                               "http://rocketmq.apache.org/docs/faq/",
                                               h.topic));
        return;
    }
    if (h.queue_id >= std::max(topic_cfg->write_queue_nums, topic_cfg->read_queue_nums)) {
        refuse(RC::kSystemError,
               fmt::format("request queueId[{}] is illegal, topic {} Producer: {}", h.queue_id,
                           h.topic, rc.remote_address));
        return;
    }
    int32_t queue_id = h.queue_id;
    if (queue_id < 0) {
        thread_local std::mt19937 gen(std::random_device{}());
        queue_id = static_cast<int32_t>(
            gen() % static_cast<uint32_t>(std::max(1, topic_cfg->write_queue_nums)));
    }

    auto msg = std::make_shared<protocol::MessageExt>();
    msg->topic = h.topic;
    msg->queue_id = queue_id;
    msg->flag = h.flag;
    msg->sys_flag = h.sys_flag;
    msg->born_timestamp = h.born_timestamp;
    if (auto born = protocol::parse_host_address(rc.remote_address); born.is_ok()) {
        msg->born_host = born.value();
    }
    msg->store_host = ctx_.store->store_host();
    msg->reconsume_times = h.reconsume_times.value_or(0);
    if (h.properties) {
        msg->properties = protocol::string_to_message_properties(*h.properties);
    }
    msg->body = std::move(req.body);
    req.body.clear();

    // Store (storeReplyMessageEnable) and answer; `push_ok` / `remark` from the push.
    const bool store_reply = [&] {
        auto it = cfg.extra.find("storeReplyMessageEnable");
        return it == cfg.extra.end() || it->second != "false";
    }();
    auto finish = [this, req, reply, msg, queue_id, store_reply, cfg](bool push_ok,
                                                                      std::string remark) {
        auto answer = [req, reply, queue_id, push_ok, remark,
                       cfg](const store::PutMessageResult* put) {
            RemotingCommand resp = push_ok ? make_response(req, RC::kSuccess)
                                           : make_response(req, RC::kSystemError, remark);
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
        };
        if (!store_reply) {
            answer(nullptr);
            return;
        }
        ctx_.store->put_message(*msg, [answer](store::PutMessageResult r) {
            if (!store::is_stored(r.status)) {
                spdlog::warn("reply message not stored: {}", r.remark);
            }
            answer(&r);
        });
    };

    const std::string* sender = msg->property(kReplyToClient);
    if (sender == nullptr) {
        finish(false, fmt::format("reply message properties[{}] is null", kReplyToClient));
        return;
    }
    std::optional<ClientChannelInfo> target;
    if (ctx_.producers != nullptr) {
        target = ctx_.producers->find_by_client_id(*sender);
    }
    net::ConnectionPtr conn;
    if (target && ctx_.find_channel) {
        conn = ctx_.find_channel(target->channel);
    }
    if (conn == nullptr) {
        finish(false, fmt::format("push reply message fail, channel of <{}> not found.", *sender));
        return;
    }
    msg->set_property(kPushReplyTime, std::to_string(ctx_.clock->wall_millis()));
    // ReplyMessageRequestHeader.
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
    push.set_ext("properties", protocol::message_properties_to_string(msg->properties));
    push.set_ext("reconsumeTimes", std::to_string(h.reconsume_times.value_or(0)));
    push.set_ext("unitMode", h.unit_mode.value_or(false) ? "true" : "false");
    push.set_ext("bornHost", rc.remote_address);
    push.set_ext("storeHost", cfg.broker_addr());
    push.set_ext("storeTimestamp", std::to_string(ctx_.clock->wall_millis()));
    push.body = msg->body;
    conn->invoke_async(std::move(push), std::chrono::milliseconds(10000),
                       [finish, who = *sender](Result<RemotingCommand> r) {
                           const bool ok = r.is_ok() && r->code == RC::kSuccess;
                           finish(ok,
                                  ok ? std::string() : "push reply message to " + who + "fail.");
                       });
}

}  // namespace comet::broker
