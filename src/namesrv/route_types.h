#pragma once
// Plain route records the NameServer keeps and answers with. They mirror RocketMQ's
// DataVersion, TopicConfig, QueueData, BrokerData, TopicRouteData, ClusterInfo and
// BrokerMemberGroup (field names match the JSON property names, see route_json.h).
// Value types, no behaviour beyond equality; thread-compatible.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace comet::namesrv {

// MixAll.MASTER_ID: brokerId 0 is the master of a broker group.
inline constexpr int64_t kMasterId = 0;

// Identifies the connection a broker registered over, so a closed connection can unregister it.
// 0 = unknown (requests not tied to a connection, tests).
using ChannelId = uint64_t;

// Version of a broker's topic configuration (Java DataVersion). A change makes the name server
// refresh the broker's queue data.
struct DataVersion {
    int64_t timestamp = 0;
    int64_t counter = 0;
    int64_t state_version = 0;
    bool operator==(const DataVersion&) const = default;
};

// The subset of TopicConfig the name server uses (plus what it must echo).
struct TopicConfig {
    std::string topic_name;
    int32_t read_queue_nums = 16;
    int32_t write_queue_nums = 16;
    int32_t perm = 6;  // PermName: READ 4 | WRITE 2 | INHERIT 1
    int32_t topic_sys_flag = 0;
    bool order = false;
    std::string topic_filter_type = "SINGLE_TAG";
};

struct QueueData {
    std::string broker_name;
    int32_t read_queue_nums = 0;
    int32_t write_queue_nums = 0;
    int32_t perm = 0;
    int32_t topic_sys_flag = 0;
    bool operator==(const QueueData&) const = default;
};

struct BrokerData {
    std::string cluster;
    std::string broker_name;
    std::map<int64_t, std::string> broker_addrs;  // brokerId -> ip:port; 0 = master
    bool enable_acting_master = false;
    std::optional<std::string> zone_name;
    bool operator==(const BrokerData&) const = default;
};

struct TopicRouteData {
    std::vector<QueueData> queue_datas;    // sorted by brokerName
    std::vector<BrokerData> broker_datas;  // sorted by brokerName
    std::map<std::string, std::vector<std::string>> filter_server_table;  // brokerAddr -> servers
    std::optional<std::string> order_topic_conf;
};

struct ClusterInfo {
    std::map<std::string, BrokerData> broker_addr_table;             // brokerName -> data
    std::map<std::string, std::set<std::string>> cluster_addr_table;  // cluster -> brokerNames
};

struct BrokerMemberGroup {
    std::string cluster;
    std::string broker_name;
    std::map<int64_t, std::string> broker_addrs;
};

}  // namespace comet::namesrv
