#pragma once
// The broker's responses (shared by every room that answers a request or maps a put result):
// a response in the request's serialization, and PutMessageStatus -> response code + remark.

#include <cstdint>
#include <optional>
#include <string>

#include "broker/context/broker_context.h"
#include "protocol/remoting_command.h"
#include "store/put_message_status.h"

namespace comet::broker {

// A response to `req` with the request's serialization (RocketMQ 4.9.8 answers in kind).
protocol::RemotingCommand make_response(const protocol::RemotingCommand& req, int32_t code,
                                        std::optional<std::string> remark = std::nullopt);
void reply_code(const Reply& reply, const protocol::RemotingCommand& req, int32_t code,
                std::optional<std::string> remark = std::nullopt);

// PutMessageStatus -> response code + remark (reference §2.3). The one mapping for the broker.
struct PutResponse {
    int32_t code = 0;
    std::optional<std::string> remark;
};
PutResponse map_put_status(const store::PutMessageResult& r);

}  // namespace comet::broker
