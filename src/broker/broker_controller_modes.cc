// BrokerController in its two replicated modes: DLedger (the Raft log is the CommitLog; the
// elected leader is the group's master) and controller mode (the controller group names the
// master; epochs fence role changes). Role changes arrive on the DLedger driver's and the
// ReplicasManager's threads; the HA-address exchange runs on the scheduler thread. mu_ is taken
// only around the registration flags, never across a call into another component.

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "broker/broker_controller.h"
#include "protocol/ha_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::broker {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using namespace std::chrono_literals;

// mqbroker's exit status when its DLedger log storage failed (apps/mqbroker/main.cc).
constexpr int kDLedgerStorageFailedExit = 3;

Status BrokerController::init_dledger(const BrokerConfig& cfg) {
    std::vector<std::string> warnings;
    COMET_ASSIGN_OR_RETURN(
        dledger::DLedgerConfig dcfg,
        dledger::parse_dledger_config(cfg.dleger_group.empty() ? cfg.broker_name : cfg.dleger_group,
                                      cfg.dleger_peers, cfg.dleger_self_id, cfg.preferred_leader_id,
                                      &warnings));
    for (const std::string& w : warnings) {
        spdlog::warn("DLEDGER CONFIG WARNING: {}", w);
    }
    dcfg.listen_host = cfg.listen_host.empty() ? "0.0.0.0" : cfg.listen_host;
    dcfg.election_timeout_min_ms = cfg.dleger_election_timeout_min_ms;
    dcfg.election_timeout_max_ms = cfg.dleger_election_timeout_max_ms;
    dcfg.heartbeat_interval_ms = cfg.dleger_heartbeat_interval_ms;
    dcfg.commit_timeout = std::chrono::milliseconds(cfg.slave_timeout);
    dcfg.sync_before_ack = cfg.dleger_sync_before_ack;
    dcfg.lazy_leader_sync = cfg.dleger_lazy_leader_sync;
    if (!dcfg.sync_before_ack) {
        spdlog::warn(
            "dLegerSyncBeforeAck=false: acks from the page cache; a power failure of "
            "a majority of the group can lose acknowledged messages");
    }
    dledger_ = std::make_unique<dledger::DLedgerServer>(std::move(dcfg), *dledger_log_,
                                                        store_->store(), clock_);
    dledger_ptr_.store(dledger_.get());
    store_->set_dledger(dledger_.get());
    replication_->set_dledger(dledger_.get());
    dledger_->set_role_listener(
        [this](const dledger::DLedgerServer::RoleInfo& info) { on_dledger_role(info); });
    // Decision 040: a peer whose log storage failed has stepped down and refuses puts; it
    // exits (as after kill -9: the abort marker stays, so the restart runs the full recovery)
    // and a supervisor restarts it. A failed fsync is never retried in-process.
    dledger_->set_storage_failure_handler([](const Status& st) {
        spdlog::critical(
            "DLedger log storage failed ({}): exiting with status {} so that a "
            "restart recovers the log from disk",
            st.to_string(), kDLedgerStorageFailedExit);
        spdlog::default_logger()->flush();
        std::_Exit(kDLedgerStorageFailedExit);
    });
    // Until the group elects it, this peer is a follower: register as one.
    (void)config_.update({{"brokerId", std::to_string(dledger_->config().self().follower_broker_id)},
                          {"brokerRole", "SLAVE"}});
    return Status::ok();
}

Status BrokerController::open_dledger_log(const BrokerConfig& cfg,
                                          store::MessageStoreOptions* options) {
    auto log = dledger::EntryLog::open(cfg.store_root() + "/dledger",
                                       cfg.store_root() + "/epochFileCheckpoint");
    if (!log.is_ok()) {
        return Status::error(log.status().code(), "open DLedger log: {}", log.status().message());
    }
    dledger_log_ = std::move(log).value();
    dledger::EntryLog* entries = dledger_log_.get();
    options->recovery_keep_end = [entries](store::PhysicalOffset cl_end) {
        return dledger::recovery_keep_end(*entries, cl_end);
    };
    // Only committed entries reach ConsumeQueues: at open the commit recorded in the hard
    // state, then whatever the server has seen committed.
    options->dispatch_limit = [this, entries] {
        if (dledger::DLedgerServer* d = dledger_ptr_.load(); d != nullptr) {
            return store::PhysicalOffset(d->committed_offset());
        }
        return dledger::committed_end_at_open(*entries);
    };
    // Retention keeps what a follower still needs while this peer leads (decision 040).
    options->retention_floor = [this] {
        const dledger::DLedgerServer* d = dledger_ptr_.load();
        return store::PhysicalOffset(d != nullptr ? d->retention_floor() : 0);
    };
    // DLedgerServer::publish_commit wakes the dispatcher at every commit.
    options->only_limit_raises_wake_dispatch = true;
    return Status::ok();
}

Status BrokerController::retire_dledger_log(const BrokerConfig& cfg) {
    // Back in master-slave mode, a DLedger log left from an earlier run no longer describes
    // the CommitLog (new records are written without it). Kept aside, never reused: a later
    // switch to DLedger mode starts a new log whose base is the CommitLog end then.
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(cfg.store_root()) / "dledger";
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
        return Status::ok();
    }
    const fs::path aside =
        fs::path(cfg.store_root()) / ("dledger.retired-" + std::to_string(clock_.wall_millis()));
    fs::rename(dir, aside, ec);
    if (ec) {
        return Status::error(Errc::kIoError, "retire the DLedger log {}: {}", dir.string(),
                             ec.message());
    }
    const fs::path epochs = fs::path(cfg.store_root()) / "epochFileCheckpoint";
    if (fs::exists(epochs, ec)) {
        fs::rename(epochs, aside / "epochFileCheckpoint", ec);
    }
    spdlog::warn("enableDLegerCommitLog=false: the DLedger log of an earlier run is moved to {}",
                 aside.string());
    return Status::ok();
}

void BrokerController::on_dledger_role(const dledger::DLedgerServer::RoleInfo& info) {
    // RocketMQ's DLedgerRoleChangeHandler: the leader is the group's master (brokerId 0) once
    // it may write; every other peer a slave with its own brokerId.
    const bool master = info.role == raft::Role::kLeader && info.writable;
    const int64_t id = master ? 0 : dledger_->config().self().follower_broker_id;
    const BrokerConfig cur = config_.get();
    if (cur.broker_id != id) {
        Status st = config_.update(
            {{"brokerId", std::to_string(id)}, {"brokerRole", master ? "SYNC_MASTER" : "SLAVE"}});
        if (!st.is_ok()) {
            spdlog::error("DLedger role change: {}", st.message());
            return;
        }
    }
    // Registering at once also tells a follower its new master (the register result), so it
    // syncs the master's topics, offsets and groups now rather than at the next 30 s round.
    note_dledger_offsets(master);
    spdlog::info("DLedger: registering as {} (brokerId {}, leader {})", master ? "master" : "slave",
                 id, info.leader_id.empty() ? "unknown" : info.leader_id);
    request_registration();
    {
        // Register once more shortly. A follower: the new leader registers as master only once
        // writable, usually just after this, and the register result then names it. A new
        // master: the name server ignores a brokerId 0 still held by the old leader (with a
        // newer state version) until that one re-registers as a slave, which it does at once.
        MutexLock l(mu_);
        register_again_at_ = clock_.now() + std::chrono::milliseconds(500);
        // A follower keeps asking (every 500 ms, 10 s at most) until the result names the
        // master: without one it copies no offsets, topics or groups until the next 30 s round.
        dledger_register_retries_ = !master && !info.leader_id.empty() ? 20 : 0;
        cv_.notify_all();
    }
}

// Consumer offsets are not in the Raft log: followers copy the master's table (SlaveSynchronize).
// A peer that led the group has the newest offsets when it stops or steps down, and its first
// follower sync would overwrite them with the new leader's older copy; the group would then
// hand out those older offsets (redelivery) once this peer leads again. So a leader marks its
// table as the group's newest (a file beside it that survives restarts), and as a follower it
// first hands the higher offsets to the master, then drops the mark (docs/dledger.md).
void BrokerController::note_dledger_offsets(bool master) {
    namespace fs = std::filesystem;
    const fs::path mark = fs::path(config_.get().store_root()) / "config" / "dledgerLeaderOffsets";
    std::error_code ec;
    if (master) {
        if (!fs::exists(mark, ec)) {
            fs::create_directories(mark.parent_path(), ec);
            std::FILE* f = std::fopen(mark.c_str(), "w");
            if (f == nullptr) {
                spdlog::warn("DLedger: cannot write {}: {}", mark.string(), std::strerror(errno));
                return;
            }
            std::fputs("this peer led the group: its consumer offsets go to the next master\n", f);
            std::fclose(f);
        }
        return;
    }
    if (fs::exists(mark, ec) && acting_ != nullptr) {
        spdlog::info(
            "DLedger: this peer led the group; its consumer offsets go to the master "
            "before the first copy from it");
        acting_->push_offsets_before_next_sync([mark] {
            std::error_code rm_ec;
            fs::remove(mark, rm_ec);
        });
    }
}

Status BrokerController::init_controller_mode(const BrokerConfig& cfg) {
    controller_store_ = std::make_unique<ControllerStore>(store_->store(), cfg.epoch_file_path(),
                                                          cfg.all_ack_in_sync_state_set);
    COMET_RETURN_IF_ERROR(controller_store_->load());
    ControllerStore* cs = controller_store_.get();
    store_->store().set_dispatch_limit(
        [cs] { return store::PhysicalOffset(cs->dispatch_limit()); });
    store_->set_writable(false);  // until the controller makes this broker the master
    replication_->set_controller_store(cs);
    cs->set_progress_source([this] {
        std::vector<ReplicaProgress> out;
        ha::HaService* svc = replication_->ha_service();
        if (svc == nullptr) {
            return out;
        }
        for (const ha::SlaveInfo& s : svc->slaves()) {
            ReplicaProgress p;
            p.broker_id = s.broker_id;
            p.ack_offset = s.ack_offset;
            p.connected = true;
            p.caught_up_at = s.caught_up_at;
            p.async_learner = s.async_learner;
            out.push_back(p);
        }
        return out;
    });
    has_role_.store(false);
    // Until the controller names a role this broker is a slave without a master; it does not
    // register with the name servers before that.
    COMET_RETURN_IF_ERROR(config_.update({{"brokerRole", "SLAVE"}}));
    controller_link_ = std::make_unique<ControllerLink>(cfg.controller_list(),
                                                        std::chrono::milliseconds(3000), clock_);
    controller_roles_ = std::make_unique<ControllerRoles>(*this);
    ReplicasManagerConfig rc;
    rc.cluster_name = cfg.broker_cluster_name;
    rc.broker_name = cfg.broker_name;
    rc.broker_addr = cfg.broker_addr();
    rc.identity_path = cfg.broker_identity_path();
    rc.heartbeat_interval = std::chrono::milliseconds(cfg.broker_heartbeat_interval);
    rc.heartbeat_timeout = std::chrono::milliseconds(cfg.controller_heart_beat_timeout_mills);
    rc.send_heartbeat_timeout = std::chrono::milliseconds(cfg.send_heartbeat_timeout_millis);
    rc.sync_metadata_period = std::chrono::milliseconds(cfg.sync_broker_metadata_period);
    rc.check_sync_state_set_period = std::chrono::milliseconds(cfg.check_sync_state_set_period);
    rc.max_not_catchup = std::chrono::milliseconds(cfg.ha_max_time_slave_not_catchup);
    rc.election_priority = cfg.broker_election_priority;
    master_lease_ = std::make_unique<MasterLease>();
    replication_->set_master_lease(master_lease_.get());
    replicas_manager_ = std::make_unique<ReplicasManager>(
        rc, *controller_link_, *cs, *controller_roles_, clock_, *master_lease_);
    spdlog::info(
        "controller mode: controllers {}, allAckInSyncStateSet={}, minInSyncReplicas={}, "
        "epoch file {}",
        cfg.controller_addr, cfg.all_ack_in_sync_state_set, cfg.min_in_sync_replicas,
        cfg.epoch_file_path());
    return Status::ok();
}

Status BrokerController::become_controller_master(int64_t my_id, int32_t epoch) {
    store_->set_writable(false);
    replication_->stop_ha_client();
    COMET_RETURN_IF_ERROR(controller_store_->become_master_store(epoch, my_id, 30s));
    COMET_RETURN_IF_ERROR(replication_->become_master(my_id));
    COMET_RETURN_IF_ERROR(config_.update({{"brokerId", "0"}, {"brokerRole", "SYNC_MASTER"}}));
    {
        MutexLock l(mu_);
        ha_info_from_.clear();
    }
    store_->set_writable(true);
    if (!schedule_started_.exchange(true)) {
        schedule_->start(200ms, 10s);
    }
    acting_->follow_controller_master("");  // a master copies no one's topics and offsets
    has_role_.store(true);
    spdlog::info("controller mode: master of {} at epoch {} (controller id {}, CommitLog end {})",
                 config_.get().broker_name, epoch, my_id, controller_store_->max_offset());
    request_registration();
    return Status::ok();
}

Status BrokerController::become_controller_slave(int64_t my_id, int64_t master_id,
                                                 const std::string& master_addr, int32_t epoch) {
    store_->set_writable(false);
    replication_->become_slave(my_id);
    controller_store_->become_slave_store(my_id);
    COMET_RETURN_IF_ERROR(
        config_.update({{"brokerId", std::to_string(my_id)}, {"brokerRole", "SLAVE"}}));
    // Topics, consumer offsets and groups come from the master the controller named.
    acting_->follow_controller_master(master_id > 0 ? master_addr : std::string());
    // Before the registration is requested: the scheduler thread may take the request at once,
    // and register_broker_all() skips it while this broker has no role.
    has_role_.store(master_id > 0);
    {
        MutexLock l(mu_);
        ha_info_from_ = master_id > 0 ? master_addr : std::string();
        register_now_ = true;
    }
    cv_.notify_all();
    spdlog::info("controller mode: slave (controller id {}) of master {} at {}, epoch {}", my_id,
                 master_id, master_addr.empty() ? "none" : master_addr, epoch);
    return Status::ok();
}

void BrokerController::fetch_master_ha_address() {
    std::string from;
    {
        MutexLock l(mu_);
        from = ha_info_from_;
    }
    if (from.empty() || replication_ == nullptr || !replication_->is_slave()) {
        return;
    }
    protocol::RemotingCommand req = protocol::RemotingCommand::request(Req::kExchangeBrokerHaInfo);
    protocol::ExchangeHaInfoHeader().to_ext(req);
    auto r = namesrv_client_->invoke_sync(from, std::move(req), 3s);
    if (!r.is_ok() || r->code != RC::kSuccess) {
        spdlog::debug("controller mode: EXCHANGE_BROKER_HA_INFO to {}: {}", from,
                      r.is_ok() ? r->remark.value_or("") : r.status().message());
        return;
    }
    auto h = protocol::ExchangeHaInfoHeader::from_ext(*r);
    if (!h.is_ok() || !h->master_ha_address || h->master_ha_address->empty()) {
        return;  // not (yet) a master with an HA port: ask again
    }
    {
        MutexLock l(mu_);
        if (ha_info_from_ != from) {
            return;  // the role moved meanwhile
        }
        ha_info_from_.clear();
    }
    spdlog::info("controller mode: replicating from master {} (HA {})", from,
                 *h->master_ha_address);
    replication_->connect_master_ha(*h->master_ha_address);
}

}  // namespace comet::broker
