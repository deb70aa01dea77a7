#include "namesrv/route_json.h"

#include <gtest/gtest.h>

#include "namesrv_test_helper.h"

namespace comet::namesrv {
namespace {

using testing::read_frame;

TEST(RouteJsonTest, DecodesCapturedRegisterBody) {
    auto cmd = read_frame("0001-c2s-REGISTER_BROKER.bin");
    auto body = decode_register_broker_body(cmd.body);
    ASSERT_TRUE(body.is_ok()) << body.status().to_string();
    EXPECT_EQ(body->data_version, (DataVersion{1796061409236, 0, 0}));
    EXPECT_EQ(body->topic_config_table.size(), 8u);
    const TopicConfig& tbw = body->topic_config_table.at("TBW102");
    EXPECT_EQ(tbw.read_queue_nums, 8);
    EXPECT_EQ(tbw.write_queue_nums, 8);
    EXPECT_EQ(tbw.perm, 7);
    EXPECT_EQ(tbw.topic_filter_type, "SINGLE_TAG");
    EXPECT_EQ(body->topic_config_table.at("BenchmarkTest").read_queue_nums, 1024);
    EXPECT_TRUE(body->filter_server_list.empty());
}

TEST(RouteJsonTest, RegisterBodyRoundTripsJsonAndCompressed) {
    auto cmd = read_frame("0001-c2s-REGISTER_BROKER.bin");
    auto body = decode_register_broker_body(cmd.body).value();
    body.filter_server_list = {"10.0.0.9:1234"};
    body.data_version.state_version = 3;
    auto again = decode_register_broker_body(encode_register_broker_body(body));
    ASSERT_TRUE(again.is_ok()) << again.status().to_string();
    EXPECT_EQ(again->data_version, body.data_version);
    EXPECT_EQ(again->filter_server_list, body.filter_server_list);
    ASSERT_EQ(again->topic_config_table.size(), body.topic_config_table.size());
    for (int32_t version : {409, 413, 479}) {
        std::string packed = encode_compressed_register_broker_body(body, version);
        EXPECT_LT(packed.size(), cmd.body.size());
        auto unpacked = decode_compressed_register_broker_body(packed, version);
        ASSERT_TRUE(unpacked.is_ok()) << unpacked.status().to_string();
        EXPECT_EQ(unpacked->data_version, body.data_version);
        EXPECT_EQ(unpacked->filter_server_list, body.filter_server_list);
        ASSERT_EQ(unpacked->topic_config_table.size(), 8u);
        const TopicConfig& t = unpacked->topic_config_table.at("DefaultCluster");
        EXPECT_EQ(t.read_queue_nums, 16);
        EXPECT_EQ(t.perm, 7);
    }
}

TEST(RouteJsonTest, BadRegisterBodiesAreErrors) {
    EXPECT_FALSE(decode_register_broker_body("{").is_ok());
    EXPECT_FALSE(decode_register_broker_body("[1,2]").is_ok());
    EXPECT_FALSE(decode_register_broker_body(
                     R"({"topicConfigSerializeWrapper":{"topicConfigTable":{"T":{"perm":"x"}}}})")
                     .is_ok());
    EXPECT_FALSE(decode_compressed_register_broker_body("not zlib at all", 409).is_ok());
    RegisterBrokerBody body;
    body.topic_config_table["T"] = TopicConfig{"T", 4, 4, 6, 0, false, "SINGLE_TAG"};
    std::string packed = encode_compressed_register_broker_body(body, 409);
    // Truncated zlib stream.
    EXPECT_FALSE(
        decode_compressed_register_broker_body(packed.substr(0, packed.size() / 2), 409).is_ok());
    // Decoded as a 5.x body it lacks the mapping count.
    EXPECT_FALSE(decode_compressed_register_broker_body(packed, 413).is_ok());
}

TEST(RouteJsonTest, RouteBodyMatchesCapturedBytesInBothKeyStyles) {
    TopicRouteData route;
    route.queue_datas.push_back(QueueData{"broker-a", 8, 8, 7, 0});
    route.broker_datas.push_back(
        BrokerData{"DefaultCluster", "broker-a", {{0, "127.0.0.1:10911"}}, false, std::nullopt});
    EXPECT_EQ(encode_topic_route_data(route, RouteKeyStyle::kStandard),
              read_frame("0008-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS.bin").body);
    EXPECT_EQ(encode_topic_route_data(route, RouteKeyStyle::kFastjson),
              read_frame("0165-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS.bin").body);
    EXPECT_EQ(route_key_style(409, false), RouteKeyStyle::kStandard);
    EXPECT_EQ(route_key_style(401, false), RouteKeyStyle::kStandard);
    EXPECT_EQ(route_key_style(121, false), RouteKeyStyle::kFastjson);
    EXPECT_EQ(route_key_style(121, true), RouteKeyStyle::kStandard);
}

TEST(RouteJsonTest, RouteBodyDecodesBothStyles) {
    for (const char* f : {"0008-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS.bin",
                          "0165-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS.bin"}) {
        auto route = decode_topic_route_data(read_frame(f).body);
        ASSERT_TRUE(route.is_ok()) << f << ": " << route.status().to_string();
        ASSERT_EQ(route->broker_datas.size(), 1u);
        EXPECT_EQ(route->broker_datas[0].broker_addrs.at(0), "127.0.0.1:10911");
        ASSERT_EQ(route->queue_datas.size(), 1u);
        EXPECT_EQ(route->queue_datas[0], (QueueData{"broker-a", 8, 8, 7, 0}));
    }
}

TEST(RouteJsonTest, ClusterInfoRoundTrip) {
    ClusterInfo info;
    info.broker_addr_table["broker-a"] =
        BrokerData{"C", "broker-a", {{0, "a:1"}, {1, "b:1"}}, true, std::string("zone1")};
    info.cluster_addr_table["C"] = {"broker-a"};
    std::string json = encode_cluster_info(info);
    EXPECT_EQ(json,
              R"({"brokerAddrTable":{"broker-a":{"brokerAddrs":{"0":"a:1","1":"b:1"},)"
              R"("brokerName":"broker-a","cluster":"C","enableActingMaster":true,)"
              R"("zoneName":"zone1"}},"clusterAddrTable":{"C":["broker-a"]}})");
    auto back = decode_cluster_info(json);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    EXPECT_EQ(back->broker_addr_table, info.broker_addr_table);
    EXPECT_EQ(back->cluster_addr_table, info.cluster_addr_table);
}

TEST(RouteJsonTest, SmallBodies) {
    EXPECT_EQ(encode_topic_list({"A", "B"}), R"({"topicList":["A","B"]})");
    EXPECT_EQ(encode_broker_member_group(BrokerMemberGroup{"C", "b", {{0, "a:1"}}}),
              R"({"brokerMemberGroup":{"brokerAddrs":{"0":"a:1"},"brokerName":"b",)"
              R"("cluster":"C"}})");
    EXPECT_EQ(encode_data_version(DataVersion{5, 2, 1}),
              R"({"counter":2,"stateVersion":1,"timestamp":5})");
    EXPECT_EQ(decode_data_version(R"({"counter":2,"timestamp":5})").value(),
              (DataVersion{5, 2, 0}));
    EXPECT_EQ(encode_kv_table({{"k", "v"}}), R"({"table":{"k":"v"}})");
    EXPECT_EQ(decode_kv_table(R"({"table":{"k":"v"}})").value().at("k"), "v");
    EXPECT_FALSE(decode_data_version("{\"counter\":\"x\"}").is_ok());
}

}  // namespace
}  // namespace comet::namesrv
