#pragma once
// DLedgerConfig: the DLedger keys of a broker config (RocketMQ's names: enableDLegerCommitLog,
// dLegerGroup, dLegerPeers, dLegerSelfId, preferredLeaderId) plus Comet's election timings,
// parsed and checked. docs/dledger.md, "Configuration".

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "raft/types.h"

namespace comet::dledger {

struct DLedgerPeer {
    std::string id;     // "n0"
    raft::NodeId node;  // position in dLegerPeers + 1 (the same on every peer)
    std::string host;
    uint16_t port = 0;
    // brokerId this peer registers with while it follows: RocketMQ's rule, the digits of the id
    // plus one ("n0" -> 1); peers whose id has no trailing digits use their position + 1.
    int64_t follower_broker_id = 1;
    std::string addr() const { return host + ":" + std::to_string(port); }
};

struct DLedgerConfig {
    std::string group;              // dLegerGroup (empty: brokerName)
    std::vector<DLedgerPeer> peers;  // dLegerPeers
    std::string self_id;            // dLegerSelfId
    std::string preferred_leader_id;  // preferredLeaderId ("" = none)
    std::string listen_host = "0.0.0.0";
    int tick_ms = 10;
    int election_timeout_min_ms = 150;  // dLegerElectionTimeoutMinMs (Comet)
    int election_timeout_max_ms = 300;  // dLegerElectionTimeoutMaxMs (Comet)
    int heartbeat_interval_ms = 50;     // dLegerHeartbeatIntervalMs (Comet)
    std::chrono::milliseconds commit_timeout{3000};  // slaveTimeout: FLUSH_SLAVE_TIMEOUT after it
    // dLegerSyncBeforeAck (Comet): true = a peer acks, votes and counts itself only for
    // entries fsynced on its disk (durable by default). false = relaxed: acks from the page
    // cache, fsync right behind; survives kill -9 of any number of peers, but a power failure
    // of a majority within the flush lag can lose acknowledged messages.
    bool sync_before_ack = true;
    // dLegerLazyLeaderSync (Comet, decision 036): with sync_before_ack, a leader whose followers
    // alone are a majority syncs its own log only when a commit waits for its vote (a request
    // older than about two follower rounds that they have not committed), and at least every
    // 100 ms; it still counts itself only for entries synced. false: it syncs every round.
    bool lazy_leader_sync = true;
    // How long a peer whose storage failed stays up (stepped down, refusing puts, reporting
    // dledgerStorageError) before DLedgerServer calls its storage-failure handler (the broker
    // exits so a supervisor restarts it): time for the refusals to reach the clients.
    std::chrono::milliseconds storage_failure_exit_delay{2000};

    const DLedgerPeer& self() const;
    const DLedgerPeer* find(const std::string& id) const;
    const DLedgerPeer* find(raft::NodeId node) const;
};

// Parses "n0-127.0.0.1:40911;n1-127.0.0.1:40912;..." and checks the whole set. Errors name the
// key: a malformed peer, duplicate ids or addresses (dLegerPeers), a self id or preferred
// leader not among the peers (dLegerSelfId, preferredLeaderId), bad timings. An even number of
// peers is a warning (no more fault tolerance than one fewer).
Result<DLedgerConfig> parse_dledger_config(const std::string& group, const std::string& peers,
                                           const std::string& self_id,
                                           const std::string& preferred_leader_id,
                                           std::vector<std::string>* warnings);

}  // namespace comet::dledger
