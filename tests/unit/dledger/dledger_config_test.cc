// dLegerPeers / dLegerSelfId / preferredLeaderId parsing: node ids by position, RocketMQ's
// follower brokerIds, and errors that name the key.
#include "dledger/dledger_config.h"

#include <gtest/gtest.h>

namespace comet::dledger {
namespace {

TEST(DLedgerConfig, PeersGetPositionalNodeIdsAndRocketMqFollowerBrokerIds) {
    std::vector<std::string> warnings;
    auto c = parse_dledger_config("g", "n0-127.0.0.1:40911;n1-127.0.0.1:40912;n2-10.0.0.3:40913",
                                  "n1", "n2", &warnings);
    ASSERT_TRUE(c.is_ok()) << c.status().to_string();
    ASSERT_EQ(c->peers.size(), 3u);
    EXPECT_EQ(c->self().id, "n1");
    EXPECT_EQ(c->self().node, raft::NodeId(2));
    EXPECT_EQ(c->self().follower_broker_id, 2);
    EXPECT_EQ(c->find("n2")->addr(), "10.0.0.3:40913");
    EXPECT_EQ(c->find(raft::NodeId(1))->id, "n0");
    EXPECT_TRUE(warnings.empty());
}

TEST(DLedgerConfig, BadSetsAreRefusedNamingTheKey) {
    struct Case {
        std::string peers, self, preferred, key;
    };
    const std::vector<Case> cases = {
        {"", "n0", "", "dLegerPeers"},
        {"n0-127.0.0.1:1;n1-127.0.0.1:2", "n5", "", "dLegerSelfId"},
        {"n0-127.0.0.1:1;n1-127.0.0.1:2", "", "", "dLegerSelfId"},
        {"n0-127.0.0.1:1;n0-127.0.0.1:2", "n0", "", "dLegerPeers"},
        {"n0-127.0.0.1:1;n1-127.0.0.1:1", "n0", "", "dLegerPeers"},
        {"n0-127.0.0.1:1;n1-127.0.0.1:2", "n0", "n9", "preferredLeaderId"},
        {"n0127.0.0.1:1", "n0", "", "dLegerPeers"},
        {"n0-127.0.0.1:0", "n0", "", "dLegerPeers"},
        {"n0-127.0.0.1:70000", "n0", "", "dLegerPeers"},
        {"n0-127.0.0.1:x", "n0", "", "dLegerPeers"},
        {"a1-127.0.0.1:1;b1-127.0.0.1:2", "a1", "", "dLegerPeers"},  // same follower brokerId
    };
    for (const Case& c : cases) {
        auto r = parse_dledger_config("g", c.peers, c.self, c.preferred, nullptr);
        ASSERT_FALSE(r.is_ok()) << c.peers << " / " << c.self;
        EXPECT_NE(r.status().message().find(c.key), std::string::npos)
            << c.peers << ": " << r.status().message();
    }
}

TEST(DLedgerConfig, AnEvenGroupIsAWarning) {
    std::vector<std::string> warnings;
    auto c = parse_dledger_config("g", "n0-127.0.0.1:1;n1-127.0.0.1:2", "n0", "", &warnings);
    ASSERT_TRUE(c.is_ok());
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("even"), std::string::npos);
}

}  // namespace
}  // namespace comet::dledger
