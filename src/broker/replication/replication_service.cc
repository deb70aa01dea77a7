#include "broker/replication/replication_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>

#include "broker/controller/controller_store.h"
#include "broker/controller/master_lease.h"
#include "dledger/dledger_server.h"
#include "net/io_loop.h"
#include "protocol/json_body.h"

namespace comet::broker {
namespace {

using ha::QuorumVerdict;
using store::PutMessageStatus;

// A runtime-info flag as RocketMQ writes it.
std::string true_false(bool v) { return std::string(v ? "true" : "false"); }

// HaService as the send path's replica set.
class HaServiceReplicas final : public ReplicaSet {
public:
    explicit HaServiceReplicas(ha::HaService& ha) : ha_(ha) {}
    std::vector<int64_t> slave_ack_offsets() const override { return ha_.slave_ack_offsets(); }
    ha::GroupTransfer& group_transfer() override { return ha_.group_transfer(); }
    void notify_new_data() override { ha_.notify_new_data(); }

private:
    ha::HaService& ha_;
};

// "host:port" -> (host, port). Errors name the key.
Result<std::pair<std::string, uint16_t>> split_host_port(std::string_view key,
                                                         std::string_view addr) {
    const size_t colon = addr.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
        return Status::error(Errc::kInvalidArgument, "{}: '{}' is not host:port", key, addr);
    }
    uint32_t port = 0;
    const std::string_view p = addr.substr(colon + 1);
    const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
    if (ec != std::errc() || end != p.data() + p.size() || port == 0 || port > 65535) {
        return Status::error(Errc::kInvalidArgument, "{}: '{}' has no valid port", key, addr);
    }
    return std::make_pair(std::string(addr.substr(0, colon)), static_cast<uint16_t>(port));
}

}  // namespace

Result<ReplicationConfig> make_replication_config(const BrokerConfig& config,
                                                  std::vector<std::string>* warnings) {
    ReplicationConfig c;
    COMET_ASSIGN_OR_RETURN(c.quorum.broker_role, ha::parse_broker_role(config.broker_role));
    c.quorum.total_replicas = config.total_replicas;
    c.quorum.in_sync_replicas = config.in_sync_replicas;
    c.quorum.min_in_sync_replicas = config.min_in_sync_replicas;
    c.quorum.enable_auto_in_sync_replicas = config.enable_auto_in_sync_replicas;
    c.quorum.enable_slave_acting_master = config.enable_slave_acting_master;
    c.quorum.ha_max_gap_not_in_sync = config.ha_max_gap_not_in_sync;
    c.quorum.ha_slave_fallbehind_max = config.ha_slave_fallbehind_max;
    // A file written for 4.x keeps 4.9.8's SYNC_MASTER meaning; DLedger and controller mode
    // have rules of their own (docs/durability.md).
    c.quorum.rules = config.uses_rocketmq5_quorum_rules() || config.enable_controller_mode ||
                             config.enable_dleger_commit_log
                         ? ha::QuorumRules::kRocketMq5
                         : ha::QuorumRules::kRocketMq4;
    c.quorum.slave_not_available_fast_fail = config.slave_not_available_fast_fail;
    c.controller_mode = config.enable_controller_mode;
    if (c.controller_mode) {
        // The controller assigns roles and ids; brokerRole/brokerId of the file only seed the
        // start (RocketMQ's sample: brokerRole=SLAVE, brokerId=-1).
        c.quorum.broker_role = ha::BrokerRole::kSyncMaster;
        c.controller.in_sync_replicas = config.in_sync_replicas;
        c.controller.min_in_sync_replicas = config.min_in_sync_replicas;
        c.controller.all_ack_in_sync_state_set = config.all_ack_in_sync_state_set;
        c.controller.enable_auto_in_sync_replicas = config.enable_auto_in_sync_replicas;
        c.sync_from_last_file = config.sync_from_last_file;
        c.async_learner = config.async_learner;
    }
    if (c.controller_mode) {
        // The SyncStateSet is the in-sync figure; inSyncReplicas only counts without
        // allAckInSyncStateSet.
        if (!c.controller.all_ack_in_sync_state_set &&
            c.controller.min_in_sync_replicas > c.controller.in_sync_replicas) {
            return Status::error(Errc::kInvalidArgument,
                                 "minInSyncReplicas={} is greater than inSyncReplicas={} "
                                 "(controller mode without allAckInSyncStateSet)",
                                 c.controller.min_in_sync_replicas, c.controller.in_sync_replicas);
        }
    } else {
        COMET_RETURN_IF_ERROR(ha::validate_quorum_config(c.quorum, warnings));
    }
    if (!c.controller_mode && c.is_slave() && config.broker_id <= 0) {
        return Status::error(Errc::kInvalidArgument,
                             "brokerRole=SLAVE needs brokerId > 0 (brokerId is {})",
                             config.broker_id);
    }
    if (!c.controller_mode && !c.is_slave() && config.broker_id != 0 && warnings != nullptr) {
        warnings->push_back(fmt::format(
            "brokerRole={} with brokerId={}: a master's brokerId should be 0 (RocketMQ forces it)",
            config.broker_role, config.broker_id));
    }
    if (!config.ha_master_address.empty()) {
        COMET_RETURN_IF_ERROR(
            split_host_port("haMasterAddress", config.ha_master_address).status());
    }
    if (config.ha_send_heartbeat_interval <= 0 || config.ha_housekeeping_interval <= 0 ||
        config.ha_transfer_batch_size <= 0 || config.slave_timeout <= 0) {
        return Status::error(Errc::kInvalidArgument,
                             "haSendHeartbeatInterval, haHousekeepingInterval, "
                             "haTransferBatchSize and slaveTimeout must be > 0");
    }
    c.broker_name = config.broker_name;
    c.broker_id = config.broker_id;
    c.listen_host = config.listen_host.empty() ? "0.0.0.0" : config.listen_host;
    c.ha_listen_port = static_cast<uint16_t>(config.effective_ha_listen_port());
    c.ha_master_address = config.ha_master_address;
    c.ha_transfer_batch_size = config.ha_transfer_batch_size;
    c.heartbeat_interval = std::chrono::milliseconds(config.ha_send_heartbeat_interval);
    c.housekeeping_interval = std::chrono::milliseconds(config.ha_housekeeping_interval);
    c.slave_timeout = std::chrono::milliseconds(config.slave_timeout);
    c.require_handshake = config.require_handshake;
    c.send_handshake = config.send_handshake;
    return c;
}

ReplicationService::ReplicationService(ReplicationConfig config, Clock& clock,
                                       ha::HaStorePort& store, AliveReplicaFn alive)
    : config_(std::move(config)), clock_(clock), store_(store), alive_(std::move(alive)) {}

ReplicationService::~ReplicationService() { shutdown(); }

std::string ReplicationService::service_not_available_remark() {
    return "service not available now. It may be caused by one of the following reasons: the "
           "broker's disk is full, messages are put to the slave, message store has been shut "
           "down, etc.";
}

Status ReplicationService::start() {
    if (dledger_ != nullptr) {
        return Status::ok();  // the DLedger server replicates; no HA port
    }
    if (config_.controller_mode) {
        spdlog::info("{}: controller mode: waiting for the controller to assign a role",
                     config_.broker_name);
        return Status::ok();  // the ReplicasManager calls become_master / become_slave
    }
    if (config_.is_slave()) {
        if (!config_.ha_master_address.empty()) {
            connect_slave(config_.ha_master_address);
        } else {
            spdlog::info(
                "slave {}/{}: no haMasterAddress; waiting for the master's HA address "
                "from the name server",
                config_.broker_name, config_.broker_id);
        }
        return Status::ok();
    }
    return start_ha_service(false);
}

Status ReplicationService::start_ha_service(bool auto_switch) {
    ha::HaServiceConfig hc;
    hc.broker_name = config_.broker_name;
    hc.listen_host = config_.listen_host;
    hc.listen_port = config_.ha_listen_port;
    hc.transfer_batch_size = config_.ha_transfer_batch_size;
    hc.heartbeat_interval = config_.heartbeat_interval;
    hc.housekeeping_interval = config_.housekeeping_interval;
    hc.tick_interval = config_.tick_interval;
    hc.require_handshake = config_.require_handshake;
    hc.quorum = config_.quorum;
    if (auto_switch) {
        // Controller mode decides puts from the SyncStateSet (put_controller); the service's
        // own quorum figures stay neutral.
        hc.quorum.in_sync_replicas = 1;
        hc.quorum.min_in_sync_replicas = 1;
        hc.quorum.total_replicas = 1;
        hc.quorum.enable_auto_in_sync_replicas = false;
    }
    hc.auto_switch = auto_switch;
    auto svc =
        ha::HaService::start(hc, store_, clock_, auto_switch ? controller_store_ : nullptr, loops_);
    if (!svc.is_ok()) {
        return Status::error(svc.status().code(), "start HA service on {}:{} (haListenPort): {}",
                             config_.listen_host, config_.ha_listen_port, svc.status().message());
    }
    ha::HaService* raw = svc->get();
    if (auto_switch && controller_store_ != nullptr) {
        // Only SyncStateSet members count towards a put's acks.
        ControllerStore* cs = controller_store_;
        raw->set_ack_filter([cs](int64_t broker_id) { return cs->in_sync_state_set(broker_id); });
        // The dispatch limit (the confirm offset) follows the acks: wake the dispatcher.
        raw->set_ack_listener([cs] { cs->note_dispatchable(); });
    }
    auto replicas = std::make_unique<HaServiceReplicas>(*raw);
    ReplicaSet* rs = replicas.get();
    {
        MutexLock l(mu_);
        ha_services_.push_back(std::move(svc).value());
        own_replicas_.push_back(std::move(replicas));
    }
    ha_current_.store(raw);
    replicas_.store(rs);
    spdlog::info("HA service of {} ({}) listening on {}:{}", config_.broker_name,
                 auto_switch ? "controller-mode master"
                             : std::string(ha::broker_role_name(config_.quorum.broker_role)),
                 config_.listen_host, raw->port());
    return Status::ok();
}

void ReplicationService::stop_ha_client() {
    std::unique_ptr<ha::HaClient> client;
    {
        MutexLock l(mu_);
        client = std::move(ha_client_);
        master_ha_addr_.clear();
        master_addr_.reset();
    }
    if (client) {
        client->shutdown();  // waits for its stop step on the loop: no append after this
    }
}

Status ReplicationService::become_master(int64_t broker_id) {
    controller_id_.store(broker_id);
    stop_ha_client();
    if (ha_current_.load() == nullptr) {
        COMET_RETURN_IF_ERROR(start_ha_service(true));
    }
    controller_master_.store(true);
    return Status::ok();
}

void ReplicationService::become_slave(int64_t broker_id) {
    controller_master_.store(false);
    controller_id_.store(broker_id);
    replicas_.store(nullptr);
    if (ha::HaService* svc = ha_current_.exchange(nullptr)) {
        svc->shutdown();  // waiting puts fail; its slaves reconnect to the new master
    }
    stop_ha_client();  // a new master: connect_master_ha() starts a new client
}

void ReplicationService::start_with(ReplicaSet* replicas) { replicas_.store(replicas); }

void ReplicationService::shutdown() {
    std::unique_ptr<ha::HaClient> client;
    {
        MutexLock l(mu_);
        if (stopped_) {
            return;
        }
        stopped_ = true;
        client = std::move(ha_client_);
    }
    if (client) {
        client->shutdown();
    }
    std::vector<ha::HaService*> services;
    {
        MutexLock l(mu_);
        for (const auto& svc : ha_services_) {
            services.push_back(svc.get());
        }
    }
    for (ha::HaService* svc : services) {
        svc->shutdown();
    }
}

void ReplicationService::set_alive_replica_fn(AliveReplicaFn alive) {
    MutexLock l(mu_);
    alive_ = std::move(alive);
}

int32_t ReplicationService::alive_replica_num() const {
    AliveReplicaFn fn;
    {
        MutexLock l(mu_);
        fn = alive_;
    }
    return fn ? fn() : config_.quorum.total_replicas;
}

uint16_t ReplicationService::ha_port() const {
    const ha::HaService* svc = ha_current_.load();
    return svc != nullptr ? svc->port() : 0;
}

void ReplicationService::put_dledger(const PutFn& put, Done done) {
    const auto majority = static_cast<int32_t>(dledger_->config().peers.size() / 2 + 1);
    // Every put waits for the majority commit, whatever WAIT says (RocketMQ's DLedgerCommitLog
    // does the same): an entry only the leader holds is cut when another peer is elected, so an
    // answer on the local append would acknowledge a message the group may lose.
    put([this, majority, done = std::move(done)](store::PutMessageResult r) mutable {
        if (r.status == PutMessageStatus::kServiceNotAvailable) {
            counters_.slave_refused.fetch_add(1, std::memory_order_relaxed);
        }
        if (r.status != PutMessageStatus::kPutOk) {
            done(std::move(r), SendDurability{1, majority, false});
            return;
        }
        const int64_t end = r.append.end_offset().value();
        auto committed = [this, r = std::move(r), majority,
                          done = std::move(done)](PutMessageStatus st) mutable {
            if (st == PutMessageStatus::kPutOk) {
                counters_.quorum_acks.fetch_add(1, std::memory_order_relaxed);
            } else {
                counters_.slave_timeouts.fetch_add(1, std::memory_order_relaxed);
                r.remark = st == PutMessageStatus::kFlushSlaveTimeout
                               ? "not committed by a majority of the DLedger group in time "
                                 "(leadership may have moved): outcome unknown"
                               : "not stored: leadership lost before replication";
            }
            r.status = st;
            done(std::move(r),
                 SendDurability{st == PutMessageStatus::kPutOk ? majority : 1, majority, false});
        };
        static_assert(dledger::DLedgerServer::CommitDone::fits_inline<decltype(committed)>(),
                      "the commit waiter must not allocate per send");
        dledger_->wait_committed(end, std::move(committed));
    });
}

void ReplicationService::put(bool wait_store_msg_ok, const PutFn& put, Done done) {
    if (dledger_ != nullptr) {
        put_dledger(put, std::move(done));
        return;
    }
    if (config_.controller_mode) {
        put_controller(wait_store_msg_ok, put, std::move(done));
        return;
    }
    if (config_.is_slave()) {
        refuse_as_slave(done);
        return;
    }
    ReplicaSet* const replicas = replicas_.load();
    // Only a SYNC_MASTER put that waits can need replicas (CommitLog#needHandleHA); skip the
    // snapshot of the HA state otherwise.
    ha::QuorumDecision d;
    if (config_.quorum.broker_role == ha::BrokerRole::kSyncMaster && wait_store_msg_ok) {
        std::vector<int64_t> acks;
        if (replicas != nullptr) {
            acks = replicas->slave_ack_offsets();
        }
        ha::QuorumInput in;
        in.wait_store_msg_ok = wait_store_msg_ok;
        in.alive_replica_num = alive_replica_num();
        in.master_put_offset = store_.max_offset();
        in.slave_ack_offsets = acks;
        d = ha::decide_quorum(config_.quorum, in);
    }
    if (d.verdict == QuorumVerdict::kInSyncReplicasNotEnough) {
        counters_.isr_not_enough.fetch_add(1, std::memory_order_relaxed);
        store::PutMessageResult r;
        r.status = PutMessageStatus::kInSyncReplicasNotEnough;
        done(std::move(r), SendDurability{1, d.need_ack_nums, d.degraded});
        return;
    }
    auto appended = [this, d, replicas, done = std::move(done)](store::PutMessageResult r) mutable {
        if (replicas != nullptr && store::is_stored(r.status)) {
            replicas->notify_new_data();
        }
        // A failed append or flush answers as the store said (RocketMQ: the flush outcome
        // wins over replication).
        if (r.status != PutMessageStatus::kPutOk) {
            done(std::move(r), SendDurability{1, d.need_ack_nums, d.degraded});
            return;
        }
        switch (d.verdict) {
            case QuorumVerdict::kWaitForSlaves: {
                wait_for_replicas(replicas, std::move(r), d, std::move(done));
                return;
            }
            case QuorumVerdict::kSlaveNotAvailable:
                counters_.slave_not_available.fetch_add(1, std::memory_order_relaxed);
                r.status = PutMessageStatus::kSlaveNotAvailable;
                done(std::move(r), SendDurability{1, d.need_ack_nums, d.degraded});
                return;
            case QuorumVerdict::kPutOkNow:
            default:
                if (d.degraded) {
                    counters_.degraded_acks.fetch_add(1, std::memory_order_relaxed);
                }
                done(std::move(r), SendDurability{1, d.need_ack_nums, d.degraded});
                return;
        }
    };
    static_assert(PutCallback::fits_inline<decltype(appended)>(),
                  "the replication step must fit the store's completion inline (no allocation)");
    put(std::move(appended));
}

void ReplicationService::refuse_as_slave(const Done& done) {
    counters_.slave_refused.fetch_add(1, std::memory_order_relaxed);
    store::PutMessageResult r;
    r.status = PutMessageStatus::kServiceNotAvailable;
    r.remark = service_not_available_remark();
    done(std::move(r), SendDurability{});
}

void ReplicationService::put_controller(bool wait_store_msg_ok, const PutFn& put, Done done) {
    ReplicaSet* const replicas = replicas_.load();
    if (!controller_master_.load() || controller_store_ == nullptr) {
        refuse_as_slave(done);
        return;
    }
    if (store::PutMessageResult r; lease_refuses(r)) {
        done(std::move(r), SendDurability{});
        return;
    }
    // Checked again before the answer: the lease may run out while the put waits.
    if (lease_ != nullptr) {
        done = [this, inner = std::move(done)](store::PutMessageResult r, SendDurability dur) {
            if (r.status == PutMessageStatus::kPutOk && lease_refuses(r)) {
                dur.replicas = 1;
            }
            inner(std::move(r), dur);
        };
    }
    const size_t set_size = controller_store_->sync_state_set_size();
    const ControllerPutDecision cd =
        decide_controller_put(config_.controller, set_size, wait_store_msg_ok);
    ha::QuorumDecision d;
    d.need_ack_nums = cd.need_ack_nums;
    d.in_sync = static_cast<int32_t>(set_size);
    d.need_handle_ha = cd.verdict != ControllerPutDecision::Verdict::kPutOkNow;
    if (cd.verdict == ControllerPutDecision::Verdict::kInSyncReplicasNotEnough) {
        counters_.isr_not_enough.fetch_add(1, std::memory_order_relaxed);
        store::PutMessageResult r;
        r.status = PutMessageStatus::kInSyncReplicasNotEnough;
        r.remark = fmt::format(
            "in-sync replicas not enough: the SyncStateSet holds {} of the "
            "{} replicas a put needs (minInSyncReplicas {}{})",
            set_size, cd.need_ack_nums, config_.controller.min_in_sync_replicas,
            config_.controller.all_ack_in_sync_state_set ? ", allAckInSyncStateSet" : "");
        done(std::move(r), SendDurability{1, cd.need_ack_nums, false});
        return;
    }
    const bool wait = cd.verdict == ControllerPutDecision::Verdict::kWaitForSlaves;
    put([this, d, wait, replicas, done = std::move(done)](store::PutMessageResult r) mutable {
        if (replicas != nullptr && store::is_stored(r.status)) {
            replicas->notify_new_data();
        }
        if (r.status != PutMessageStatus::kPutOk || !wait) {
            done(std::move(r), SendDurability{1, d.need_ack_nums, false});
            return;
        }
        wait_for_replicas(replicas, std::move(r), d, std::move(done));
    });
}

bool ReplicationService::lease_refuses(store::PutMessageResult& r) {
    if (lease_ == nullptr) {
        return false;
    }
    const TimePoint now = clock_.now();
    if (lease_->may_acknowledge(now)) {
        return false;
    }
    counters_.lease_refused.fetch_add(1, std::memory_order_relaxed);
    r.status = PutMessageStatus::kServiceNotAvailable;
    r.remark = lease_->refusal(now);
    return true;
}

void ReplicationService::wait_for_replicas(ReplicaSet* replicas, store::PutMessageResult r,
                                           const ha::QuorumDecision& d, Done done) {
    if (replicas == nullptr) {
        finish_wait(std::move(r), d, PutMessageStatus::kSlaveNotAvailable, done);
        return;
    }
    const int64_t end = r.append.end_offset().value();
    replicas->group_transfer().put_request(
        end, d.need_ack_nums, config_.slave_timeout,
        [this, r = std::move(r), d, done = std::make_shared<Done>(std::move(done))](
            PutMessageStatus status) mutable { finish_wait(std::move(r), d, status, *done); });
}

void ReplicationService::finish_wait(store::PutMessageResult r, const ha::QuorumDecision& d,
                                     PutMessageStatus status, const Done& done) {
    const int64_t end = r.append.end_offset().value();
    r.status = status;
    SendDurability dur{1, d.need_ack_nums, d.degraded};
    switch (status) {
        case PutMessageStatus::kPutOk:
            counters_.quorum_acks.fetch_add(1, std::memory_order_relaxed);
            if (d.degraded) {
                counters_.degraded_acks.fetch_add(1, std::memory_order_relaxed);
            }
            // At least the quorum held it; more slaves may have acked meanwhile.
            dur.replicas = std::max(d.need_ack_nums, replicas_holding(end));
            break;
        case PutMessageStatus::kFlushSlaveTimeout:
            counters_.slave_timeouts.fetch_add(1, std::memory_order_relaxed);
            dur.replicas = replicas_holding(end);
            break;
        case PutMessageStatus::kSlaveNotAvailable:
            counters_.slave_not_available.fetch_add(1, std::memory_order_relaxed);
            break;
        default:
            dur.replicas = replicas_holding(end);
            break;
    }
    done(std::move(r), dur);
}

int32_t ReplicationService::replicas_holding(int64_t end_offset) const {
    ReplicaSet* const replicas = replicas_.load();
    if (replicas == nullptr) {
        return 1;
    }
    int32_t n = 1;
    for (int64_t ack : replicas->slave_ack_offsets()) {
        if (ack >= end_offset) {
            ++n;
        }
    }
    return n;
}

void ReplicationService::connect_slave(const std::string& ha_addr) {
    auto hp = split_host_port("haServerAddr", ha_addr);
    if (!hp.is_ok()) {
        spdlog::warn("slave {}/{}: ignoring master HA address: {}", config_.broker_name,
                     config_.broker_id, hp.status().message());
        return;
    }
    MutexLock l(mu_);
    if (stopped_ || master_ha_addr_ == ha_addr) {
        return;
    }
    master_ha_addr_ = ha_addr;
    if (ha_client_) {
        spdlog::info("slave {}/{}: master HA address changed to {}", config_.broker_name,
                     config_.broker_id, ha_addr);
        ha_client_->update_master_address(hp->first, hp->second);
        return;
    }
    ha::HaClientConfig hc;
    hc.master_host = hp->first;
    hc.master_port = hp->second;
    hc.broker_name = config_.broker_name;
    hc.broker_id = config_.controller_mode ? controller_id_.load() : config_.broker_id;
    hc.send_handshake = config_.send_handshake;
    hc.heartbeat_interval = config_.heartbeat_interval;
    hc.housekeeping_interval = config_.housekeeping_interval;
    hc.reconnect_interval = config_.reconnect_interval;
    hc.auto_switch = config_.controller_mode;
    hc.sync_from_last_file = config_.sync_from_last_file;
    hc.async_learner = config_.async_learner;
    auto client = ha::HaClient::start(
        hc, store_, clock_, config_.controller_mode ? controller_store_ : nullptr, loops_);
    if (!client.is_ok()) {
        spdlog::error("slave {}/{}: cannot start the HA client towards {}: {}", config_.broker_name,
                      config_.broker_id, ha_addr, client.status().message());
        master_ha_addr_.clear();
        return;
    }
    ha_client_ = std::move(client).value();
    spdlog::info("slave {}/{}: replicating from master HA address {}", config_.broker_name,
                 config_.broker_id, ha_addr);
}

void ReplicationService::on_register_result(const std::optional<std::string>& ha_server_addr,
                                            const std::optional<std::string>& master_addr) {
    // Controller mode: the controller names the master and EXCHANGE_BROKER_HA_INFO gives its
    // HA address (connect_master_ha); the name server's view may still be the old master's.
    if (!config_.is_slave() || config_.controller_mode) {
        return;
    }
    {
        MutexLock l(mu_);
        if (master_addr && !master_addr->empty()) {
            master_addr_ = *master_addr;
        }
    }
    if (config_.ha_master_address.empty() && ha_server_addr && !ha_server_addr->empty()) {
        connect_slave(*ha_server_addr);
    }
}

std::optional<std::string> ReplicationService::master_addr() const {
    MutexLock l(mu_);
    return master_addr_;
}

std::string ReplicationService::master_ha_addr() const {
    MutexLock l(mu_);
    return master_ha_addr_;
}

std::map<std::string, std::string> ReplicationService::runtime_info() const {
    if (dledger_ != nullptr) {
        std::map<std::string, std::string> t = dledger_->runtime_info();
        t["dledgerPutsCommitted"] = std::to_string(counters_.quorum_acks.load());
        t["dledgerPutsNotCommitted"] = std::to_string(counters_.slave_timeouts.load());
        t["dledgerPutsRefused"] = std::to_string(counters_.slave_refused.load());
        return t;
    }
    std::map<std::string, std::string> t;
    if (config_.controller_mode && controller_store_ != nullptr) {
        add_controller_runtime_info(&t);
    }
    t["haBrokerRole"] = config_.controller_mode
                            ? std::string(is_slave() ? "SLAVE" : "SYNC_MASTER")
                            : std::string(ha::broker_role_name(config_.quorum.broker_role));
    if (is_slave()) {
        add_slave_runtime_info(&t);
    } else {
        add_master_runtime_info(&t);
    }
    return t;
}

void ReplicationService::add_controller_runtime_info(std::map<std::string, std::string>* t) const {
    // Controller mode (docs/controller.md, "Runtime info").
    (*t)["controllerMaster"] = true_false(!is_slave());
    (*t)["controllerBrokerId"] = std::to_string(controller_id_.load());
    (*t)["masterEpoch"] = std::to_string(controller_store_->last_epoch());
    (*t)["confirmOffset"] = std::to_string(controller_store_->confirm_offset());
    std::string set;
    for (int64_t id : controller_store_->sync_state_set()) {
        set += (set.empty() ? "" : ",") + std::to_string(id);
    }
    (*t)["syncStateSet"] = set;
    std::string epochs;
    for (const store::EpochEntry& e : controller_store_->epochs()) {
        epochs += (epochs.empty() ? "" : ";") + std::to_string(e.epoch) + "-" +
                  std::to_string(e.start_offset);
    }
    (*t)["epochEntries"] = epochs;
    (*t)["controllerTruncatedBytes"] = std::to_string(controller_store_->truncated_bytes());
}

void ReplicationService::add_slave_runtime_info(std::map<std::string, std::string>* t) const {
    (*t)["haMasterAddress"] = master_ha_addr();
    (*t)["masterAddr"] = master_addr().value_or("");
    ha::HaClientStats st;
    bool have = false;
    {
        MutexLock l(mu_);
        if (ha_client_) {
            st = ha_client_->stats();
            have = true;
        }
    }
    (*t)["haClientConnected"] = true_false(have && st.connected);
    (*t)["haClientMaxOffset"] = std::to_string(store_.max_offset());
    (*t)["haClientBytes"] = std::to_string(st.bytes);
    (*t)["haClientConnects"] = std::to_string(st.connects);
    (*t)["haClientProtocolErrors"] = std::to_string(st.protocol_errors);
    (*t)["slaveRefusedPutTotal"] = std::to_string(counters_.slave_refused.load());
}

void ReplicationService::add_master_runtime_info(std::map<std::string, std::string>* t) const {
    const int64_t put_offset = store_.max_offset();
    const std::vector<int64_t> acks = replicas_.load() != nullptr
                                          ? replicas_.load()->slave_ack_offsets()
                                          : std::vector<int64_t>{};
    const int32_t in_sync = ha::in_sync_replica_nums(config_.quorum, put_offset, acks);
    const int32_t alive = alive_replica_num();
    ha::QuorumInput in;
    in.wait_store_msg_ok = true;
    in.alive_replica_num = alive;
    in.master_put_offset = put_offset;
    in.slave_ack_offsets = acks;
    const ha::QuorumDecision d = ha::decide_quorum(config_.quorum, in);
    (*t)["haListenPort"] = std::to_string(ha_port());
    (*t)["masterCommitLogMaxOffset"] = std::to_string(put_offset);
    (*t)["haConnectionCount"] = std::to_string(acks.size());
    (*t)["inSyncSlaveNums"] = std::to_string(in_sync - 1);
    (*t)["inSyncReplicaNums"] = std::to_string(in_sync);
    (*t)["aliveReplicaNums"] = std::to_string(alive);
    (*t)["needAckNums"] = std::to_string(d.need_handle_ha ? d.need_ack_nums : 1);
    (*t)["needAckNumsDegraded"] = true_false(d.degraded);
    (*t)["quorumAckTotal"] = std::to_string(counters_.quorum_acks.load());
    (*t)["degradedAckTotal"] = std::to_string(counters_.degraded_acks.load());
    (*t)["slaveTimeoutTotal"] = std::to_string(counters_.slave_timeouts.load());
    (*t)["slaveNotAvailableTotal"] = std::to_string(counters_.slave_not_available.load());
    (*t)["inSyncReplicasNotEnoughTotal"] = std::to_string(counters_.isr_not_enough.load());
    if (const ha::HaService* svc = ha_current_.load(); svc != nullptr) {
        add_slave_connection_info(*svc, put_offset, t);
    }
}

void ReplicationService::add_slave_connection_info(const ha::HaService& svc, int64_t put_offset,
                                                   std::map<std::string, std::string>* t) const {
    (*t)["haRejectedConnections"] = std::to_string(svc.rejected_connections());
    std::vector<ha::SlaveInfo> slaves = svc.slaves();
    std::sort(slaves.begin(), slaves.end(), [](const auto& x, const auto& y) {
        return std::tie(x.broker_id, x.address) < std::tie(y.broker_id, y.address);
    });
    for (size_t i = 0; i < slaves.size(); ++i) {
        const ha::SlaveInfo& s = slaves[i];
        const int64_t diff = std::max<int64_t>(0, put_offset - s.ack_offset);
        protocol::JsonWriter w;
        w.begin_object()
            .member("addr", s.address)
            .member("brokerId", s.broker_id)
            .member("slaveAckOffset", s.ack_offset)
            .member("diff", diff)
            .member("inSync", diff < config_.quorum.ha_max_gap_not_in_sync)
            .member("transferFromWhere", s.sent_offset)
            .end_object();
        (*t)["haConnectionInfo." + std::to_string(i)] = w.take();
    }
}

}  // namespace comet::broker
