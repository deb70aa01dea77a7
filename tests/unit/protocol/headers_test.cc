#include <gtest/gtest.h>

#include "protocol/admin_headers.h"
#include "protocol/ha_headers.h"
#include "protocol/namesrv_headers.h"
#include "protocol/pull_headers.h"
#include "protocol/request_code.h"
#include "protocol/send_headers.h"
#include "vectors_helper.h"

namespace comet::protocol {
namespace {

// Decodes header T from a captured Java frame, re-encodes it and expects the same extFields
// (Java writes every non-null field, so a complete struct reproduces them exactly).
template <typename T>
T java_round_trip(const std::string& name) {
    RemotingCommand cmd = testing::load_command(name);
    auto h = T::from_ext(cmd);
    EXPECT_TRUE(h.is_ok()) << name << ": " << h.status().to_string();
    if (!h.is_ok()) {
        return T{};
    }
    RemotingCommand out;
    h->to_ext(out);
    EXPECT_EQ(out.ext_fields, cmd.ext_fields) << name;
    auto again = T::from_ext(out);
    EXPECT_TRUE(again.is_ok());
    return *h;
}

TEST(HeadersTest, SendMessageV2FromJavaClient) {
    RemotingCommand cmd = testing::load_command("0021-c2s-SEND_MESSAGE_V2.bin");
    auto v2 = java_round_trip<SendMessageRequestHeaderV2>("0021-c2s-SEND_MESSAGE_V2.bin");
    EXPECT_EQ(v2.a, "VecProducerGroup");
    auto h = decode_send_message_header(cmd);
    ASSERT_TRUE(h.is_ok()) << h.status().to_string();
    EXPECT_EQ(h->producer_group, "VecProducerGroup");
    EXPECT_EQ(h->topic, "VecTopic");
    EXPECT_EQ(h->default_topic, "TBW102");
    EXPECT_EQ(h->default_topic_queue_nums, 4);
    EXPECT_EQ(h->queue_id, 0);
    EXPECT_EQ(h->sys_flag, 0);
    EXPECT_EQ(h->born_timestamp, 1796061429799);
    EXPECT_EQ(h->flag, 0);
    ASSERT_TRUE(h->properties.has_value());
    EXPECT_NE(h->properties->find("UNIQ_KEY\x01"), std::string::npos);
    EXPECT_EQ(h->reconsume_times, 0);
    EXPECT_EQ(h->unit_mode, false);
    EXPECT_FALSE(h->max_reconsume_times.has_value());
    EXPECT_EQ(h->batch, false);
    EXPECT_EQ(h->broker_name, "broker-a");
    EXPECT_FALSE(is_batch_send(cmd, *h));

    // V1 <-> V2 conversion is lossless.
    auto back = SendMessageRequestHeaderV2::from_v1(*h);
    RemotingCommand out;
    back.to_ext(out);
    EXPECT_EQ(out.ext_fields, cmd.ext_fields);
    // V1 long names round trip too, and decode_send_message_header takes them for code 10.
    RemotingCommand v1cmd = RemotingCommand::request(RequestCode::kSendMessage);
    h->to_ext(v1cmd);
    EXPECT_EQ(*v1cmd.ext("producerGroup"), "VecProducerGroup");
    EXPECT_EQ(*v1cmd.ext("bname"), "broker-a");
    auto h1 = decode_send_message_header(v1cmd);
    ASSERT_TRUE(h1.is_ok());
    EXPECT_EQ(h1->born_timestamp, h->born_timestamp);
    EXPECT_EQ(h1->properties, h->properties);
}

TEST(HeadersTest, SendBatchAndResponse) {
    RemotingCommand cmd = testing::load_command("0026-c2s-SEND_BATCH_MESSAGE.bin");
    auto h = decode_send_message_header(cmd);
    ASSERT_TRUE(h.is_ok());
    EXPECT_EQ(h->queue_id, 1);
    EXPECT_TRUE(is_batch_send(cmd, *h));
    auto r = java_round_trip<SendMessageResponseHeader>("0022-s2c-SEND_MESSAGE_V2-resp-SUCCESS.bin");
    EXPECT_EQ(r.msg_id, "7F00000100002A9F0000000000000000");
    EXPECT_EQ(r.queue_id, 0);
    EXPECT_EQ(r.queue_offset, 0);
    EXPECT_EQ(r.msg_region, "DefaultRegion");
    EXPECT_EQ(r.trace_on, "true");
    auto b = SendMessageResponseHeader::from_ext(testing::load_command("0027-s2c-SEND_BATCH_MESSAGE-resp-SUCCESS.bin"));
    ASSERT_TRUE(b.is_ok());
    EXPECT_NE(b->msg_id.find(','), std::string::npos);
}

TEST(HeadersTest, SendMessageFromAliOnsNumbers) {
    RemotingCommand cmd = testing::load_command("0168-c2s-SEND_MESSAGE_V2.bin");
    auto h = decode_send_message_header(cmd);
    ASSERT_TRUE(h.is_ok()) << h.status().to_string();
    EXPECT_EQ(h->producer_group, "VecAliProducerGroup");
    EXPECT_EQ(h->queue_id, 2);
    EXPECT_EQ(h->default_topic_queue_nums, 4);
    EXPECT_EQ(h->born_timestamp, 1796061462209);
    EXPECT_EQ(h->unit_mode, false);
    EXPECT_FALSE(h->broker_name.has_value());
}

TEST(HeadersTest, SendFromRocketMqSerialization) {
    RemotingCommand cmd = testing::load_command("0144-c2s-SEND_MESSAGE_V2-RMQ.bin");
    EXPECT_EQ(cmd.serialize_type, SerializeType::kRocketMq);
    auto h = decode_send_message_header(cmd);
    ASSERT_TRUE(h.is_ok()) << h.status().to_string();
    EXPECT_FALSE(h->topic.empty());
}

TEST(HeadersTest, PullRequestAndResponse) {
    auto p = java_round_trip<PullMessageRequestHeader>("0063-c2s-PULL_MESSAGE.bin");
    EXPECT_EQ(p.consumer_group, "VecConsumerGroup");
    EXPECT_EQ(p.topic, "VecTopic");
    EXPECT_EQ(p.queue_id, 0);
    EXPECT_EQ(p.queue_offset, 0);
    EXPECT_EQ(p.max_msg_nums, 32);
    EXPECT_EQ(p.sys_flag, kPullFlagSuspend);
    EXPECT_EQ(p.suspend_timeout_millis, 15000);
    EXPECT_EQ(p.sub_version, 1796061431819);
    EXPECT_EQ(p.expression_type, "TAG");
    EXPECT_FALSE(p.subscription.has_value());

    auto ali = PullMessageRequestHeader::from_ext(testing::load_command("0202-c2s-PULL_MESSAGE.bin"));
    ASSERT_TRUE(ali.is_ok()) << ali.status().to_string();
    EXPECT_EQ(ali->sys_flag, 6);
    EXPECT_EQ(ali->subscription, "*");
    EXPECT_EQ(ali->sub_version, 1796061462218);

    auto rmq = PullMessageRequestHeader::from_ext(testing::load_command("0151-c2s-PULL_MESSAGE-RMQ.bin"));
    ASSERT_TRUE(rmq.is_ok());
    EXPECT_EQ(rmq->queue_id, 3);
    EXPECT_EQ(rmq->suspend_timeout_millis, 20000);

    auto r = java_round_trip<PullMessageResponseHeader>("0068-s2c-PULL_MESSAGE-resp-SUCCESS.bin");
    EXPECT_EQ(r.next_begin_offset, 3);
    EXPECT_EQ(r.max_offset, 3);
    auto nf = PullMessageResponseHeader::from_ext(testing::load_command("0093-s2c-PULL_MESSAGE-resp-PULL_NOT_FOUND.bin"));
    ASSERT_TRUE(nf.is_ok());
    EXPECT_EQ(nf->next_begin_offset, 3);
}

TEST(HeadersTest, ConsumerHeadersFromCapturedFrames) {
    auto q = QueryConsumerOffsetRequestHeader::from_ext(testing::load_command("0057-c2s-QUERY_CONSUMER_OFFSET.bin"));
    ASSERT_TRUE(q.is_ok());
    EXPECT_EQ(q->consumer_group, "VecConsumerGroup");
    EXPECT_EQ(q->queue_id, 0);
    auto qa = QueryConsumerOffsetRequestHeader::from_ext(testing::load_command("0196-c2s-QUERY_CONSUMER_OFFSET.bin"));
    ASSERT_TRUE(qa.is_ok());
    EXPECT_EQ(qa->consumer_group, "VecAliConsumerGroup");

    auto off = java_round_trip<OffsetResponseHeader>("0082-s2c-GET_MAX_OFFSET-resp-SUCCESS.bin");
    EXPECT_EQ(off.offset, 3);
    auto mx = GetMaxOffsetRequestHeader::from_ext(testing::load_command("0081-c2s-GET_MAX_OFFSET.bin"));
    ASSERT_TRUE(mx.is_ok());
    EXPECT_EQ(mx->topic, "VecTopic");
    EXPECT_FALSE(mx->committed.has_value());

    auto u = UpdateConsumerOffsetRequestHeader::from_ext(
        testing::load_command("0085-c2s-UPDATE_CONSUMER_OFFSET-oneway.bin"));
    ASSERT_TRUE(u.is_ok());
    EXPECT_EQ(u->queue_id, 3);
    auto ua = UpdateConsumerOffsetRequestHeader::from_ext(testing::load_command("0224-c2s-UPDATE_CONSUMER_OFFSET.bin"));
    ASSERT_TRUE(ua.is_ok());
    EXPECT_EQ(ua->commit_offset, 3);

    auto un = java_round_trip<UnregisterClientRequestHeader>("0130-c2s-UNREGISTER_CLIENT.bin");
    EXPECT_EQ(un.client_id, "127.0.0.1@vec-consumer");
    EXPECT_FALSE(un.producer_group.has_value());

    auto sb = ConsumerSendMsgBackRequestHeader::from_ext(testing::load_command("0073-c2s-CONSUMER_SEND_MSG_BACK.bin"));
    ASSERT_TRUE(sb.is_ok());
    EXPECT_EQ(sb->offset, 476);
    EXPECT_EQ(sb->group, "VecConsumerGroup");
    EXPECT_EQ(sb->delay_level, 0);
    EXPECT_EQ(sb->max_reconsume_times, 16);
    EXPECT_EQ(sb->origin_topic, "VecTopic");
    auto sba = ConsumerSendMsgBackRequestHeader::from_ext(testing::load_command("0246-c2s-CONSUMER_SEND_MSG_BACK.bin"));
    ASSERT_TRUE(sba.is_ok());
    EXPECT_EQ(sba->offset, 3107);
    EXPECT_EQ(sba->unit_mode, false);

    auto n = java_round_trip<ConsumerGroupRequestHeader>(
        "0047-s2c-NOTIFY_CONSUMER_IDS_CHANGED-oneway.bin");
    EXPECT_EQ(n.consumer_group, "VecConsumerGroup");
    auto l = java_round_trip<GetConsumerListByGroupRequestHeader>(
        "0049-c2s-GET_CONSUMER_LIST_BY_GROUP.bin");
    EXPECT_EQ(l.consumer_group, "VecConsumerGroup");
}

TEST(HeadersTest, NamesrvHeaders) {
    auto r = java_round_trip<RegisterBrokerRequestHeader>("0001-c2s-REGISTER_BROKER.bin");
    EXPECT_EQ(r.broker_name, "broker-a");
    EXPECT_EQ(r.broker_addr, "127.0.0.1:10911");
    EXPECT_EQ(r.cluster_name, "DefaultCluster");
    EXPECT_EQ(r.ha_server_addr, "192.0.2.2:10912");
    EXPECT_EQ(r.broker_id, 0);
    EXPECT_FALSE(r.compressed);
    EXPECT_EQ(r.body_crc32, 1596856442);

    auto resp = java_round_trip<RegisterBrokerResponseHeader>(
        "0290-s2c-REGISTER_BROKER-resp-SUCCESS.bin");
    EXPECT_EQ(resp.ha_server_addr, "192.0.2.2:10912");
    EXPECT_EQ(resp.master_addr, "127.0.0.1:10911");
    auto empty = RegisterBrokerResponseHeader::from_ext(testing::load_command("0002-s2c-REGISTER_BROKER-resp-SUCCESS.bin"));
    ASSERT_TRUE(empty.is_ok());
    EXPECT_FALSE(empty->master_addr.has_value());

    auto un = java_round_trip<UnRegisterBrokerRequestHeader>("0287-c2s-UNREGISTER_BROKER.bin");
    EXPECT_EQ(un.broker_id, 0);
    auto route = java_round_trip<GetRouteInfoRequestHeader>("0005-c2s-GET_ROUTEINFO_BY_TOPIC.bin");
    EXPECT_EQ(route.topic, "VecNoSuchTopic");
}

TEST(HeadersTest, AdminCreateTopic) {
    auto t = java_round_trip<CreateTopicRequestHeader>("0009-c2s-UPDATE_AND_CREATE_TOPIC.bin");
    EXPECT_EQ(t.topic, "VecTopic");
    EXPECT_EQ(t.default_topic, "TBW102");
    EXPECT_EQ(t.read_queue_nums, 4);
    EXPECT_EQ(t.write_queue_nums, 4);
    EXPECT_EQ(t.perm, 6);
    EXPECT_EQ(t.topic_filter_type, "SINGLE_TAG");
    EXPECT_EQ(t.topic_sys_flag, 0);
    EXPECT_FALSE(t.order);
}

template <typename T>
void expect_round_trip(const T& h) {
    RemotingCommand cmd;
    h.to_ext(cmd);
    auto back = T::from_ext(cmd);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    RemotingCommand again;
    back->to_ext(again);
    EXPECT_EQ(again.ext_fields, cmd.ext_fields);
}

TEST(HeadersTest, SyntheticRoundTrips) {
    SearchOffsetRequestHeader s{"T", 2, 1796061429799, "UPPER"};
    expect_round_trip(s);
    EXPECT_TRUE(s.is_upper());
    s.boundary_type = "lower";
    EXPECT_FALSE(s.is_upper());
    s.boundary_type.reset();
    EXPECT_FALSE(s.is_upper());
    expect_round_trip(GetEarliestMsgStoretimeResponseHeader{123});
    expect_round_trip(QueryMessageRequestHeader{"T", "k", 32, 1, 2});
    expect_round_trip(QueryMessageResponseHeader{5, 6});
    expect_round_trip(ViewMessageRequestHeader{std::nullopt, 476});
    expect_round_trip(EndTransactionRequestHeader{"T", "PG", 1, 2, 8, true, "id", "tx"});
    expect_round_trip(PutKvConfigRequestHeader{"ORDER_TOPIC_CONFIG", "T", "broker-a:4"});
    expect_round_trip(GetKvConfigResponseHeader{"v"});
    expect_round_trip(GetBrokerMemberGroupRequestHeader{"C", "B"});
    expect_round_trip(DeleteSubscriptionGroupRequestHeader{"G", true});
    expect_round_trip(GetConsumeStatsRequestHeader{"G", "T"});
    expect_round_trip(BrokerHeartbeatRequestHeader{"C", "a:1", "B", 1, 3, 100, 90, 10000, 5});
    expect_round_trip(ElectMasterRequestHeader{"C", "B", -1, false, 77});
    expect_round_trip(ControllerMasterInfoHeader{"C", "B", 1, "a:1", 3, 4});
    expect_round_trip(AlterSyncStateSetResponseHeader{9});
    expect_round_trip(CleanBrokerDataRequestHeader{"C", "B", "1;2", false});
    expect_round_trip(ExchangeHaInfoHeader{"h:1", 100, "m:1"});
}

TEST(HeadersTest, MissingRequiredFieldIsJavaMessage) {
    RemotingCommand cmd = testing::load_command("0063-c2s-PULL_MESSAGE.bin");
    cmd.ext_fields.erase("topic");
    auto h = PullMessageRequestHeader::from_ext(cmd);
    ASSERT_FALSE(h.is_ok());
    EXPECT_EQ(h.status().message(), "the custom field topic is null");
    EXPECT_EQ(h.status().code(), Errc::kInvalidArgument);

    RemotingCommand empty = RemotingCommand::request(RequestCode::kSendMessageV2);
    auto s = decode_send_message_header(empty);
    ASSERT_FALSE(s.is_ok());
    EXPECT_EQ(s.status().message(), "the custom field a is null");

    RemotingCommand other = RemotingCommand::request(RequestCode::kPullMessage);
    EXPECT_FALSE(decode_send_message_header(other).is_ok());
}

TEST(HeadersTest, UnparsableNumberNamesFieldAndValue) {
    RemotingCommand cmd = testing::load_command("0063-c2s-PULL_MESSAGE.bin");
    cmd.set_ext("queueId", "x1");
    auto h = PullMessageRequestHeader::from_ext(cmd);
    ASSERT_FALSE(h.is_ok());
    EXPECT_NE(h.status().message().find("queueId"), std::string::npos);
    EXPECT_NE(h.status().message().find("'x1'"), std::string::npos);

    cmd.set_ext("queueId", "99999999999");  // overflows Integer
    EXPECT_FALSE(PullMessageRequestHeader::from_ext(cmd).is_ok());
    cmd.set_ext("queueId", "+7");
    ASSERT_TRUE(PullMessageRequestHeader::from_ext(cmd).is_ok());
    EXPECT_EQ(PullMessageRequestHeader::from_ext(cmd)->queue_id, 7);
    cmd.set_ext("queueId", "");
    EXPECT_FALSE(PullMessageRequestHeader::from_ext(cmd).is_ok());
    cmd.set_ext("queueId", "+-1");
    EXPECT_FALSE(PullMessageRequestHeader::from_ext(cmd).is_ok());
    cmd.set_ext("queueId", "-1");
    EXPECT_EQ(PullMessageRequestHeader::from_ext(cmd)->queue_id, -1);
}

TEST(HeadersTest, JavaBooleanParsing) {
    EXPECT_TRUE(parse_java_bool("true"));
    EXPECT_TRUE(parse_java_bool("TRUE"));
    EXPECT_TRUE(parse_java_bool("True"));
    EXPECT_FALSE(parse_java_bool("yes"));
    EXPECT_FALSE(parse_java_bool("1"));
    EXPECT_FALSE(parse_java_bool(""));
}

}  // namespace
}  // namespace comet::protocol
