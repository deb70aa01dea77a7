#include "ha/durability_contract.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

namespace comet::ha {
namespace {

bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

TEST(DurabilityContract, AsyncMasterAsyncFlush) {
    auto f = durability_facts_from_properties({{"brokerRole", "ASYNC_MASTER"}});
    auto e = explain_durability(f);
    EXPECT_EQ(e.contract,
              "a send is acknowledged once it is in the master's page cache "
              "(flushDiskType=ASYNC_FLUSH: written to disk in the background; a power failure of "
              "the master machine can lose the newest acknowledged messages, a process crash "
              "cannot); slaves copy it afterwards (asynchronous replication): losing the master "
              "can lose acknowledged messages no slave has yet");
    EXPECT_EQ(e.reasons,
              std::vector<std::string>{"brokerRole=ASYNC_MASTER: sends never wait for slaves"});
    EXPECT_TRUE(e.warnings.empty());
}

TEST(DurabilityContract, SyncMasterQuorumWithDowngrade) {
    auto f = durability_facts_from_properties({{"brokerRole", "SYNC_MASTER"},
                                               {"flushDiskType", "SYNC_FLUSH"},
                                               {"totalReplicas", "3"},
                                               {"inSyncReplicas", "3"},
                                               {"minInSyncReplicas", "2"},
                                               {"enableAutoInSyncReplicas", "true"},
                                               {"enableSlaveActingMaster", "true"}});
    auto e = explain_durability(f);
    EXPECT_EQ(e.contract,
              "a send is acknowledged once 3 of 3 replicas hold it: on the master's disk "
              "(flushDiskType=SYNC_FLUSH: fsync before the ack) and 2 slaves (in the slave's "
              "page cache)");
    EXPECT_TRUE(any_contains(e.reasons, "never below minInSyncReplicas=2"));
    EXPECT_TRUE(any_contains(e.reasons, "IN_SYNC_REPLICAS_NOT_ENOUGH"));
    EXPECT_TRUE(any_contains(e.reasons, "SLAVE_NOT_AVAILABLE"));
    EXPECT_TRUE(e.warnings.empty());
}

TEST(DurabilityContract, LiveStateFromRuntimeInfo) {
    auto f = durability_facts_from_properties({{"brokerRole", "SYNC_MASTER"},
                                               {"totalReplicas", "3"},
                                               {"inSyncReplicas", "3"},
                                               {"minInSyncReplicas", "2"},
                                               {"enableAutoInSyncReplicas", "true"},
                                               {"enableSlaveActingMaster", "true"}});
    add_runtime_info({{"haBrokerRole", "SYNC_MASTER"},
                      {"needAckNums", "2"},
                      {"needAckNumsDegraded", "true"},
                      {"aliveReplicaNums", "2"},
                      {"inSyncReplicaNums", "2"},
                      {"haConnectionInfo.0",
                       R"({"addr":"127.0.0.1:5000","brokerId":1,"slaveAckOffset":90,"diff":2048,)"
                       R"("inSync":true,"transferFromWhere":90})"}},
                     &f);
    ASSERT_TRUE(f.live.has_value());
    ASSERT_EQ(f.live->replicas.size(), 1u);
    EXPECT_EQ(f.live->replicas[0].addr, "127.0.0.1:5000");
    auto e = explain_durability(f);
    EXPECT_TRUE(any_contains(e.reasons,
                             "now: needAckNums=2 DEGRADED from inSyncReplicas=3 (alive replicas "
                             "2, in-sync replicas 2, master counted)"));
    EXPECT_TRUE(
        any_contains(e.reasons, "slave 127.0.0.1:5000 (brokerId 1): in sync, 2.0 KiB behind"));
}

TEST(DurabilityContract, SlaveRefersToItsMaster) {
    auto e = explain_durability(
        durability_facts_from_properties({{"brokerRole", "SLAVE"}, {"brokerId", "1"}}));
    EXPECT_NE(e.contract.find("this broker is a slave"), std::string::npos);
}

TEST(DurabilityContract, IgnoredAndContradictorySettingsWarnNamingTheKeys) {
    auto e = explain_durability(durability_facts_from_properties(
        {{"brokerRole", "ASYNC_MASTER"}, {"totalReplicas", "3"}, {"inSyncReplicas", "2"}}));
    ASSERT_EQ(e.warnings.size(), 1u);
    EXPECT_NE(e.warnings[0].find("brokerRole=ASYNC_MASTER ignores inSyncReplicas=2"),
              std::string::npos);

    e = explain_durability(
        durability_facts_from_properties({{"brokerRole", "SYNC_MASTER"}, {"inSyncReplicas", "1"}}));
    ASSERT_EQ(e.warnings.size(), 1u);
    EXPECT_NE(e.warnings[0].find("brokerRole=SYNC_MASTER with totalReplicas=1"), std::string::npos);
    EXPECT_NE(e.reasons[0].find("SYNC_MASTER with inSyncReplicas=1"), std::string::npos);
}

// Which quorum rules a set of properties selects: a Comet broker's derived quorumRules entry
// wins (its GET_BROKER_CONFIG lists every key); without it, any quorum key present means
// RocketMQ 5 (a file that sets one, a RocketMQ 5 broker), none means RocketMQ 4.9.8.
TEST(DurabilityContract, QuorumRulesDerivedFromTheProperties) {
    auto rules = [](std::map<std::string, std::string> p) {
        return durability_facts_from_properties(p).quorum.rules;
    };
    EXPECT_EQ(rules({{"brokerRole", "SYNC_MASTER"}}), QuorumRules::kRocketMq4);
    EXPECT_EQ(rules({}), QuorumRules::kRocketMq4);
    for (std::string_view key : kQuorumKeys) {
        const std::string value = key == "enableAutoInSyncReplicas" ? "false" : "1";
        EXPECT_EQ(rules({{"brokerRole", "SYNC_MASTER"}, {std::string(key), value}}),
                  QuorumRules::kRocketMq5)
            << key;
    }
    const std::map<std::string, std::string> all_keys = {{"brokerRole", "SYNC_MASTER"},
                                                         {"totalReplicas", "1"},
                                                         {"inSyncReplicas", "1"},
                                                         {"minInSyncReplicas", "1"},
                                                         {"enableAutoInSyncReplicas", "false"}};
    auto comet = all_keys;
    comet["quorumRules"] = "4.9.8";
    EXPECT_EQ(rules(comet), QuorumRules::kRocketMq4);
    comet["quorumRules"] = "5";
    EXPECT_EQ(rules(comet), QuorumRules::kRocketMq5);
    comet["quorumRules"] = "6";  // not ours: fall back on the keys present
    EXPECT_EQ(rules(comet), QuorumRules::kRocketMq5);
    EXPECT_EQ(rules({{"quorumRules", "5"}}), QuorumRules::kRocketMq5);
    EXPECT_FALSE(parse_quorum_rules("4").is_ok());
    EXPECT_EQ(quorum_rules_value(QuorumRules::kRocketMq4), "4.9.8");
}

// A 4.x broker.conf: SYNC_MASTER and no quorum key. The contract is 4.9.8's: master and one
// slave, SLAVE_NOT_AVAILABLE / FLUSH_SLAVE_TIMEOUT otherwise; no "totalReplicas=1" warning.
TEST(DurabilityContract, SyncMasterWithoutQuorumKeysWaitsForOneSlave) {
    auto f = durability_facts_from_properties(
        {{"brokerRole", "SYNC_MASTER"}, {"haSlaveFallbehindMax", "1048576"}});
    EXPECT_EQ(f.quorum.ha_slave_fallbehind_max, 1048576);
    auto e = explain_durability(f);
    EXPECT_EQ(e.quorum_rules, "RocketMQ 4.9.8 (no quorum key set)");
    EXPECT_EQ(e.contract,
              "a send is acknowledged once the master and one slave hold it: in the master's "
              "page cache (flushDiskType=ASYNC_FLUSH: written to disk in the background; a power "
              "failure of the master machine can lose the newest acknowledged messages, a process "
              "crash cannot) and one slave (in the slave's page cache)");
    EXPECT_TRUE(any_contains(e.reasons, "as in RocketMQ 4.9.8"));
    EXPECT_TRUE(any_contains(e.reasons,
                             "haSlaveFallbehindMax=1.0 MiB or more behind: "
                             "SLAVE_NOT_AVAILABLE at once"));
    EXPECT_TRUE(any_contains(e.reasons, "FLUSH_SLAVE_TIMEOUT"));
    EXPECT_TRUE(e.warnings.empty());
    add_runtime_info({{"haBrokerRole", "SYNC_MASTER"}, {"needAckNums", "2"}}, &f);
    e = explain_durability(f);
    EXPECT_TRUE(any_contains(e.reasons, "now: needAckNums=2"));
    EXPECT_TRUE(any_contains(e.reasons, "no slave is connected now"));

    e = explain_durability(durability_facts_from_properties(
        {{"brokerRole", "SYNC_MASTER"}, {"totalReplicas", "2"}, {"inSyncReplicas", "2"}}));
    EXPECT_EQ(e.quorum_rules, "RocketMQ 5 (a quorum key is set)");
    EXPECT_EQ(explain_durability(durability_facts_from_properties({{"brokerRole", "ASYNC_MASTER"}}))
                  .quorum_rules,
              "RocketMQ 4.9.8 (no quorum key set)");
    // DLedger, controller mode and slaves name no master-slave quorum rules.
    EXPECT_EQ(explain_durability(durability_facts_from_properties({{"brokerRole", "SLAVE"}}))
                  .quorum_rules,
              "");
    EXPECT_EQ(
        explain_durability(durability_facts_from_properties({{"enableControllerMode", "true"}}))
            .quorum_rules,
        "");
}

TEST(DurabilityContract, DLedgerMajority) {
    auto f = durability_facts_from_properties(
        {{"enableDLegerCommitLog", "true"},
         {"dLegerPeers", "n0-127.0.0.1:1;n1-127.0.0.1:2;n2-127.0.0.1:3"}});
    EXPECT_EQ(f.mode, ReplicationMode::kDLedger);
    EXPECT_EQ(f.dledger_peers, 3);
    auto e = explain_durability(f);
    EXPECT_EQ(e.contract,
              "a send is acknowledged once a majority (2 of 3 peers, the leader counted) has it "
              "on disk (fsync before each ack and before the leader counts itself)");
    f.dledger_sync_before_ack = false;
    f.dledger_peers = 4;
    e = explain_durability(f);
    EXPECT_NE(e.contract.find("3 of 4 peers"), std::string::npos);
    EXPECT_NE(e.contract.find("dLegerSyncBeforeAck=false"), std::string::npos);
    ASSERT_EQ(e.warnings.size(), 1u);
    EXPECT_NE(e.warnings[0].find("dLegerPeers lists 4 peers"), std::string::npos);
}

TEST(DurabilityContract, ControllerMode) {
    auto f = durability_facts_from_properties({{"enableControllerMode", "true"},
                                               {"allAckInSyncStateSet", "true"},
                                               {"minInSyncReplicas", "2"}});
    EXPECT_EQ(f.mode, ReplicationMode::kController);
    auto e = explain_durability(f);
    EXPECT_NE(e.contract.find("every member of the SyncStateSet"), std::string::npos);
    EXPECT_TRUE(any_contains(e.reasons, "minInSyncReplicas=2"));
    add_runtime_info({{"syncStateSet", "1,2,3"}, {"needAckNums", "3"}}, &f);
    e = explain_durability(f);
    EXPECT_TRUE(any_contains(e.reasons, "now: SyncStateSet {1,2,3}, needAckNums=3"));
}

}  // namespace
}  // namespace comet::ha
