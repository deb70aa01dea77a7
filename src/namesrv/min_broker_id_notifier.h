#pragma once
// NOTIFY_MIN_BROKER_ID_CHANGE (905) as the name server sends it (RocketMQ 5
// RouteInfoManager#notifyMinBrokerIdChanged): the request header and its construction from a
// MinBrokerIdChange. Pure functions; the controller sends the requests one-way.

#include <optional>
#include <string>

#include "namesrv/route_info_manager.h"
#include "protocol/header_codec.h"
#include "protocol/remoting_command.h"

namespace comet::namesrv {

// Java NotifyMinBrokerIdChangeRequestHeader.
struct NotifyMinBrokerIdChangeRequestHeader {
    int64_t min_broker_id = kMasterId;
    std::optional<std::string> broker_name;
    std::optional<std::string> min_broker_addr;
    std::optional<std::string> offline_broker_addr;
    std::optional<std::string> ha_broker_addr;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("minBrokerId", s.min_broker_id);
        v.optional("brokerName", s.broker_name);
        v.optional("minBrokerAddr", s.min_broker_addr);
        v.optional("offlineBrokerAddr", s.offline_broker_addr);
        v.optional("haBrokerAddr", s.ha_broker_addr);
    }
    COMET_EXT_HEADER(NotifyMinBrokerIdChangeRequestHeader)
};

// The one-way request for `change` (same for every notified address).
protocol::RemotingCommand make_min_broker_id_change_request(const MinBrokerIdChange& change);

}  // namespace comet::namesrv
