// Controller events replicated through the real Raft core (tests/unit/raft TestCluster) with
// leader isolation, crashes and restarts: every node's applied log folds into the same state.
#include <gtest/gtest.h>

#include "controller/events.h"
#include "controller/replicas_info_manager.h"
#include "controller_test_util.h"
#include "raft/cluster_helper.h"

namespace comet::controller {
namespace {

using raft::testing::TestCluster;

// The state a node's driver would hold: its applied entries decoded and applied in order.
std::string fold(const std::vector<std::string>& applied) {
    ReplicasInfoManager m;
    for (const std::string& bytes : applied) {
        auto e = decode(bytes);
        EXPECT_TRUE(e.is_ok()) << e.status().to_string();
        if (e.is_ok()) {
            (void)m.apply(*e);  // stale events are ignored identically everywhere
        }
        m.check_invariants();
    }
    return m.encode_snapshot();
}

bool is_prefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// With `compact`, every node also snapshots and compacts its log now and then, so nodes that
// were crashed or cut off catch up by InstallSnapshot (Raft §7).
void converge(bool compact) {
    int leader_changes = 0;
    int crashes = 0;
    int installed = 0;
    for (uint64_t seed = 1; seed <= 4; ++seed) {
        SCOPED_TRACE(seed);
        TestCluster c(3, [](raft::RaftConfig& rc) { rc.max_snapshot_chunk_bytes = 256; });
        ASSERT_TRUE(c.elect(1));
        const std::vector<Event> log = testing::random_workload(seed + 100, 300);
        uint64_t x = seed * 2654435761u + 7;
        auto rnd = [&](uint64_t n) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            return static_cast<int>(x % n);
        };
        int crashed = 0;
        size_t proposed = 0;
        for (size_t i = 0; i < log.size(); ++i) {
            if (int l = c.leader(); l != 0 && c.propose(l, encode(log[i])).is_ok()) {
                ++proposed;
            }
            c.deliver_all();
            if (i % 15 == 14) {
                switch (rnd(4)) {
                    case 0: {  // isolate the leader; the other two elect a new one
                        const int old = c.leader();
                        if (old != 0 && crashed == 0) {
                            c.isolate(old);
                            int now = old;
                            for (int t = 0; t < 100 && (now == old || now == 0); ++t) {
                                c.tick_all(1);
                                now = c.leader();
                            }
                            EXPECT_NE(now, old) << "no new leader after isolating " << old;
                            ++leader_changes;
                        }
                        break;
                    }
                    case 1:  // crash a follower
                        if (crashed == 0) {
                            const int l = c.leader();
                            crashed = l % 3 + 1;
                            c.heal();
                            c.crash(crashed);
                            ++crashes;
                        }
                        break;
                    case 2:  // bring it back
                        if (crashed != 0) {
                            c.restart(crashed);
                            crashed = 0;
                        }
                        break;
                    default:
                        c.heal();
                        break;
                }
                if (compact) {
                    for (int id = 1; id <= 3; ++id) {
                        if (c.alive(id) && rnd(2) == 0) {
                            ASSERT_TRUE(c.compact(id).is_ok());
                        }
                    }
                }
                c.tick_all(5);
            }
            // Committed logs never diverge: every pair of applied sequences is prefix-ordered.
            for (int a = 1; a <= 3; ++a) {
                for (int b = a + 1; b <= 3; ++b) {
                    if (c.alive(a) && c.alive(b)) {
                        ASSERT_TRUE(is_prefix(c.applied(a), c.applied(b)) ||
                                    is_prefix(c.applied(b), c.applied(a)))
                            << "nodes " << a << " and " << b << " diverged at step " << i;
                    }
                }
            }
        }
        c.heal();
        if (crashed != 0) {
            c.restart(crashed);
        }
        for (int round = 0; round < 50 && !(c.applied(1) == c.applied(2) &&
                                             c.applied(2) == c.applied(3));
             ++round) {
            c.tick_all(10);
        }
        ASSERT_EQ(c.applied(1), c.applied(2));
        ASSERT_EQ(c.applied(2), c.applied(3));
        EXPECT_GT(c.applied(1).size(), log.size() / 4);
        EXPECT_LE(c.applied(1).size(), proposed);
        const std::string s1 = fold(c.applied(1));
        EXPECT_EQ(fold(c.applied(2)), s1);
        EXPECT_EQ(fold(c.applied(3)), s1);
        auto state = ReplicasInfoManager::decode_snapshot(s1);
        ASSERT_TRUE(state.is_ok());
        EXPECT_FALSE(state->broker_sets().empty());
        for (int id = 1; id <= 3; ++id) {
            installed += c.snapshots_installed(id);
        }
    }
    EXPECT_GT(leader_changes, 0);
    EXPECT_GT(crashes, 0);
    if (compact) {
        EXPECT_GT(installed, 0);
    }
}

TEST(RaftReplication, AllNodesConvergeToTheSameState) { converge(/*compact=*/false); }

TEST(RaftReplication, AllNodesConvergeToTheSameStateWithCompactionAndInstallSnapshot) {
    converge(/*compact=*/true);
}

}  // namespace
}  // namespace comet::controller
