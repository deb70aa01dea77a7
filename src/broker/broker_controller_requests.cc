// BrokerController's request table: which processor answers each request code, and where it
// runs (inline on the I/O thread that read it, or on one of the broker's executors), plus the
// few requests BrokerController answers itself (controller mode, DLedger leadership transfer,
// the min-broker-id notice). Read by a person as one table (request_table); filled once in
// initialize(), before the server starts, and read-only afterwards.

#include <spdlog/spdlog.h>

#include "broker/broker_controller.h"
#include "protocol/ha_bodies.h"
#include "protocol/ha_headers.h"
#include "protocol/json_body.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::broker {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;

// One row: the codes one processor answers, and where it runs.
struct BrokerController::RequestRoute {
    std::vector<int32_t> codes;
    std::shared_ptr<net::RequestProcessor> processor;
    // Null: inline on the I/O thread that read the request (it must not block).
    std::shared_ptr<net::ThreadPoolExecutor> executor;
    // Inline only: the processor reads a send's body where the connection read it.
    bool borrows_body = false;
};

// The executors of the slow requests; sends and the controller-mode notices run inline.
struct BrokerController::Executors {
    std::shared_ptr<net::ThreadPoolExecutor> send;
    std::shared_ptr<net::ThreadPoolExecutor> pull;
    std::shared_ptr<net::ThreadPoolExecutor> client;
    std::shared_ptr<net::ThreadPoolExecutor> consumer;
    std::shared_ptr<net::ThreadPoolExecutor> query;
    std::shared_ptr<net::ThreadPoolExecutor> admin;
    std::shared_ptr<net::ThreadPoolExecutor> end_transaction;
};

namespace {

RequestContext request_context_of(const net::ConnectionPtr& conn,
                                  const protocol::RemotingCommand& req) {
    RequestContext rc;
    rc.channel = ChannelId(conn->id());
    rc.remote_address = conn->remote_address();
    rc.language = req.language;
    rc.version = req.version;
    return rc;
}

Reply reply_through(const net::Responder& responder) {
    return [responder](protocol::RemotingCommand cmd, std::vector<net::SharedBuffer> extra) {
        responder(std::move(cmd), std::move(extra));
    };
}

protocol::RemotingCommand not_in_controller_mode(const protocol::RemotingCommand& req) {
    return protocol::RemotingCommand::response_to(
        req, RC::kRequestCodeNotSupported,
        "this broker does not run in controller mode (enableControllerMode=false)");
}

}  // namespace

void BrokerController::register_processors() {
    const Executors ex = create_executors();
    for (const RequestRoute& route : request_table(ex)) {
        for (int32_t code : route.codes) {
            if (route.executor == nullptr) {
                server_->register_inline_processor(code, route.processor, route.borrows_body);
            } else {
                server_->register_processor(code, route.processor, route.executor);
            }
        }
    }
}

std::vector<BrokerController::RequestRoute> BrokerController::request_table(const Executors& ex) {
    const std::shared_ptr<net::ThreadPoolExecutor> kInline;
    auto send = wrap(send_.get());
    return {
        // Sends run to completion on the I/O thread that read them, no executor hop
        // (docs/decisions/019-run-to-completion.md), reading the body where the connection
        // read it.
        {{Req::kSendMessage, Req::kSendMessageV2, Req::kSendBatchMessage},
         send_inline_processor(send, ex.send),
         kInline,
         /*borrows_body=*/true},
        {{Req::kConsumerSendMsgBack}, send, ex.send},
        // Its own executor, as Java's endTransactionExecutor (waitTimeMillsInTransactionQueue).
        {{Req::kEndTransaction}, wrap(end_transaction_.get()), ex.end_transaction},
        {{Req::kSendReplyMessage, Req::kSendReplyMessageV2}, wrap(reply_.get()), ex.send},
        // LITE_PULL_MESSAGE (361): RocketMQ 4.9.8 answers it exactly as PULL_MESSAGE.
        {{Req::kPullMessage, Req::kLitePullMessage}, wrap(pull_.get()), ex.pull},
        {{Req::kHeartBeat, Req::kUnregisterClient, Req::kCheckClientConfig},
         wrap(client_.get()),
         ex.client},
        {ConsumerManageProcessor::handled_codes(), wrap(consumer_.get()), ex.consumer},
        {{Req::kQueryMessage, Req::kViewMessageById}, wrap(query_.get()), ex.query},
        {AdminBrokerProcessor::handled_codes(), wrap(admin_.get()), ex.admin},
        {ClientAdminProcessor::handled_codes(), wrap(client_admin_.get()), ex.admin},
        // Controller mode: the controller's role-change notice, the epoch cache, and a slave
        // asking this master for its HA address.
        {{Req::kNotifyBrokerRoleChanged},
         handler(&BrokerController::handle_notify_broker_role_changed),
         kInline},
        {{Req::kGetBrokerEpochCache}, handler(&BrokerController::handle_get_broker_epoch_cache),
         kInline},
        {{Req::kExchangeBrokerHaInfo}, handler(&BrokerController::handle_exchange_ha_info),
         kInline},
        {{Req::kNotifyMinBrokerIdChange},
         handler(&BrokerController::handle_notify_min_broker_id_change),
         ex.admin},
        {{Req::kDledgerLeadershipTransfer}, handler(&BrokerController::handle_leadership_transfer),
         ex.admin},
    };
}

BrokerController::Executors BrokerController::create_executors() {
    const BrokerConfig cfg = config_.get();
    Executors ex;
    auto pool = [](const char* name, int32_t threads, int32_t capacity) {
        return std::make_shared<net::ThreadPoolExecutor>(
            name, static_cast<size_t>(std::max(1, threads)),
            static_cast<size_t>(std::max(1, capacity)));
    };
    ex.send =
        pool("SendMessage", cfg.send_message_thread_pool_nums, cfg.send_thread_pool_queue_capacity);
    pull_executor_ =
        pool("PullMessage", cfg.pull_message_thread_pool_nums, cfg.pull_thread_pool_queue_capacity);
    ex.pull = pull_executor_;
    // Java's heartbeat executor (HEART_BEAT; here also UNREGISTER_CLIENT, CHECK_CLIENT_CONFIG).
    ex.client = pool("ClientManage", 2, cfg.heartbeat_thread_pool_queue_capacity);
    ex.consumer = pool("ConsumerManage", 2, cfg.consumer_manager_thread_pool_queue_capacity);
    ex.query = pool("QueryMessage", 2, cfg.query_thread_pool_queue_capacity);
    ex.admin = pool("AdminBroker", 1, 10000);
    ex.end_transaction = pool("EndTransaction", cfg.end_transaction_thread_pool_nums,
                              cfg.end_transaction_pool_queue_capacity);
    fast_failure_ = std::make_unique<BrokerFastFailure>(
        BrokerFastFailure::Queues{ex.send, ex.pull, ex.client, ex.end_transaction, ex.query},
        &config_, [this] { return store_->store().is_os_page_cache_busy(); });
    std::weak_ptr<net::ThreadPoolExecutor> weak_pull = pull_executor_;
    ctx_.run_on_pull_executor = [weak_pull](std::function<void()> task) {
        if (auto exec = weak_pull.lock()) {
            // Rejected (full or stopping): the task is dropped; its Responder then answers
            // SYSTEM_ERROR, so the client never waits for nothing.
            (void)exec->execute(std::move(task));
        }
    };
    return ex;
}

template <class Processor>
std::shared_ptr<net::RequestProcessor> BrokerController::wrap(Processor* proc) {
    return net::make_processor([this, proc](const net::ConnectionPtr& conn,
                                            protocol::RemotingCommand req,
                                            net::Responder responder) {
        track_channel(conn);
        const RequestContext rc = request_context_of(conn, req);
        proc->process(rc, std::move(req), reply_through(responder));
    });
}

std::shared_ptr<net::RequestProcessor> BrokerController::handler(
    void (BrokerController::*fn)(protocol::RemotingCommand, net::Responder)) {
    return net::make_processor(
        [this, fn](const net::ConnectionPtr&, protocol::RemotingCommand req,
                   net::Responder responder) { (this->*fn)(std::move(req), std::move(responder)); });
}

// A send that needs a step that may block (topic auto-creation, retry / DLQ topics) goes on to
// the SendMessage executor, and so does every CONSUMER_SEND_MSG_BACK.
std::shared_ptr<net::RequestProcessor> BrokerController::send_inline_processor(
    std::shared_ptr<net::RequestProcessor> send, std::shared_ptr<net::ThreadPoolExecutor> send_exec) {
    return net::make_processor([this, send, send_exec](const net::ConnectionPtr& conn,
                                                       protocol::RemotingCommand req,
                                                       net::Responder responder) {
        track_channel(conn);
        // Java SendMessageProcessor#rejectRequest: refused before any work while the page
        // cache is busy (one relaxed load when it is not).
        if (store_->store().is_os_page_cache_busy()) {
            responder.respond(net::kSystemBusy,
                              "[REJECTREQUEST]system busy, start flow control for a while");
            return;
        }
        // Answers through the Responder, with the response by reference (issue 16).
        SendReply reply = [responder](protocol::RemotingCommand& resp) { responder.answer(resp); };
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
        // Queued as any executor request: BrokerFastFailure may answer it instead.
        const bool queued = send_exec->execute(
            net::QueuedRequest{send, conn, std::move(req), responder}, &net::QueuedRequest::reject);
        if (!queued) {
            responder.respond(net::kSystemBusy,
                              "[OVERLOAD]system busy, start flow control for a while");
        }
    });
}

void BrokerController::handle_notify_broker_role_changed(protocol::RemotingCommand req,
                                                         net::Responder responder) {
    if (replicas_manager_ == nullptr) {
        responder(not_in_controller_mode(req));
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
}

// GET_BROKER_EPOCH_CACHE (1007): RocketMQ 5's EpochEntryCache body. Each entry ends where the
// next starts; the last one at the CommitLog's end.
void BrokerController::handle_get_broker_epoch_cache(protocol::RemotingCommand req,
                                                     net::Responder responder) {
    if (controller_store_ == nullptr) {
        responder(not_in_controller_mode(req));
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
    protocol::RemotingCommand resp = protocol::RemotingCommand::response_to(req, RC::kSuccess);
    resp.body = w.take();
    responder(std::move(resp));
}

void BrokerController::handle_exchange_ha_info(protocol::RemotingCommand req,
                                               net::Responder responder) {
    protocol::RemotingCommand resp = protocol::RemotingCommand::response_to(req, RC::kSuccess);
    protocol::ExchangeHaInfoHeader h;
    if (replication_ != nullptr && !replication_->is_slave() && replication_->ha_port() != 0) {
        h.master_ha_address = ha_server_addr();
        h.master_address = config_.get().broker_addr();
        h.master_flush_offset = store_->store().get_max_phy_offset().value();
    }
    h.to_ext(resp);
    responder(std::move(resp));
}

void BrokerController::handle_notify_min_broker_id_change(protocol::RemotingCommand req,
                                                          net::Responder responder) {
    protocol::RemotingCommand resp = acting_->handle_notify(req);
    if (!responder.is_oneway()) {
        responder(std::move(resp));
    }
}

// DLedger's LEADERSHIP_TRANSFER (51005), on the broker port: ext transferId = the peer id to
// hand leadership to. Answered once the transfer started (docs/dledger.md, "mqadmin").
void BrokerController::handle_leadership_transfer(protocol::RemotingCommand req,
                                                  net::Responder responder) {
    if (dledger_ == nullptr) {
        responder.respond(RC::kSystemError,
                          "LEADERSHIP_TRANSFER: this broker is not in DLedger mode "
                          "(enableDLegerCommitLog=false)");
        return;
    }
    auto it = req.ext_fields.find("transferId");
    if (it == req.ext_fields.end() || it->second.empty()) {
        responder.respond(RC::kSystemError, "LEADERSHIP_TRANSFER: the transferId field is missing");
        return;
    }
    Status st = dledger_->transfer_leadership(it->second);
    if (!st.is_ok()) {
        responder.respond(RC::kSystemError, "LEADERSHIP_TRANSFER: " + st.message());
        return;
    }
    responder.respond(RC::kSuccess);
}

}  // namespace comet::broker
