#include "broker/metadata/broker_config.h"

#include "dledger/dledger_config.h"

#include <charconv>
#include <cstdlib>
#include <variant>

#include "base/config.h"
#include "broker/metadata/delay_levels.h"
#include "metrics/endpoint.h"

namespace comet::broker {
namespace {

using Field = std::variant<std::string BrokerConfig::*, int64_t BrokerConfig::*,
                           int32_t BrokerConfig::*, bool BrokerConfig::*>;

struct Entry {
    std::string_view key;
    Field field;
};

// `fields` followed by the executor-queue and fast-failure keys (Java BrokerConfig).
std::vector<Entry> with_queue_fields(std::vector<Entry> fields) {
    fields.insert(
        fields.end(),
        {
            {"sendThreadPoolQueueCapacity", &BrokerConfig::send_thread_pool_queue_capacity},
            {"pullThreadPoolQueueCapacity", &BrokerConfig::pull_thread_pool_queue_capacity},
            {"queryThreadPoolQueueCapacity", &BrokerConfig::query_thread_pool_queue_capacity},
            {"heartbeatThreadPoolQueueCapacity",
             &BrokerConfig::heartbeat_thread_pool_queue_capacity},
            {"consumerManagerThreadPoolQueueCapacity",
             &BrokerConfig::consumer_manager_thread_pool_queue_capacity},
            {"endTransactionPoolQueueCapacity", &BrokerConfig::end_transaction_pool_queue_capacity},
            {"endTransactionThreadPoolNums", &BrokerConfig::end_transaction_thread_pool_nums},
            {"brokerFastFailureEnable", &BrokerConfig::broker_fast_failure_enable},
            {"waitTimeMillsInSendQueue", &BrokerConfig::wait_time_mills_in_send_queue},
            {"waitTimeMillsInPullQueue", &BrokerConfig::wait_time_mills_in_pull_queue},
            {"waitTimeMillsInHeartbeatQueue", &BrokerConfig::wait_time_mills_in_heartbeat_queue},
            {"waitTimeMillsInTransactionQueue",
             &BrokerConfig::wait_time_mills_in_transaction_queue},
        });
    return fields;
}

const std::vector<Entry>& fields() {
    static const std::vector<Entry> kFields = with_queue_fields({
        {"brokerClusterName", &BrokerConfig::broker_cluster_name},
        {"brokerName", &BrokerConfig::broker_name},
        {"brokerId", &BrokerConfig::broker_id},
        {"listenPort", &BrokerConfig::listen_port},
        {"listenHost", &BrokerConfig::listen_host},
        {"namesrvAddr", &BrokerConfig::namesrv_addr},
        {"brokerIP1", &BrokerConfig::broker_ip1},
        {"brokerIP2", &BrokerConfig::broker_ip2},
        {"haListenPort", &BrokerConfig::ha_listen_port},
        {"haAdvertisedAddress", &BrokerConfig::ha_advertised_address},
        {"storePathRootDir", &BrokerConfig::store_path_root_dir},
        {"logDir", &BrokerConfig::log_dir},
        {"brokerRole", &BrokerConfig::broker_role},
        {"flushDiskType", &BrokerConfig::flush_disk_type},
        {"autoCreateTopicEnable", &BrokerConfig::auto_create_topic_enable},
        {"autoCreateSubscriptionGroup", &BrokerConfig::auto_create_subscription_group},
        {"defaultTopicQueueNums", &BrokerConfig::default_topic_queue_nums},
        {"brokerPermission", &BrokerConfig::broker_permission},
        {"clusterTopicEnable", &BrokerConfig::cluster_topic_enable},
        {"brokerTopicEnable", &BrokerConfig::broker_topic_enable},
        {"traceTopicEnable", &BrokerConfig::trace_topic_enable},
        {"msgTraceTopicName", &BrokerConfig::msg_trace_topic_name},
        {"registerNameServerPeriod", &BrokerConfig::register_name_server_period},
        {"registerBrokerTimeoutMills", &BrokerConfig::register_broker_timeout_mills},
        {"longPollingEnable", &BrokerConfig::long_polling_enable},
        {"shortPollingTimeMills", &BrokerConfig::short_polling_time_mills},
        {"messageDelayLevel", &BrokerConfig::message_delay_level},
        {"maxReconsumeTimes", &BrokerConfig::max_reconsume_times},
        {"regionId", &BrokerConfig::region_id},
        {"traceOn", &BrokerConfig::trace_on},
        {"notifyConsumerIdsChangedEnable", &BrokerConfig::notify_consumer_ids_changed_enable},
        {"channelExpiredTimeout", &BrokerConfig::channel_expired_timeout},
        {"flushConsumerOffsetInterval", &BrokerConfig::flush_consumer_offset_interval},
        {"rejectTransactionMessage", &BrokerConfig::reject_transaction_message},
        {"transactionTimeOut", &BrokerConfig::transaction_time_out},
        {"transactionCheckMax", &BrokerConfig::transaction_check_max},
        {"transactionCheckInterval", &BrokerConfig::transaction_check_interval},
        {"maxMessageSize", &BrokerConfig::max_message_size},
        {"slaveReadEnable", &BrokerConfig::slave_read_enable},
        {"enablePropertyFilter", &BrokerConfig::enable_property_filter},
        {"filterSupportRetry", &BrokerConfig::filter_support_retry},
        {"filterDataCleanTimeSpan", &BrokerConfig::filter_data_clean_time_span},
        {"defaultQueryMaxNum", &BrokerConfig::default_query_max_num},
        {"rebalanceLockMaxLiveTime", &BrokerConfig::rebalance_lock_max_live_time},
        {"maxTransferCountOnMessageInMemory", &BrokerConfig::max_msg_nums_batch},
        {"maxTransferBytesOnMessageInMemory", &BrokerConfig::max_transfer_bytes},
        {"sendMessageThreadPoolNums", &BrokerConfig::send_message_thread_pool_nums},
        {"pullMessageThreadPoolNums", &BrokerConfig::pull_message_thread_pool_nums},
        {"serverSelectorThreads", &BrokerConfig::server_selector_threads},
        {"startAcceptSendRequestTimeStamp", &BrokerConfig::start_accept_send_request_time_stamp},
        {"haMasterAddress", &BrokerConfig::ha_master_address},
        {"haSendHeartbeatInterval", &BrokerConfig::ha_send_heartbeat_interval},
        {"haHousekeepingInterval", &BrokerConfig::ha_housekeeping_interval},
        {"haTransferBatchSize", &BrokerConfig::ha_transfer_batch_size},
        {"haMaxGapNotInSync", &BrokerConfig::ha_max_gap_not_in_sync},
        {"haSlaveFallbehindMax", &BrokerConfig::ha_slave_fallbehind_max},
        {"slaveTimeout", &BrokerConfig::slave_timeout},
        {"totalReplicas", &BrokerConfig::total_replicas},
        {"inSyncReplicas", &BrokerConfig::in_sync_replicas},
        {"minInSyncReplicas", &BrokerConfig::min_in_sync_replicas},
        {"enableAutoInSyncReplicas", &BrokerConfig::enable_auto_in_sync_replicas},
        {"enableSlaveActingMaster", &BrokerConfig::enable_slave_acting_master},
        {"enableRemoteEscape", &BrokerConfig::enable_remote_escape},
        {"requireHandshake", &BrokerConfig::require_handshake},
        {"sendHandshake", &BrokerConfig::send_handshake},
        {"slaveNotAvailableFastFail", &BrokerConfig::slave_not_available_fast_fail},
        {"enableDLegerCommitLog", &BrokerConfig::enable_dleger_commit_log},
        {"dLegerGroup", &BrokerConfig::dleger_group},
        {"dLegerPeers", &BrokerConfig::dleger_peers},
        {"dLegerSelfId", &BrokerConfig::dleger_self_id},
        {"preferredLeaderId", &BrokerConfig::preferred_leader_id},
        {"dLegerElectionTimeoutMinMs", &BrokerConfig::dleger_election_timeout_min_ms},
        {"dLegerElectionTimeoutMaxMs", &BrokerConfig::dleger_election_timeout_max_ms},
        {"dLegerHeartbeatIntervalMs", &BrokerConfig::dleger_heartbeat_interval_ms},
        {"dLegerSyncBeforeAck", &BrokerConfig::dleger_sync_before_ack},
        {"dLegerLazyLeaderSync", &BrokerConfig::dleger_lazy_leader_sync},
        {"enableControllerMode", &BrokerConfig::enable_controller_mode},
        {"controllerAddr", &BrokerConfig::controller_addr},
        {"syncBrokerMetadataPeriod", &BrokerConfig::sync_broker_metadata_period},
        {"checkSyncStateSetPeriod", &BrokerConfig::check_sync_state_set_period},
        {"syncControllerMetadataPeriod", &BrokerConfig::sync_controller_metadata_period},
        {"controllerHeartBeatTimeoutMills", &BrokerConfig::controller_heart_beat_timeout_mills},
        {"brokerHeartbeatInterval", &BrokerConfig::broker_heartbeat_interval},
        {"sendHeartbeatTimeoutMillis", &BrokerConfig::send_heartbeat_timeout_millis},
        {"brokerElectionPriority", &BrokerConfig::broker_election_priority},
        {"allAckInSyncStateSet", &BrokerConfig::all_ack_in_sync_state_set},
        {"haMaxTimeSlaveNotCatchup", &BrokerConfig::ha_max_time_slave_not_catchup},
        {"syncFromLastFile", &BrokerConfig::sync_from_last_file},
        {"asyncLearner", &BrokerConfig::async_learner},
        {"storePathEpochFile", &BrokerConfig::store_path_epoch_file},
        {"storePathBrokerIdentity", &BrokerConfig::store_path_broker_identity},
        {"metricsPort", &BrokerConfig::metrics_port},
        {"metricsExporterType", &BrokerConfig::metrics_exporter_type},
        {"metricsPromExporterPort", &BrokerConfig::metrics_prom_exporter_port},
        {"metricsPromExporterHost", &BrokerConfig::metrics_prom_exporter_host},
    });
    return kFields;
}

// RocketMQ 5's quorum keys (ha::kQuorumKeys; broker/metadata does not link ha): setting any
// of them selects RocketMQ 5's quorum rules.
constexpr std::string_view kQuorumKeyNames[] = {"totalReplicas", "inSyncReplicas",
                                                "minInSyncReplicas", "enableAutoInSyncReplicas"};

// The derived GET_BROKER_CONFIG entry naming the quorum rules (ha::parse_quorum_rules).
constexpr std::string_view kQuorumRulesKey = "quorumRules";

bool is_quorum_key(std::string_view key) {
    for (std::string_view k : kQuorumKeyNames) {
        if (k == key) {
            return true;
        }
    }
    return false;
}

// Keys read once at start-up that define who the broker is or what a SEND_OK promises. The
// live config holder refuses a runtime change of them (UPDATE_BROKER_CONFIG): accepting one would
// make GET_BROKER_CONFIG and explainDurability describe a contract the running broker does not
// keep. Other keys are either read live or only tune timing.
// clang-format off
constexpr std::string_view kStartupOnlyKeys[] = {
    "brokerClusterName", "brokerName", "brokerId", "listenPort", "haListenPort",
    "storePathRootDir", "brokerRole", "flushDiskType", "totalReplicas", "inSyncReplicas",
    "minInSyncReplicas", "enableAutoInSyncReplicas", "haMaxGapNotInSync", "haSlaveFallbehindMax",
    "slaveTimeout", "enableSlaveActingMaster", "slaveNotAvailableFastFail",
    "enableDLegerCommitLog", "dLegerGroup", "dLegerPeers", "dLegerSelfId", "dLegerSyncBeforeAck",
    "enableControllerMode", "controllerAddr", "allAckInSyncStateSet", "storePathEpochFile",
    "storePathBrokerIdentity"};
// clang-format on

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
        s.remove_suffix(1);
    }
    return s;
}

template <typename T>
bool parse_int(std::string_view s, T* out) {
    s = trim(s);
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

void register_broker_config(ConfigRegistry& registry, BrokerConfig* config) {
    static const char* kImportant[] = {"brokerClusterName", "brokerName", "brokerId",
                                       "listenPort", "namesrvAddr", "brokerIP1",
                                       "storePathRootDir", "brokerRole", "flushDiskType",
                                       "autoCreateTopicEnable"};
    for (const auto& e : fields()) {
        const std::string key(e.key);
        const std::string desc = "RocketMQ broker property " + key;
        ConfigField* f = nullptr;
        if (auto* s = std::get_if<std::string BrokerConfig::*>(&e.field)) {
            f = &registry.add_string(key, &(config->*(*s)), config->*(*s), desc);
        } else if (auto* i64 = std::get_if<int64_t BrokerConfig::*>(&e.field)) {
            f = &registry.add_int64(key, &(config->*(*i64)), config->*(*i64), desc);
        } else if (auto* i32 = std::get_if<int32_t BrokerConfig::*>(&e.field)) {
            f = &registry.add_int(key, &(config->*(*i32)), config->*(*i32), desc);
        } else if (auto* b = std::get_if<bool BrokerConfig::*>(&e.field)) {
            f = &registry.add_bool(key, &(config->*(*b)), config->*(*b), desc);
        }
        for (const char* imp : kImportant) {
            if (f != nullptr && key == imp) {
                f->important();
            }
        }
    }
    // Comet keys kept in `extra` and read from there (MemberGroupSettings::from checks them):
    // registered so that a config file's value reaches the broker instead of being dropped as
    // an unknown key. Each field is bound to its slot in `extra` (a std::map node: the address
    // stays valid while `config` lives and the key is not erased).
    const std::pair<const char*, const char*> kExtraKeys[] = {
        {"slaveSynchronizePeriod", "10000"}, {"syncBrokerMemberGroupPeriod", "1000"}};
    for (const auto& [key, def] : kExtraKeys) {
        std::string& slot = config->extra[key];
        registry.add_string(key, &slot, slot.empty() ? std::string(def) : slot,
                            std::string("Comet broker property ") + key + " (ms)");
    }
}

void note_keys_set(const ConfigRegistry& registry, BrokerConfig* config) {
    for (std::string_view k : kQuorumKeyNames) {
        if (registry.was_set(k)) {
            config->quorum_keys_set = true;
        }
    }
}

bool BrokerConfig::uses_rocketmq5_quorum_rules() const {
    return quorum_keys_set || total_replicas != 1 || in_sync_replicas != 1 ||
           min_in_sync_replicas != 1 || enable_auto_in_sync_replicas;
}

Status BrokerConfig::set(std::string_view key, std::string_view value) {
    if (key == kQuorumRulesKey) {
        return Status::error(Errc::kInvalidArgument,
                             "quorumRules is derived, not set: RocketMQ 5's rules when any of "
                             "totalReplicas, inSyncReplicas, minInSyncReplicas, "
                             "enableAutoInSyncReplicas is set, else RocketMQ 4.9.8's");
    }
    for (const auto& e : fields()) {
        if (e.key != key) {
            continue;
        }
        const std::string_view v = trim(value);
        if (auto* s = std::get_if<std::string BrokerConfig::*>(&e.field)) {
            this->*(*s) = std::string(v);
        } else if (auto* i64 = std::get_if<int64_t BrokerConfig::*>(&e.field)) {
            if (!parse_int(v, &(this->*(*i64)))) {
                return Status::error(Errc::kInvalidArgument, "{}: '{}' is not an integer", key, v);
            }
        } else if (auto* i32 = std::get_if<int32_t BrokerConfig::*>(&e.field)) {
            if (!parse_int(v, &(this->*(*i32)))) {
                return Status::error(Errc::kInvalidArgument, "{}: '{}' is not an integer", key, v);
            }
        } else if (auto* b = std::get_if<bool BrokerConfig::*>(&e.field)) {
            if (v == "true") {
                this->*(*b) = true;
            } else if (v == "false") {
                this->*(*b) = false;
            } else {
                return Status::error(Errc::kInvalidArgument, "{}: '{}' is not true/false", key, v);
            }
        }
        if (is_quorum_key(key)) {
            quorum_keys_set = true;
        }
        return Status::ok();
    }
    extra[std::string(key)] = std::string(trim(value));
    return Status::ok();
}

Status BrokerConfig::check_runtime_update(
    const std::map<std::string, std::string>& props) const {
    const auto current = to_properties();
    for (std::string_view key : kStartupOnlyKeys) {
        const auto it = props.find(std::string(key));
        if (it == props.end()) {
            continue;
        }
        const auto cur = current.find(it->first);
        if (cur != current.end() && trim(it->second) == cur->second) {
            continue;  // the value it already has: nothing changes
        }
        return Status::error(Errc::kInvalidArgument,
                             "{} is read only at start-up (it changes the broker's identity or "
                             "durability contract): set it in broker.conf and restart the broker",
                             key);
    }
    return Status::ok();
}

Status BrokerConfig::apply(const std::map<std::string, std::string>& props) {
    for (const auto& [k, v] : props) {
        COMET_RETURN_IF_ERROR(set(k, v));
    }
    return Status::ok();
}

std::map<std::string, std::string> BrokerConfig::to_properties() const {
    std::map<std::string, std::string> out = extra;
    for (const auto& e : fields()) {
        std::string v;
        if (auto* s = std::get_if<std::string BrokerConfig::*>(&e.field)) {
            v = this->*(*s);
        } else if (auto* i64 = std::get_if<int64_t BrokerConfig::*>(&e.field)) {
            v = std::to_string(this->*(*i64));
        } else if (auto* i32 = std::get_if<int32_t BrokerConfig::*>(&e.field)) {
            v = std::to_string(this->*(*i32));
        } else if (auto* b = std::get_if<bool BrokerConfig::*>(&e.field)) {
            v = (this->*(*b)) ? "true" : "false";
        }
        out[std::string(e.key)] = v;
    }
    out[std::string(kQuorumRulesKey)] = uses_rocketmq5_quorum_rules() ? "5" : "4.9.8";
    return out;
}

metrics::MetricsConfig BrokerConfig::metrics_config() const {
    metrics::MetricsConfig m;
    m.metrics_port = metrics_port;
    m.exporter_type = metrics_exporter_type;
    m.prom_exporter_port = metrics_prom_exporter_port;
    m.prom_exporter_host = metrics_prom_exporter_host;
    return m;
}

Status BrokerConfig::validate() const {
    if (listen_port < 0 || listen_port > 65535) {
        return Status::error(Errc::kInvalidArgument, "listenPort {} out of range", listen_port);
    }
    if (ha_listen_port < 0 || ha_listen_port > 65535) {
        return Status::error(Errc::kInvalidArgument, "haListenPort {} out of range", ha_listen_port);
    }
    if (!ha_advertised_address.empty()) {
        const size_t colon = ha_advertised_address.rfind(':');
        int port = 0;
        if (colon == std::string::npos || colon == 0 ||
            !parse_int(std::string_view(ha_advertised_address).substr(colon + 1), &port) ||
            port <= 0 || port > 65535) {
            return Status::error(Errc::kInvalidArgument, "haAdvertisedAddress: '{}' is not host:port",
                                 ha_advertised_address);
        }
    }
    if (server_selector_threads < 0 || server_selector_threads > 1024) {
        return Status::error(Errc::kInvalidArgument, "serverSelectorThreads {} out of range 0..1024",
                             server_selector_threads);
    }
    for (const int32_t capacity :
         {send_thread_pool_queue_capacity, pull_thread_pool_queue_capacity,
          query_thread_pool_queue_capacity, heartbeat_thread_pool_queue_capacity,
          consumer_manager_thread_pool_queue_capacity, end_transaction_pool_queue_capacity,
          end_transaction_thread_pool_nums}) {
        if (capacity < 1) {
            return Status::error(Errc::kInvalidArgument,
                                 "thread pool sizes and queue capacities must be >= 1, got {}",
                                 capacity);
        }
    }
    COMET_RETURN_IF_ERROR(metrics_config().validate());
    if (broker_name.empty()) {
        return Status::error(Errc::kInvalidArgument, "brokerName must not be empty");
    }
    if (broker_cluster_name.empty()) {
        return Status::error(Errc::kInvalidArgument, "brokerClusterName must not be empty");
    }
    // Controller mode: the controller grants the id; RocketMQ's sample files say -1.
    if (broker_id < 0 && !(enable_controller_mode && broker_id == -1)) {
        return Status::error(Errc::kInvalidArgument, "brokerId {} must be >= 0", broker_id);
    }
    if (default_topic_queue_nums <= 0 || default_topic_queue_nums > 1024) {
        return Status::error(Errc::kInvalidArgument, "defaultTopicQueueNums {} not in [1, 1024]",
                             default_topic_queue_nums);
    }
    if (broker_permission < 0 || broker_permission > 15) {
        return Status::error(Errc::kInvalidArgument, "brokerPermission {} not in [0, 15]",
                             broker_permission);
    }
    if (register_name_server_period <= 0) {
        return Status::error(Errc::kInvalidArgument, "registerNameServerPeriod must be > 0");
    }
    if (max_message_size <= 0) {
        return Status::error(Errc::kInvalidArgument, "maxMessageSize must be > 0");
    }
    if (broker_role != "ASYNC_MASTER" && broker_role != "SYNC_MASTER" && broker_role != "SLAVE") {
        return Status::error(Errc::kInvalidArgument,
                             "brokerRole '{}' is not ASYNC_MASTER, SYNC_MASTER or SLAVE",
                             broker_role);
    }
    if (broker_role == "SLAVE" && broker_id <= 0 && !enable_controller_mode) {
        return Status::error(Errc::kInvalidArgument,
                             "brokerRole=SLAVE needs brokerId > 0 (brokerId is {})", broker_id);
    }
    if (ha_send_heartbeat_interval <= 0 || ha_housekeeping_interval <= 0 ||
        ha_transfer_batch_size <= 0 || slave_timeout <= 0) {
        return Status::error(Errc::kInvalidArgument,
                             "haSendHeartbeatInterval, haHousekeepingInterval, "
                             "haTransferBatchSize and slaveTimeout must be > 0");
    }
    COMET_ASSIGN_OR_RETURN(auto levels, DelayLevels::parse(message_delay_level));
    (void)levels;
    if (enable_dleger_commit_log) {
        COMET_RETURN_IF_ERROR(validate_dledger());
    }
    if (enable_controller_mode) {
        COMET_RETURN_IF_ERROR(validate_controller_mode());
    }
    return Status::ok();
}

Status BrokerConfig::validate_controller_mode() const {
    const std::vector<std::string> addrs = controller_list();
    if (addrs.empty()) {
        return Status::error(Errc::kInvalidArgument,
                             "controllerAddr is not set: with enableControllerMode=true the broker "
                             "needs the controllers' addresses (host:port;host:port)");
    }
    for (const std::string& a : addrs) {
        const size_t colon = a.rfind(':');
        int port = 0;
        if (colon == std::string::npos || colon == 0 ||
            !parse_int(std::string_view(a).substr(colon + 1), &port) || port <= 0 ||
            port > 65535) {
            return Status::error(Errc::kInvalidArgument,
                                 "controllerAddr: '{}' is not host:port", a);
        }
    }
    if (!ha_master_address.empty()) {
        return Status::error(Errc::kInvalidArgument,
                             "haMasterAddress={} contradicts enableControllerMode=true (the "
                             "controller elects the master; remove haMasterAddress)",
                             ha_master_address);
    }
    if (enable_slave_acting_master) {
        return Status::error(Errc::kInvalidArgument,
                             "enableSlaveActingMaster=true contradicts enableControllerMode=true "
                             "(the controller elects a new master instead)");
    }
    if (sync_broker_metadata_period <= 0 || check_sync_state_set_period <= 0 ||
        sync_controller_metadata_period <= 0 || controller_heart_beat_timeout_mills <= 0 ||
        broker_heartbeat_interval <= 0 || send_heartbeat_timeout_millis <= 0 ||
        ha_max_time_slave_not_catchup <= 0) {
        return Status::error(Errc::kInvalidArgument,
                             "syncBrokerMetadataPeriod, checkSyncStateSetPeriod, "
                             "syncControllerMetadataPeriod, controllerHeartBeatTimeoutMills, "
                             "brokerHeartbeatInterval, sendHeartbeatTimeoutMillis and "
                             "haMaxTimeSlaveNotCatchup must be > 0");
    }
    if (controller_heart_beat_timeout_mills <= broker_heartbeat_interval) {
        return Status::error(Errc::kInvalidArgument,
                             "controllerHeartBeatTimeoutMills {} must exceed "
                             "brokerHeartbeatInterval {} (the controller would think a live "
                             "broker dead between two heartbeats)",
                             controller_heart_beat_timeout_mills, broker_heartbeat_interval);
    }
    if (min_in_sync_replicas < 1) {
        return Status::error(Errc::kInvalidArgument, "minInSyncReplicas {} must be >= 1",
                             min_in_sync_replicas);
    }
    return Status::ok();
}

Status BrokerConfig::validate_dledger() const {
    auto parsed = dledger::parse_dledger_config(dleger_group, dleger_peers, dleger_self_id,
                                                preferred_leader_id, nullptr);
    if (!parsed.is_ok()) {
        return parsed.status();
    }
    // The group elects its roles: master-slave keys that fix one contradict it.
    if (!ha_master_address.empty()) {
        return Status::error(Errc::kInvalidArgument,
                             "haMasterAddress={} contradicts enableDLegerCommitLog=true (the "
                             "DLedger group elects its leader; remove haMasterAddress)",
                             ha_master_address);
    }
    if (enable_controller_mode) {
        return Status::error(Errc::kInvalidArgument,
                             "enableControllerMode=true contradicts enableDLegerCommitLog=true "
                             "(choose one HA mode)");
    }
    if (total_replicas > 1 || in_sync_replicas > 1 || min_in_sync_replicas > 1) {
        return Status::error(Errc::kInvalidArgument,
                             "totalReplicas/inSyncReplicas/minInSyncReplicas ({}/{}/{}) are "
                             "master-slave keys; with enableDLegerCommitLog=true a write needs a "
                             "majority of dLegerPeers (remove them)",
                             total_replicas, in_sync_replicas, min_in_sync_replicas);
    }
    if (enable_slave_acting_master) {
        return Status::error(Errc::kInvalidArgument,
                             "enableSlaveActingMaster=true contradicts enableDLegerCommitLog=true "
                             "(a follower is elected leader instead)");
    }
    if (dleger_heartbeat_interval_ms <= 0 ||
        dleger_election_timeout_min_ms <= dleger_heartbeat_interval_ms ||
        dleger_election_timeout_max_ms < dleger_election_timeout_min_ms) {
        return Status::error(Errc::kInvalidArgument,
                             "dLegerHeartbeatIntervalMs {} must be > 0 and below "
                             "dLegerElectionTimeoutMinMs {} <= dLegerElectionTimeoutMaxMs {}",
                             dleger_heartbeat_interval_ms, dleger_election_timeout_min_ms,
                             dleger_election_timeout_max_ms);
    }
    return Status::ok();
}

std::string BrokerConfig::broker_addr() const {
    return broker_ip1 + ":" + std::to_string(listen_port);
}

std::string BrokerConfig::ha_server_addr() const {
    return (broker_ip2.empty() ? broker_ip1 : broker_ip2) + ":" +
           std::to_string(effective_ha_listen_port());
}

int32_t BrokerConfig::effective_ha_listen_port() const {
    if (ha_listen_port > 0) {
        return ha_listen_port;
    }
    return listen_port > 0 ? listen_port + 1 : 0;
}

std::string BrokerConfig::store_root() const {
    const char* home = std::getenv("HOME");
    const std::string h = home != nullptr ? home : ".";
    if (store_path_root_dir.empty()) {
        return h + "/store";
    }
    if (store_path_root_dir[0] == '~') {
        return h + store_path_root_dir.substr(1);
    }
    return store_path_root_dir;
}

namespace {

std::vector<std::string> split_addr_list(std::string_view rest) {
    std::vector<std::string> out;
    while (!rest.empty()) {
        const size_t p = rest.find_first_of(";,");
        const std::string_view item = trim(rest.substr(0, p));
        if (!item.empty()) {
            out.emplace_back(item);
        }
        if (p == std::string_view::npos) {
            break;
        }
        rest.remove_prefix(p + 1);
    }
    return out;
}

}  // namespace

std::vector<std::string> BrokerConfig::namesrv_list() const { return split_addr_list(namesrv_addr); }

std::vector<std::string> BrokerConfig::controller_list() const {
    return split_addr_list(controller_addr);
}

std::string BrokerConfig::epoch_file_path() const {
    return store_path_epoch_file.empty() ? store_root() + "/epochFileCheckpoint"
                                         : store_path_epoch_file;
}

std::string BrokerConfig::broker_identity_path() const {
    return store_path_broker_identity.empty() ? store_root() + "/brokerIdentity"
                                              : store_path_broker_identity;
}

Result<std::map<std::string, std::string>> parse_properties(std::string_view text) {
    std::map<std::string, std::string> out;
    int line_no = 0;
    while (!text.empty()) {
        const size_t nl = text.find('\n');
        std::string_view line = trim(text.substr(0, nl));
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        ++line_no;
        if (line.empty() || line[0] == '#' || line[0] == '!') {
            continue;
        }
        const size_t sep = line.find_first_of("=:");
        if (sep == std::string_view::npos) {
            return Status::error(Errc::kInvalidArgument, "line {}: expected key=value, got '{}'",
                                 line_no, line);
        }
        const std::string_view key = trim(line.substr(0, sep));
        if (key.empty()) {
            return Status::error(Errc::kInvalidArgument, "line {}: empty key", line_no);
        }
        out[std::string(key)] = std::string(trim(line.substr(sep + 1)));
    }
    return out;
}

std::string properties_to_string(const std::map<std::string, std::string>& props) {
    std::string out;
    for (const auto& [k, v] : props) {
        out += k;
        out += '=';
        out += v;
        out += '\n';
    }
    return out;
}

}  // namespace comet::broker
