#pragma once
// JSON bodies of the name server RPCs (reference §3, §4.1): TopicRouteData, ClusterInfo, TopicList,
// KVTable, TopicConfig(+SerializeWrapper), RegisterBrokerBody (plain JSON and the zlib-compressed
// form), RegisterBrokerResult, BrokerMemberGroup. Each type has
//   void write_json(JsonWriter&) const;  static Result<T> from_json(const JsonValue&);
//   std::string encode() const;          static Result<T> decode(std::string_view body);
// encode() emits standard compact JSON with sorted keys (map keys quoted: {"0":"addr"});
// TopicRouteData::encode(RouteKeyStyle) also writes fastjson's unquoted brokerAddrs keys for old
// clients; decode() is lenient (fastjson unquoted keys). These are the only types and codec of
// these bodies: the broker's topics.json and the name server's tables use them too. Plain values,
// no threads.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "protocol/json_body.h"
#include "protocol/remoting_command.h"

namespace comet::protocol {

// PermName bits.
inline constexpr int32_t kPermPriority = 8;
inline constexpr int32_t kPermRead = 4;
inline constexpr int32_t kPermWrite = 2;
inline constexpr int32_t kPermInherit = 1;
inline bool perm_readable(int32_t p) { return (p & kPermRead) != 0; }
inline bool perm_writeable(int32_t p) { return (p & kPermWrite) != 0; }
inline bool perm_inherit(int32_t p) { return (p & kPermInherit) != 0; }
// Java PermName.perm2String: "RWX" with '-' for an absent bit (priority not shown).
std::string perm_to_string(int32_t perm);

// Java TopicFilterType.
enum class TopicFilterType { kSingleTag, kMultiTag };
std::string_view topic_filter_type_name(TopicFilterType t);  // "SINGLE_TAG" / "MULTI_TAG"
// "MULTI_TAG" -> kMultiTag; any other name reads as the default kSingleTag.
TopicFilterType topic_filter_type_from_name(std::string_view name);

// Java DataVersion: the change counter of a config table ({"counter","stateVersion","timestamp"}).
// The name server refreshes a broker's queue data when it changes; slaves copy a table when it
// differs from the master's. Value type; the owning table guards it with its own mutex.
struct DataVersion {
    int64_t state_version = 0;
    int64_t timestamp = 0;  // wall ms of the last change
    int64_t counter = 0;
    // Java DataVersion#nextVersion: one more change, made at `wall_millis`.
    void next_version(int64_t wall_millis) {
        ++counter;
        timestamp = wall_millis;
    }
    bool operator==(const DataVersion&) const = default;
    COMET_JSON_BODY(DataVersion)
};

// How brokerAddrs map keys are written in a route body: fastjson's default unquoted integer keys
// ({0:"a"}), or standard JSON ({"0":"a"}) for requests with version >= 401 (V4_9_4) or
// acceptStandardJsonOnly=true (reference §3 item 4). encode() / write_json(w) write kStandard.
enum class RouteKeyStyle { kFastjson, kStandard };
RouteKeyStyle route_key_style(int32_t request_version, bool accept_standard_json_only);

struct QueueData {
    std::string broker_name;
    int32_t read_queue_nums = 0;
    int32_t write_queue_nums = 0;
    int32_t perm = 0;
    int32_t topic_sys_flag = 0;
    bool operator==(const QueueData&) const = default;
    COMET_JSON_BODY(QueueData)
};

struct BrokerData {
    std::string cluster;
    std::string broker_name;
    std::map<int64_t, std::string> broker_addrs;  // brokerId -> ip:port; 0 = master
    // 5.x only: 4.9.8 has no such field, so the name server leaves it unset (not written) unless
    // the broker asked for acting master, keeping bodies byte-identical to 4.9.8's.
    std::optional<bool> enable_acting_master;
    std::optional<std::string> zone_name;
    bool operator==(const BrokerData&) const = default;
    COMET_JSON_BODY(BrokerData)
    void write_json(JsonWriter& w, RouteKeyStyle style) const;
};

struct TopicRouteData {
    std::optional<std::string> order_topic_conf;
    std::vector<QueueData> queue_datas;
    std::vector<BrokerData> broker_datas;
    std::map<std::string, std::vector<std::string>> filter_server_table;
    bool operator==(const TopicRouteData&) const = default;
    COMET_JSON_BODY(TopicRouteData)
    void write_json(JsonWriter& w, RouteKeyStyle style) const;
    std::string encode(RouteKeyStyle style) const {
        JsonWriter w;
        write_json(w, style);
        return w.take();
    }
};

struct ClusterInfo {
    std::map<std::string, BrokerData> broker_addr_table;
    std::map<std::string, std::set<std::string>> cluster_addr_table;
    bool operator==(const ClusterInfo&) const = default;
    COMET_JSON_BODY(ClusterInfo)
};

struct TopicList {
    std::vector<std::string> topic_list;
    std::optional<std::string> broker_addr;
    bool operator==(const TopicList&) const = default;
    COMET_JSON_BODY(TopicList)
};

struct KvTable {
    std::map<std::string, std::string> table;
    bool operator==(const KvTable&) const = default;
    COMET_JSON_BODY(KvTable)
};

// Java TopicConfig: one topic's queue counts, permission and filter type, as the broker keeps it
// (topics.json), registers it and answers GET_ALL_TOPIC_CONFIG with.
// JSON: {"attributes":{..},"order","perm","readQueueNums","topicFilterType","topicName",
// "topicSysFlag","writeQueueNums"}; "attributes" (5.x) is written only when not empty, so a
// topic without attributes is byte-identical to RocketMQ 4.9.8's.
struct TopicConfig {
    std::string topic_name;
    int32_t read_queue_nums = 16;
    int32_t write_queue_nums = 16;
    int32_t perm = kPermRead | kPermWrite;
    TopicFilterType topic_filter_type = TopicFilterType::kSingleTag;
    int32_t topic_sys_flag = 0;
    bool order = false;
    std::map<std::string, std::string> attributes;
    bool operator==(const TopicConfig&) const = default;
    COMET_JSON_BODY(TopicConfig)

    // Java TopicConfig#encode/#decode text form used inside the compressed RegisterBrokerBody:
    // "name read write perm filterType" (4.9.8), plus " attributesJson" (5.x) only when there are
    // attributes. decode_text() accepts both.
    std::string encode_text() const;
    static Result<TopicConfig> decode_text(std::string_view text);
};

struct TopicConfigSerializeWrapper {
    std::map<std::string, TopicConfig> topic_config_table;
    DataVersion data_version;
    std::optional<DataVersion> mapping_data_version;  // 5.x TopicConfigAndMappingSerializeWrapper
    bool operator==(const TopicConfigSerializeWrapper&) const = default;
    COMET_JSON_BODY(TopicConfigSerializeWrapper)
};

// Body of REGISTER_BROKER.
struct RegisterBrokerBody {
    TopicConfigSerializeWrapper topic_config_serialize_wrapper;
    std::vector<std::string> filter_server_list;
    bool operator==(const RegisterBrokerBody&) const = default;
    COMET_JSON_BODY(RegisterBrokerBody)

    // Compressed form (header compressed=true): a zlib stream of int32-length-prefixed parts,
    // see docs/formats/json-bodies.md. The static-topic mapping section exists when the
    // request's version is >= 413 (V5_0_0), as in Java RegisterBrokerBody#decode: it is written
    // empty, and its entries are skipped on decode. Errors: kInvalidArgument naming the part.
    std::string encode_compressed(int32_t request_version) const;
    static Result<RegisterBrokerBody> decode_compressed(std::string_view body,
                                                        int32_t request_version);
    // Picks the form from the request header flag.
    static Result<RegisterBrokerBody> decode_body(std::string_view body, bool compressed,
                                                  int32_t request_version);
};

// What the name server answers to REGISTER_BROKER: HA addresses in the header (slave only) and the
// ORDER_TOPIC_CONFIG KVTable as body (may be absent).
struct RegisterBrokerResult {
    std::optional<std::string> ha_server_addr;
    std::optional<std::string> master_addr;
    std::optional<KvTable> kv_table;

    void to_response(RemotingCommand& resp) const;
    static Result<RegisterBrokerResult> from_response(const RemotingCommand& resp);
};

struct BrokerMemberGroup {
    std::string cluster;
    std::string broker_name;
    std::map<int64_t, std::string> broker_addrs;
    bool operator==(const BrokerMemberGroup&) const = default;
    COMET_JSON_BODY(BrokerMemberGroup)
};

// GET_BROKER_MEMBER_GROUP response body.
struct GetBrokerMemberGroupResponseBody {
    BrokerMemberGroup broker_member_group;
    bool operator==(const GetBrokerMemberGroupResponseBody&) const = default;
    COMET_JSON_BODY(GetBrokerMemberGroupResponseBody)
};

}  // namespace comet::protocol
