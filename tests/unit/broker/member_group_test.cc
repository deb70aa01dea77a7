// BrokerMemberGroupTracker (alive replicas, group minimum, acting master) and the settings it
// reads, driven with GET_BROKER_MEMBER_GROUP answers and NOTIFY_MIN_BROKER_ID_CHANGE headers.
#include <gtest/gtest.h>

#include "broker/replication/broker_member_group.h"
#include "protocol/request_code.h"

namespace comet::broker {
namespace {

using Members = std::map<int64_t, std::string>;

MinBrokerIdChangeHeader notify(int64_t min_id, const std::string& min_addr,
                               std::optional<std::string> offline = std::nullopt,
                               std::optional<std::string> ha = std::nullopt) {
    MinBrokerIdChangeHeader h;
    h.min_broker_id = min_id;
    h.broker_name = "broker-a";
    h.min_broker_addr = min_addr;
    h.offline_broker_addr = std::move(offline);
    h.ha_broker_addr = std::move(ha);
    return h;
}

TEST(BrokerMemberGroupTracker, AliveReplicasCountSelfAndNeverDropBelowOne) {
    BrokerMemberGroupTracker t(0, "m:1", true);
    EXPECT_EQ(t.alive_replica_num(), 1);  // before any answer
    EXPECT_FALSE(t.on_member_group({{0, "m:1"}, {1, "s1:1"}, {2, "s2:1"}}));
    EXPECT_EQ(t.alive_replica_num(), 3);
    EXPECT_FALSE(t.on_member_group({{0, "m:1"}, {2, "s2:1"}}));
    EXPECT_EQ(t.alive_replica_num(), 2);
    // The name server does not list us (yet): we still count.
    EXPECT_FALSE(t.on_member_group({{1, "s1:1"}}));
    EXPECT_EQ(t.alive_replica_num(), 2);
    // An empty answer is ignored (RocketMQ keeps the previous values).
    EXPECT_FALSE(t.on_member_group({}));
    EXPECT_EQ(t.alive_replica_num(), 2);
    EXPECT_FALSE(t.is_acting_master());  // a master never acts
    EXPECT_EQ(t.min_broker_id(), 0);
}

TEST(BrokerMemberGroupTracker, SmallestSlaveActsWhileTheMasterIsGoneAndGivesItBack) {
    BrokerMemberGroupTracker s1(1, "s1:1", true);
    BrokerMemberGroupTracker s2(2, "s2:1", true);
    const Members all{{0, "m:1"}, {1, "s1:1"}, {2, "s2:1"}};
    EXPECT_FALSE(s1.on_member_group(all));  // minimum stays 0 (initial MASTER_ID)
    EXPECT_FALSE(s2.on_member_group(all));

    const Members no_master{{1, "s1:1"}, {2, "s2:1"}};
    auto c1 = s1.on_member_group(no_master);
    ASSERT_TRUE(c1);
    EXPECT_TRUE(c1->acting_master);
    EXPECT_TRUE(c1->master_offline);
    EXPECT_EQ(c1->offline_broker_addr, "m:1");
    EXPECT_EQ(c1->min_broker_id, 1);
    EXPECT_TRUE(s1.is_acting_master());
    EXPECT_EQ(s1.alive_replica_num(), 2);
    auto c2 = s2.on_member_group(no_master);
    ASSERT_TRUE(c2);
    EXPECT_FALSE(c2->acting_master);
    EXPECT_FALSE(s2.is_acting_master());
    EXPECT_EQ(s2.min_broker_addr(), "s1:1");

    // The master returns (notification with its HA address).
    auto back = s1.on_min_broker_id_change(notify(0, "m:1", std::nullopt, "m:2"));
    ASSERT_TRUE(back);
    EXPECT_TRUE(back->master_online);
    EXPECT_FALSE(back->acting_master);
    EXPECT_EQ(back->master_ha_addr, "m:2");
    EXPECT_FALSE(s1.is_acting_master());
    EXPECT_EQ(s1.min_broker_id(), 0);
    // The same minimum again changes nothing.
    EXPECT_FALSE(s1.on_min_broker_id_change(notify(0, "m:1")));
    EXPECT_FALSE(s1.on_member_group(all));
}

TEST(BrokerMemberGroupTracker, NotificationMakesTheNextSlaveActWhenTheFirstLeaves) {
    BrokerMemberGroupTracker s2(2, "s2:1", true);
    auto c = s2.on_min_broker_id_change(notify(1, "s1:1", "m:1"));
    ASSERT_TRUE(c);
    EXPECT_FALSE(c->acting_master);
    EXPECT_TRUE(c->master_offline);
    c = s2.on_min_broker_id_change(notify(2, "s2:1", "s1:1"));
    ASSERT_TRUE(c);
    EXPECT_TRUE(c->acting_master);
    EXPECT_FALSE(c->master_offline);  // s1 was not our master
    EXPECT_TRUE(s2.is_acting_master());
}

TEST(BrokerMemberGroupTracker, WithoutActingMasterOnlyTheAliveCountMoves) {
    BrokerMemberGroupTracker s1(1, "s1:1", false);
    EXPECT_FALSE(s1.on_member_group({{1, "s1:1"}, {2, "s2:1"}}));
    EXPECT_EQ(s1.alive_replica_num(), 2);
    EXPECT_FALSE(s1.on_min_broker_id_change(notify(1, "s1:1", "m:1")));
    EXPECT_FALSE(s1.is_acting_master());
    EXPECT_EQ(s1.min_broker_id(), 0);
}

TEST(MinBrokerIdChangeHeader, DecodesRocketMqFields) {
    auto req = protocol::RemotingCommand::request(protocol::RequestCode::kNotifyMinBrokerIdChange);
    req.ext_fields = {{"minBrokerId", "1"},
                      {"brokerName", "broker-a"},
                      {"minBrokerAddr", "10.0.0.2:10911"},
                      {"offlineBrokerAddr", "10.0.0.1:10911"}};
    auto h = MinBrokerIdChangeHeader::from_ext(req);
    ASSERT_TRUE(h.is_ok());
    EXPECT_EQ(h->min_broker_id, 1);
    EXPECT_EQ(h->offline_broker_addr, "10.0.0.1:10911");
    EXPECT_FALSE(h->ha_broker_addr.has_value());
    req.ext_fields.erase("minBrokerId");
    EXPECT_FALSE(MinBrokerIdChangeHeader::from_ext(req).is_ok());
}

TEST(MemberGroupSettings, DefaultsAndErrorsNameTheKey) {
    BrokerConfig cfg;
    auto s = MemberGroupSettings::from(cfg);
    ASSERT_TRUE(s.is_ok());
    EXPECT_FALSE(s->enable_slave_acting_master);
    EXPECT_EQ(s->sync_broker_member_group_period, 1000);
    EXPECT_EQ(s->slave_sync_period, 10000);
    ASSERT_TRUE(cfg.set("enableSlaveActingMaster", "true").is_ok());
    ASSERT_TRUE(cfg.set("syncBrokerMemberGroupPeriod", "500").is_ok());
    s = MemberGroupSettings::from(cfg);
    ASSERT_TRUE(s.is_ok());
    EXPECT_TRUE(s->enable_slave_acting_master);
    EXPECT_EQ(s->sync_broker_member_group_period, 500);
    ASSERT_TRUE(cfg.set("slaveSynchronizePeriod", "soon").is_ok() ||
                true);  // a typed field would reject it at set() already
    if (cfg.to_properties().at("slaveSynchronizePeriod") == "soon") {
        auto bad = MemberGroupSettings::from(cfg);
        ASSERT_FALSE(bad.is_ok());
        EXPECT_NE(bad.status().message().find("slaveSynchronizePeriod"), std::string::npos);
    }
}

}  // namespace
}  // namespace comet::broker

namespace comet::broker {
namespace {

// Every combination of the inputs of suggestWhichBrokerId (RocketMQ 5
// PullMessageProcessor#composeResponseHeader).
TEST(SuggestWhichBroker, ExhaustiveTable) {
    for (int bits = 0; bits < 64; ++bits) {
        PullSituation p;
        p.is_slave = bits & 1;
        p.master_is_minimum = bits & 2;
        p.slave_read_enable = bits & 4;
        p.lagging = bits & 8;
        p.found = bits & 16;
        p.group_broker_id = (bits & 32) ? 3 : 0;
        p.which_broker_when_consume_slowly = 1;
        SCOPED_TRACE(::testing::Message()
                     << "slave=" << p.is_slave << " masterIsMin=" << p.master_is_minimum
                     << " slaveReadEnable=" << p.slave_read_enable << " lagging=" << p.lagging
                     << " found=" << p.found << " groupBrokerId=" << p.group_broker_id);
        const SuggestBroker s = suggest_which_broker(p);
        const bool redirect = p.is_slave && !p.lagging && p.master_is_minimum;
        int64_t want = 0;
        if (p.slave_read_enable) {
            want = p.lagging ? 1 : p.group_broker_id;
        }
        if (redirect) {
            want = 0;
        }
        EXPECT_EQ(s.broker_id, want);
        EXPECT_EQ(s.retry_at_master, redirect && !p.found);
    }
    // Spot checks in words: a master never redirects; a slave of a live master serves what it
    // found with suggestion 0 and sends everything else back; without master it serves.
    EXPECT_FALSE(suggest_which_broker({false, true, false, false, false, 0, 1}).retry_at_master);
    EXPECT_FALSE(suggest_which_broker({true, true, false, false, true, 0, 1}).retry_at_master);
    EXPECT_TRUE(suggest_which_broker({true, true, false, false, false, 0, 1}).retry_at_master);
    EXPECT_FALSE(suggest_which_broker({true, false, false, false, false, 0, 1}).retry_at_master);
    EXPECT_EQ(suggest_which_broker({false, true, true, true, true, 0, 1}).broker_id, 1);
}

}  // namespace
}  // namespace comet::broker
