#include "namesrv/route_info_manager.h"

#include <gtest/gtest.h>

namespace comet::namesrv {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TopicConfig topic(const std::string& name, int32_t queues, int32_t perm = 6) {
    TopicConfig tc;
    tc.topic_name = name;
    tc.read_queue_nums = queues;
    tc.write_queue_nums = queues;
    tc.perm = perm;
    return tc;
}

RegisterBrokerRequest broker(const std::string& name, int64_t id, const std::string& addr,
                             std::vector<TopicConfig> topics = {}, int64_t counter = 0,
                             ChannelId channel = 0) {
    RegisterBrokerRequest r;
    r.cluster_name = "DefaultCluster";
    r.broker_name = name;
    r.broker_id = id;
    r.broker_addr = addr;
    r.ha_server_addr = addr + "-ha";
    r.data_version = DataVersion{.timestamp = 1796061409236, .counter = counter};
    r.channel = channel;
    for (auto& t : topics) {
        r.topic_config_table[t.topic_name] = t;
    }
    return r;
}

class RouteInfoManagerTest : public ::testing::Test {
protected:
    RegisterBrokerResult reg(const RegisterBrokerRequest& r) {
        auto res = rim_.register_broker(r);
        EXPECT_TRUE(res.is_ok()) << res.status().to_string();
        EXPECT_TRUE(rim_.check_invariants());
        return res.is_ok() ? res.value() : RegisterBrokerResult{};
    }
    ManualClock clock_;
    RouteInfoManager rim_{clock_, seconds(120)};
};

TEST_F(RouteInfoManagerTest, MasterRegistrationCreatesRoute) {
    auto res = reg(broker("broker-a", 0, "127.0.0.1:10911", {topic("TBW102", 8, 7)}));
    EXPECT_TRUE(res.master_addr.empty());
    EXPECT_TRUE(res.ha_server_addr.empty());
    auto route = rim_.pick_topic_route_data("TBW102");
    ASSERT_TRUE(route.has_value());
    ASSERT_EQ(route->queue_datas.size(), 1u);
    EXPECT_EQ(route->queue_datas[0], (QueueData{"broker-a", 8, 8, 7, 0}));
    ASSERT_EQ(route->broker_datas.size(), 1u);
    EXPECT_EQ(route->broker_datas[0].cluster, "DefaultCluster");
    EXPECT_EQ(route->broker_datas[0].broker_addrs,
              (std::map<int64_t, std::string>{{0, "127.0.0.1:10911"}}));
    EXPECT_FALSE(rim_.pick_topic_route_data("NoSuchTopic").has_value());
}

TEST_F(RouteInfoManagerTest, SlaveGetsMasterAndHaAddressButNoQueueData) {
    reg(broker("broker-a", 0, "m:10911", {topic("T", 4)}));
    auto res = reg(broker("broker-a", 1, "s:10911", {topic("T", 16), topic("OnlySlave", 2)}));
    EXPECT_EQ(res.master_addr, "m:10911");
    EXPECT_EQ(res.ha_server_addr, "m:10911-ha");
    auto route = rim_.pick_topic_route_data("T");
    ASSERT_TRUE(route);
    EXPECT_EQ(route->queue_datas[0].read_queue_nums, 4);  // from the master only
    EXPECT_EQ(route->broker_datas[0].broker_addrs,
              (std::map<int64_t, std::string>{{0, "m:10911"}, {1, "s:10911"}}));
    EXPECT_FALSE(rim_.pick_topic_route_data("OnlySlave"));
}

TEST_F(RouteInfoManagerTest, SlaveWithoutLiveMasterGetsNoMasterAddress) {
    auto res = reg(broker("broker-a", 1, "s:10911"));
    EXPECT_TRUE(res.master_addr.empty());
    EXPECT_TRUE(res.ha_server_addr.empty());
}

TEST_F(RouteInfoManagerTest, QueueDataRefreshedOnlyWhenDataVersionChanges) {
    reg(broker("broker-a", 0, "m:1", {topic("T", 4)}, /*counter=*/1));
    // Same version, different config: ignored (Java: isBrokerTopicConfigChanged false).
    reg(broker("broker-a", 0, "m:1", {topic("T", 8)}, 1));
    EXPECT_EQ(rim_.pick_topic_route_data("T")->queue_datas[0].read_queue_nums, 4);
    reg(broker("broker-a", 0, "m:1", {topic("T", 8)}, 2));
    EXPECT_EQ(rim_.pick_topic_route_data("T")->queue_datas[0].read_queue_nums, 8);
}

TEST_F(RouteInfoManagerTest, IncrementalRegistrationKeepsOtherTopics) {
    reg(broker("broker-a", 0, "m:1", {topic("A", 4), topic("B", 4)}, 1));
    reg(broker("broker-a", 0, "m:1", {topic("C", 2)}, 2));
    EXPECT_EQ(rim_.get_all_topic_list(), (std::vector<std::string>{"A", "B", "C"}));
}

TEST_F(RouteInfoManagerTest, TwoGroupsInOneTopic) {
    reg(broker("broker-b", 0, "b:1", {topic("T", 2)}));
    reg(broker("broker-a", 0, "a:1", {topic("T", 4)}));
    auto route = rim_.pick_topic_route_data("T");
    ASSERT_TRUE(route);
    ASSERT_EQ(route->queue_datas.size(), 2u);
    EXPECT_EQ(route->queue_datas[0].broker_name, "broker-a");
    EXPECT_EQ(route->queue_datas[1].broker_name, "broker-b");
    EXPECT_EQ(route->broker_datas.size(), 2u);
    auto info = rim_.get_all_cluster_info();
    EXPECT_EQ(info.cluster_addr_table["DefaultCluster"],
              (std::set<std::string>{"broker-a", "broker-b"}));
    EXPECT_EQ(info.broker_addr_table.size(), 2u);
    EXPECT_EQ(rim_.get_topics_by_cluster("DefaultCluster"), std::vector<std::string>{"T"});
    EXPECT_TRUE(rim_.get_topics_by_cluster("Other").empty());
}

TEST_F(RouteInfoManagerTest, SlavePromotedToMasterDropsItsOldId) {
    reg(broker("broker-a", 0, "m:1", {topic("T", 4)}));
    reg(broker("broker-a", 1, "s:1"));
    rim_.unregister_broker("DefaultCluster", "m:1", "broker-a", 0);
    // Group still has its slave; the topic's queue data stays (consumers may read the slave).
    auto route = rim_.pick_topic_route_data("T");
    ASSERT_TRUE(route);
    EXPECT_EQ(route->broker_datas[0].broker_addrs,
              (std::map<int64_t, std::string>{{1, "s:1"}}));
    reg(broker("broker-a", 0, "s:1", {topic("T", 4)}, 5));
    route = rim_.pick_topic_route_data("T");
    EXPECT_EQ(route->broker_datas[0].broker_addrs, (std::map<int64_t, std::string>{{0, "s:1"}}));
}

TEST_F(RouteInfoManagerTest, StaleStateVersionForAnOccupiedIdIsIgnored) {
    auto newer = broker("broker-a", 0, "m1:1", {topic("T", 4)});
    newer.data_version.state_version = 5;
    reg(newer);
    auto stale = broker("broker-a", 0, "m2:1", {topic("T", 8)});
    stale.data_version.state_version = 3;
    reg(stale);
    auto route = rim_.pick_topic_route_data("T");
    EXPECT_EQ(route->broker_datas[0].broker_addrs.at(0), "m1:1");
    EXPECT_EQ(route->queue_datas[0].read_queue_nums, 4);
    EXPECT_EQ(rim_.live_broker_count(), 1u);
    // A newer state takes the id over; the old address is forgotten.
    auto newest = broker("broker-a", 0, "m2:1", {topic("T", 8)});
    newest.data_version.state_version = 6;
    reg(newest);
    route = rim_.pick_topic_route_data("T");
    EXPECT_EQ(route->broker_datas[0].broker_addrs.at(0), "m2:1");
    EXPECT_EQ(rim_.live_broker_count(), 1u);
}

TEST_F(RouteInfoManagerTest, UnregisterLastMemberRemovesGroupClusterAndTopics) {
    reg(broker("broker-a", 0, "a:1", {topic("T", 4), topic("OnlyA", 1)}));
    reg(broker("broker-b", 0, "b:1", {topic("T", 4)}));
    rim_.unregister_broker("DefaultCluster", "a:1", "broker-a", 0);
    EXPECT_TRUE(rim_.check_invariants());
    EXPECT_FALSE(rim_.pick_topic_route_data("OnlyA"));
    auto route = rim_.pick_topic_route_data("T");
    ASSERT_TRUE(route);
    ASSERT_EQ(route->queue_datas.size(), 1u);
    EXPECT_EQ(route->queue_datas[0].broker_name, "broker-b");
    rim_.unregister_broker("DefaultCluster", "b:1", "broker-b", 0);
    EXPECT_TRUE(rim_.get_all_cluster_info().cluster_addr_table.empty());
    EXPECT_TRUE(rim_.get_all_topic_list().empty());
    // Unknown broker: no-op.
    rim_.unregister_broker("DefaultCluster", "zz:1", "broker-z", 0);
    EXPECT_TRUE(rim_.check_invariants());
}

TEST_F(RouteInfoManagerTest, ExpiryScanUsesClockAndPerBrokerTimeout) {
    reg(broker("broker-a", 0, "a:1", {topic("T", 4)}, 0, /*channel=*/11));
    auto fast = broker("broker-b", 0, "b:1", {topic("T", 4)}, 0, 12);
    fast.heartbeat_timeout_millis = 10'000;
    reg(fast);
    clock_.advance(seconds(10));
    EXPECT_TRUE(rim_.scan_not_active_broker().empty());  // exactly at the timeout: still alive
    clock_.advance(milliseconds(1));
    auto expired = rim_.scan_not_active_broker();
    ASSERT_EQ(expired.size(), 1u);
    EXPECT_EQ(expired[0].broker_addr, "b:1");
    EXPECT_EQ(expired[0].channel, 12u);
    EXPECT_TRUE(rim_.check_invariants());
    // A heartbeat refreshes broker-a.
    clock_.advance(seconds(100));
    EXPECT_TRUE(rim_.update_broker_info_update_timestamp("DefaultCluster", "a:1"));
    clock_.advance(seconds(100));
    EXPECT_TRUE(rim_.scan_not_active_broker().empty());
    clock_.advance(seconds(21));
    expired = rim_.scan_not_active_broker();
    ASSERT_EQ(expired.size(), 1u);
    EXPECT_EQ(expired[0].broker_addr, "a:1");
    EXPECT_FALSE(rim_.pick_topic_route_data("T"));
    EXPECT_EQ(rim_.live_broker_count(), 0u);
    EXPECT_FALSE(rim_.update_broker_info_update_timestamp("DefaultCluster", "a:1"));
}

TEST_F(RouteInfoManagerTest, ReRegistrationRefreshesExpiry) {
    reg(broker("broker-a", 0, "a:1", {topic("T", 4)}));
    for (int i = 0; i < 10; ++i) {
        clock_.advance(seconds(30));
        reg(broker("broker-a", 0, "a:1", {topic("T", 4)}));
        EXPECT_TRUE(rim_.scan_not_active_broker().empty());
    }
}

TEST_F(RouteInfoManagerTest, ChannelCloseRemovesOnlyThatBroker) {
    reg(broker("broker-a", 0, "m:1", {topic("T", 4)}, 0, 1));
    reg(broker("broker-a", 1, "s:1", {}, 0, 2));
    EXPECT_TRUE(rim_.on_channel_destroy(0).empty());
    EXPECT_TRUE(rim_.on_channel_destroy(99).empty());
    auto removed = rim_.on_channel_destroy(2);
    EXPECT_EQ(removed, std::vector<std::string>{"s:1"});
    EXPECT_TRUE(rim_.check_invariants());
    auto route = rim_.pick_topic_route_data("T");
    EXPECT_EQ(route->broker_datas[0].broker_addrs, (std::map<int64_t, std::string>{{0, "m:1"}}));
    rim_.on_channel_destroy(1);
    EXPECT_FALSE(rim_.pick_topic_route_data("T"));
    EXPECT_TRUE(rim_.check_invariants());
}

TEST_F(RouteInfoManagerTest, DeleteTopicAllOrByCluster) {
    reg(broker("broker-a", 0, "a:1", {topic("T", 4), topic("U", 4)}));
    auto other = broker("broker-x", 0, "x:1", {topic("T", 4)});
    other.cluster_name = "OtherCluster";
    reg(other);
    EXPECT_TRUE(rim_.delete_topic("T", std::string("OtherCluster")));
    auto route = rim_.pick_topic_route_data("T");
    ASSERT_TRUE(route);
    ASSERT_EQ(route->queue_datas.size(), 1u);
    EXPECT_EQ(route->queue_datas[0].broker_name, "broker-a");
    EXPECT_TRUE(rim_.delete_topic("T", std::nullopt));
    EXPECT_FALSE(rim_.pick_topic_route_data("T"));
    EXPECT_FALSE(rim_.delete_topic("T", std::nullopt));
    EXPECT_TRUE(rim_.pick_topic_route_data("U"));
}

TEST_F(RouteInfoManagerTest, BrokerMemberGroupListsLiveMembers) {
    reg(broker("broker-a", 0, "m:1"));
    reg(broker("broker-a", 2, "s:1"));
    auto group = rim_.get_broker_member_group("DefaultCluster", "broker-a");
    EXPECT_EQ(group.broker_addrs, (std::map<int64_t, std::string>{{0, "m:1"}, {2, "s:1"}}));
    EXPECT_TRUE(rim_.get_broker_member_group("Other", "broker-a").broker_addrs.empty());
    EXPECT_TRUE(rim_.get_broker_member_group("DefaultCluster", "none").broker_addrs.empty());
}

TEST_F(RouteInfoManagerTest, DataVersionQueries) {
    reg(broker("broker-a", 0, "m:1", {}, 3));
    DataVersion v{.timestamp = 1796061409236, .counter = 3};
    EXPECT_FALSE(rim_.is_broker_topic_config_changed("DefaultCluster", "m:1", v));
    v.counter = 4;
    EXPECT_TRUE(rim_.is_broker_topic_config_changed("DefaultCluster", "m:1", v));
    EXPECT_TRUE(rim_.is_broker_topic_config_changed("DefaultCluster", "unknown:1", v));
    EXPECT_EQ(rim_.query_broker_topic_config("DefaultCluster", "m:1")->counter, 3);
    EXPECT_FALSE(rim_.query_broker_topic_config("DefaultCluster", "unknown:1"));
}

TEST_F(RouteInfoManagerTest, FilterServersAppearInRoute) {
    auto r = broker("broker-a", 0, "m:1", {topic("T", 4)});
    r.filter_server_list = {"f:1"};
    reg(r);
    auto route = rim_.pick_topic_route_data("T");
    EXPECT_EQ(route->filter_server_table.at("m:1"), std::vector<std::string>{"f:1"});
    r.filter_server_list.clear();
    reg(r);
    EXPECT_TRUE(rim_.pick_topic_route_data("T")->filter_server_table.empty());
}

TEST_F(RouteInfoManagerTest, InvalidRegistrations) {
    for (auto r : {broker("", 0, "a:1"), broker("b", 0, ""), broker("b", -1, "a:1")}) {
        auto res = rim_.register_broker(r);
        EXPECT_FALSE(res.is_ok());
        EXPECT_EQ(res.status().code(), Errc::kInvalidArgument);
    }
    auto no_cluster = broker("b", 0, "a:1");
    no_cluster.cluster_name.clear();
    EXPECT_FALSE(rim_.register_broker(no_cluster).is_ok());
    EXPECT_EQ(rim_.live_broker_count(), 0u);
}

}  // namespace
}  // namespace comet::namesrv
