#include "namesrv/min_broker_id_notifier.h"

#include "protocol/request_code.h"

namespace comet::namesrv {

protocol::RemotingCommand make_min_broker_id_change_request(const MinBrokerIdChange& change) {
    NotifyMinBrokerIdChangeRequestHeader h;
    h.min_broker_id = change.min_broker_id;
    h.broker_name = change.broker_name;
    h.min_broker_addr = change.min_broker_addr;
    if (!change.offline_broker_addr.empty()) {
        h.offline_broker_addr = change.offline_broker_addr;
    }
    if (!change.ha_broker_addr.empty()) {
        h.ha_broker_addr = change.ha_broker_addr;
    }
    auto req = protocol::RemotingCommand::request(protocol::RequestCode::kNotifyMinBrokerIdChange);
    req.language = protocol::LanguageCode::kJava;
    req.flag |= protocol::kFlagOneway;
    h.to_ext(req);
    return req;
}

}  // namespace comet::namesrv
