#pragma once
// ControllerServer: one member of the controller group (mqcontroller, or the controller inside
// mqnamesrv with enableControllerInNamesrv: same class, same peer port). It replicates the
// controller state machine (ReplicasInfoManager) with Comet's Raft core over a durable log
// (ControllerLogStorage under <controllerStorePath>/raft) and answers the controller RPCs of
// reference §7.2 on its peer port, the same port that carries the Raft messages (RocketMQ's
// controller also serves its RPCs on the DLedger peer address).
//
// Request flow (the driver contract of src/controller/README.md): the I/O thread posts each
// request to the driver thread; there, a non-leader (or a leader that has not yet applied every
// entry of earlier terms) answers CONTROLLER_NOT_LEADER; the leader validates with handle_*
// against its applied state and its own heartbeat table, answers at once when the request
// changes nothing, and otherwise proposes the events, answering once they are committed and
// applied (or CONTROLLER_NOT_LEADER when leadership was lost before, whatever the outcome; the
// broker retries). BROKER_HEARTBEAT and CONTROLLER_GET_METADATA_INFO are answered by every
// member: liveness is leader-local and never replicated.
//
// The leader also scans: every scanNotActiveBrokerInterval it drops brokers whose heartbeat
// timed out and, every scanInactiveMasterInterval (and at once when a dropped broker was a
// master), elects a new master for sets whose master is inactive (brokerId -1), subject to the
// master lease; a successful election is announced with NOTIFY_BROKER_ROLE_CHANGED to the set's
// live replicas (notifyBrokerRoleChanged).
//
// Threads: "CtrlDriver" owns the RaftNode, the storage, the state machine and the heartbeat
// table (no locks around them); the RemotingServer's I/O thread only queues; the RemotingClient
// sends Raft messages and notifications. mu_ guards the inbox and the published status; it is a
// leaf, never held across a node, storage, transport call or callback.

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/config.h"
#include "base/mutex.h"
#include "base/rng.h"
#include "controller/broker_live_info.h"
#include "controller/controller_log_storage.h"
#include "controller/replicas_info_manager.h"
#include "controller_server/controller_config.h"
#include "metrics/endpoint.h"
#include "net/peer_backoff.h"
#include "net/remoting_client.h"
#include "net/remoting_server.h"
#include "raft/raft_node.h"

namespace comet::controller {

// Comet's request code for one Raft message between controllers (one-way), as DLedger peers'.
inline constexpr int32_t kControllerRaftMessageCode = 60100;

class ControllerServer {
public:
    struct Info {
        raft::Role role = raft::Role::kFollower;
        raft::Term term;
        std::string leader_id;  // "" when unknown
        bool ready = false;     // leader with every earlier entry applied: serves requests
        int64_t last_index = 0;
        int64_t commit_index = 0;
        int64_t applied_index = 0;
        int64_t snapshot_index = 0;  // the log's snapshot (0: none; the log starts after it)
        size_t broker_sets = 0;
        size_t live_brokers = 0;
    };

    // `registry` (optional) answers GET_CONTROLLER_CONFIG / UPDATE_CONTROLLER_CONFIG.
    ControllerServer(ControllerConfig config, ControllerPeers peers,
                     ConfigRegistry* registry = nullptr, Clock& clock = SystemClock::instance());
    ~ControllerServer();
    ControllerServer(const ControllerServer&) = delete;
    ControllerServer& operator=(const ControllerServer&) = delete;

    // Opens the log (recovering it), binds the peer port and starts the driver. Errors: the
    // storage's (kIoError, kCorruption, kUnsupported), a failed bind (kIoError naming it).
    Status start();
    // Stops the driver and the transport; requests in flight get CONTROLLER_NOT_LEADER.
    // Idempotent.
    void shutdown();

    uint16_t port() const;
    Info info() const;
    // The bound /metrics port; 0 when metrics are off.
    uint16_t metrics_port() const;

private:
    struct Pending {  // a request whose events are proposed, answered once they apply
        int64_t first = 0;
        raft::Term term;
        bool failed = false;
        std::string why;
        std::function<void(bool ok, const std::string& why)> done;
    };

    void run();
    void post(std::function<void()> task);
    void on_raft_message(std::string body);
    void send(const raft::Message& m);
    void drain_ready();
    void apply_committed(raft::LogIndex from, raft::LogIndex to);
    // Replaces the state machine with a snapshot (from storage at start, or InstallSnapshot).
    Status restore_snapshot(const raft::Snapshot& snap);
    // Every controllerSnapshotEveryEntries applied entries: snapshot and compact the log.
    void maybe_compact();
    void on_role_change();
    void fail_pending(const std::string& why);
    void publish();
    bool serving() const;  // driver thread: leader and caught up
    void scan(TimePoint now);
    void elect_for(const std::string& cluster, const std::string& broker_name);
    // ELECT_MASTER as asked (by a broker or an admin), answered once its events applied.
    void elect_and_answer(const protocol::RemotingCommand& req, const net::Responder& respond,
                          const protocol::ElectMasterRequestHeader& h, const BrokerLiveness& live);
    // Would this designated election succeed, but for a master lease that may still run?
    bool waits_for_lease(const protocol::ElectMasterRequestHeader& h,
                         const BrokerLiveness& live) const;
    // Each tick: held elections whose lease ran out (or that waited long enough) are decided.
    void retry_held_elections(TimePoint now);
    // Leadership lost or shutting down: held elections are answered CONTROLLER_NOT_LEADER.
    void release_held_elections();
    // May the set's master change at any moment (no lease is granted in it then)?
    bool election_under_way(const std::string& broker_name, TimePoint now) const;
    void erase_one_electing(const std::string& broker_name);
    void notify_role_changed(const std::string& broker_name);

    // The steps of start().
    Status open_raft();
    net::RemotingServerConfig server_config() const;
    metrics::MetricsConfig metrics_config() const;
    void create_metrics();
    void register_processors();
    Status start_metrics_endpoint(const metrics::MetricsConfig& mc, const std::string& host);
    void start_client();

    // Driver thread: answers one request through the tables below (kAnyMemberRoutes, then,
    // when serving, kLeaderRoutes).
    void handle(protocol::RemotingCommand req, net::Responder respond);
    using AnyMemberHandler = void (ControllerServer::*)(const protocol::RemotingCommand& req,
                                                        const net::Responder& respond);
    using LeaderHandler = void (ControllerServer::*)(const protocol::RemotingCommand& req,
                                                     const net::Responder& respond,
                                                     const BrokerLiveness& live);
    struct AnyMemberRoute {
        int32_t code;
        AnyMemberHandler handler;
    };
    struct LeaderRoute {
        int32_t code;
        LeaderHandler handler;
    };
    // Requests every member answers: liveness and configuration are local, never replicated.
    static const AnyMemberRoute kAnyMemberRoutes[];
    // Requests only a serving leader answers (others get CONTROLLER_NOT_LEADER), validated
    // against its applied state and `live`, its heartbeat table as of the request.
    static const LeaderRoute kLeaderRoutes[];

    void handle_metadata(const protocol::RemotingCommand& req, const net::Responder& respond);
    void handle_heartbeat(const protocol::RemotingCommand& req, const net::Responder& respond);
    void handle_get_config(const protocol::RemotingCommand& req, const net::Responder& respond);
    void handle_update_config(const protocol::RemotingCommand& req, const net::Responder& respond);
    void handle_get_next_broker_id(const protocol::RemotingCommand& req,
                                   const net::Responder& respond, const BrokerLiveness& live);
    void handle_apply_broker_id(const protocol::RemotingCommand& req, const net::Responder& respond,
                                const BrokerLiveness& live);
    void handle_register_broker(const protocol::RemotingCommand& req, const net::Responder& respond,
                                const BrokerLiveness& live);
    void handle_elect_master(const protocol::RemotingCommand& req, const net::Responder& respond,
                             const BrokerLiveness& live);
    void handle_alter_sync_state_set(const protocol::RemotingCommand& req,
                                     const net::Responder& respond, const BrokerLiveness& live);
    void handle_get_replica_info(const protocol::RemotingCommand& req,
                                 const net::Responder& respond, const BrokerLiveness& live);
    void handle_get_sync_state_data(const protocol::RemotingCommand& req,
                                    const net::Responder& respond, const BrokerLiveness& live);
    void handle_clean_broker_data(const protocol::RemotingCommand& req,
                                  const net::Responder& respond, const BrokerLiveness& live);
    protocol::RemotingCommand metadata_response(const protocol::RemotingCommand& req) const;
    // Proposes `events`; `done` runs on the driver thread once they applied (ok) or failed.
    void propose(const std::vector<Event>& events,
                 std::function<void(bool ok, const std::string& why)> done);
    // `after(ok)` runs once the request is answered; ok: it succeeded (and its events applied).
    template <typename H>
    void answer(const protocol::RemotingCommand& req, const net::Responder& respond,
                ControllerResult<H> result, int32_t stale_code,
                std::function<void(bool ok)> after = {});

    // A designated ELECT_MASTER waiting for the old master's lease to run out.
    struct HeldElection {
        protocol::RemotingCommand req;
        net::Responder respond;
        protocol::ElectMasterRequestHeader header;
        TimePoint until;  // then it is decided whatever the lease
    };

    const ControllerConfig config_;
    const ControllerPeers peers_;
    ConfigRegistry* const registry_;
    Clock& clock_;
    Rng rng_;
    std::unique_ptr<ControllerLogStorage> storage_;  // driver thread (after start)
    std::unique_ptr<raft::RaftNode> node_;           // driver thread
    ReplicasInfoManager state_;                      // driver thread
    BrokerHeartbeatManager heartbeats_;              // driver thread
    std::map<int64_t, Pending> pending_;             // by last index; driver thread
    std::multiset<std::string> electing_;            // sets with an election in flight
    std::vector<HeldElection> held_elections_;       // driver thread
    std::map<std::string, TimePoint> lease_holds_;   // set -> no lease granted before
    std::map<int32_t, net::PeerBackoff> links_;      // filled in start(), then only looked up
    int64_t applied_ = 0;                            // driver thread
    raft::Role last_role_ = raft::Role::kFollower;
    raft::Term last_term_;
    TimePoint next_not_active_scan_{};
    TimePoint next_master_scan_{};

    // Metrics (docs/metrics.md): declared before the server, which reports RPCs to them.
    std::unique_ptr<metrics::Registry> metrics_;
    std::unique_ptr<metrics::RpcMetrics> rpc_metrics_;
    std::unique_ptr<metrics::MetricsEndpoint> metrics_endpoint_;
    std::unique_ptr<net::RemotingServer> server_;
    std::unique_ptr<net::RemotingClient> client_;

    mutable Mutex mu_;
    std::condition_variable_any cv_;
    std::vector<raft::Message> inbox_ GUARDED_BY(mu_);
    std::vector<std::function<void()>> tasks_ GUARDED_BY(mu_);
    bool stop_ GUARDED_BY(mu_) = false;
    Info info_ GUARDED_BY(mu_);

    std::thread driver_;
    bool started_ = false;
    bool stopped_ = false;
};

}  // namespace comet::controller
