#include "ha/durability_contract.h"

#include <gtest/gtest.h>

#include <algorithm>

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

    e = explain_durability(durability_facts_from_properties({{"brokerRole", "SYNC_MASTER"}}));
    ASSERT_EQ(e.warnings.size(), 1u);
    EXPECT_NE(e.warnings[0].find("brokerRole=SYNC_MASTER with totalReplicas=1"), std::string::npos);
    EXPECT_NE(e.reasons[0].find("SYNC_MASTER with inSyncReplicas=1"), std::string::npos);
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
