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

// A literal table, each row worked out by hand from RocketMQ 5's rules (CommitLog#asyncPutMessage,
// #needHandleHA, #calcNeedAckNums, #handleHA; DefaultHAService#inSyncReplicasNums) plus Comet's
// SLAVE_NOT_AVAILABLE fast fail. Nothing here is computed by a copy of the code under test.
//   needHandleHA = SYNC_MASTER && WAIT && !duplicationEnable
//   needAckNums  = inSyncReplicas; only with needHandleHA && enableSlaveActingMaster:
//                  inSync = min(alive, 1 + in-sync slaves); with enableAutoInSyncReplicas
//                  needAckNums = max(minInSyncReplicas, min(inSyncReplicas, inSync));
//                  needAckNums > inSync -> IN_SYNC_REPLICAS_NOT_ENOUGH (before writing)
//   then: !needHandleHA or needAckNums <= 1 -> PUT_OK at once; no slave connected and fast fail
//   -> SLAVE_NOT_AVAILABLE; else wait for needAckNums replicas.
struct Row {
    BrokerRole role;
    int total, isr, min;
    bool autoisr, acting, fast_fail, wait, duplication;
    int alive, in_sync_slaves, lagging_slaves;
    // expected
    QuorumVerdict verdict;
    int need, in_sync;
    bool degraded, handles;
};

TEST(QuorumPolicy, RocketMqRulesTable) {
    using V = QuorumVerdict;
    constexpr auto S = BrokerRole::kSyncMaster;
    constexpr auto A = BrokerRole::kAsyncMaster;
    constexpr auto L = BrokerRole::kSlave;
    constexpr bool T = true, F = false;
    const Row rows[] = {
        // role t isr min auto act ff  wait dup alive ok lag -> verdict need insync deg handles
        {A, 3, 3, 1, F, F, T, T, F, 3, 2, 0, V::kPutOkNow, 3, 3, F, F},
        {A, 3, 2, 1, T, T, T, T, F, 1, 0, 0, V::kPutOkNow, 2, 1, F, F},
        {L, 3, 2, 1, F, F, T, T, F, 3, 2, 0, V::kPutOkNow, 2, 3, F, F},
        {S, 3, 2, 1, F, F, T, T, F, 3, 2, 0, V::kWaitForSlaves, 2, 3, F, T},
        {S, 3, 2, 1, F, F, T, F, F, 3, 2, 0, V::kPutOkNow, 2, 3, F, F},  // WAIT=false
        {S, 3, 2, 1, F, F, T, T, T, 3, 2, 0, V::kPutOkNow, 2, 3, F, F},  // duplication
        {S, 2, 1, 1, F, F, T, T, F, 2, 1, 0, V::kPutOkNow, 1, 2, F, T},  // async trap
        {S, 1, 1, 1, F, F, T, T, F, 1, 0, 0, V::kPutOkNow, 1, 1, F, T},
        {S, 3, 3, 1, F, F, T, T, F, 3, 2, 0, V::kWaitForSlaves, 3, 3, F, T},
        {S, 3, 2, 1, F, F, T, T, F, 1, 0, 0, V::kSlaveNotAvailable, 2, 1, F, T},
        {S, 3, 2, 1, F, F, F, T, F, 1, 0, 0, V::kWaitForSlaves, 2, 1, F, T},  // RocketMQ 5
        // Without acting master the gap and the alive count are not looked at.
        {S, 3, 2, 1, F, F, T, T, F, 1, 0, 2, V::kWaitForSlaves, 2, 1, F, T},
        {S, 3, 3, 1, T, F, T, T, F, 1, 0, 2, V::kWaitForSlaves, 3, 1, F, T},
        {S, 3, 3, 1, T, F, T, T, F, 1, 0, 0, V::kSlaveNotAvailable, 3, 1, F, T},
        // Acting master, no auto downgrade: too few in sync -> refused before writing.
        {S, 3, 2, 1, F, T, T, T, F, 3, 0, 2, V::kInSyncReplicasNotEnough, 2, 1, F, T},
        {S, 3, 2, 1, F, T, T, T, F, 3, 1, 1, V::kWaitForSlaves, 2, 2, F, T},
        {S, 3, 3, 1, F, T, T, T, F, 2, 2, 0, V::kInSyncReplicasNotEnough, 3, 2, F, T},
        {S, 3, 2, 1, F, T, T, T, F, 1, 2, 0, V::kInSyncReplicasNotEnough, 2, 1, F, T},
        {S, 3, 2, 1, F, T, T, F, F, 1, 0, 0, V::kPutOkNow, 2, 1, F, F},  // WAIT=false
        // Acting master with auto downgrade: clamp to [min, isr] by the in-sync count.
        {S, 3, 2, 1, T, T, T, T, F, 3, 0, 2, V::kPutOkNow, 1, 1, T, T},
        {S, 3, 2, 1, T, T, T, T, F, 3, 0, 0, V::kPutOkNow, 1, 1, T, T},
        {S, 3, 3, 2, T, T, T, T, F, 3, 1, 1, V::kWaitForSlaves, 2, 2, T, T},
        {S, 3, 3, 2, T, T, T, T, F, 3, 0, 2, V::kInSyncReplicasNotEnough, 2, 1, T, T},
        {S, 3, 2, 2, T, T, T, T, F, 3, 0, 0, V::kInSyncReplicasNotEnough, 2, 1, F, T},
        {S, 3, 3, 1, T, T, T, T, F, 2, 2, 0, V::kWaitForSlaves, 2, 2, T, T},
        {S, 3, 3, 1, T, T, T, T, F, 3, 2, 0, V::kWaitForSlaves, 3, 3, F, T},
        {S, 2, 2, 1, T, T, T, T, F, 2, 0, 1, V::kPutOkNow, 1, 1, T, T},
    };
    for (const Row& r : rows) {
        QuorumConfig c = cfg(r.role, r.total, r.isr, r.min, r.autoisr, r.acting);
        c.slave_not_available_fast_fail = r.fast_fail;
        const int64_t put = 10 * kGap;
        std::vector<int64_t> acks;
        for (int i = 0; i < r.in_sync_slaves; ++i)
            acks.push_back(put - kGap + 1);
        for (int i = 0; i < r.lagging_slaves; ++i)
            acks.push_back(put - kGap);
        QuorumInput in;
        in.wait_store_msg_ok = r.wait;
        in.duplication_enable = r.duplication;
        in.alive_replica_num = r.alive;
        in.master_put_offset = put;
        in.slave_ack_offsets = acks;
        const QuorumDecision d = decide_quorum(c, in);
        const std::string row =
            std::string(broker_role_name(r.role)) + " total=" + std::to_string(r.total) +
            " isr=" + std::to_string(r.isr) + " min=" + std::to_string(r.min) +
            " auto=" + std::to_string(r.autoisr) + " acting=" + std::to_string(r.acting) +
            " alive=" + std::to_string(r.alive) + " ok=" + std::to_string(r.in_sync_slaves) +
            " lag=" + std::to_string(r.lagging_slaves);
        EXPECT_EQ(quorum_verdict_name(d.verdict), quorum_verdict_name(r.verdict)) << row;
        EXPECT_EQ(d.need_ack_nums, r.need) << row;
        EXPECT_EQ(d.in_sync, r.in_sync) << row;
        EXPECT_EQ(d.degraded, r.degraded) << row;
        EXPECT_EQ(d.need_handle_ha, r.handles) << row;
    }
}

// RocketMQ 4.9.8's rules (a configuration that sets no quorum key), row by row from
// CommitLog#submitReplicaRequest and HAService#isSlaveOK, worked out by hand:
//   SYNC_MASTER and WAIT: no slave connected, or masterPut - max(slave acks) >=
//   haSlaveFallbehindMax -> SLAVE_NOT_AVAILABLE; else wait for one slave (needAckNums 2).
//   Anything else -> PUT_OK at once. duplicationEnable, the acting-master keys and Comet's
//   slaveNotAvailableFastFail play no part.
TEST(QuorumPolicy, RocketMq498RulesWaitForOneSlave) {
    using V = QuorumVerdict;
    constexpr int64_t kFallBehind = 500;
    struct Case {
        const char* name;
        BrokerRole role;
        bool wait, duplication, acting, fast_fail;
        std::vector<int64_t> acks;  // master at 10000
        V verdict;
        int need;
        bool handles;
    };
    constexpr auto S = BrokerRole::kSyncMaster;
    const Case cases[] = {
        {"no slave", S, true, false, false, true, {}, V::kSlaveNotAvailable, 2, true},
        {"no slave, fast fail off",
         S,
         true,
         false,
         false,
         false,
         {},
         V::kSlaveNotAvailable,
         2,
         true},
        {"slave near", S, true, false, false, true, {9990}, V::kWaitForSlaves, 2, true},
        {"slave just inside", S, true, false, false, true, {9501}, V::kWaitForSlaves, 2, true},
        {"slave exactly the limit behind",
         S,
         true,
         false,
         false,
         true,
         {9500},
         V::kSlaveNotAvailable,
         2,
         true},
        {"one far, one near", S, true, false, false, true, {0, 9990}, V::kWaitForSlaves, 2, true},
        {"WAIT=false", S, false, false, false, true, {}, V::kPutOkNow, 2, false},
        {"duplicationEnable ignored",
         S,
         true,
         true,
         false,
         true,
         {9990},
         V::kWaitForSlaves,
         2,
         true},
        {"acting master ignored", S, true, false, true, true, {9990}, V::kWaitForSlaves, 2, true},
        {"ASYNC_MASTER",
         BrokerRole::kAsyncMaster,
         true,
         false,
         false,
         true,
         {},
         V::kPutOkNow,
         1,
         false},
        {"SLAVE", BrokerRole::kSlave, true, false, false, true, {}, V::kPutOkNow, 1, false},
    };
    for (const Case& k : cases) {
        QuorumConfig c = cfg(k.role, 1, 1, 1, false, k.acting);
        c.rules = QuorumRules::kRocketMq4;
        c.ha_slave_fallbehind_max = kFallBehind;
        c.slave_not_available_fast_fail = k.fast_fail;
        QuorumInput in;
        in.wait_store_msg_ok = k.wait;
        in.duplication_enable = k.duplication;
        in.alive_replica_num = 1;
        in.master_put_offset = 10000;
        in.slave_ack_offsets = k.acks;
        const QuorumDecision d = decide_quorum(c, in);
        EXPECT_EQ(quorum_verdict_name(d.verdict), quorum_verdict_name(k.verdict)) << k.name;
        EXPECT_EQ(d.need_ack_nums, k.need) << k.name;
        EXPECT_EQ(d.need_handle_ha, k.handles) << k.name;
        EXPECT_FALSE(d.degraded) << k.name;
    }
    // The same SYNC_MASTER under RocketMQ 5's rules (defaults 1/1): the master alone.
    QuorumConfig five = cfg(S, 1, 1, 1, false, false);
    QuorumInput in;
    in.master_put_offset = 10000;
    EXPECT_EQ(decide_quorum(five, in).verdict, V::kPutOkNow);
}

TEST(QuorumPolicy, RocketMq498RulesValidation) {
    QuorumConfig c = cfg(BrokerRole::kSyncMaster, 1, 1, 1, false, false);
    c.rules = QuorumRules::kRocketMq4;
    std::vector<std::string> w;
    ASSERT_TRUE(validate_quorum_config(c, &w));
    EXPECT_TRUE(w.empty()) << "the inSyncReplicas=1 warning is about RocketMQ 5's rules";
    c.ha_slave_fallbehind_max = 0;
    Status s = validate_quorum_config(c, &w);
    EXPECT_NE(s.message().find("haSlaveFallbehindMax"), std::string::npos) << s.message();
    EXPECT_EQ(quorum_rules_name(QuorumRules::kRocketMq4), "RocketMQ 4.9.8");
    EXPECT_EQ(quorum_rules_name(QuorumRules::kRocketMq5), "RocketMQ 5");
    EXPECT_EQ(parse_quorum_rules("4.9.8").value(), QuorumRules::kRocketMq4);
    EXPECT_EQ(parse_quorum_rules("5").value(), QuorumRules::kRocketMq5);
}

// Every combination of the keys over small ranges: properties that hold everywhere (the
// expected values themselves are the literal table above).
TEST(QuorumPolicy, InvariantsOverEveryCombination) {
    const BrokerRole roles[] = {BrokerRole::kAsyncMaster, BrokerRole::kSyncMaster,
                                BrokerRole::kSlave};
    int checked = 0;
    int waits = 0, rejects = 0, not_avail = 0, now = 0;
    for (BrokerRole role : roles) {
        for (int total = 1; total <= 3; ++total) {
            for (int isr = 1; isr <= 3; ++isr) {
                for (int min = 1; min <= 3; ++min) {
                    for (int flags = 0; flags < 16; ++flags) {
                        QuorumConfig c = cfg(role, total, isr, min, flags & 1, flags & 2);
                        c.slave_not_available_fast_fail = (flags & 4) != 0;
                        const bool wait_prop = (flags & 8) == 0;
                        std::vector<std::string> warnings;
                        Status st = validate_quorum_config(c, &warnings);
                        ASSERT_EQ(st.is_ok(), isr <= total && min <= isr);
                        ASSERT_EQ(!warnings.empty() &&
                                      warnings[0].find("SYNC_MASTER") != std::string::npos,
                                  st.is_ok() && role == BrokerRole::kSyncMaster && isr == 1);
                        if (!st.is_ok())
                            continue;
                        for (int alive = 1; alive <= 3; ++alive) {
                            for (int slaves = 0; slaves <= 3; ++slaves) {
                                for (int mask = 0; mask < (1 << slaves); ++mask) {
                                    const int64_t put = 10 * kGap;
                                    std::vector<int64_t> acks;
                                    for (int i = 0; i < slaves; ++i) {
                                        const bool ok = (mask >> i) & 1;
                                        acks.push_back(ok ? put - kGap + 1 : put - kGap);
                                    }
                                    QuorumInput in;
                                    in.wait_store_msg_ok = wait_prop;
                                    in.alive_replica_num = alive;
                                    in.master_put_offset = put;
                                    in.slave_ack_offsets = acks;
                                    const QuorumDecision d = decide_quorum(c, in);
                                    ++checked;
                                    ASSERT_GE(d.need_ack_nums, 1);
                                    ASSERT_LE(d.need_ack_nums, isr);
                                    ASSERT_GE(d.need_ack_nums, std::min(min, isr));
                                    ASSERT_EQ(d.degraded, d.need_ack_nums < isr);
                                    ASSERT_EQ(d.need_handle_ha,
                                              role == BrokerRole::kSyncMaster && wait_prop);
                                    if (d.verdict == QuorumVerdict::kWaitForSlaves) {
                                        ASSERT_GE(d.need_ack_nums, 2);
                                        ASSERT_TRUE(slaves > 0 || !c.slave_not_available_fast_fail);
                                    }
                                    if (d.verdict == QuorumVerdict::kInSyncReplicasNotEnough) {
                                        ASSERT_TRUE(c.enable_slave_acting_master);
                                        ASSERT_GT(d.need_ack_nums, d.in_sync);
                                    }
                                    if (d.verdict == QuorumVerdict::kSlaveNotAvailable) {
                                        ASSERT_EQ(slaves, 0);
                                    }
                                    if (!d.need_handle_ha) {
                                        ASSERT_EQ(d.verdict, QuorumVerdict::kPutOkNow);
                                    }
                                    switch (d.verdict) {
                                        case QuorumVerdict::kWaitForSlaves:
                                            ++waits;
                                            break;
                                        case QuorumVerdict::kInSyncReplicasNotEnough:
                                            ++rejects;
                                            break;
                                        case QuorumVerdict::kSlaveNotAvailable:
                                            ++not_avail;
                                            break;
                                        case QuorumVerdict::kPutOkNow:
                                            ++now;
                                            break;
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    // 3 roles x 10 valid (total, isr, min) x 16 flag sets x 3 alive counts x 15 slave states.
    EXPECT_EQ(checked, 3 * 10 * 16 * 3 * 15);
    EXPECT_GT(waits, 0);
    EXPECT_GT(rejects, 0);
    EXPECT_GT(not_avail, 0);
    EXPECT_GT(now, 0);
}

}  // namespace
}  // namespace comet::ha
