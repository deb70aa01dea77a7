#pragma once
// RaftNode: one member of a Raft group as a deterministic, single-threaded state machine.
// It never touches sockets, threads, clocks or global randomness: the driver feeds it events
// (tick, step, propose, persisted, transfer_leadership) and carries out the effects it returns
// from take_ready() (send messages, make storage durable, apply committed entries).
//
// Owner: one driver (DLedger, the controller, the simulator), which calls every method from one
// thread. The node keeps references to a LogStorage and an Rng owned by the driver; both must
// outlive it.
//
// Persistence ordering: the node writes to LogStorage itself (volatile). Messages that promise
// something about that state — vote grants, vote requests (the self vote), append acks — are
// held inside the node and released only after the driver reports, via persisted(seq), that the
// writes covered by Ready::persist{seq} are durable. The leader counts its own log toward the
// commit quorum only up to its durable index.
//
// Snapshots (Raft §7): compact() hands the driver's snapshot to the storage; a follower whose
// next index is below the leader's first index gets InstallSnapshot chunks and the installed
// snapshot comes back to its driver in Ready::snapshot. With a storage that keeps no snapshots
// (DLedger) none of this ever runs.
//
// Invariants (check_invariants()): snapshot index <= applied <= commit <= last index;
// stable <= last index;
// last entry term <= current term; a leader voted for itself and its peers' match < next <=
// last + 1; held messages wait only for persist requests not yet acknowledged.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/rng.h"
#include "base/status.h"
#include "raft/log_storage.h"
#include "raft/types.h"

namespace comet::raft {

enum class Role : uint8_t {
    // Default role. Entered at start, on seeing a higher term, on losing an election, when a
    // leader fails check-quorum or a pre-vote is denied. Left when the election timer fires.
    kFollower,
    // Election timer fired with pre_vote on: asks for votes for term + 1 without bumping its term
    // (thesis §9.6). Left for Candidate on a majority of grants, for Follower otherwise.
    kPreCandidate,
    // Term + 1, voted for itself (§5.2). Left for Leader on a majority, Follower on a higher term
    // or a leader of its term, or a new election when the timer fires again.
    kCandidate,
    // Won a majority in its term. Left (to Follower) on a higher term, on check-quorum failure or
    // after a completed leadership transfer.
    kLeader,
};

std::string_view role_name(Role r);

struct RaftConfig {
    NodeId id;
    std::vector<NodeId> voters;  // all voters including id; static for now (3 or 5 typical)
    // Durations are in ticks of tick_interval_ms (the driver calls tick() that often).
    // Defaults match DLedger: election timeout uniformly 150..300 ms, heartbeat 50 ms. The
    // heartbeat must be well below the minimum election timeout, or followers of a healthy
    // leader time out between heartbeats (one lost heartbeat must still leave slack).
    int tick_interval_ms = 10;
    int election_timeout_min_ms = 150;
    int election_timeout_max_ms = 300;
    int heartbeat_interval_ms = 50;
    bool pre_vote = true;
    bool check_quorum = true;
    size_t max_entries_per_append = 64;
    size_t max_bytes_per_append = 1 << 20;
    size_t max_inflight_appends = 8;  // per follower in Replicate state
    // InstallSnapshot sends the snapshot in chunks of at most this many bytes, one chunk in
    // flight per follower (stop-and-wait; resent after two silent heartbeats).
    size_t max_snapshot_chunk_bytes = 1 << 20;
    // Leader hands leadership to this voter once it is caught up (kNoNode: none).
    NodeId preferred_leader = kNoNode;
    // Last index already applied by the driver's state machine (restart); 0 = replay all. A
    // storage with a snapshot raises it to the snapshot's index: before open() the driver
    // restores its state machine from storage.snapshot() and applies only what follows.
    LogIndex applied;
    // The driver's recovery dropped entries this node had made durable (a corrupt tail). Until
    // a leader has brought its log back up to the commit index, the node neither campaigns nor
    // grants (pre-)votes: it may lack committed entries, and its vote could elect a candidate
    // lacking them too.
    bool lost_durable_entries = false;
};

// A request to make the storage durable. The driver calls storage.sync() (or waits for its flush
// service) and then RaftNode::persisted(seq). Requests are acknowledged in seq order.
struct PersistRequest {
    uint64_t seq = 0;
    LogIndex last_index;  // log end at the time of the request (informational)
};

// Effects of the events since the previous take_ready().
struct Ready {
    std::vector<Message> messages;          // safe to send now, in any order
    std::optional<PersistRequest> persist;  // writes to make durable, then call persisted()
    // A snapshot received from the leader (InstallSnapshot, §7), already durable in storage:
    // replace the state machine with it before applying [apply_from, apply_to], which then
    // starts right after snapshot->index.
    std::optional<Snapshot> snapshot;
    LogIndex apply_from;   // newly committed entries [apply_from, apply_to] to
    LogIndex apply_to;     //   read from storage and apply; empty if from > to
    HardState hard_state;  // current (possibly not yet durable) hard state
    bool empty() const {
        return messages.empty() && !persist.has_value() && !snapshot.has_value() &&
               apply_from > apply_to;
    }
};

class RaftNode {
public:
    // Restores term, vote and commit from storage.hard_state(); everything in storage at open is
    // treated as durable. Errors: invalid config.
    static Result<std::unique_ptr<RaftNode>> open(const RaftConfig& config, LogStorage* storage,
                                                  Rng* rng);

    // Advances logical time by one tick: election timeout, heartbeats, check-quorum, transfer
    // timeout.
    Status tick();
    // Handles one message from a peer. Errors: malformed message (it is dropped) or a storage
    // failure. A storage failure stops the node: a leader or candidate steps down to follower
    // before the call returns, and every later tick/step/propose returns the same error, so a
    // stopped node neither acknowledges, votes nor campaigns (failure() says why). Only a new
    // node over a recovered storage (a restart) goes on.
    Status step(const Message& m);
    // Leader only: appends one entry per payload in the current term. Returns the index of the
    // last one. Errors: kUnavailable when not leader (see leader()), kFailedPrecondition during a
    // leadership transfer, kInvalidArgument for an empty batch.
    Result<LogIndex> propose(std::span<const SharedBytes> payloads);
    // The writes covered by PersistRequest `seq` (and all before it) are durable.
    void persisted(uint64_t seq);
    // The driver could not make the storage durable (a failed sync): the node stops, as for a
    // failed storage call.
    void fail_storage(Status st);
    // Leader only: catch `to` up, then send it TimeoutNow (thesis §3.10). Aborts after an
    // election timeout. Errors: not leader, unknown voter.
    Status transfer_leadership(NodeId to);
    // Log compaction (§7): `data` is the driver's state machine after applying every entry up
    // to `index`. The node saves it as the storage's snapshot (durable on return) and the log
    // before it is discarded; followers whose next index falls below it get InstallSnapshot.
    // An index at or below the current snapshot is a no-op. Requires: the storage keeps
    // snapshots (LogStorage::save_snapshot). Errors: kInvalidArgument when `index` was not yet
    // handed out for apply; the storage's (the node then stops, as for any storage failure).
    Status compact(LogIndex index, SharedBytes data);

    bool has_ready() const;
    Ready take_ready();

    // COMET_CHECKs the invariants listed in the class comment. O(voters + held messages).
    void check_invariants() const;

    NodeId id() const { return config_.id; }
    Role role() const { return role_; }
    Term term() const { return term_; }
    NodeId leader() const { return leader_; }
    NodeId voted_for() const { return voted_for_; }
    LogIndex commit_index() const { return commit_; }
    LogIndex stable_index() const { return stable_; }
    LogIndex last_index() const { return storage_->last_index(); }
    LogIndex first_index() const { return storage_->first_index(); }
    LogIndex applied_index() const { return applied_; }
    NodeId transfer_target() const { return transferee_; }
    // True while lost_durable_entries holds (see RaftConfig).
    bool recovering() const { return recovering_; }
    const RaftConfig& config() const { return config_; }
    // OK, or the storage failure that stopped the node.
    const Status& failure() const { return failed_; }
    // Leader only: followers left behind because they need entries before first_index() and
    // the storage keeps no snapshot to send instead (DLedger's CommitLog after retention).
    size_t followers_behind_log() const;
    bool behind_log(NodeId peer) const;
    // Leader only: what the leader knows a peer has (0 when unknown).
    LogIndex match_index(NodeId peer) const;

private:
    struct Progress {
        // kSnapshot: next is below our first index; one InstallSnapshot chunk in flight, no
        // appends until the follower reports the snapshot installed.
        // kBehindLog: next is below our first index and the storage has no snapshot (retention
        // deleted the entries, DLedger): only heartbeats, until next is readable again.
        enum class State : uint8_t { kProbe, kReplicate, kSnapshot, kBehindLog };
        LogIndex match;
        LogIndex next{1};
        State state = State::kProbe;
        bool probe_sent = false;  // Probe: one append outstanding, pause until reply/heartbeat
        struct Flight {
            LogIndex last;
            int64_t sent_tick;
        };
        std::deque<Flight> inflight;  // Replicate: appends sent and not yet acknowledged
        bool recent_active = false;   // heard from since the last check-quorum round
        LogIndex snapshot_index;      // kSnapshot: the snapshot being sent
        int64_t snapshot_offset = 0;  // kSnapshot: bytes the follower confirmed
        int64_t snapshot_sent_tick = 0;
    };
    struct Incoming {  // follower: a snapshot being received chunk by chunk
        LogIndex index;
        Term term;
        int64_t size = 0;
        std::string bytes;
    };
    struct Held {
        uint64_t seq;  // released once persisted_seq_ >= seq
        Message msg;
    };

    RaftNode(const RaftConfig& config, LogStorage* storage, Rng* rng);

    void become_follower(Term term, NodeId leader, std::string_view reason);
    void become_pre_candidate(std::string_view reason);
    void become_candidate(std::string_view reason);
    void become_leader();
    void reset(Term term);
    void campaign(bool pre_vote, bool transfer, std::string_view reason);
    void tally_votes();
    void tick_leader();

    // step() for a message of a higher term: false when the leader lease says ignore it.
    bool observe_higher_term(const Message& m);
    // step() for a message of a lower term: tell a stale leader or pre-candidate our term.
    void answer_stale_term(const Message& m);
    void handle_vote_request(const Message& m);
    void handle_pre_vote_response(const Message& m);
    void handle_vote_response(const Message& m);
    // Append, Heartbeat or InstallSnapshot of our term. Errors: kInternal when we lead it too.
    Status handle_from_leader(const Message& m);
    void handle_timeout_now(const Message& m);
    void handle_append(const Message& m);
    void handle_heartbeat(const Message& m);
    void handle_append_response(const Message& m);
    // The three outcomes of an append response (leader).
    void on_follower_regressed(const Message& m, Progress& pr);
    void on_append_rejected(const Message& m, Progress& pr);
    void on_append_acked(const Message& m, Progress& pr);
    void handle_heartbeat_response(const Message& m);
    void handle_install_snapshot(const Message& m);
    void handle_snapshot_response(const Message& m);

    // Leader: sends as many appends to `to` as flow control allows (at least an empty one when
    // `force` and the window is open, to carry the commit index).
    void send_appends(NodeId to, bool force);
    bool send_one_append(NodeId to, Progress& pr, bool force);
    // Leader: sends `to` the chunk of the storage's snapshot at pr.snapshot_offset (restarting at
    // 0 when the snapshot changed since the last chunk).
    void send_snapshot_chunk(NodeId to, Progress& pr);
    // Leader: `to` needs entries before first_index() and no snapshot can replace them.
    void leave_behind(NodeId to, Progress& pr);
    void bcast_appends(bool force);
    void bcast_heartbeat();
    void maybe_commit();
    void maybe_hand_to_preferred();

    // Storage wrappers: record failures, keep stable_/pending_ in step with truncation.
    bool append_entries(std::span<const Entry> entries);
    bool truncate_from(LogIndex from);
    void save_hard_state(bool needs_sync);
    Term last_term() const;
    Term term_at(LogIndex i) const;  // COMET_CHECKs that i is in the log

    void send(Message m);                // non-dependent: goes out with the next Ready
    void send_after_persist(Message m);  // dependent: held until current writes are durable
    Message reply_to(const Message& m, MessageType type) const;
    // Records the first storage failure (the node stops); stop_if_failed() then steps down.
    // Split so a failure deep inside a leader's loop over progress_ never clears it mid-loop.
    void fail(Status st);
    void stop_if_failed();
    Status step_message(const Message& m);
    bool is_voter(NodeId n) const;
    int election_timeout_min_ticks() const { return election_min_ticks_; }

    RaftConfig config_;
    LogStorage* storage_;
    Rng* rng_;
    Status failed_;
    int election_min_ticks_;
    int election_max_ticks_;
    int heartbeat_ticks_;
    bool recovering_ = false;

    Role role_ = Role::kFollower;
    Term term_;
    NodeId voted_for_ = kNoNode;
    NodeId leader_ = kNoNode;
    LogIndex commit_;
    LogIndex applied_;  // last index handed out in Ready::apply_to
    LogIndex stable_;   // log prefix known durable
    std::map<NodeId, bool> votes_;
    std::map<NodeId, Progress> progress_;  // leader only; excludes self
    NodeId transferee_ = kNoNode;

    int64_t ticks_ = 0;
    int election_elapsed_ = 0;
    int heartbeat_elapsed_ = 0;
    int randomized_timeout_ = 0;

    // Persistence bookkeeping.
    bool dirty_ = false;                  // writes since the last PersistRequest
    uint64_t next_seq_ = 1;               // seq of the next PersistRequest
    uint64_t persisted_seq_ = 0;          // highest acknowledged
    std::deque<PersistRequest> pending_;  // requested, not acknowledged; last_index clamped by
                                          // later truncation
    std::deque<Held> held_;
    std::vector<Message> outbox_;

    std::optional<Incoming> incoming_;        // follower: snapshot chunks received so far
    std::optional<Snapshot> ready_snapshot_;  // installed, not yet handed out in a Ready
};

}  // namespace comet::raft
