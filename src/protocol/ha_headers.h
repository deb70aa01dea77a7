#pragma once
// Typed headers of the replication-related RPCs (reference §7.2): BROKER_HEARTBEAT (904, to the
// name server and the controller), EXCHANGE_BROKER_HA_INFO (906), and the controller RPCs
// 1001-1013. Bodies (SyncStateSet, ElectMasterResponseBody) are in ha_bodies.h.

#include <optional>
#include <string>

#include "protocol/header_codec.h"

namespace comet::protocol {

struct BrokerHeartbeatRequestHeader {
    std::string cluster_name;
    std::string broker_addr;
    std::string broker_name;
    std::optional<int64_t> broker_id;  // required by the controller (else INVALID_REQUEST)
    std::optional<int32_t> epoch;
    std::optional<int64_t> max_offset;
    std::optional<int64_t> confirm_offset;
    std::optional<int64_t> heartbeat_timeout_mills;
    std::optional<int32_t> election_priority;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("clusterName", s.cluster_name);
        v.required("brokerAddr", s.broker_addr);
        v.required("brokerName", s.broker_name);
        v.optional("brokerId", s.broker_id);
        v.optional("epoch", s.epoch);
        v.optional("maxOffset", s.max_offset);
        v.optional("confirmOffset", s.confirm_offset);
        v.optional("heartbeatTimeoutMills", s.heartbeat_timeout_mills);
        v.optional("electionPriority", s.election_priority);
    }
    COMET_EXT_HEADER(BrokerHeartbeatRequestHeader)
};

// EXCHANGE_BROKER_HA_INFO (906): request and response carry the same optional fields.
struct ExchangeHaInfoHeader {
    std::optional<std::string> master_ha_address;
    std::optional<int64_t> master_flush_offset;
    std::optional<std::string> master_address;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("masterHaAddress", s.master_ha_address);
        v.optional("masterFlushOffset", s.master_flush_offset);
        v.optional("masterAddress", s.master_address);
    }
    COMET_EXT_HEADER(ExchangeHaInfoHeader)
};

// CONTROLLER_GET_NEXT_BROKER_ID (1012) request; also the CONTROLLER_APPLY_BROKER_ID response.
struct ControllerBrokerNameHeader {
    std::optional<std::string> cluster_name;
    std::optional<std::string> broker_name;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("clusterName", s.cluster_name);
        v.optional("brokerName", s.broker_name);
    }
    COMET_EXT_HEADER(ControllerBrokerNameHeader)
};
using GetNextBrokerIdRequestHeader = ControllerBrokerNameHeader;
using ApplyBrokerIdResponseHeader = ControllerBrokerNameHeader;

struct GetNextBrokerIdResponseHeader {
    std::optional<std::string> cluster_name;
    std::optional<std::string> broker_name;
    std::optional<int64_t> next_broker_id;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("clusterName", s.cluster_name);
        v.optional("brokerName", s.broker_name);
        v.optional("nextBrokerId", s.next_broker_id);
    }
    COMET_EXT_HEADER(GetNextBrokerIdResponseHeader)
};

struct ApplyBrokerIdRequestHeader {
    std::optional<std::string> cluster_name;
    std::optional<std::string> broker_name;
    std::optional<int64_t> applied_broker_id;
    std::optional<std::string> register_check_code;  // "<brokerAddr>;<currentTimeMillis>"

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("clusterName", s.cluster_name);
        v.optional("brokerName", s.broker_name);
        v.optional("appliedBrokerId", s.applied_broker_id);
        v.optional("registerCheckCode", s.register_check_code);
    }
    COMET_EXT_HEADER(ApplyBrokerIdRequestHeader)
};

// CONTROLLER_REGISTER_BROKER (1003), 5.1.4+ form.
struct RegisterBrokerToControllerRequestHeader {
    std::optional<std::string> cluster_name;
    std::optional<std::string> broker_name;
    std::optional<int64_t> broker_id;
    std::optional<std::string> broker_address;
    std::optional<int64_t> invoke_time;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("clusterName", s.cluster_name);
        v.optional("brokerName", s.broker_name);
        v.optional("brokerId", s.broker_id);
        v.optional("brokerAddress", s.broker_address);
        v.optional("invokeTime", s.invoke_time);
    }
    COMET_EXT_HEADER(RegisterBrokerToControllerRequestHeader)
};

// Master view returned by REGISTER_BROKER (1003), ELECT_MASTER (1002) and GET_REPLICA_INFO (1004);
// fields absent when no master is known.
struct ControllerMasterInfoHeader {
    std::optional<std::string> cluster_name;
    std::optional<std::string> broker_name;
    std::optional<int64_t> master_broker_id;
    std::optional<std::string> master_address;
    std::optional<int32_t> master_epoch;
    std::optional<int32_t> sync_state_set_epoch;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("clusterName", s.cluster_name);
        v.optional("brokerName", s.broker_name);
        v.optional("masterBrokerId", s.master_broker_id);
        v.optional("masterAddress", s.master_address);
        v.optional("masterEpoch", s.master_epoch);
        v.optional("syncStateSetEpoch", s.sync_state_set_epoch);
    }
    COMET_EXT_HEADER(ControllerMasterInfoHeader)
};
using RegisterBrokerToControllerResponseHeader = ControllerMasterInfoHeader;
using ElectMasterResponseHeader = ControllerMasterInfoHeader;
using GetReplicaInfoResponseHeader = ControllerMasterInfoHeader;

struct ElectMasterRequestHeader {
    std::string cluster_name;
    std::string broker_name;
    int64_t broker_id = -1;  // -1: election triggered by the controller itself
    bool designate_elect = false;
    std::optional<int64_t> invoke_time;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("clusterName", s.cluster_name);
        v.required("brokerName", s.broker_name);
        v.required("brokerId", s.broker_id);
        v.required("designateElect", s.designate_elect);
        v.optional("invokeTime", s.invoke_time);
    }
    COMET_EXT_HEADER(ElectMasterRequestHeader)
};

// CONTROLLER_ALTER_SYNC_STATE_SET (1001); body SyncStateSet.
struct AlterSyncStateSetRequestHeader {
    std::optional<std::string> broker_name;
    std::optional<int64_t> master_broker_id;
    std::optional<int32_t> master_epoch;
    std::optional<int64_t> invoke_time;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("brokerName", s.broker_name);
        v.optional("masterBrokerId", s.master_broker_id);
        v.optional("masterEpoch", s.master_epoch);
        v.optional("invokeTime", s.invoke_time);
    }
    COMET_EXT_HEADER(AlterSyncStateSetRequestHeader)
};

struct AlterSyncStateSetResponseHeader {
    int32_t new_sync_state_set_epoch = 0;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("newSyncStateSetEpoch", s.new_sync_state_set_epoch);
    }
    COMET_EXT_HEADER(AlterSyncStateSetResponseHeader)
};

struct GetReplicaInfoRequestHeader {
    std::optional<std::string> broker_name;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("brokerName", s.broker_name);
    }
    COMET_EXT_HEADER(GetReplicaInfoRequestHeader)
};

// CONTROLLER_GET_METADATA_INFO (1005) response.
struct GetMetaDataResponseHeader {
    std::optional<std::string> group;
    std::optional<std::string> controller_leader_id;
    std::optional<std::string> controller_leader_address;
    std::optional<bool> is_leader;
    std::optional<std::string> peers;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("group", s.group);
        v.optional("controllerLeaderId", s.controller_leader_id);
        v.optional("controllerLeaderAddress", s.controller_leader_address);
        v.optional("isLeader", s.is_leader);
        v.optional("peers", s.peers);
    }
    COMET_EXT_HEADER(GetMetaDataResponseHeader)
};

// NOTIFY_BROKER_ROLE_CHANGED (1008), controller -> broker; body SyncStateSet.
struct NotifyBrokerRoleChangedRequestHeader {
    std::optional<std::string> master_address;
    std::optional<int32_t> master_epoch;
    std::optional<int32_t> sync_state_set_epoch;
    std::optional<int64_t> master_broker_id;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("masterAddress", s.master_address);
        v.optional("masterEpoch", s.master_epoch);
        v.optional("syncStateSetEpoch", s.sync_state_set_epoch);
        v.optional("masterBrokerId", s.master_broker_id);
    }
    COMET_EXT_HEADER(NotifyBrokerRoleChangedRequestHeader)
};

// CLEAN_BROKER_DATA (1011).
struct CleanBrokerDataRequestHeader {
    std::optional<std::string> cluster_name;
    std::string broker_name;
    std::optional<std::string> broker_controller_ids_to_clean;  // ';'-separated
    std::optional<bool> is_clean_living_broker;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("clusterName", s.cluster_name);
        v.required("brokerName", s.broker_name);
        v.optional("brokerControllerIdsToClean", s.broker_controller_ids_to_clean);
        v.optional("isCleanLivingBroker", s.is_clean_living_broker);
    }
    COMET_EXT_HEADER(CleanBrokerDataRequestHeader)
};

}  // namespace comet::protocol
