#include "raft_sim.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

namespace comet::raft::sim {

int64_t g_virtual_now_ms = 0;

namespace {

constexpr int64_t kTickMs = 10;

uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

uint64_t payload_id(const Entry& e) {
    if (e.type != EntryType::kNormal || e.payload.size() != sizeof(uint64_t)) {
        return 0;
    }
    uint64_t id = 0;
    std::memcpy(&id, e.payload.data(), sizeof(id));
    return id;
}

SharedBytes make_payload(uint64_t id) {
    std::string bytes(sizeof(id), '\0');
    std::memcpy(bytes.data(), &id, sizeof(id));
    return SharedBytes::copy_of(bytes);
}

uint64_t registry_key(LogIndex i, Term t) {
    return (static_cast<uint64_t>(i.value()) << 24) ^ static_cast<uint64_t>(t.value());
}

}  // namespace

RaftSim::RaftSim(const SimOptions& options)
    : opt_(options),
      rng_(options.seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(options.nodes)),
      snap_rng_(mix(options.seed * 0x2545f4914f6cdd1dULL + static_cast<uint64_t>(options.nodes))) {
    // Per-seed configuration: mostly the defaults, sometimes the harder corners.
    pre_vote_ = opt_.force_plain ? false : !rng_.chance(0.15);
    check_quorum_ = opt_.force_plain ? false : !rng_.chance(0.15);
    max_entries_ = static_cast<size_t>(rng_.chance(0.5) ? rng_.uniform(1, 4) : 64);
    disrupt_leader_p_ = rng_.chance(0.5) ? 0.4 : 0.0;
    max_inflight_ = static_cast<size_t>(rng_.uniform(1, 8));
    election_max_ms_ = rng_.chance(0.3) ? 170 : 300;
    dledger_storage_ = rng_.chance(0.5);
    fault_gap_max_ = rng_.chance(0.5) ? 150 : 400;
    preferred_ =
        rng_.chance(0.2) ? NodeId(static_cast<int32_t>(rng_.uniform(1, opt_.nodes))) : kNoNode;
    const bool compact = opt_.compact == 1 || (opt_.compact < 0 && snap_rng_.chance(0.35));
    if (compact) {
        compact_every_ = snap_rng_.chance(0.5) ? snap_rng_.uniform(1, 6) : snap_rng_.uniform(7, 40);
        snapshot_chunk_ =
            static_cast<size_t>(snap_rng_.chance(0.5) ? snap_rng_.uniform(4, 48) : 1 << 20);
        snapshot_padding_max_ = snap_rng_.chance(0.5) ? 200 : 0;
    }
    for (int id = 1; id <= opt_.nodes; ++id) {
        SimNode& n = nodes_[id];
        n.storage = std::make_unique<MemoryLogStorage>();
        n.rng = std::make_unique<Rng>(rng_.next());
    }
    for (int id = 1; id <= opt_.nodes; ++id) {
        restart(id);
        schedule(Event{rng_.uniform(0, kTickMs - 1), 0, EventKind::kTick, id, 0, 0, nullptr});
    }
    schedule(Event{10, 0, EventKind::kClient, 0, 0, 0, nullptr});
    schedule(Event{rng_.uniform(50, 300), 0, EventKind::kFault, 0, 0, 0, nullptr});
}

RaftSim::~RaftSim() = default;

RaftConfig RaftSim::make_config(int id) const {
    RaftConfig c;
    c.id = NodeId(id);
    for (int i = 1; i <= opt_.nodes; ++i) {
        c.voters.push_back(NodeId(i));
    }
    c.tick_interval_ms = static_cast<int>(kTickMs);
    c.election_timeout_max_ms = election_max_ms_;
    c.pre_vote = pre_vote_;
    c.check_quorum = check_quorum_;
    c.max_entries_per_append = max_entries_;
    c.max_inflight_appends = max_inflight_;
    c.preferred_leader = preferred_;
    c.max_snapshot_chunk_bytes = snapshot_chunk_;
    return c;
}

void RaftSim::schedule(Event e) {
    e.seq = next_event_seq_++;
    events_.push(std::move(e));
}

SimResult RaftSim::run() {
    while (!events_.empty() && result_.ok) {
        Event e = events_.top();
        events_.pop();
        now_ = e.time;
        g_virtual_now_ms = now_;
        if (!healed_ && now_ >= opt_.fault_ms) {
            heal_all();
        }
        if (healed_ && result_.heal_to_leader_ms < 0 && now_ > healed_at_ + opt_.leader_bound_ms) {
            fail(fmt::format("liveness: no leader {} ms after healing: {}", opt_.leader_bound_ms,
                             trace_state()));
            break;
        }
        if (now_ > opt_.fault_ms + opt_.liveness_ms) {
            fail(fmt::format("liveness: no commit applied on every node {} ms after healing: {}",
                             opt_.liveness_ms, trace_state()));
            break;
        }
        if (++result_.events > opt_.max_events) {
            fail("event budget exhausted (livelock?)");
            break;
        }
        handle(e);
        if (!result_.ok) {
            break;
        }
        check_leaders();
        if (marker_done_) {
            break;
        }
    }
    result_.commits = committed_.size();
    result_.acked = acked_.size();
    for (const auto& [id, n] : nodes_) {
        if (n.raft) {
            result_.max_term = std::max(result_.max_term, static_cast<int>(n.raft->term().value()));
        }
    }
    return result_;
}

void RaftSim::handle(const Event& e) {
    switch (e.kind) {
        case EventKind::kTick: {
            schedule(Event{now_ + kTickMs, 0, EventKind::kTick, e.node, 0, 0, nullptr});
            SimNode& n = nodes_.at(e.node);
            if (n.raft) {
                Status st = n.raft->tick();
                if (!st.is_ok()) {
                    fail(fmt::format("node {} tick: {}", e.node, st.to_string()));
                    return;
                }
                check(e.node);
                process_ready(e.node);
            }
            break;
        }
        case EventKind::kDeliver: {
            SimNode& n = nodes_.at(e.node);
            if (!n.raft) {
                return;
            }
            if (opt_.trace) {
                spdlog::info("deliver {}", describe(*e.msg));
            }
            Status st = n.raft->step(*e.msg);
            if (!st.is_ok()) {
                fail(fmt::format("node {} step({}): {}", e.node, describe(*e.msg), st.to_string()));
                return;
            }
            check(e.node);
            process_ready(e.node);
            break;
        }
        case EventKind::kPersistDone: {
            SimNode& n = nodes_.at(e.node);
            if (!n.raft || n.incarnation != e.incarnation) {
                return;
            }
            if (!n.storage->sync().is_ok()) {
                fail("sync failed");
                return;
            }
            n.raft->persisted(e.persist_seq);
            check(e.node);
            process_ready(e.node);
            break;
        }
        case EventKind::kClient:
            schedule(Event{now_ + (healed_ ? 50 : rng_.uniform(5, 60)), 0, EventKind::kClient, 0, 0,
                           0, nullptr});
            do_client();
            break;
        case EventKind::kFault:
            if (!healed_) {
                do_fault();
                schedule(Event{now_ + rng_.uniform(20, fault_gap_max_), 0, EventKind::kFault, 0, 0,
                               0, nullptr});
            }
            break;
        case EventKind::kRestart:
            if (!nodes_.at(e.node).raft) {
                restart(e.node);
            }
            break;
        case EventKind::kDisruptLeader:
            if (!healed_ && nodes_.at(e.node).raft) {
                if (rng_.chance(0.5)) {
                    crash(e.node);
                    schedule(Event{now_ + rng_.uniform(1, 300), 0, EventKind::kRestart, e.node, 0,
                                   0, nullptr});
                } else {
                    for (int id = 1; id <= opt_.nodes; ++id) {
                        if (id != e.node && rng_.chance(0.7)) {
                            cut_.insert({e.node, id});
                            cut_.insert({id, e.node});
                        }
                    }
                    if (opt_.trace) {
                        spdlog::info("FAULT cut new leader {} off (mostly)", e.node);
                    }
                }
            }
            break;
    }
}

bool RaftSim::link_up(int from, int to) const { return cut_.count({from, to}) == 0; }

void RaftSim::send(Message m) {
    const int from = m.from.value();
    const int to = m.to.value();
    if (!link_up(from, to) || rng_.chance(drop_p_)) {
        if (opt_.trace) {
            spdlog::info("drop {}", describe(m));
        }
        return;
    }
    auto shared = std::make_shared<Message>(std::move(m));
    const int copies = rng_.chance(dup_p_) ? 2 : 1;
    for (int c = 0; c < copies; ++c) {
        int64_t delay = rng_.uniform(1, 8);
        if (!healed_ && rng_.chance(0.05)) {
            delay += rng_.uniform(10, 150);  // a slow path: reorders behind later messages
        }
        schedule(Event{now_ + delay, 0, EventKind::kDeliver, to, 0, 0, shared});
    }
}

void RaftSim::process_ready(int id) {
    SimNode& n = nodes_.at(id);
    for (int round = 0; round < 16 && n.raft && n.raft->has_ready() && result_.ok; ++round) {
        Ready rd = n.raft->take_ready();
        for (Message& m : rd.messages) {
            send(std::move(m));
        }
        if (rd.snapshot.has_value()) {
            // InstallSnapshot: the state machine becomes the snapshot's.
            if (!check_snapshot(id, *rd.snapshot, "installs")) {
                return;
            }
            n.applied = rd.snapshot->index;
            result_.snapshots_installed += 1;
        }
        if (rd.persist.has_value()) {
            int64_t done =
                std::max({now_ + rng_.uniform(0, 3), n.disk_free_at, n.disk_stall_until});
            n.disk_free_at = done;
            schedule(Event{done, 0, EventKind::kPersistDone, id, n.incarnation, rd.persist->seq,
                           nullptr});
        }
        for (LogIndex i = rd.apply_from; i <= rd.apply_to; i += 1) {
            if (i != n.applied + 1) {
                fail(fmt::format("node {} applies {} after {}", id, i, n.applied));
                return;
            }
            if (i.value() > static_cast<int64_t>(committed_.size()) ||
                n.prefix_hash[static_cast<size_t>(i.value() - 1)] != committed_hash(i)) {
                fail(
                    fmt::format("node {} applies entry {} that differs from the committed log "
                                "(committed length {})",
                                id, i, committed_.size()));
                return;
            }
            n.applied = i;
            if (i < n.storage->first_index()) {
                fail(fmt::format("node {} applies {} below its first index {}", id, i,
                                 n.storage->first_index()));
                return;
            }
            const uint64_t pid = payload_id(n.storage->entry(i));
            auto it = pending_.find(pid);
            if (pid != 0 && it != pending_.end() && it->second.node == id &&
                it->second.incarnation == n.incarnation) {
                if (it->second.index == i) {
                    acked_.insert(pid);  // the client hears "committed"
                }
                pending_.erase(it);
            }
        }
        maybe_compact(id);
    }
    if (healed_ && !marker_done_) {
        // Liveness: some post-heal proposal is applied on every node.
        const LogIndex marker_index = marker_index_;
        if (marker_index.value() > 0) {
            bool everywhere = true;
            for (const auto& [nid, node] : nodes_) {
                everywhere = everywhere && node.raft && node.applied >= marker_index;
            }
            if (everywhere) {
                marker_done_ = true;
                result_.heal_to_commit_ms = now_ - healed_at_;
                // Every proposal acknowledged before healing sits below the marker, hence is
                // applied everywhere.
                std::set<uint64_t> seen;
                for (int64_t i = 0; i < marker_index.value(); ++i) {
                    seen.insert(committed_payload_[static_cast<size_t>(i)]);
                }
                for (uint64_t pid : acked_) {
                    if (pid < *marker_ && seen.count(pid) == 0) {
                        fail(
                            fmt::format("acknowledged proposal {} is not in the committed log "
                                        "before the liveness marker",
                                        pid));
                        return;
                    }
                }
            }
        }
    }
}

void RaftSim::do_client() {
    std::vector<int> leaders;
    std::vector<int> alive;
    for (const auto& [id, n] : nodes_) {
        if (n.raft) {
            alive.push_back(id);
            if (n.raft->role() == Role::kLeader) {
                leaders.push_back(id);
            }
        }
    }
    if (alive.empty()) {
        return;
    }
    int target;
    if (!leaders.empty() && (healed_ || rng_.chance(0.8))) {
        target =
            leaders[static_cast<size_t>(rng_.uniform(0, static_cast<int64_t>(leaders.size()) - 1))];
    } else {
        target =
            alive[static_cast<size_t>(rng_.uniform(0, static_cast<int64_t>(alive.size()) - 1))];
    }
    SimNode& n = nodes_.at(target);
    if (!healed_ && n.raft->role() == Role::kLeader && rng_.chance(0.02)) {
        const NodeId to(static_cast<int32_t>(rng_.uniform(1, opt_.nodes)));
        if (opt_.trace) {
            spdlog::info("client asks {} to transfer leadership to {}", target, to);
        }
        (void)n.raft->transfer_leadership(to);
        check(target);
        process_ready(target);
        return;
    }
    const int count = healed_ ? 1 : static_cast<int>(rng_.uniform(1, 4));
    std::vector<SharedBytes> batch;
    const uint64_t first = next_proposal_;
    for (int i = 0; i < count; ++i) {
        batch.push_back(make_payload(next_proposal_++));
    }
    if (healed_ && !marker_.has_value()) {
        marker_ = first;  // ids from here on are liveness markers
    }
    Result<LogIndex> r = n.raft->propose(batch);
    if (opt_.trace) {
        spdlog::info("client proposes ids {}..{} to {}: {}", first, next_proposal_ - 1, target,
                     r.is_ok() ? fmt::format("index {}", r.value()) : r.status().to_string());
    }
    if (r.is_ok()) {
        for (int i = 0; i < count; ++i) {
            pending_[first + static_cast<uint64_t>(i)] =
                Pending{target, n.incarnation, r.value() - (count - 1 - i)};
        }
    }
    check(target);
    process_ready(target);
}

void RaftSim::do_fault() {
    const int64_t kind = rng_.uniform(0, 99);
    const int victim = pick_victim();
    std::string what;
    if (kind < 15) {
        std::vector<int> side(static_cast<size_t>(opt_.nodes) + 1);
        for (int id = 1; id <= opt_.nodes; ++id) {
            side[static_cast<size_t>(id)] = rng_.chance(0.5) ? 1 : 0;
        }
        for (int a = 1; a <= opt_.nodes; ++a) {
            for (int b = 1; b <= opt_.nodes; ++b) {
                if (side[static_cast<size_t>(a)] != side[static_cast<size_t>(b)]) {
                    cut_.insert({a, b});
                }
            }
        }
        what = "partition in two groups";
    } else if (kind < 30) {
        int other = static_cast<int>(rng_.uniform(1, opt_.nodes));
        if (other != victim) {
            cut_.insert({victim, other});
            what = fmt::format("cut one-way link {}->{}", victim, other);
        }
    } else if (kind < 40) {
        for (int id = 1; id <= opt_.nodes; ++id) {
            if (id != victim) {
                cut_.insert({victim, id});
                cut_.insert({id, victim});
            }
        }
        what = fmt::format("isolate {}", victim);
    } else if (kind < 58) {
        cut_.clear();
        what = "heal network";
    } else if (kind < 75) {
        if (nodes_.at(victim).raft) {
            crash(victim);
            const int64_t down = rng_.chance(0.5) ? rng_.uniform(1, 30) : rng_.uniform(30, 600);
            schedule(Event{now_ + down, 0, EventKind::kRestart, victim, 0, 0, nullptr});
            what = fmt::format("crash {}", victim);
        }
    } else if (kind < 87) {
        nodes_.at(victim).disk_stall_until = now_ + rng_.uniform(20, 400);
        what = fmt::format("stall disk of {} until {}", victim, nodes_.at(victim).disk_stall_until);
    } else {
        static constexpr double kDrops[] = {0, 0, 0.01, 0.1, 0.3};
        static constexpr double kDups[] = {0, 0.02, 0.1};
        drop_p_ = kDrops[rng_.uniform(0, 4)];
        dup_p_ = kDups[rng_.uniform(0, 2)];
        what = fmt::format("network drop {} dup {}", drop_p_, dup_p_);
    }
    if (opt_.trace && !what.empty()) {
        spdlog::info("FAULT {}", what);
    }
}

// Faults hit the interesting nodes more often: a leader (its entries and commits are in
// flight) or a node whose disk is stalled (its votes and acks are not yet durable).
int RaftSim::pick_victim() {
    std::vector<int> leaders;
    std::vector<int> stalled;
    for (const auto& [id, n] : nodes_) {
        if (n.raft && n.raft->role() == Role::kLeader) {
            leaders.push_back(id);
        }
        if (n.raft && n.disk_stall_until > now_) {
            stalled.push_back(id);
        }
    }
    const int64_t r = rng_.uniform(0, 99);
    if (r < 40 && !leaders.empty()) {
        return leaders[static_cast<size_t>(
            rng_.uniform(0, static_cast<int64_t>(leaders.size()) - 1))];
    }
    if (r < 60 && !stalled.empty()) {
        return stalled[static_cast<size_t>(
            rng_.uniform(0, static_cast<int64_t>(stalled.size()) - 1))];
    }
    return static_cast<int>(rng_.uniform(1, opt_.nodes));
}

void RaftSim::crash(int id) {
    SimNode& n = nodes_.at(id);
    n.raft.reset();
    n.incarnation += 1;
    const auto unsynced = static_cast<int64_t>(n.storage->unsynced_count());
    const auto keep = static_cast<size_t>(rng_.uniform(0, unsynced));
    if (dledger_storage_) {
        n.storage->crash_split(keep, static_cast<size_t>(rng_.uniform(0, unsynced)));
    } else {
        n.storage->crash(keep, rng_.chance(0.5));
    }
    n.applied = LogIndex(0);
    n.disk_free_at = now_;
    update_prefix_hashes(n);
    if (opt_.trace) {
        spdlog::info("CRASH {}: kept {} unsynced entries, log now ends at {}", id, keep,
                     n.storage->last_index());
    }
}

void RaftSim::restart(int id) {
    SimNode& n = nodes_.at(id);
    auto opened = RaftNode::open(make_config(id), n.storage.get(), n.rng.get());
    if (!opened.is_ok()) {
        fail(fmt::format("restart {}: {}", id, opened.status().to_string()));
        return;
    }
    n.raft = std::move(opened).value();
    // The state machine restarts from the snapshot, then applies what follows it.
    n.applied = n.storage->first_index() - 1;
    if (n.applied.value() > 0 && !check_snapshot(id, n.storage->snapshot(), "restarts from")) {
        return;
    }
    if (opt_.trace) {
        spdlog::info("RESTART {} at term {} log end {}", id, n.raft->term(),
                     n.storage->last_index());
    }
    check(id);
    process_ready(id);
}

void RaftSim::heal_all() {
    healed_ = true;
    healed_at_ = now_;
    cut_.clear();
    drop_p_ = 0;
    dup_p_ = 0;
    if (opt_.trace) {
        spdlog::info("HEAL: network healed, disks unstalled, every node restarted");
    }
    for (auto& [id, n] : nodes_) {
        n.disk_stall_until = 0;
        if (!n.raft) {
            restart(id);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Checker.

void RaftSim::fail(const std::string& what) {
    if (result_.ok) {
        result_.ok = false;
        result_.failure = fmt::format("t={}ms: {}", now_, what);
    }
}

SharedBytes RaftSim::make_snapshot_data(const SimNode& n, LogIndex index) {
    const uint64_t h = n.prefix_hash[static_cast<size_t>(index.value() - 1)];
    const auto idx = static_cast<uint64_t>(index.value());
    std::string bytes(16, '\0');
    std::memcpy(bytes.data(), &h, 8);
    std::memcpy(bytes.data() + 8, &idx, 8);
    bytes.append(static_cast<size_t>(snap_rng_.uniform(0, snapshot_padding_max_)), 'p');
    return SharedBytes::copy_of(bytes);
}

bool RaftSim::check_snapshot(int id, const Snapshot& snap, const char* what) {
    uint64_t h = 0;
    uint64_t idx = 0;
    if (snap.data.size() >= 16) {
        std::memcpy(&h, snap.data.data(), 8);
        std::memcpy(&idx, snap.data.data() + 8, 8);
    }
    if (snap.data.size() < 16 || idx != static_cast<uint64_t>(snap.index.value())) {
        fail(
            fmt::format("node {} {} a snapshot at {} whose data ({} bytes) is not the state "
                        "machine at that index",
                        id, what, snap.index, snap.data.size()));
        return false;
    }
    if (snap.index.value() > static_cast<int64_t>(committed_.size()) ||
        committed_hash(snap.index) != h) {
        fail(
            fmt::format("node {} {} a snapshot at {} that is not the committed log there "
                        "(committed length {})",
                        id, what, snap.index, committed_.size()));
        return false;
    }
    return true;
}

void RaftSim::maybe_compact(int id) {
    SimNode& n = nodes_.at(id);
    if (compact_every_ == 0 || !n.raft || !result_.ok) {
        return;
    }
    const LogIndex floor = n.storage->first_index() - 1;
    if (n.applied - floor < compact_every_ || n.applied > n.raft->applied_index()) {
        return;
    }
    // Compact at the applied index, or a little below it (a snapshot taken a while ago).
    const LogIndex at = std::max(floor + 1, n.applied - snap_rng_.uniform(0, 2));
    if (opt_.trace) {
        spdlog::info("node {} compacts at {}", id, at);
    }
    if (Status st = n.raft->compact(at, make_snapshot_data(n, at)); !st.is_ok()) {
        fail(fmt::format("node {} compact({}): {}", id, at, st.to_string()));
        return;
    }
    result_.compactions += 1;
    check(id);
}

void RaftSim::update_prefix_hashes(SimNode& n) {
    const LogIndex from = n.storage->take_changed_from();
    const LogIndex last = n.storage->last_index();
    const LogIndex snap = n.storage->first_index() - 1;
    n.prefix_hash.resize(static_cast<size_t>(std::min(from.value() - 1, last.value())));
    if (static_cast<int64_t>(n.prefix_hash.size()) < snap.value()) {
        // A snapshot covers this prefix (check_snapshot verified it is the committed log).
        if (snap.value() > static_cast<int64_t>(committed_.size())) {
            fail(fmt::format("a log starts after a snapshot at {} beyond the committed log ({})",
                             snap, committed_.size()));
            return;
        }
        n.prefix_hash.insert(n.prefix_hash.end(),
                             committed_.begin() + static_cast<std::ptrdiff_t>(n.prefix_hash.size()),
                             committed_.begin() + snap.value());
    }
    for (LogIndex i = std::max(from, snap + 1); i <= last; i += 1) {
        const Entry& e = n.storage->entry(i);
        const uint64_t prev = i.value() > 1 ? n.prefix_hash.back() : 0;
        const uint64_t h =
            mix(prev ^ mix(static_cast<uint64_t>(e.term.value()) * 31 +
                           payload_id(e) * 0x100000001b3ULL + static_cast<uint64_t>(e.type)));
        n.prefix_hash.push_back(h);
        // Log matching: an (index, term) pair identifies the whole prefix.
        auto [it, inserted] = entry_registry_.emplace(registry_key(i, e.term), h);
        if (!inserted && it->second != h) {
            fail(
                fmt::format("log matching: entry {} term {} has a different prefix than "
                            "another log's",
                            i, e.term));
        }
    }
}

void RaftSim::check(int id) {
    SimNode& n = nodes_.at(id);
    if (!n.raft) {
        return;
    }
    n.raft->check_invariants();
    update_prefix_hashes(n);
    const LogIndex c = n.raft->commit_index();
    if (c.value() > 0) {
        const auto ci = static_cast<size_t>(c.value());
        const size_t known = committed_.size();
        if (ci <= known) {
            if (n.prefix_hash[ci - 1] != committed_[ci - 1]) {
                fail(
                    fmt::format("node {} has commit index {} but its log differs from the "
                                "committed log there",
                                id, c));
                return;
            }
        } else {
            if (known > 0 && n.prefix_hash[known - 1] != committed_[known - 1]) {
                fail(fmt::format("node {} commit {} rewrites committed entries up to {}", id, c,
                                 known));
                return;
            }
            for (size_t i = known; i < ci; ++i) {
                committed_.push_back(n.prefix_hash[i]);
                const LogIndex idx(static_cast<int64_t>(i) + 1);
                if (idx < n.storage->first_index()) {
                    fail(
                        fmt::format("node {} commits {} inside its snapshot ({}) before the "
                                    "checker saw it committed",
                                    id, idx, n.storage->first_index() - 1));
                    return;
                }
                const uint64_t pid = payload_id(n.storage->entry(idx));
                committed_payload_.push_back(pid);
                if (marker_.has_value() && pid >= *marker_ && marker_index_.value() == 0) {
                    marker_index_ = idx;
                }
            }
        }
        LogIndex& m = max_commit_by_term_[n.raft->term()];
        m = std::max(m, c);
    }
}

void RaftSim::check_leaders() {
    const size_t g = committed_.size();
    // Committed entries stay durable on a majority, across crashes.
    if (g > 0) {
        int holders = 0;
        for (const auto& [id, n] : nodes_) {
            if (n.storage->durable_last_index().value() >= static_cast<int64_t>(g) &&
                n.prefix_hash.size() >= g && n.prefix_hash[g - 1] == committed_[g - 1]) {
                ++holders;
            }
        }
        if (holders < opt_.nodes / 2 + 1) {
            fail(fmt::format("committed log (length {}) is durable on only {} nodes", g, holders));
            return;
        }
    }
    for (const auto& [id, n] : nodes_) {
        if (!n.raft || n.raft->role() != Role::kLeader) {
            continue;
        }
        const Term t = n.raft->term();
        if (healed_ && result_.heal_to_leader_ms < 0) {
            result_.heal_to_leader_ms = now_ - healed_at_;
        }
        auto [it, inserted] = leader_of_term_.emplace(t, id);
        if (!inserted && it->second != id) {
            fail(fmt::format("two leaders in term {}: {} and {}", t, it->second, id));
            return;
        }
        if (inserted && !healed_ && rng_.chance(disrupt_leader_p_)) {
            schedule(
                Event{now_ + rng_.uniform(0, 30), 0, EventKind::kDisruptLeader, id, 0, 0, nullptr});
        }
        // Leader completeness: everything committed in an earlier term is in its log.
        LogIndex need;
        for (auto mit = max_commit_by_term_.begin();
             mit != max_commit_by_term_.end() && mit->first < t; ++mit) {
            need = std::max(need, mit->second);
        }
        if (need.value() > 0) {
            const auto ni = static_cast<size_t>(need.value());
            if (n.prefix_hash.size() < ni || n.prefix_hash[ni - 1] != committed_[ni - 1]) {
                fail(
                    fmt::format("leader completeness: leader {} of term {} lacks committed "
                                "entries up to {}",
                                id, t, need));
                return;
            }
        }
    }
}

std::string RaftSim::trace_state() const {
    std::string out;
    for (const auto& [id, n] : nodes_) {
        if (!n.raft) {
            out += fmt::format("[{} down log={}] ", id, n.storage->last_index());
            continue;
        }
        out +=
            fmt::format("[{} {} t{} commit={} last={} applied={}] ", id, role_name(n.raft->role()),
                        n.raft->term(), n.raft->commit_index(), n.storage->last_index(), n.applied);
    }
    return out;
}

}  // namespace comet::raft::sim
