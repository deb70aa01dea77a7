#pragma once
// ReplicationService: the broker side of classic master–slave replication (src/ha). Owns the
// HaService (ASYNC_MASTER / SYNC_MASTER: listens on haListenPort, streams the CommitLog) or
// the HaClient (SLAVE: connects to haMasterAddress or to the register result's haServerAddr),
// and is the one place the send path asks "may this put go ahead, and when is it durable?":
//   put(): slave -> refused (SERVICE_NOT_AVAILABLE, RocketMQ's remark); otherwise
//   decide_quorum() with the live slave acks and the alive replica count;
//   IN_SYNC_REPLICAS_NOT_ENOUGH -> refused before the append; else the append runs and, once
//   the store answered (after its flush wait), a kWaitForSlaves put registers with
//   GroupTransfer and completes on the acks or at slaveTimeout (FLUSH_SLAVE_TIMEOUT). No thread
//   ever waits: completions run on the store's or the HA thread.
// Threads: put() from the send executors or I/O threads; completions on the store's threads or
// the I/O loop of the slave connection whose ack completed them (HA runs on the loops given by
// set_io_loops, the broker's remoting loops; docs/decisions/030-ha-on-the-net-loops.md);
// on_register_result() from the broker scheduler; everything else from any thread.
// Locks: mu_ (master address, alive-count function, slave client) is a leaf, never held across
// a store call, HA call or completion. Counters are atomics.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "broker/controller/sync_state_policy.h"
#include "broker/metadata/broker_config.h"
#include "ha/group_transfer.h"
#include "ha/ha_client.h"
#include "ha/ha_service.h"
#include "ha/ha_store_port.h"
#include "ha/quorum_policy.h"
#include "store/put_message_status.h"

namespace comet::dledger {
class DLedgerServer;
}
namespace comet::net {
class IoLoopGroup;
}

namespace comet::broker {

class ControllerStore;
class MasterLease;

// The replication keys of a BrokerConfig, parsed and resolved.
struct ReplicationConfig {
    ha::QuorumConfig quorum;
    std::string broker_name;
    int64_t broker_id = 0;
    std::string listen_host = "0.0.0.0";
    uint16_t ha_listen_port = 0;    // effective haListenPort (0 = ephemeral)
    std::string ha_master_address;  // haMasterAddress, "" = from the register result
    int32_t ha_transfer_batch_size = 32768;
    std::chrono::milliseconds heartbeat_interval{5000};
    std::chrono::milliseconds housekeeping_interval{20000};
    std::chrono::milliseconds slave_timeout{3000};
    bool require_handshake = false;
    bool send_handshake = true;
    std::chrono::milliseconds reconnect_interval{5000};  // slave: retry period (tests shorten)
    std::chrono::milliseconds tick_interval{10};         // HaService new-data poll period
    // Controller mode (enableControllerMode): the role comes from the controller at run time
    // (become_master / become_slave), HA speaks the AutoSwitch protocol, and a put waits for
    // the SyncStateSet (sync_state_policy).
    bool controller_mode = false;
    ControllerQuorum controller;
    bool sync_from_last_file = false;  // syncFromLastFile
    bool async_learner = false;        // asyncLearner

    bool is_slave() const { return quorum.broker_role == ha::BrokerRole::kSlave; }
};

// Builds the replication config and validates it (validate_quorum_config). Errors name the
// keys; warnings (e.g. SYNC_MASTER with inSyncReplicas=1) are appended to *warnings.
Result<ReplicationConfig> make_replication_config(const BrokerConfig& config,
                                                  std::vector<std::string>* warnings);

// What the send path needs from the master's replica set: HaService in production, a fake in
// unit tests. Thread-safe.
class ReplicaSet {
public:
    virtual ~ReplicaSet() = default;
    virtual std::vector<int64_t> slave_ack_offsets() const = 0;
    virtual ha::GroupTransfer& group_transfer() = 0;
    virtual void notify_new_data() = 0;
};

// How durable a send became when it was answered (the `replicas` ext field).
struct SendDurability {
    int32_t replicas = 1;       // replicas known to hold it, the master included
    int32_t need_ack_nums = 1;  // what the quorum decision required
    bool degraded = false;      // needAckNums lowered below inSyncReplicas
};

class ReplicationService {
public:
    using AliveReplicaFn = std::function<int32_t()>;
    using PutCallback = store::PutCompletion;
    // The append: runs at most once, before put() returns (no allocation: a reference-sized
    // capture fits inline).
    using PutFn = InlineFunction<void(PutCallback), 48>;
    // Room for the send path's reply completion inline.
    using Done = InlineFunction<void(store::PutMessageResult, SendDurability), 320>;

    // `store`: the local CommitLog (source on a master, sink on a slave); must outlive this.
    // `alive`: alive replicas in the group, master included (GET_BROKER_MEMBER_GROUP); empty
    // = totalReplicas.
    ReplicationService(ReplicationConfig config, Clock& clock, ha::HaStorePort& store,
                       AliveReplicaFn alive = {});
    ~ReplicationService();
    ReplicationService(const ReplicationService&) = delete;
    ReplicationService& operator=(const ReplicationService&) = delete;

    // Master: binds haListenPort and starts HaService. Slave: starts HaClient when a master
    // address is known (haMasterAddress), else waits for on_register_result(). Errors: bind.
    Status start();
    // Tests: a master over a fake replica set (no sockets).
    void start_with(ReplicaSet* replicas);
    // Stops HA (waiting puts complete with SERVICE_NOT_AVAILABLE). Idempotent.
    void shutdown();

    // DLedger mode (docs/dledger.md): no HaService/HaClient; every put completes when its bytes
    // are committed by a majority of the group, WAIT=false ones included (FLUSH_SLAVE_TIMEOUT
    // after slaveTimeout or when leadership is lost first). Set before start().
    void set_dledger(dledger::DLedgerServer* dledger) { dledger_ = dledger; }
    // The I/O loops HaService and HaClient run on (the broker's remoting server's); set before
    // start(). The group must run until shutdown() returned. Unset: each HA object runs a
    // one-thread group of its own (tests).
    void set_io_loops(std::shared_ptr<net::IoLoopGroup> loops) { loops_ = std::move(loops); }
    dledger::DLedgerServer* dledger() const { return dledger_; }

    void set_alive_replica_fn(AliveReplicaFn alive);
    int32_t alive_replica_num() const;

    // The send path (SEND_MESSAGE[_V2], batch, send-back) and the broker's own writes on a
    // client's behalf (ReplicatedStorePort). `put` appends to the store and
    // calls its callback once; it runs at most once and before put() returns (callers may
    // capture by reference). `done` runs once with the final result and durability.
    void put(bool wait_store_msg_ok, const PutFn& put, Done done);

    // Slave: the name server's register result. haServerAddr (re)points the HaClient unless
    // haMasterAddress is configured; masterAddr is kept for metadata sync.
    void on_register_result(const std::optional<std::string>& ha_server_addr,
                            const std::optional<std::string>& master_addr);
    // The master's broker address (brokerIP1:listenPort) from the last register result.
    std::optional<std::string> master_addr() const;
    // The HA address the slave connects to ("" when none yet).
    std::string master_ha_addr() const;

    // Controller mode. The store behind the epoch file, confirm offset and SyncStateSet; set
    // before start().
    void set_controller_store(ControllerStore* store) { controller_store_ = store; }
    // Controller mode: a master acknowledges a put only while `lease` runs, checked when the
    // put arrives and again before its answer (master_lease.h). Set before start; outlives this.
    void set_master_lease(const MasterLease* lease) { lease_ = lease; }
    // Stops the HaClient (no append after it returns; the store may be cut then).
    void stop_ha_client();
    // stop_ha_client(), then an AutoSwitch HaService on haListenPort; puts are accepted from
    // now on. Errors: bind.
    Status become_master(int64_t broker_id);
    // Stops the HaService (its waiting puts fail with SERVICE_NOT_AVAILABLE): puts are refused
    // from now on; connect_master_ha() points the HaClient at the new master.
    void become_slave(int64_t broker_id);
    void connect_master_ha(const std::string& ha_addr) { connect_slave(ha_addr); }

    const ReplicationConfig& config() const { return config_; }
    bool is_slave() const {
        return config_.controller_mode ? !controller_master_.load() : config_.is_slave();
    }
    // Bound HA port (master, after start()); 0 otherwise.
    uint16_t ha_port() const;
    ha::HaService* ha_service() { return ha_current_.load(); }

    // GET_BROKER_RUNTIME_INFO keys (docs/replication.md, "Runtime info").
    std::map<std::string, std::string> runtime_info() const;

    struct Counters {
        std::atomic<int64_t> quorum_acks{0};          // waits completed PUT_OK
        std::atomic<int64_t> degraded_acks{0};        // acked with needAckNums < inSyncReplicas
        std::atomic<int64_t> slave_timeouts{0};       // FLUSH_SLAVE_TIMEOUT answers
        std::atomic<int64_t> slave_not_available{0};  // SLAVE_NOT_AVAILABLE answers
        std::atomic<int64_t> isr_not_enough{0};       // IN_SYNC_REPLICAS_NOT_ENOUGH refusals
        std::atomic<int64_t> slave_refused{0};        // producer writes refused on a slave
        std::atomic<int64_t> lease_refused{0};        // puts refused or unacknowledged: no lease
    };
    const Counters& counters() const { return counters_; }

    // The remark RocketMQ gives for SERVICE_NOT_AVAILABLE (puts to a slave among the reasons).
    static std::string service_not_available_remark();

private:
    void put_dledger(const PutFn& put, Done done);
    void put_controller(bool wait_store_msg_ok, const PutFn& put, Done done);
    // The lease rule's answer for a put that would otherwise be acknowledged with `r`.
    bool lease_refuses(store::PutMessageResult& r);
    void refuse_as_slave(const Done& done);
    Status start_ha_service(bool auto_switch);
    // Registers a stored put with the replicas' GroupTransfer (SLAVE_NOT_AVAILABLE without any).
    void wait_for_replicas(ReplicaSet* replicas, store::PutMessageResult r,
                           const ha::QuorumDecision& d, Done done);
    void finish_wait(store::PutMessageResult r, const ha::QuorumDecision& d,
                     store::PutMessageStatus status, const Done& done);
    int32_t replicas_holding(int64_t end_offset) const;
    // runtime_info()'s keys by mode and role: controller mode's epochs and SyncStateSet; a
    // slave's HA client; a master's quorum figures, counters and (add_slave_connection_info)
    // one haConnectionInfo.N per connected slave. Each takes mu_ only inside, never held across.
    void add_controller_runtime_info(std::map<std::string, std::string>* t) const;
    void add_slave_runtime_info(std::map<std::string, std::string>* t) const;
    void add_master_runtime_info(std::map<std::string, std::string>* t) const;
    void add_slave_connection_info(const ha::HaService& svc, int64_t put_offset,
                                   std::map<std::string, std::string>* t) const;
    void connect_slave(const std::string& ha_addr);

    const ReplicationConfig config_;
    Clock& clock_;
    ha::HaStorePort& store_;
    // Every HaService this service started, the current one last: a master that lost its role
    // shuts its service down but keeps the object, so a put still holding its pointer fails
    // cleanly (GroupTransfer after shutdown) instead of touching freed memory.
    std::vector<std::unique_ptr<ha::HaService>> ha_services_ GUARDED_BY(mu_);
    std::vector<std::unique_ptr<ReplicaSet>> own_replicas_ GUARDED_BY(mu_);
    std::atomic<ha::HaService*> ha_current_{nullptr};
    std::atomic<ReplicaSet*> replicas_{nullptr};  // null on a slave
    ControllerStore* controller_store_ = nullptr;
    const MasterLease* lease_ = nullptr;
    std::atomic<bool> controller_master_{false};
    std::atomic<int64_t> controller_id_{0};
    dledger::DLedgerServer* dledger_ = nullptr;
    std::shared_ptr<net::IoLoopGroup> loops_;  // set before start(); null = own groups
    Counters counters_;

    mutable Mutex mu_;
    AliveReplicaFn alive_ GUARDED_BY(mu_);
    std::optional<std::string> master_addr_ GUARDED_BY(mu_);
    std::string master_ha_addr_ GUARDED_BY(mu_);
    std::unique_ptr<ha::HaClient> ha_client_ GUARDED_BY(mu_);
    bool stopped_ GUARDED_BY(mu_) = false;
};

}  // namespace comet::broker
