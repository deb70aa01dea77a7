// CPU cost of the Raft core per committed entry: 3 RaftNodes over MemoryLogStorage connected in
// memory (messages delivered in FIFO order, every persist request completed at once), a leader
// proposing batches of 1, 16 and 256 entries of 128 bytes. Measures the core's own work
// (messages, progress tracking, commit), not I/O: the storage is in memory and sync is free.
#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include <deque>
#include <memory>
#include <vector>

#include "base/check.h"
#include "raft/memory_log_storage.h"
#include "raft/raft_node.h"

namespace {

using namespace comet::raft;  // NOLINT(google-build-using-namespace): benchmark file

class InMemoryGroup {
public:
    explicit InMemoryGroup(int n) {
        for (int i = 0; i < n; ++i) {
            storages_.push_back(std::make_unique<MemoryLogStorage>());
            rngs_.push_back(std::make_unique<comet::Rng>(static_cast<uint64_t>(i) + 1));
        }
        for (int i = 0; i < n; ++i) {
            RaftConfig c;
            c.id = NodeId(i + 1);
            for (int j = 1; j <= n; ++j) {
                c.voters.push_back(NodeId(j));
            }
            c.max_entries_per_append = 256;
            auto node = RaftNode::open(c, storages_[static_cast<size_t>(i)].get(),
                                       rngs_[static_cast<size_t>(i)].get());
            COMET_CHECK(node.is_ok(), "open: {}", node.status().to_string());
            nodes_.push_back(std::move(node).value());
        }
        for (int t = 0; t < 100 && nodes_[0]->role() != Role::kLeader; ++t) {
            (void)nodes_[0]->tick();
            run();
        }
        COMET_CHECK(nodes_[0]->role() == Role::kLeader, "node 1 did not win the election");
    }

    RaftNode& leader() { return *nodes_[0]; }

    void pump(size_t i) {
        RaftNode& node = *nodes_[i];
        while (node.has_ready()) {
            Ready rd = node.take_ready();
            for (Message& m : rd.messages) {
                queue_.push_back(std::move(m));
            }
            if (rd.persist.has_value()) {
                (void)storages_[i]->sync();
                node.persisted(rd.persist->seq);
            }
            applied_ += rd.apply_to.value() >= rd.apply_from.value()
                            ? rd.apply_to.value() - rd.apply_from.value() + 1
                            : 0;
        }
    }

    void run() {
        for (size_t i = 0; i < nodes_.size(); ++i) {
            pump(i);
        }
        while (!queue_.empty()) {
            Message m = std::move(queue_.front());
            queue_.pop_front();
            const auto to = static_cast<size_t>(m.to.value() - 1);
            (void)nodes_[to]->step(m);
            pump(to);
        }
    }

    int64_t applied() const { return applied_; }

private:
    std::vector<std::unique_ptr<MemoryLogStorage>> storages_;
    std::vector<std::unique_ptr<comet::Rng>> rngs_;
    std::vector<std::unique_ptr<RaftNode>> nodes_;
    std::deque<Message> queue_;
    int64_t applied_ = 0;
};

void BM_RaftCommitBatch(benchmark::State& state) {
    const auto batch_size = static_cast<size_t>(state.range(0));
    InMemoryGroup group(3);
    const std::vector<SharedBytes> batch(batch_size, SharedBytes::copy_of(std::string(128, 'm')));
    int64_t committed = 0;
    for (auto _ : state) {
        auto last = group.leader().propose(batch);
        COMET_CHECK(last.is_ok(), "propose: {}", last.status().to_string());
        group.run();
        COMET_CHECK(group.leader().commit_index() == last.value(), "batch not committed");
        committed += static_cast<int64_t>(batch_size);
    }
    state.SetItemsProcessed(committed);
    // CPU seconds per committed entry (printed with an SI prefix: "520n" = 520 ns).
    state.counters["cpu_per_entry"] = benchmark::Counter(
        static_cast<double>(committed), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_RaftCommitBatch)->Arg(1)->Arg(16)->Arg(256)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
    spdlog::set_level(spdlog::level::warn);  // role changes at INFO would swamp the output
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
