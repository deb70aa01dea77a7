#include "broker/replication_service.h"

#include "dledger/dledger_server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>

#include "protocol/json_body.h"

namespace comet::broker {
namespace {

using ha::QuorumVerdict;
using store::PutMessageStatus;

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
    c.quorum.slave_not_available_fast_fail = config.slave_not_available_fast_fail;
    COMET_RETURN_IF_ERROR(ha::validate_quorum_config(c.quorum, warnings));
    if (c.is_slave() && config.broker_id <= 0) {
        return Status::error(Errc::kInvalidArgument,
                             "brokerRole=SLAVE needs brokerId > 0 (brokerId is {})",
                             config.broker_id);
    }
    if (!c.is_slave() && config.broker_id != 0 && warnings != nullptr) {
        warnings->push_back(fmt::format(
            "brokerRole={} with brokerId={}: a master's brokerId should be 0 (RocketMQ forces it)",
            config.broker_role, config.broker_id));
    }
    if (!config.ha_master_address.empty()) {
        COMET_RETURN_IF_ERROR(split_host_port("haMasterAddress", config.ha_master_address)
                                  .status());
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
    if (config_.is_slave()) {
        if (!config_.ha_master_address.empty()) {
            connect_slave(config_.ha_master_address);
        } else {
            spdlog::info("slave {}/{}: no haMasterAddress; waiting for the master's HA address "
                         "from the name server",
                         config_.broker_name, config_.broker_id);
        }
        return Status::ok();
    }
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
    auto svc = ha::HaService::start(hc, store_, clock_);
    if (!svc.is_ok()) {
        return Status::error(svc.status().code(), "start HA service on {}:{} (haListenPort): {}",
                             config_.listen_host, config_.ha_listen_port,
                             svc.status().message());
    }
    ha_service_ = std::move(svc).value();
    own_replicas_ = std::make_unique<HaServiceReplicas>(*ha_service_);
    replicas_ = own_replicas_.get();
    spdlog::info("HA service of {} ({}) listening on {}:{}", config_.broker_name,
                 ha::broker_role_name(config_.quorum.broker_role), config_.listen_host,
                 ha_service_->port());
    return Status::ok();
}

void ReplicationService::start_with(ReplicaSet* replicas) { replicas_ = replicas; }

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
    if (ha_service_) {
        ha_service_->shutdown();
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
    return ha_service_ ? ha_service_->port() : 0;
}

void ReplicationService::put_dledger(bool wait_store_msg_ok, const PutFn& put, Done done) {
    const auto majority = static_cast<int32_t>(dledger_->config().peers.size() / 2 + 1);
    put([this, wait_store_msg_ok, majority, done = std::move(done)](store::PutMessageResult r) {
        if (r.status == PutMessageStatus::kServiceNotAvailable) {
            counters_.slave_refused.fetch_add(1, std::memory_order_relaxed);
        }
        if (r.status != PutMessageStatus::kPutOk || !wait_store_msg_ok) {
            done(std::move(r), SendDurability{1, majority, false});
            return;
        }
        const int64_t end = r.append.end_offset().value();
        dledger_->wait_committed(end, [this, r, majority, done](PutMessageStatus st) mutable {
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
        });
    });
}

void ReplicationService::put(bool wait_store_msg_ok, const PutFn& put, Done done) {
    if (dledger_ != nullptr) {
        put_dledger(wait_store_msg_ok, put, std::move(done));
        return;
    }
    if (config_.is_slave()) {
        counters_.slave_refused.fetch_add(1, std::memory_order_relaxed);
        store::PutMessageResult r;
        r.status = PutMessageStatus::kServiceNotAvailable;
        r.remark = service_not_available_remark();
        done(std::move(r), SendDurability{});
        return;
    }
    // Only a SYNC_MASTER put that waits can need replicas (CommitLog#needHandleHA); skip the
    // snapshot of the HA state otherwise.
    ha::QuorumDecision d;
    if (config_.quorum.broker_role == ha::BrokerRole::kSyncMaster && wait_store_msg_ok) {
        std::vector<int64_t> acks;
        if (replicas_ != nullptr) {
            acks = replicas_->slave_ack_offsets();
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
    put([this, d, done = std::move(done)](store::PutMessageResult r) mutable {
        if (replicas_ != nullptr && store::is_stored(r.status)) {
            replicas_->notify_new_data();
        }
        // A failed append or flush answers as the store said (RocketMQ: the flush outcome
        // wins over replication).
        if (r.status != PutMessageStatus::kPutOk) {
            done(std::move(r), SendDurability{1, d.need_ack_nums, d.degraded});
            return;
        }
        switch (d.verdict) {
            case QuorumVerdict::kWaitForSlaves: {
                if (replicas_ == nullptr) {
                    finish_wait(std::move(r), d, PutMessageStatus::kSlaveNotAvailable, done);
                    return;
                }
                const int64_t end = r.append.end_offset().value();
                replicas_->group_transfer().put_request(
                    end, d.need_ack_nums, config_.slave_timeout,
                    [this, r = std::move(r), d, done = std::move(done)](
                        PutMessageStatus status) mutable {
                        finish_wait(std::move(r), d, status, done);
                    });
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
    });
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
    if (replicas_ == nullptr) {
        return 1;
    }
    int32_t n = 1;
    for (int64_t ack : replicas_->slave_ack_offsets()) {
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
    hc.broker_id = config_.broker_id;
    hc.send_handshake = config_.send_handshake;
    hc.heartbeat_interval = config_.heartbeat_interval;
    hc.housekeeping_interval = config_.housekeeping_interval;
    hc.reconnect_interval = config_.reconnect_interval;
    auto client = ha::HaClient::start(hc, store_, clock_);
    if (!client.is_ok()) {
        spdlog::error("slave {}/{}: cannot start the HA client towards {}: {}",
                      config_.broker_name, config_.broker_id, ha_addr,
                      client.status().message());
        master_ha_addr_.clear();
        return;
    }
    ha_client_ = std::move(client).value();
    spdlog::info("slave {}/{}: replicating from master HA address {}", config_.broker_name,
                 config_.broker_id, ha_addr);
}

void ReplicationService::on_register_result(const std::optional<std::string>& ha_server_addr,
                                            const std::optional<std::string>& master_addr) {
    if (!config_.is_slave()) {
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
    std::map<std::string, std::string> t;
    auto b = [](bool v) { return std::string(v ? "true" : "false"); };
    if (dledger_ != nullptr) {
        t = dledger_->runtime_info();
        t["dledgerPutsCommitted"] = std::to_string(counters_.quorum_acks.load());
        t["dledgerPutsNotCommitted"] = std::to_string(counters_.slave_timeouts.load());
        t["dledgerPutsRefused"] = std::to_string(counters_.slave_refused.load());
        return t;
    }
    t["haBrokerRole"] = std::string(ha::broker_role_name(config_.quorum.broker_role));
    if (config_.is_slave()) {
        t["haMasterAddress"] = master_ha_addr();
        t["masterAddr"] = master_addr().value_or("");
        ha::HaClientStats st;
        bool have = false;
        {
            MutexLock l(mu_);
            if (ha_client_) {
                st = ha_client_->stats();
                have = true;
            }
        }
        t["haClientConnected"] = b(have && st.connected);
        t["haClientMaxOffset"] = std::to_string(store_.max_offset());
        t["haClientBytes"] = std::to_string(st.bytes);
        t["haClientConnects"] = std::to_string(st.connects);
        t["haClientProtocolErrors"] = std::to_string(st.protocol_errors);
        t["slaveRefusedPutTotal"] = std::to_string(counters_.slave_refused.load());
        return t;
    }
    const int64_t put_offset = store_.max_offset();
    const std::vector<int64_t> acks =
        replicas_ != nullptr ? replicas_->slave_ack_offsets() : std::vector<int64_t>{};
    const int32_t in_sync = ha::in_sync_replica_nums(config_.quorum, put_offset, acks);
    const int32_t alive = alive_replica_num();
    ha::QuorumInput in;
    in.wait_store_msg_ok = true;
    in.alive_replica_num = alive;
    in.master_put_offset = put_offset;
    in.slave_ack_offsets = acks;
    const ha::QuorumDecision d = ha::decide_quorum(config_.quorum, in);
    t["haListenPort"] = std::to_string(ha_port());
    t["masterCommitLogMaxOffset"] = std::to_string(put_offset);
    t["haConnectionCount"] = std::to_string(acks.size());
    t["inSyncSlaveNums"] = std::to_string(in_sync - 1);
    t["inSyncReplicaNums"] = std::to_string(in_sync);
    t["aliveReplicaNums"] = std::to_string(alive);
    t["needAckNums"] = std::to_string(d.need_handle_ha ? d.need_ack_nums : 1);
    t["needAckNumsDegraded"] = b(d.degraded);
    t["quorumAckTotal"] = std::to_string(counters_.quorum_acks.load());
    t["degradedAckTotal"] = std::to_string(counters_.degraded_acks.load());
    t["slaveTimeoutTotal"] = std::to_string(counters_.slave_timeouts.load());
    t["slaveNotAvailableTotal"] = std::to_string(counters_.slave_not_available.load());
    t["inSyncReplicasNotEnoughTotal"] = std::to_string(counters_.isr_not_enough.load());
    if (ha_service_) {
        t["haRejectedConnections"] = std::to_string(ha_service_->rejected_connections());
        std::vector<ha::SlaveInfo> slaves = ha_service_->slaves();
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
            t["haConnectionInfo." + std::to_string(i)] = w.take();
        }
    }
    return t;
}

}  // namespace comet::broker
