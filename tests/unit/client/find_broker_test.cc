// MQClientInstance#findBrokerAddressInSubscribe (pull target and offset fallback when the master
// is gone from the route) and the pull-from-which-node table fed by suggestWhichBrokerId.
#include <gtest/gtest.h>

#include "client/consumer_api.h"
#include "client/mq_client_instance.h"
#include "protocol/pull_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::client {
namespace {

using Addrs = std::map<int64_t, std::string>;

TEST(FindBrokerAddressInSubscribe, FollowsRocketMqFallbacks) {
    const Addrs full{{0, "m"}, {1, "s1"}, {2, "s2"}};
    EXPECT_EQ(find_broker_address_in_subscribe(full, 0, true), (FindBrokerResult{"m", false}));
    EXPECT_EQ(find_broker_address_in_subscribe(full, 1, false), (FindBrokerResult{"s1", true}));
    EXPECT_EQ(find_broker_address_in_subscribe(full, 2, true), (FindBrokerResult{"s2", true}));
    // A suggested slave that is gone: the next id.
    const Addrs no_s1{{0, "m"}, {2, "s2"}};
    EXPECT_EQ(find_broker_address_in_subscribe(no_s1, 1, true), (FindBrokerResult{"s2", true}));
    // Nothing near it: the master (smallest id) unless only that broker is wanted.
    const Addrs master_only{{0, "m"}};
    EXPECT_FALSE(find_broker_address_in_subscribe(master_only, 1, true));
    EXPECT_EQ(find_broker_address_in_subscribe(master_only, 1, false),
              (FindBrokerResult{"m", false}));
    // The master is gone from the route: pulls and offsets fall back to the first slave.
    const Addrs slaves{{1, "s1"}, {2, "s2"}};
    EXPECT_FALSE(find_broker_address_in_subscribe(slaves, 0, true));
    EXPECT_EQ(find_broker_address_in_subscribe(slaves, 0, false), (FindBrokerResult{"s1", true}));
    EXPECT_FALSE(find_broker_address_in_subscribe({}, 0, false));
}

TEST(PullFromWhichNode, DefaultsToMasterAndRemembersSuggestions) {
    ClientConfig cfg;
    MqClientInstance inst(cfg);
    const MessageQueue q0{"T", "broker-a", 0};
    const MessageQueue q1{"T", "broker-a", 1};
    EXPECT_EQ(inst.recalculate_pull_from_which_node(q0), 0);
    inst.update_pull_from_which_node(q0, 1);
    EXPECT_EQ(inst.recalculate_pull_from_which_node(q0), 1);
    EXPECT_EQ(inst.recalculate_pull_from_which_node(q1), 0);
    inst.update_pull_from_which_node(q0, 0);
    EXPECT_EQ(inst.recalculate_pull_from_which_node(q0), 0);
}

TEST(ProcessPullResponse, CarriesSuggestWhichBrokerId) {
    auto req = protocol::RemotingCommand::request(protocol::RequestCode::kPullMessage);
    auto resp = protocol::RemotingCommand::response_to(req, protocol::ResponseCode::kPullNotFound);
    protocol::PullMessageResponseHeader h;
    h.suggest_which_broker_id = 1;
    h.next_begin_offset = 5;
    h.min_offset = 0;
    h.max_offset = 5;
    h.to_ext(resp);
    auto r = process_pull_response(resp, build_subscription("T", "*", 0));
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->suggest_which_broker_id, 1);
    EXPECT_EQ(r->status, PullStatus::kNoNewMsg);
}

}  // namespace
}  // namespace comet::client
