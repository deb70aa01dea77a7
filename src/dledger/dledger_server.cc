#include "dledger/dledger_server.h"

#include <pthread.h>

#include <algorithm>
#include <random>

#include <spdlog/spdlog.h>

#include "base/log_tag.h"
#include "raft/message_codec.h"

namespace comet::dledger {
namespace {

using SteadyClock = std::chrono::steady_clock;

}  // namespace

Result<store::PhysicalOffset> recovery_keep_end(EntryLog& log, store::PhysicalOffset cl_end) {
    if (!log.has_base()) {
        // First start in DLedger mode: everything already stored (master-slave mode's data)
        // is the base the replicated log grows from.
        COMET_RETURN_IF_ERROR(log.set_base(cl_end.value()));
        spdlog::info("DLedger log created at {}: base offset {}", log.dir(), cl_end);
        return cl_end;
    }
    COMET_RETURN_IF_ERROR(log.cut_beyond(cl_end.value()).status());
    if (log.end_offset() > cl_end.value()) {
        return Status::error(Errc::kCorruption,
                             "DLedger log {} starts at {} but the CommitLog ends at {} (was the "
                             "CommitLog removed?)",
                             log.dir(), log.base_offset(), cl_end);
    }
    return store::PhysicalOffset(log.end_offset());
}

store::PhysicalOffset committed_end_at_open(const EntryLog& log) {
    raft::LogIndex c = log.hard_state().commit;
    if (c > log.last_index()) {
        c = log.last_index();
    }
    return store::PhysicalOffset(log.end_of(c));
}

DLedgerServer::DLedgerServer(DLedgerConfig config, EntryLog& log, store::MessageStore& store,
                             Clock& clock)
    : config_(std::move(config)),
      log_(log),
      store_(store),
      clock_(clock),
      storage_(log, store),
      rng_(std::random_device{}() ^
           (static_cast<uint64_t>(config_.self().node.value()) << 32)),
      inline_sync_(std::chrono::milliseconds(config_.election_timeout_min_ms)) {}

DLedgerServer::~DLedgerServer() { shutdown(); }

void DLedgerServer::set_role_listener(RoleListener listener) {
    MutexLock l(mu_);
    listener_ = std::move(listener);
}

void DLedgerServer::set_storage_failure_handler(StorageFailureHandler handler) {
    MutexLock l(mu_);
    failure_handler_ = std::move(handler);
}

Status DLedgerServer::start() {
    raft::RaftConfig rc;
    rc.id = config_.self().node;
    for (const DLedgerPeer& p : config_.peers) {
        rc.voters.push_back(p.node);
    }
    rc.tick_interval_ms = config_.tick_ms;
    rc.election_timeout_min_ms = config_.election_timeout_min_ms;
    rc.election_timeout_max_ms = config_.election_timeout_max_ms;
    rc.heartbeat_interval_ms = config_.heartbeat_interval_ms;
    if (const DLedgerPeer* p = config_.find(config_.preferred_leader_id); p != nullptr) {
        rc.preferred_leader = p->node;
    }
    rc.applied = log_.hard_state().commit;
    rc.lost_durable_entries = log_.lost_committed_entries();
    COMET_ASSIGN_OR_RETURN(node_, raft::RaftNode::open(rc, &storage_, &rng_));
    committed_end_.store(committed_end_at_open(log_).value());

    net::RemotingServerConfig sc;
    sc.name = "DLedgerServer";
    sc.listen_host = config_.listen_host;
    sc.listen_port = config_.self().port;
    sc.io_threads = 1;
    server_ = std::make_unique<net::RemotingServer>(sc);
    server_->register_inline_processor(
        kRaftMessageCode,
        net::make_processor([this](const net::ConnectionPtr&, protocol::RemotingCommand req,
                                   net::Responder) { on_message(std::move(req.body)); }));
    COMET_RETURN_IF_ERROR(server_->start());
    // The outbound client and the driver share the server's one I/O loop (decision 029).
    loop_ = &server_->loops()->context(0);
    net::RemotingClientConfig cc;
    cc.name = "DLedgerClient";
    cc.connect_timeout = std::chrono::milliseconds(500);
    cc.loops = server_->loops();
    client_ = std::make_unique<net::RemotingClient>(cc);
    client_->start();
    for (const DLedgerPeer& p : config_.peers) {
        (void)links_[p.node.value()];
    }
    started_ = true;
    next_tick_ = SteadyClock::now() + std::chrono::milliseconds(config_.tick_ms);
    next_hard_state_ = SteadyClock::now() + std::chrono::seconds(1);
    last_role_ = node_->role();
    last_term_ = node_->term();
    last_leader_ = node_->leader();
    tick_timer_ = std::make_unique<asio::steady_timer>(*loop_);
    flusher_ = tagged_thread([this] { run_flusher(); });
    asio::post(*loop_, [this] {
        publish_status();
        arm_tick();
    });
    spdlog::info("DLedger peer {} of group {} listening on {}:{} ({} peers, log [{}, {}), "
                 "last index {}, term {}, commit {})",
                 config_.self_id, config_.group, config_.listen_host, server_->port(),
                 config_.peers.size(), log_.base_offset(), log_.end_offset(), log_.last_index(),
                 log_.hard_state().term, log_.hard_state().commit);
    return Status::ok();
}

void DLedgerServer::shutdown() {
    if (!started_ || stopped_) {
        return;
    }
    stopped_ = true;
    closing_.store(true);
    writable_.store(false);
    {
        MutexLock l(mu_);
        stop_ = true;
    }
    // Wait for the round in progress (a queued one sees stop_ and returns) and stop the ticks.
    server_->loops()->run_and_wait(0, [this] { tick_timer_->cancel(); });
    // The driver may have made the leader writable again between the store above and its
    // last round (maybe_become_writable checks closing_ first, but not atomically with its
    // store): once that round is over nothing can, so a stopped server never reports writable.
    writable_.store(false);
    {
        MutexLock l(flush_mu_);
        flush_stop_ = true;
    }
    flush_cv_.notify_all();
    if (flusher_.joinable()) {
        flusher_.join();
    }
    client_->shutdown();  // on the server's loops: before they stop
    server_->shutdown();
    tick_timer_.reset();
    (void)log_.sync_hard_state(true);
    std::vector<Waiter> rest;
    {
        MutexLock l(waiters_mu_);
        waiters_closed_ = true;
        take_waiters_above(INT64_MIN, &rest);
    }
    for (Waiter& w : rest) {
        w.done(store::PutMessageStatus::kServiceNotAvailable);
    }
}

bool DLedgerServer::begin_put() {
    in_flight_puts_.fetch_add(1);
    if (!writable_.load()) {
        in_flight_puts_.fetch_sub(1);
        return false;
    }
    return true;
}

void DLedgerServer::end_put() { in_flight_puts_.fetch_sub(1); }

void DLedgerServer::notify_appended() {
    if (!appended_.exchange(true)) {
        {
            MutexLock l(mu_);
            wake_ = true;
        }
        schedule_round();
    }
}

void DLedgerServer::wait_committed(int64_t end_offset, CommitDone done) {
    bool closed = false;
    {
        MutexLock l(waiters_mu_);
        closed = waiters_closed_;
        if (!closed && end_offset > committed_end_.load()) {
            waiters_.push_back(
                Waiter{end_offset, clock_.now() + config_.commit_timeout, std::move(done)});
            for (size_t i = waiters_.size() - 1;
                 i > waiters_head_ && waiters_[i - 1].end > waiters_[i].end; --i) {
                std::swap(waiters_[i - 1], waiters_[i]);
            }
            return;
        }
    }
    done(closed ? store::PutMessageStatus::kServiceNotAvailable : store::PutMessageStatus::kPutOk);
}

Status DLedgerServer::transfer_leadership(const std::string& peer_id) {
    if (config_.find(peer_id) == nullptr) {
        return Status::error(Errc::kInvalidArgument, "{} is not a peer of group {}", peer_id,
                             config_.group);
    }
    MutexLock l(mu_);
    if (role_info_.role != raft::Role::kLeader) {
        return Status::error(Errc::kFailedPrecondition, "{} is not the leader of group {}",
                             config_.self_id, config_.group);
    }
    transfer_to_ = peer_id;
    wake_ = true;
    schedule_round();
    return Status::ok();
}

DLedgerServer::RoleInfo DLedgerServer::role_info() const {
    MutexLock l(mu_);
    return role_info_;
}

std::map<std::string, std::string> DLedgerServer::runtime_info() const {
    std::map<std::string, std::string> m;
    MutexLock l(mu_);
    m["dledgerGroup"] = config_.group;
    m["dledgerSelfId"] = config_.self_id;
    m["dledgerRole"] = std::string(raft::role_name(role_info_.role));
    m["dledgerTerm"] = std::to_string(role_info_.term.value());
    m["dledgerLeaderId"] = role_info_.leader_id;
    m["dledgerWritable"] = role_info_.writable ? "true" : "false";
    m["dledgerLastIndex"] = std::to_string(last_index_pub_);
    m["dledgerCommitIndex"] = std::to_string(commit_index_pub_);
    m["dledgerCommittedOffset"] = std::to_string(committed_end_.load());
    m["dledgerElectionsWon"] = std::to_string(elections_won_);
    m["dledgerTruncatedBytes"] = std::to_string(truncated_bytes_ + storage_.truncated_bytes());
    m["dledgerStorageFailed"] = storage_error_.empty() ? "0" : "1";
    m["dledgerStorageError"] = storage_error_;
    m["dledgerFollowersBehindLog"] = std::to_string(followers_behind_log_);
    std::string peers;
    for (const PeerStatus& p : peers_status_) {
        if (!peers.empty()) {
            peers += ";";
        }
        peers += p.id + ":" + std::to_string(p.match_index) + ":" + std::to_string(p.match_offset);
    }
    m["dledgerPeerMatch"] = peers;
    m["dledgerLeaderSyncsDeferredCommitted"] = std::to_string(lazy_committed_by_followers_.load());
    m["dledgerLeaderSyncsForCommit"] = std::to_string(lazy_released_for_commit_.load());
    m["dledgerCommitWaits"] = std::to_string(commit_waits_.load(std::memory_order_relaxed));
    m["dledgerCommitWaitUsTotal"] =
        std::to_string(commit_wait_us_.load(std::memory_order_relaxed));
    return m;
}

void DLedgerServer::on_message(std::string body) {
    auto owner = std::make_shared<const std::string>(std::move(body));
    int64_t tag = 0;
    auto m = raft::decode_message(owner, &tag);
    if (!m.is_ok()) {
        spdlog::warn("DLedger {}: dropped a malformed message: {}", config_.self_id,
                     m.status().message());
        return;
    }
    if (m->type == raft::MessageType::kAppend && tag != log_.base_offset()) {
        static std::atomic<int64_t> logged{0};
        if (logged.fetch_add(1) % 1000 == 0) {
            spdlog::error("DLedger {}: append from {} for a log based at {} but this log is "
                          "based at {}: the peers' CommitLogs differ (switch modes with replicas "
                          "in sync); ignoring",
                          config_.self_id, m->from, tag, log_.base_offset());
        }
        return;
    }
    // Heard from it: it is up again, end any back-off at once (catch-up starts now).
    if (auto it = links_.find(m->from.value()); it != links_.end()) {
        it->second.reset();
    }
    {
        MutexLock l(mu_);
        inbox_.push_back(std::move(m).value());
    }
    // On the loop itself: the round runs after this read's other messages are in the inbox.
    schedule_round();
}

void DLedgerServer::send(const raft::Message& m) {
    const DLedgerPeer* p = config_.find(m.to);
    if (p == nullptr) {
        return;
    }
    // A peer that is down gets nothing until its back-off passes (net::PeerBackoff).
    auto it = links_.find(m.to.value());
    if (it == links_.end() || !it->second.may_send(SteadyClock::now())) {
        return;
    }
    net::PeerBackoff& link = it->second;
    protocol::RemotingCommand req = protocol::RemotingCommand::request(kRaftMessageCode);
    // Entry payloads are CommitLog slices: the frame references them (written with writev)
    // instead of copying each message once per follower.
    std::vector<raft::SharedBytes> pieces;
    raft::encode_message_parts(m, log_.base_offset(), &req.body, &pieces);
    std::vector<net::SharedBuffer> extra;
    extra.reserve(pieces.size());
    for (raft::SharedBytes& b : pieces) {
        extra.push_back(net::SharedBuffer{b.owner(), reinterpret_cast<const char*>(b.data()),
                                          b.size()});
    }
    client_->invoke_oneway_async(p->addr(), std::move(req), std::move(extra), [&link](Status st) {
        link.on_write(st.is_ok(), SteadyClock::now());
    });
}

void DLedgerServer::drop_frames_after_truncation() {
    const int64_t cut = storage_.truncated_bytes();
    if (cut == truncated_seen_) {
        return;
    }
    truncated_seen_ = cut;
    // Append frames still queued to the peers reference CommitLog bytes (send()) that the
    // truncation just let a new append overwrite: drop them before the loop writes any; Raft
    // resends what the peers miss. The dropped frames report failed writes, but the peers are
    // not down: no back-off.
    for (const DLedgerPeer& p : config_.peers) {
        if (p.node == config_.self().node) {
            continue;
        }
        client_->close_connection_now(p.addr());
        if (auto it = links_.find(p.node.value()); it != links_.end()) {
            it->second.reset();
        }
    }
}

void DLedgerServer::schedule_round() {
    if (round_posted_.exchange(true, std::memory_order_acq_rel)) {
        return;
    }
    asio::post(*loop_, [this] {
        round_posted_.store(false, std::memory_order_release);
        round();
    });
}

void DLedgerServer::arm_tick() {
    tick_timer_->expires_at(next_tick_);
    tick_timer_->async_wait([this](const asio::error_code& ec) {
        if (ec) {
            return;  // cancelled: shutting down
        }
        round();
        arm_tick();
    });
}

void DLedgerServer::round() {
    std::vector<raft::Message> in;
    std::string transfer;
    {
        MutexLock l(mu_);
        if (stop_) {
            return;
        }
        in.swap(inbox_);
        wake_ = false;
        transfer.swap(transfer_to_);
    }
    appended_.store(false);
    for (const raft::Message& m : in) {
        if (Status st = node_->step(m); !st.is_ok()) {
            spdlog::debug("DLedger {}: {} from {}: {}", config_.self_id,
                          raft::message_type_name(m.type), m.from, st.message());
        }
    }
    drop_frames_after_truncation();
    const auto tick = std::chrono::milliseconds(config_.tick_ms);
    const auto now = SteadyClock::now();
    const bool ticked = now >= next_tick_;
    if (ticked) {
        (void)node_->tick();
        next_tick_ += tick;
        if (next_tick_ < now) {
            next_tick_ = now + tick;
        }
    }
    if (!transfer.empty()) {
        if (Status st = node_->transfer_leadership(config_.find(transfer)->node); !st.is_ok()) {
            spdlog::warn("DLedger {}: leadership transfer to {}: {}", config_.self_id, transfer,
                         st.message());
        } else {
            spdlog::info("DLedger {}: transferring leadership to {}", config_.self_id, transfer);
        }
    }
    propose_new_bytes();
    drain_ready();
    check_storage_failure(now);
    if (node_->role() != last_role_ || node_->term() != last_term_ ||
        node_->leader() != last_leader_) {
        const raft::Role was = last_role_;
        last_role_ = node_->role();
        last_term_ = node_->term();
        last_leader_ = node_->leader();
        on_role_change(was);
    }
    maybe_become_writable();
    if (ticked) {
        // Housekeeping once a tick, not on every round (a round per batch of puts).
        if (now >= next_hard_state_) {
            // The commit index is opportunistic (raft::HardState): record it about once a
            // second so a restart dispatches what it already knows is committed.
            next_hard_state_ = now + std::chrono::seconds(1);
            if (log_.commit_pending() && node_->failure().is_ok()) {
                if (Status st = log_.sync_hard_state(true); !st.is_ok()) {
                    node_->fail_storage(std::move(st));
                }
            }
        }
        expire_waiters();
        publish_status();
    }
#ifndef NDEBUG
    node_->check_invariants();
#endif
}

void DLedgerServer::run_flusher() {
    pthread_setname_np(pthread_self(), "DLedgerFlush");
    uint64_t done = 0;
    while (true) {
        uint64_t want = 0;
        {
            MutexLock l(flush_mu_);
            flush_cv_.wait(flush_mu_, [&]() REQUIRES(flush_mu_) {
                return flush_stop_ || flush_want_ > done;
            });
            if (flush_stop_) {
                return;
            }
            want = flush_want_;
        }
        if (Status st = storage_.sync_data(); !st.is_ok()) {
            spdlog::error("DLedger {}: cannot make the log durable: {}; this peer stops",
                          config_.self_id, st.message());
            {
                MutexLock l(flush_mu_);
                flush_error_ = std::move(st);
                flush_failed_.store(true);
                // Never sync again: wait for shutdown.
                flush_cv_.wait(flush_mu_, [&]() REQUIRES(flush_mu_) { return flush_stop_; });
            }
            return;
        }
        done = want;
        if (!config_.sync_before_ack) {
            // The driver reported these writes persisted already: sync in the background,
            // at most every 100 ms (a power failure loses up to that much).
            MutexLock l(flush_mu_);
            flush_cv_.wait_for(flush_mu_, std::chrono::milliseconds(100),
                               [&]() REQUIRES(flush_mu_) { return flush_stop_; });
            continue;
        }
        flushed_seq_.store(want);
        {
            MutexLock l(mu_);
            wake_ = true;
        }
        schedule_round();
    }
}

bool DLedgerServer::sync_inline() {
    const auto start = SteadyClock::now();
    if (!inline_sync_.inline_allowed(start)) {
        return false;
    }
    if (Status st = storage_.sync_data(); !st.is_ok()) {
        // Not retried (a later sync could succeed without the pages this one lost): stop.
        node_->fail_storage(std::move(st));
        return false;
    }
    // A driver blocked in a slow sync answers no heartbeat meanwhile: a disk that keeps
    // stalling leaves the syncs to the flush thread for a while (InlineSyncPolicy), so it delays
    // acks but never costs the group its leader.
    const auto end = SteadyClock::now();
    if (inline_sync_.on_sync(end - start, end)) {
        spdlog::info("DLedger {}: a sync took {} ms and syncs keep stalling the driver; syncing "
                     "on the flush thread for {} s",
                     config_.self_id,
                     std::chrono::duration_cast<std::chrono::milliseconds>(end - start).count(),
                     inline_sync_.off_for().count() / 1000);
    }
    return true;
}

void DLedgerServer::propose_new_bytes() {
    if (!writable_.load() || node_->role() != raft::Role::kLeader) {
        return;
    }
    store::CommitLog& cl = store_.commit_log();
    int64_t end = log_.end_offset();
    const int64_t max = cl.max_offset().value();
    std::vector<raft::SharedBytes> batch;
    while (end < max) {
        auto view = cl.get_data(store::PhysicalOffset(end), max - end);
        if (!view.has_value() || view->size == 0) {
            break;
        }
        const size_t n = std::min<size_t>(view->size, static_cast<size_t>(max - end));
        batch.emplace_back(view->file, view->data, n);
        end += static_cast<int64_t>(n);
    }
    if (batch.empty()) {
        return;
    }
    if (auto r = node_->propose(batch); !r.is_ok()) {
        spdlog::debug("DLedger {}: propose: {}", config_.self_id, r.status().message());
    }
}

void DLedgerServer::drain_ready() {
    for (int round = 0; round < 64; ++round) {
        if (const uint64_t f = flushed_seq_.load(); f > persisted_reported_) {
            persisted_reported_ = f;
            node_->persisted(f);
        }
        if (!node_->has_ready()) {
            break;
        }
        raft::Ready rd = node_->take_ready();
        for (const raft::Message& m : rd.messages) {
            send(m);
        }
        if (rd.persist.has_value()) {
            if (log_.hard_state_pending()) {
                // A vote or a new term (rare): everything durable here, before anything else.
                if (Status st = storage_.sync(); !st.is_ok()) {
                    node_->fail_storage(std::move(st));
                } else {
                    node_->persisted(rd.persist->seq);
                    persisted_reported_ = std::max(persisted_reported_, rd.persist->seq);
                    lazy_.clear();  // covered
                    lazy_seq_ = 0;
                }
            } else if (config_.sync_before_ack && node_->role() != raft::Role::kLeader &&
                       sync_inline()) {
                // A follower syncs on the driver itself: it has nothing to do meanwhile but
                // read the next appends, which wait in the socket and make the next round's
                // sync cover more (no hand-off to the flush thread and back per round).
                node_->persisted(rd.persist->seq);
                persisted_reported_ = std::max(persisted_reported_, rd.persist->seq);
            } else if (!defer_leader_sync(*rd.persist, SteadyClock::now())) {
                // Entries only: the flush thread syncs while the driver goes on (acks and votes
                // that depend on these writes stay held inside the node until persisted()).
                // Relaxed policy: the page cache counts as persisted at once; the flush thread
                // still syncs behind, nobody waits for it.
                request_flush(rd.persist->seq);
                if (!config_.sync_before_ack) {
                    node_->persisted(rd.persist->seq);
                    persisted_reported_ = std::max(persisted_reported_, rd.persist->seq);
                }
            }
        }
        if (rd.apply_from <= rd.apply_to) {
            publish_commit(rd.apply_to);
        }
    }
    release_lazy_syncs(SteadyClock::now());
}

void DLedgerServer::check_storage_failure(std::chrono::steady_clock::time_point now) {
    if (flush_failed_.load() && node_->failure().is_ok()) {
        Status st;
        {
            MutexLock l(flush_mu_);
            st = flush_error_;
        }
        node_->fail_storage(std::move(st));
    }
    if (node_->failure().is_ok()) {
        return;
    }
    if (!storage_failed_.exchange(true)) {
        // The node stepped down already (RaftNode::stop_if_failed); stop taking puts before
        // on_role_change cuts what was never proposed.
        writable_.store(false);
        failure_handler_at_ = now + config_.storage_failure_exit_delay;
        spdlog::error(
            "DLedger {} of group {}: log storage failed in term {}: {}. This peer "
            "stepped down and neither acknowledges nor votes; handing over to the "
            "storage-failure handler in {} ms (the broker exits so that a restart "
            "recovers the log from disk)",
            config_.self_id, config_.group, node_->term(), node_->failure().message(),
            config_.storage_failure_exit_delay.count());
        MutexLock l(mu_);
        storage_error_ = node_->failure().to_string();
        role_info_.storage_error = storage_error_;
        role_info_.writable = false;
    }
    if (failure_handled_ || now < failure_handler_at_) {
        return;
    }
    failure_handled_ = true;
    StorageFailureHandler handler;
    {
        MutexLock l(mu_);
        handler = failure_handler_;
    }
    if (handler) {
        handler(node_->failure());
    }
}

void DLedgerServer::request_flush(uint64_t seq) {
    {
        MutexLock l(flush_mu_);
        flush_want_ = std::max(flush_want_, seq);
    }
    flush_cv_.notify_one();
}

namespace {
constexpr std::chrono::nanoseconds kLazySyncMaxWait = std::chrono::milliseconds(8);
}  // namespace

bool DLedgerServer::defer_leader_sync(const raft::PersistRequest& p,
                                      std::chrono::steady_clock::time_point now) {
    const size_t voters = config_.peers.size();
    // The followers alone are a majority (3 peers and more): the leader's vote is a spare.
    if (!config_.sync_before_ack || !config_.lazy_leader_sync ||
        node_->role() != raft::Role::kLeader || voters - 1 < voters / 2 + 1) {
        return false;
    }
    if (lazy_seq_ == 0) {
        lazy_oldest_ = now;
    }
    lazy_seq_ = std::max(lazy_seq_, p.seq);
    lazy_.push_back(DeferredSync{p.seq, p.last_index, now});
    return true;
}

void DLedgerServer::release_lazy_syncs(std::chrono::steady_clock::time_point now) {
    if (lazy_seq_ == 0) {
        return;
    }
    // Requests whose entries the followers committed: learn how long that took.
    const raft::LogIndex commit = node_->commit_index();
    size_t done = 0;
    while (done < lazy_.size() && lazy_[done].last <= commit) {
        const auto took = now - lazy_[done].since;
        follower_commit_avg_ += (took - follower_commit_avg_) / 8;
        ++done;
    }
    if (done > 0) {
        lazy_committed_by_followers_.fetch_add(static_cast<int64_t>(done),
                                               std::memory_order_relaxed);
        lazy_.erase(lazy_.begin(), lazy_.begin() + static_cast<std::ptrdiff_t>(done));
    }
    // A request waiting three times the followers' usual time may be waiting for the leader's
    // vote (a follower down or slow): sync now. Rounds vary a lot on a busy device, so less
    // would sync the leader for ordinary stragglers; at most 8 ms (a straggling follower costs
    // the p99 at most that much).
    const auto wait = std::clamp<std::chrono::nanoseconds>(
        3 * follower_commit_avg_, std::chrono::milliseconds(2), kLazySyncMaxWait);
    const bool for_commit = !lazy_.empty() && now - lazy_.front().since >= wait;
    const bool background = now - lazy_oldest_ >= std::chrono::milliseconds(100);
    if (!for_commit && !background && node_->role() == raft::Role::kLeader) {
        return;
    }
    if (for_commit) {
        lazy_released_for_commit_.fetch_add(1, std::memory_order_relaxed);
    }
    request_flush(lazy_seq_);
    lazy_.clear();
    lazy_seq_ = 0;
}

void DLedgerServer::publish_commit(raft::LogIndex commit) {
    if (commit > log_.last_index()) {
        commit = log_.last_index();
    }
    const int64_t end = storage_.end_of(commit);
    std::vector<Waiter>& ready = committed_batch_;
    {
        MutexLock l(waiters_mu_);
        if (end > committed_end_.load()) {
            committed_end_.store(end, std::memory_order_release);
        }
        size_t i = waiters_head_;
        for (; i < waiters_.size() && waiters_[i].end <= end; ++i) {
            ready.push_back(std::move(waiters_[i]));
        }
        waiters_head_ = i;
        compact_waiters();
    }
    store_.note_dispatchable();  // at once only for a waiting consumer (decision 037)
    if (!ready.empty()) {
        // Each waiter was registered at deadline - commit_timeout.
        const TimePoint now = clock_.now();
        int64_t us = 0;
        for (const Waiter& w : ready) {
            us += std::chrono::duration_cast<std::chrono::microseconds>(
                      now - (w.deadline - config_.commit_timeout))
                      .count();
        }
        commit_waits_.fetch_add(static_cast<int64_t>(ready.size()), std::memory_order_relaxed);
        commit_wait_us_.fetch_add(us, std::memory_order_relaxed);
    }
    for (Waiter& w : ready) {
        w.done(store::PutMessageStatus::kPutOk);
    }
    ready.clear();
}

void DLedgerServer::take_waiters_above(int64_t offset, std::vector<Waiter>* out) {
    size_t first = waiters_.size();
    while (first > waiters_head_ && waiters_[first - 1].end > offset) {
        --first;
    }
    for (size_t i = first; i < waiters_.size(); ++i) {
        out->push_back(std::move(waiters_[i]));
    }
    waiters_.erase(waiters_.begin() + static_cast<ptrdiff_t>(first), waiters_.end());
    compact_waiters();
}

void DLedgerServer::compact_waiters() {
    if (waiters_head_ == waiters_.size()) {
        waiters_.clear();  // the usual case under load: every waiter answered
        waiters_head_ = 0;
    } else if (waiters_head_ >= 256 && waiters_head_ * 2 >= waiters_.size()) {
        waiters_.erase(waiters_.begin(),
                       waiters_.begin() + static_cast<ptrdiff_t>(waiters_head_));
        waiters_head_ = 0;
    }
}

void DLedgerServer::fail_waiters_above(int64_t offset, store::PutMessageStatus status) {
    std::vector<Waiter> failed;
    {
        MutexLock l(waiters_mu_);
        take_waiters_above(offset, &failed);
    }
    for (Waiter& w : failed) {
        w.done(status);
    }
}

void DLedgerServer::expire_waiters() {
    const TimePoint now = clock_.now();
    std::vector<Waiter> expired;
    {
        MutexLock l(waiters_mu_);
        size_t kept = waiters_head_;
        for (size_t i = waiters_head_; i < waiters_.size(); ++i) {
            if (waiters_[i].deadline <= now) {
                expired.push_back(std::move(waiters_[i]));
            } else {
                if (kept != i) {
                    waiters_[kept] = std::move(waiters_[i]);
                }
                ++kept;
            }
        }
        waiters_.erase(waiters_.begin() + static_cast<ptrdiff_t>(kept), waiters_.end());
    }
    for (Waiter& w : expired) {
        w.done(store::PutMessageStatus::kFlushSlaveTimeout);
    }
}

void DLedgerServer::step_down_writes() {
    writable_.store(false);
    // Puts that passed begin_put() finish their append (and register their waiter) first.
    const auto give_up = SteadyClock::now() + std::chrono::seconds(10);
    while (in_flight_puts_.load() > 0 && SteadyClock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    const int64_t entry_end = log_.end_offset();
    const int64_t cl_end = store_.commit_log().max_offset().value();
    if (cl_end > entry_end) {
        // Written here, never proposed: no other peer has them. Not stored, say so.
        fail_waiters_above(entry_end, store::PutMessageStatus::kServiceNotAvailable);
        if (Status st = store_.truncate_log(store::PhysicalOffset(entry_end)); !st.is_ok()) {
            spdlog::error("DLedger {}: cannot cut the unreplicated tail at {}: {}",
                          config_.self_id, entry_end, st.message());
        } else {
            MutexLock l(mu_);
            truncated_bytes_ += cl_end - entry_end;
        }
    }
    // Proposed, not committed: a new leader may still commit them; the outcome is unknown.
    fail_waiters_above(committed_end_.load(), store::PutMessageStatus::kFlushSlaveTimeout);
}

void DLedgerServer::on_role_change(raft::Role was) {
    const raft::Role now = node_->role();
    if (was == raft::Role::kLeader && now != raft::Role::kLeader) {
        step_down_writes();
    }
    storage_.set_leader_mode(now == raft::Role::kLeader);
    const DLedgerPeer* leader = config_.find(node_->leader());
    spdlog::info("DLedger {}: {} in term {} (leader {})", config_.self_id, raft::role_name(now),
                 node_->term(), leader != nullptr ? leader->id : "unknown");
    RoleListener listener;
    RoleInfo info;
    {
        MutexLock l(mu_);
        if (now == raft::Role::kLeader && was != raft::Role::kLeader) {
            ++elections_won_;
        }
        role_info_.role = now;
        role_info_.term = node_->term();
        role_info_.leader_id = leader != nullptr ? leader->id : "";
        role_info_.writable = writable_.load();
        info = role_info_;
        listener = listener_;
    }
    if (listener) {
        listener(info);
    }
}

void DLedgerServer::maybe_become_writable() {
    if (closing_.load() || writable_.load() || node_->role() != raft::Role::kLeader ||
        node_->commit_index() != node_->last_index() ||
        committed_end_.load() != log_.end_offset() ||
        store_.dispatched_offset().value() < committed_end_.load()) {
        return;
    }
    const int64_t cl_end = store_.commit_log().max_offset().value();
    if (cl_end != log_.end_offset()) {
        spdlog::error("DLedger {}: CommitLog ends at {} but the log at {}; not accepting writes",
                      config_.self_id, cl_end, log_.end_offset());
        return;
    }
    store_.reload_queue_offsets();
    writable_.store(true);
    spdlog::info("DLedger {}: leader of term {} is writable (log committed and dispatched to {})",
                 config_.self_id, node_->term(), cl_end);
    RoleListener listener;
    RoleInfo info;
    {
        MutexLock l(mu_);
        role_info_.writable = true;
        info = role_info_;
        listener = listener_;
    }
    if (listener) {
        listener(info);
    }
}

void DLedgerServer::publish_status() {
    std::vector<PeerStatus> peers;
    // Every role: nothing this peer has not yet committed and dispatched (a follower catching
    // up writes segments that are already expired when fileReservedTime is short).
    int64_t floor = std::min(committed_end_.load(), store_.dispatched_offset().value());
    if (node_->role() == raft::Role::kLeader) {
        for (const DLedgerPeer& p : config_.peers) {
            const bool self = p.node == node_->id();
            raft::LogIndex match = self ? node_->stable_index() : node_->match_index(p.node);
            if (match > log_.last_index()) {
                match = log_.last_index();
            }
            peers.push_back({p.id, match.value(), log_.end_of(match)});
            if (!self && !node_->behind_log(p.node)) {
                floor = std::min(floor, log_.end_of(match));
            }
        }
    }
    retention_floor_.store(floor, std::memory_order_relaxed);
    const auto behind = static_cast<int64_t>(node_->followers_behind_log());
    MutexLock l(mu_);
    followers_behind_log_ = behind;
    last_index_pub_ = node_->last_index().value();
    commit_index_pub_ = node_->commit_index().value();
    peers_status_ = std::move(peers);
}

}  // namespace comet::dledger
