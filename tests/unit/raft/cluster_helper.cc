#include "cluster_helper.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

namespace comet::raft::testing {

namespace {

RaftConfig make_config(int id, int n) {
    RaftConfig c;
    c.id = NodeId(id);
    for (int i = 1; i <= n; ++i) {
        c.voters.push_back(NodeId(i));
    }
    return c;
}

// Snapshot data of the test state machine: each applied payload as [u32 size][bytes].
std::vector<std::string> split_snapshot(std::string_view data) {
    std::vector<std::string> out;
    while (data.size() >= 4) {
        uint32_t n = 0;
        std::memcpy(&n, data.data(), 4);
        out.emplace_back(data.substr(4, n));
        data.remove_prefix(std::min(data.size(), size_t{4} + n));
    }
    return out;
}

}  // namespace

Status TestCluster::compact(int id) {
    std::string data;
    for (const std::string& p : applied_[id]) {
        const auto n = static_cast<uint32_t>(p.size());
        data.append(reinterpret_cast<const char*>(&n), 4);
        data += p;
    }
    Status st = nodes_.at(id)->compact(nodes_.at(id)->applied_index(), SharedBytes::copy_of(data));
    process_ready(id);
    return st;
}

TestCluster::TestCluster(int n, const std::function<void(RaftConfig&)>& tweak)
    : tweak_(tweak), n_(n) {
    for (int id = 1; id <= n; ++id) {
        storages_[id] = std::make_unique<MemoryLogStorage>();
        rngs_[id] = std::make_unique<Rng>(static_cast<uint64_t>(id) * 7919);
        restart(id);
    }
}

void TestCluster::restart(int id) {
    RaftConfig c = make_config(id, n_);
    if (tweak_) {
        tweak_(c);
    }
    auto node = RaftNode::open(c, storages_.at(id).get(), rngs_.at(id).get());
    ASSERT_TRUE(node.is_ok()) << node.status().to_string();
    nodes_[id] = std::move(node).value();
    // The state machine restarts from the snapshot (if any).
    applied_[id] = split_snapshot(storages_.at(id)->snapshot().data.view());
    stalled_seqs_[id].clear();
    process_ready(id);
}

void TestCluster::crash(int id) {
    nodes_[id].reset();
    storages_.at(id)->crash(0, false);
    stalled_seqs_[id].clear();
}

void TestCluster::isolate(int id) {
    for (int other = 1; other <= n_; ++other) {
        if (other != id) {
            cut_both(id, other);
        }
    }
}

void TestCluster::set_disk_stalled(int id, bool stalled) {
    if (stalled) {
        stalled_.insert(id);
        return;
    }
    stalled_.erase(id);
    if (alive(id)) {
        ASSERT_TRUE(storages_.at(id)->sync().is_ok());
        for (uint64_t seq : stalled_seqs_[id]) {
            nodes_[id]->persisted(seq);
        }
        stalled_seqs_[id].clear();
        process_ready(id);
    }
}

void TestCluster::process_ready(int id) {
    RaftNode& node = *nodes_.at(id);
    for (int round = 0; round < 100 && node.has_ready(); ++round) {
        Ready rd = node.take_ready();
        for (Message& m : rd.messages) {
            queue_.push_back(std::move(m));
        }
        if (rd.snapshot.has_value()) {
            applied_[id] = split_snapshot(rd.snapshot->data.view());
            installed_[id] += 1;
        }
        for (LogIndex i = rd.apply_from; i <= rd.apply_to; i += 1) {
            const Entry& e = storages_.at(id)->entry(i);
            if (e.type == EntryType::kNormal) {
                applied_[id].emplace_back(e.payload.view());
            }
        }
        if (rd.persist.has_value()) {
            if (stalled_.count(id) != 0) {
                stalled_seqs_[id].push_back(rd.persist->seq);
            } else {
                ASSERT_TRUE(storages_.at(id)->sync().is_ok());
                node.persisted(rd.persist->seq);
            }
        }
    }
    node.check_invariants();
}

void TestCluster::flush() {
    for (auto& [id, node] : nodes_) {
        if (node) {
            process_ready(id);
        }
    }
}

int TestCluster::deliver_all(int max) {
    flush();
    int delivered = 0;
    while (!queue_.empty() && delivered < max) {
        Message m = std::move(queue_.front());
        queue_.pop_front();
        const int from = m.from.value();
        const int to = m.to.value();
        if (cut_.count({from, to}) != 0 || !alive(to) || (drop_if_ && drop_if_(m))) {
            continue;
        }
        if (m.type == MessageType::kAppendResponse && m.reject) {
            ++append_rejects_delivered_;
        }
        ++delivered;
        const Status st = nodes_[to]->step(m);
        EXPECT_TRUE(st.is_ok() || may_fail_.count(to) != 0)
            << describe(m) << ": " << st.to_string();
        process_ready(to);
    }
    return delivered;
}

void TestCluster::tick(int id, bool deliver) {
    const Status st = nodes_.at(id)->tick();
    ASSERT_TRUE(st.is_ok() || may_fail_.count(id) != 0) << st.to_string();
    process_ready(id);
    if (deliver) {
        deliver_all();
    }
}

void TestCluster::tick_all(int times) {
    for (int t = 0; t < times; ++t) {
        for (auto& [id, node] : nodes_) {
            if (node) {
                const Status st = node->tick();
                EXPECT_TRUE(st.is_ok() || may_fail_.count(id) != 0) << st.to_string();
            }
        }
        deliver_all();
    }
}

bool TestCluster::elect(int id, int max_ticks) {
    for (int t = 0; t < max_ticks; ++t) {
        tick(id);
        if (nodes_.at(id)->role() == Role::kLeader) {
            return true;
        }
    }
    return false;
}

int TestCluster::leader() const {
    int best = 0;
    Term best_term;
    for (const auto& [id, node] : nodes_) {
        if (node && node->role() == Role::kLeader && (best == 0 || node->term() > best_term)) {
            best = id;
            best_term = node->term();
        }
    }
    return best;
}

Status TestCluster::propose(int id, const std::string& payload) {
    SharedBytes p = SharedBytes::copy_of(payload);
    auto r = nodes_.at(id)->propose(std::span<const SharedBytes>(&p, 1));
    process_ready(id);
    return r.status();
}

std::vector<Term> TestCluster::log_terms(int id) {
    std::vector<Term> out;
    MemoryLogStorage& s = *storages_.at(id);
    for (LogIndex i(1); i <= s.last_index(); i += 1) {
        out.push_back(s.entry(i).term);
    }
    return out;
}

void TestCluster::check_all() {
    for (auto& [id, node] : nodes_) {
        if (node) {
            node->check_invariants();
        }
    }
}

std::vector<Entry> make_entries(int64_t first, int64_t count, int64_t term) {
    std::vector<Entry> out;
    for (int64_t i = 0; i < count; ++i) {
        out.push_back(Entry{Term(term), LogIndex(first + i), EntryType::kNormal,
                            SharedBytes::copy_of("p" + std::to_string(first + i))});
    }
    return out;
}

}  // namespace comet::raft::testing
