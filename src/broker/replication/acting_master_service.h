#pragma once
// ActingMasterService: the broker's replication-group housekeeping beyond the CommitLog stream
// (RocketMQ 5 BrokerController: syncBrokerMemberGroup, updateMinBroker/onMinBrokerChange,
// changeSpecialServiceStatus, SlaveSynchronize scheduling, BrokerPreOnlineService's offset
// take-over). It owns a BrokerMemberGroupTracker and a SlaveSynchronize and drives them from one
// thread:
// - enableSlaveActingMaster=true: polls GET_BROKER_MEMBER_GROUP every
//   syncBrokerMemberGroupPeriod (1 s) -> alive replica count, group minimum, acting master;
//   NOTIFY_MIN_BROKER_ID_CHANGE from the name server does the same at once;
// - slave: SlaveSynchronize::sync_all() every slaveSynchronizePeriod (10 s) and at once when the
//   master address changes (register result or the group minimum going back to 0; in controller
//   mode only the controller's master, follow_controller_master); never while this slave is the
//   acting master (the master is gone);
// - DLedger follower that led before: first hands its higher consumer offsets to the master
//   (push_offsets_before_next_sync), so a leader change never takes offsets back;
// - master with enableSlaveActingMaster: once at start, takes the higher consumer offsets the
//   group's slaves accepted while it was away.
// Threads: "BrokerGroupSync" (all RPCs, blocking, bounded by rpc_timeout); handle_notify() and
// on_register_result() from any thread only record and wake it. Lock: mu_ (wake flags, master
// addresses) is a leaf, never held across an RPC or a callback.

#include <condition_variable>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"
#include "broker/context/broker_context.h"
#include "broker/replication/broker_member_group.h"
#include "broker/replication/slave_synchronize.h"
#include "net/remoting_client.h"

namespace comet::broker {

class ActingMasterService {
public:
    struct Deps {
        BrokerConfigHolder* config = nullptr;
        Clock* clock = nullptr;
        net::RemotingClient* client = nullptr;  // name server and master RPCs
        SlaveSynchronize::Tables tables;
        Duration rpc_timeout = std::chrono::seconds(3);
    };

    // Errors: the settings' (kInvalidArgument naming the key).
    static Result<std::unique_ptr<ActingMasterService>> create(Deps deps);
    ~ActingMasterService();
    ActingMasterService(const ActingMasterService&) = delete;
    ActingMasterService& operator=(const ActingMasterService&) = delete;

    void start();
    void shutdown();  // idempotent

    // A REGISTER_BROKER answer on a slave (masterAddr / haServerAddr, empty when the name server
    // knows no live master). Ignored in controller mode (follow_controller_master instead).
    void on_register_result(const std::string& master_addr, const std::string& ha_addr);
    // Controller mode: the master the controller named at a role change ("" = this broker is
    // the master, or there is none), so the slave sync copies from it at once (RocketMQ 5
    // ReplicasManager#handleSlaveSynchronize). The name server's register result is not used
    // here: during a switch it can still name the old master. Any thread.
    void follow_controller_master(const std::string& master_addr);
    // NOTIFY_MIN_BROKER_ID_CHANGE: the response (always SUCCESS, as RocketMQ; bad headers get
    // SYSTEM_ERROR with the decoder's message).
    protocol::RemotingCommand handle_notify(const protocol::RemotingCommand& req);

    // Called (on the group-sync thread) when the master this slave follows changes ("" = gone);
    // set before start(). HA replication can follow it.
    void set_master_listener(
        std::function<void(const std::string& addr, const std::string& ha_addr)> fn);

    // DLedger mode: this peer's consumer offsets may be newer than the master's (it led the
    // group until it stopped or stepped down). Before the next slave sync overwrites them, hand
    // the higher ones to the master (SlaveSynchronize::push_higher_offsets_to), retried each
    // round until it succeeds; then `done` runs on the group-sync thread. Any thread.
    void push_offsets_before_next_sync(std::function<void()> done);

    bool enable_slave_acting_master() const { return settings_.enable_slave_acting_master; }
    bool is_acting_master() const { return tracker_.is_acting_master(); }
    int32_t alive_replica_num() const { return tracker_.alive_replica_num(); }
    // For the send path (hawire's quorum decision).
    std::function<int32_t()> alive_replica_fn() const {
        return [this] { return tracker_.alive_replica_num(); };
    }
    const BrokerMemberGroupTracker& tracker() const { return tracker_; }
    SlaveSynchronize& slave_synchronize() { return sync_; }
    // Key/value lines for GET_BROKER_RUNTIME_INFO.
    std::map<std::string, std::string> runtime_info() const;

    // One round of each duty now (tests and the thread).
    Status sync_member_group();
    Status take_offsets_from_slaves();

private:
    ActingMasterService(Deps deps, MemberGroupSettings settings);
    void loop();
    // A pending offset hand-over, when one is due and a master is known; false when it failed
    // (the slave sync must not overwrite the local offsets this round).
    bool push_offsets_first();
    void apply(const MinBrokerChange& change);
    void wake();
    Result<protocol::RemotingCommand> invoke(const std::string& addr,
                                             protocol::RemotingCommand req);

    Deps deps_;
    const MemberGroupSettings settings_;
    const BrokerConfig start_config_;
    BrokerMemberGroupTracker tracker_;
    SlaveSynchronize sync_;
    std::function<void(const std::string&, const std::string&)> master_listener_;

    mutable Mutex mu_;
    std::condition_variable_any cv_;
    bool stopping_ GUARDED_BY(mu_) = false;
    bool sync_now_ GUARDED_BY(mu_) = false;
    bool push_offsets_ GUARDED_BY(mu_) = false;
    std::function<void()> push_done_ GUARDED_BY(mu_);
    std::string registered_master_ GUARDED_BY(mu_);  // from the last register result
    std::string registered_ha_ GUARDED_BY(mu_);
    std::thread thread_;
    bool started_ = false;
};

}  // namespace comet::broker
