#include "container/broker_container_processor.h"

#include <spdlog/spdlog.h>

#include "protocol/admin_headers.h"
#include "protocol/json_body.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::container {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using protocol::RemotingCommand;

void BrokerContainerProcessor::process(const net::ConnectionPtr& conn, RemotingCommand request,
                                       net::Responder respond) {
    switch (request.code) {
        case Req::kAddBroker:
            respond(add_broker(conn, request));
            return;
        case Req::kRemoveBroker:
            respond(remove_broker(conn, request));
            return;
        case Req::kGetBrokerConfig:
            respond(get_broker_config(request));
            return;
        default:
            respond(RemotingCommand::response_to(
                request, RC::kRequestCodeNotSupported,
                fmt::format("request code {} is not supported by the broker container (it "
                            "answers ADD_BROKER, REMOVE_BROKER and GET_BROKER_CONFIG; send "
                            "broker requests to the broker's own port)",
                            request.code)));
            return;
    }
}

RemotingCommand BrokerContainerProcessor::add_broker(const net::ConnectionPtr& conn,
                                                     const RemotingCommand& req) {
    auto header = protocol::AddBrokerRequestHeader::from_ext(req);
    if (!header.is_ok()) {
        return RemotingCommand::response_to(req, RC::kSystemError, header.status().message());
    }
    const std::string path = header->config_path.value_or("");
    spdlog::info("addBroker called by {} for {}", conn->remote_address(), path);
    if (path.empty()) {
        return RemotingCommand::response_to(req, RC::kSystemError,
                                            "addBroker config path is empty");
    }
    auto added = container_.add_broker(path);
    if (!added.is_ok()) {
        spdlog::error("addBroker {} failed: {}", path, added.status().message());
        return RemotingCommand::response_to(req, RC::kSystemError, added.status().message());
    }
    return RemotingCommand::response_to(req, RC::kSuccess);
}

RemotingCommand BrokerContainerProcessor::remove_broker(const net::ConnectionPtr& conn,
                                                        const RemotingCommand& req) {
    auto header = protocol::RemoveBrokerRequestHeader::from_ext(req);
    if (!header.is_ok()) {
        return RemotingCommand::response_to(req, RC::kSystemError, header.status().message());
    }
    const InstanceIdentity id{header->broker_cluster_name, header->broker_name, header->broker_id};
    spdlog::info("removeBroker called by {} for {}", conn->remote_address(), id.to_string());
    Status st = container_.remove_broker(id);
    if (st.code() == Errc::kNotFound) {
        return RemotingCommand::response_to(req, RC::kBrokerNotExist, "Broker not exist");
    }
    if (!st.is_ok()) {
        return RemotingCommand::response_to(req, RC::kSystemError, st.message());
    }
    return RemotingCommand::response_to(req, RC::kSuccess);
}

RemotingCommand BrokerContainerProcessor::get_broker_config(const RemotingCommand& req) {
    RemotingCommand resp = RemotingCommand::response_to(req, RC::kSuccess);
    resp.body = container_config_text(container_.config());
    protocol::JsonWriter w;
    w.begin_object()
        .member("counter", int64_t{0})  // the container's settings never change at run time
        .member("stateVersion", int64_t{0})
        .member("timestamp", start_millis_)
        .end_object();
    protocol::GetBrokerConfigResponseHeader rh;
    rh.version = w.take();
    rh.to_ext(resp);
    return resp;
}

}  // namespace comet::container
