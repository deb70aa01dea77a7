#pragma once
// BrokerConfig: the broker's settings under RocketMQ's property names (BrokerConfig +
// NettyServerConfig keys that the broker reads). Loaded from a properties file / command line by
// apps/mqbroker; changed at runtime by UPDATE_BROKER_CONFIG. Keys this struct does not know (the
// store's, for instance) are kept in `extra` so they reach the store config and come back in
// GET_BROKER_CONFIG. Owned by BrokerController; copied into components at start. Not thread-safe:
// the controller guards the live copy with its own mutex.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace comet {
class ConfigRegistry;
}
namespace comet::metrics {
struct MetricsConfig;
}

namespace comet::broker {

inline constexpr std::string_view kDefaultMessageDelayLevel =
    "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h";

struct BrokerConfig {
    std::string broker_cluster_name = "DefaultCluster";  // brokerClusterName
    std::string broker_name = "broker-a";                // brokerName (Java: hostname)
    int64_t broker_id = 0;                               // brokerId, 0 = master
    int32_t listen_port = 10911;                         // listenPort
    std::string listen_host = "0.0.0.0";                 // listenHost (Comet: bind address)
    std::string namesrv_addr;                            // namesrvAddr "a:9876;b:9876"
    std::string broker_ip1 = "127.0.0.1";                // brokerIP1 (advertised)
    std::string broker_ip2;                              // brokerIP2 (HA; empty = brokerIP1)
    // haListenPort; 0 = listenPort + 1 (RocketMQ BrokerStartup), or ephemeral when listenPort
    // is 0 too (tests). effective_ha_listen_port() resolves it.
    int32_t ha_listen_port = 0;
    // Comet: haAdvertisedAddress, the host:port a master hands its slaves as its HA address
    // (REGISTER_BROKER's haServerAddr, EXCHANGE_BROKER_HA_INFO) when the slaves reach the HA
    // port through a NAT or a proxy. Empty: brokerIP2 (or brokerIP1) and the bound HA port.
    std::string ha_advertised_address;
    std::string store_path_root_dir;                     // storePathRootDir (empty: ~/store)
    std::string log_dir;                                 // logDir (empty: ~/logs/comet)
    std::string broker_role = "ASYNC_MASTER";            // brokerRole
    std::string flush_disk_type = "ASYNC_FLUSH";         // flushDiskType
    bool auto_create_topic_enable = true;                // autoCreateTopicEnable
    bool auto_create_subscription_group = true;          // autoCreateSubscriptionGroup
    int32_t default_topic_queue_nums = 8;                // defaultTopicQueueNums
    int32_t broker_permission = 6;                       // brokerPermission (PermName bits)
    bool cluster_topic_enable = true;                    // clusterTopicEnable
    bool broker_topic_enable = true;                     // brokerTopicEnable
    bool trace_topic_enable = false;                     // traceTopicEnable
    std::string msg_trace_topic_name = "RMQ_SYS_TRACE_TOPIC";  // msgTraceTopicName
    int64_t register_name_server_period = 30000;         // registerNameServerPeriod (ms)
    int64_t register_broker_timeout_mills = 6000;        // registerBrokerTimeoutMills
    bool long_polling_enable = true;                     // longPollingEnable
    int64_t short_polling_time_mills = 1000;             // shortPollingTimeMills
    std::string message_delay_level{kDefaultMessageDelayLevel};  // messageDelayLevel
    int32_t max_reconsume_times = 16;                    // maxReconsumeTimes (new groups' retryMaxTimes)
    std::string region_id = "DefaultRegion";             // regionId -> MSG_REGION
    bool trace_on = true;                                // traceOn -> TRACE_ON
    bool notify_consumer_ids_changed_enable = true;      // notifyConsumerIdsChangedEnable
    int64_t channel_expired_timeout = 120000;            // channelExpiredTimeout (ms)
    int64_t flush_consumer_offset_interval = 5000;       // flushConsumerOffsetInterval (ms)
    bool reject_transaction_message = false;             // rejectTransactionMessage
    // Transactions (docs/transactions.md): a half older than this is checked back (ms).
    int64_t transaction_time_out = 6000;                 // transactionTimeOut
    int32_t transaction_check_max = 15;                  // transactionCheckMax
    int64_t transaction_check_interval = 60000;          // transactionCheckInterval (ms)
    int32_t max_message_size = 4 * 1024 * 1024;          // maxMessageSize (body bytes)
    bool slave_read_enable = false;                      // slaveReadEnable
    // SQL92 property filters (docs/broker.md, docs/decisions/024). Off: a SQL92
    // subscription is refused with SYSTEM_ERROR, as RocketMQ 4.9.8 refuses it.
    bool enable_property_filter = false;                 // enablePropertyFilter
    bool filter_support_retry = false;                   // filterSupportRetry
    int64_t filter_data_clean_time_span = 86400000;      // filterDataCleanTimeSpan (ms, 24 h)
    int32_t default_query_max_num = 32;                  // defaultQueryMaxNum
    int64_t rebalance_lock_max_live_time = 60000;        // rocketmq.broker.rebalance.lockMaxLiveTime
    int32_t max_msg_nums_batch = 32;                     // maxTransferCountOnMessageInMemory
    int32_t max_transfer_bytes = 256 * 1024;             // maxTransferBytesOnMessageInMemory
    int32_t send_message_thread_pool_nums = 4;           // sendMessageThreadPoolNums
    int32_t pull_message_thread_pool_nums = 4;           // pullMessageThreadPoolNums
    // Executor queues (Java BrokerConfig, same names and defaults): a request finding its
    // queue full is answered SYSTEM_BUSY "[OVERLOAD]...". Sends normally run inline (decision
    // 019): the send queue holds only those that need an executor. Comet's ClientManage
    // executor is Java's heartbeat executor (it also takes UNREGISTER_CLIENT, CHECK_CLIENT_CONFIG).
    int32_t send_thread_pool_queue_capacity = 10000;       // sendThreadPoolQueueCapacity
    int32_t pull_thread_pool_queue_capacity = 100000;      // pullThreadPoolQueueCapacity
    int32_t query_thread_pool_queue_capacity = 20000;      // queryThreadPoolQueueCapacity
    int32_t heartbeat_thread_pool_queue_capacity = 50000;  // heartbeatThreadPoolQueueCapacity
    // consumerManagerThreadPoolQueueCapacity
    int32_t consumer_manager_thread_pool_queue_capacity = 1000000;
    int32_t end_transaction_pool_queue_capacity = 100000;  // endTransactionPoolQueueCapacity
    int32_t end_transaction_thread_pool_nums = 8;  // endTransactionThreadPoolNums (Java 8+2/core)
    // Fast failure (Java BrokerFastFailure, every 10 ms): while the page cache is busy the send
    // queue is answered SYSTEM_BUSY "[PCBUSY_CLEAN_QUEUE]..."; a request that waited in its
    // queue this long is answered "[TIMEOUT_CLEAN_QUEUE]..." instead of run.
    bool broker_fast_failure_enable = true;               // brokerFastFailureEnable
    int64_t wait_time_mills_in_send_queue = 200;          // waitTimeMillsInSendQueue
    int64_t wait_time_mills_in_pull_queue = 5000;         // waitTimeMillsInPullQueue
    int64_t wait_time_mills_in_heartbeat_queue = 31000;   // waitTimeMillsInHeartbeatQueue
    int64_t wait_time_mills_in_transaction_queue = 3000;  // waitTimeMillsInTransactionQueue
    // Network I/O threads, which also run sends to completion (decision 019). 0: one per core
    // (differs: RocketMQ's default is 3).
    int32_t server_selector_threads = 0;                 // serverSelectorThreads
    int64_t start_accept_send_request_time_stamp = 0;    // startAcceptSendRequestTimeStamp
    // --- replication (docs/replication.md; BrokerConfig + MessageStoreConfig keys in Java) ---
    std::string ha_master_address;                       // haMasterAddress (slave, host:port)
    int32_t ha_send_heartbeat_interval = 5000;           // haSendHeartbeatInterval (ms)
    int32_t ha_housekeeping_interval = 20000;            // haHousekeepingInterval (ms)
    int32_t ha_transfer_batch_size = 32768;              // haTransferBatchSize (bytes)
    int64_t ha_max_gap_not_in_sync = 256LL * 1024 * 1024;  // haMaxGapNotInSync (bytes)
    // haSlaveFallbehindMax (bytes, RocketMQ 4.9.8): under 4.9.8's quorum rules a SYNC_MASTER
    // send fails with SLAVE_NOT_AVAILABLE when the nearest slave is this far behind.
    int64_t ha_slave_fallbehind_max = 256LL * 1024 * 1024;
    int64_t slave_timeout = 3000;                        // slaveTimeout (ms)
    int32_t total_replicas = 1;                          // totalReplicas
    int32_t in_sync_replicas = 1;                        // inSyncReplicas
    int32_t min_in_sync_replicas = 1;                    // minInSyncReplicas
    bool enable_auto_in_sync_replicas = false;           // enableAutoInSyncReplicas
    // Comet, not a property: the file, the command line or set() gave one of the four keys
    // above a value (even its default). See uses_rocketmq5_quorum_rules().
    bool quorum_keys_set = false;
    bool enable_slave_acting_master = false;             // enableSlaveActingMaster
    bool enable_remote_escape = false;                   // enableRemoteEscape
    bool require_handshake = false;                      // requireHandshake (Comet)
    bool send_handshake = true;                          // sendHandshake (Comet)
    bool slave_not_available_fast_fail = true;           // slaveNotAvailableFastFail (Comet)
    // --- DLedger mode (docs/dledger.md; MessageStoreConfig keys in Java) ---
    bool enable_dleger_commit_log = false;               // enableDLegerCommitLog
    std::string dleger_group;                            // dLegerGroup (empty: brokerName)
    std::string dleger_peers;                            // dLegerPeers "n0-host:port;n1-..."
    std::string dleger_self_id;                          // dLegerSelfId
    std::string preferred_leader_id;                     // preferredLeaderId
    int32_t dleger_election_timeout_min_ms = 150;        // dLegerElectionTimeoutMinMs (Comet)
    int32_t dleger_election_timeout_max_ms = 300;        // dLegerElectionTimeoutMaxMs (Comet)
    int32_t dleger_heartbeat_interval_ms = 50;           // dLegerHeartbeatIntervalMs (Comet)
    bool dleger_sync_before_ack = true;                  // dLegerSyncBeforeAck (Comet)
    bool dleger_lazy_leader_sync = true;                 // dLegerLazyLeaderSync (Comet)
    // --- controller mode (docs/controller.md; BrokerConfig + MessageStoreConfig keys) ---
    bool enable_controller_mode = false;                 // enableControllerMode
    std::string controller_addr;                         // controllerAddr "a:9878;b:9868"
    int64_t sync_broker_metadata_period = 5000;          // syncBrokerMetadataPeriod (ms)
    int64_t check_sync_state_set_period = 5000;          // checkSyncStateSetPeriod (ms)
    int64_t sync_controller_metadata_period = 10000;     // syncControllerMetadataPeriod (ms)
    // Comet's defaults for sub-2-second failover (RocketMQ: 10000 and 1000; docs/controller.md).
    int64_t controller_heart_beat_timeout_mills = 1000;  // controllerHeartBeatTimeoutMills
    int64_t broker_heartbeat_interval = 200;             // brokerHeartbeatInterval (ms)
    int64_t send_heartbeat_timeout_millis = 1000;        // sendHeartbeatTimeoutMillis
    int32_t broker_election_priority = 2147483647;       // brokerElectionPriority (lower wins)
    bool all_ack_in_sync_state_set = false;              // allAckInSyncStateSet
    int64_t ha_max_time_slave_not_catchup = 15000;       // haMaxTimeSlaveNotCatchup (ms)
    bool sync_from_last_file = false;                    // syncFromLastFile
    bool async_learner = false;                          // asyncLearner
    std::string store_path_epoch_file;                   // storePathEpochFile (empty: root/epochFileCheckpoint)
    std::string store_path_broker_identity;              // storePathBrokerIdentity (empty: root/brokerIdentity)

    // --- metrics (docs/metrics.md) ---
    int32_t metrics_port = 0;                            // metricsPort (Comet; 0 = off)
    std::string metrics_exporter_type = "DISABLE";       // metricsExporterType (DISABLE | PROM)
    int32_t metrics_prom_exporter_port = 5557;           // metricsPromExporterPort
    std::string metrics_prom_exporter_host;              // metricsPromExporterHost (empty: listenHost)

    // Properties this struct does not model, passed through (store settings and the like).
    std::map<std::string, std::string> extra;

    // Sets one property by its RocketMQ name. Unknown keys go to `extra`. Errors:
    // kInvalidArgument naming the key when the value does not parse.
    Status set(std::string_view key, std::string_view value);

    // Applies every pair; stops at the first error.
    Status apply(const std::map<std::string, std::string>& props);
    // Refuses a runtime change (UPDATE_BROKER_CONFIG) of a key read only at start-up that
    // defines the broker's identity or durability contract; the same value is accepted.
    Status check_runtime_update(const std::map<std::string, std::string>& props) const;

    // Every property (known and extra) as strings, keyed by RocketMQ name, sorted.
    std::map<std::string, std::string> to_properties() const;

    // The metrics keys as the shared endpoint reads them.
    metrics::MetricsConfig metrics_config() const;

    // Checks cross-field rules (ports in range, queue nums > 0, delay levels parse).
    Status validate() const;
    // The DLedger keys (with enableDLegerCommitLog=true): peers, self id, contradictions.
    Status validate_dledger() const;
    // The controller-mode keys (with enableControllerMode=true): addresses, periods,
    // contradictions with fixed-role keys.
    Status validate_controller_mode() const;
    // controllerAddr split on ';' (and ','), trimmed, empty entries dropped.
    std::vector<std::string> controller_list() const;
    // storePathEpochFile / storePathBrokerIdentity resolved against store_root().
    std::string epoch_file_path() const;
    std::string broker_identity_path() const;

    // "brokerIP1:listenPort".
    std::string broker_addr() const;
    // "brokerIP2:haListenPort" (brokerIP1 when brokerIP2 is empty).
    std::string ha_server_addr() const;
    // haListenPort, or listenPort + 1 when unset (0 when listenPort is 0: ephemeral).
    int32_t effective_ha_listen_port() const;
    // storePathRootDir, with "~" and empty resolved to $HOME/store.
    std::string store_root() const;
    // namesrvAddr split on ';' (and ','), trimmed, empty entries dropped.
    std::vector<std::string> namesrv_list() const;
    bool is_master() const { return broker_id == 0; }

    // Which quorum rules a master-slave SYNC_MASTER follows (docs/durability.md): RocketMQ 5's
    // when a quorum key (totalReplicas, inSyncReplicas, minInSyncReplicas,
    // enableAutoInSyncReplicas) was set or holds a value other than its default; otherwise
    // RocketMQ 4.9.8's (each send waits for one slave), the meaning a 4.x broker.conf was
    // written with. to_properties() reports it as the derived entry quorumRules ("4.9.8" / "5").
    bool uses_rocketmq5_quorum_rules() const;
};

// Records on `config` which keys the operator set through `registry` (file, --key=value):
// quorum_keys_set. Call after the command line was applied, before the config is used.
void note_keys_set(const ConfigRegistry& registry, BrokerConfig* config);

// Registers every BrokerConfig field under its RocketMQ name in the shared config registry
// (command line -c/-n/-p/-m/--key=value). Defaults are the struct's current values.
void register_broker_config(ConfigRegistry& registry, BrokerConfig* config);

// Parses a Java properties text ("k=v" / "k: v" lines, '#' and '!' comments, trimmed).
// Errors: kInvalidArgument with the line number.
Result<std::map<std::string, std::string>> parse_properties(std::string_view text);

// Writes "k=v\n" lines (the body of GET_BROKER_CONFIG, as MixAll.properties2String).
std::string properties_to_string(const std::map<std::string, std::string>& props);

}  // namespace comet::broker
