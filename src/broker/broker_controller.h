#pragma once
// BrokerController: builds, starts and stops one broker (Java BrokerController). Owns the config
// managers, client tables, long polling, the store (through StoreAdapter), the schedule service,
// the RemotingServer with its executors, and the RemotingClient used to register with every
// name server.
// Threads: "BrokerScheduler" (name server registration every registerNameServerPeriod and on
// topic changes, consumer offset persistence every flushConsumerOffsetInterval, client channel
// expiry every 10 s), plus the threads of the components it owns. start()/shutdown() from one
// thread (main). Lock order: mu_ (scheduler state, channel table) is a leaf: never held while
// calling a component, the network or the store.
// Files: <storeRoot>/config/{topics,subscriptionGroup,consumerOffset,delayOffset}.json and the
// store's own files.

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "broker/context/broker_context.h"
#include "broker/context/store_adapter.h"
#include "broker/controller/controller_link.h"
#include "broker/controller/controller_store.h"
#include "broker/controller/replicas_manager.h"
#include "broker/processor/broker_fast_failure.h"
#include "broker/processor/broker_processors.h"
#include "broker/processor/client_admin_processor.h"
#include "broker/processor/reply_message_processor.h"
#include "broker/replication/acting_master_service.h"
#include "broker/replication/escape_bridge.h"
#include "broker/replication/replicated_store_port.h"
#include "broker/replication/replication_service.h"
#include "broker/schedule/schedule_message_service.h"
#include "broker/stats/broker_metrics.h"
#include "broker/stats/broker_stats_manager.h"
#include "broker/transaction/transactional_message_service.h"
#include "dledger/dledger_server.h"
#include "dledger/entry_log.h"
#include "ha/ha_store_port.h"
#include "metrics/endpoint.h"
#include "net/remoting_client.h"
#include "net/remoting_server.h"

namespace comet::broker {

// What the brokers of one process share (BrokerContainer). Both outlive the broker.
struct SharedServices {
    // The remoting server's I/O loops (and the HA sockets that run on them): started before
    // start(), running until after shutdown(). Null: the broker runs its own
    // (serverSelectorThreads).
    std::shared_ptr<net::IoLoopGroup> io_loops;
    // The client that registers with the name servers (and calls the group's master for
    // metadata), started; the broker never shuts it down. Null: the broker owns one.
    net::RemotingClient* namesrv_client = nullptr;
};

class BrokerController {
public:
    // `store_base`: store settings from the registry (register_store_config); broker-level
    // fields override it (make_store_config).
    explicit BrokerController(BrokerConfig config, Clock& clock = SystemClock::instance(),
                              store::MessageStoreConfig store_base = {});
    ~BrokerController();
    BrokerController(const BrokerController&) = delete;
    BrokerController& operator=(const BrokerController&) = delete;

    // Before initialize(): run on `shared` instead of threads and a client of its own.
    void use_shared_services(SharedServices shared);
    // Loads config files and opens (recovers) the store. Errors name the file or setting.
    Status initialize();
    // Binds listenPort, starts every service and registers with the name servers.
    Status start();
    // Unregisters from the name servers, stops serving, persists every table, shuts the store
    // down cleanly (no abort file). Idempotent.
    void shutdown();

    uint16_t port() const;
    // The bound /metrics port (metricsPort, or the ephemeral one); 0 when metrics are off.
    uint16_t metrics_port() const;
    // brokerIP2 (or brokerIP1) : the bound HA port (haListenPort), as registered.
    std::string ha_server_addr() const;
    BrokerConfig config() const { return config_.get(); }
    // Registers with every name server now; returns the first failure (all are attempted).
    Status register_broker_all(bool oneway);
    TopicConfigManager& topics() { return *topics_; }
    ConsumerOffsetManager& offsets() { return *offsets_; }
    // Replication (HaService on a master, HaClient on a slave); null before initialize().
    ReplicationService* replication() { return replication_.get(); }
    StoreAdapter* store_adapter() { return store_.get(); }
    // DLedger mode (enableDLegerCommitLog=true); null otherwise.
    dledger::DLedgerServer* dledger() { return dledger_.get(); }
    // Controller mode (enableControllerMode=true); null otherwise.
    ReplicasManager* replicas_manager() { return replicas_manager_.get(); }
    ControllerStore* controller_store() { return controller_store_.get(); }

private:
    class NotifyListener;
    class ChannelListener;
    class ControllerRoles;

    std::string config_path(const char* name) const;
    // initialize()'s steps, in order (broker_controller.cc).
    Status load_tables(const BrokerConfig& cfg);
    Status open_store(const BrokerConfig& cfg, const store::MessageStoreConfig& store_cfg);
    Status limit_dispatch_to_confirmed(const BrokerConfig& cfg,
                                       const store::MessageStoreConfig& store_cfg,
                                       store::MessageStoreOptions* store_options);
    Status init_replication(const BrokerConfig& cfg);
    Status init_dledger(const BrokerConfig& cfg);
    Status init_services(const BrokerConfig& cfg, const DelayLevels& levels,
                         const store::MessageStoreConfig& store_cfg);
    void wire_context(const DelayLevels& levels);
    void create_processors();
    void init_server(const BrokerConfig& cfg);
    Status init_cluster_links(const BrokerConfig& cfg);

    // The request table (broker_controller_requests.cc): code -> processor, executor or inline.
    struct RequestRoute;
    struct Executors;
    void register_processors();
    std::vector<RequestRoute> request_table(const Executors& ex);
    Executors create_executors();
    template <class Processor>
    std::shared_ptr<net::RequestProcessor> wrap(Processor* proc);
    std::shared_ptr<net::RequestProcessor> handler(
        void (BrokerController::*fn)(protocol::RemotingCommand, net::Responder));
    std::shared_ptr<net::RequestProcessor> send_inline_processor(
        std::shared_ptr<net::RequestProcessor> send,
        std::shared_ptr<net::ThreadPoolExecutor> send_exec);
    // Requests BrokerController answers itself.
    void handle_notify_broker_role_changed(protocol::RemotingCommand req, net::Responder responder);
    void handle_get_broker_epoch_cache(protocol::RemotingCommand req, net::Responder responder);
    void handle_exchange_ha_info(protocol::RemotingCommand req, net::Responder responder);
    void handle_notify_min_broker_id_change(protocol::RemotingCommand req,
                                            net::Responder responder);
    void handle_leadership_transfer(protocol::RemotingCommand req, net::Responder responder);
    void scheduler_loop();
    // Once a second on the scheduler thread: feeds stats_manager_ from the hot-path counters
    // and records the midnight totals.
    void sample_stats();
    void request_registration();
    void unregister_broker_all();
    std::string register_body() const;
    void notify_consumer_ids_changed(const std::string& group,
                                     const std::vector<ClientChannelInfo>& channels);
    void track_channel(const net::ConnectionPtr& conn);
    // CHECK_TRANSACTION_STATE to the producer of `group` that heartbeated last; false if none
    // is connected.
    bool send_transaction_check(const std::string& group, protocol::RemotingCommand req);
    void forget_channel(uint64_t id);
    Status open_dledger_log(const BrokerConfig& cfg, store::MessageStoreOptions* options);
    Status retire_dledger_log(const BrokerConfig& cfg);
    void on_dledger_role(const dledger::DLedgerServer::RoleInfo& info);
    void note_dledger_offsets(bool master);
    Status init_controller_mode(const BrokerConfig& cfg);
    Status become_controller_master(int64_t my_id, int32_t epoch);
    Status become_controller_slave(int64_t my_id, int64_t master_id, const std::string& master_addr,
                                   int32_t epoch);
    // Slave in controller mode: asks the master for its HA address (EXCHANGE_BROKER_HA_INFO)
    // until the HaClient runs. Scheduler thread.
    void fetch_master_ha_address();
    // Metrics (broker_controller_metrics.cc): registry and collectors, then the endpoint.
    void init_metrics(const BrokerConfig& cfg);
    Status start_metrics_endpoint();
    void collect_store_metrics(std::vector<metrics::FamilySnapshot>* out);
    void collect_replication_metrics(std::vector<metrics::FamilySnapshot>* out);
    void collect_consumer_metrics(std::vector<metrics::FamilySnapshot>* out);

    BrokerConfigHolder config_;
    Clock& clock_;
    const store::MessageStoreConfig store_base_;
    std::string store_root_;
    BrokerStats stats_;
    BrokerStatsManager stats_manager_;
    int64_t stats_day_ = -1;  // local day of the last sample_stats (scheduler thread)
    // Outlives the store and the server (their threads report to it); the endpoint stops first
    // in shutdown().
    std::unique_ptr<BrokerMetrics> metrics_;
    std::unique_ptr<metrics::MetricsEndpoint> metrics_endpoint_;
    std::unique_ptr<NotifyListener> notify_listener_;
    std::unique_ptr<TopicConfigManager> topics_;
    std::unique_ptr<SubscriptionGroupManager> groups_;
    std::unique_ptr<ConsumerOffsetManager> offsets_;
    std::unique_ptr<ConsumerFilterManager> filters_;  // before consumers_: their events use it
    std::unique_ptr<ConsumerManager> consumers_;
    std::unique_ptr<ProducerManager> producers_;
    std::unique_ptr<RebalanceLockManager> locks_;
    std::unique_ptr<PullRequestHoldService> holds_;
    std::unique_ptr<dledger::EntryLog> dledger_log_;  // before store_: the store's hooks use it
    std::atomic<dledger::DLedgerServer*> dledger_ptr_{nullptr};
    std::unique_ptr<StoreAdapter> store_;
    std::unique_ptr<dledger::DLedgerServer> dledger_;
    std::unique_ptr<ha::CommitLogHaStore> ha_store_;
    std::unique_ptr<ReplicationService> replication_;
    // DLedger and controller modes: the store for the broker's own writes on a client's behalf
    // (delayed deliveries, transaction writes, stored replies), through replication_ like a
    // send. Null in master-slave mode (they go to store_ as in RocketMQ 4.9.8).
    std::unique_ptr<ReplicatedStorePort> broker_writes_;
    std::unique_ptr<ScheduleMessageService> schedule_;
    std::unique_ptr<TransactionalMessageService> transactions_;
    std::unique_ptr<ActingMasterService> acting_;  // member group, slave sync, acting master
    BrokerContext ctx_;
    std::unique_ptr<SendMessageProcessor> send_;
    std::unique_ptr<PullMessageProcessor> pull_;
    std::unique_ptr<ClientManageProcessor> client_;
    std::unique_ptr<ConsumerManageProcessor> consumer_;
    std::unique_ptr<QueryMessageProcessor> query_;
    std::unique_ptr<AdminBrokerProcessor> admin_;
    std::unique_ptr<EndTransactionProcessor> end_transaction_;
    std::unique_ptr<ClientAdminProcessor> client_admin_;
    std::unique_ptr<ReplyMessageProcessor> reply_;
    std::shared_ptr<net::ThreadPoolExecutor> pull_executor_;
    std::unique_ptr<BrokerFastFailure> fast_failure_;  // over the executors' queues
    std::unique_ptr<net::RemotingServer> server_;
    SharedServices shared_;
    std::unique_ptr<net::RemotingClient> own_namesrv_client_;  // null with a shared client
    net::RemotingClient* namesrv_client_ = nullptr;            // own or shared
    std::unique_ptr<EscapeBridge> escape_;  // acting master's send-back (enableRemoteEscape)
    std::unique_ptr<ControllerStore> controller_store_;  // controller mode
    std::unique_ptr<MasterLease> master_lease_;          // outlives the link, manager and put path
    std::unique_ptr<ControllerLink> controller_link_;
    std::unique_ptr<ControllerRoles> controller_roles_;
    std::unique_ptr<ReplicasManager> replicas_manager_;
    std::atomic<bool> has_role_{true};  // controller mode: false until the controller names one
    std::atomic<bool> schedule_started_{false};

    mutable Mutex mu_;
    std::condition_variable_any cv_;
    bool stopping_ GUARDED_BY(mu_) = false;
    bool register_now_ GUARDED_BY(mu_) = false;
    TimePoint register_again_at_ GUARDED_BY(mu_) = TimePoint::max();  // DLedger follower
    // DLedger follower with a known leader: re-registrations left while the register result
    // names no master yet (the new leader registers as master a moment later).
    int dledger_register_retries_ GUARDED_BY(mu_) = 0;
    std::string ha_info_from_ GUARDED_BY(mu_);  // controller-mode slave: master to ask (906)
    std::map<uint64_t, std::weak_ptr<net::Connection>> channels_ GUARDED_BY(mu_);
    std::thread scheduler_;
    bool started_ = false;
    bool shut_down_ = false;
};

}  // namespace comet::broker
