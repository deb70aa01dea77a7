#pragma once
// ControllerConfig: the settings of mqcontroller, with RocketMQ 5's ControllerConfig key names
// and defaults (reference §7.7), plus Comet's Raft timings and the master lease. Registered
// into a ConfigRegistry by register_controller_config(); resolve_controller_peers() checks the
// peer keys and returns the group as the driver needs it. docs/controller.md lists every key.

#include <cstdint>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/status.h"
#include "raft/peer_list.h"

namespace comet::controller {

struct ControllerConfig {
    std::string controller_type;  // controllerType: only "DLedger" (Comet's Raft) is served
    std::string group;            // controllerDLegerGroup
    std::string peers;            // controllerDLegerPeers "n0-127.0.0.1:9878;n1-...;n2-..."
    std::string self_id;          // controllerDLegerSelfId
    std::string store_path;       // controllerStorePath (the Raft log lives in <it>/raft)
    int64_t mapped_file_size = 1024LL * 1024 * 1024;  // mappedFileSize (see docs/controller.md)
    // Comet's defaults for sub-2-second failover (RocketMQ: 5000 each; docs/controller.md).
    int64_t scan_not_active_broker_interval_ms = 200;   // scanNotActiveBrokerInterval
    int64_t scan_inactive_master_interval_ms = 200;     // scanInactiveMasterInterval
    int32_t elect_master_max_retry_count = 3;           // electMasterMaxRetryCount
    bool enable_elect_unclean_master = false;           // enableElectUncleanMaster
    bool notify_broker_role_changed = true;             // notifyBrokerRoleChanged
    int32_t thread_pool_nums = 16;                      // controllerThreadPoolNums
    int32_t request_queue_capacity = 50000;  // controllerRequestThreadPoolQueueCapacity
    // Comet: Raft timings (ms), as the DLedger broker's.
    int32_t election_timeout_min_ms = 300;
    int32_t election_timeout_max_ms = 600;
    int32_t heartbeat_interval_ms = 100;
    // Comet: the master lease (broker_live_info.h): a master is replaced only once
    // lease + drift since its last heartbeat reached the leader.
    int64_t master_lease_ms = 800;
    int64_t master_lease_drift_ms = 200;
    // Comet: controllerSnapshotEveryEntries. Every this many applied entries the state machine
    // is snapshotted and the Raft log compacted up to it (0 = never). RocketMQ 5 has no
    // count-based key (its JRaft controller's jRaftSnapshotIntervalSecs is time-based).
    int64_t snapshot_every_entries = 10000;
    std::string listen_host;  // empty: the self peer's host
    // Logging (as mqnamesrv).
    std::string log_dir;
    std::string log_level;
    // Metrics (docs/metrics.md): /metrics on metricsPort of the listen host, or RocketMQ 5's
    // PROM exporter keys. Off for the controller embedded in mqnamesrv (the name server's
    // endpoint serves that process).
    int32_t metrics_port = 0;
    std::string metrics_exporter_type = "DISABLE";
    int32_t metrics_prom_exporter_port = 5557;
    std::string metrics_prom_exporter_host;
};

void register_controller_config(ConfigRegistry& registry, ControllerConfig* config);

struct ControllerPeers {
    std::vector<raft::PeerAddr> peers;
    const raft::PeerAddr* self = nullptr;  // points into peers
};

// Errors (kInvalidArgument naming the key): controllerType other than DLedger, empty group,
// a bad peer list, a self id not among the peers, Raft timings that cannot work (the election
// timeout must exceed several heartbeats). An even number of peers is a warning.
Result<ControllerPeers> resolve_controller_peers(const ControllerConfig& config,
                                                 std::vector<std::string>* warnings);

}  // namespace comet::controller
