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

    COMET_ASSIGN_OR_RETURN(store::MessageStoreConfig store_cfg,
                           make_store_config(cfg, store_base_));
    store::MessageStoreOptions store_options;
    if (cfg.enable_dleger_commit_log) {
        COMET_RETURN_IF_ERROR(open_dledger_log(cfg, &store_options));
    } else {
        COMET_RETURN_IF_ERROR(retire_dledger_log(cfg));
    }
    if (cfg.enable_controller_mode) {
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
        store_options.dispatch_limit = [confirmed] { return store::PhysicalOffset(confirmed); };
    }
    auto store = store::MessageStore::open(store_cfg, clock_, store_options);
    if (!store.is_ok()) {
        return Status::error(store.status().code(), "open message store at {}: {}",
                             store_cfg.store_path_root_dir, store.status().message());
    }
    store_ = std::make_unique<StoreAdapter>(std::move(store).value());
    store_->store().commit_log().flush_service().set_observer(metrics_.get());
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
        spdlog::info("DURABILITY: {}", dur.contract);
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
    if (dledger_log_ != nullptr) {
        std::vector<std::string> warnings;
        COMET_ASSIGN_OR_RETURN(
            dledger::DLedgerConfig dcfg,
            dledger::parse_dledger_config(
                cfg.dleger_group.empty() ? cfg.broker_name : cfg.dleger_group, cfg.dleger_peers,
                cfg.dleger_self_id, cfg.preferred_leader_id, &warnings));
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
        // Until the group elects it, this peer is a follower: register as one.
        (void)config_.update(
            {{"brokerId", std::to_string(dledger_->config().self().follower_broker_id)},
             {"brokerRole", "SLAVE"}});
    }
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
    schedule_ = std::make_unique<ScheduleMessageService>(clock_, *store_, levels,
                                                         config_path("delayOffset.json"));
    COMET_RETURN_IF_ERROR(schedule_->load());
    TransactionalMessageService::Deps tx;
    tx.config = &config_;
    tx.clock = &clock_;
    tx.store = store_.get();
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
    register_processors();

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
    ctx_.extra_runtime_info = [this] { return acting_->runtime_info(); };
    escape_ = std::make_unique<EscapeBridge>(
        cfg.broker_name,
        EscapeBridge::remote_network(
            namesrv_client_, [this] { return config_.get().namesrv_list(); }, 3s));
    ctx_.escape = escape_.get();
    ctx_.is_acting_master = [this] { return acting_->is_acting_master(); };
    spdlog::info("broker {} ({}) initialized, store at {}", cfg.broker_name, cfg.broker_addr(),
                 store_root_);
    return Status::ok();
}

void BrokerController::register_processors() {
    const BrokerConfig cfg = config_.get();
    auto send_exec = std::make_shared<net::ThreadPoolExecutor>(
        "SendMessage", static_cast<size_t>(std::max(1, cfg.send_message_thread_pool_nums)), 10000);
    pull_executor_ = std::make_shared<net::ThreadPoolExecutor>(
        "PullMessage", static_cast<size_t>(std::max(1, cfg.pull_message_thread_pool_nums)), 100000);
    auto client_exec = std::make_shared<net::ThreadPoolExecutor>("ClientManage", 2, 50000);
    auto consumer_exec = std::make_shared<net::ThreadPoolExecutor>("ConsumerManage", 2, 50000);
    auto query_exec = std::make_shared<net::ThreadPoolExecutor>("QueryMessage", 2, 20000);
    auto admin_exec = std::make_shared<net::ThreadPoolExecutor>("AdminBroker", 1, 10000);
    std::weak_ptr<net::ThreadPoolExecutor> weak_pull = pull_executor_;
    ctx_.run_on_pull_executor = [weak_pull](std::function<void()> task) {
        if (auto exec = weak_pull.lock()) {
            // Rejected (full or stopping): the task is dropped; its Responder then answers
            // SYSTEM_ERROR, so the client never waits for nothing.
            (void)exec->execute(std::move(task));
        }
    };

    auto context_of = [](const net::ConnectionPtr& conn, const protocol::RemotingCommand& req) {
        RequestContext rc;
        rc.channel = ChannelId(conn->id());
        rc.remote_address = conn->remote_address();
        rc.language = req.language;
        rc.version = req.version;
        return rc;
    };
    auto reply_of = [](const net::Responder& responder) -> Reply {
        return [responder](protocol::RemotingCommand cmd, std::vector<net::SharedBuffer> extra) {
            responder(std::move(cmd), std::move(extra));
        };
    };
    auto wrap = [this, context_of, reply_of](auto* proc) {
        return net::make_processor([this, proc, context_of, reply_of](
                                       const net::ConnectionPtr& conn,
                                       protocol::RemotingCommand req, net::Responder responder) {
            track_channel(conn);
            const RequestContext rc = context_of(conn, req);
            proc->process(rc, std::move(req), reply_of(responder));
        });
    };
    auto send = wrap(send_.get());
    // Sends run to completion on the I/O thread that read them, no executor hop
    // (docs/decisions/019-run-to-completion.md). A send that needs a step that may block
    // (topic auto-creation, retry / DLQ topics) goes on to the SendMessage executor, and so
    // does every CONSUMER_SEND_MSG_BACK.
    auto send_inline = net::make_processor(
        [this, send, send_exec](const net::ConnectionPtr& conn, protocol::RemotingCommand req,
                                net::Responder responder) {
            track_channel(conn);
            // Answers through the Responder, with the response by reference (issue 16).
            SendReply reply = [responder](protocol::RemotingCommand& resp) {
                responder.answer(resp);
            };
            // One context per I/O thread, its address string reused (a peer's "ip:port" is
            // often longer than a string's inline buffer): try_send_inline reads it only before
            // it returns.
            thread_local RequestContext rc;
            rc.channel = ChannelId(conn->id());
            rc.remote_address.assign(conn->remote_address());
            rc.language = req.language;
            rc.version = req.version;
            if (send_->try_send_inline(rc, req, reply)) {
                return;
            }
            req.own_body();  // the executor runs it after the read buffer has moved on
            const bool queued =
                send_exec->execute([send, conn, req = std::move(req), responder]() mutable {
                    try {
                        send->process(conn, std::move(req), responder);
                    } catch (const std::exception& e) {
                        spdlog::error("broker: send from {} threw: {}", conn->remote_address(),
                                      e.what());
                        if (!responder.answered()) {
                            responder.respond(net::kSystemError, e.what());
                        }
                    }
                });
            if (!queued) {
                responder.respond(net::kSystemBusy,
                                  "[OVERLOAD]system busy, start flow control for a while");
            }
        });
    // send_inline reads a send's body where the connection read it (issue 16).
    for (int32_t code : {Req::kSendMessage, Req::kSendMessageV2, Req::kSendBatchMessage}) {
        server_->register_inline_processor(code, send_inline, /*borrows_body=*/true);
    }
    server_->register_processor(Req::kConsumerSendMsgBack, send, send_exec);
    // Java runs END_TRANSACTION on its own endTransactionExecutor; here it shares the
    // SendMessage executor (it waits for the store).
    server_->register_processor(Req::kEndTransaction, wrap(end_transaction_.get()), send_exec);
    auto reply_proc = wrap(reply_.get());
    for (int32_t code : {Req::kSendReplyMessage, Req::kSendReplyMessageV2}) {
        server_->register_processor(code, reply_proc, send_exec);
    }
    server_->register_processor(Req::kPullMessage, wrap(pull_.get()), pull_executor_);
    // LITE_PULL_MESSAGE (361): RocketMQ 4.9.8 answers it exactly as PULL_MESSAGE.
    server_->register_processor(Req::kLitePullMessage, wrap(pull_.get()), pull_executor_);
    auto client = wrap(client_.get());
    for (int32_t code : {Req::kHeartBeat, Req::kUnregisterClient, Req::kCheckClientConfig}) {
        server_->register_processor(code, client, client_exec);
    }
    auto consumer = wrap(consumer_.get());
    for (int32_t code :
         {Req::kGetConsumerListByGroup, Req::kQueryConsumerOffset, Req::kUpdateConsumerOffset}) {
        server_->register_processor(code, consumer, consumer_exec);
    }
    auto query = wrap(query_.get());
    for (int32_t code : {Req::kQueryMessage, Req::kViewMessageById}) {
        server_->register_processor(code, query, query_exec);
    }
    auto admin = wrap(admin_.get());
    for (int32_t code : {Req::kGetMaxOffset,
                         Req::kGetMinOffset,
                         Req::kSearchOffsetByTimestamp,
                         Req::kGetEarliestMsgStoretime,
                         Req::kLockBatchMq,
                         Req::kUnlockBatchMq,
                         Req::kUpdateAndCreateTopic,
                         Req::kDeleteTopicInBroker,
                         Req::kGetAllTopicConfig,
                         Req::kUpdateAndCreateSubscriptionGroup,
                         Req::kDeleteSubscriptionGroup,
                         Req::kGetAllSubscriptionGroupConfig,
                         Req::kGetAllConsumerOffset,
                         Req::kGetAllDelayOffset,
                         Req::kGetBrokerRuntimeInfo,
                         Req::kGetTopicStatsInfo,
                         Req::kGetConsumeStats,
                         Req::kGetBrokerConfig,
                         Req::kUpdateBrokerConfig,
                         Req::kViewBrokerStatsData,
                         Req::kCleanUnusedTopic,
                         Req::kCleanExpiredConsumequeue,
                         Req::kQueryConsumeQueue}) {
        server_->register_processor(code, admin, admin_exec);
    }
    auto client_admin = wrap(client_admin_.get());
    for (int32_t code : ClientAdminProcessor::handled_codes()) {
        server_->register_processor(code, client_admin, admin_exec);
    }
    // Controller mode: the controller's role-change notice, the epoch cache, and a slave asking
    // this master for its HA address.
    auto not_controller_mode = [](const protocol::RemotingCommand& req) {
        return protocol::RemotingCommand::response_to(
            req, RC::kRequestCodeNotSupported,
            "this broker does not run in controller mode (enableControllerMode=false)");
    };
    server_->register_inline_processor(
        Req::kNotifyBrokerRoleChanged,
        net::make_processor([this, not_controller_mode](const net::ConnectionPtr&,
                                                        protocol::RemotingCommand req,
                                                        net::Responder responder) {
            if (replicas_manager_ == nullptr) {
                responder(not_controller_mode(req));
                return;
            }
            auto h = protocol::NotifyBrokerRoleChangedRequestHeader::from_ext(req);
            auto body = protocol::SyncStateSet::decode(req.body);
            if (!h.is_ok() || !body.is_ok() || !h->master_epoch) {
                responder(protocol::RemotingCommand::response_to(
                    req, RC::kSystemError,
                    "NOTIFY_BROKER_ROLE_CHANGED needs masterEpoch and a SyncStateSet body"));
                return;
            }
            replicas_manager_->notify_role_changed(
                h->master_broker_id.value_or(-1), h->master_address.value_or(""), *h->master_epoch,
                body->sync_state_set, h->sync_state_set_epoch.value_or(body->sync_state_set_epoch));
            responder(protocol::RemotingCommand::response_to(req, RC::kSuccess));
        }));
    // GET_BROKER_EPOCH_CACHE (1007): RocketMQ 5's EpochEntryCache body. Each entry ends where
    // the next starts; the last one at the CommitLog's end.
    server_->register_inline_processor(
        Req::kGetBrokerEpochCache,
        net::make_processor([this, not_controller_mode](const net::ConnectionPtr&,
                                                        protocol::RemotingCommand req,
                                                        net::Responder responder) {
            if (controller_store_ == nullptr) {
                responder(not_controller_mode(req));
                return;
            }
            const BrokerConfig now_cfg = config_.get();
            const std::vector<store::EpochEntry> epochs = controller_store_->epochs();
            const int64_t max = controller_store_->max_offset();
            protocol::JsonWriter w;
            w.begin_object()
                .member("brokerId", now_cfg.broker_id)
                .member("brokerName", now_cfg.broker_name)
                .member("clusterName", now_cfg.broker_cluster_name)
                .key("epochList")
                .begin_array();
            for (size_t i = 0; i < epochs.size(); ++i) {
                const int64_t end = i + 1 < epochs.size() ? epochs[i + 1].start_offset : max;
                w.begin_object()
                    .member("endOffset", end)
                    .member("epoch", static_cast<int32_t>(epochs[i].epoch))
                    .member("startOffset", epochs[i].start_offset)
                    .end_object();
            }
            w.end_array().member("maxOffset", max).end_object();
            protocol::RemotingCommand resp =
                protocol::RemotingCommand::response_to(req, RC::kSuccess);
            resp.body = w.take();
            responder(std::move(resp));
        }));
    server_->register_inline_processor(
        Req::kExchangeBrokerHaInfo,
        net::make_processor([this](const net::ConnectionPtr&, protocol::RemotingCommand req,
                                   net::Responder responder) {
            protocol::RemotingCommand resp =
                protocol::RemotingCommand::response_to(req, RC::kSuccess);
            protocol::ExchangeHaInfoHeader h;
            if (replication_ != nullptr && !replication_->is_slave() &&
                replication_->ha_port() != 0) {
                h.master_ha_address = ha_server_addr();
                h.master_address = config_.get().broker_addr();
                h.master_flush_offset = store_->store().get_max_phy_offset().value();
            }
            h.to_ext(resp);
            responder(std::move(resp));
        }));
    server_->register_processor(
        Req::kNotifyMinBrokerIdChange,
        net::make_processor([this](const net::ConnectionPtr&, protocol::RemotingCommand req,
                                   net::Responder responder) {
            protocol::RemotingCommand resp = acting_->handle_notify(req);
            if (!responder.is_oneway()) {
                responder(std::move(resp));
            }
        }),
        admin_exec);
    // DLedger's LEADERSHIP_TRANSFER (51005), on the broker port: ext transferId = the peer id
    // to hand leadership to. Answered once the transfer started (docs/dledger.md, "mqadmin").
    server_->register_processor(
        Req::kDledgerLeadershipTransfer,
        net::make_processor([this](const net::ConnectionPtr&, protocol::RemotingCommand req,
                                   net::Responder responder) {
            if (dledger_ == nullptr) {
                responder.respond(RC::kSystemError,
                                  "LEADERSHIP_TRANSFER: this broker is not in DLedger mode "
                                  "(enableDLegerCommitLog=false)");
                return;
            }
            auto it = req.ext_fields.find("transferId");
            if (it == req.ext_fields.end() || it->second.empty()) {
                responder.respond(RC::kSystemError,
                                  "LEADERSHIP_TRANSFER: the transferId field is missing");
                return;
            }
            Status st = dledger_->transfer_leadership(it->second);
            if (!st.is_ok()) {
                responder.respond(RC::kSystemError, "LEADERSHIP_TRANSFER: " + st.message());
                return;
            }
            responder.respond(RC::kSuccess);
        }),
        admin_exec);
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
