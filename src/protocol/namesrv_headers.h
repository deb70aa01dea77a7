#pragma once
// Typed headers of the name server RPCs (reference §4.1): REGISTER/UNREGISTER_BROKER,
// GET_ROUTEINFO_BY_TOPIC, KV config, QUERY_DATA_VERSION, GET_BROKER_MEMBER_GROUP,
// DELETE_TOPIC_IN_NAMESRV. BROKER_HEARTBEAT (904) is in ha_headers.h (shared with the controller).

#include <optional>
#include <string>

#include "protocol/header_codec.h"

namespace comet::protocol {

struct RegisterBrokerRequestHeader {
    std::string broker_name;
    std::string broker_addr;  // brokerIP1:listenPort
    std::string cluster_name;
    std::string ha_server_addr;  // brokerIP2:haListenPort
    int64_t broker_id = 0;       // 0 = master
    std::optional<int64_t> heartbeat_timeout_millis;
    std::optional<bool> enable_acting_master;  // absent: broker treated as old version
    bool compressed = false;
    int32_t body_crc32 = 0;  // CRC32 of body & 0x7FFFFFFF; 0 = not checked
    std::optional<std::string> zone_name;  // "__ZONE_NAME"

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("brokerName", s.broker_name);
        v.required("brokerAddr", s.broker_addr);
        v.required("clusterName", s.cluster_name);
        v.required("haServerAddr", s.ha_server_addr);
        v.required("brokerId", s.broker_id);
        v.optional("heartbeatTimeoutMillis", s.heartbeat_timeout_millis);
        v.optional("enableActingMaster", s.enable_acting_master);
        v.optional("compressed", s.compressed);
        v.optional("bodyCrc32", s.body_crc32);
        v.optional("__ZONE_NAME", s.zone_name);
    }
    COMET_EXT_HEADER(RegisterBrokerRequestHeader)
};

// Filled only for a slave whose master is alive: where to connect for HA.
struct RegisterBrokerResponseHeader {
    std::optional<std::string> ha_server_addr;
    std::optional<std::string> master_addr;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("haServerAddr", s.ha_server_addr);
        v.optional("masterAddr", s.master_addr);
    }
    COMET_EXT_HEADER(RegisterBrokerResponseHeader)
};

// UNREGISTER_BROKER (104) and QUERY_DATA_VERSION (322) requests.
struct UnRegisterBrokerRequestHeader {
    std::string broker_name;
    std::string broker_addr;
    std::string cluster_name;
    int64_t broker_id = 0;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("brokerName", s.broker_name);
        v.required("brokerAddr", s.broker_addr);
        v.required("clusterName", s.cluster_name);
        v.required("brokerId", s.broker_id);
    }
    COMET_EXT_HEADER(UnRegisterBrokerRequestHeader)
};
using QueryDataVersionRequestHeader = UnRegisterBrokerRequestHeader;

struct QueryDataVersionResponseHeader {
    bool changed = false;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("changed", s.changed);
    }
    COMET_EXT_HEADER(QueryDataVersionResponseHeader)
};

struct GetRouteInfoRequestHeader {
    std::string topic;
    std::optional<bool> accept_standard_json_only;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("topic", s.topic);
        v.optional("acceptStandardJsonOnly", s.accept_standard_json_only);
    }
    COMET_EXT_HEADER(GetRouteInfoRequestHeader)
};

struct PutKvConfigRequestHeader {
    std::string name_space;  // "namespace"
    std::string key;
    std::string value;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("namespace", s.name_space);
        v.required("key", s.key);
        v.required("value", s.value);
    }
    COMET_EXT_HEADER(PutKvConfigRequestHeader)
};

// GET_KV_CONFIG (101) and DELETE_KV_CONFIG (102).
struct KvConfigKeyRequestHeader {
    std::string name_space;
    std::string key;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("namespace", s.name_space);
        v.required("key", s.key);
    }
    COMET_EXT_HEADER(KvConfigKeyRequestHeader)
};
using GetKvConfigRequestHeader = KvConfigKeyRequestHeader;
using DeleteKvConfigRequestHeader = KvConfigKeyRequestHeader;

struct GetKvConfigResponseHeader {
    std::optional<std::string> value;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("value", s.value);
    }
    COMET_EXT_HEADER(GetKvConfigResponseHeader)
};

struct GetKvListByNamespaceRequestHeader {
    std::string name_space;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("namespace", s.name_space);
    }
    COMET_EXT_HEADER(GetKvListByNamespaceRequestHeader)
};

struct GetBrokerMemberGroupRequestHeader {
    std::string cluster_name;
    std::string broker_name;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("clusterName", s.cluster_name);
        v.required("brokerName", s.broker_name);
    }
    COMET_EXT_HEADER(GetBrokerMemberGroupRequestHeader)
};

// NOTIFY_MIN_BROKER_ID_CHANGE (905): name server -> the brokers of a group whose minimum brokerId
// changed (Java NotifyMinBrokerIdChangeRequestHeader).
struct NotifyMinBrokerIdChangeRequestHeader {
    int64_t min_broker_id = 0;
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

struct DeleteTopicFromNamesrvRequestHeader {
    std::string topic;
    std::optional<std::string> cluster_name;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("topic", s.topic);
        v.optional("clusterName", s.cluster_name);
    }
    COMET_EXT_HEADER(DeleteTopicFromNamesrvRequestHeader)
};

}  // namespace comet::protocol
