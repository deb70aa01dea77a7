#include "controller_server/controller_server.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>

#include "controller/controller_codes.h"
#include "controller/lease_grant.h"
#include "protocol/ha_bodies.h"
#include "protocol/ha_headers.h"
#include "protocol/json_body.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"
#include "raft/message_codec.h"

namespace comet::controller {
namespace {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using protocol::RemotingCommand;
using SteadyClock = std::chrono::steady_clock;

constexpr int kTickMs = 10;
// How long past the lease's own bound a designated election waits before it is answered anyway.
constexpr std::chrono::milliseconds kHeldElectionSlack{500};
constexpr const char* kNotLeaderRemark = "The controller is not in leader state";

RemotingCommand error_response(const RemotingCommand& req, int32_t code, std::string remark) {
    return RemotingCommand::response_to(req, code, std::move(remark));
}

// A request whose header or body does not decode.
void reject_invalid(const RemotingCommand& req, const net::Responder& respond, const Status& st) {
    respond(error_response(req, RC::kControllerInvalidRequest, st.message()));
}

// The broker names of a GET_SYNC_STATE_DATA body: a JSON array of strings.
Result<std::vector<std::string>> decode_name_list(std::string_view body) {
    COMET_ASSIGN_OR_RETURN(auto doc, protocol::parse_json_body(body));
    if (!doc.IsArray()) {
        return Status::error(Errc::kInvalidArgument,
                             "the body is not a JSON array of broker names");
    }
    std::vector<std::string> names;
    for (const auto& v : doc.GetArray()) {
        if (!v.IsString()) {
            return Status::error(Errc::kInvalidArgument,
                                 "the body is not a JSON array of broker names");
        }
        names.emplace_back(v.GetString(), v.GetStringLength());
    }
    return names;
}

// The liveness of `live` as if every master lease had run out: what an election would decide
// once the old master's lease is over.
class LeaseRunOut final : public BrokerLiveness {
public:
    explicit LeaseRunOut(const BrokerLiveness& live) : live_(live) {}
    bool is_alive(const std::string& cluster, const std::string& broker_name,
                  BrokerId id) const override {
        return live_.is_alive(cluster, broker_name, id);
    }
    const BrokerLiveInfo* live_info(const std::string& cluster, const std::string& broker_name,
                                    BrokerId id) const override {
        return live_.live_info(cluster, broker_name, id);
    }
    bool lease_expired(const std::string&, const std::string&, BrokerId) const override {
        return true;
    }

private:
    const BrokerLiveness& live_;
};

}  // namespace

ControllerServer::ControllerServer(ControllerConfig config, ControllerPeers peers,
                                   ConfigRegistry* registry, Clock& clock)
    : config_(std::move(config)),
      peers_(std::move(peers)),
      registry_(registry),
      clock_(clock),
      rng_(std::random_device{}() ^ (static_cast<uint64_t>(peers_.self->node.value()) << 32)),
      state_(
          ReplicasInfoConfig{.enable_elect_unclean_master = config_.enable_elect_unclean_master}),
      heartbeats_(MasterLeaseConfig{.lease = Millis(config_.master_lease_ms),
                                    .clock_drift_margin = Millis(config_.master_lease_drift_ms),
                                    .leader_overlap = Millis(config_.election_timeout_max_ms)}) {}

ControllerServer::~ControllerServer() { shutdown(); }

// The request codes this member serves (registered in start(), dispatched by handle()).
const ControllerServer::AnyMemberRoute ControllerServer::kAnyMemberRoutes[] = {
    {Req::kControllerGetMetadataInfo, &ControllerServer::handle_metadata},
    {Req::kBrokerHeartbeat, &ControllerServer::handle_heartbeat},
    {Req::kGetControllerConfig, &ControllerServer::handle_get_config},
    {Req::kUpdateControllerConfig, &ControllerServer::handle_update_config},
};

const ControllerServer::LeaderRoute ControllerServer::kLeaderRoutes[] = {
    {Req::kControllerGetNextBrokerId, &ControllerServer::handle_get_next_broker_id},
    {Req::kControllerApplyBrokerId, &ControllerServer::handle_apply_broker_id},
    {Req::kControllerRegisterBroker, &ControllerServer::handle_register_broker},
    {Req::kControllerElectMaster, &ControllerServer::handle_elect_master},
    {Req::kControllerAlterSyncStateSet, &ControllerServer::handle_alter_sync_state_set},
    {Req::kControllerGetReplicaInfo, &ControllerServer::handle_get_replica_info},
    {Req::kControllerGetSyncStateData, &ControllerServer::handle_get_sync_state_data},
    {Req::kCleanBrokerData, &ControllerServer::handle_clean_broker_data},
};

Status ControllerServer::start() {
    COMET_RETURN_IF_ERROR(open_raft());
    const net::RemotingServerConfig sc = server_config();
    server_ = std::make_unique<net::RemotingServer>(sc);
    const metrics::MetricsConfig mc = metrics_config();
    COMET_RETURN_IF_ERROR(mc.validate());
    create_metrics();
    register_processors();
    COMET_RETURN_IF_ERROR(server_->start());
    COMET_RETURN_IF_ERROR(start_metrics_endpoint(mc, sc.listen_host));
    start_client();
    started_ = true;
    publish();
    driver_ = std::thread([this] { run(); });
    spdlog::info(
        "controller {} of group {} listening on {}:{} ({} peers, log last index {}, "
        "term {}, commit {})",
        config_.self_id, config_.group, sc.listen_host, server_->port(), peers_.peers.size(),
        storage_->last_index(), storage_->hard_state().term, storage_->hard_state().commit);
    return Status::ok();
}

// Opens (recovers) the log, restores the state machine from its snapshot and opens the node.
Status ControllerServer::open_raft() {
    COMET_ASSIGN_OR_RETURN(storage_, ControllerLogStorage::open(config_.store_path + "/raft"));
    raft::RaftConfig rc;
    rc.id = peers_.self->node;
    for (const raft::PeerAddr& p : peers_.peers) {
        rc.voters.push_back(p.node);
    }
    rc.tick_interval_ms = kTickMs;
    rc.election_timeout_min_ms = config_.election_timeout_min_ms;
    rc.election_timeout_max_ms = config_.election_timeout_max_ms;
    rc.heartbeat_interval_ms = config_.heartbeat_interval_ms;
    // The state machine restarts from the snapshot (if any) and replays the log after it.
    if (storage_->snapshot().index.value() > 0) {
        COMET_RETURN_IF_ERROR(restore_snapshot(storage_->snapshot()));
    }
    rc.applied = raft::LogIndex(applied_);
    rc.lost_durable_entries = storage_->lost_committed_entries();
    COMET_ASSIGN_OR_RETURN(node_, raft::RaftNode::open(rc, storage_.get(), &rng_));
    last_role_ = node_->role();
    last_term_ = node_->term();
    return Status::ok();
}

net::RemotingServerConfig ControllerServer::server_config() const {
    net::RemotingServerConfig sc;
    sc.name = "ControllerServer";
    sc.listen_host = config_.listen_host.empty() ? peers_.self->host : config_.listen_host;
    sc.listen_port = peers_.self->port;
    sc.io_threads = 1;
    return sc;
}

metrics::MetricsConfig ControllerServer::metrics_config() const {
    metrics::MetricsConfig mc;
    mc.metrics_port = config_.metrics_port;
    mc.exporter_type = config_.metrics_exporter_type;
    mc.prom_exporter_port = config_.metrics_prom_exporter_port;
    mc.prom_exporter_host = config_.metrics_prom_exporter_host;
    return mc;
}

// The registry with the controller's gauges, and the RPC metrics the server reports to.
void ControllerServer::create_metrics() {
    metrics_ = std::make_unique<metrics::Registry>(metrics::Labels{
        {"cluster", config_.group}, {"node_type", "controller"}, {"node_id", config_.self_id}});
    rpc_metrics_ = std::make_unique<metrics::RpcMetrics>(metrics_.get());
    metrics_->add_collector([this](std::vector<metrics::FamilySnapshot>* out) {
        const Info i = info();
        auto gauge = [out](std::string name, std::string help, double v) {
            out->push_back(metrics::FamilySnapshot{std::move(name),
                                                   std::move(help),
                                                   metrics::Type::kGauge,
                                                   {metrics::Sample{"", {}, v}}});
        };
        out->push_back(metrics::FamilySnapshot{
            "comet_controller_role",
            "1 for the controller's current Raft role.",
            metrics::Type::kGauge,
            {metrics::Sample{"", {{"role", std::string(raft::role_name(i.role))}}, 1}}});
        gauge("comet_controller_term", "Current Raft term of the controller group.",
              static_cast<double>(i.term.value()));
        gauge("comet_controller_ready", "1 on the leader once it serves requests.",
              i.ready ? 1 : 0);
        gauge("comet_controller_commit_index", "Raft commit index.",
              static_cast<double>(i.commit_index));
        gauge("comet_controller_applied_index", "Raft index applied to the state machine.",
              static_cast<double>(i.applied_index));
        gauge("comet_controller_broker_sets", "Broker groups (brokerName) the controller knows.",
              static_cast<double>(i.broker_sets));
        gauge("comet_controller_live_brokers", "Brokers whose heartbeats are current.",
              static_cast<double>(i.live_brokers));
    });
}

// Raft messages go straight to the inbox; every request code of the route tables is queued for
// the driver thread (or refused when the queue is full).
void ControllerServer::register_processors() {
    server_->set_rpc_observer(rpc_metrics_.get());
    server_->register_inline_processor(
        kControllerRaftMessageCode,
        net::make_processor([this](const net::ConnectionPtr&, RemotingCommand req, net::Responder) {
            on_raft_message(std::move(req.body));
        }));
    const auto request = net::make_processor(
        [this](const net::ConnectionPtr&, RemotingCommand req, net::Responder respond) {
            {
                MutexLock l(mu_);
                if (tasks_.size() >= static_cast<size_t>(config_.request_queue_capacity)) {
                    respond(error_response(req, RC::kSystemBusy,
                                           "[REJECTREQUEST]system busy, the controller's "
                                           "request queue is full"));
                    return;
                }
            }
            auto shared = std::make_shared<RemotingCommand>(std::move(req));
            post([this, shared, respond] { handle(std::move(*shared), respond); });
        });
    for (const AnyMemberRoute& r : kAnyMemberRoutes) {
        server_->register_inline_processor(r.code, request);
    }
    for (const LeaderRoute& r : kLeaderRoutes) {
        server_->register_inline_processor(r.code, request);
    }
}

// Starts /metrics when configured; on failure the already started server is shut down.
Status ControllerServer::start_metrics_endpoint(const metrics::MetricsConfig& mc,
                                                const std::string& host) {
    if (const auto where = mc.listen(host)) {
        metrics_endpoint_ = std::make_unique<metrics::MetricsEndpoint>(metrics_.get(), *where);
        if (Status st = metrics_endpoint_->start(); !st.is_ok()) {
            server_->shutdown();
            return Status(st.code(), "metrics endpoint (metricsPort): " + st.message());
        }
        spdlog::info("controller metrics on http://{}:{}/metrics", where->host,
                     metrics_endpoint_->port());
    }
    return Status::ok();
}

// The client for Raft messages and notifications, with one back-off link per peer.
void ControllerServer::start_client() {
    net::RemotingClientConfig cc;
    cc.name = "ControllerClient";
    cc.connect_timeout = std::chrono::milliseconds(500);
    client_ = std::make_unique<net::RemotingClient>(cc);
    client_->start();
    for (const raft::PeerAddr& p : peers_.peers) {
        (void)links_[p.node.value()];
    }
}

void ControllerServer::shutdown() {
    if (!started_ || stopped_) {
        return;
    }
    stopped_ = true;
    if (metrics_endpoint_) {
        metrics_endpoint_->stop();
    }
    {
        MutexLock l(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (driver_.joinable()) {
        driver_.join();
    }
    server_->shutdown();
    client_->shutdown();
    // Requests that were queued behind the stop: nobody will handle them.
    std::vector<std::function<void()>> rest;
    {
        MutexLock l(mu_);
        rest.swap(tasks_);
    }
    fail_pending("the controller is shutting down");
    release_held_elections();
    (void)storage_->sync();
}

uint16_t ControllerServer::port() const { return server_->port(); }

uint16_t ControllerServer::metrics_port() const {
    return metrics_endpoint_ != nullptr ? metrics_endpoint_->port() : 0;
}

ControllerServer::Info ControllerServer::info() const {
    MutexLock l(mu_);
    return info_;
}

void ControllerServer::post(std::function<void()> task) {
    {
        MutexLock l(mu_);
        if (stop_) {
            return;  // the task's Responder answers "request dropped" when destroyed
        }
        tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
}

void ControllerServer::on_raft_message(std::string body) {
    auto owner = std::make_shared<const std::string>(std::move(body));
    int64_t tag = 0;
    auto m = raft::decode_message(owner, &tag);
    if (!m.is_ok()) {
        spdlog::warn("controller {}: dropped a malformed Raft message: {}", config_.self_id,
                     m.status().message());
        return;
    }
    {
        MutexLock l(mu_);
        inbox_.push_back(std::move(m).value());
    }
    cv_.notify_one();
}

void ControllerServer::send(const raft::Message& m) {
    const raft::PeerAddr* p = nullptr;
    for (const raft::PeerAddr& peer : peers_.peers) {
        if (peer.node == m.to) {
            p = &peer;
        }
    }
    auto it = links_.find(m.to.value());
    if (p == nullptr || it == links_.end()) {
        return;
    }
    // A peer that is down gets nothing until its back-off passes (net::PeerBackoff).
    net::PeerBackoff& link = it->second;
    if (!link.may_send(SteadyClock::now())) {
        return;
    }
    RemotingCommand req = RemotingCommand::request(kControllerRaftMessageCode);
    raft::encode_message(m, 0, &req.body);
    client_->invoke_oneway_async(p->addr(), std::move(req), [&link](Status st) {
        link.on_write(st.is_ok(), SteadyClock::now());
    });
}

void ControllerServer::run() {
    pthread_setname_np(pthread_self(), "CtrlDriver");
    const auto tick = std::chrono::milliseconds(kTickMs);
    auto next_tick = SteadyClock::now() + tick;
    while (true) {
        std::vector<raft::Message> in;
        std::vector<std::function<void()>> tasks;
        {
            MutexLock l(mu_);
            cv_.wait_until(mu_, next_tick, [&]() REQUIRES(mu_) {
                return stop_ || !inbox_.empty() || !tasks_.empty();
            });
            if (stop_) {
                break;
            }
            in.swap(inbox_);
            tasks.swap(tasks_);
        }
        for (const raft::Message& m : in) {
            // A message from a peer ends its back-off: it is up again.
            if (auto it = links_.find(m.from.value()); it != links_.end()) {
                it->second.reset();
            }
            if (Status st = node_->step(m); !st.is_ok()) {
                spdlog::debug("controller {}: {} from {}: {}", config_.self_id,
                              raft::message_type_name(m.type), m.from, st.message());
            }
        }
        const auto now = SteadyClock::now();
        const bool ticked = now >= next_tick;
        if (ticked) {
            (void)node_->tick();
            next_tick += tick;
            if (next_tick < now) {
                next_tick = now + tick;
            }
        }
        drain_ready();
        if (node_->role() != last_role_ || node_->term() != last_term_) {
            on_role_change();
        }
        for (auto& t : tasks) {
            t();
        }
        drain_ready();
        if (ticked) {
            if (serving()) {
                retry_held_elections(clock_.now());
                scan(clock_.now());
            }
            publish();
        }
    }
}

void ControllerServer::drain_ready() {
    for (int round = 0; round < 64 && node_->has_ready(); ++round) {
        raft::Ready rd = node_->take_ready();
        if (rd.persist.has_value()) {
            // Controller writes are rare and small: sync on the driver thread.
            if (Status st = storage_->sync(); !st.is_ok()) {
                spdlog::error("controller {}: cannot make the log durable: {} (acks held)",
                              config_.self_id, st.message());
            } else {
                node_->persisted(rd.persist->seq);
            }
        }
        for (const raft::Message& m : rd.messages) {
            send(m);
        }
        if (rd.snapshot.has_value()) {
            // InstallSnapshot from the leader, already durable in the storage. A snapshot that
            // does not decode would leave this member without a state machine: stop.
            Status st = restore_snapshot(*rd.snapshot);
            COMET_CHECK(st.is_ok(), "controller {}: installed snapshot {} does not decode: {}",
                        config_.self_id, rd.snapshot->index, st.to_string());
            fail_pending("the state was replaced by the leader's snapshot");
        }
        if (rd.apply_from <= rd.apply_to) {
            apply_committed(rd.apply_from, rd.apply_to);
            maybe_compact();
        }
    }
}

Status ControllerServer::restore_snapshot(const raft::Snapshot& snap) {
    COMET_ASSIGN_OR_RETURN(
        state_, ReplicasInfoManager::decode_snapshot(
                    snap.data.view(), ReplicasInfoConfig{.enable_elect_unclean_master =
                                                             config_.enable_elect_unclean_master}));
    applied_ = snap.index.value();
    spdlog::info(
        "controller {}: state restored from the snapshot at index {} (term {}, {} bytes, "
        "{} broker sets)",
        config_.self_id, snap.index, snap.term, snap.data.size(), state_.broker_sets().size());
    return Status::ok();
}

void ControllerServer::maybe_compact() {
    const int64_t every = config_.snapshot_every_entries;
    const int64_t covered = storage_->first_index().value() - 1;
    if (every <= 0 || applied_ - covered < every) {
        return;
    }
    std::string bytes = state_.encode_snapshot();
    Status st = node_->compact(raft::LogIndex(applied_), raft::SharedBytes::copy_of(bytes));
    if (!st.is_ok()) {
        spdlog::error("controller {}: snapshot at applied index {} failed: {}", config_.self_id,
                      applied_, st.to_string());
    }
}

void ControllerServer::apply_committed(raft::LogIndex from, raft::LogIndex to) {
    std::vector<raft::Entry> entries;
    if (Status st = storage_->read(from, to, SIZE_MAX, &entries); !st.is_ok()) {
        spdlog::error("controller {}: read committed entries [{}, {}]: {}", config_.self_id, from,
                      to, st.message());
        return;
    }
    for (const raft::Entry& e : entries) {
        const int64_t i = e.index.value();
        Status applied = Status::ok();
        if (e.type == raft::EntryType::kNormal) {
            const std::string_view bytes(reinterpret_cast<const char*>(e.payload.data()),
                                         e.payload.size());
            auto ev = decode(bytes);
            if (!ev.is_ok()) {
                // Every member decodes the same bytes the same way: skipping keeps them equal.
                spdlog::error("controller {}: entry {} does not decode ({}); skipped",
                              config_.self_id, i, ev.status().message());
                applied = ev.status();
            } else {
                applied = state_.apply(*ev);
                spdlog::debug("controller {}: applied {} at {}: {}", config_.self_id, describe(*ev),
                              i, applied.is_ok() ? "ok" : applied.message());
            }
        }
        applied_ = i;
        auto p = pending_.lower_bound(i);
        if (p == pending_.end() || p->second.first > i) {
            continue;
        }
        Pending& pend = p->second;
        if (e.term != pend.term) {
            pend.failed = true;
            pend.why = "the entry was replaced by another leader's";
        } else if (!applied.is_ok()) {
            pend.failed = true;
            pend.why = applied.message();
        }
        if (p->first == i) {
            auto done = std::move(pend.done);
            const bool ok = !pend.failed;
            const std::string why = pend.why;
            pending_.erase(p);
            done(ok, why);
        }
    }
#ifndef NDEBUG
    state_.check_invariants();
#endif
}

void ControllerServer::on_role_change() {
    const raft::Role was = last_role_;
    last_role_ = node_->role();
    last_term_ = node_->term();
    if (was == raft::Role::kLeader && last_role_ != raft::Role::kLeader) {
        fail_pending("leadership lost before the request committed");
        electing_.clear();
        release_held_elections();
    }
    if (last_role_ == raft::Role::kLeader && was != raft::Role::kLeader) {
        // Heartbeats went to the previous leader: the lease's tracking window restarts here.
        heartbeats_.on_become_leader(clock_.now());
        next_not_active_scan_ = clock_.now() + Millis(config_.scan_not_active_broker_interval_ms);
        next_master_scan_ = clock_.now() + Millis(config_.scan_inactive_master_interval_ms);
    }
    spdlog::info("controller {}: {} in term {} (leader {})", config_.self_id,
                 raft::role_name(last_role_), last_term_, node_->leader());
    publish();
}

void ControllerServer::fail_pending(const std::string& why) {
    auto all = std::move(pending_);
    pending_.clear();
    for (auto& [last, p] : all) {
        p.done(false, why);
    }
}

bool ControllerServer::serving() const {
    if (node_->role() != raft::Role::kLeader) {
        return false;
    }
    // Every entry of earlier terms is applied once an entry of this term (the leader's no-op)
    // is committed and applied: the state then answers as of the latest committed decision.
    const raft::LogIndex commit = node_->commit_index();
    const auto t = storage_->term_at(commit);
    return t.has_value() && *t == node_->term() && applied_ >= commit.value();
}

void ControllerServer::publish() {
    Info i;
    i.role = node_->role();
    i.term = node_->term();
    for (const raft::PeerAddr& p : peers_.peers) {
        if (p.node == node_->leader()) {
            i.leader_id = p.id;
        }
    }
    i.ready = serving();
    i.last_index = node_->last_index().value();
    i.commit_index = node_->commit_index().value();
    i.applied_index = applied_;
    i.snapshot_index = storage_->first_index().value() - 1;
    i.broker_sets = state_.broker_sets().size();
    i.live_brokers = heartbeats_.size();
    MutexLock l(mu_);
    info_ = std::move(i);
}

void ControllerServer::propose(const std::vector<Event>& events,
                               std::function<void(bool ok, const std::string& why)> done) {
    std::vector<raft::SharedBytes> payloads;
    payloads.reserve(events.size());
    for (const Event& e : events) {
        payloads.push_back(raft::SharedBytes::copy_of(encode(e)));
    }
    auto last = node_->propose(payloads);
    if (!last.is_ok()) {
        done(false, last.status().message());
        return;
    }
    Pending p;
    p.first = last->value() - static_cast<int64_t>(events.size()) + 1;
    p.term = node_->term();
    p.done = std::move(done);
    pending_.emplace(last->value(), std::move(p));
    drain_ready();
}

template <typename H>
void ControllerServer::answer(const RemotingCommand& req, const net::Responder& respond,
                              ControllerResult<H> result, int32_t stale_code,
                              std::function<void(bool ok)> after) {
    auto build = [req](const ControllerResult<H>& r) {
        RemotingCommand resp = RemotingCommand::response_to(
            req, r.code, r.remark.empty() ? std::nullopt : std::optional<std::string>(r.remark));
        if constexpr (!std::is_same_v<H, NoHeader>) {
            r.header.to_ext(resp);
        }
        resp.body = r.body;
        return resp;
    };
    if (result.events.empty()) {
        respond(build(result));
        if (after) {
            after(result.code == RC::kSuccess);
        }
        return;
    }
    auto events = std::move(result.events);
    auto shared = std::make_shared<ControllerResult<H>>(std::move(result));
    propose(events, [this, req, respond, shared, build, stale_code, after = std::move(after)](
                        bool ok, const std::string& why) {
        if (!ok) {
            if (after) {
                after(false);
            }
            if (node_->role() != raft::Role::kLeader || stopped_) {
                respond(error_response(req, RC::kControllerNotLeader,
                                       fmt::format("{} ({})", kNotLeaderRemark, why)));
            } else {
                respond(error_response(
                    req, stale_code,
                    fmt::format("the controller state moved on before this request committed "
                                "({}); retry",
                                why)));
            }
            return;
        }
        respond(build(*shared));
        if (after) {
            after(shared->code == RC::kSuccess);
        }
    });
}

RemotingCommand ControllerServer::metadata_response(const RemotingCommand& req) const {
    protocol::GetMetaDataResponseHeader h;
    h.group = config_.group;
    h.is_leader = serving();
    for (const raft::PeerAddr& p : peers_.peers) {
        if (p.node == node_->leader()) {
            h.controller_leader_id = p.id;
            h.controller_leader_address = p.addr();
        }
    }
    h.peers = config_.peers;
    RemotingCommand resp = RemotingCommand::response_to(req, RC::kSuccess);
    h.to_ext(resp);
    return resp;
}

void ControllerServer::handle_heartbeat(const RemotingCommand& req, const net::Responder& respond) {
    auto h = protocol::BrokerHeartbeatRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        respond(error_response(req, RC::kControllerInvalidRequest, h.status().message()));
        return;
    }
    if (!h->broker_id.has_value()) {
        respond(
            error_response(req, RC::kControllerInvalidRequest, "Heart beat with empty brokerId"));
        return;
    }
    std::optional<Millis> timeout;
    if (h->heartbeat_timeout_mills.has_value() && *h->heartbeat_timeout_mills > 0) {
        timeout = Millis(*h->heartbeat_timeout_mills);
    }
    const TimePoint now = clock_.now();
    const BrokerId id(*h->broker_id);
    heartbeats_.on_heartbeat(now, h->cluster_name, h->broker_name, id, h->broker_addr, h->epoch,
                             h->max_offset, h->confirm_offset, timeout, h->election_priority);
    // Only the master of the set's current epoch is granted a lease (lease_grant.h), and only
    // a granted lease holds back its replacement. A deposed leader may still grant until
    // check-quorum demotes it; the lease rule's leader_overlap covers that window.
    const LeaseDecision d = decide_lease(state_.find(h->broker_name), id, h->epoch, serving(),
                                         election_under_way(h->broker_name, now));
    if (d.granted()) {
        heartbeats_.grant_lease(now, h->cluster_name, h->broker_name, id);
    }
    // Comet's answer also carries the lease (broker/controller/master_lease.h: its length,
    // whether it was granted) and the master this node knows, so that a master that was
    // replaced stops acknowledging as soon as one heartbeat gets through. RocketMQ's brokers
    // ignore these fields.
    RemotingCommand resp = RemotingCommand::response_to(req, RC::kSuccess, "Heart beat success");
    resp.set_ext("masterLeaseMills", std::to_string(config_.master_lease_ms));
    resp.set_ext("controllerLeader", serving() ? "true" : "false");
    resp.set_ext("leaseGranted", d.granted() ? "true" : "false");
    if (d.verdict != LeaseVerdict::kUnknownSet && d.verdict != LeaseVerdict::kNotServing) {
        resp.set_ext("masterBrokerId", std::to_string(d.master ? d.master->value() : -1));
        resp.set_ext("masterAddress", d.master_address);
        resp.set_ext("masterEpoch", std::to_string(d.master_epoch.value()));
    }
    respond(std::move(resp));
}

void ControllerServer::handle(RemotingCommand req, net::Responder respond) {
    const int32_t code = req.code;
    for (const AnyMemberRoute& r : kAnyMemberRoutes) {
        if (r.code == code) {
            return (this->*r.handler)(req, respond);
        }
    }
    if (!serving()) {
        respond(error_response(req, RC::kControllerNotLeader, kNotLeaderRemark));
        return;
    }
    const auto live = heartbeats_.view(clock_.now());
    for (const LeaderRoute& r : kLeaderRoutes) {
        if (r.code == code) {
            return (this->*r.handler)(req, respond, live);
        }
    }
    respond(error_response(req, RC::kRequestCodeNotSupported,
                           fmt::format("request code {} not supported", code)));
}

void ControllerServer::handle_metadata(const RemotingCommand& req, const net::Responder& respond) {
    respond(metadata_response(req));
}

void ControllerServer::handle_get_config(const RemotingCommand& req,
                                         const net::Responder& respond) {
    if (registry_ == nullptr) {
        respond(error_response(req, RC::kSystemError, "no configuration registry"));
        return;
    }
    RemotingCommand resp = RemotingCommand::response_to(req, RC::kSuccess);
    resp.body = registry_->to_properties_text();
    respond(std::move(resp));
}

void ControllerServer::handle_update_config(const RemotingCommand& req,
                                            const net::Responder& respond) {
    if (registry_ == nullptr) {
        respond(error_response(req, RC::kSystemError, "no configuration registry"));
        return;
    }
    Status st = registry_->update_from_text(req.body, "UPDATE_CONTROLLER_CONFIG", nullptr);
    respond(st.is_ok() ? RemotingCommand::response_to(req, RC::kSuccess)
                       : error_response(req, RC::kSystemError, st.message()));
}

void ControllerServer::handle_get_next_broker_id(const RemotingCommand& req,
                                                 const net::Responder& respond,
                                                 const BrokerLiveness&) {
    auto h = protocol::GetNextBrokerIdRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return reject_invalid(req, respond, h.status());
    }
    answer(req, respond, state_.handle_get_next_broker_id(*h), RC::kControllerBrokerIdInvalid);
}

void ControllerServer::handle_apply_broker_id(const RemotingCommand& req,
                                              const net::Responder& respond,
                                              const BrokerLiveness&) {
    auto h = protocol::ApplyBrokerIdRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return reject_invalid(req, respond, h.status());
    }
    answer(req, respond, state_.handle_apply_broker_id(*h), RC::kControllerBrokerIdInvalid);
}

void ControllerServer::handle_register_broker(const RemotingCommand& req,
                                              const net::Responder& respond,
                                              const BrokerLiveness& live) {
    auto h = protocol::RegisterBrokerToControllerRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return reject_invalid(req, respond, h.status());
    }
    answer(req, respond, state_.handle_register_broker(*h, live),
           RC::kControllerBrokerNeedToBeRegistered);
}

void ControllerServer::handle_elect_master(const RemotingCommand& req,
                                           const net::Responder& respond,
                                           const BrokerLiveness& live) {
    auto h = protocol::ElectMasterRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return reject_invalid(req, respond, h.status());
    }
    const TimePoint now = clock_.now();
    if (h->designate_elect && waits_for_lease(*h, live)) {
        // An admin's switch away from a master whose lease may still run: no more grants to
        // it, and the election is tried again each tick until the lease is surely over.
        const TimePoint until = now +
                                Millis(config_.master_lease_ms + config_.master_lease_drift_ms +
                                       config_.election_timeout_max_ms) +
                                kHeldElectionSlack;
        lease_holds_[h->broker_name] = std::max(lease_holds_[h->broker_name], until);
        held_elections_.push_back(HeldElection{req, respond, *h, until});
        spdlog::info(
            "controller {}: designated election of {} in {} waits for the master "
            "lease to run out",
            config_.self_id, h->broker_id, h->broker_name);
        return;
    }
    elect_and_answer(req, respond, *h, live);
}

bool ControllerServer::waits_for_lease(const protocol::ElectMasterRequestHeader& h,
                                       const BrokerLiveness& live) const {
    const BrokerSetState* s = state_.find(h.broker_name);
    if (s == nullptr || !s->master || s->master->value() == h.broker_id ||
        live.lease_expired(s->cluster_name, s->broker_name, *s->master)) {
        return false;
    }
    // Only when the election would succeed once the lease is over: a designated broker that
    // cannot win must not cost the live master its lease.
    return state_.handle_elect_master(h, LeaseRunOut(live)).code == RC::kSuccess;
}

void ControllerServer::elect_and_answer(const RemotingCommand& req, const net::Responder& respond,
                                        const protocol::ElectMasterRequestHeader& h,
                                        const BrokerLiveness& live) {
    auto r = state_.handle_elect_master(h, live);
    const std::string name = h.broker_name;
    const bool proposes = !r.events.empty();
    if (proposes) {
        // No lease is granted in this set until the new master is applied (lease_grant.h).
        electing_.insert(name);
    }
    answer(req, respond, std::move(r), RC::kControllerElectMasterFailed,
           [this, name, proposes](bool ok) {
               if (proposes) {
                   erase_one_electing(name);
               }
               if (ok) {
                   notify_role_changed(name);
               }
           });
}

void ControllerServer::retry_held_elections(TimePoint now) {
    if (held_elections_.empty()) {
        return;
    }
    const auto live = heartbeats_.view(now);
    std::vector<HeldElection> still;
    for (HeldElection& e : held_elections_) {
        if (now < e.until && waits_for_lease(e.header, live)) {
            still.push_back(std::move(e));
            continue;
        }
        elect_and_answer(e.req, e.respond, e.header, live);
    }
    held_elections_ = std::move(still);
    for (auto it = lease_holds_.begin(); it != lease_holds_.end();) {
        it = it->second <= now ? lease_holds_.erase(it) : std::next(it);
    }
}

void ControllerServer::release_held_elections() {
    auto held = std::move(held_elections_);
    held_elections_.clear();
    lease_holds_.clear();
    for (HeldElection& e : held) {
        e.respond(error_response(e.req, RC::kControllerNotLeader, kNotLeaderRemark));
    }
}

bool ControllerServer::election_under_way(const std::string& broker_name, TimePoint now) const {
    if (electing_.count(broker_name) != 0) {
        return true;
    }
    auto it = lease_holds_.find(broker_name);
    return it != lease_holds_.end() && now < it->second;
}

void ControllerServer::erase_one_electing(const std::string& broker_name) {
    if (auto it = electing_.find(broker_name); it != electing_.end()) {
        electing_.erase(it);
    }
}

void ControllerServer::handle_alter_sync_state_set(const RemotingCommand& req,
                                                   const net::Responder& respond,
                                                   const BrokerLiveness& live) {
    auto h = protocol::AlterSyncStateSetRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return reject_invalid(req, respond, h.status());
    }
    auto body = protocol::SyncStateSet::decode(req.body);
    if (!body.is_ok()) {
        return reject_invalid(req, respond, body.status());
    }
    answer(req, respond, state_.handle_alter_sync_state_set(*h, *body, live),
           RC::kControllerAlterSyncStateSetFailed);
}

void ControllerServer::handle_get_replica_info(const RemotingCommand& req,
                                               const net::Responder& respond,
                                               const BrokerLiveness&) {
    auto h = protocol::GetReplicaInfoRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return reject_invalid(req, respond, h.status());
    }
    answer(req, respond, state_.handle_get_replica_info(*h), RC::kControllerBrokerMetadataNotExist);
}

void ControllerServer::handle_get_sync_state_data(const RemotingCommand& req,
                                                  const net::Responder& respond,
                                                  const BrokerLiveness& live) {
    auto names = decode_name_list(req.body);
    if (!names.is_ok()) {
        return reject_invalid(req, respond, names.status());
    }
    answer(req, respond, state_.handle_get_sync_state_data(*names, live), RC::kSystemError);
}

void ControllerServer::handle_clean_broker_data(const RemotingCommand& req,
                                                const net::Responder& respond,
                                                const BrokerLiveness& live) {
    auto h = protocol::CleanBrokerDataRequestHeader::from_ext(req);
    if (!h.is_ok()) {
        return reject_invalid(req, respond, h.status());
    }
    answer(req, respond, state_.handle_clean_broker_data(*h, live),
           RC::kControllerInvalidCleanBrokerMetadata);
}

void ControllerServer::scan(TimePoint now) {
    std::set<std::pair<std::string, std::string>> to_elect;  // (cluster, brokerName)
    if (now >= next_not_active_scan_) {
        next_not_active_scan_ = now + Millis(config_.scan_not_active_broker_interval_ms);
        for (const BrokerLiveInfo& b : heartbeats_.scan_not_active(now)) {
            spdlog::info("controller {}: broker {} id {} ({}) of {} is inactive", config_.self_id,
                         b.broker_name, b.broker_id, b.broker_addr, b.cluster_name);
            const BrokerSetState* s = state_.find(b.broker_name);
            if (s != nullptr && s->master == b.broker_id) {
                to_elect.emplace(s->cluster_name, s->broker_name);
            }
        }
    }
    if (now >= next_master_scan_) {
        next_master_scan_ = now + Millis(config_.scan_inactive_master_interval_ms);
        const auto live = heartbeats_.view(now);
        for (const std::string& name : state_.scan_need_reelect_broker_sets(live)) {
            if (const BrokerSetState* s = state_.find(name); s != nullptr) {
                to_elect.emplace(s->cluster_name, name);
            }
        }
    }
    for (const auto& [cluster, name] : to_elect) {
        elect_for(cluster, name);
    }
}

void ControllerServer::elect_for(const std::string& cluster, const std::string& broker_name) {
    if (electing_.count(broker_name) != 0) {
        return;
    }
    protocol::ElectMasterRequestHeader h;
    h.cluster_name = cluster;
    h.broker_name = broker_name;
    h.broker_id = kControllerTriggeredBrokerId;
    h.designate_elect = false;
    auto r = state_.handle_elect_master(h, heartbeats_.view(clock_.now()));
    spdlog::info("controller {}: master of {} inactive, election: code {} {}", config_.self_id,
                 broker_name, r.code, r.remark);
    if (r.events.empty()) {
        return;  // lease still running, or nothing to change: the next scan tries again
    }
    const bool elected = r.code == RC::kSuccess;
    electing_.insert(broker_name);
    propose(r.events, [this, broker_name, elected](bool ok, const std::string& why) {
        erase_one_electing(broker_name);
        if (!ok) {
            spdlog::warn("controller {}: election for {} did not commit: {}", config_.self_id,
                         broker_name, why);
            return;
        }
        if (elected) {
            notify_role_changed(broker_name);
        }
    });
}

void ControllerServer::notify_role_changed(const std::string& broker_name) {
    if (!config_.notify_broker_role_changed) {
        return;
    }
    const BrokerSetState* s = state_.find(broker_name);
    if (s == nullptr || !s->master.has_value()) {
        return;
    }
    protocol::NotifyBrokerRoleChangedRequestHeader h;
    h.master_broker_id = s->master->value();
    h.master_epoch = s->master_epoch.value();
    h.sync_state_set_epoch = s->sync_state_set_epoch.value();
    if (auto it = s->replicas.find(*s->master); it != s->replicas.end()) {
        h.master_address = it->second.address;
    }
    protocol::SyncStateSet body;
    for (BrokerId id : s->sync_state_set) {
        body.sync_state_set.insert(id.value());
    }
    body.sync_state_set_epoch = s->sync_state_set_epoch.value();
    const std::string encoded = body.encode();
    const TimePoint now = clock_.now();
    for (const auto& [id, entry] : s->replicas) {
        if (!heartbeats_.is_active(now, s->cluster_name, broker_name, id)) {
            continue;
        }
        RemotingCommand req = RemotingCommand::request(Req::kNotifyBrokerRoleChanged);
        h.to_ext(req);
        req.body = encoded;
        const std::string addr = entry.address;
        client_->invoke_oneway_async(addr, std::move(req), [addr](Status st) {
            if (!st.is_ok()) {
                spdlog::warn("NOTIFY_BROKER_ROLE_CHANGED to {}: {}", addr, st.message());
            }
        });
    }
    spdlog::info("controller {}: {} master is now {} ({}), epoch {}, SyncStateSet {}",
                 config_.self_id, broker_name, *s->master, h.master_address.value_or("?"),
                 s->master_epoch, encoded);
}

}  // namespace comet::controller
