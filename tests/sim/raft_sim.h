#pragma once
// RaftSim: a deterministic simulation of one Raft group (3 or 5 RaftNodes over MemoryLogStorage)
// in a single thread with virtual time. One seed drives every choice: message delay, loss,
// duplication and reordering; partitions (symmetric, one-way, isolation); crashes that lose
// unsynced writes (keeping a torn part of the tail); restarts; disk stalls; client proposals;
// leadership transfers. After every event the checker verifies the safety properties; after
// the faults heal it verifies liveness. See docs/raft.md "Simulator".

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/rng.h"
#include "raft/memory_log_storage.h"
#include "raft/raft_node.h"

namespace comet::raft::sim {

struct SimOptions {
    uint64_t seed = 1;
    int nodes = 3;
    int64_t fault_ms = 2500;         // virtual time with faults injected
    int64_t liveness_ms = 8000;      // after healing: a new commit applied everywhere by then
    int64_t leader_bound_ms = 3000;  // after healing: a leader by then (10 max election timeouts)
    uint64_t max_events = 3'000'000;
    // Ablation for self-checks of the checker: disable pre-vote/check-quorum in every seed.
    bool force_plain = false;
    // Log compaction + InstallSnapshot (Raft §7): -1 = drawn per seed (about a third of the
    // seeds compact), 0 = never, 1 = every seed.
    int compact = -1;
    bool trace = false;  // log every delivery, fault and proposal through spdlog
};

struct SimResult {
    bool ok = true;
    std::string failure;  // first violated property, with virtual time
    uint64_t events = 0;
    uint64_t commits = 0;  // committed log length at the end
    uint64_t acked = 0;    // client proposals acknowledged
    uint64_t compactions = 0;          // RaftNode::compact calls that took a snapshot
    uint64_t snapshots_installed = 0;  // Ready::snapshot (InstallSnapshot) on any node
    int64_t heal_to_commit_ms = -1;
    int64_t heal_to_leader_ms = -1;
    int max_term = 0;
};

class RaftSim {
public:
    explicit RaftSim(const SimOptions& options);
    ~RaftSim();
    SimResult run();

private:
    enum class EventKind : uint8_t {
        kTick,
        kDeliver,
        kPersistDone,
        kClient,
        kFault,
        kRestart,
        kDisruptLeader,  // isolate or crash a fresh leader before it replicates much
    };
    struct Event {
        int64_t time;
        uint64_t seq;
        EventKind kind;
        int node;
        uint64_t incarnation;
        uint64_t persist_seq;
        std::shared_ptr<Message> msg;
        bool operator>(const Event& o) const {
            return time != o.time ? time > o.time : seq > o.seq;
        }
    };
    struct SimNode {
        std::unique_ptr<MemoryLogStorage> storage;
        std::unique_ptr<Rng> rng;
        std::unique_ptr<RaftNode> raft;  // null while crashed
        uint64_t incarnation = 0;
        int64_t disk_free_at = 0;  // persist completions are FIFO
        int64_t disk_stall_until = 0;
        std::vector<uint64_t> prefix_hash;  // prefix_hash[i-1]: hash of entries 1..i
        LogIndex applied;                   // state machine (volatile: reset on crash; a
                                            //   restart restores it from the snapshot)
        std::optional<int64_t> restart_at;
    };
    struct Pending {  // a client proposal waiting for its result
        int node;
        uint64_t incarnation;
        LogIndex index;
    };

    void schedule(Event e);
    void handle(const Event& e);
    void do_fault();
    void do_client();
    int pick_victim();
    void crash(int id);
    void restart(int id);
    void send(Message m);
    void process_ready(int id);
    void heal_all();
    bool link_up(int from, int to) const;

    // Safety checks; record the first failure.
    void check(int id);
    void check_leaders();
    void fail(const std::string& what);
    void update_prefix_hashes(SimNode& n);
    // The snapshot data of the sim's state machine: the prefix hash of the log it covers, its
    // index, then padding (so chunking is exercised).
    SharedBytes make_snapshot_data(const SimNode& n, LogIndex index);
    // Checks that snapshot data covers exactly the committed prefix up to `index`.
    bool check_snapshot(int id, const Snapshot& snap, const char* what);
    void maybe_compact(int id);
    uint64_t committed_hash(LogIndex i) const {
        return committed_[static_cast<size_t>(i.value() - 1)];
    }

    RaftConfig make_config(int id) const;
    std::string trace_state() const;

    SimOptions opt_;
    Rng rng_;
    int64_t now_ = 0;
    uint64_t next_event_seq_ = 0;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
    std::map<int, SimNode> nodes_;
    // Network faults.
    std::set<std::pair<int, int>> cut_;  // directed links that drop everything
    double drop_p_ = 0;
    double dup_p_ = 0;
    bool healed_ = false;
    // Config knobs drawn per seed.
    bool pre_vote_ = true;
    bool check_quorum_ = true;
    size_t max_entries_ = 64;
    size_t max_inflight_ = 8;
    NodeId preferred_ = kNoNode;
    int election_max_ms_ = 300;    // narrow spread in some seeds: more split votes
    // Crashes under DLedger mode's storage rules (MemoryLogStorage::crash_split) in half the
    // seeds: CommitLog bytes, entry records and hard state in separate files.
    bool dledger_storage_ = false;
    int64_t fault_gap_max_ = 400;  // faults every 20..gap ms
    double disrupt_leader_p_ = 0;  // chance that a new leader is cut off or crashed soon
    // Compaction knobs, drawn from their own Rng so that seeds without compaction replay as
    // before compaction existed.
    Rng snap_rng_;
    int64_t compact_every_ = 0;  // compact once this many entries are applied past the
                                 //   snapshot; 0 = never
    size_t snapshot_chunk_ = 1 << 20;
    int64_t snapshot_padding_max_ = 0;

    // Checker state.
    std::vector<uint64_t> committed_;          // prefix hash of the committed log, per index
    std::vector<uint64_t> committed_payload_;  // proposal id per committed index (0 = no-op)
    std::map<Term, int> leader_of_term_;
    std::map<Term, LogIndex> max_commit_by_term_;  // highest index committed while at term
    std::unordered_map<uint64_t, uint64_t> entry_registry_;  // (index, term) -> prefix hash
    std::map<uint64_t, Pending> pending_;                    // proposal id -> where
    std::set<uint64_t> acked_;
    uint64_t next_proposal_ = 1;
    std::optional<uint64_t> marker_;  // first liveness proposal id after healing
    LogIndex marker_index_;           // first committed index holding a marker (0: none yet)
    bool marker_done_ = false;
    int64_t healed_at_ = 0;
    SimResult result_;
};

}  // namespace comet::raft::sim
