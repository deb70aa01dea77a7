#pragma once
// ClusterSnapshot: what mqdashboard knows about a cluster after one poll of the name servers and
// brokers: broker groups and their members (role, address, version, up or down), replication
// state seen by each master, topics with their queues and durability contract, consumer groups
// with their lag per queue. Plain values: built by Collector::collect(), read by json_view and
// diffed by ChangeHistory. No I/O, no threads.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace comet::dashboard {

// How a group replicates, read from its members' runtime info.
enum class GroupMode { kMasterSlave, kDLedger, kController };
const char* group_mode_name(GroupMode m);

// One broker process as the dashboard sees it.
struct MemberView {
    int64_t broker_id = -1;  // the name server's brokerId (0 = master); -1 when not registered
    std::string addr;        // ip:port the broker registered
    bool registered = true;  // listed by the name server in this poll
    bool up = false;         // answered GET_BROKER_RUNTIME_INFO in this poll
    std::string error;       // why it is down (transport error), empty when up
    // "MASTER" or "SLAVE": brokerId 0 on the name server, else haBrokerRole / brokerRole.
    std::string role;
    std::string broker_role;   // runtime brokerRole: ASYNC_MASTER, SYNC_MASTER or SLAVE
    std::string dledger_role;  // DLedger mode: Leader, Follower or Candidate; empty otherwise
    std::string dledger_id;    // DLedger mode: dLegerSelfId
    std::string version;       // brokerVersionDesc, e.g. V4_9_8
    double put_tps = 0;        // first figure of putTps (as the broker reports it)
    double get_tps = 0;        // first figure of getTransferedTps
    int64_t max_offset = -1;   // master: masterCommitLogMaxOffset; slave: haClientMaxOffset
    int64_t last_seen_ms = 0;  // wall time of the last answer (0: never answered)
    // Replication as the group's master (or DLedger leader) reports it, for non-masters.
    std::optional<int64_t> lag_bytes;  // master's log end minus this replica's ack
    std::optional<bool> in_sync;       // lag below haMaxGapNotInSync (master-slave)
    bool connected_to_master = false;  // the master lists an HA connection from it
};

struct GroupView {
    std::string cluster;
    std::string broker_name;
    GroupMode mode = GroupMode::kMasterSlave;
    std::vector<MemberView> members;  // by brokerId, then address
    std::string master_addr;          // empty: no master registered / answering
    // From the master's runtime info (absent when no master answered).
    std::optional<int32_t> in_sync_replicas;
    std::optional<int32_t> alive_replicas;
    std::optional<int32_t> need_ack_nums;
    bool degraded = false;
    std::optional<int64_t> master_max_offset;
    std::string sync_state_set;  // controller mode: brokerIds, ','-separated
    std::string dledger_leader;  // DLedger mode: the leader's peer id
};

struct QueueRouteView {
    std::string broker_name;
    int32_t read_queue_nums = 0;
    int32_t write_queue_nums = 0;
    int32_t perm = 0;
};

struct QueueView {
    std::string broker_name;
    int32_t queue_id = 0;
    int64_t min_offset = 0;
    int64_t max_offset = 0;
    int64_t last_update_ms = 0;
};

// ha::explain_durability for one broker group of a topic's route.
struct DurabilityView {
    std::string broker_name;
    std::string master_addr;
    std::string contract;
    std::vector<std::string> reasons;
    std::vector<std::string> warnings;
};

struct TopicView {
    std::string name;
    bool system = false;  // RocketMQ's system topics, cluster and broker names, %RETRY%, %DLQ%
    std::vector<std::string> clusters;
    std::vector<QueueRouteView> routes;
    std::vector<QueueView> queues;
    double put_tps = 0;  // sum of topicPutTps over the route's masters
    std::vector<DurabilityView> durability;
    std::string error;  // route or stats could not be read
};

struct ConsumerQueueView {
    std::string topic;
    std::string broker_name;
    int32_t queue_id = 0;
    int64_t broker_offset = 0;
    int64_t consumer_offset = 0;
    int64_t lag = 0;  // broker_offset - consumer_offset, never below 0
    int64_t last_timestamp_ms = 0;
};

struct ConsumerGroupView {
    std::string group;
    std::vector<ConsumerQueueView> queues;  // by topic, broker, queue id
    int64_t total_lag = 0;
    double consume_tps = 0;
    std::string error;
};

struct ClusterSnapshot {
    uint64_t seq = 0;  // 1 for the first poll
    int64_t taken_at_ms = 0;
    std::string namesrv_error;                       // empty when a name server answered
    std::vector<GroupView> groups;                   // by cluster, then brokerName
    std::vector<TopicView> topics;                   // by name
    std::vector<ConsumerGroupView> consumer_groups;  // by name
};

}  // namespace comet::dashboard
