#include "broker/broker_controller.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>

#include "base/log_tag.h"
#include "ha/durability_contract.h"
#include "protocol/ha_bodies.h"
#include "protocol/ha_headers.h"
#include "protocol/json_body.h"
#include "protocol/message_decoder.h"
#include "protocol/namesrv_headers.h"
#include "protocol/pull_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"
#include "store/commit_log.h"
#include "store/store_checkpoint.h"

namespace comet::broker {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using namespace std::chrono_literals;

// Sends NOTIFY_CONSUMER_IDS_CHANGED when a group's membership changes.
class BrokerController::NotifyListener final : public ConsumerIdsChangeListener {
public:
    explicit NotifyListener(BrokerController& owner) : owner_(owner) {}
    void handle(ConsumerGroupEvent event, const std::string& group,
                const std::vector<ClientChannelInfo>& channels) override {
        if (event == ConsumerGroupEvent::kChange) {
            owner_.notify_consumer_ids_changed(group, channels);
        } else if (event == ConsumerGroupEvent::kUnregister) {
            owner_.filters_->unregister_group(group);  // Java DefaultConsumerIdsChangeListener
        }
    }

private:
    BrokerController& owner_;
};

// Connection closes remove the client from the consumer/producer tables.
class BrokerController::ChannelListener final : public net::ConnectionListener {
public:
    explicit ChannelListener(BrokerController& owner) : owner_(owner) {}
    void on_closed(const net::ConnectionPtr& conn, const Status& reason) override {
        (void)reason;
        const ChannelId id(conn->id());
        owner_.consumers_->on_channel_closed(id);
        owner_.producers_->on_channel_closed(id);
        owner_.forget_channel(conn->id());
    }

private:
    BrokerController& owner_;
};

// Controller mode: the ReplicasManager's role changes, done by the broker.
class BrokerController::ControllerRoles final : public RoleHost {
public:
    explicit ControllerRoles(BrokerController& owner) : owner_(owner) {}
    Status become_master(int64_t my_id, int32_t master_epoch) override {
        return owner_.become_controller_master(my_id, master_epoch);
    }
    Status become_slave(int64_t my_id, int64_t master_id, const std::string& master_addr,
                        int32_t master_epoch) override {
        return owner_.become_controller_slave(my_id, master_id, master_addr, master_epoch);
    }
    void sync_state_set_changed(const std::set<int64_t>& set) override {
        (void)set;  // ControllerStore holds it; the HA acks are counted against it again
        if (ha::HaService* svc = owner_.replication_->ha_service()) {
            svc->recount_acks();
        }
    }

private:
    BrokerController& owner_;
};

BrokerController::BrokerController(BrokerConfig config, Clock& clock,
                                   store::MessageStoreConfig store_base)
    : config_(std::move(config)), clock_(clock), store_base_(std::move(store_base)) {}

BrokerController::~BrokerController() { shutdown(); }

std::string BrokerController::config_path(const char* name) const {
    return store_root_ + "/config/" + name;
}

void BrokerController::use_shared_services(SharedServices shared) {
    COMET_CHECK(store_ == nullptr, "use_shared_services after initialize");
    shared_ = std::move(shared);
}

Status BrokerController::initialize() {
    const BrokerConfig cfg = config_.get();
    COMET_RETURN_IF_ERROR(cfg.validate());
    COMET_ASSIGN_OR_RETURN(DelayLevels levels, DelayLevels::parse(cfg.message_delay_level));
    store_root_ = cfg.store_root();
    stats_.start_millis = clock_.wall_millis();
    init_metrics(cfg);
    COMET_RETURN_IF_ERROR(load_tables(cfg));
    COMET_ASSIGN_OR_RETURN(store::MessageStoreConfig store_cfg,
                           make_store_config(cfg, store_base_));
    COMET_RETURN_IF_ERROR(open_store(cfg, store_cfg));
    COMET_RETURN_IF_ERROR(init_replication(cfg));
    if (dledger_log_ != nullptr) {
        COMET_RETURN_IF_ERROR(init_dledger(cfg));
    }
    COMET_RETURN_IF_ERROR(init_services(cfg, levels, store_cfg));
    wire_context(levels);
    create_processors();
    init_server(cfg);
    register_processors();
    COMET_RETURN_IF_ERROR(init_cluster_links(cfg));
    spdlog::info("broker {} ({}) initialized, store at {}", cfg.broker_name, cfg.broker_addr(),
                 store_root_);
    return Status::ok();
}

Status BrokerController::load_tables(const BrokerConfig& cfg) {
    notify_listener_ = std::make_unique<NotifyListener>(*this);
    topics_ = std::make_unique<TopicConfigManager>(cfg, clock_, config_path("topics.json"));
    COMET_RETURN_IF_ERROR(topics_->load());
    groups_ = std::make_unique<SubscriptionGroupManager>(
        clock_, config_path("subscriptionGroup.json"), cfg.auto_create_subscription_group,
        cfg.max_reconsume_times);
    COMET_RETURN_IF_ERROR(groups_->load());
    offsets_ = std::make_unique<ConsumerOffsetManager>(config_path("consumerOffset.json"));
    COMET_RETURN_IF_ERROR(offsets_->load());
    const Duration expiry = std::chrono::milliseconds(cfg.channel_expired_timeout);
    filters_ = std::make_unique<ConsumerFilterManager>(
        clock_, std::chrono::milliseconds(cfg.filter_data_clean_time_span));
    consumers_ = std::make_unique<ConsumerManager>(clock_, expiry, notify_listener_.get());
    producers_ = std::make_unique<ProducerManager>(clock_, expiry);
    locks_ = std::make_unique<RebalanceLockManager>(
        clock_, std::chrono::milliseconds(cfg.rebalance_lock_max_live_time));
    return Status::ok();
}

Status BrokerController::open_store(const BrokerConfig& cfg,
                                    const store::MessageStoreConfig& store_cfg) {
    store::MessageStoreOptions store_options;
    if (cfg.enable_dleger_commit_log) {
        COMET_RETURN_IF_ERROR(open_dledger_log(cfg, &store_options));
    } else {
        COMET_RETURN_IF_ERROR(retire_dledger_log(cfg));
    }
    if (cfg.enable_controller_mode) {
        COMET_RETURN_IF_ERROR(limit_dispatch_to_confirmed(cfg, store_cfg, &store_options));
    }
    auto store = store::MessageStore::open(store_cfg, clock_, store_options);
    if (!store.is_ok()) {
        return Status::error(store.status().code(), "open message store at {}: {}",
                             store_cfg.store_path_root_dir, store.status().message());
    }
    store_ = std::make_unique<StoreAdapter>(std::move(store).value());
    store_->store().commit_log().flush_service().set_observer(metrics_.get());
    return Status::ok();
}

Status BrokerController::limit_dispatch_to_confirmed(const BrokerConfig& cfg,
                                                     const store::MessageStoreConfig& store_cfg,
                                                     store::MessageStoreOptions* store_options) {
    // Recovery dispatches only what was confirmed before the restart: a tail past it may
    // be cut when this broker rejoins as a slave (rocketmq-wire.md §7.6).
    std::error_code ec;
    std::filesystem::create_directories(store_cfg.store_path_root_dir, ec);
    COMET_ASSIGN_OR_RETURN(auto cp, store::StoreCheckpoint::open(store_cfg.checkpoint_path()));
    int64_t confirmed = cp->confirm_phy_offset();
    cp.reset();
    // No epoch yet: the store, if it holds anything, is from master-slave mode, and all of
    // it counts as confirmed (ControllerStore::load).
    COMET_ASSIGN_OR_RETURN(const bool before,
                           ControllerStore::before_controller_mode(cfg.epoch_file_path()));
    if (before) {
        confirmed = std::numeric_limits<int64_t>::max();
    }
    store_options->dispatch_limit = [confirmed] { return store::PhysicalOffset(confirmed); };
    return Status::ok();
}

Status BrokerController::init_replication(const BrokerConfig& cfg) {
    std::vector<std::string> repl_warnings;
    auto repl_cfg = make_replication_config(cfg, &repl_warnings);
    if (!repl_cfg.is_ok()) {
        return repl_cfg.status();
    }
    for (const std::string& w : repl_warnings) {
        spdlog::warn("REPLICATION CONFIG WARNING: {}", w);
    }
    {
        // The effective contract in one line, and settings that are ignored or contradict
        // each other (the same text as `mqadmin explainDurability`).
        const ha::DurabilityExplanation dur =
            ha::explain_durability(ha::durability_facts_from_properties(cfg.to_properties()));
        if (dur.quorum_rules.empty()) {
            spdlog::info("DURABILITY: {}", dur.contract);
        } else {
            spdlog::info("DURABILITY: {} (quorum rules: {})", dur.contract, dur.quorum_rules);
        }
        for (const std::string& w : dur.warnings) {
            spdlog::warn("DURABILITY WARNING: {}", w);
        }
    }
    ha_store_ = std::make_unique<ha::CommitLogHaStore>(store_->store().commit_log());
    replication_ =
        std::make_unique<ReplicationService>(std::move(repl_cfg).value(), clock_, *ha_store_);
    if (cfg.enable_controller_mode) {
        COMET_RETURN_IF_ERROR(init_controller_mode(cfg));
    }
    return Status::ok();
}

Status BrokerController::init_services(const BrokerConfig& cfg, const DelayLevels& levels,
                                       const store::MessageStoreConfig& store_cfg) {
    const Duration hold_check = cfg.long_polling_enable
                                    ? Duration(5s)
                                    : Duration(std::chrono::milliseconds(
                                          std::max<int64_t>(cfg.short_polling_time_mills, 10)));
    holds_ = std::make_unique<PullRequestHoldService>(
        clock_,
        [this](const std::string& topic, int32_t qid) {
            return store_->max_offset_in_queue(topic, qid);
        },
        hold_check);
    MessageStorePort* writes = store_.get();
    if (cfg.enable_dleger_commit_log || cfg.enable_controller_mode) {
        broker_writes_ = std::make_unique<ReplicatedStorePort>(*store_, *replication_);
        writes = broker_writes_.get();
    }
    schedule_ = std::make_unique<ScheduleMessageService>(clock_, *writes, levels,
                                                         config_path("delayOffset.json"));
    COMET_RETURN_IF_ERROR(schedule_->load());
    TransactionalMessageService::Deps tx;
    tx.config = &config_;
    tx.clock = &clock_;
    tx.store = writes;
    tx.topics = topics_.get();
    tx.offsets = offsets_.get();
    tx.send_check = [this](const std::string& group, protocol::RemotingCommand req) {
        return send_transaction_check(group, std::move(req));
    };
    tx.is_master = [this] { return has_role_.load() && !replication_->is_slave(); };
    tx.on_topics_changed = [this] { request_registration(); };
    tx.file_reserved_hours = store_cfg.file_reserved_time_hours;
    tx.delay_levels = levels;
    transactions_ = std::make_unique<TransactionalMessageService>(std::move(tx));
    return Status::ok();
}

void BrokerController::wire_context(const DelayLevels& levels) {
    ctx_.config = &config_;
    ctx_.clock = &clock_;
    ctx_.topics = topics_.get();
    ctx_.groups = groups_.get();
    ctx_.offsets = offsets_.get();
    ctx_.consumers = consumers_.get();
    ctx_.filters = filters_.get();
    ctx_.producers = producers_.get();
    ctx_.locks = locks_.get();
    ctx_.holds = holds_.get();
    ctx_.store = store_.get();
    ctx_.broker_writes = broker_writes_.get();
    ctx_.schedule = schedule_.get();
    ctx_.transactions = transactions_.get();
    ctx_.replication = replication_.get();
    ctx_.delay_levels = levels;
    ctx_.stats = &stats_;
    ctx_.stats_manager = &stats_manager_;
    ctx_.on_topics_changed = [this] { request_registration(); };
    ctx_.min_broker_id_in_group = [this] {
        return acting_ != nullptr ? acting_->tracker().min_broker_id() : int64_t{0};
    };
}

void BrokerController::create_processors() {
    send_ = std::make_unique<SendMessageProcessor>(ctx_);
    pull_ = std::make_unique<PullMessageProcessor>(ctx_);
    client_ = std::make_unique<ClientManageProcessor>(ctx_);
    consumer_ = std::make_unique<ConsumerManageProcessor>(ctx_);
    query_ = std::make_unique<QueryMessageProcessor>(ctx_);
    admin_ = std::make_unique<AdminBrokerProcessor>(ctx_);
    end_transaction_ = std::make_unique<EndTransactionProcessor>(ctx_);
    client_admin_ = std::make_unique<ClientAdminProcessor>(ctx_);
    reply_ = std::make_unique<ReplyMessageProcessor>(ctx_);
    ctx_.find_channel = [this](ChannelId id) -> net::ConnectionPtr {
        MutexLock l(mu_);
        auto it = channels_.find(id.value());
        return it != channels_.end() ? it->second.lock() : nullptr;
    };
}

void BrokerController::init_server(const BrokerConfig& cfg) {
    net::RemotingServerConfig server_cfg;
    server_cfg.name = "BrokerServer";
    server_cfg.listen_host = cfg.listen_host.empty() ? "0.0.0.0" : cfg.listen_host;
    server_cfg.listen_port = static_cast<uint16_t>(cfg.listen_port);
    server_cfg.io_threads = cfg.server_selector_threads > 0
                                ? static_cast<size_t>(cfg.server_selector_threads)
                                : std::max<size_t>(1, std::thread::hardware_concurrency());
    server_cfg.loops = shared_.io_loops;
    if (const std::string* tag = current_log_tag()) {
        server_cfg.log_tag = *tag;  // the container's broker tag, for the shared I/O threads
    }
    server_ = std::make_unique<net::RemotingServer>(server_cfg, &clock_);
    // Replication runs its sockets on the same I/O loops (docs/decisions/030).
    replication_->set_io_loops(server_->loops());
    server_->set_connection_listener(std::make_shared<ChannelListener>(*this));
    server_->set_rpc_observer(metrics_->rpc_observer());
    // The sends of one socket read commit to the CommitLog together, on the I/O thread, and
    // their replies leave in one write (decision 028), before the dispatch and flush threads
    // are woken for them.
    server_->set_read_batch_hooks([] { store::CommitLog::begin_put_batch(/*defer_notify=*/true); },
                                  &store::CommitLog::end_put_batch,
                                  &store::CommitLog::after_put_batch_written);
}

Status BrokerController::init_cluster_links(const BrokerConfig& cfg) {
    if (shared_.namesrv_client != nullptr) {
        namesrv_client_ = shared_.namesrv_client;
    } else {
        net::RemotingClientConfig client_cfg;
        client_cfg.name = "BrokerOuterAPI";
        own_namesrv_client_ = std::make_unique<net::RemotingClient>(client_cfg, &clock_);
        namesrv_client_ = own_namesrv_client_.get();
    }
    ActingMasterService::Deps acting_deps;  // docs/replication.md "Slave metadata sync"
    acting_deps.config = &config_;
    acting_deps.clock = &clock_;
    acting_deps.client = namesrv_client_;
    acting_deps.tables = {topics_.get(), offsets_.get(), groups_.get(), schedule_.get(),
                          config_path("delayOffset.json")};
    COMET_ASSIGN_OR_RETURN(acting_, ActingMasterService::create(std::move(acting_deps)));
    acting_->set_master_listener([this](const std::string& addr, const std::string& ha) {
        if (!addr.empty() && !ha.empty()) {  // the master is back (NOTIFY / member group)
            replication_->on_register_result(ha, addr);
        }
    });
    if (acting_->enable_slave_acting_master()) {
        replication_->set_alive_replica_fn(acting_->alive_replica_fn());
    }
    ctx_.extra_runtime_info = [this] {
        std::map<std::string, std::string> table = acting_->runtime_info();
        if (fast_failure_ != nullptr) {  // the executor queues (sizes, capacities, head waits)
            fast_failure_->add_runtime_info(&table, std::chrono::steady_clock::now());
        }
        return table;
    };
    escape_ = std::make_unique<EscapeBridge>(
        cfg.broker_name,
        EscapeBridge::remote_network(
            namesrv_client_, [this] { return config_.get().namesrv_list(); }, 3s));
    ctx_.escape = escape_.get();
    ctx_.is_acting_master = [this] { return acting_->is_acting_master(); };
    ctx_.serves_as_master = [this] {
        if (dledger_ != nullptr) {
            return dledger_->writable();  // the leader, caught up
        }
        return (has_role_.load() && !replication_->is_slave()) || acting_->is_acting_master();
    };
    return Status::ok();
}

Status BrokerController::start() {
    COMET_CHECK(store_ != nullptr, "start() before a successful initialize()");
    store_->store().start();
    if (dledger_ != nullptr) {
        note_dledger_offsets(false);  // a leader's mark from the last run
        COMET_RETURN_IF_ERROR(dledger_->start());
    }
    store_->set_arrival_listener(
        [this](const std::string& topic, int32_t qid, int64_t max_offset, int64_t tags_code) {
            holds_->notify_message_arriving(topic, qid, max_offset, tags_code);
        });
    store_->store().set_dispatch_waiters(holds_->held_counter());
    holds_->start();
    transactions_->start();  // checks only while this broker is a master
    const BrokerConfig start_cfg = config_.get();
    if (start_cfg.enable_controller_mode) {
        // Started on the first mastership (become_controller_master).
    } else if (!replication_->is_slave()) {
        schedule_started_.store(true);
        schedule_->start(200ms, 10s);
    } else if (start_cfg.enable_slave_acting_master && start_cfg.enable_remote_escape) {
        // A slave delivers delayed messages only while it is the acting master, escaping each
        // due message to another group's master (RocketMQ 5 escape bridge); otherwise never.
        schedule_->set_remote_delivery(
            [this] { return acting_->is_acting_master(); },
            [this](const protocol::MessageExt& msg) -> Status {
                auto r = escape_->escape(msg);
                if (!r.is_ok()) {
                    return r.status();
                }
                if (r->code != RC::kSuccess) {
                    return Status::error(Errc::kUnavailable, "remote broker answered {}: {}",
                                         r->code, r->remark.value_or(""));
                }
                return Status::ok();
            });
        schedule_->start(200ms, 10s);
    }
    COMET_RETURN_IF_ERROR(replication_->start());
    COMET_RETURN_IF_ERROR(server_->start());
    COMET_RETURN_IF_ERROR(start_metrics_endpoint());
    if (own_namesrv_client_) {
        own_namesrv_client_->start();
    }
    started_ = true;
    if (replicas_manager_ != nullptr) {
        replicas_manager_->start();
    }
    const BrokerConfig cfg = config_.get();
    spdlog::info("The broker[{}, {}] boot success. serializeType=JSON and name server is {}",
                 cfg.broker_name, cfg.broker_addr(), cfg.namesrv_addr);
    Status reg = register_broker_all(false);
    if (!reg.is_ok()) {
        spdlog::warn("first registration with the name servers failed (will retry): {}",
                     reg.message());
    }
    acting_->start();
    if (fast_failure_ != nullptr) {
        fast_failure_->start();
    }
    {
        MutexLock l(mu_);
        stopping_ = false;
    }
    scheduler_ = tagged_thread([this] { scheduler_loop(); });
    return Status::ok();
}

uint16_t BrokerController::port() const { return server_->port(); }

std::string BrokerController::ha_server_addr() const {
    const BrokerConfig cfg = config_.get();
    if (!cfg.ha_advertised_address.empty()) {
        return cfg.ha_advertised_address;
    }
    const uint16_t bound = replication_ ? replication_->ha_port() : 0;
    if (bound == 0) {
        return cfg.ha_server_addr();
    }
    return (cfg.broker_ip2.empty() ? cfg.broker_ip1 : cfg.broker_ip2) + ":" + std::to_string(bound);
}

void BrokerController::request_registration() {
    {
        MutexLock l(mu_);
        register_now_ = true;
    }
    cv_.notify_all();
}

std::string BrokerController::register_body() const {
    return std::string(R"({"filterServerList":[],"topicConfigSerializeWrapper":)") +
           topics_->encode(false) + "}";
}

Status BrokerController::register_broker_all(bool oneway) {
    const BrokerConfig cfg = config_.get();
    const auto addrs = cfg.namesrv_list();
    if (addrs.empty() || !has_role_.load()) {
        return Status::ok();  // controller mode: no role from the controller yet
    }
    // With a broker permission change, every topic is registered with the broker's permission
    // applied (Java registerBrokerAll caps topic perms by brokerPermission).
    std::string body = register_body();
    protocol::RegisterBrokerRequestHeader h;
    h.broker_name = cfg.broker_name;
    h.broker_addr = cfg.broker_addr();
    h.cluster_name = cfg.broker_cluster_name;
    h.ha_server_addr = ha_server_addr();
    h.broker_id = cfg.broker_id;
    h.enable_acting_master = cfg.enable_slave_acting_master;
    h.compressed = false;
    h.body_crc32 = protocol::body_crc32(body);
    Status first_error;
    for (const auto& addr : addrs) {
        protocol::RemotingCommand req = protocol::RemotingCommand::request(Req::kRegisterBroker);
        req.language = protocol::LanguageCode::kJava;
        h.to_ext(req);
        req.body = body;
        if (oneway) {
            req.flag |= protocol::kFlagOneway;
            namesrv_client_->invoke_oneway_async(addr, std::move(req), [addr](Status st) {
                if (!st.is_ok()) {
                    spdlog::warn("register broker to name server {} (one-way) failed: {}", addr,
                                 st.message());
                }
            });
            continue;
        }
        auto r = namesrv_client_->invoke_sync(
            addr, std::move(req), std::chrono::milliseconds(cfg.register_broker_timeout_mills));
        if (!r.is_ok()) {
            spdlog::warn("register broker to name server {} failed: {}", addr,
                         r.status().message());
            if (first_error.is_ok()) {
                first_error = r.status();
            }
        } else if (r->code != RC::kSuccess) {
            spdlog::warn("register broker to name server {} refused: code {} {}", addr, r->code,
                         r->remark.value_or(""));
            if (first_error.is_ok()) {
                first_error = Status::error(Errc::kUnavailable, "name server {} answered {}: {}",
                                            addr, r->code, r->remark.value_or(""));
            }
        } else {
            spdlog::debug("registered with name server {}", addr);
            // A slave learns its master's HA address (and broker address) from the result.
            auto rh = protocol::RegisterBrokerResponseHeader::from_ext(*r);
            if (rh.is_ok() && replication_) {
                replication_->on_register_result(rh->ha_server_addr, rh->master_addr);
            }
            if (rh.is_ok() && acting_) {
                acting_->on_register_result(rh->master_addr.value_or(""),
                                            rh->ha_server_addr.value_or(""));
            }
            if (rh.is_ok() && dledger_ != nullptr && rh->master_addr.value_or("").empty()) {
                MutexLock l(mu_);
                if (dledger_register_retries_ > 0) {
                    --dledger_register_retries_;
                    register_again_at_ =
                        std::min(register_again_at_, clock_.now() + std::chrono::milliseconds(500));
                    cv_.notify_all();
                }
            }
        }
    }
    return first_error;
}

void BrokerController::unregister_broker_all() {
    const BrokerConfig cfg = config_.get();
    for (const auto& addr : cfg.namesrv_list()) {
        protocol::UnRegisterBrokerRequestHeader h;
        h.broker_name = cfg.broker_name;
        h.broker_addr = cfg.broker_addr();
        h.cluster_name = cfg.broker_cluster_name;
        h.broker_id = cfg.broker_id;
        protocol::RemotingCommand req = protocol::RemotingCommand::request(Req::kUnregisterBroker);
        req.language = protocol::LanguageCode::kJava;
        h.to_ext(req);
        auto r = namesrv_client_->invoke_sync(addr, std::move(req), 3s);
        if (!r.is_ok()) {
            spdlog::warn("unregister broker from name server {} failed: {}", addr,
                         r.status().message());
        } else {
            spdlog::info("unregistered from name server {}", addr);
        }
    }
}

void BrokerController::scheduler_loop() {
    pthread_setname_np(pthread_self(), "BrokerScheduler");
    const BrokerConfig cfg = config_.get();
    const Duration register_period = std::chrono::milliseconds(
        std::clamp<int64_t>(cfg.register_name_server_period, 10000, 60000));
    const Duration persist_period =
        std::chrono::milliseconds(std::max<int64_t>(cfg.flush_consumer_offset_interval, 100));
    const Duration scan_period = 10s;
    TimePoint next_register = clock_.now() + register_period;
    TimePoint next_persist = clock_.now() + persist_period;
    TimePoint next_scan = clock_.now() + scan_period;
    TimePoint next_stats = clock_.now() + 1s;
    while (true) {
        bool register_now = false;
        {
            MutexLock l(mu_);
            if (stopping_) {
                return;
            }
            const TimePoint wake =
                std::min({next_register, next_persist, next_scan, next_stats, register_again_at_});
            const TimePoint now = clock_.now();
            if (!register_now_ && wake > now) {
                std::unique_lock<Mutex> ul(mu_, std::adopt_lock);
                cv_.wait_for(ul, std::min<Duration>(wake - now, 1s));
                ul.release();
            }
            if (stopping_) {
                return;
            }
            register_now = register_now_;
            register_now_ = false;
            if (clock_.now() >= register_again_at_) {
                register_again_at_ = TimePoint::max();
                next_register = clock_.now();  // a registration with its result, below
            }
        }
        const TimePoint now = clock_.now();
        if (register_now) {
            (void)register_broker_all(true);
            next_register = now + register_period;
        } else if (now >= next_register) {
            (void)register_broker_all(false);
            next_register = now + register_period;
        }
        if (now >= next_persist) {
            if (Status st = offsets_->persist(); !st.is_ok()) {
                spdlog::error("persist consumer offsets failed: {}", st.message());
            }
            next_persist = now + persist_period;
        }
        if (now >= next_stats) {
            sample_stats();
            next_stats = now + 1s;
        }
        fetch_master_ha_address();
        if (now >= next_scan) {
            consumers_->scan_not_active_channels();
            producers_->scan_not_active_channels();
            filters_->clean_expired();
            next_scan = now + scan_period;
        }
    }
}

void BrokerController::sample_stats() {
    const int64_t now_ms = clock_.wall_millis();
    const int64_t put = stats_.put_messages.load(std::memory_order_relaxed);
    const int64_t got = stats_.got_messages.load(std::memory_order_relaxed);
    // 4.9.8 BrokerStats#record at local midnight: today's morning becomes yesterday's.
    const std::time_t secs = static_cast<std::time_t>(now_ms / 1000);
    std::tm local{};
    localtime_r(&secs, &local);
    const int64_t day = int64_t{local.tm_year} * 400 + local.tm_yday;
    if (stats_day_ >= 0 && day != stats_day_) {
        stats_.put_yesterday_morning = stats_.put_today_morning.load();
        stats_.get_yesterday_morning = stats_.get_today_morning.load();
        stats_.put_today_morning = put;
        stats_.get_today_morning = got;
    }
    stats_day_ = day;

    const std::string cluster = config_.get().broker_cluster_name;
    stats_manager_.sample(now_ms, kBrokerPutNums, cluster, put, 0);
    stats_manager_.sample(now_ms, kBrokerGetNums, cluster, got, 0);
    stats_manager_.sample_added(now_ms);
    if (!metrics_) {
        return;
    }
    const BrokerMetrics::StatTotals t = metrics_->stat_totals();
    const auto feed = [&](std::string_view item, const auto& totals) {
        for (const auto& [key, vt] : totals) {
            stats_manager_.sample(now_ms, item, key, vt.first, vt.second);
        }
    };
    feed(kTopicPutNums, t.topic_put_nums);
    feed(kTopicPutSize, t.topic_put_size);
    feed(kGroupGetNums, t.group_get_nums);
    feed(kGroupGetSize, t.group_get_size);
}

void BrokerController::track_channel(const net::ConnectionPtr& conn) {
    MutexLock l(mu_);
    channels_.try_emplace(conn->id(), conn);
}

bool BrokerController::send_transaction_check(const std::string& group,
                                              protocol::RemotingCommand req) {
    std::vector<ClientChannelInfo> producers = producers_->channels(group);
    std::sort(producers.begin(), producers.end(),
              [](const ClientChannelInfo& a, const ClientChannelInfo& b) {
                  return a.last_update > b.last_update;
              });
    net::ConnectionPtr conn;
    {
        MutexLock l(mu_);
        for (const auto& p : producers) {
            auto it = channels_.find(p.channel.value());
            if (it != channels_.end()) {
                conn = it->second.lock();
                if (conn) {
                    break;
                }
            }
        }
    }
    if (!conn) {
        return false;
    }
    conn->invoke_oneway(std::move(req));
    return true;
}

void BrokerController::forget_channel(uint64_t id) {
    MutexLock l(mu_);
    channels_.erase(id);
}

void BrokerController::notify_consumer_ids_changed(const std::string& group,
                                                   const std::vector<ClientChannelInfo>& channels) {
    if (!config_.get().notify_consumer_ids_changed_enable) {
        return;
    }
    std::vector<net::ConnectionPtr> conns;
    {
        MutexLock l(mu_);
        for (const auto& c : channels) {
            auto it = channels_.find(c.channel.value());
            if (it != channels_.end()) {
                if (auto conn = it->second.lock()) {
                    conns.push_back(std::move(conn));
                }
            }
        }
    }
    for (const auto& conn : conns) {
        protocol::RemotingCommand req =
            protocol::RemotingCommand::request(Req::kNotifyConsumerIdsChanged);
        req.language = protocol::LanguageCode::kJava;
        req.flag |= protocol::kFlagOneway;
        protocol::NotifyConsumerIdsChangedRequestHeader h;
        h.consumer_group = group;
        h.to_ext(req);
        conn->invoke_oneway(std::move(req));
    }
}

void BrokerController::shutdown() {
    if (shut_down_) {
        return;
    }
    shut_down_ = true;
    if (metrics_endpoint_) {
        metrics_endpoint_->stop();  // its collectors read the components stopped below
    }
    {
        MutexLock l(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (scheduler_.joinable()) {
        scheduler_.join();
    }
    if (fast_failure_) {
        fast_failure_->shutdown();  // before the executors it answers for
    }
    if (replicas_manager_) {
        replicas_manager_->shutdown();  // no role change while the broker stops
    }
    if (acting_) {
        acting_->shutdown();  // before the client it calls through
    }
    if (transactions_) {
        transactions_->shutdown();  // before the store it waits on
    }
    if (started_) {
        unregister_broker_all();
    }
    if (holds_) {
        holds_->shutdown();
    }
    if (replication_) {
        // Before the server, whose I/O loops HA runs on (they must run until HA stopped), and
        // before the store: the slave's HaClient appends to it. Puts still waiting for slaves
        // complete with SERVICE_NOT_AVAILABLE and are answered while the server drains.
        replication_->shutdown();
    }
    if (server_) {
        server_->shutdown();
    }
    if (own_namesrv_client_) {
        own_namesrv_client_->shutdown();
    }
    if (dledger_) {
        dledger_->shutdown();  // before the store: a follower appends to it
    }
    if (schedule_) {
        schedule_->shutdown();
    }
    if (offsets_) {
        if (Status st = offsets_->persist(); !st.is_ok()) {
            spdlog::error("persist consumer offsets failed: {}", st.message());
        }
    }
    if (topics_) {
        if (Status st = topics_->persist(); !st.is_ok()) {
            spdlog::error("persist topics failed: {}", st.message());
        }
    }
    if (groups_) {
        if (Status st = groups_->persist(); !st.is_ok()) {
            spdlog::error("persist subscription groups failed: {}", st.message());
        }
    }
    if (store_) {
        store_->store().shutdown();
        store_->store().commit_log().flush_service().set_observer(nullptr);
    }
    spdlog::info("broker shut down cleanly");
}

}  // namespace comet::broker
