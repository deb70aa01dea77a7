// BrokerController's metrics wiring: the scrape-time collectors over the store, replication,
// DLedger, controller mode and consumer offsets, and the /metrics endpoint (docs/metrics.md).
#include <spdlog/spdlog.h>
#include <sys/statvfs.h>

#include <cstdlib>

#include "broker/broker_controller.h"
#include "broker/stats/broker_metrics.h"

namespace comet::broker {
namespace {

using metrics::FamilySnapshot;
using metrics::Sample;
using metrics::Type;

double num(const std::map<std::string, std::string>& m, const std::string& key) {
    const auto it = m.find(key);
    return it == m.end() ? 0.0 : std::strtod(it->second.c_str(), nullptr);
}

bool flag(const std::map<std::string, std::string>& m, const std::string& key) {
    const auto it = m.find(key);
    return it != m.end() && it->second == "true";
}

void gauge(std::vector<FamilySnapshot>* out, std::string name, std::string help, double v) {
    out->push_back(
        FamilySnapshot{std::move(name), std::move(help), Type::kGauge, {Sample{"", {}, v}}});
}

void counter(std::vector<FamilySnapshot>* out, std::string name, std::string help, double v) {
    out->push_back(
        FamilySnapshot{std::move(name), std::move(help), Type::kCounter, {Sample{"", {}, v}}});
}

// The broker's live role: controller mode and DLedger change it at run time.
std::string live_broker_role(const BrokerConfig& cfg,
                             const std::map<std::string, std::string>& info) {
    std::string role = cfg.broker_role;
    if (const auto it = info.find("haBrokerRole"); it != info.end()) {
        role = it->second;
    }
    if (const auto it = info.find("dledgerRole"); it != info.end()) {
        role = it->second;
    }
    return role;
}

// The send path's replication outcomes (ReplicationService::Counters), in every mode.
void add_ha_counter_families(std::vector<FamilySnapshot>* out,
                             const ReplicationService::Counters& c) {
    counter(out, "comet_ha_quorum_acks_total",
            "Puts acknowledged after the replicas they waited for held them.",
            static_cast<double>(c.quorum_acks.load()));
    counter(out, "comet_ha_degraded_acks_total",
            "Puts acknowledged with needAckNums below inSyncReplicas (enableAutoInSyncReplicas).",
            static_cast<double>(c.degraded_acks.load()));
    counter(out, "comet_ha_flush_slave_timeout_total", "Puts answered FLUSH_SLAVE_TIMEOUT.",
            static_cast<double>(c.slave_timeouts.load()));
    counter(out, "comet_ha_slave_not_available_total", "Puts answered SLAVE_NOT_AVAILABLE.",
            static_cast<double>(c.slave_not_available.load()));
    counter(out, "comet_ha_in_sync_replicas_not_enough_total",
            "Puts refused IN_SYNC_REPLICAS_NOT_ENOUGH.",
            static_cast<double>(c.isr_not_enough.load()));
    counter(out, "comet_slave_refused_puts_total",
            "Producer writes refused because this is a slave.",
            static_cast<double>(c.slave_refused.load()));
    counter(out, "comet_lease_refused_puts_total",
            "Puts refused or left unacknowledged for want of a master lease (controller mode).",
            static_cast<double>(c.lease_refused.load()));
}

// DLedger mode, from the runtime info.
void add_dledger_families(std::vector<FamilySnapshot>* out,
                          const std::map<std::string, std::string>& info) {
    gauge(out, "comet_dledger_term", "Current DLedger (Raft) term.", num(info, "dledgerTerm"));
    counter(out, "comet_dledger_elections_won_total", "DLedger elections this node won.",
            num(info, "dledgerElectionsWon"));
    counter(out, "comet_dledger_truncated_bytes_total",
            "CommitLog bytes this node cut while following a new leader.",
            num(info, "dledgerTruncatedBytes"));
    gauge(out, "comet_dledger_commit_index", "DLedger commit index.",
          num(info, "dledgerCommitIndex"));
    gauge(out, "comet_dledger_last_index", "Last DLedger log index on this node.",
          num(info, "dledgerLastIndex"));
    gauge(out, "comet_dledger_storage_failed",
          "1 when this node's DLedger log storage failed: it stepped down and exits.",
          num(info, "dledgerStorageFailed"));
    gauge(out, "comet_dledger_followers_behind_log",
          "Leader: followers that need entries retention deleted (re-seed them).",
          num(info, "dledgerFollowersBehindLog"));
}

// Controller mode: the epoch, SyncStateSet and confirm offset this broker holds.
void add_controller_store_families(std::vector<FamilySnapshot>* out, const ControllerStore& cs) {
    gauge(out, "comet_controller_master_epoch",
          "Master epoch this broker last saw from the controller.",
          static_cast<double>(cs.last_epoch()));
    gauge(out, "comet_controller_sync_state_set_size", "Members of the SyncStateSet.",
          static_cast<double>(cs.sync_state_set().size()));
    gauge(out, "comet_controller_confirm_offset_bytes",
          "Confirm offset (dispatch limit) in controller mode.",
          static_cast<double>(cs.confirm_offset()));
    counter(out, "comet_controller_truncated_bytes_total",
            "CommitLog bytes cut when rejoining under a new master epoch.",
            static_cast<double>(cs.truncated_bytes()));
}

// A slave's HA client, from the runtime info.
void add_ha_client_families(std::vector<FamilySnapshot>* out,
                            const std::map<std::string, std::string>& info) {
    gauge(out, "comet_ha_client_connected", "1 while this slave's HA connection is up.",
          flag(info, "haClientConnected") ? 1 : 0);
    counter(out, "comet_ha_client_received_bytes_total",
            "Bytes this slave received from its master.", num(info, "haClientBytes"));
}

// A master's quorum figures, from the runtime info.
void add_quorum_families(std::vector<FamilySnapshot>* out,
                         const std::map<std::string, std::string>& info) {
    gauge(out, "comet_ha_need_ack_nums",
          "Replicas (master included) a put waits for now (needAckNums in effect).",
          num(info, "needAckNums"));
    gauge(out, "comet_ha_need_ack_nums_degraded",
          "1 while needAckNums is below inSyncReplicas (automatic degradation).",
          flag(info, "needAckNumsDegraded") ? 1 : 0);
    gauge(out, "comet_ha_in_sync_replicas", "In-sync replicas, master included.",
          num(info, "inSyncReplicaNums"));
    gauge(out, "comet_ha_alive_replicas", "Alive replicas of the group, master included.",
          num(info, "aliveReplicaNums"));
}

// One sample per slave connected to the master's HaService: acked offset, gap, in-sync, and
// seconds behind (none for a slave that never caught up: its gap in bytes says how far).
void add_slave_families(std::vector<FamilySnapshot>* out, const ha::HaService& svc,
                        int64_t put_offset, int64_t max_gap, TimePoint now) {
    FamilySnapshot ack{"comet_ha_slave_ack_offset_bytes",
                       "Offset each connected slave acknowledged.",
                       Type::kGauge,
                       {}};
    FamilySnapshot gap{"comet_ha_slave_gap_bytes",
                       "Bytes each connected slave is behind the master.",
                       Type::kGauge,
                       {}};
    FamilySnapshot in_sync{"comet_ha_slave_in_sync",
                           "1 while the slave is within haMaxGapNotInSync bytes.",
                           Type::kGauge,
                           {}};
    FamilySnapshot behind{"comet_ha_slave_behind_seconds",
                          "Seconds since the slave last held everything the master had "
                          "(0 while it holds it; RocketMQ lastCaughtUpTimeMs).",
                          Type::kGauge,
                          {}};
    for (const ha::SlaveInfo& s : svc.slaves()) {
        const metrics::Labels l{{"slave_addr", s.address},
                                {"slave_broker_id", std::to_string(s.broker_id)}};
        const int64_t diff = std::max<int64_t>(0, put_offset - s.ack_offset);
        ack.samples.push_back(Sample{"", l, static_cast<double>(s.ack_offset)});
        gap.samples.push_back(Sample{"", l, static_cast<double>(diff)});
        in_sync.samples.push_back(Sample{"", l, diff < max_gap ? 1.0 : 0.0});
        if (diff != 0 && s.caught_up_at == TimePoint{}) {
            continue;  // never caught up yet: no sample (the gap in bytes says how far)
        }
        const double secs =
            diff == 0 ? 0.0 : std::chrono::duration<double>(now - s.caught_up_at).count();
        behind.samples.push_back(Sample{"", l, std::max(0.0, secs)});
    }
    out->push_back(std::move(ack));
    out->push_back(std::move(gap));
    out->push_back(std::move(in_sync));
    out->push_back(std::move(behind));
}

}  // namespace

void BrokerController::collect_store_metrics(std::vector<FamilySnapshot>* out) {
    const auto info = store_->runtime_info();
    gauge(out, "rocketmq_storage_dispatch_behind_bytes",
          "CommitLog bytes not yet dispatched to ConsumeQueues and the index.",
          num(info, "dispatchBehindBytes"));
    gauge(out, "rocketmq_storage_flush_behind_bytes",
          "CommitLog bytes written but not yet flushed (msync).",
          num(info, "remainHowManyDataToFlush"));
    const double earliest = num(info, "earliestMessageTimeStamp");
    gauge(out, "rocketmq_storage_message_reserve_time",
          "Milliseconds between now and the oldest message kept on disk (0: no message).",
          earliest > 0 ? static_cast<double>(clock_.wall_millis()) - earliest : 0);
    gauge(out, "comet_disk_full",
          "1 while the store refuses puts because the disk is full (diskMaxUsedSpaceRatio).",
          flag(info, "diskFull") ? 1 : 0);
    out->push_back(FamilySnapshot{
        "comet_disk_used_ratio",
        "Used fraction of the file system holding the CommitLog / ConsumeQueues.",
        Type::kGauge,
        {Sample{"", {{"dir", "commitlog"}}, num(info, "commitLogDiskRatio")},
         Sample{"", {{"dir", "consumequeue"}}, num(info, "consumeQueueDiskRatio")}}});
    struct statvfs st {};
    if (::statvfs(store_root_.c_str(), &st) == 0) {
        gauge(out, "comet_disk_total_bytes", "Size of the file system holding the store root.",
              static_cast<double>(uint64_t{st.f_blocks} * st.f_frsize));
        gauge(out, "comet_disk_free_bytes", "Free bytes of the file system holding the store root.",
              static_cast<double>(uint64_t{st.f_bavail} * st.f_frsize));
    }
    gauge(out, "comet_commitlog_max_offset_bytes", "CommitLog write end (physical offset).",
          num(info, "commitLogMaxOffset"));
    gauge(out, "comet_commitlog_min_offset_bytes",
          "CommitLog start after retention (physical offset).", num(info, "commitLogMinOffset"));
    gauge(out, "comet_store_size_bytes", "CommitLog bytes kept (max offset - min offset).",
          num(info, "commitLogMaxOffset") - num(info, "commitLogMinOffset"));
    const store::CommitLog& log = store_->store().commit_log();
    gauge(out, "comet_write_buffer_capacity_bytes",
          "Capacity of the CommitLog write buffer (0: puts write through the mapping).",
          static_cast<double>(log.write_buffer_capacity()));
    gauge(out, "comet_write_buffer_used_bytes",
          "Bytes assigned to puts and not yet committed to the CommitLog mapping.",
          static_cast<double>(log.reserved_offset().value() - log.max_offset().value()));
}

void BrokerController::collect_replication_metrics(std::vector<FamilySnapshot>* out) {
    const BrokerConfig cfg = config_.get();
    std::map<std::string, std::string> info;
    if (replication_ != nullptr) {
        info = replication_->runtime_info();
    }
    out->push_back(FamilySnapshot{"comet_broker_role",
                                  "1 for the broker's current role (ASYNC_MASTER, SYNC_MASTER, "
                                  "SLAVE; LEADER, FOLLOWER, CANDIDATE in DLedger mode).",
                                  Type::kGauge,
                                  {Sample{"", {{"role", live_broker_role(cfg, info)}}, 1}}});
    gauge(out, "rocketmq_broker_permission", "brokerPermission (PermName bits: 2 write, 4 read).",
          cfg.broker_permission);
    if (replication_ == nullptr) {
        return;
    }
    add_ha_counter_families(out, replication_->counters());
    if (replication_->dledger() != nullptr) {
        add_dledger_families(out, info);
        return;
    }
    if (controller_store_ != nullptr) {
        add_controller_store_families(out, *controller_store_);
    }
    if (replication_->is_slave()) {
        add_ha_client_families(out, info);
        return;
    }
    add_quorum_families(out, info);
    const ha::HaService* svc = replication_->ha_service();
    if (svc == nullptr) {
        return;
    }
    const int64_t put_offset = store_->store().commit_log().max_offset().value();
    const int64_t max_gap = replication_->config().quorum.ha_max_gap_not_in_sync;
    add_slave_families(out, *svc, put_offset, max_gap, clock_.now());
}

void BrokerController::collect_consumer_metrics(std::vector<FamilySnapshot>* out) {
    FamilySnapshot lag{"rocketmq_consumer_lag_messages",
                       "Messages not yet consumed (committed offsets) by topic and group.",
                       Type::kGauge,
                       {}};
    FamilySnapshot queue_lag{"comet_consumer_queue_lag_messages",
                             "Messages not yet consumed (committed offset) per queue.",
                             Type::kGauge,
                             {}};
    FamilySnapshot offset{
        "comet_consumer_offset", "Committed consumer offset per queue.", Type::kGauge, {}};
    for (const auto& [key, queues] : offsets_->table()) {
        const size_t at = key.find('@');
        if (at == std::string::npos) {
            continue;
        }
        const std::string topic = key.substr(0, at);
        const std::string group = key.substr(at + 1);
        double total = 0;
        for (const auto& [qid, committed] : queues) {
            const int64_t max = store_->max_offset_in_queue(topic, qid);
            const double l = static_cast<double>(std::max<int64_t>(0, max - committed));
            total += l;
            const metrics::Labels ql{
                {"topic", topic}, {"consumer_group", group}, {"queue_id", std::to_string(qid)}};
            queue_lag.samples.push_back(Sample{"", ql, l});
            offset.samples.push_back(Sample{"", ql, static_cast<double>(committed)});
        }
        lag.samples.push_back(
            Sample{"",
                   {{"topic", topic},
                    {"consumer_group", group},
                    {"is_retry", topic.rfind("%RETRY%", 0) == 0 ? "true" : "false"},
                    {"is_system", is_system_topic_name(topic) ? "true" : "false"}},
                   total});
    }
    out->push_back(std::move(lag));
    out->push_back(std::move(queue_lag));
    out->push_back(std::move(offset));
}

void BrokerController::init_metrics(const BrokerConfig& cfg) {
    metrics_ =
        std::make_unique<BrokerMetrics>(cfg.broker_cluster_name, cfg.broker_name, cfg.broker_id);
    ctx_.metrics = metrics_.get();
    metrics_->registry().add_collector([this](std::vector<FamilySnapshot>* out) {
        collect_store_metrics(out);
        collect_replication_metrics(out);
        collect_consumer_metrics(out);
    });
}

Status BrokerController::start_metrics_endpoint() {
    const BrokerConfig cfg = config_.get();
    const auto where =
        cfg.metrics_config().listen(cfg.listen_host.empty() ? "0.0.0.0" : cfg.listen_host);
    if (!where) {
        return Status::ok();
    }
    metrics_endpoint_ = std::make_unique<metrics::MetricsEndpoint>(&metrics_->registry(), *where);
    if (Status st = metrics_endpoint_->start(); !st.is_ok()) {
        return Status(st.code(), "metrics endpoint (metricsPort): " + st.message());
    }
    spdlog::info("broker metrics on http://{}:{}/metrics", where->host, metrics_endpoint_->port());
    return Status::ok();
}

uint16_t BrokerController::metrics_port() const {
    return metrics_endpoint_ != nullptr ? metrics_endpoint_->port() : 0;
}

}  // namespace comet::broker
