// GET_PRODUCER_CONNECTION_LIST (204): the producers of a group as the heartbeats registered them
// (Java AdminBrokerProcessor#getProducerConnectionList). Kept apart so the producer table can
// change without touching the other client admin requests.

#include "broker/processor/broker_processors.h"
#include "broker/processor/client_admin_processor.h"
#include "protocol/json_body.h"
#include "protocol/response_code.h"

namespace comet::broker {

protocol::RemotingCommand producer_connection_list(BrokerContext& ctx,
                                                   const protocol::RemotingCommand& req) {
    namespace RC = protocol::ResponseCode;
    const std::string* group = req.ext("producerGroup");
    if (group == nullptr) {
        return make_response(req, RC::kSystemError, "the custom field producerGroup is null");
    }
    const std::vector<ClientChannelInfo> channels = ctx.producers != nullptr
                                                        ? ctx.producers->channels(*group)
                                                        : std::vector<ClientChannelInfo>{};
    if (channels.empty()) {
        return make_response(req, RC::kSystemError,
                             fmt::format("the producer group[{}] not exist", *group));
    }
    protocol::JsonWriter w;
    w.begin_object().key("connectionSet").begin_array();
    for (const ClientChannelInfo& ch : channels) {
        std::string client_addr;
        if (ctx.find_channel) {
            if (auto conn = ctx.find_channel(ch.channel)) {
                client_addr = conn->remote_address();
            }
        }
        w.raw(connection_json(ch, client_addr));
    }
    w.end_array().end_object();
    protocol::RemotingCommand resp = make_response(req, RC::kSuccess);
    resp.body = w.take();
    return resp;
}

}  // namespace comet::broker
