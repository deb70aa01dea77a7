#pragma once
// ReplyMessageProcessor: SEND_REPLY_MESSAGE (324) / SEND_REPLY_MESSAGE_V2 (325), the reply half
// of RocketMQ's request-reply (Java ReplyMessageProcessor, 4.9.8). The replying consumer sends
// the reply like a message; the broker pushes it with PUSH_REPLY_MESSAGE_TO_CLIENT (326) to the
// requesting producer named by the REPLY_TO_CLIENT property (its clientId, found in the producer
// table the heartbeats fill), then stores it too (storeReplyMessageEnable, default true).
// Answers: SUCCESS when the push was acknowledged, else SYSTEM_ERROR with Java's remark; the send
// response header names the stored message (msgId "0" when it was not stored), and MSG_REGION /
// TRACE_ON are always present.
// Threads: runs on the SendMessage executor; the push is asynchronous (10 s), and the store put and
// the answer run from its completion, so no thread waits for the requester.

#include "broker/context/broker_context.h"

namespace comet::broker {

class ReplyMessageProcessor {
public:
    explicit ReplyMessageProcessor(BrokerContext& ctx) : ctx_(ctx) {}
    void process(const RequestContext& rc, protocol::RemotingCommand req, const Reply& reply);

private:
    BrokerContext& ctx_;
};

}  // namespace comet::broker
