#include "ha/quorum_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace comet::ha {
namespace {

constexpr int64_t kGap = 1000;

QuorumConfig cfg(BrokerRole role, int32_t total, int32_t isr, int32_t min, bool autoisr,
                 bool acting) {
    QuorumConfig c;
    c.broker_role = role;
    c.total_replicas = total;
    c.in_sync_replicas = isr;
    c.min_in_sync_replicas = min;
    c.enable_auto_in_sync_replicas = autoisr;
    c.enable_slave_acting_master = acting;
    c.ha_max_gap_not_in_sync = kGap;
    return c;
}

TEST(QuorumPolicy, ValidationNamesTheKeys) {
    std::vector<std::string> w;
    Status s = validate_quorum_config(cfg(BrokerRole::kSyncMaster, 2, 3, 1, false, false), &w);
    EXPECT_EQ(s.code(), Errc::kInvalidArgument);
    EXPECT_NE(s.message().find("inSyncReplicas=3"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("totalReplicas=2"), std::string::npos) << s.message();

    s = validate_quorum_config(cfg(BrokerRole::kSyncMaster, 3, 2, 3, false, false), &w);
    EXPECT_EQ(s.code(), Errc::kInvalidArgument);
    EXPECT_NE(s.message().find("minInSyncReplicas=3"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("inSyncReplicas=2"), std::string::npos) << s.message();

    EXPECT_FALSE(validate_quorum_config(cfg(BrokerRole::kSyncMaster, 0, 1, 1, false, false), &w));
    EXPECT_FALSE(validate_quorum_config(cfg(BrokerRole::kSyncMaster, 1, 0, 1, false, false), &w));
    EXPECT_FALSE(validate_quorum_config(cfg(BrokerRole::kSyncMaster, 1, 1, 0, false, false), &w));
    QuorumConfig bad_gap = cfg(BrokerRole::kSyncMaster, 1, 1, 1, false, false);
    bad_gap.ha_max_gap_not_in_sync = 0;
    Status g = validate_quorum_config(bad_gap, &w);
    EXPECT_NE(g.message().find("haMaxGapNotInSync"), std::string::npos);
    EXPECT_TRUE(w.empty());
}

TEST(QuorumPolicy, SyncMasterWithOneInSyncReplicaWarns) {
    std::vector<std::string> w;
    ASSERT_TRUE(validate_quorum_config(cfg(BrokerRole::kSyncMaster, 2, 1, 1, false, false), &w));
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("inSyncReplicas=1"), std::string::npos);
    w.clear();
    ASSERT_TRUE(validate_quorum_config(cfg(BrokerRole::kSyncMaster, 2, 2, 1, false, false), &w));
    EXPECT_TRUE(w.empty());
    ASSERT_TRUE(validate_quorum_config(cfg(BrokerRole::kAsyncMaster, 2, 1, 1, false, false), &w));
    EXPECT_TRUE(w.empty());
}

TEST(QuorumPolicy, ParseRole) {
    EXPECT_EQ(parse_broker_role("SYNC_MASTER").value(), BrokerRole::kSyncMaster);
    EXPECT_EQ(parse_broker_role("ASYNC_MASTER").value(), BrokerRole::kAsyncMaster);
    EXPECT_EQ(parse_broker_role("SLAVE").value(), BrokerRole::kSlave);
    auto r = parse_broker_role("sync_master");
    ASSERT_FALSE(r);
    EXPECT_NE(r.status().message().find("brokerRole"), std::string::npos);
}

TEST(QuorumPolicy, InSyncCountUsesStrictGap) {
    QuorumConfig c = cfg(BrokerRole::kSyncMaster, 3, 2, 1, false, false);
    std::vector<int64_t> acks{5000 - kGap, 5000 - kGap + 1, 5000};
    // Gap exactly haMaxGapNotInSync is out of sync (Java: gap < max).
    EXPECT_EQ(in_sync_replica_nums(c, 5000, acks), 3);
    EXPECT_EQ(in_sync_replica_nums(c, 5000, {}), 1);
}

// Hand-written rows from the issue and RocketMQ's RIP-34 examples.
TEST(QuorumPolicy, DocumentedExamples) {
    std::vector<int64_t> one_in_sync{100};
    std::vector<int64_t> none{};
    std::vector<int64_t> one_lagging{0};
    QuorumInput in;
    in.master_put_offset = 100;
    in.alive_replica_num = 2;

    // 5.x default: SYNC_MASTER, inSyncReplicas=1 -> no wait.
    in.slave_ack_offsets = one_in_sync;
    auto d = decide_quorum(cfg(BrokerRole::kSyncMaster, 2, 1, 1, false, false), in);
    EXPECT_EQ(d.verdict, QuorumVerdict::kPutOkNow);

    // inSyncReplicas=2 with 3 replicas: wait for master + 1.
    d = decide_quorum(cfg(BrokerRole::kSyncMaster, 3, 2, 1, false, false), in);
    EXPECT_EQ(d.verdict, QuorumVerdict::kWaitForSlaves);
    EXPECT_EQ(d.need_ack_nums, 2);

    // ASYNC_MASTER ignores inSyncReplicas.
    d = decide_quorum(cfg(BrokerRole::kAsyncMaster, 3, 3, 1, false, false), in);
    EXPECT_EQ(d.verdict, QuorumVerdict::kPutOkNow);

    // No slave connected -> SLAVE_NOT_AVAILABLE (Comet fast fail).
    in.slave_ack_offsets = none;
    d = decide_quorum(cfg(BrokerRole::kSyncMaster, 2, 2, 1, false, false), in);
    EXPECT_EQ(d.verdict, QuorumVerdict::kSlaveNotAvailable);
    QuorumConfig rocketmq5 = cfg(BrokerRole::kSyncMaster, 2, 2, 1, false, false);
    rocketmq5.slave_not_available_fast_fail = false;
    EXPECT_EQ(decide_quorum(rocketmq5, in).verdict, QuorumVerdict::kWaitForSlaves);

    // Two replicas, auto downgrade to 1 when the slave lags past the gap.
    in.slave_ack_offsets = one_lagging;
    in.master_put_offset = kGap;
    d = decide_quorum(cfg(BrokerRole::kSyncMaster, 2, 2, 1, true, true), in);
    EXPECT_EQ(d.verdict, QuorumVerdict::kPutOkNow);
    EXPECT_EQ(d.need_ack_nums, 1);
    EXPECT_TRUE(d.degraded);
    // Same without auto downgrade: rejected before writing.
    d = decide_quorum(cfg(BrokerRole::kSyncMaster, 2, 2, 1, false, true), in);
    EXPECT_EQ(d.verdict, QuorumVerdict::kInSyncReplicasNotEnough);
    EXPECT_EQ(d.in_sync, 1);
    // Without slave acting master the gap does not matter: wait (and time out).
    d = decide_quorum(cfg(BrokerRole::kSyncMaster, 2, 2, 1, false, false), in);
    EXPECT_EQ(d.verdict, QuorumVerdict::kWaitForSlaves);

    // Alive replicas from the name server cap the in-sync count.
    in.slave_ack_offsets = one_in_sync;
    in.master_put_offset = 100;
    in.alive_replica_num = 1;
    d = decide_quorum(cfg(BrokerRole::kSyncMaster, 2, 2, 1, false, true), in);
    EXPECT_EQ(d.verdict, QuorumVerdict::kInSyncReplicasNotEnough);

    // WAIT=false or duplication: never waits.
    in.alive_replica_num = 2;
    in.wait_store_msg_ok = false;
    EXPECT_EQ(decide_quorum(cfg(BrokerRole::kSyncMaster, 2, 2, 1, false, false), in).verdict,
              QuorumVerdict::kPutOkNow);
    in.wait_store_msg_ok = true;
    in.duplication_enable = true;
    EXPECT_EQ(decide_quorum(cfg(BrokerRole::kSyncMaster, 2, 2, 1, false, false), in).verdict,
              QuorumVerdict::kPutOkNow);
}

// Every combination of the keys over small ranges, against the rules written as a table of
// cases (the wording), plus invariants that hold everywhere.
TEST(QuorumPolicy, ExhaustiveTable) {
    const BrokerRole roles[] = {BrokerRole::kAsyncMaster, BrokerRole::kSyncMaster,
                                BrokerRole::kSlave};
    // Slave states: 0..3 slaves, each in sync (ack = put) or lagging (ack = put - gap).
    int checked = 0;
    int waits = 0, rejects = 0, not_avail = 0, now = 0;
    for (BrokerRole role : roles) {
        for (int total = 1; total <= 3; ++total) {
            for (int isr = 1; isr <= 3; ++isr) {
                for (int min = 1; min <= 3; ++min) {
                    for (int flags = 0; flags < 16; ++flags) {
                        QuorumConfig c = cfg(role, total, isr, min, flags & 1, flags & 2);
                        c.slave_not_available_fast_fail = (flags & 4) != 0;
                        bool wait_prop = (flags & 8) == 0;
                        std::vector<std::string> warnings;
                        Status st = validate_quorum_config(c, &warnings);
                        ASSERT_EQ(st.is_ok(), isr <= total && min <= isr);
                        ASSERT_EQ(!warnings.empty() && warnings[0].find("SYNC_MASTER") !=
                                                           std::string::npos,
                                  st.is_ok() && role == BrokerRole::kSyncMaster && isr == 1);
                        if (!st.is_ok()) continue;
                        for (int alive = 1; alive <= 3; ++alive) {
                            for (int slaves = 0; slaves <= 3; ++slaves) {
                                for (int mask = 0; mask < (1 << slaves); ++mask) {
                                    const int64_t put = 10 * kGap;
                                    std::vector<int64_t> acks;
                                    int in_sync_slaves = 0;
                                    for (int i = 0; i < slaves; ++i) {
                                        bool ok = (mask >> i) & 1;
                                        acks.push_back(ok ? put - kGap + 1 : put - kGap);
                                        in_sync_slaves += ok;
                                    }
                                    QuorumInput in;
                                    in.wait_store_msg_ok = wait_prop;
                                    in.alive_replica_num = alive;
                                    in.master_put_offset = put;
                                    in.slave_ack_offsets = acks;
                                    QuorumDecision d = decide_quorum(c, in);
                                    ++checked;

                                    // Expected, case by case.
                                    bool handles = role == BrokerRole::kSyncMaster && wait_prop;
                                    int exp_need = isr;
                                    QuorumVerdict exp;
                                    bool acting = handles && c.enable_slave_acting_master;
                                    int in_sync = acting ? std::min(alive, 1 + in_sync_slaves)
                                                         : 1 + in_sync_slaves;
                                    if (acting && c.enable_auto_in_sync_replicas) {
                                        exp_need = std::max(min, std::min(isr, in_sync));
                                    }
                                    if (acting && exp_need > in_sync) {
                                        exp = QuorumVerdict::kInSyncReplicasNotEnough;
                                    } else if (!handles || exp_need <= 1) {
                                        exp = QuorumVerdict::kPutOkNow;
                                    } else if (slaves == 0 && c.slave_not_available_fast_fail) {
                                        exp = QuorumVerdict::kSlaveNotAvailable;
                                    } else {
                                        exp = QuorumVerdict::kWaitForSlaves;
                                    }
                                    ASSERT_EQ(d.verdict, exp)
                                        << "role=" << broker_role_name(role) << " total=" << total
                                        << " isr=" << isr << " min=" << min << " flags=" << flags
                                        << " alive=" << alive << " slaves=" << slaves
                                        << " mask=" << mask;
                                    ASSERT_EQ(d.need_ack_nums, exp_need);
                                    ASSERT_EQ(d.in_sync, in_sync);
                                    ASSERT_EQ(d.need_handle_ha, handles);
                                    ASSERT_EQ(d.degraded, exp_need < isr);
                                    // Invariants.
                                    ASSERT_GE(d.need_ack_nums, 1);
                                    ASSERT_LE(d.need_ack_nums, isr);
                                    if (d.verdict == QuorumVerdict::kWaitForSlaves) {
                                        ASSERT_GE(d.need_ack_nums, 2);
                                    }
                                    if (role != BrokerRole::kSyncMaster) {
                                        ASSERT_EQ(d.verdict, QuorumVerdict::kPutOkNow);
                                    }
                                    switch (d.verdict) {
                                        case QuorumVerdict::kWaitForSlaves: ++waits; break;
                                        case QuorumVerdict::kInSyncReplicasNotEnough:
                                            ++rejects;
                                            break;
                                        case QuorumVerdict::kSlaveNotAvailable: ++not_avail; break;
                                        case QuorumVerdict::kPutOkNow: ++now; break;
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    // Every outcome is reached by the table.
    EXPECT_GT(checked, 10000);
    EXPECT_GT(waits, 0);
    EXPECT_GT(rejects, 0);
    EXPECT_GT(not_avail, 0);
    EXPECT_GT(now, 0);
}

}  // namespace
}  // namespace comet::ha
