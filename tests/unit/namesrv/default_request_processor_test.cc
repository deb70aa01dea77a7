#include "namesrv/default_request_processor.h"

#include <gtest/gtest.h>

#include "base/crc32.h"
#include "protocol/route_bodies.h"
#include "namesrv_test_helper.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::namesrv {
namespace {

namespace rc = protocol::RequestCode;
namespace rs = protocol::ResponseCode;
using protocol::RemotingCommand;
using testing::read_frame;

class DefaultRequestProcessorTest : public ::testing::Test {
protected:
    DefaultRequestProcessorTest() {
        register_namesrv_config(registry_, &config_);
        registry_.seal();
    }
    RemotingCommand call(const RemotingCommand& req, ChannelId channel = 0) {
        return processor_.handle(req, channel);
    }
    static RemotingCommand request(int32_t code, std::map<std::string, std::string> ext = {},
                                   std::string body = {}) {
        RemotingCommand r = RemotingCommand::request(code);
        r.ext_fields = std::move(ext);
        r.body = std::move(body);
        return r;
    }

    ManualClock clock_;
    NamesrvConfig config_;
    ConfigRegistry registry_;
    RouteInfoManager routes_{clock_, std::chrono::seconds(120)};
    KvConfigManager kv_{""};
    DefaultRequestProcessor processor_{routes_, kv_, config_, registry_};
};

TEST_F(DefaultRequestProcessorTest, CapturedMasterRegistrationThenRoutesMatchRocketMq) {
    auto reg = call(read_frame("0001-c2s-REGISTER_BROKER.bin"), 7);
    EXPECT_EQ(reg.code, rs::kSuccess) << reg.remark.value_or("");
    EXPECT_TRUE(reg.is_response());
    EXPECT_EQ(reg.opaque, 0);
    EXPECT_TRUE(reg.ext_fields.empty());  // master: no masterAddr / haServerAddr
    EXPECT_TRUE(reg.body.empty());        // no ORDER_TOPIC_CONFIG namespace (as 0002)

    // Java client (version 409): standard JSON keys, byte-identical to RocketMQ's answer.
    auto java = call(read_frame("0006-c2s-GET_ROUTEINFO_BY_TOPIC.bin"));
    EXPECT_EQ(java.code, rs::kSuccess);
    EXPECT_EQ(java.body, read_frame("0008-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS.bin").body);
    // ali-ons (version 121): fastjson's unquoted keys, byte-identical too.
    auto ons = call(read_frame("0164-c2s-GET_ROUTEINFO_BY_TOPIC.bin"));
    EXPECT_EQ(ons.code, rs::kSuccess);
    EXPECT_EQ(ons.opaque, 2);
    EXPECT_EQ(ons.body, read_frame("0165-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS.bin").body);

    // Unknown topic: TOPIC_NOT_EXIST with RocketMQ's remark.
    auto missing = call(read_frame("0005-c2s-GET_ROUTEINFO_BY_TOPIC.bin"));
    auto expected = read_frame("0007-s2c-GET_ROUTEINFO_BY_TOPIC-resp-TOPIC_NOT_EXIST.bin");
    EXPECT_EQ(missing.code, rs::kTopicNotExist);
    EXPECT_EQ(missing.remark, expected.remark);
    EXPECT_EQ(missing.opaque, expected.opaque);

    // Incremental registration adds VecTopic; its route matches 0014.
    EXPECT_EQ(call(read_frame("0010-c2s-REGISTER_BROKER.bin"), 7).code, rs::kSuccess);
    auto vec = call(read_frame("0013-c2s-GET_ROUTEINFO_BY_TOPIC.bin"));
    EXPECT_EQ(vec.body, read_frame("0014-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS.bin").body);

    // The broker's shutdown unregisters it: routes are gone.
    EXPECT_EQ(call(read_frame("0287-c2s-UNREGISTER_BROKER.bin")).code, rs::kSuccess);
    EXPECT_EQ(call(read_frame("0006-c2s-GET_ROUTEINFO_BY_TOPIC.bin")).code, rs::kTopicNotExist);
}

TEST_F(DefaultRequestProcessorTest, SlaveRegistrationAnswersMasterAndHaAddress) {
    ASSERT_EQ(call(read_frame("0001-c2s-REGISTER_BROKER.bin"), 1).code, rs::kSuccess);
    auto resp = call(read_frame("0289-c2s-REGISTER_BROKER.bin"), 2);
    auto expected = read_frame("0290-s2c-REGISTER_BROKER-resp-SUCCESS.bin");
    EXPECT_EQ(resp.code, rs::kSuccess);
    EXPECT_EQ(resp.ext_fields, expected.ext_fields);
    EXPECT_EQ(resp.ext_fields.at("masterAddr"), "127.0.0.1:10911");
    EXPECT_EQ(resp.ext_fields.at("haServerAddr"), "192.0.2.2:10912");
}

TEST_F(DefaultRequestProcessorTest, RegisterBrokerErrors) {
    auto good = read_frame("0001-c2s-REGISTER_BROKER.bin");
    auto bad_crc = good;
    bad_crc.body[10] = 'X';
    auto r = call(bad_crc);
    EXPECT_EQ(r.code, rs::kSystemError);
    EXPECT_EQ(r.remark, "crc32 not match");

    auto missing = good;
    missing.ext_fields.erase("brokerName");
    r = call(missing);
    EXPECT_EQ(r.code, rs::kSystemError);
    EXPECT_NE(r.remark->find("brokerName"), std::string::npos) << *r.remark;

    auto bad_id = good;
    bad_id.ext_fields["brokerId"] = "zero";
    r = call(bad_id);
    EXPECT_EQ(r.code, rs::kSystemError);
    EXPECT_NE(r.remark->find("brokerId"), std::string::npos) << *r.remark;

    auto bad_body = good;
    bad_body.body = "{not json";
    bad_body.ext_fields["bodyCrc32"] = "0";
    r = call(bad_body);
    EXPECT_EQ(r.code, rs::kSystemError);
    EXPECT_NE(r.remark->find("register broker body"), std::string::npos);

    auto bad_compressed = good;
    bad_compressed.ext_fields["compressed"] = "true";
    bad_compressed.ext_fields["bodyCrc32"] = "0";
    EXPECT_EQ(call(bad_compressed).code, rs::kSystemError);
    EXPECT_EQ(routes_.live_broker_count(), 0u);
}

TEST_F(DefaultRequestProcessorTest, CompressedRegistrationWithCrc) {
    auto good = read_frame("0001-c2s-REGISTER_BROKER.bin");
    auto body = protocol::RegisterBrokerBody::decode(good.body).value();
    auto req = good;
    req.version = 479;
    req.body = body.encode_compressed(479);
    req.ext_fields["compressed"] = "true";
    req.ext_fields["bodyCrc32"] = std::to_string(crc32(req.body) & 0x7FFFFFFF);
    auto r = call(req);
    ASSERT_EQ(r.code, rs::kSuccess) << r.remark.value_or("");
    auto route = routes_.pick_topic_route_data("TBW102");
    ASSERT_TRUE(route);
    EXPECT_EQ(route->queue_datas[0].read_queue_nums, 8);
}

TEST_F(DefaultRequestProcessorTest, EmptyBodyRegistersWithoutTopics) {
    auto req = read_frame("0001-c2s-REGISTER_BROKER.bin");
    req.body.clear();
    req.ext_fields.erase("bodyCrc32");
    EXPECT_EQ(call(req).code, rs::kSuccess);
    EXPECT_EQ(routes_.live_broker_count(), 1u);
    EXPECT_TRUE(routes_.get_all_topic_list().empty());
}

TEST_F(DefaultRequestProcessorTest, KvConfigCodes) {
    auto put = request(rc::kPutKvConfig, {{"namespace", "ORDER_TOPIC_CONFIG"},
                                          {"key", "T"},
                                          {"value", "broker-a:4"}});
    EXPECT_EQ(call(put).code, rs::kSuccess);
    auto get = call(request(rc::kGetKvConfig, {{"namespace", "ORDER_TOPIC_CONFIG"}, {"key", "T"}}));
    EXPECT_EQ(get.code, rs::kSuccess);
    EXPECT_EQ(get.ext_fields.at("value"), "broker-a:4");
    auto list = call(request(rc::kGetKvlistByNamespace, {{"namespace", "ORDER_TOPIC_CONFIG"}}));
    EXPECT_EQ(list.body, R"({"table":{"T":"broker-a:4"}})");

    // REGISTER_BROKER now returns the ORDER_TOPIC_CONFIG table; routes carry orderTopicConf
    // once orderMessageEnable is on.
    auto reg = call(read_frame("0001-c2s-REGISTER_BROKER.bin"));
    EXPECT_EQ(reg.body, R"({"table":{"T":"broker-a:4"}})");
    ASSERT_TRUE(registry_.set("orderMessageEnable", "true", "test").is_ok());
    auto put_tbw = request(rc::kPutKvConfig, {{"namespace", "ORDER_TOPIC_CONFIG"},
                                              {"key", "TBW102"},
                                              {"value", "broker-a:8"}});
    EXPECT_EQ(call(put_tbw).code, rs::kSuccess);
    auto route = call(read_frame("0006-c2s-GET_ROUTEINFO_BY_TOPIC.bin"));
    EXPECT_NE(route.body.find(R"("orderTopicConf":"broker-a:8")"), std::string::npos);

    EXPECT_EQ(call(request(rc::kDeleteKvConfig, {{"namespace", "ORDER_TOPIC_CONFIG"},
                                                 {"key", "T"}}))
                  .code,
              rs::kSuccess);
    auto gone =
        call(request(rc::kGetKvConfig, {{"namespace", "ORDER_TOPIC_CONFIG"}, {"key", "T"}}));
    EXPECT_EQ(gone.code, rs::kQueryNotFound);
    EXPECT_EQ(gone.remark, "No config item, Namespace: ORDER_TOPIC_CONFIG Key: T");
    auto none = call(request(rc::kGetKvlistByNamespace, {{"namespace", "nope"}}));
    EXPECT_EQ(none.code, rs::kQueryNotFound);
    EXPECT_EQ(none.remark, "No config item, Namespace: nope");
    auto bad = call(request(rc::kPutKvConfig, {{"namespace", "n"}, {"key", "k"}}));
    EXPECT_EQ(bad.code, rs::kSystemError);
    EXPECT_EQ(bad.remark, "the custom field value is null");
}

TEST_F(DefaultRequestProcessorTest, ClusterTopicListMemberGroupDeleteTopic) {
    call(read_frame("0001-c2s-REGISTER_BROKER.bin"), 1);
    call(read_frame("0289-c2s-REGISTER_BROKER.bin"), 2);
    auto info = call(request(rc::kGetBrokerClusterInfo));
    EXPECT_EQ(info.code, rs::kSuccess);
    auto decoded = protocol::ClusterInfo::decode(info.body).value();
    EXPECT_EQ(decoded.broker_addr_table.at("broker-a").broker_addrs.size(), 2u);
    EXPECT_EQ(decoded.cluster_addr_table.at("DefaultCluster").count("broker-a"), 1u);

    auto topics = call(request(rc::kGetAllTopicListFromNameserver));
    EXPECT_NE(topics.body.find("\"TBW102\""), std::string::npos);
    auto by_cluster = call(request(rc::kGetTopicsByCluster, {{"cluster", "DefaultCluster"}}));
    EXPECT_NE(by_cluster.body.find("\"TBW102\""), std::string::npos);
    EXPECT_EQ(call(request(rc::kGetTopicsByCluster)).code, rs::kSystemError);

    auto group = call(request(rc::kGetBrokerMemberGroup,
                              {{"clusterName", "DefaultCluster"}, {"brokerName", "broker-a"}}));
    EXPECT_EQ(group.body,
              R"({"brokerMemberGroup":{"brokerAddrs":)"
              R"({"0":"127.0.0.1:10911","1":"127.0.0.1:11011"},)"
              R"("brokerName":"broker-a","cluster":"DefaultCluster"}})");

    EXPECT_EQ(call(request(rc::kDeleteTopicInNamesrv, {{"topic", "TBW102"}})).code, rs::kSuccess);
    EXPECT_EQ(call(read_frame("0006-c2s-GET_ROUTEINFO_BY_TOPIC.bin")).code, rs::kTopicNotExist);
    EXPECT_EQ(call(request(rc::kDeleteTopicInNamesrv)).code, rs::kSystemError);

    ASSERT_TRUE(registry_.set("enableAllTopicList", "false", "test").is_ok());
    auto disabled = call(request(rc::kGetAllTopicListFromNameserver));
    EXPECT_EQ(disabled.code, rs::kSystemError);
    EXPECT_EQ(disabled.remark, "disable");
}

TEST_F(DefaultRequestProcessorTest, QueryDataVersionAndHeartbeatRefreshLiveness) {
    call(read_frame("0001-c2s-REGISTER_BROKER.bin"), 1);
    std::map<std::string, std::string> h{{"brokerName", "broker-a"},
                                         {"brokerAddr", "127.0.0.1:10911"},
                                         {"clusterName", "DefaultCluster"},
                                         {"brokerId", "0"}};
    clock_.advance(std::chrono::seconds(100));
    auto same = call(request(rc::kQueryDataVersion, h,
                             R"({"counter":0,"stateVersion":0,"timestamp":1796061409236})"));
    EXPECT_EQ(same.code, rs::kSuccess);
    EXPECT_EQ(same.ext_fields.at("changed"), "false");
    EXPECT_EQ(same.body, R"({"counter":0,"stateVersion":0,"timestamp":1796061409236})");
    clock_.advance(std::chrono::seconds(100));
    EXPECT_TRUE(routes_.scan_not_active_broker().empty());  // refreshed at t=100s

    auto changed = call(request(rc::kQueryDataVersion, h, R"({"counter":9,"timestamp":1})"));
    EXPECT_EQ(changed.ext_fields.at("changed"), "true");
    EXPECT_EQ(call(request(rc::kQueryDataVersion, h, "{bad")).code, rs::kSystemError);

    auto hb = request(rc::kBrokerHeartbeat, {{"clusterName", "DefaultCluster"},
                                             {"brokerAddr", "127.0.0.1:10911"},
                                             {"brokerName", "broker-a"}});
    EXPECT_EQ(call(hb).code, rs::kSuccess);
    clock_.advance(std::chrono::seconds(119));
    EXPECT_TRUE(routes_.scan_not_active_broker().empty());
    clock_.advance(std::chrono::seconds(2));
    EXPECT_EQ(routes_.scan_not_active_broker().size(), 1u);
}

TEST_F(DefaultRequestProcessorTest, NamesrvConfigGetAndUpdate) {
    auto got = call(request(rc::kGetNamesrvConfig));
    EXPECT_EQ(got.code, rs::kSuccess);
    EXPECT_NE(got.body.find("listenPort=9876\n"), std::string::npos);
    EXPECT_NE(got.body.find("orderMessageEnable=false\n"), std::string::npos);

    auto upd = call(request(rc::kUpdateNamesrvConfig, {}, "orderMessageEnable=true\n"));
    EXPECT_EQ(upd.code, rs::kSuccess) << upd.remark.value_or("");
    EXPECT_TRUE(config_.order_message_enable.load());

    auto fixed = call(request(rc::kUpdateNamesrvConfig, {}, "listenPort=1\n"));
    EXPECT_EQ(fixed.code, rs::kSystemError);
    EXPECT_NE(fixed.remark->find("restart required"), std::string::npos);
    auto bad = call(request(rc::kUpdateNamesrvConfig, {}, "scanNotActiveBrokerInterval=soon\n"));
    EXPECT_EQ(bad.code, rs::kSystemError);
    EXPECT_NE(bad.remark->find("scanNotActiveBrokerInterval"), std::string::npos);
    EXPECT_EQ(call(request(rc::kUpdateNamesrvConfig)).code, rs::kSystemError);
    EXPECT_EQ(config_.scan_not_active_broker_interval.load(), 5000);
}

TEST_F(DefaultRequestProcessorTest, UnknownCodeAndCodeList) {
    auto r = call(request(12345));
    EXPECT_EQ(r.code, rs::kRequestCodeNotSupported);
    EXPECT_EQ(r.remark, " request type 12345 not supported");
    EXPECT_EQ(DefaultRequestProcessor::handled_codes().size(), 19u);
}

// WIPE_WRITE_PERM_OF_BROKER / ADD_WRITE_PERM_OF_BROKER (Java operateWritePermOfBroker) and
// GET_SYSTEM_TOPIC_LIST_FROM_NS.
TEST_F(DefaultRequestProcessorTest, WritePermAndSystemTopicList) {
    auto missing = call(request(rc::kWipeWritePermOfBroker));
    EXPECT_EQ(missing.code, rs::kSystemError);
    EXPECT_EQ(missing.remark, "the custom field brokerName is null");
    auto none = call(request(rc::kWipeWritePermOfBroker, {{"brokerName", "no-such-broker"}}));
    EXPECT_EQ(none.code, rs::kSuccess);
    ASSERT_NE(none.ext("wipeTopicCount"), nullptr);
    EXPECT_EQ(*none.ext("wipeTopicCount"), "0");
    auto add = call(request(rc::kAddWritePermOfBroker, {{"brokerName", "no-such-broker"}}));
    EXPECT_EQ(add.code, rs::kSuccess);
    ASSERT_NE(add.ext("addTopicCount"), nullptr);
    auto sys = call(request(rc::kGetSystemTopicListFromNs));
    EXPECT_EQ(sys.code, rs::kSuccess);
    EXPECT_NE(sys.body.find(R"("topicList":[)"), std::string::npos) << sys.body;
}

}  // namespace
}  // namespace comet::namesrv
