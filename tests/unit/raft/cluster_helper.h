#pragma once
// TestCluster: N RaftNodes over MemoryLogStorage wired by an in-memory message queue that the
// test controls (cut links, crash/restart nodes, stall a disk, deliver step by step). No time,
// no threads: the test ticks nodes by hand. Used by the named scenario tests.

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/rng.h"
#include "raft/memory_log_storage.h"
#include "raft/raft_node.h"

namespace comet::raft::testing {

// `count` normal entries of term `term` from index `first`, payload "p<index>".
std::vector<Entry> make_entries(int64_t first, int64_t count, int64_t term);

class TestCluster {
public:
    // Nodes get ids 1..n. `tweak` edits each node's config before open.
    explicit TestCluster(int n, const std::function<void(RaftConfig&)>& tweak = {});

    RaftNode& node(int id) { return *nodes_.at(id); }
    MemoryLogStorage& storage(int id) { return *storages_.at(id); }
    bool alive(int id) const { return nodes_.count(id) != 0 && nodes_.at(id) != nullptr; }
    int size() const { return n_; }

    // Process every node's Ready: queue messages, sync storage (unless stalled) and report it.
    void flush();
    // Delivers queued messages (and the messages they cause) until quiet or `max` deliveries.
    // Returns the number delivered.
    int deliver_all(int max = 100000);
    // Ticks one node once (then flush + deliver_all unless deliver == false).
    void tick(int id, bool deliver = true);
    // Ticks every live node `times` times, delivering in between.
    void tick_all(int times);
    // Ticks `id` alone until it is leader (returns true) or `max_ticks` pass.
    bool elect(int id, int max_ticks = 200);
    // The live node that believes it leads the highest term, or 0.
    int leader() const;

    void cut(int from, int to) { cut_.insert({from, to}); }
    void cut_both(int a, int b) {
        cut(a, b);
        cut(b, a);
    }
    void isolate(int id);
    void heal() { cut_.clear(); }
    void set_disk_stalled(int id, bool stalled);

    // Power loss: keeps only synced state. restart() reopens from storage.
    void crash(int id);
    void restart(int id);

    Status propose(int id, const std::string& payload);
    // Log compaction: snapshots node `id`'s state machine (its applied payloads)
    // at its applied index and compacts its log there.
    Status compact(int id);
    // Snapshots installed by InstallSnapshot on each node (Ready::snapshot).
    int snapshots_installed(int id) { return installed_[id]; }
    // Payloads of the applied entries of a node (no-ops skipped), in order.
    const std::vector<std::string>& applied(int id) { return applied_[id]; }
    std::vector<Term> log_terms(int id);
    // Messages currently queued (not yet delivered); tests may inspect or edit them.
    std::deque<Message>& queue() { return queue_; }
    void check_all();

    std::function<void(RaftConfig&)> tweak_;
    // When set, delivery drops every message for which it returns true.
    std::function<bool(const Message&)> drop_if_;
    // Number of rejected AppendResponses delivered (fast back-off checks).
    int append_rejects_delivered_ = 0;
    // Nodes whose step() and tick() may return an error (a storage failure injected by the test).
    std::set<int> may_fail_;

private:
    void process_ready(int id);

    int n_;
    std::map<int, std::unique_ptr<MemoryLogStorage>> storages_;
    std::map<int, std::unique_ptr<Rng>> rngs_;
    std::map<int, std::unique_ptr<RaftNode>> nodes_;
    std::map<int, std::vector<std::string>> applied_;
    std::map<int, int> installed_;
    std::map<int, std::vector<uint64_t>> stalled_seqs_;
    std::set<int> stalled_;
    std::set<std::pair<int, int>> cut_;
    std::deque<Message> queue_;
};

}  // namespace comet::raft::testing
