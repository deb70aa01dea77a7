#pragma once
// JSON (and compressed) wire forms of the name server's bodies, over the route records of
// route_types.h. Output follows fastjson's shape: keys sorted, nulls omitted, no whitespace.
// Input is parsed leniently (fastjson's unquoted integer keys {0:"a"} accepted, reference §3).
// Pure functions.
//
// Formats (docs/formats/namesrv-bodies.md):
//   RegisterBrokerBody  {"filterServerList":[..],"topicConfigSerializeWrapper":{"dataVersion":
//                        {...},"topicConfigTable":{"T":{TopicConfig}}}}
//   compressed body     zlib stream: int32 len + DataVersion JSON, int32 n, n x (int32 len +
//                        "name read write perm filterType [attributesJson]"), int32 len +
//                        filterServerList JSON, [broker version >= 413: int32 n + n x (int32 len +
//                        TopicQueueMappingInfo JSON), skipped]. Integers big-endian.
//   TopicRouteData      {"brokerDatas":[..],"filterServerTable":{},"orderTopicConf":..,
//                        "queueDatas":[..]}; brokerAddrs keys quoted or not, see RouteKeyStyle.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "namesrv/route_types.h"

namespace comet::namesrv {

// Decoded RegisterBrokerBody.
struct RegisterBrokerBody {
    DataVersion data_version;
    std::map<std::string, TopicConfig> topic_config_table;
    std::vector<std::string> filter_server_list;
};

// Parses the JSON body. Errors: kInvalidArgument naming the bad member.
Result<RegisterBrokerBody> decode_register_broker_body(std::string_view json);
// Parses the compressed body; `request_version` is the request header's version (the mapping
// section exists from 413 = V5_0_0). Errors: kInvalidArgument / kCorruption naming the part.
Result<RegisterBrokerBody> decode_compressed_register_broker_body(std::string_view data,
                                                                  int32_t request_version);
std::string encode_register_broker_body(const RegisterBrokerBody& body);
// The compressed form, as a RocketMQ 5 broker with compressedRegister=true sends it (used by
// tests and tools; the mapping section is written empty when request_version >= 413).
std::string encode_compressed_register_broker_body(const RegisterBrokerBody& body,
                                                   int32_t request_version);

// How brokerAddrs map keys are written in a route body: fastjson's default unquoted integer keys
// ({0:"a"}), or standard JSON ({"0":"a"}) for requests with version >= 401 (V4_9_4) or
// acceptStandardJsonOnly=true (reference §3 item 4).
enum class RouteKeyStyle { kFastjson, kStandard };
RouteKeyStyle route_key_style(int32_t request_version, bool accept_standard_json_only);

std::string encode_topic_route_data(const TopicRouteData& route, RouteKeyStyle style);
Result<TopicRouteData> decode_topic_route_data(std::string_view json);

// {"brokerAddrTable":{"b":{BrokerData}},"clusterAddrTable":{"c":["b"]}} (standard JSON keys).
std::string encode_cluster_info(const ClusterInfo& info);
Result<ClusterInfo> decode_cluster_info(std::string_view json);

// {"topicList":["a","b"]}
// TopicList {"brokerAddr":..., "topicList":[...]}; brokerAddr is left out when empty (null in
// Java).
std::string encode_topic_list(const std::vector<std::string>& topics,
                              const std::string& broker_addr = {});

// {"brokerMemberGroup":{"brokerAddrs":{"0":"a"},"brokerName":"b","cluster":"c"}}
std::string encode_broker_member_group(const BrokerMemberGroup& group);

// {"counter":1,"stateVersion":0,"timestamp":1700000000000}
std::string encode_data_version(const DataVersion& v);
Result<DataVersion> decode_data_version(std::string_view json);

// KVTable {"table":{"k":"v"}}
std::string encode_kv_table(const std::map<std::string, std::string>& table);
Result<std::map<std::string, std::string>> decode_kv_table(std::string_view json);

}  // namespace comet::namesrv
