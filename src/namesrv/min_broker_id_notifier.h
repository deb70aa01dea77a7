#pragma once
// NOTIFY_MIN_BROKER_ID_CHANGE (905) as the name server sends it (RocketMQ 5
// RouteInfoManager#notifyMinBrokerIdChanged): the request header and its construction from a
// MinBrokerIdChange. Pure functions; the controller sends the requests one-way.

#include <optional>
#include <string>

#include "namesrv/route_info_manager.h"
#include "protocol/header_codec.h"
#include "protocol/namesrv_headers.h"
#include "protocol/remoting_command.h"

namespace comet::namesrv {

using protocol::NotifyMinBrokerIdChangeRequestHeader;  // protocol/namesrv_headers.h

// The one-way request for `change` (same for every notified address).
protocol::RemotingCommand make_min_broker_id_change_request(const MinBrokerIdChange& change);

}  // namespace comet::namesrv
