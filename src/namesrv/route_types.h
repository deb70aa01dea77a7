#pragma once
// The route records the NameServer keeps and answers with are protocol's bodies
// (protocol/route_bodies.h: DataVersion, TopicConfig, QueueData, BrokerData, TopicRouteData,
// ClusterInfo, BrokerMemberGroup), coded by the same codec on the wire; this header names them in
// comet::namesrv, with the name server's own ids.

#include <cstdint>

#include "protocol/route_bodies.h"

namespace comet::namesrv {

// MixAll.MASTER_ID: brokerId 0 is the master of a broker group.
inline constexpr int64_t kMasterId = 0;

// Identifies the connection a broker registered over, so a closed connection can unregister it.
// 0 = unknown (requests not tied to a connection, tests).
using ChannelId = uint64_t;

using protocol::BrokerData;
using protocol::BrokerMemberGroup;
using protocol::ClusterInfo;
using protocol::DataVersion;
using protocol::QueueData;
using protocol::TopicConfig;
using protocol::TopicRouteData;

}  // namespace comet::namesrv
