#pragma once
// BrokerReplicasInfo, the JSON body of CONTROLLER_GET_SYNC_STATE_DATA (1006) (Java
// remoting.protocol.body.BrokerReplicasInfo):
//   {"replicasInfoTable":{"<brokerName>":{"inSyncReplicas":[{"alive":true,"brokerAddress":"..",
//    "brokerId":1,"brokerName":".."}],"masterAddress":"..","masterBrokerId":1,"masterEpoch":2,
//    "notInSyncReplicas":[...],"syncStateSetEpoch":3}}}
// Keys in fastjson's alphabetical order; masterBrokerId/masterAddress omitted when there is no
// master (fastjson skips nulls). Plain values and pure codec functions.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/json_body.h"

namespace comet::controller {

struct ReplicaIdentity {
    std::string broker_name;
    int64_t broker_id = 0;
    std::string broker_address;
    bool alive = false;
    bool operator==(const ReplicaIdentity&) const = default;
};

struct ReplicasInfo {
    std::optional<int64_t> master_broker_id;
    std::optional<std::string> master_address;
    int32_t master_epoch = 0;
    int32_t sync_state_set_epoch = 0;
    std::vector<ReplicaIdentity> in_sync_replicas;
    std::vector<ReplicaIdentity> not_in_sync_replicas;
    bool operator==(const ReplicasInfo&) const = default;
};

struct BrokerReplicasInfo {
    std::map<std::string, ReplicasInfo> replicas_info_table;
    bool operator==(const BrokerReplicasInfo&) const = default;
    COMET_JSON_BODY(BrokerReplicasInfo)
};

}  // namespace comet::controller
