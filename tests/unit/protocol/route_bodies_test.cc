// The name server's bodies as the name server uses them: register bodies (plain and compressed,
// per request version), route bodies in both brokerAddrs key styles, cluster info and the small
// bodies, against the captured 4.9.8 frames.
#include <gtest/gtest.h>

#include "protocol/route_bodies.h"
#include "vectors_helper.h"

namespace comet::protocol {
namespace {

std::string body_of(const std::string& name) {
    std::string frame = testing::read_frame(name);
    EXPECT_FALSE(frame.empty()) << name;
    auto cmd = decode_frame_payload(std::string_view(frame).substr(4));
    EXPECT_TRUE(cmd.is_ok()) << name;
    return cmd.is_ok() ? cmd->body : std::string();
}

TEST(RouteBodiesTest, DecodesCapturedRegisterBody) {
    auto body = RegisterBrokerBody::decode(body_of("0001-c2s-REGISTER_BROKER.bin"));
    ASSERT_TRUE(body.is_ok()) << body.status().to_string();
    const auto& wrapper = body->topic_config_serialize_wrapper;
    EXPECT_EQ(wrapper.data_version, (DataVersion{.timestamp = 1796061409236}));
    EXPECT_EQ(wrapper.topic_config_table.size(), 8u);
    const TopicConfig& tbw = wrapper.topic_config_table.at("TBW102");
    EXPECT_EQ(tbw.read_queue_nums, 8);
    EXPECT_EQ(tbw.write_queue_nums, 8);
    EXPECT_EQ(tbw.perm, 7);
    EXPECT_EQ(tbw.topic_filter_type, TopicFilterType::kSingleTag);
    EXPECT_EQ(wrapper.topic_config_table.at("BenchmarkTest").read_queue_nums, 1024);
    EXPECT_TRUE(body->filter_server_list.empty());
}

TEST(RouteBodiesTest, RegisterBodyRoundTripsJsonAndCompressed) {
    const std::string captured = body_of("0001-c2s-REGISTER_BROKER.bin");
    auto body = RegisterBrokerBody::decode(captured).value();
    body.filter_server_list = {"10.0.0.9:1234"};
    body.topic_config_serialize_wrapper.data_version.state_version = 3;
    auto again = RegisterBrokerBody::decode(body.encode());
    ASSERT_TRUE(again.is_ok()) << again.status().to_string();
    EXPECT_EQ(again->topic_config_serialize_wrapper.data_version,
              body.topic_config_serialize_wrapper.data_version);
    EXPECT_EQ(again->filter_server_list, body.filter_server_list);
    ASSERT_EQ(again->topic_config_serialize_wrapper.topic_config_table.size(),
              body.topic_config_serialize_wrapper.topic_config_table.size());
    for (int32_t version : {409, 413, 479}) {
        std::string packed = body.encode_compressed(version);
        EXPECT_LT(packed.size(), captured.size());
        auto unpacked = RegisterBrokerBody::decode_compressed(packed, version);
        ASSERT_TRUE(unpacked.is_ok()) << unpacked.status().to_string();
        EXPECT_EQ(unpacked->topic_config_serialize_wrapper.data_version,
                  body.topic_config_serialize_wrapper.data_version);
        EXPECT_EQ(unpacked->filter_server_list, body.filter_server_list);
        ASSERT_EQ(unpacked->topic_config_serialize_wrapper.topic_config_table.size(), 8u);
        const TopicConfig& t =
            unpacked->topic_config_serialize_wrapper.topic_config_table.at("DefaultCluster");
        EXPECT_EQ(t.read_queue_nums, 16);
        EXPECT_EQ(t.perm, 7);
    }
}

TEST(RouteBodiesTest, BadRegisterBodiesAreErrors) {
    EXPECT_FALSE(RegisterBrokerBody::decode("{").is_ok());
    EXPECT_FALSE(RegisterBrokerBody::decode("[1,2]").is_ok());
    EXPECT_FALSE(RegisterBrokerBody::decode(
                     R"({"topicConfigSerializeWrapper":{"topicConfigTable":{"T":{"perm":"x"}}}})")
                     .is_ok());
    EXPECT_FALSE(RegisterBrokerBody::decode_compressed("not zlib at all", 409).is_ok());
    RegisterBrokerBody body;
    body.topic_config_serialize_wrapper.topic_config_table["T"] =
        TopicConfig{"T", 4, 4, 6, TopicFilterType::kSingleTag, 0, false, {}};
    std::string packed = body.encode_compressed(409);
    // Truncated zlib stream.
    EXPECT_FALSE(RegisterBrokerBody::decode_compressed(packed.substr(0, packed.size() / 2), 409)
                     .is_ok());
    // Decoded as a 5.x body it lacks the mapping count.
    EXPECT_FALSE(RegisterBrokerBody::decode_compressed(packed, 413).is_ok());
}

TEST(RouteBodiesTest, RouteBodyMatchesCapturedBytesInBothKeyStyles) {
    TopicRouteData route;
    route.queue_datas.push_back(QueueData{"broker-a", 8, 8, 7, 0});
    route.broker_datas.push_back(
        BrokerData{"DefaultCluster", "broker-a", {{0, "127.0.0.1:10911"}}, std::nullopt,
                   std::nullopt});
    EXPECT_EQ(route.encode(RouteKeyStyle::kStandard),
              body_of("0008-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS.bin"));
    EXPECT_EQ(route.encode(RouteKeyStyle::kFastjson),
              body_of("0165-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS.bin"));
    EXPECT_EQ(route.encode(), route.encode(RouteKeyStyle::kStandard));
    EXPECT_EQ(route_key_style(409, false), RouteKeyStyle::kStandard);
    EXPECT_EQ(route_key_style(401, false), RouteKeyStyle::kStandard);
    EXPECT_EQ(route_key_style(121, false), RouteKeyStyle::kFastjson);
    EXPECT_EQ(route_key_style(121, true), RouteKeyStyle::kStandard);
}

TEST(RouteBodiesTest, RouteBodyDecodesBothStyles) {
    for (const char* f : {"0008-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS.bin",
                          "0165-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS.bin"}) {
        auto route = TopicRouteData::decode(body_of(f));
        ASSERT_TRUE(route.is_ok()) << f << ": " << route.status().to_string();
        ASSERT_EQ(route->broker_datas.size(), 1u);
        EXPECT_EQ(route->broker_datas[0].broker_addrs.at(0), "127.0.0.1:10911");
        ASSERT_EQ(route->queue_datas.size(), 1u);
        EXPECT_EQ(route->queue_datas[0], (QueueData{"broker-a", 8, 8, 7, 0}));
    }
}

TEST(RouteBodiesTest, ClusterInfoRoundTrip) {
    ClusterInfo info;
    info.broker_addr_table["broker-a"] =
        BrokerData{"C", "broker-a", {{0, "a:1"}, {1, "b:1"}}, true, std::string("zone1")};
    info.cluster_addr_table["C"] = {"broker-a"};
    std::string json = info.encode();
    EXPECT_EQ(json,
              R"({"brokerAddrTable":{"broker-a":{"brokerAddrs":{"0":"a:1","1":"b:1"},)"
              R"("brokerName":"broker-a","cluster":"C","enableActingMaster":true,)"
              R"("zoneName":"zone1"}},"clusterAddrTable":{"C":["broker-a"]}})");
    auto back = ClusterInfo::decode(json);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    EXPECT_EQ(back->broker_addr_table, info.broker_addr_table);
    EXPECT_EQ(back->cluster_addr_table, info.cluster_addr_table);
}

TEST(RouteBodiesTest, SmallBodies) {
    EXPECT_EQ((TopicList{{"A", "B"}, std::nullopt}.encode()), R"({"topicList":["A","B"]})");
    const GetBrokerMemberGroupResponseBody group{BrokerMemberGroup{"C", "b", {{0, "a:1"}}}};
    EXPECT_EQ(group.encode(),
              R"({"brokerMemberGroup":{"brokerAddrs":{"0":"a:1"},"brokerName":"b",)"
              R"("cluster":"C"}})");
    EXPECT_EQ((DataVersion{.state_version = 1, .timestamp = 5, .counter = 2}.encode()),
              R"({"counter":2,"stateVersion":1,"timestamp":5})");
    EXPECT_EQ(DataVersion::decode(R"({"counter":2,"timestamp":5})").value(),
              (DataVersion{.timestamp = 5, .counter = 2}));
    const KvTable kv{{{"k", "v"}}};
    EXPECT_EQ(kv.encode(), R"({"table":{"k":"v"}})");
    EXPECT_EQ(KvTable::decode(R"({"table":{"k":"v"}})").value().table.at("k"), "v");
    EXPECT_FALSE(DataVersion::decode("{\"counter\":\"x\"}").is_ok());
}

}  // namespace
}  // namespace comet::protocol
