#pragma once
// ReplicasManager: the broker side of controller mode (RocketMQ 5 ReplicasManager;
// rocketmq-wire.md §7.3-7.4, docs/controller.md). On its own thread ("ReplicasManager"):
//  1. Identity: the brokerIdentity file, or GET_NEXT_BROKER_ID -> temp file -> APPLY_BROKER_ID
//     -> final file (broker_identity.h), then CONTROLLER_REGISTER_BROKER.
//  2. One BROKER_HEARTBEAT, then the master the controller names, or CONTROLLER_ELECT_MASTER for
//     itself when it names none.
//  3. Every brokerHeartbeatInterval a heartbeat to every controller (a request: the leader's
//     answer renews the master lease, master_lease.h); every
//     syncBrokerMetadataPeriod (1 s while no master is known) CONTROLLER_GET_REPLICA_INFO, which
//     also catches a lost NOTIFY_BROKER_ROLE_CHANGED, and at once when a heartbeat's answer
//     names a newer master epoch or another master (the lease is revoked then already); a master
//     checks its SyncStateSet (expand as soon as a slave caught up, shrink every
//     checkSyncStateSetPeriod) and proposes changes with CONTROLLER_ALTER_SYNC_STATE_SET.
// Role changes are fenced by masterEpoch: one applies only with an epoch above the last applied
// (the first one always applies). The RoleHost does the broker-wide steps.
// Threads: the manager thread does all controller I/O and role changes; notify_role_changed()
// and view() from any thread. mu_ guards the queue and the view (leaf).

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "broker/controller/controller_link.h"
#include "broker/controller/controller_store.h"
#include "broker/controller/master_lease.h"
#include "protocol/ha_headers.h"

namespace comet::broker {

struct ReplicasManagerConfig {
    std::string cluster_name;
    std::string broker_name;
    std::string broker_addr;                     // brokerIP1:listenPort
    std::string identity_path;                   // storePathBrokerIdentity
    Duration heartbeat_interval{200};            // brokerHeartbeatInterval
    Duration heartbeat_timeout{1000};            // controllerHeartBeatTimeoutMills
    Duration send_heartbeat_timeout{1000};       // sendHeartbeatTimeoutMillis
    Duration sync_metadata_period{5000};         // syncBrokerMetadataPeriod
    Duration check_sync_state_set_period{5000};  // checkSyncStateSetPeriod
    Duration max_not_catchup{15000};             // haMaxTimeSlaveNotCatchup
    int32_t election_priority = 2147483647;      // brokerElectionPriority
};

// What a role change does to the rest of the broker (BrokerController implements it).
class RoleHost {
public:
    virtual ~RoleHost() = default;
    virtual Status become_master(int64_t my_id, int32_t master_epoch) = 0;
    virtual Status become_slave(int64_t my_id, int64_t master_id, const std::string& master_addr,
                                int32_t master_epoch) = 0;
    // Master: the SyncStateSet the controller accepted.
    virtual void sync_state_set_changed(const std::set<int64_t>& set) = 0;
};

class ReplicasManager {
public:
    struct View {
        bool registered = false;
        bool master = false;
        int64_t broker_id = 0;  // this broker's controller id (0 until granted)
        int64_t master_id = -1;
        std::string master_addr;
        int32_t master_epoch = 0;
        std::set<int64_t> sync_state_set;
        int32_t sync_state_set_epoch = 0;
        int64_t role_changes = 0;
        int64_t fenced_notices = 0;  // role-change information ignored for a stale epoch
    };

    // `lease` is renewed by the leader's heartbeat answers (master_lease.h); it outlives this.
    ReplicasManager(ReplicasManagerConfig config, ControllerLink& link, ControllerStore& store,
                    RoleHost& host, Clock& clock, MasterLease& lease);
    ~ReplicasManager();

    void start();
    void shutdown();

    // NOTIFY_BROKER_ROLE_CHANGED from a controller: queued for the manager thread.
    void notify_role_changed(int64_t master_id, std::string master_addr, int32_t master_epoch,
                             std::set<int64_t> sync_state_set, int32_t sync_state_set_epoch);
    View view() const;
    // A heartbeat's answer named a newer master epoch or another master (master_lease.h):
    // fetch the replica info at once instead of at the next poll. Any thread.
    void request_sync();

private:
    struct MasterInfo {
        int64_t master_id = -1;
        std::string master_addr;
        int32_t master_epoch = 0;
        std::set<int64_t> sync_state_set;
        int32_t sync_state_set_epoch = 0;
    };

    static MasterInfo master_info_of(const protocol::ControllerMasterInfoHeader& h,
                                     std::set<int64_t> sync_state_set);
    void run();
    Status obtain_identity();
    Status register_and_elect();
    protocol::RemotingCommand heartbeat_request() const;
    void send_heartbeat();
    Status sync_replica_info();
    Status elect_self();
    void apply(const MasterInfo& info);
    void check_sync_state_set(bool shrink);

    const ReplicasManagerConfig config_;
    ControllerLink& link_;
    ControllerStore& store_;
    RoleHost& host_;
    Clock& clock_;
    MasterLease& lease_;

    // Manager thread only.
    int64_t my_id_ = 0;
    bool registered_ = false;
    bool have_role_ = false;
    MasterInfo current_;

    mutable Mutex mu_;
    std::condition_variable_any cv_;
    bool stop_ GUARDED_BY(mu_) = false;
    bool sync_requested_ GUARDED_BY(mu_) = false;
    std::deque<MasterInfo> notices_ GUARDED_BY(mu_);
    View view_ GUARDED_BY(mu_);
    std::thread thread_;
};

}  // namespace comet::broker
