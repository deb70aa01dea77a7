#pragma once
// The durability contract of a broker: in words, what a send must reach before it is
// acknowledged, why (the keys and, when known, the live replica state behind needAckNums), and
// which settings contradict each other or are ignored. One function serves the broker's
// start-up line ("DURABILITY: ...") and `mqadmin explainDurability` (which fills `live` from
// GET_BROKER_CONFIG and GET_BROKER_RUNTIME_INFO), so the two always say the same thing.
// Pure: no clock, threads or I/O. The put path's decisions stay in decide_quorum() (quorum
// policy) and the DLedger / controller-mode drivers; this only describes them.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ha/quorum_policy.h"

namespace comet::ha {

enum class ReplicationMode { kMasterSlave, kDLedger, kController };

struct DurabilityFacts {
    ReplicationMode mode = ReplicationMode::kMasterSlave;
    QuorumConfig quorum;                     // brokerRole and the quorum keys
    bool sync_flush = false;                 // flushDiskType=SYNC_FLUSH
    int32_t dledger_peers = 0;               // DLedger: size of dLegerPeers
    bool dledger_sync_before_ack = true;     // DLedger: dLegerSyncBeforeAck
    bool all_ack_in_sync_state_set = false;  // controller mode: allAckInSyncStateSet

    struct Replica {
        std::string addr;
        int64_t broker_id = -1;
        int64_t gap_bytes = 0;  // master's CommitLog end minus the replica's ack
        bool in_sync = false;   // gap < haMaxGapNotInSync
    };
    // The live state of a running master, when known (explainDurability).
    struct Live {
        bool is_slave = false;          // the broker asked is a slave / follower right now
        int32_t alive_replicas = 1;     // name server's view, master included
        int32_t in_sync_replicas = 1;   // master + in-sync slaves
        int32_t need_ack_nums = 1;      // what a send needs right now (master included)
        bool degraded = false;          // needAckNums lowered by enableAutoInSyncReplicas
        std::vector<Replica> replicas;  // connected slaves
        std::string sync_state_set;     // controller mode: member ids, ','-separated
        std::string dledger_leader;     // DLedger: leader's peer id
        std::string dledger_role;       // DLedger: this peer's role
    };
    std::optional<Live> live;
};

struct DurabilityExplanation {
    std::string contract;               // one sentence: what an acknowledged send has reached
    // Master-slave masters: which quorum rules apply and why, e.g. "RocketMQ 4.9.8 (no quorum
    // key set)"; empty in DLedger and controller mode (they have rules of their own) and for a
    // slave.
    std::string quorum_rules;
    std::vector<std::string> reasons;   // why: the keys and values, the live figures
    std::vector<std::string> warnings;  // settings that contradict each other or are ignored
};

DurabilityExplanation explain_durability(const DurabilityFacts& facts);

// The static facts from a broker's configuration as properties (BrokerConfig::to_properties()
// or a GET_BROKER_CONFIG answer). Missing keys take RocketMQ's defaults; unparsable values
// keep them too (the broker has validated its own file). The quorum rules: a Comet broker's
// derived quorumRules entry when present; otherwise RocketMQ 5's when any of kQuorumKeys is
// there (a file that sets one, a RocketMQ 5 broker's answer), else 4.9.8's.
DurabilityFacts durability_facts_from_properties(const std::map<std::string, std::string>& props);

// Adds the live state from a GET_BROKER_RUNTIME_INFO table (needAckNums, aliveReplicaNums,
// haConnectionInfo.N, syncStateSet, dledgerRole, ...).
void add_runtime_info(const std::map<std::string, std::string>& runtime, DurabilityFacts* facts);

}  // namespace comet::ha
