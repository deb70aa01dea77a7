// json_view: the documents the page reads, parsed back with RapidJSON.

#include "dashboard/json_view.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "dashboard/page.h"

namespace comet::dashboard {
namespace {

rapidjson::Document parse(const std::string& text) {
    rapidjson::Document d;
    d.Parse(text.c_str());
    EXPECT_FALSE(d.HasParseError()) << text;
    return d;
}

ClusterSnapshot sample() {
    ClusterSnapshot s;
    s.seq = 7;
    s.taken_at_ms = 1234;
    GroupView g;
    g.cluster = "DefaultCluster";
    g.broker_name = "broker-a";
    g.master_addr = "127.0.0.1:1";
    g.need_ack_nums = 2;
    g.in_sync_replicas = 2;
    MemberView m;
    m.broker_id = 0;
    m.addr = "127.0.0.1:1";
    m.up = true;
    m.role = "MASTER";
    m.broker_role = "SYNC_MASTER";
    m.version = "V4_9_8";
    MemberView s1;
    s1.broker_id = 1;
    s1.addr = "127.0.0.1:2";
    s1.up = true;
    s1.role = "SLAVE";
    s1.connected_to_master = true;
    s1.in_sync = true;
    s1.lag_bytes = 0;
    MemberView s2;
    s2.broker_id = 2;
    s2.addr = "127.0.0.1:3";
    s2.up = false;
    s2.role = "SLAVE";
    s2.error = "timed out \"quoted\"";
    g.members = {m, s1, s2};
    s.groups.push_back(g);
    TopicView t;
    t.name = "Orders";
    t.clusters = {"DefaultCluster"};
    t.routes.push_back({"broker-a", 4, 4, 6});
    t.queues.push_back({"broker-a", 0, 1, 9, 99});
    t.durability.push_back({"broker-a", "127.0.0.1:1", "on 2 replicas", {"why 1"}, {"warn 1"}});
    s.topics.push_back(t);
    ConsumerGroupView cg;
    cg.group = "billing";
    cg.total_lag = 3;
    cg.queues.push_back({"Orders", "broker-a", 0, 9, 6, 3, 55});
    s.consumer_groups.push_back(cg);
    return s;
}

TEST(JsonView, Cluster) {
    const auto d = parse(cluster_json(sample(), {"127.0.0.1:9876"}));
    EXPECT_EQ(d["seq"].GetInt64(), 7);
    EXPECT_EQ(d["takenAt"].GetInt64(), 1234);
    EXPECT_STREQ(d["namesrv"]["addrs"][0].GetString(), "127.0.0.1:9876");
    ASSERT_EQ(d["clusters"].Size(), 1u);
    const auto& g = d["clusters"][0]["groups"][0];
    EXPECT_STREQ(d["clusters"][0]["name"].GetString(), "DefaultCluster");
    EXPECT_STREQ(g["brokerName"].GetString(), "broker-a");
    EXPECT_STREQ(g["mode"].GetString(), "master-slave");
    EXPECT_EQ(g["needAckNums"].GetInt64(), 2);
    EXPECT_TRUE(g["aliveReplicaNums"].IsNull());
    ASSERT_EQ(g["inSyncSet"].Size(), 2u);  // the master and the in-sync slave
    EXPECT_STREQ(g["inSyncSet"][1].GetString(), "127.0.0.1:2");
    const auto& members = g["members"];
    ASSERT_EQ(members.Size(), 3u);
    EXPECT_STREQ(members[0]["role"].GetString(), "MASTER");
    EXPECT_STREQ(members[0]["state"].GetString(), "UP");
    EXPECT_STREQ(members[0]["replication"].GetString(), "master");
    EXPECT_STREQ(members[1]["replication"].GetString(), "in sync (0 bytes behind)");
    EXPECT_TRUE(members[1]["inSync"].GetBool());
    EXPECT_STREQ(members[2]["state"].GetString(), "DOWN");
    EXPECT_FALSE(members[2]["up"].GetBool());
    EXPECT_STREQ(members[2]["error"].GetString(), "timed out \"quoted\"");
    EXPECT_TRUE(members[2]["lagBytes"].IsNull());
    EXPECT_STREQ(members[2]["replication"].GetString(), "not answering");
    EXPECT_TRUE(members[2]["inSync"].IsNull());
}

TEST(JsonView, TopicsAndGroups) {
    const auto t = parse(topics_json(sample()));
    const auto& topic = t["topics"][0];
    EXPECT_STREQ(topic["name"].GetString(), "Orders");
    EXPECT_FALSE(topic["system"].GetBool());
    EXPECT_STREQ(topic["routes"][0]["perm"].GetString(), "RW-");
    EXPECT_EQ(topic["queues"][0]["maxOffset"].GetInt64(), 9);
    EXPECT_STREQ(topic["durability"][0]["contract"].GetString(), "on 2 replicas");
    EXPECT_STREQ(topic["durability"][0]["reasons"][0].GetString(), "why 1");
    EXPECT_STREQ(topic["durability"][0]["warnings"][0].GetString(), "warn 1");
    const auto g = parse(groups_json(sample()));
    EXPECT_STREQ(g["groups"][0]["group"].GetString(), "billing");
    EXPECT_EQ(g["groups"][0]["totalLag"].GetInt64(), 3);
    EXPECT_EQ(g["groups"][0]["queues"][0]["lag"].GetInt64(), 3);
}

TEST(JsonView, HistoryNewestFirst) {
    std::deque<ChangeEvent> events;
    events.push_back({1, "C", "broker-a", "127.0.0.1:3", 2, "down", "UP", "DOWN"});
    events.push_back({2, "C", "broker-a", "127.0.0.1:3", 2, "up", "DOWN", "UP"});
    const auto d = parse(history_json(events, 4));
    EXPECT_EQ(d["dropped"].GetInt64(), 4);
    ASSERT_EQ(d["events"].Size(), 2u);
    EXPECT_STREQ(d["events"][0]["kind"].GetString(), "up");
    EXPECT_EQ(d["events"][1]["at"].GetInt64(), 1);
}

TEST(JsonView, EmptySnapshotBeforeTheFirstPoll) {
    const ClusterSnapshot empty;
    EXPECT_EQ(parse(cluster_json(empty, {}))["clusters"].Size(), 0u);
    EXPECT_EQ(parse(topics_json(empty))["topics"].Size(), 0u);
    EXPECT_EQ(parse(groups_json(empty))["groups"].Size(), 0u);
    EXPECT_EQ(parse(history_json({}, 0))["events"].Size(), 0u);
}

TEST(Page, SelfContained) {
    const std::string_view page = page_html();
    EXPECT_EQ(page.substr(0, 15), "<!DOCTYPE html>");
    for (const char* api : {"/api/cluster", "/api/topics", "/api/groups", "/api/history"}) {
        EXPECT_NE(page.find(api), std::string_view::npos) << api;
    }
    // No external asset: nothing fetched from another origin.
    EXPECT_EQ(page.find("http://"), std::string_view::npos);
    EXPECT_EQ(page.find("https://"), std::string_view::npos);
    EXPECT_EQ(page.find("<link"), std::string_view::npos);
    EXPECT_EQ(page.find("src="), std::string_view::npos);
}

}  // namespace
}  // namespace comet::dashboard
