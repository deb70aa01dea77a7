#pragma once
// QuorumPolicy: the pure decision RocketMQ makes for every put on a master before (and right
// after) the CommitLog append: how many replicas (master included) must hold the message
// (needAckNums) and whether the put must wait for slaves, succeed at once or fail at once.
// Two rule sets (QuorumRules): RocketMQ 5's, mirroring Java CommitLog#asyncPutMessage /
// #needHandleHA / #calcNeedAckNums / #handleHA and DefaultHAService#inSyncReplicasNums (5.x);
// and RocketMQ 4.9.8's, mirroring CommitLog#submitReplicaRequest and HAService#isSlaveOK, for a
// configuration that sets none of the 5.x quorum keys. One Comet addition to the 5.x rules, on
// by default (slaveNotAvailableFastFail): SLAVE_NOT_AVAILABLE when a wait would be needed but no
// slave is connected at all (4.x isSlaveOK behaviour; 5.x would wait for slaveTimeout and answer
// FLUSH_SLAVE_TIMEOUT). See docs/replication.md and docs/durability.md.
// Pure: no clock, no threads, no I/O. Callers pass a snapshot of the HA state.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace comet::ha {

// org.apache.rocketmq.store.config.BrokerRole.
enum class BrokerRole { kAsyncMaster, kSyncMaster, kSlave };

std::string_view broker_role_name(BrokerRole role);
// Parses "ASYNC_MASTER" / "SYNC_MASTER" / "SLAVE" (case-sensitive, as RocketMQ's enum valueOf).
Result<BrokerRole> parse_broker_role(std::string_view text);

// Which release's rules decide how many replicas a SYNC_MASTER put needs (docs/durability.md).
// RocketMQ 5 reads brokerRole=SYNC_MASTER with its defaults totalReplicas=inSyncReplicas=1 as
// "the master alone is enough"; RocketMQ 4.9.8 read the same file as "wait for a slave". So a
// configuration that sets none of kQuorumKeys keeps the 4.9.8 meaning it was written for.
enum class QuorumRules {
    kRocketMq4,  // 4.9.8 CommitLog#submitReplicaRequest: wait for one slave (see decide_quorum)
    kRocketMq5,  // 5.x: needAckNums from inSyncReplicas, minInSyncReplicas, ...
};

// The keys RocketMQ 5 added for its quorum write. Setting any of them (even to its default)
// selects QuorumRules::kRocketMq5.
inline constexpr std::array<std::string_view, 4> kQuorumKeys = {
    "totalReplicas", "inSyncReplicas", "minInSyncReplicas", "enableAutoInSyncReplicas"};

// "RocketMQ 4.9.8" / "RocketMQ 5", for explanations.
std::string_view quorum_rules_name(QuorumRules rules);
// The value of the derived quorumRules entry a Comet broker adds to GET_BROKER_CONFIG: "4.9.8"
// or "5". parse_quorum_rules() errors: kInvalidArgument for anything else.
std::string_view quorum_rules_value(QuorumRules rules);
Result<QuorumRules> parse_quorum_rules(std::string_view value);

// The replication keys of the broker/store configuration (names: RocketMQ properties keys).
struct QuorumConfig {
    BrokerRole broker_role = BrokerRole::kAsyncMaster;  // brokerRole
    // Derived from which keys the configuration set (see QuorumRules), not a key itself.
    QuorumRules rules = QuorumRules::kRocketMq5;
    int32_t total_replicas = 1;                         // totalReplicas
    int32_t in_sync_replicas = 1;                       // inSyncReplicas (master counts as one)
    int32_t min_in_sync_replicas = 1;                   // minInSyncReplicas
    bool enable_auto_in_sync_replicas = false;          // enableAutoInSyncReplicas
    bool enable_slave_acting_master = false;            // enableSlaveActingMaster
    int64_t ha_max_gap_not_in_sync = 256LL * 1024 * 1024;  // haMaxGapNotInSync (bytes)
    // 4.9.8 rules only: a put fails with SLAVE_NOT_AVAILABLE when the nearest slave is this far
    // behind (HAService#isSlaveOK). Key: haSlaveFallbehindMax (bytes).
    int64_t ha_slave_fallbehind_max = 256LL * 1024 * 1024;
    // Comet (RocketMQ 5 rules; 4.9.8 always fails fast): answer SLAVE_NOT_AVAILABLE at once when a
    // wait is needed and no slave is connected (RocketMQ 5 waits and times out instead). Key:
    // slaveNotAvailableFastFail.
    bool slave_not_available_fast_fail = true;
};

// Rejects impossible configurations with an error naming the keys; appends human-readable
// warnings (e.g. SYNC_MASTER with inSyncReplicas=1 replicates asynchronously) to *warnings
// (may be null).
Status validate_quorum_config(const QuorumConfig& config, std::vector<std::string>* warnings);

// DefaultHAService#inSyncReplicasNums: 1 (the master) + slaves whose ack offset is within
// haMaxGapNotInSync of master_put_offset (strictly less than the gap).
int32_t in_sync_replica_nums(const QuorumConfig& config, int64_t master_put_offset,
                             std::span<const int64_t> slave_ack_offsets);

// What the put path knows when it decides.
struct QuorumInput {
    bool wait_store_msg_ok = true;     // message property WAIT (default true)
    bool duplication_enable = false;   // duplicationEnable store key
    int32_t alive_replica_num = 1;     // getAliveReplicaNumInGroup (name server), master incl.
    int64_t master_put_offset = 0;     // CommitLog write position before this append
    std::span<const int64_t> slave_ack_offsets;  // one entry per connected slave
};

enum class QuorumVerdict {
    kPutOkNow,                  // no replica wait: answer with the flush outcome
    kWaitForSlaves,             // GroupTransfer must see need_ack_nums replicas
    kInSyncReplicasNotEnough,   // reject before writing (IN_SYNC_REPLICAS_NOT_ENOUGH)
    kSlaveNotAvailable,         // Comet fast fail: stored on master, no slave to wait for
};

std::string_view quorum_verdict_name(QuorumVerdict v);

struct QuorumDecision {
    QuorumVerdict verdict = QuorumVerdict::kPutOkNow;
    int32_t need_ack_nums = 1;   // replicas incl. master; meaningful for kWaitForSlaves
    int32_t in_sync = 1;         // the in-sync figure used (acting-master mode), else 1+in-sync
    bool degraded = false;       // need_ack_nums lowered below inSyncReplicas by auto downgrade
    bool need_handle_ha = false; // CommitLog#needHandleHA
};

// The whole decision.
// RocketMQ 5 rules, Java order: needHandleHA; acting-master computation and early reject;
// needAckNums <= 1 returns at once (handleHA).
// RocketMQ 4.9.8 rules (submitReplicaRequest): a SYNC_MASTER put with WAIT waits for one slave
// (needAckNums 2); when no slave is connected or the nearest one is haSlaveFallbehindMax or
// more behind it fails with SLAVE_NOT_AVAILABLE (the message stays stored on the master). No
// duplicationEnable check, no acting-master downgrade (4.9.8 has neither there).
QuorumDecision decide_quorum(const QuorumConfig& config, const QuorumInput& input);

}  // namespace comet::ha
