#include "controller_server/controller_config.h"

#include <cstdlib>

namespace comet::controller {

void register_controller_config(ConfigRegistry& r, ControllerConfig* c) {
    const char* home_env = std::getenv("HOME");
    const std::string home = home_env != nullptr && *home_env != '\0' ? home_env : ".";
    r.add_string("controllerType", &c->controller_type, "DLedger",
                 "replication of the controller's state: DLedger (Comet's Raft); jRaft is "
                 "refused");
    r.add_string("controllerDLegerGroup", &c->group, "", "name of the controller Raft group")
        .important();
    r.add_string("controllerDLegerPeers", &c->peers, "",
                 "the controller group, n0-host:port;n1-host:port;... (each port serves Raft "
                 "and the controller RPCs)")
        .important();
    r.add_string("controllerDLegerSelfId", &c->self_id, "", "this controller's id in the peers")
        .important();
    r.add_string("controllerStorePath", &c->store_path, home + "/DledgerController",
                 "directory of the controller's Raft log and hard state")
        .important();
    r.add_int64("mappedFileSize", &c->mapped_file_size, 1024LL * 1024 * 1024,
                "accepted for RocketMQ's files; Comet's controller log is one file")
        .positive();
    r.add_int64("scanNotActiveBrokerInterval", &c->scan_not_active_broker_interval_ms, 200,
                "ms between scans for brokers whose heartbeat timed out")
        .range(10, 3600 * 1000);
    r.add_int64("scanInactiveMasterInterval", &c->scan_inactive_master_interval_ms, 200,
                "ms between scans for broker sets whose master is inactive")
        .range(10, 3600 * 1000);
    r.add_int("electMasterMaxRetryCount", &c->elect_master_max_retry_count, 3,
              "attempts of one controller-triggered election")
        .range(1, 100);
    r.add_bool("enableElectUncleanMaster", &c->enable_elect_unclean_master, false,
               "may elect a replica outside the SyncStateSet when no member is alive (can lose "
               "acknowledged messages)")
        .important();
    r.add_bool("notifyBrokerRoleChanged", &c->notify_broker_role_changed, true,
               "send NOTIFY_BROKER_ROLE_CHANGED to a set's live replicas after an election");
    r.add_int("controllerThreadPoolNums", &c->thread_pool_nums, 16,
              "accepted for RocketMQ; Comet answers on the Raft driver thread")
        .range(1, 256);
    r.add_int("controllerRequestThreadPoolQueueCapacity", &c->request_queue_capacity, 50000,
              "queued controller requests before SYSTEM_BUSY")
        .positive();
    r.add_int("controllerElectionTimeoutMinMs", &c->election_timeout_min_ms, 300,
              "Raft election timeout, lower bound (Comet)")
        .range(20, 60000);
    r.add_int("controllerElectionTimeoutMaxMs", &c->election_timeout_max_ms, 600,
              "Raft election timeout, upper bound (Comet)")
        .range(20, 60000);
    r.add_int("controllerHeartbeatIntervalMs", &c->heartbeat_interval_ms, 100,
              "Raft heartbeat interval (Comet)")
        .range(10, 10000);
    r.add_int64("controllerSnapshotEveryEntries", &c->snapshot_every_entries, 10000,
                "snapshot the controller state and compact the Raft log every this many "
                "applied entries; 0 = never (Comet)")
        .range(0, int64_t{1} << 40);
    r.add_int64("masterLeaseMills", &c->master_lease_ms, 800,
                "a master is replaced only after this long without a heartbeat reaching the "
                "leader, plus the drift margin (Comet)")
        .range(0, 3600 * 1000);
    r.add_int64("masterLeaseDriftMills", &c->master_lease_drift_ms, 200,
                "clock-rate and scheduling margin added to the master lease (Comet)")
        .range(0, 600 * 1000);
    r.add_string("listenHost", &c->listen_host, "",
                 "address to bind (empty: the host of this controller's own peer entry)");
    r.add_int("metricsPort", &c->metrics_port, 0,
              "serve Prometheus /metrics on this port of the listen host (0: off; Comet)")
        .range(0, 65535);
    r.add_string("metricsExporterType", &c->metrics_exporter_type, "DISABLE",
                 "RocketMQ 5: PROM serves /metrics on metricsPromExporterPort (DISABLE: off)");
    r.add_int("metricsPromExporterPort", &c->metrics_prom_exporter_port, 5557,
              "RocketMQ 5: /metrics port with metricsExporterType=PROM")
        .range(0, 65535);
    r.add_string("metricsPromExporterHost", &c->metrics_prom_exporter_host, "",
                 "RocketMQ 5: /metrics bind address (empty: the listen host)");
    r.add_string("logDir", &c->log_dir, "", "log directory (empty: ~/logs/comet)");
    r.add_enum("logLevel", &c->log_level, "info",
               {"trace", "debug", "info", "warn", "error", "critical", "off"}, "log level");
}

Result<ControllerPeers> resolve_controller_peers(const ControllerConfig& c,
                                                 std::vector<std::string>* warnings) {
    if (c.controller_type != "DLedger") {
        return Status::error(Errc::kInvalidArgument,
                             "controllerType={}: Comet's controller replicates its state with "
                             "its own Raft (controllerType=DLedger); jRaft is not supported",
                             c.controller_type);
    }
    if (c.group.empty()) {
        return Status::error(Errc::kInvalidArgument,
                             "controllerDLegerGroup is not set (the controller group's name)");
    }
    if (c.peers.empty()) {
        return Status::error(Errc::kInvalidArgument,
                             "controllerDLegerPeers is empty (e.g. n0-127.0.0.1:9878;"
                             "n1-127.0.0.1:9868;n2-127.0.0.1:9858)");
    }
    ControllerPeers out;
    COMET_ASSIGN_OR_RETURN(out.peers, raft::parse_peer_list("controllerDLegerPeers", c.peers));
    if (c.self_id.empty()) {
        return Status::error(Errc::kInvalidArgument,
                             "controllerDLegerSelfId is not set (one of the ids in "
                             "controllerDLegerPeers)");
    }
    out.self = raft::find_peer(out.peers, c.self_id);
    if (out.self == nullptr) {
        return Status::error(Errc::kInvalidArgument,
                             "controllerDLegerSelfId {} is not among controllerDLegerPeers {}",
                             c.self_id, c.peers);
    }
    if (c.election_timeout_max_ms < c.election_timeout_min_ms) {
        return Status::error(Errc::kInvalidArgument,
                             "controllerElectionTimeoutMaxMs {} is below "
                             "controllerElectionTimeoutMinMs {}",
                             c.election_timeout_max_ms, c.election_timeout_min_ms);
    }
    if (c.heartbeat_interval_ms * 2 > c.election_timeout_min_ms) {
        return Status::error(Errc::kInvalidArgument,
                             "controllerHeartbeatIntervalMs {} must be at most half of "
                             "controllerElectionTimeoutMinMs {} (followers of a healthy leader "
                             "would time out)",
                             c.heartbeat_interval_ms, c.election_timeout_min_ms);
    }
    if (out.peers.size() % 2 == 0 && warnings != nullptr) {
        warnings->push_back("controllerDLegerPeers lists " + std::to_string(out.peers.size()) +
                            " peers: an even group tolerates no more failures than one fewer");
    }
    return out;
}

}  // namespace comet::controller
