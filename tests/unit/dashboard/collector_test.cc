// Collector: one poll of a FakeSource into a ClusterSnapshot (members, roles, replication,
// durability, topics, consumer lag) and the members it remembers after they unregister.

#include "dashboard/collector.h"

#include <gtest/gtest.h>

#include "fake_source_helper.h"

namespace comet::dashboard {
namespace {

using testing::FakeSource;
using testing::ha_connection;

constexpr const char* kMaster = "127.0.0.1:10911";
constexpr const char* kSlave1 = "127.0.0.1:10921";
constexpr const char* kSlave2 = "127.0.0.1:10931";

// A SYNC_MASTER with two slaves, slave 1 in sync, slave 2 far behind.
FakeSource one_master_two_slaves() {
    FakeSource s;
    s.add_group("DefaultCluster", "broker-a", {{0, kMaster}, {1, kSlave1}, {2, kSlave2}});
    s.runtime[kMaster] = {{"brokerRole", "SYNC_MASTER"},
                          {"haBrokerRole", "SYNC_MASTER"},
                          {"brokerVersionDesc", "V4_9_8"},
                          {"putTps", "12.5 3.0 1.0"},
                          {"masterCommitLogMaxOffset", "5000"},
                          {"inSyncReplicaNums", "2"},
                          {"aliveReplicaNums", "3"},
                          {"needAckNums", "2"},
                          {"needAckNumsDegraded", "false"},
                          {"haConnectionInfo.0", ha_connection(1, 0, true)},
                          {"haConnectionInfo.1", ha_connection(2, 4000, false)}};
    for (const char* slave : {kSlave1, kSlave2}) {
        s.runtime[slave] = {{"brokerRole", "SLAVE"},
                            {"haBrokerRole", "SLAVE"},
                            {"brokerVersionDesc", "V4_9_8"},
                            {"haClientMaxOffset", slave == kSlave1 ? "5000" : "1000"}};
    }
    s.config[kMaster] = {{"brokerRole", "SYNC_MASTER"},
                         {"totalReplicas", "3"},
                         {"inSyncReplicas", "2"},
                         {"flushDiskType", "ASYNC_FLUSH"}};
    return s;
}

const MemberView& member(const ClusterSnapshot& s, const std::string& addr) {
    for (const GroupView& g : s.groups) {
        for (const MemberView& m : g.members) {
            if (m.addr == addr) {
                return m;
            }
        }
    }
    ADD_FAILURE() << "no member " << addr;
    static const MemberView none;
    return none;
}

TEST(Collector, GroupMembersRolesAndReplication) {
    FakeSource src = one_master_two_slaves();
    Collector c(src);
    const ClusterSnapshot s = c.collect(1000);
    EXPECT_EQ(s.seq, 1u);
    EXPECT_EQ(s.taken_at_ms, 1000);
    EXPECT_TRUE(s.namesrv_error.empty());
    ASSERT_EQ(s.groups.size(), 1u);
    const GroupView& g = s.groups[0];
    EXPECT_EQ(g.cluster, "DefaultCluster");
    EXPECT_EQ(g.broker_name, "broker-a");
    EXPECT_EQ(g.mode, GroupMode::kMasterSlave);
    EXPECT_EQ(g.master_addr, kMaster);
    EXPECT_EQ(g.in_sync_replicas, 2);
    EXPECT_EQ(g.alive_replicas, 3);
    EXPECT_EQ(g.need_ack_nums, 2);
    EXPECT_EQ(g.master_max_offset, 5000);
    ASSERT_EQ(g.members.size(), 3u);
    EXPECT_EQ(g.members[0].addr, kMaster);  // by brokerId

    const MemberView& m = member(s, kMaster);
    EXPECT_TRUE(m.up);
    EXPECT_EQ(m.role, "MASTER");
    EXPECT_EQ(m.broker_role, "SYNC_MASTER");
    EXPECT_EQ(m.version, "V4_9_8");
    EXPECT_DOUBLE_EQ(m.put_tps, 12.5);
    EXPECT_EQ(m.last_seen_ms, 1000);

    const MemberView& s1 = member(s, kSlave1);
    EXPECT_EQ(s1.role, "SLAVE");
    EXPECT_TRUE(s1.connected_to_master);
    EXPECT_EQ(s1.in_sync, true);
    EXPECT_EQ(s1.lag_bytes, 0);
    const MemberView& s2 = member(s, kSlave2);
    EXPECT_EQ(s2.in_sync, false);
    EXPECT_EQ(s2.lag_bytes, 4000);
}

TEST(Collector, SilentMemberIsDownAndSlaveWithoutConnectionUsesOffsets) {
    FakeSource src = one_master_two_slaves();
    src.down.insert(kSlave2);
    src.runtime[kMaster].erase("haConnectionInfo.1");
    src.runtime[kSlave1]["haClientMaxOffset"] = "4200";
    src.runtime[kMaster].erase("haConnectionInfo.0");
    Collector c(src);
    const ClusterSnapshot s = c.collect(1000);
    const MemberView& s2 = member(s, kSlave2);
    EXPECT_FALSE(s2.up);
    EXPECT_TRUE(s2.registered);
    EXPECT_NE(s2.error.find("timed out"), std::string::npos);
    EXPECT_EQ(s2.role, "SLAVE");  // from its brokerId
    EXPECT_FALSE(s2.connected_to_master);
    EXPECT_EQ(s2.in_sync, false);
    // Slave 1 answers but the master lists no connection from it: lag from the two offsets.
    const MemberView& s1 = member(s, kSlave1);
    EXPECT_FALSE(s1.connected_to_master);
    EXPECT_EQ(s1.lag_bytes, 800);
}

TEST(Collector, GroupWithoutAnsweringMasterHasNoContract) {
    FakeSource src = one_master_two_slaves();
    src.down.insert(kMaster);
    src.topics = {"T"};
    protocol::TopicRouteData route;
    route.queue_datas.push_back({"broker-a", 4, 4, 6, 0});
    route.broker_datas.push_back(src.info.broker_addr_table["broker-a"]);
    src.routes["T"] = route;
    Collector c(src);
    const ClusterSnapshot s = c.collect(1000);
    ASSERT_EQ(s.groups.size(), 1u);
    EXPECT_TRUE(s.groups[0].master_addr.empty());
    EXPECT_FALSE(s.groups[0].need_ack_nums.has_value());
    ASSERT_EQ(s.topics.size(), 1u);
    ASSERT_EQ(s.topics[0].durability.size(), 1u);
    EXPECT_NE(s.topics[0].durability[0].contract.find("no master is answering"), std::string::npos);
    EXPECT_TRUE(s.topics[0].queues.empty());  // no master to ask
}

TEST(Collector, RemembersUnregisteredMembersUntilForgotten) {
    FakeSource src = one_master_two_slaves();
    CollectorOptions o;
    o.forget_after = std::chrono::milliseconds(10000);
    Collector c(src, o);
    (void)c.collect(1000);
    // Slave 2 is killed: the name server drops it, it answers nothing.
    src.info.broker_addr_table["broker-a"].broker_addrs.erase(2);
    src.down.insert(kSlave2);
    ClusterSnapshot s = c.collect(2000);
    const MemberView& gone = member(s, kSlave2);
    EXPECT_FALSE(gone.registered);
    EXPECT_FALSE(gone.up);
    EXPECT_EQ(gone.broker_id, 2);
    EXPECT_EQ(gone.role, "SLAVE");
    EXPECT_EQ(gone.last_seen_ms, 1000);
    EXPECT_EQ(gone.version, "V4_9_8");  // as it last answered
    EXPECT_EQ(gone.broker_role, "SLAVE");
    EXPECT_EQ(s.groups[0].members.size(), 3u);
    // Still remembered just before forget_after, dropped after it.
    s = c.collect(11000);
    EXPECT_EQ(s.groups[0].members.size(), 3u);
    s = c.collect(11001);
    EXPECT_EQ(s.groups[0].members.size(), 2u);
}

TEST(Collector, NameServerDownKeepsKnownMembers) {
    FakeSource src = one_master_two_slaves();
    Collector c(src);
    (void)c.collect(1000);
    src.namesrv_down = true;
    const ClusterSnapshot s = c.collect(2000);
    EXPECT_NE(s.namesrv_error.find("name server down"), std::string::npos);
    ASSERT_EQ(s.groups.size(), 1u);
    EXPECT_EQ(s.groups[0].members.size(), 3u);
    EXPECT_TRUE(member(s, kMaster).up);  // still probed directly
    EXPECT_EQ(s.groups[0].master_addr, kMaster);
}

TEST(Collector, DLedgerRolesAndLagFromTheLeader) {
    FakeSource src;
    src.add_group("C", "broker-d", {{0, "127.0.0.1:1"}, {1, "127.0.0.1:2"}, {2, "127.0.0.1:3"}});
    auto peer = [](const char* id, const char* role) {
        return KvMap{{"brokerRole", "SLAVE"},         {"dledgerRole", role},
                     {"dledgerSelfId", id},           {"dledgerLeaderId", "n1"},
                     {"brokerVersionDesc", "V4_9_8"}, {"dledgerCommittedOffset", "900"}};
    };
    src.runtime["127.0.0.1:1"] = peer("n1", "Leader");
    src.runtime["127.0.0.1:1"]["brokerRole"] = "SYNC_MASTER";
    src.runtime["127.0.0.1:1"]["dledgerPeerMatch"] = "n2:10:900;n3:8:700";
    src.runtime["127.0.0.1:2"] = peer("n2", "Follower");
    src.runtime["127.0.0.1:3"] = peer("n3", "Follower");
    src.config["127.0.0.1:1"] = {{"enableDLegerCommitLog", "true"},
                                 {"dLegerPeers", "n1-127.0.0.1:4;n2-127.0.0.1:5;n3-127.0.0.1:6"}};
    Collector c(src);
    const ClusterSnapshot s = c.collect(1);
    ASSERT_EQ(s.groups.size(), 1u);
    const GroupView& g = s.groups[0];
    EXPECT_EQ(g.mode, GroupMode::kDLedger);
    EXPECT_EQ(g.master_addr, "127.0.0.1:1");
    EXPECT_EQ(g.dledger_leader, "n1");
    EXPECT_EQ(member(s, "127.0.0.1:1").dledger_role, "Leader");
    EXPECT_EQ(member(s, "127.0.0.1:1").role, "MASTER");
    EXPECT_EQ(member(s, "127.0.0.1:2").dledger_role, "Follower");
    EXPECT_EQ(member(s, "127.0.0.1:2").role, "SLAVE");
    EXPECT_EQ(member(s, "127.0.0.1:2").lag_bytes, 0);
    EXPECT_EQ(member(s, "127.0.0.1:3").lag_bytes, 200);
    EXPECT_FALSE(member(s, "127.0.0.1:3").in_sync.has_value());
}

TEST(Collector, TopicsQueuesDurabilityAndConsumerLag) {
    FakeSource src = one_master_two_slaves();
    src.topics = {"Orders", "TBW102", "DefaultCluster", "broker-a", "%RETRY%billing"};
    protocol::TopicRouteData route;
    route.queue_datas.push_back({"broker-a", 2, 2, 6, 0});
    route.broker_datas.push_back(src.info.broker_addr_table["broker-a"]);
    for (const std::string& t : src.topics) {
        src.routes[t] = route;
    }
    protocol::TopicStatsTable st;
    st.offset_table[{"Orders", "broker-a", 1}] = {5, 30, 777};
    st.offset_table[{"Orders", "broker-a", 0}] = {0, 20, 666};
    st.topic_put_tps = 4.5;
    src.stats[{kMaster, "Orders"}] = st;
    src.offsets[kMaster].offset_table["Orders@billing"] = {{0, 15}, {1, 30}};
    src.offsets[kMaster].offset_table["%RETRY%billing@billing"] = {{0, 0}};
    protocol::ConsumeStats cs;
    cs.offset_table[{"Orders", "broker-a", 0}] = {20, 15, 15, 555};
    cs.offset_table[{"Orders", "broker-a", 1}] = {30, 30, 30, 556};
    cs.consume_tps = 2.0;
    src.consume[{kMaster, "billing"}] = cs;

    Collector c(src);
    const ClusterSnapshot s = c.collect(1);
    ASSERT_EQ(s.topics.size(), 5u);
    const TopicView* orders = nullptr;
    for (const TopicView& t : s.topics) {
        if (t.name == "Orders") {
            orders = &t;
        } else {
            EXPECT_TRUE(t.system) << t.name;
        }
    }
    ASSERT_NE(orders, nullptr);
    EXPECT_FALSE(orders->system);
    EXPECT_EQ(orders->clusters, std::vector<std::string>{"DefaultCluster"});
    ASSERT_EQ(orders->routes.size(), 1u);
    EXPECT_EQ(orders->routes[0].read_queue_nums, 2);
    ASSERT_EQ(orders->queues.size(), 2u);
    EXPECT_EQ(orders->queues[0].queue_id, 0);  // sorted
    EXPECT_EQ(orders->queues[1].min_offset, 5);
    EXPECT_EQ(orders->queues[1].max_offset, 30);
    EXPECT_DOUBLE_EQ(orders->put_tps, 4.5);
    ASSERT_EQ(orders->durability.size(), 1u);
    EXPECT_EQ(orders->durability[0].master_addr, kMaster);
    // The same words as `mqadmin explainDurability`: SYNC_MASTER, needAckNums 2.
    EXPECT_FALSE(orders->durability[0].contract.empty());
    std::string all = orders->durability[0].contract;
    for (const std::string& r : orders->durability[0].reasons) {
        all += "\n" + r;
    }
    EXPECT_NE(all.find("SYNC_MASTER"), std::string::npos) << all;

    ASSERT_EQ(s.consumer_groups.size(), 1u);
    const ConsumerGroupView& g = s.consumer_groups[0];
    EXPECT_EQ(g.group, "billing");
    EXPECT_EQ(g.total_lag, 5);
    ASSERT_EQ(g.queues.size(), 2u);
    EXPECT_EQ(g.queues[0].lag, 5);
    EXPECT_EQ(g.queues[0].last_timestamp_ms, 555);
    EXPECT_EQ(g.queues[1].lag, 0);
    EXPECT_DOUBLE_EQ(g.consume_tps, 2.0);
}

TEST(Collector, SystemTopics) {
    protocol::ClusterInfo info;
    info.cluster_addr_table["DefaultCluster"] = {"broker-a"};
    info.broker_addr_table["broker-a"] = {};
    for (const char* t : {"TBW102", "SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRANS_HALF_TOPIC",
                          "rmq_sys_foo", "%RETRY%g", "%DLQ%g", "DefaultCluster", "broker-a",
                          "SELF_TEST_TOPIC", "OFFSET_MOVED_EVENT", "DefaultCluster_REPLY_TOPIC"}) {
        EXPECT_TRUE(is_system_topic(t, info)) << t;
    }
    for (const char* t : {"TopicTest", "orders", "RETRY", "Other_REPLY_TOPIC"}) {
        EXPECT_FALSE(is_system_topic(t, info)) << t;
    }
}

}  // namespace
}  // namespace comet::dashboard
