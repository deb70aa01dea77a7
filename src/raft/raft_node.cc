#include "raft/raft_node.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>

#include "raft/ack_quorum.h"

namespace comet::raft {

std::string_view role_name(Role r) {
    switch (r) {
        case Role::kFollower:
            return "Follower";
        case Role::kPreCandidate:
            return "PreCandidate";
        case Role::kCandidate:
            return "Candidate";
        case Role::kLeader:
            return "Leader";
    }
    return "Unknown";
}

namespace {

int to_ticks(int ms, int tick_ms) { return std::max(1, (ms + tick_ms - 1) / tick_ms); }

}  // namespace

Result<std::unique_ptr<RaftNode>> RaftNode::open(const RaftConfig& config, LogStorage* storage,
                                                 Rng* rng) {
    if (storage == nullptr || rng == nullptr) {
        return Status::error(Errc::kInvalidArgument, "raft: storage and rng are required");
    }
    if (config.id == kNoNode) {
        return Status::error(Errc::kInvalidArgument, "raft: node id 0 is reserved");
    }
    std::vector<NodeId> sorted = config.voters;
    std::sort(sorted.begin(), sorted.end());
    if (sorted.empty() || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end() ||
        sorted.front() == kNoNode) {
        return Status::error(Errc::kInvalidArgument,
                             "raft: voters must be distinct non-zero ids, got {}", sorted.size());
    }
    if (!std::binary_search(sorted.begin(), sorted.end(), config.id)) {
        return Status::error(Errc::kInvalidArgument, "raft: node {} is not among the voters",
                             config.id);
    }
    if (config.tick_interval_ms <= 0 || config.heartbeat_interval_ms <= 0 ||
        config.election_timeout_min_ms > config.election_timeout_max_ms ||
        config.heartbeat_interval_ms >= config.election_timeout_min_ms) {
        return Status::error(Errc::kInvalidArgument,
                             "raft: need 0 < heartbeat ({} ms) < election timeout min ({} ms) <= "
                             "max ({} ms), tick {} ms",
                             config.heartbeat_interval_ms, config.election_timeout_min_ms,
                             config.election_timeout_max_ms, config.tick_interval_ms);
    }
    if (config.max_entries_per_append == 0 || config.max_inflight_appends == 0 ||
        config.max_snapshot_chunk_bytes == 0) {
        return Status::error(Errc::kInvalidArgument,
                             "raft: max_entries_per_append, max_inflight_appends and "
                             "max_snapshot_chunk_bytes must be > 0");
    }
    if (config.preferred_leader != kNoNode &&
        !std::binary_search(sorted.begin(), sorted.end(), config.preferred_leader)) {
        return Status::error(Errc::kInvalidArgument, "raft: preferred leader {} is not a voter",
                             config.preferred_leader);
    }
    auto node = std::unique_ptr<RaftNode>(new RaftNode(config, storage, rng));
    node->config_.voters = std::move(sorted);
    return node;
}

RaftNode::RaftNode(const RaftConfig& config, LogStorage* storage, Rng* rng)
    : config_(config),
      storage_(storage),
      rng_(rng),
      election_min_ticks_(to_ticks(config.election_timeout_min_ms, config.tick_interval_ms)),
      election_max_ticks_(to_ticks(config.election_timeout_max_ms, config.tick_interval_ms)),
      heartbeat_ticks_(to_ticks(config.heartbeat_interval_ms, config.tick_interval_ms)),
      recovering_(config.lost_durable_entries) {
    const HardState hs = storage_->hard_state();
    term_ = hs.term;
    voted_for_ = hs.voted_for;
    const LogIndex last = storage_->last_index();
    commit_ = std::min(hs.commit, last);
    // The snapshot holds committed, applied state (the driver restored it before open()).
    applied_ = std::max(std::min(config.applied, last), storage_->snapshot().index);
    commit_ = std::max(commit_, applied_);
    stable_ = last;
    become_follower(term_, kNoNode, "start");
}

// ---------------------------------------------------------------------------------------------
// Role changes. Only these functions assign role_.

void RaftNode::reset(Term term) {
    if (term != term_) {
        COMET_CHECK(term > term_, "raft[{}]: term going back from {} to {}", id(), term_, term);
        term_ = term;
        voted_for_ = kNoNode;
        save_hard_state(true);
    }
    leader_ = kNoNode;
    election_elapsed_ = 0;
    heartbeat_elapsed_ = 0;
    randomized_timeout_ = static_cast<int>(rng_->uniform(election_min_ticks_, election_max_ticks_));
    votes_.clear();
    progress_.clear();
    transferee_ = kNoNode;
}

void RaftNode::become_follower(Term term, NodeId leader, std::string_view reason) {
    const Role old = role_;
    const Term old_term = term_;
    reset(term);
    role_ = Role::kFollower;
    leader_ = leader;
    if (old != Role::kFollower || old_term != term_ || reason == "start") {
        spdlog::info("raft[{}] term {} became Follower (was {} term {}, leader {}): {}", id(),
                     term_, role_name(old), old_term, leader, reason);
    }
}

void RaftNode::become_pre_candidate(std::string_view reason) {
    COMET_CHECK(role_ != Role::kLeader, "raft[{}]: leader cannot pre-campaign", id());
    // Keeps term and vote: a pre-vote changes nothing durable (thesis §9.6).
    votes_.clear();
    leader_ = kNoNode;
    election_elapsed_ = 0;
    randomized_timeout_ = static_cast<int>(rng_->uniform(election_min_ticks_, election_max_ticks_));
    role_ = Role::kPreCandidate;
    spdlog::info("raft[{}] term {} became PreCandidate: {}", id(), term_, reason);
}

void RaftNode::become_candidate(std::string_view reason) {
    COMET_CHECK(role_ != Role::kLeader, "raft[{}]: leader cannot campaign", id());
    reset(term_ + 1);
    voted_for_ = id();
    save_hard_state(true);
    role_ = Role::kCandidate;
    spdlog::info("raft[{}] term {} became Candidate: {}", id(), term_, reason);
}

void RaftNode::become_leader() {
    COMET_CHECK(role_ == Role::kCandidate, "raft[{}]: only a candidate becomes leader", id());
    COMET_CHECK(voted_for_ == id(), "raft[{}]: leader of term {} voted for {}", id(), term_,
                voted_for_);
    reset(term_);
    role_ = Role::kLeader;
    leader_ = id();
    const LogIndex last = storage_->last_index();
    for (NodeId peer : config_.voters) {
        if (peer != id()) {
            Progress& pr = progress_[peer];
            pr.next = last + 1;
            pr.match = LogIndex(0);
        }
    }
    spdlog::info("raft[{}] term {} became Leader (last index {}, commit {})", id(), term_, last,
                 commit_);
    // A no-op of the new term lets the leader commit entries of earlier terms (§5.4.2, §8).
    Entry noop{term_, last + 1, EntryType::kNoOp, {}};
    if (!append_entries(std::span<const Entry>(&noop, 1))) {
        return;
    }
    bcast_appends(/*force=*/false);
}

void RaftNode::campaign(bool pre_vote, bool transfer, std::string_view reason) {
    const bool pre = pre_vote && !transfer;
    if (pre) {
        become_pre_candidate(reason);
    } else {
        become_candidate(reason);
    }
    votes_[id()] = true;
    const LogIndex last = storage_->last_index();
    const Term lt = last_term();
    for (NodeId peer : config_.voters) {
        if (peer == id()) {
            continue;
        }
        Message m;
        m.type = pre ? MessageType::kPreVote : MessageType::kVote;
        m.from = id();
        m.to = peer;
        m.term = pre ? term_ + 1 : term_;
        m.index = last;
        m.log_term = lt;
        m.transfer = transfer;
        if (pre) {
            send(std::move(m));
        } else {
            // Depends on the durable self vote for this term.
            send_after_persist(std::move(m));
        }
    }
    tally_votes();
}

void RaftNode::tally_votes() {
    if (role_ != Role::kPreCandidate && role_ != Role::kCandidate) {
        return;
    }
    size_t granted = 0;
    size_t rejected = 0;
    for (const auto& [peer, g] : votes_) {
        (g ? granted : rejected) += 1;
    }
    const size_t q = majority(config_.voters.size());
    if (granted >= q) {
        if (role_ == Role::kPreCandidate) {
            campaign(/*pre_vote=*/false, /*transfer=*/false, "pre-vote won");
        } else if (persisted_seq_ + 1 >= next_seq_ && !dirty_) {
            // The self vote is durable (always true once grants arrive, because vote requests
            // leave only after persistence; checked for single-voter groups).
            become_leader();
        }
    } else if (rejected >= q) {
        become_follower(term_, kNoNode,
                        role_ == Role::kPreCandidate ? "pre-vote denied by a majority"
                                                     : "vote denied by a majority");
    }
}

// ---------------------------------------------------------------------------------------------
// Events.

Status RaftNode::tick() {
    if (!failed_.is_ok()) {
        return failed_;
    }
    ticks_ += 1;
    if (role_ == Role::kLeader) {
        tick_leader();
        stop_if_failed();
        return failed_;
    }
    election_elapsed_ += 1;
    if (election_elapsed_ >= randomized_timeout_ && recovering_) {
        election_elapsed_ = 0;  // lost durable entries: wait for a leader to repair the log
    } else if (election_elapsed_ >= randomized_timeout_) {
        campaign(
            config_.pre_vote, /*transfer=*/false,
            fmt::format("election timeout after {} ticks (leader {})", election_elapsed_, leader_));
    }
    stop_if_failed();
    return failed_;
}

void RaftNode::tick_leader() {
    COMET_CHECK(role_ == Role::kLeader, "raft[{}]: tick_leader as {}", id(), role_name(role_));
    election_elapsed_ += 1;
    if (election_elapsed_ >= election_min_ticks_) {
        election_elapsed_ = 0;
        if (config_.check_quorum) {
            size_t active = 1;
            for (auto& [peer, pr] : progress_) {
                active += pr.recent_active ? 1 : 0;
                pr.recent_active = false;
            }
            if (active < majority(config_.voters.size())) {
                become_follower(term_, kNoNode,
                                fmt::format("check-quorum failed: heard from {} of {} voters "
                                            "in an election timeout",
                                            active, config_.voters.size()));
                return;
            }
        }
        if (transferee_ != kNoNode) {
            spdlog::info("raft[{}] term {} leadership transfer to {} timed out", id(), term_,
                         transferee_);
            transferee_ = kNoNode;
        }
    }
    heartbeat_elapsed_ += 1;
    if (heartbeat_elapsed_ >= heartbeat_ticks_) {
        heartbeat_elapsed_ = 0;
        bcast_heartbeat();
        maybe_hand_to_preferred();
    }
}

Status RaftNode::step(const Message& m) {
    if (!failed_.is_ok()) {
        return failed_;
    }
    Status st = step_message(m);
    stop_if_failed();
    return st;
}

Status RaftNode::step_message(const Message& m) {
    if (m.to != id() || !is_voter(m.from) || m.from == id()) {
        return Status::error(Errc::kInvalidArgument, "raft[{}]: misaddressed message {}", id(),
                             describe(m));
    }
    if (m.term > term_) {
        if (!observe_higher_term(m)) {
            return Status::ok();
        }
    } else if (m.term < term_) {
        answer_stale_term(m);
        return Status::ok();
    }

    switch (m.type) {
        case MessageType::kPreVote:
        case MessageType::kVote:
            handle_vote_request(m);
            break;
        case MessageType::kPreVoteResponse:
            handle_pre_vote_response(m);
            break;
        case MessageType::kVoteResponse:
            handle_vote_response(m);
            break;
        case MessageType::kAppend:
        case MessageType::kHeartbeat:
        case MessageType::kInstallSnapshot:
            COMET_RETURN_IF_ERROR(handle_from_leader(m));
            break;
        case MessageType::kInstallSnapshotResponse:
            if (role_ == Role::kLeader) {
                handle_snapshot_response(m);
            }
            break;
        case MessageType::kAppendResponse:
            if (role_ == Role::kLeader) {
                handle_append_response(m);
            }
            break;
        case MessageType::kHeartbeatResponse:
            if (role_ == Role::kLeader) {
                handle_heartbeat_response(m);
            }
            break;
        case MessageType::kTimeoutNow:
            handle_timeout_now(m);
            break;
    }
    return failed_;
}

bool RaftNode::observe_higher_term(const Message& m) {
    const bool vote_request = m.type == MessageType::kPreVote || m.type == MessageType::kVote;
    if (vote_request && config_.check_quorum && !m.transfer && leader_ != kNoNode &&
        election_elapsed_ < election_min_ticks_) {
        // Leader lease (thesis §4.2.3): we heard from a live leader within the minimum
        // election timeout, so this candidate must not disrupt it.
        return false;
    }
    if (m.type == MessageType::kPreVote || (m.type == MessageType::kPreVoteResponse && !m.reject)) {
        // A pre-vote never changes our term; a granted pre-vote response carries the term
        // the pre-candidate asked for.
        return true;
    }
    const bool from_leader = m.type == MessageType::kAppend || m.type == MessageType::kHeartbeat ||
                             m.type == MessageType::kInstallSnapshot ||
                             m.type == MessageType::kTimeoutNow;
    become_follower(
        m.term, from_leader ? m.from : kNoNode,
        fmt::format("saw term {} in {} from {}", m.term, message_type_name(m.type), m.from));
    return true;
}

void RaftNode::answer_stale_term(const Message& m) {
    if (m.type == MessageType::kAppend || m.type == MessageType::kHeartbeat ||
        m.type == MessageType::kInstallSnapshot) {
        // A stale leader (e.g. back from a partition) learns the new term and steps down.
        // Needed with pre-vote/check-quorum, where our term may never reach it otherwise.
        Message r = reply_to(m, MessageType::kAppendResponse);
        r.reject = true;
        r.index = m.index;
        send(std::move(r));
    } else if (m.type == MessageType::kPreVote) {
        Message r = reply_to(m, MessageType::kPreVoteResponse);
        r.reject = true;
        send(std::move(r));
    }
}

void RaftNode::handle_pre_vote_response(const Message& m) {
    if (role_ == Role::kPreCandidate && m.term == term_ + 1) {
        votes_.emplace(m.from, !m.reject);
        tally_votes();
    } else if (role_ == Role::kPreCandidate && m.reject && m.term == term_) {
        votes_.emplace(m.from, false);
        tally_votes();
    }
}

void RaftNode::handle_vote_response(const Message& m) {
    if (role_ == Role::kCandidate && m.term == term_) {
        votes_.emplace(m.from, !m.reject);
        tally_votes();
    }
}

Status RaftNode::handle_from_leader(const Message& m) {
    if (role_ == Role::kLeader) {
        spdlog::error("raft[{}] term {}: second leader {} in the same term: {}", id(), term_,
                      m.from, describe(m));
        return Status::error(Errc::kInternal, "raft[{}]: two leaders in term {}", id(), term_);
    }
    if (role_ != Role::kFollower) {
        become_follower(term_, m.from,
                        fmt::format("leader {} of term {} is active", m.from, term_));
    }
    leader_ = m.from;
    election_elapsed_ = 0;
    if (m.type == MessageType::kAppend) {
        handle_append(m);
    } else if (m.type == MessageType::kInstallSnapshot) {
        handle_install_snapshot(m);
    } else {
        handle_heartbeat(m);
    }
    return Status::ok();
}

void RaftNode::handle_timeout_now(const Message& m) {
    if (role_ == Role::kFollower) {
        leader_ = m.from;
        campaign(/*pre_vote=*/false, /*transfer=*/true,
                 fmt::format("TimeoutNow from leader {}", m.from));
    }
}

void RaftNode::handle_vote_request(const Message& m) {
    const bool pre = m.type == MessageType::kPreVote;
    // One vote per term (§5.2); a pre-vote for a future term binds nothing.
    const bool can_vote = voted_for_ == m.from || (voted_for_ == kNoNode && leader_ == kNoNode) ||
                          (pre && m.term > term_);
    // Election restriction (§5.4.1): candidate's log at least as up to date as ours.
    const Term lt = last_term();
    const bool up_to_date =
        m.log_term > lt || (m.log_term == lt && m.index >= storage_->last_index());
    Message r = reply_to(m, pre ? MessageType::kPreVoteResponse : MessageType::kVoteResponse);
    if (can_vote && up_to_date && !recovering_) {
        if (pre) {
            r.term = m.term;
            send(std::move(r));
        } else {
            election_elapsed_ = 0;
            voted_for_ = m.from;
            save_hard_state(true);
            spdlog::info("raft[{}] term {} voted for {}", id(), term_, m.from);
            send_after_persist(std::move(r));
        }
        return;
    }
    r.reject = true;
    send(std::move(r));
}

void RaftNode::handle_append(const Message& m) {
    COMET_CHECK(role_ == Role::kFollower, "raft[{}]: append as {}", id(), role_name(role_));
    // Validate the batch: contiguous after prev, terms non-decreasing and within the leader's.
    bool valid = m.index.value() >= 0 && m.log_term <= m.term;
    Term prev_term = m.log_term;
    for (size_t i = 0; valid && i < m.entries.size(); ++i) {
        const Entry& e = m.entries[i];
        valid = e.index == m.index + static_cast<int64_t>(i + 1) && e.term >= prev_term &&
                e.term <= m.term;
        prev_term = e.term;
    }
    if (!valid) {
        spdlog::warn("raft[{}] term {}: dropping malformed append {}", id(), term_, describe(m));
        return;
    }
    Message r = reply_to(m, MessageType::kAppendResponse);
    if (m.index < commit_) {
        // Everything up to commit is known to match: tell the leader where we are.
        r.index = commit_;
        send_after_persist(std::move(r));
        return;
    }
    const std::optional<Term> local = storage_->term_at(m.index);
    if (!local.has_value() || *local != m.log_term) {
        // Fast back-off: report the conflicting term and the first index we hold of it, or our
        // log end when prev is beyond it.
        r.reject = true;
        r.index = m.index;
        const LogIndex last = storage_->last_index();
        if (!local.has_value()) {
            r.reject_hint = last + 1;
        } else {
            r.conflict_term = *local;
            LogIndex first = m.index;
            while (first - 1 > commit_ && term_at(first - 1) == *local) {
                first = first - 1;
            }
            r.reject_hint = first;
        }
        send(std::move(r));
        return;
    }
    // prev matches: skip entries we already have, truncate at the first conflict (§5.3).
    size_t skip = 0;
    const LogIndex last = storage_->last_index();
    while (skip < m.entries.size() && m.entries[skip].index <= last) {
        const Entry& e = m.entries[skip];
        if (term_at(e.index) != e.term) {
            COMET_CHECK(e.index > commit_,
                        "raft[{}] term {}: conflict at {} (term {} vs {}) at or below commit {}",
                        id(), term_, e.index, term_at(e.index), e.term, commit_);
            spdlog::info(
                "raft[{}] term {} truncating divergent suffix from {} (had term {}, "
                "leader {} has {})",
                id(), term_, e.index, term_at(e.index), m.from, e.term);
            if (!truncate_from(e.index)) {
                return;
            }
            break;
        }
        ++skip;
    }
    if (skip < m.entries.size()) {
        if (!append_entries(std::span<const Entry>(m.entries).subspan(skip))) {
            return;
        }
    }
    const LogIndex last_new = m.index + static_cast<int64_t>(m.entries.size());
    const LogIndex new_commit = std::min(m.commit, last_new);
    if (new_commit > commit_) {
        commit_ = new_commit;
        save_hard_state(false);
    }
    r.index = last_new;
    send_after_persist(std::move(r));
}

void RaftNode::handle_install_snapshot(const Message& m) {
    COMET_CHECK(role_ == Role::kFollower, "raft[{}]: snapshot as {}", id(), role_name(role_));
    const auto chunk = static_cast<int64_t>(m.data.size());
    if (m.index.value() <= 0 || m.log_term.value() <= 0 || m.log_term > m.term ||
        m.snapshot_offset < 0 || m.snapshot_size < m.snapshot_offset + chunk ||
        m.snapshot_done != (m.snapshot_offset + chunk == m.snapshot_size)) {
        spdlog::warn("raft[{}] term {}: dropping malformed snapshot chunk {}", id(), term_,
                     describe(m));
        return;
    }
    Message r = reply_to(m, MessageType::kInstallSnapshotResponse);
    r.index = m.index;
    if (m.index <= commit_) {
        // Our log already holds everything the snapshot covers (committed entries match).
        incoming_.reset();
        r.snapshot_done = true;
        r.snapshot_offset = m.snapshot_size;
        r.commit = commit_;
        send_after_persist(std::move(r));
        return;
    }
    const bool same = incoming_.has_value() && incoming_->index == m.index &&
                      incoming_->term == m.log_term && incoming_->size == m.snapshot_size;
    if (m.snapshot_offset == 0) {
        incoming_ = Incoming{m.index, m.log_term, m.snapshot_size, std::string(m.data.view())};
    } else if (same && static_cast<int64_t>(incoming_->bytes.size()) == m.snapshot_offset) {
        incoming_->bytes.append(m.data.view());
    } else {
        // Out of order (a lost or duplicated chunk, or we restarted): say what we hold.
        r.reject = true;
        r.snapshot_offset = same ? static_cast<int64_t>(incoming_->bytes.size()) : 0;
        send(std::move(r));
        return;
    }
    if (!m.snapshot_done) {
        r.snapshot_offset = static_cast<int64_t>(incoming_->bytes.size());
        send(std::move(r));
        return;
    }
    auto owner = std::make_shared<const std::string>(std::move(incoming_->bytes));
    incoming_.reset();
    Snapshot snap{
        m.index, m.log_term,
        SharedBytes(owner, reinterpret_cast<const uint8_t*>(owner->data()), owner->size())};
    if (Status st = storage_->save_snapshot(snap); !st.is_ok()) {
        fail(std::move(st));
        return;
    }
    const LogIndex last = storage_->last_index();
    spdlog::info(
        "raft[{}] term {}: installed snapshot {} (term {}, {} bytes) from {}; log now "
        "[{}, {}], commit {} -> {}",
        id(), term_, snap.index, snap.term, owner->size(), m.from, storage_->first_index(), last,
        commit_, snap.index);
    // The snapshot is durable; entries kept after it keep their own durability.
    stable_ = std::min(std::max(stable_, snap.index), last);
    for (PersistRequest& p : pending_) {
        p.last_index = std::min(p.last_index, last);
    }
    commit_ = snap.index;
    applied_ = snap.index;
    ready_snapshot_ = std::move(snap);
    save_hard_state(false);
    r.snapshot_done = true;
    r.snapshot_offset = m.snapshot_size;
    r.commit = snap.index;
    send_after_persist(std::move(r));
}

void RaftNode::handle_heartbeat(const Message& m) {
    // The leader sends commit <= our known match, so it is in our log and matches its log --
    // unless our storage lost acknowledged entries: then say so, and the leader resends them.
    if (m.commit > storage_->last_index()) {
        Message r = reply_to(m, MessageType::kAppendResponse);
        r.reject = true;
        r.regressed = true;
        r.index = m.commit;
        r.reject_hint = storage_->last_index() + 1;
        spdlog::warn(
            "raft[{}] term {}: leader {} thinks we hold {} but our log ends at {}: "
            "asking for the lost entries",
            id(), term_, m.from, m.commit, storage_->last_index());
        send(std::move(r));
    }
    if (recovering_ && m.commit <= storage_->last_index() && commit_ >= m.commit) {
        recovering_ = false;
        spdlog::info("raft[{}] term {}: log repaired up to commit {}; voting again", id(), term_,
                     commit_);
    }
    const LogIndex new_commit = std::min(m.commit, storage_->last_index());
    if (new_commit > commit_) {
        commit_ = new_commit;
        save_hard_state(false);
    }
    send(reply_to(m, MessageType::kHeartbeatResponse));
}

void RaftNode::handle_append_response(const Message& m) {
    COMET_CHECK(role_ == Role::kLeader, "raft[{}]: append response as {}", id(), role_name(role_));
    auto it = progress_.find(m.from);
    if (it == progress_.end()) {
        return;
    }
    Progress& pr = it->second;
    pr.recent_active = true;
    if (m.reject && m.regressed && m.reject_hint <= pr.match) {
        on_follower_regressed(m, pr);
    } else if (m.reject) {
        on_append_rejected(m, pr);
    } else {
        on_append_acked(m, pr);
    }
}

// The follower lost entries it had acknowledged: lower what we know it holds. Commit never moves
// back; only later commits count this follower from its real log end.
void RaftNode::on_follower_regressed(const Message& m, Progress& pr) {
    spdlog::warn("raft[{}] term {}: {} lost entries from {} (match was {}); resending", id(), term_,
                 m.from, m.reject_hint, pr.match);
    pr.match = m.reject_hint - 1;
    pr.next = m.reject_hint;
    pr.state = Progress::State::kProbe;
    pr.probe_sent = false;
    pr.inflight.clear();
    send_appends(m.from, /*force=*/true);
}

// The follower's log does not match at m.index: probe again from the follower's hint (§5.3).
void RaftNode::on_append_rejected(const Message& m, Progress& pr) {
    if (pr.state == Progress::State::kSnapshot) {
        return;  // stale: the snapshot decides where the follower goes on
    }
    if (pr.state == Progress::State::kReplicate) {
        if (m.index <= pr.match) {
            return;  // stale
        }
    } else if (m.index != pr.next - 1) {
        return;  // stale: not the probe we are waiting for
    }
    LogIndex next = m.reject_hint;
    if (m.conflict_term.value() > 0) {
        // Skip the follower's whole conflicting term, or past our own entries of it.
        // Our entries below first_index() are in the snapshot (committed, so the follower
        // holds none of a conflicting term there): stop at the snapshot's index.
        const LogIndex floor = storage_->first_index() - 1;
        LogIndex i = std::min(m.index, storage_->last_index());
        while (i > floor && term_at(i) > m.conflict_term) {
            i = i - 1;
        }
        if (i > floor && term_at(i) == m.conflict_term) {
            next = i + 1;
        }
    }
    next = std::min(next, m.index);
    next = std::max(next, pr.match + 1);
    pr.next = next;
    pr.state = Progress::State::kProbe;
    pr.probe_sent = false;
    pr.inflight.clear();
    send_appends(m.from, /*force=*/true);
}

// The follower holds our log up to m.index: advance its progress, the commit index and a
// pending leadership transfer, then send what follows.
void RaftNode::on_append_acked(const Message& m, Progress& pr) {
    const LogIndex last = storage_->last_index();
    if (m.index > last) {
        spdlog::warn("raft[{}] term {}: {} acked {} beyond our last index {}", id(), term_, m.from,
                     m.index, last);
        return;
    }
    if (m.index > pr.match) {
        pr.match = m.index;
    }
    if (pr.next <= pr.match) {
        pr.next = pr.match + 1;
    }
    while (!pr.inflight.empty() && pr.inflight.front().last <= m.index) {
        pr.inflight.pop_front();
    }
    if (pr.state == Progress::State::kProbe) {
        pr.state = Progress::State::kReplicate;
        pr.probe_sent = false;
        pr.next = pr.match + 1;
        pr.inflight.clear();
    }
    maybe_commit();
    if (role_ != Role::kLeader) {
        return;
    }
    if (transferee_ == m.from && pr.match == storage_->last_index()) {
        Message t;
        t.type = MessageType::kTimeoutNow;
        t.from = id();
        t.to = m.from;
        t.term = term_;
        spdlog::info("raft[{}] term {} transferee {} caught up at {}: sending TimeoutNow", id(),
                     term_, m.from, pr.match);
        send(std::move(t));
    }
    send_appends(m.from, /*force=*/false);
}

void RaftNode::handle_heartbeat_response(const Message& m) {
    COMET_CHECK(role_ == Role::kLeader, "raft[{}]: heartbeat response as {}", id(),
                role_name(role_));
    auto it = progress_.find(m.from);
    if (it == progress_.end()) {
        return;
    }
    Progress& pr = it->second;
    pr.recent_active = true;
    if (pr.state == Progress::State::kSnapshot) {
        if (ticks_ - pr.snapshot_sent_tick >= 2 * heartbeat_ticks_) {
            send_snapshot_chunk(m.from, pr);  // the chunk or its answer was lost
        }
        return;
    }
    if (pr.state == Progress::State::kBehindLog) {
        if (pr.next < storage_->first_index()) {
            return;  // still needs deleted entries
        }
        spdlog::info("raft[{}] term {}: {} needs entry {}, which the log holds again: probing",
                     id(), term_, m.from, pr.next);
        pr.state = Progress::State::kProbe;
    }
    pr.probe_sent = false;  // a lost probe is retried once per heartbeat
    if (pr.state == Progress::State::kReplicate && !pr.inflight.empty() &&
        ticks_ - pr.inflight.front().sent_tick >= 2 * heartbeat_ticks_) {
        // The oldest append went unanswered for two heartbeats: assume it was lost.
        pr.state = Progress::State::kProbe;
        pr.next = pr.match + 1;
        pr.inflight.clear();
    }
    if (pr.match < storage_->last_index()) {
        send_appends(m.from, /*force=*/false);
    }
}

Result<LogIndex> RaftNode::propose(std::span<const SharedBytes> payloads) {
    if (!failed_.is_ok()) {
        return failed_;
    }
    if (role_ != Role::kLeader) {
        return Status::error(Errc::kUnavailable, "raft[{}]: not leader (leader is {})", id(),
                             leader_);
    }
    if (transferee_ != kNoNode) {
        return Status::error(Errc::kFailedPrecondition,
                             "raft[{}]: leadership transfer to {} in progress", id(), transferee_);
    }
    if (payloads.empty()) {
        return Status::error(Errc::kInvalidArgument, "raft[{}]: empty proposal", id());
    }
    std::vector<Entry> entries;
    entries.reserve(payloads.size());
    LogIndex idx = storage_->last_index();
    for (const SharedBytes& p : payloads) {
        idx += 1;
        entries.push_back(Entry{term_, idx, EntryType::kNormal, p});
    }
    if (!append_entries(entries)) {
        stop_if_failed();
        return failed_;
    }
    bcast_appends(/*force=*/false);
    stop_if_failed();
    if (!failed_.is_ok()) {
        return failed_;
    }
    return idx;
}

void RaftNode::persisted(uint64_t seq) {
    if (seq <= persisted_seq_ || !failed_.is_ok()) {
        return;
    }
    COMET_CHECK(seq < next_seq_, "raft[{}]: persisted({}) but only {} requested", id(), seq,
                next_seq_ - 1);
    persisted_seq_ = seq;
    while (!pending_.empty() && pending_.front().seq <= seq) {
        stable_ = std::max(stable_, pending_.front().last_index);
        pending_.pop_front();
    }
    while (!held_.empty() && held_.front().seq <= persisted_seq_) {
        outbox_.push_back(std::move(held_.front().msg));
        held_.pop_front();
    }
    if (role_ == Role::kLeader) {
        maybe_commit();
    } else if (role_ == Role::kCandidate) {
        tally_votes();
    }
    stop_if_failed();
}

Status RaftNode::transfer_leadership(NodeId to) {
    if (!failed_.is_ok()) {
        return failed_;
    }
    if (role_ != Role::kLeader) {
        return Status::error(Errc::kUnavailable, "raft[{}]: not leader (leader is {})", id(),
                             leader_);
    }
    if (!is_voter(to)) {
        return Status::error(Errc::kInvalidArgument, "raft[{}]: {} is not a voter", id(), to);
    }
    if (to == id() || transferee_ == to) {
        return Status::ok();
    }
    transferee_ = to;
    election_elapsed_ = 0;  // the transfer gets one election timeout
    Progress& pr = progress_.at(to);
    spdlog::info("raft[{}] term {} transferring leadership to {} (match {}, last {})", id(), term_,
                 to, pr.match, storage_->last_index());
    if (pr.match == storage_->last_index()) {
        Message t;
        t.type = MessageType::kTimeoutNow;
        t.from = id();
        t.to = to;
        t.term = term_;
        send(std::move(t));
    } else {
        // Restart from a fresh probe: a full pipeline to a lagging node may be stuck behind
        // lost messages, and the transfer has only one election timeout.
        pr.state = Progress::State::kProbe;
        pr.next = pr.match + 1;
        pr.inflight.clear();
        pr.probe_sent = false;
        send_appends(to, /*force=*/false);
    }
    stop_if_failed();
    return failed_;
}

void RaftNode::maybe_hand_to_preferred() {
    const NodeId pref = config_.preferred_leader;
    if (role_ != Role::kLeader || pref == kNoNode || pref == id() || transferee_ != kNoNode) {
        return;
    }
    const Progress& pr = progress_.at(pref);
    if (pr.recent_active && pr.match == storage_->last_index()) {
        spdlog::info("raft[{}] term {} handing leadership to preferred leader {}", id(), term_,
                     pref);
        (void)transfer_leadership(pref);
    }
}

// ---------------------------------------------------------------------------------------------
// Replication.

void RaftNode::send_appends(NodeId to, bool force) {
    Progress& pr = progress_.at(to);
    if (!send_one_append(to, pr, force)) {
        return;
    }
    while (pr.state == Progress::State::kReplicate && send_one_append(to, pr, false)) {
    }
}

bool RaftNode::send_one_append(NodeId to, Progress& pr, bool force) {
    const LogIndex last = storage_->last_index();
    if (pr.state == Progress::State::kSnapshot) {
        return false;
    }
    if (pr.next < storage_->first_index() && storage_->snapshot().index.value() == 0) {
        leave_behind(to, pr);
        return false;
    }
    if (pr.next < storage_->first_index()) {
        // The entries the follower needs are compacted away: send the snapshot (§7).
        pr.state = Progress::State::kSnapshot;
        pr.inflight.clear();
        pr.probe_sent = false;
        pr.snapshot_index = LogIndex(0);
        spdlog::info(
            "raft[{}] term {}: {} needs index {} but the log starts at {}: sending "
            "snapshot",
            id(), term_, to, pr.next, storage_->first_index());
        send_snapshot_chunk(to, pr);
        return false;
    }
    if (pr.state == Progress::State::kProbe) {
        if (pr.probe_sent) {
            return false;
        }
    } else {
        if (pr.inflight.size() >= config_.max_inflight_appends) {
            return false;
        }
        if (pr.next > last && !force) {
            return false;
        }
    }
    Message m;
    m.type = MessageType::kAppend;
    m.from = id();
    m.to = to;
    m.term = term_;
    m.index = pr.next - 1;
    m.log_term = term_at(m.index);
    m.commit = commit_;
    if (pr.next <= last) {
        const LogIndex hi =
            std::min(last, pr.next + static_cast<int64_t>(config_.max_entries_per_append) - 1);
        Status st = storage_->read(pr.next, hi, config_.max_bytes_per_append, &m.entries);
        if (!st.is_ok() && st.code() == Errc::kNotFound && pr.next < storage_->first_index()) {
            // Retention deleted them between first_index() and the read: as above.
            leave_behind(to, pr);
            return false;
        }
        if (!st.is_ok()) {
            // Entries the log says it holds cannot be read: the storage is broken.
            fail(std::move(st));
            return false;
        }
    }
    if (pr.state == Progress::State::kProbe) {
        pr.probe_sent = true;
    } else if (!m.entries.empty()) {
        pr.next = m.entries.back().index + 1;
        pr.inflight.push_back({m.entries.back().index, ticks_});
    }
    send(std::move(m));
    return true;
}

void RaftNode::leave_behind(NodeId to, Progress& pr) {
    if (pr.state != Progress::State::kBehindLog) {
        spdlog::error(
            "raft[{}] term {}: {} needs entry {} but the log starts at {} and keeps no snapshot "
            "(retention deleted it): {} cannot be caught up and is left behind; the group goes "
            "on without it (re-seed its store from a peer)",
            id(), term_, to, pr.next, storage_->first_index(), to);
    }
    pr.state = Progress::State::kBehindLog;
    pr.inflight.clear();
    pr.probe_sent = false;
}

size_t RaftNode::followers_behind_log() const {
    size_t n = 0;
    for (const auto& [peer, pr] : progress_) {
        n += pr.state == Progress::State::kBehindLog ? 1 : 0;
    }
    return n;
}

bool RaftNode::behind_log(NodeId peer) const {
    auto it = progress_.find(peer);
    return it != progress_.end() && it->second.state == Progress::State::kBehindLog;
}

void RaftNode::send_snapshot_chunk(NodeId to, Progress& pr) {
    COMET_CHECK(pr.state == Progress::State::kSnapshot,
                "raft[{}]: snapshot chunk to {} in state "
                "{}",
                id(), to, static_cast<int>(pr.state));
    const Snapshot snap = storage_->snapshot();
    COMET_CHECK(snap.index.value() > 0, "raft[{}]: first index {} but no snapshot", id(),
                storage_->first_index());
    if (snap.index != pr.snapshot_index) {
        pr.snapshot_index = snap.index;
        pr.snapshot_offset = 0;
    }
    const auto size = static_cast<int64_t>(snap.data.size());
    const int64_t offset = std::min(pr.snapshot_offset, size);
    const int64_t n =
        std::min(size - offset, static_cast<int64_t>(config_.max_snapshot_chunk_bytes));
    Message m;
    m.type = MessageType::kInstallSnapshot;
    m.from = id();
    m.to = to;
    m.term = term_;
    m.index = snap.index;
    m.log_term = snap.term;
    m.commit = commit_;
    m.snapshot_offset = offset;
    m.snapshot_size = size;
    m.snapshot_done = offset + n == size;
    m.data = snap.data.slice(static_cast<size_t>(offset), static_cast<size_t>(n));
    pr.snapshot_sent_tick = ticks_;
    send(std::move(m));
}

void RaftNode::handle_snapshot_response(const Message& m) {
    COMET_CHECK(role_ == Role::kLeader, "raft[{}]: snapshot response as {}", id(),
                role_name(role_));
    auto it = progress_.find(m.from);
    if (it == progress_.end()) {
        return;
    }
    Progress& pr = it->second;
    pr.recent_active = true;
    if (pr.state != Progress::State::kSnapshot || m.index != pr.snapshot_index) {
        return;  // stale: a chunk of an earlier transfer
    }
    if (m.snapshot_done && !m.reject) {
        // m.commit is durable on the follower and matches our log (a committed prefix).
        const LogIndex held = std::min(m.commit, storage_->last_index());
        spdlog::info("raft[{}] term {}: {} installed snapshot {} (match {})", id(), term_, m.from,
                     pr.snapshot_index, held);
        pr.match = std::max(pr.match, held);
        pr.next = pr.match + 1;
        pr.state = Progress::State::kProbe;
        pr.probe_sent = false;
        maybe_commit();
        if (role_ == Role::kLeader) {
            send_appends(m.from, /*force=*/false);
        }
        return;
    }
    if (!m.reject && m.snapshot_offset <= pr.snapshot_offset) {
        return;  // a duplicate answer to a chunk we already moved past
    }
    pr.snapshot_offset = m.snapshot_offset;  // next chunk, or where the follower wants us back
    send_snapshot_chunk(m.from, pr);
}

void RaftNode::bcast_appends(bool force) {
    for (NodeId peer : config_.voters) {
        if (!failed_.is_ok()) {
            return;
        }
        if (peer != id()) {
            send_appends(peer, force);
        }
    }
}

void RaftNode::bcast_heartbeat() {
    for (const auto& [peer, pr] : progress_) {
        Message m;
        m.type = MessageType::kHeartbeat;
        m.from = id();
        m.to = peer;
        m.term = term_;
        m.commit = std::min(pr.match, commit_);
        send(std::move(m));
    }
}

void RaftNode::maybe_commit() {
    COMET_CHECK(role_ == Role::kLeader, "raft[{}]: maybe_commit as {}", id(), role_name(role_));
    std::array<int64_t, 16> small{};
    std::vector<int64_t> big;
    std::span<int64_t> acked;
    if (config_.voters.size() <= small.size()) {
        acked = std::span<int64_t>(small.data(), config_.voters.size());
    } else {
        big.resize(config_.voters.size());
        acked = big;
    }
    size_t n = 0;
    for (NodeId v : config_.voters) {
        // Our own log counts only once durable.
        acked[n++] = v == id() ? stable_.value() : progress_.at(v).match.value();
    }
    const LogIndex q(kth_highest(acked, majority(config_.voters.size())));
    // §5.4.2: only an entry of the current term is committed by counting replicas.
    if (q > commit_ && term_at(q) == term_) {
        commit_ = q;
        save_hard_state(false);
        bcast_appends(/*force=*/true);  // tell followers the new commit index
        if (config_.preferred_leader != kNoNode) {
            maybe_hand_to_preferred();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Storage and outbox helpers.

bool RaftNode::append_entries(std::span<const Entry> entries) {
    Status st = storage_->append(entries);
    if (!st.is_ok()) {
        fail(std::move(st));
        return false;
    }
    dirty_ = true;
    return true;
}

bool RaftNode::truncate_from(LogIndex from) {
    COMET_CHECK(from > commit_, "raft[{}]: truncating committed entries from {} (commit {})", id(),
                from, commit_);
    Status st = storage_->truncate_suffix(from);
    if (!st.is_ok()) {
        fail(std::move(st));
        return false;
    }
    stable_ = std::min(stable_, from - 1);
    for (PersistRequest& p : pending_) {
        p.last_index = std::min(p.last_index, from - 1);
    }
    dirty_ = true;
    return true;
}

void RaftNode::save_hard_state(bool needs_sync) {
    Status st = storage_->save_hard_state(HardState{term_, voted_for_, commit_});
    if (!st.is_ok()) {
        fail(std::move(st));
        return;
    }
    if (needs_sync) {
        dirty_ = true;
    }
}

Term RaftNode::last_term() const { return term_at(storage_->last_index()); }

Term RaftNode::term_at(LogIndex i) const {
    const std::optional<Term> t = storage_->term_at(i);
    COMET_CHECK(t.has_value(), "raft[{}]: no term at index {} (last {})", id(), i,
                storage_->last_index());
    return *t;
}

void RaftNode::send(Message m) { outbox_.push_back(std::move(m)); }

void RaftNode::send_after_persist(Message m) {
    const uint64_t need = dirty_ ? next_seq_ : next_seq_ - 1;
    if (need <= persisted_seq_) {
        outbox_.push_back(std::move(m));
        return;
    }
    held_.push_back(Held{need, std::move(m)});
}

Message RaftNode::reply_to(const Message& m, MessageType type) const {
    Message r;
    r.type = type;
    r.from = id();
    r.to = m.from;
    r.term = term_;
    return r;
}

void RaftNode::fail(Status st) {
    if (failed_.is_ok()) {
        spdlog::error("raft[{}] term {} ({}): storage failed, node stops: {}", id(), term_,
                      role_name(role_), st.to_string());
        failed_ = std::move(st);
    }
}

void RaftNode::stop_if_failed() {
    if (failed_.is_ok() || (role_ == Role::kFollower && leader_ == kNoNode)) {
        return;
    }
    // A node that cannot write its log must not lead (it could acknowledge nothing, and its
    // heartbeats would keep the group from electing another leader) nor follow a leader.
    become_follower(term_, kNoNode, fmt::format("storage failed: {}", failed_.message()));
    incoming_.reset();
}

void RaftNode::fail_storage(Status st) {
    fail(std::move(st));
    stop_if_failed();
}

bool RaftNode::is_voter(NodeId n) const {
    return std::binary_search(config_.voters.begin(), config_.voters.end(), n);
}

LogIndex RaftNode::match_index(NodeId peer) const {
    if (peer == id()) {
        return stable_;
    }
    auto it = progress_.find(peer);
    return it == progress_.end() ? LogIndex(0) : it->second.match;
}

Status RaftNode::compact(LogIndex index, SharedBytes data) {
    if (!failed_.is_ok()) {
        return failed_;
    }
    if (index > applied_) {
        return Status::error(Errc::kInvalidArgument,
                             "raft[{}]: compact at {} beyond the applied index {}", id(), index,
                             applied_);
    }
    const LogIndex floor = storage_->first_index() - 1;
    if (index <= floor) {
        return Status::ok();
    }
    const Snapshot snap{index, term_at(index), std::move(data)};
    if (Status st = storage_->save_snapshot(snap); !st.is_ok()) {
        fail(st);
        stop_if_failed();
        return st;
    }
    stable_ = std::max(stable_, index);
    spdlog::info(
        "raft[{}] term {}: compacted the log up to {} (term {}, {} bytes); log now "
        "[{}, {}]",
        id(), term_, index, snap.term, snap.data.size(), storage_->first_index(),
        storage_->last_index());
    return Status::ok();
}

bool RaftNode::has_ready() const {
    return dirty_ || !outbox_.empty() || commit_ > applied_ || ready_snapshot_.has_value();
}

Ready RaftNode::take_ready() {
    Ready rd;
    if (dirty_) {
        PersistRequest p{next_seq_, storage_->last_index()};
        next_seq_ += 1;
        pending_.push_back(p);
        rd.persist = p;
        dirty_ = false;
    }
    rd.messages = std::move(outbox_);
    outbox_.clear();
    rd.snapshot = std::move(ready_snapshot_);
    ready_snapshot_.reset();
    rd.apply_from = applied_ + 1;
    rd.apply_to = commit_;
    applied_ = std::max(applied_, commit_);
    rd.hard_state = HardState{term_, voted_for_, commit_};
    return rd;
}

void RaftNode::check_invariants() const {
    const LogIndex last = storage_->last_index();
    COMET_CHECK(applied_ <= commit_, "raft[{}]: applied {} > commit {}", id(), applied_, commit_);
    COMET_CHECK(commit_ <= last, "raft[{}]: commit {} > last index {}", id(), commit_, last);
    COMET_CHECK(stable_ <= last, "raft[{}]: stable {} > last index {}", id(), stable_, last);
    COMET_CHECK(applied_ >= storage_->snapshot().index,
                "raft[{}]: applied {} below the snapshot index {}", id(), applied_,
                storage_->snapshot().index);
    COMET_CHECK(last_term() <= term_, "raft[{}]: last entry term {} > current term {}", id(),
                last_term(), term_);
    COMET_CHECK(persisted_seq_ < next_seq_, "raft[{}]: persisted seq {} >= next seq {}", id(),
                persisted_seq_, next_seq_);
    uint64_t prev_seq = 0;
    for (const Held& h : held_) {
        COMET_CHECK(h.seq > persisted_seq_ && h.seq >= prev_seq && h.seq <= next_seq_,
                    "raft[{}]: held message seq {} (persisted {}, next {})", id(), h.seq,
                    persisted_seq_, next_seq_);
        prev_seq = h.seq;
    }
    switch (role_) {
        case Role::kLeader:
            COMET_CHECK(voted_for_ == id() && leader_ == id(),
                        "raft[{}]: leader with vote {} leader {}", id(), voted_for_, leader_);
            COMET_CHECK(progress_.size() + 1 == config_.voters.size(),
                        "raft[{}]: progress for {} peers", id(), progress_.size());
            for (const auto& [peer, pr] : progress_) {
                COMET_CHECK(pr.match <= last && pr.match < pr.next && pr.next <= last + 1,
                            "raft[{}]: peer {} match {} next {} last {}", id(), peer, pr.match,
                            pr.next, last);
                COMET_CHECK(pr.inflight.size() <= config_.max_inflight_appends,
                            "raft[{}]: peer {} has {} appends in flight", id(), peer,
                            pr.inflight.size());
                COMET_CHECK(pr.state != Progress::State::kSnapshot || pr.snapshot_index.value() > 0,
                            "raft[{}]: peer {} in snapshot state without a snapshot", id(), peer);
                COMET_CHECK(pr.state == Progress::State::kReplicate || pr.inflight.empty(),
                            "raft[{}]: probing peer {} with appends in flight", id(), peer);
            }
            break;
        case Role::kCandidate:
            COMET_CHECK(voted_for_ == id(), "raft[{}]: candidate voted for {}", id(), voted_for_);
            COMET_CHECK(progress_.empty(), "raft[{}]: candidate with progress", id());
            break;
        case Role::kPreCandidate:
        case Role::kFollower:
            COMET_CHECK(progress_.empty(), "raft[{}]: {} with progress", id(), role_name(role_));
            COMET_CHECK(transferee_ == kNoNode, "raft[{}]: non-leader transferring", id());
            break;
    }
}

}  // namespace comet::raft
