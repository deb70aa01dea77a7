// The broker's responses: a response in the request's serialization, and the one mapping of
// the store's put statuses to RocketMQ response codes and remarks. Pure functions, any thread.

#include "broker/context/broker_response.h"

#include "protocol/response_code.h"

namespace comet::broker {

using protocol::RemotingCommand;
namespace RC = protocol::ResponseCode;

RemotingCommand make_response(const RemotingCommand& req, int32_t code,
                              std::optional<std::string> remark) {
    RemotingCommand r = RemotingCommand::response_to(req, code, std::move(remark));
    r.serialize_type = req.serialize_type;
    return r;
}

void reply_code(const Reply& reply, const RemotingCommand& req, int32_t code,
                std::optional<std::string> remark) {
    reply(make_response(req, code, std::move(remark)), {});
}

PutResponse map_put_status(const store::PutMessageResult& r) {
    using S = store::PutMessageStatus;
    switch (r.status) {
        case S::kPutOk:
            return {RC::kSuccess, std::nullopt};
        case S::kFlushDiskTimeout:
            return {RC::kFlushDiskTimeout, std::nullopt};
        case S::kFlushSlaveTimeout:
            return {RC::kFlushSlaveTimeout, std::nullopt};
        case S::kSlaveNotAvailable:
            return {RC::kSlaveNotAvailable, std::nullopt};
        case S::kInSyncReplicasNotEnough:
            return {RC::kSystemError, "in-sync replicas not enough"};
        case S::kCreateMappedFileFailed:
            return {RC::kSystemError, "create mapped file failed, server is busy or broken."};
        case S::kMessageIllegal:
        case S::kPropertiesSizeExceeded:
            return {RC::kMessageIllegal,
                    r.remark.empty()
                        ? std::string("the message is illegal, maybe msg body or properties "
                                      "length not matched. msg body length limit 128k, msg "
                                      "properties length limit 32k.")
                        : r.remark};
        case S::kServiceNotAvailable:
            return {RC::kServiceNotAvailable,
                    r.remark.empty() ? std::string("service not available now. It may be caused "
                                                   "by one of the following reasons: the broker's "
                                                   "disk is full, messages are put to the slave, "
                                                   "message store has been shut down, etc.")
                                     : r.remark};
        case S::kOsPageCacheBusy:
            return {RC::kSystemBusy,
                    "[PC_SYNCHRONIZED]broker busy, start flow control for a while"};
        default:
            return {RC::kSystemError,
                    r.remark.empty() ? std::string("UNKNOWN_ERROR") : "UNKNOWN_ERROR: " + r.remark};
    }
}

}  // namespace comet::broker
