#include <gtest/gtest.h>

#include "protocol/admin_bodies.h"
#include "protocol/ha_bodies.h"
#include "protocol/heartbeat_body.h"
#include "protocol/json_text.h"
#include "protocol/namesrv_headers.h"
#include "protocol/route_bodies.h"
#include "vectors_helper.h"

namespace comet::protocol {
namespace {

// decode -> encode -> decode gives an equal value.
template <typename T>
T reencode_equal(const T& value) {
    std::string text = value.encode();
    auto again = T::decode(text);
    EXPECT_TRUE(again.is_ok()) << text << ": " << again.status().to_string();
    if (again.is_ok()) {
        EXPECT_TRUE(*again == value) << text;
    }
    return value;
}

TEST(BodiesTest, RouteWithQuotedKeysIsReproducedByteForByte) {
    for (const char* name : {"0008-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS.bin",
                             "0300-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS.bin"}) {
        RemotingCommand cmd = testing::load_command(name);
        auto r = TopicRouteData::decode(cmd.body);
        ASSERT_TRUE(r.is_ok()) << name << r.status().to_string();
        EXPECT_EQ(r->encode(), cmd.body) << name;
        reencode_equal(*r);
    }
    auto r = TopicRouteData::decode(testing::load_command("0300-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS.bin").body);
    ASSERT_TRUE(r.is_ok());
    ASSERT_EQ(r->broker_datas.size(), 1u);
    EXPECT_EQ(r->broker_datas[0].broker_addrs.at(0), "127.0.0.1:10911");
    EXPECT_EQ(r->broker_datas[0].broker_addrs.at(1), "127.0.0.1:11011");
    EXPECT_EQ(r->broker_datas[0].cluster, "DefaultCluster");
    ASSERT_EQ(r->queue_datas.size(), 1u);
    EXPECT_EQ(r->queue_datas[0].perm, 6);
    EXPECT_TRUE(r->filter_server_table.empty());
}

TEST(BodiesTest, RouteWithUnquotedFastjsonKeys) {
    RemotingCommand cmd = testing::load_command("0165-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS.bin");
    ASSERT_NE(cmd.body.find("{0:"), std::string::npos);
    auto r = TopicRouteData::decode(cmd.body);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    ASSERT_EQ(r->broker_datas.size(), 1u);
    EXPECT_EQ(r->broker_datas[0].broker_addrs.at(0), "127.0.0.1:10911");
    EXPECT_EQ(r->broker_datas[0].broker_name, "broker-a");
    ASSERT_EQ(r->queue_datas.size(), 1u);
    EXPECT_EQ(r->queue_datas[0].read_queue_nums, 8);
    EXPECT_EQ(r->queue_datas[0].write_queue_nums, 8);
    EXPECT_EQ(r->queue_datas[0].perm, 7);
    // We re-emit standard JSON: quoted keys.
    EXPECT_NE(r->encode().find("{\"0\":\"127.0.0.1:10911\"}"), std::string::npos);
    reencode_equal(*r);
    // ROCKETMQ-serialized route response carries the same body type.
    auto rmq = TopicRouteData::decode(testing::load_command("0141-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS-RMQ.bin").body);
    ASSERT_TRUE(rmq.is_ok());
}

TEST(BodiesTest, RegisterBrokerBodyPlainAndCompressed) {
    RemotingCommand cmd = testing::load_command("0001-c2s-REGISTER_BROKER.bin");
    auto h = RegisterBrokerRequestHeader::from_ext(cmd);
    ASSERT_TRUE(h.is_ok());
    auto b = RegisterBrokerBody::decode_body(cmd.body, h->compressed, cmd.version);
    ASSERT_TRUE(b.is_ok()) << b.status().to_string();
    const auto& table = b->topic_config_serialize_wrapper.topic_config_table;
    EXPECT_EQ(table.size(), 8u);
    const TopicConfig& tbw = table.at("TBW102");
    EXPECT_EQ(tbw.topic_name, "TBW102");
    EXPECT_EQ(tbw.perm, 7);
    EXPECT_EQ(tbw.read_queue_nums, 8);
    EXPECT_EQ(tbw.topic_filter_type, TopicFilterType::kSingleTag);
    EXPECT_FALSE(tbw.order);
    EXPECT_EQ(table.at("SCHEDULE_TOPIC_XXXX").read_queue_nums, 18);
    EXPECT_EQ(b->topic_config_serialize_wrapper.data_version.timestamp, 1796061409236);
    EXPECT_TRUE(b->filter_server_list.empty());
    reencode_equal(*b);

    RegisterBrokerBody with_attrs = *b;
    with_attrs.topic_config_serialize_wrapper.topic_config_table["TBW102"].attributes["+a"] = "b c";
    with_attrs.filter_server_list = {"10.0.0.1:1"};
    std::string z = with_attrs.encode_compressed(413);
    auto back = RegisterBrokerBody::decode_body(z, true, 413);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    // The text form carries name, queue numbers, perm, filter type and attributes only.
    EXPECT_EQ(back->filter_server_list, with_attrs.filter_server_list);
    EXPECT_EQ(back->topic_config_serialize_wrapper.data_version,
              with_attrs.topic_config_serialize_wrapper.data_version);
    ASSERT_EQ(back->topic_config_serialize_wrapper.topic_config_table.size(), 8u);
    for (const auto& [name, tc] : with_attrs.topic_config_serialize_wrapper.topic_config_table) {
        const TopicConfig& got = back->topic_config_serialize_wrapper.topic_config_table.at(name);
        EXPECT_EQ(got.topic_name, tc.topic_name);
        EXPECT_EQ(got.read_queue_nums, tc.read_queue_nums);
        EXPECT_EQ(got.write_queue_nums, tc.write_queue_nums);
        EXPECT_EQ(got.perm, tc.perm);
        EXPECT_EQ(got.topic_filter_type, tc.topic_filter_type);
        EXPECT_EQ(got.attributes, tc.attributes);
    }
    EXPECT_FALSE(RegisterBrokerBody::decode_body("not zlib", true, 413).is_ok());
    EXPECT_FALSE(RegisterBrokerBody::decode_body(z.substr(0, z.size() / 2), true, 413).is_ok());
}

TEST(BodiesTest, TopicConfigTextForm) {
    auto t = TopicConfig::decode_text("T 4 4 6 SINGLE_TAG");  // 4.x: no attributes
    ASSERT_TRUE(t.is_ok());
    EXPECT_EQ(t->perm, 6);
    auto t2 = TopicConfig::decode_text("T 4 2 6 MULTI_TAG {\"+k\":\"v\"}");
    ASSERT_TRUE(t2.is_ok());
    EXPECT_EQ(t2->write_queue_nums, 2);
    EXPECT_EQ(t2->attributes.at("+k"), "v");
    EXPECT_EQ(t2->encode_text(), "T 4 2 6 MULTI_TAG {\"+k\":\"v\"}");
    // 4.9.8's TopicConfig#decode wants exactly five fields: no attributes, no trailing space.
    EXPECT_EQ(t->encode_text(), "T 4 4 6 SINGLE_TAG");
    EXPECT_EQ(TopicConfig::decode_text("T 4 4 6 FOO")->topic_filter_type,
              TopicFilterType::kSingleTag);
    EXPECT_FALSE(TopicConfig::decode_text("T 4 4").is_ok());
    EXPECT_FALSE(TopicConfig::decode_text("T x 4 6 SINGLE_TAG").is_ok());
}

// 4.9.8's TopicConfig has no attributes: a topic without any is written exactly as Java wrote
// it in REGISTER_BROKER (the 5.x "attributes" member appears only when there are some).
TEST(BodiesTest, TopicConfigWithoutAttributesIsReproducedByteForByte) {
    RemotingCommand cmd = testing::load_command("0001-c2s-REGISTER_BROKER.bin");
    auto b = RegisterBrokerBody::decode(cmd.body);
    ASSERT_TRUE(b.is_ok()) << b.status().to_string();
    for (const auto& [name, tc] : b->topic_config_serialize_wrapper.topic_config_table) {
        EXPECT_TRUE(tc.attributes.empty());
        EXPECT_NE(cmd.body.find("\"" + name + "\":" + tc.encode()), std::string::npos) << name;
    }
    TopicConfig with;
    with.topic_name = "T";
    with.topic_filter_type = TopicFilterType::kMultiTag;
    with.attributes["+k"] = "v";
    EXPECT_EQ(with.encode(),
              R"({"attributes":{"+k":"v"},"order":false,"perm":6,"readQueueNums":16,)"
              R"("topicFilterType":"MULTI_TAG","topicName":"T","topicSysFlag":0,)"
              R"("writeQueueNums":16})");
    reencode_equal(with);
}

TEST(BodiesTest, HeartbeatFromJavaIsReproducedByteForByte) {
    RemotingCommand cmd = testing::load_command("0045-c2s-HEART_BEAT.bin");
    auto h = HeartbeatData::decode(cmd.body);
    ASSERT_TRUE(h.is_ok()) << h.status().to_string();
    EXPECT_EQ(h->client_id, "127.0.0.1@vec-consumer");
    ASSERT_EQ(h->producer_data_set.size(), 1u);
    EXPECT_EQ(h->producer_data_set[0].group_name, "CLIENT_INNER_PRODUCER");
    ASSERT_EQ(h->consumer_data_set.size(), 1u);
    const ConsumerData& c = h->consumer_data_set[0];
    EXPECT_EQ(c.group_name, "VecConsumerGroup");
    EXPECT_EQ(c.consume_type, "CONSUME_PASSIVELY");
    EXPECT_EQ(c.message_model, "CLUSTERING");
    EXPECT_EQ(c.consume_from_where, "CONSUME_FROM_FIRST_OFFSET");
    ASSERT_EQ(c.subscription_data_set.size(), 2u);
    EXPECT_EQ(c.subscription_data_set[0].topic, "VecTopic");
    EXPECT_EQ(c.subscription_data_set[0].sub_string, "*");
    EXPECT_EQ(c.subscription_data_set[0].sub_version, 1796061431534);
    EXPECT_EQ(c.subscription_data_set[1].topic, "%RETRY%VecConsumerGroup");
    EXPECT_EQ(h->encode(), cmd.body);
}

TEST(BodiesTest, HeartbeatFromAliOnsAndRocketMqHeader) {
    auto h = HeartbeatData::decode(testing::load_command("0186-c2s-HEART_BEAT.bin").body);
    ASSERT_TRUE(h.is_ok()) << h.status().to_string();
    EXPECT_EQ(h->client_id, "127.0.0.1@vec-ali");
    ASSERT_EQ(h->producer_data_set.size(), 2u);
    EXPECT_EQ(h->producer_data_set[1].group_name, "VecAliProducerGroup");
    ASSERT_EQ(h->consumer_data_set.size(), 1u);
    EXPECT_EQ(h->consumer_data_set[0].subscription_data_set[0].expression_type, "TAG");
    reencode_equal(*h);
    auto rmq = HeartbeatData::decode(testing::load_command("0142-c2s-HEART_BEAT-RMQ.bin").body);
    ASSERT_TRUE(rmq.is_ok()) << rmq.status().to_string();
    reencode_equal(*rmq);

    HeartbeatData v2;
    v2.client_id = "c";
    v2.heartbeat_fingerprint = 42;
    v2.without_sub = true;
    SubscriptionData s;
    s.topic = "T";
    s.sub_string = "a || b";
    s.tags_set = {"a", "b"};
    s.code_set = {97, 98};
    ConsumerData c;
    c.subscription_data_set.push_back(s);
    v2.consumer_data_set.push_back(c);
    reencode_equal(v2);
}

TEST(BodiesTest, ConsumerListBody) {
    for (const char* name : {"0050-s2c-GET_CONSUMER_LIST_BY_GROUP-resp-SUCCESS.bin",
                             "0194-s2c-GET_CONSUMER_LIST_BY_GROUP-resp-SUCCESS.bin"}) {
        RemotingCommand cmd = testing::load_command(name);
        auto b = ConsumerListBody::decode(cmd.body);
        ASSERT_TRUE(b.is_ok());
        ASSERT_EQ(b->consumer_id_list.size(), 1u);
        EXPECT_EQ(b->encode(), cmd.body);
    }
}

TEST(BodiesTest, TopicStatsTableFastjsonObjectKeys) {
    std::string java =
        R"({"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"lastUpdateTimestamp":0,)"
        R"("maxOffset":5,"minOffset":0},{"brokerName":"b","queueId":1,"topic":"T"}:)"
        R"({"lastUpdateTimestamp":1796061429799,"maxOffset":7,"minOffset":2}},"topicPutTps":0.0})";
    auto t = TopicStatsTable::decode(java);
    ASSERT_TRUE(t.is_ok()) << t.status().to_string();
    ASSERT_EQ(t->offset_table.size(), 2u);
    MessageQueue q1{"T", "b", 1};
    EXPECT_EQ(t->offset_table.at(q1).max_offset, 7);
    EXPECT_EQ(t->offset_table.at(q1).last_update_timestamp, 1796061429799);
    EXPECT_EQ(t->encode(), java);  // same fastjson shape back
    reencode_equal(*t);

    ConsumeStats cs;
    cs.consume_tps = 1.5;
    cs.offset_table[MessageQueue{"T", "b", 3}] = OffsetWrapper{10, 8, 9, 1796061429799};
    reencode_equal(cs);
    EXPECT_NE(cs.encode().find("{\"brokerName\":\"b\",\"queueId\":3,\"topic\":\"T\"}:"),
              std::string::npos);
    EXPECT_NE(cs.encode().find("\"consumeTps\":1.5"), std::string::npos);
}

TEST(BodiesTest, ConsumerOffsetWrapperUnquotedIntKeys) {
    auto c = ConsumerOffsetSerializeWrapper::decode(
        R"({"offsetTable":{"VecTopic@G":{0:5,1:7},"%RETRY%G@G":{0:0}}})");
    ASSERT_TRUE(c.is_ok()) << c.status().to_string();
    EXPECT_EQ(c->offset_table.at("VecTopic@G").at(1), 7);
    EXPECT_EQ(c->offset_table.at("%RETRY%G@G").at(0), 0);
    EXPECT_FALSE(c->data_version.has_value());
    reencode_equal(*c);
    c->data_version = DataVersion{1, 2, 3};
    reencode_equal(*c);
    EXPECT_FALSE(ConsumerOffsetSerializeWrapper::decode(R"({"offsetTable":{"a":{x:1}}})").is_ok());
}

TEST(BodiesTest, ClusterInfoTopicListKvTableMemberGroup) {
    auto ci = ClusterInfo::decode(
        R"({"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"127.0.0.1:10911",1:"127.0.0.1:11011"},)"
        R"("brokerName":"broker-a","cluster":"DefaultCluster"}},)"
        R"("clusterAddrTable":{"DefaultCluster":["broker-a"]}})");
    ASSERT_TRUE(ci.is_ok()) << ci.status().to_string();
    EXPECT_EQ(ci->broker_addr_table.at("broker-a").broker_addrs.at(1), "127.0.0.1:11011");
    EXPECT_EQ(ci->cluster_addr_table.at("DefaultCluster").count("broker-a"), 1u);
    reencode_equal(*ci);

    TopicList tl{{"T1", "T2"}, std::nullopt};
    EXPECT_EQ(tl.encode(), R"({"topicList":["T1","T2"]})");
    reencode_equal(tl);
    KvTable kv{{{"k", "v"}, {"a", "1"}}};
    EXPECT_EQ(kv.encode(), R"({"table":{"a":"1","k":"v"}})");
    reencode_equal(kv);

    auto mg = GetBrokerMemberGroupResponseBody::decode(
        R"({"brokerMemberGroup":{"brokerAddrs":{0:"a:1",1:"b:2"},"brokerName":"broker-a",)"
        R"("cluster":"DefaultCluster"}})");
    ASSERT_TRUE(mg.is_ok()) << mg.status().to_string();
    EXPECT_EQ(mg->broker_member_group.broker_addrs.at(1), "b:2");
    reencode_equal(*mg);
}

TEST(BodiesTest, RegisterBrokerResult) {
    RemotingCommand resp = testing::load_command("0290-s2c-REGISTER_BROKER-resp-SUCCESS.bin");
    auto r = RegisterBrokerResult::from_response(resp);
    ASSERT_TRUE(r.is_ok());
    EXPECT_EQ(r->master_addr, "127.0.0.1:10911");
    EXPECT_FALSE(r->kv_table.has_value());
    RegisterBrokerResult with_kv{"h:1", "m:1", KvTable{{{"T", "broker-a:4"}}}};
    RemotingCommand out;
    with_kv.to_response(out);
    auto back = RegisterBrokerResult::from_response(out);
    ASSERT_TRUE(back.is_ok());
    EXPECT_EQ(back->ha_server_addr, "h:1");
    EXPECT_EQ(back->kv_table->table.at("T"), "broker-a:4");
}

TEST(BodiesTest, LockBodiesAndSubscriptionGroups) {
    auto lock = LockBatchRequestBody::decode(
        R"({"clientId":"10.0.0.5@12345","consumerGroup":"CG","mqSet":[{"brokerName":"broker-a",)"
        R"("queueId":0,"topic":"T"},{"brokerName":"broker-a","queueId":1,"topic":"T"}],)"
        R"("onlyThisBroker":false})");
    ASSERT_TRUE(lock.is_ok()) << lock.status().to_string();
    EXPECT_EQ(lock->mq_set.size(), 2u);
    EXPECT_EQ(lock->client_id, "10.0.0.5@12345");
    reencode_equal(*lock);
    LockBatchResponseBody resp{{MessageQueue{"T", "broker-a", 0}}};
    EXPECT_EQ(resp.encode(), R"({"lockOKMQSet":[{"brokerName":"broker-a","queueId":0,"topic":"T"}]})");
    reencode_equal(resp);

    SubscriptionGroupConfig g;
    g.group_name = "G";
    g.attributes["k"] = "v";
    reencode_equal(g);
    auto defaults = SubscriptionGroupConfig::decode(R"({"groupName":"G2"})");
    ASSERT_TRUE(defaults.is_ok());
    EXPECT_TRUE(defaults->consume_enable);
    EXPECT_EQ(defaults->retry_max_times, 16);
    SubscriptionGroupWrapper wrap;
    wrap.subscription_group_table["G"] = g;
    wrap.data_version.counter = 3;
    reencode_equal(wrap);
}

TEST(BodiesTest, ConnectionBodies) {
    auto cc = ConsumerConnection::decode(
        R"({"connectionSet":[{"clientAddr":"127.0.0.1:5000","clientId":"127.0.0.1@x",)"
        R"("language":"JAVA","version":409}],"consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET",)"
        R"("consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","subscriptionTable":)"
        R"({"T":{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*",)"
        R"("subVersion":1,"tagsSet":[],"topic":"T"}}})");
    ASSERT_TRUE(cc.is_ok()) << cc.status().to_string();
    ASSERT_EQ(cc->connection_set.size(), 1u);
    EXPECT_EQ(cc->connection_set.begin()->version, 409);
    EXPECT_EQ(cc->subscription_table.at("T").sub_string, "*");
    EXPECT_EQ(cc->message_model, "CLUSTERING");
    reencode_equal(*cc);
    ProducerConnection pc{{Connection{"id", "addr", "GO", 317}}};
    EXPECT_EQ(pc.encode(),
              R"({"connectionSet":[{"clientAddr":"addr","clientId":"id","language":"GO","version":317}]})");
    reencode_equal(pc);
}

TEST(BodiesTest, ControllerBodies) {
    auto s = SyncStateSet::decode(R"({"syncStateSet":[1,2],"syncStateSetEpoch":3})");
    ASSERT_TRUE(s.is_ok());
    EXPECT_EQ(s->sync_state_set, (std::set<int64_t>{1, 2}));
    EXPECT_EQ(s->encode(), R"({"syncStateSet":[1,2],"syncStateSetEpoch":3})");
    ElectMasterResponseBody e;
    e.broker_member_group = BrokerMemberGroup{"C", "B", {{1, "a:1"}}};
    e.sync_state_set = {1};
    reencode_equal(e);
}

TEST(BodiesTest, PropertiesText) {
    auto p = parse_properties_text(
        "# comment\n! also\nbrokerName=broker-a\n  listenPort = 10911\nflag:true\n"
        "path=C\\:\\\\store\nmulti=a\\\n    b\nempty=\nunicode=\\u4e2d\r\nspaced key\n");
    EXPECT_EQ(p.at("brokerName"), "broker-a");
    EXPECT_EQ(p.at("listenPort"), "10911");
    EXPECT_EQ(p.at("flag"), "true");
    EXPECT_EQ(p.at("path"), "C:\\store");
    EXPECT_EQ(p.at("multi"), "ab");
    EXPECT_EQ(p.at("empty"), "");
    EXPECT_EQ(p.at("unicode"), "\xe4\xb8\xad");
    EXPECT_EQ(p.at("spaced"), "key");
    EXPECT_EQ(p.count("# comment"), 0u);
    std::map<std::string, std::string> m{{"b", "2"}, {"a", "1"}};
    EXPECT_EQ(encode_properties_text(m), "a=1\nb=2\n");
    EXPECT_EQ(parse_properties_text(encode_properties_text(m)), m);
}

TEST(BodiesTest, LenientNormalizer) {
    auto n = normalize_lenient_json(" {0:'a', b : [1, -2.5e3, true, null], 'c':{\"d\":\"\\u00e9\"}} ");
    ASSERT_TRUE(n.is_ok()) << n.status().to_string();
    EXPECT_EQ(*n, "{\"0\":\"a\",\"b\":[1,-2.5e3,true,null],\"c\":{\"d\":\"\xc3\xa9\"}}");
    auto k = normalize_lenient_json("{{\"a\":1}:2}");
    ASSERT_TRUE(k.is_ok());
    EXPECT_EQ(*k, "{\"{\\\"a\\\":1}\":2}");
    EXPECT_FALSE(normalize_lenient_json("{").is_ok());
    EXPECT_FALSE(normalize_lenient_json("{\"a\" 1}").is_ok());
    EXPECT_FALSE(normalize_lenient_json("[1,2").is_ok());
    EXPECT_FALSE(normalize_lenient_json("\"abc").is_ok());
    EXPECT_FALSE(normalize_lenient_json("{} x").is_ok());
    EXPECT_FALSE(normalize_lenient_json(std::string(100000, '[')).is_ok());  // depth bound
}

TEST(BodiesTest, BadBodiesGiveErrorsNotCrashes) {
    EXPECT_FALSE(TopicRouteData::decode("").is_ok());
    EXPECT_FALSE(TopicRouteData::decode("[]").is_ok());
    EXPECT_FALSE(TopicRouteData::decode(R"({"queueDatas":{}})").is_ok());
    EXPECT_FALSE(TopicRouteData::decode(R"({"queueDatas":[{"perm":"x"}]})").is_ok());
    EXPECT_FALSE(TopicRouteData::decode(R"({"brokerDatas":[{"brokerAddrs":{x:"a"}}]})").is_ok());
    EXPECT_FALSE(TopicRouteData::decode(R"({"queueDatas":[{"perm":99999999999}]})").is_ok());
    EXPECT_FALSE(HeartbeatData::decode(R"({"consumerDataSet":[1]})").is_ok());
    EXPECT_FALSE(TopicStatsTable::decode(R"({"offsetTable":{"notjson":{}}})").is_ok());
    // Numbers given as strings are accepted like fastjson does.
    auto q = QueueData::decode(R"({"perm":"6","readQueueNums":4})");
    ASSERT_TRUE(q.is_ok());
    EXPECT_EQ(q->perm, 6);
}

}  // namespace
}  // namespace comet::protocol
