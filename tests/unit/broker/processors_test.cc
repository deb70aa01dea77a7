// Processor tests over an in-memory store: every RocketMQ status path of send / pull / send-back,
// long polling, heartbeats, locks and admin, plus the captured RocketMQ 4.9.8 frames.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "base/clock.h"
#include "broker/processor/broker_processors.h"
#include "broker/schedule/schedule_message_service.h"
#include "broker/transaction/transactional_message_service.h"
#include "broker_context_fixture.h"
#include "protocol/message_decoder.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::broker {
namespace {

using namespace std::chrono_literals;
using protocol::RemotingCommand;
namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;

RemotingCommand load_frame(const std::string& name) {
    std::ifstream in(
        std::string(COMET_SOURCE_DIR) + "/tests/unit/broker/testdata/frames/" + name + ".bin",
        std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string bytes = ss.str();
    EXPECT_GT(bytes.size(), 4u) << name;
    auto cmd = protocol::decode_frame_payload(std::string_view(bytes).substr(4));
    EXPECT_TRUE(cmd.is_ok()) << name << ": " << cmd.status().to_string();
    return cmd.is_ok() ? std::move(cmd).value() : RemotingCommand{};
}

class Processors : public testing::BrokerContextTest {
protected:
    Processors() {
        ctx_.on_topics_changed = [this] { ++topic_changes_; };
        store_.set_arrival_listener(
            [this](const std::string& t, int32_t q, int64_t max, int64_t tags) {
                holds_.notify_message_arriving(t, q, max, tags);
            });
    }

    Reply capture() {
        return [this](RemotingCommand cmd, std::vector<net::SharedBuffer> extra) {
            for (const auto& b : extra) {
                cmd.body.append(b.data, b.size);
            }
            responses_.push_back(std::move(cmd));
        };
    }

    RemotingCommand run(RemotingCommand req) {
        const size_t before = responses_.size();
        switch (req.code) {
            case Req::kSendMessage:
            case Req::kSendMessageV2:
            case Req::kSendBatchMessage:
            case Req::kConsumerSendMsgBack:
                send_.process(rc_, std::move(req), capture());
                break;
            case Req::kPullMessage:
                pull_.process(rc_, std::move(req), capture());
                break;
            case Req::kHeartBeat:
            case Req::kUnregisterClient:
            case Req::kCheckClientConfig:
                client_.process(rc_, std::move(req), capture());
                break;
            case Req::kQueryConsumerOffset:
            case Req::kUpdateConsumerOffset:
            case Req::kGetConsumerListByGroup:
                consumer_.process(rc_, std::move(req), capture());
                break;
            default:
                admin_.process(rc_, std::move(req), capture());
        }
        if (responses_.size() == before) {
            RemotingCommand none;
            none.code = -1;  // held (long polling) or one-way
            return none;
        }
        return responses_.back();
    }

    RemotingCommand send(const std::string& topic, const std::string& body, int queue = -1,
                         const std::string& props = "") {
        RemotingCommand r = RemotingCommand::request(Req::kSendMessageV2);
        r.ext_fields = {
            {"a", "PG"}, {"b", topic}, {"c", "TBW102"}, {"d", "4"},  {"e", std::to_string(queue)},
            {"f", "0"},  {"g", "1"},   {"h", "0"},      {"i", props}};
        r.body = body;
        return run(std::move(r));
    }

    RemotingCommand pull(const std::string& topic, int queue, int64_t offset, int sys_flag = 4,
                         const std::string& sub = "*", int64_t suspend = 15000) {
        RemotingCommand r = RemotingCommand::request(Req::kPullMessage);
        r.ext_fields = {{"consumerGroup", "CG"},
                        {"topic", topic},
                        {"queueId", std::to_string(queue)},
                        {"queueOffset", std::to_string(offset)},
                        {"maxMsgNums", "32"},
                        {"sysFlag", std::to_string(sys_flag)},
                        {"commitOffset", "5"},
                        {"suspendTimeoutMillis", std::to_string(suspend)},
                        {"subscription", sub},
                        {"subVersion", "0"}};
        return run(std::move(r));
    }

    void create(const std::string& topic, int queues) {
        TopicConfig t;
        t.topic_name = topic;
        t.read_queue_nums = queues;
        t.write_queue_nums = queues;
        ASSERT_TRUE(topics_.update(t).is_ok());
    }

    SendMessageProcessor send_{ctx_};
    PullMessageProcessor pull_{ctx_};
    ClientManageProcessor client_{ctx_};
    ConsumerManageProcessor consumer_{ctx_};
    AdminBrokerProcessor admin_{ctx_};
    std::vector<RemotingCommand> responses_;
    int topic_changes_ = 0;
};

TEST_F(Processors, CapturedSendV2MatchesRocketMqResponse) {
    create("VecTopic", 4);
    RemotingCommand req = load_frame("0021-c2s-SEND_MESSAGE_V2");
    RemotingCommand want = load_frame("0022-s2c-SEND_MESSAGE_V2-resp-SUCCESS");
    RemotingCommand got = run(req);
    EXPECT_EQ(got.code, want.code);
    EXPECT_EQ(got.opaque, want.opaque);
    EXPECT_TRUE(got.is_response());
    for (const char* k : {"queueId", "queueOffset", "MSG_REGION", "TRACE_ON", "msgId"}) {
        ASSERT_NE(got.ext(k), nullptr) << k;
        EXPECT_EQ(*got.ext(k), *want.ext(k)) << k;
    }
    // Stored like 4.9.8: CLUSTER added, WAIT removed, user properties kept.
    ASSERT_EQ(store_.puts.size(), 1u);
    const auto& m = store_.puts[0];
    EXPECT_EQ(*m.property("CLUSTER"), "DefaultCluster");
    EXPECT_EQ(m.property("WAIT"), nullptr);
    EXPECT_EQ(*m.property("color"), "red");
    EXPECT_EQ(m.tags(), "TagA");
}

TEST_F(Processors, CapturedBatchGivesCommaJoinedIds) {
    create("VecTopic", 4);
    RemotingCommand got = run(load_frame("0026-c2s-SEND_BATCH_MESSAGE"));
    ASSERT_EQ(got.code, RC::kSuccess) << got.remark.value_or("");
    RemotingCommand want = load_frame("0027-s2c-SEND_BATCH_MESSAGE-resp-SUCCESS");
    EXPECT_EQ(*got.ext("queueId"), *want.ext("queueId"));
    EXPECT_EQ(*got.ext("queueOffset"), "0");
    EXPECT_EQ(std::count(got.ext("msgId")->begin(), got.ext("msgId")->end(), ','), 2);
    EXPECT_EQ(store_.puts.size(), 3u);
}

TEST_F(Processors, SendErrorPaths) {
    create("T", 2);
    // 4.9.8 msgCheck / TopicValidator: SYSTEM_ERROR; every refusal carries MSG_REGION, TRACE_ON.
    auto bad_queue = send("T", "x", 2);
    EXPECT_EQ(bad_queue.code, RC::kSystemError);
    ASSERT_NE(bad_queue.ext("MSG_REGION"), nullptr);
    ASSERT_NE(bad_queue.ext("TRACE_ON"), nullptr);
    EXPECT_EQ(send("a b", "x").code, RC::kSystemError);
    auto forbidden = send("SCHEDULE_TOPIC_XXXX", "x");
    EXPECT_EQ(forbidden.code, RC::kNoPermission);
    EXPECT_NE(forbidden.ext("TRACE_ON"), nullptr);
    EXPECT_EQ(send("T", "").code, RC::kMessageIllegal);
    EXPECT_EQ(send("T", std::string(4 * 1024 * 1024 + 1, 'x')).code, RC::kMessageIllegal);
    // Topic not existing with a default topic that is not inheritable.
    RemotingCommand r = RemotingCommand::request(Req::kSendMessageV2);
    r.ext_fields = {{"a", "PG"}, {"b", "Nope"}, {"c", "SELF_TEST_TOPIC"},
                    {"d", "4"},  {"e", "0"},    {"f", "0"},
                    {"g", "1"},  {"h", "0"}};
    r.body = "x";
    RemotingCommand nope = run(r);
    EXPECT_EQ(nope.code, RC::kTopicNotExist);
    EXPECT_NE(nope.remark->find("topic[Nope] not exist"), std::string::npos);
    // Broker without write permission.
    ASSERT_TRUE(config_.update({{"brokerPermission", "4"}}).is_ok());
    EXPECT_EQ(send("T", "x").code, RC::kNoPermission);
    ASSERT_TRUE(config_.update({{"brokerPermission", "6"}}).is_ok());
    // Store statuses map to RocketMQ codes; stored-but-degraded ones keep the header.
    store_.next_status = store::PutMessageStatus::kFlushDiskTimeout;
    RemotingCommand slow = send("T", "x", 0);
    EXPECT_EQ(slow.code, RC::kFlushDiskTimeout);
    EXPECT_NE(slow.ext("msgId"), nullptr);
    store_.next_status = store::PutMessageStatus::kServiceNotAvailable;
    EXPECT_EQ(send("T", "x", 0).code, RC::kServiceNotAvailable);
    store_.next_status = store::PutMessageStatus::kOsPageCacheBusy;
    EXPECT_EQ(send("T", "x", 0).code, RC::kSystemBusy);
    store_.next_status = store::PutMessageStatus::kInSyncReplicasNotEnough;
    RemotingCommand isr = send("T", "x", 0);
    EXPECT_EQ(isr.code, RC::kSystemError);
    EXPECT_EQ(isr.remark, "in-sync replicas not enough");
    EXPECT_NE(isr.ext("MSG_REGION"), nullptr);
}

TEST_F(Processors, AutoCreateThroughTbw102RegistersTopic) {
    RemotingCommand r = send("Fresh", "x");
    ASSERT_EQ(r.code, RC::kSuccess) << r.remark.value_or("");
    EXPECT_EQ(topics_.select("Fresh")->write_queue_nums, 4);
    EXPECT_EQ(topic_changes_, 1);
}

// Run to completion (decision 019): sends to an existing topic are handled by try_send_inline;
// anything that may block is handed back untouched for the executor.
TEST_F(Processors, SendsRunInlineUnlessTheyNeedTheExecutor) {
    create("T", 2);
    auto request = [](const std::string& topic, int32_t code = Req::kSendMessageV2) {
        RemotingCommand r = RemotingCommand::request(code);
        r.ext_fields = {{"a", "PG"}, {"b", topic}, {"c", "TBW102"}, {"d", "4"},
                        {"e", "0"},  {"f", "0"},   {"g", "1"},      {"h", "0"}};
        r.body = "body";
        return r;
    };
    RemotingCommand ok = request("T");
    EXPECT_TRUE(send_.try_send_inline(rc_, ok, capture()));
    ASSERT_EQ(responses_.size(), 1u);
    EXPECT_EQ(responses_.back().code, RC::kSuccess);

    // A missing topic would be auto-created (topics.json is written): not inline, untouched.
    RemotingCommand fresh = request("Fresh");
    const RemotingCommand original = fresh;
    EXPECT_FALSE(send_.try_send_inline(rc_, fresh, capture()));
    EXPECT_EQ(responses_.size(), 1u);
    EXPECT_EQ(fresh.ext_fields, original.ext_fields);
    EXPECT_EQ(fresh.body, original.body);
    EXPECT_FALSE(topics_.select("Fresh").has_value());
    EXPECT_EQ(run(std::move(fresh)).code, RC::kSuccess);  // the executor path creates it
    EXPECT_EQ(topic_changes_, 1);

    RemotingCommand retry = request("%RETRY%G");
    EXPECT_FALSE(send_.try_send_inline(rc_, retry, capture()));
    RemotingCommand back = request("T", Req::kConsumerSendMsgBack);
    EXPECT_FALSE(send_.try_send_inline(rc_, back, capture()));
    EXPECT_EQ(responses_.size(), 2u);

    // An undecodable header is answered at once.
    RemotingCommand bad = RemotingCommand::request(Req::kSendMessageV2);
    EXPECT_TRUE(send_.try_send_inline(rc_, bad, capture()));
    ASSERT_EQ(responses_.size(), 3u);
    EXPECT_EQ(responses_.back().code, RC::kSystemError);
}

// An inline send answers with a per-thread command that is reused (issue 16): each response
// carries exactly its own fields, whatever the previous one had.
TEST_F(Processors, ReusedSendResponsesCarryOnlyTheirOwnFields) {
    create("T", 2);
    std::vector<RemotingCommand> got;
    auto send_inline = [&](const std::optional<std::string>& uniq_key) {
        RemotingCommand r = RemotingCommand::request(Req::kSendMessageV2);
        r.ext_fields = {{"a", "PG"}, {"b", "T"}, {"c", "TBW102"}, {"d", "4"},
                        {"e", "1"},  {"f", "0"}, {"g", "1"},      {"h", "0"}};
        if (uniq_key) {
            r.ext_fields["i"] = std::string("UNIQ_KEY\x01") + *uniq_key;
        }
        r.opaque = 77;
        r.body = "body";
        SendReply reply = [&got](RemotingCommand& resp) { got.push_back(resp); };  // a copy
        EXPECT_TRUE(send_.try_send_inline(rc_, r, reply));
        EXPECT_FALSE(got.empty());
        return got.empty() ? RemotingCommand{} : got.back();
    };
    auto keys = [](const RemotingCommand& r) {
        std::string k;
        for (const auto& [key, value] : r.ext_fields) {
            k += key + ",";
        }
        return k;
    };
    const std::string id1(32, 'A');
    RemotingCommand a = send_inline(id1);
    ASSERT_EQ(a.code, RC::kSuccess);
    EXPECT_EQ(keys(a), "MSG_REGION,TRACE_ON,msgId,queueId,queueOffset,replicas,transactionId,");
    EXPECT_EQ(*a.ext("transactionId"), id1);
    EXPECT_EQ(*a.ext("queueId"), "1");
    EXPECT_EQ(a.opaque, 77);
    EXPECT_FALSE(a.remark.has_value());

    RemotingCommand b = send_inline(std::nullopt);
    ASSERT_EQ(b.code, RC::kSuccess);
    EXPECT_EQ(keys(b), "MSG_REGION,TRACE_ON,msgId,queueId,queueOffset,replicas,");
    EXPECT_EQ(std::stoll(*b.ext("queueOffset")), std::stoll(*a.ext("queueOffset")) + 1);
    EXPECT_NE(*b.ext("msgId"), *a.ext("msgId"));

    store_.next_status = store::PutMessageStatus::kServiceNotAvailable;
    RemotingCommand c = send_inline(std::string(64, 'L'));  // longer than the inline copy
    EXPECT_EQ(c.code, RC::kServiceNotAvailable);
    EXPECT_EQ(keys(c), "MSG_REGION,TRACE_ON,");
    EXPECT_TRUE(c.remark.has_value());
    store_.next_status = store::PutMessageStatus::kPutOk;

    RemotingCommand d = send_inline(std::string(64, 'L'));
    ASSERT_EQ(d.code, RC::kSuccess);
    EXPECT_EQ(*d.ext("transactionId"), std::string(64, 'L'));
    EXPECT_FALSE(d.remark.has_value());
    EXPECT_EQ(keys(d), keys(a));
}

// The message a send puts is one per thread, refilled for every send (issue 16), and its body
// is read where the connection left it (RemotingCommand::borrowed_body): each stored message
// carries exactly its own fields and body, whatever the previous send on the thread had.
TEST_F(Processors, ReusedSendMessagesCarryOnlyTheirOwnFields) {
    create("T", 2);
    auto send_inline = [&](const std::string& props, int32_t flag, std::string* frame_body) {
        RemotingCommand r = RemotingCommand::request(Req::kSendMessageV2);
        r.ext_fields = {{"a", "PG"},  {"b", "T"}, {"c", "TBW102"}, {"d", "4"},
                        {"e", "1"},   {"f", "0"}, {"g", "1"},      {"h", std::to_string(flag)},
                        {"i", props}, {"j", "0"}};
        r.borrowed_body = *frame_body;  // as the connection hands it over
        const size_t before = store_.puts.size();
        SendReply reply = [](RemotingCommand&) {};
        EXPECT_TRUE(send_.try_send_inline(rc_, r, reply));
        frame_body->assign(frame_body->size(), '#');  // the read buffer moves on
        EXPECT_EQ(store_.puts.size(), before + 1);
        return store_.puts.back();
    };
    std::string body1 = "the first message's body";
    const std::string long_key(40, 'K');
    const protocol::MessageExt first = send_inline(
        std::string("KEYS\x01") + long_key + "\x02" + "DELAY\x01" + "2\x02" + "TAGS\x01" + "A", 7,
        &body1);
    EXPECT_EQ(first.topic, "SCHEDULE_TOPIC_XXXX");
    EXPECT_EQ(first.body, "the first message's body");
    EXPECT_EQ(*first.property("KEYS"), long_key);
    EXPECT_EQ(first.flag, 7);

    std::string body2 = "second";
    const protocol::MessageExt second = send_inline("", 0, &body2);
    EXPECT_EQ(second.topic, "T");
    EXPECT_EQ(second.queue_id, 1);
    EXPECT_EQ(second.body, "second");
    EXPECT_EQ(second.flag, 0);
    ASSERT_EQ(second.properties.size(), 1u);
    EXPECT_EQ(*second.property("CLUSTER"), "DefaultCluster");
    EXPECT_FALSE(second.stored_properties.has_value());

    std::string body3 = "third";
    const protocol::MessageExt third =
        send_inline(std::string("TAGS\x01") + "B\x02" + "WAIT\x01" + "true", 0, &body3);
    EXPECT_EQ(third.body, "third");
    EXPECT_EQ(protocol::message_properties_to_string(third.properties),
              std::string("TAGS\x01") + "B\x02" + "CLUSTER\x01" + "DefaultCluster");
}

TEST_F(Processors, DelayedSendGoesToScheduleTopic) {
    create("T", 2);
    RemotingCommand r = send("T", "x", 1, std::string("DELAY\x01") + "3");
    ASSERT_EQ(r.code, RC::kSuccess);
    EXPECT_EQ(*r.ext("queueId"), "1");  // the real queue, as Java answers
    const auto& m = store_.puts.back();
    EXPECT_EQ(m.topic, "SCHEDULE_TOPIC_XXXX");
    EXPECT_EQ(m.queue_id, 2);
    EXPECT_EQ(*m.property("REAL_TOPIC"), "T");
    EXPECT_EQ(*m.property("REAL_QID"), "1");

    // Delivery when due, at-least-once, progress persisted in the offset table.
    ScheduleMessageService schedule(clock_, store_,
                                    DelayLevels::parse(kDefaultMessageDelayLevel).value(), "");
    store_.now_ms = clock_.wall_millis();
    EXPECT_EQ(schedule.deliver_due(), 0);  // fake store: due 1 s after store time
    clock_.advance(2s);
    EXPECT_EQ(schedule.deliver_due(), 1);
    EXPECT_EQ(schedule.offset(3), 1);
    EXPECT_EQ(store_.puts.back().topic, "T");
    EXPECT_EQ(store_.puts.back().property("DELAY"), nullptr);
    EXPECT_NE(schedule.encode(false).find("\"3\":1"), std::string::npos);
}

// Due messages are put a window at a time; only PUT_OK moves a level on: a delivery the store
// answers FLUSH_SLAVE_TIMEOUT (in DLedger mode: not committed by a majority) is tried again.
TEST_F(Processors, ScheduleOffsetMovesOnlyOverPutOkDeliveries) {
    create("T", 2);
    for (int i = 0; i < 40; ++i) {
        ASSERT_EQ(send("T", "d" + std::to_string(i), 1, std::string("DELAY\x01") + "3").code,
                  RC::kSuccess);
    }
    ScheduleMessageService schedule(clock_, store_,
                                    DelayLevels::parse(kDefaultMessageDelayLevel).value(), "");
    store_.now_ms = clock_.wall_millis();
    clock_.advance(2s);
    const size_t before = store_.puts.size();
    store_.next_status = store::PutMessageStatus::kFlushSlaveTimeout;
    EXPECT_EQ(schedule.deliver_due(), 0);
    EXPECT_EQ(schedule.offset(3), 0);
    EXPECT_GT(store_.puts.size(), before) << "the deliveries were tried";
    store_.next_status = store::PutMessageStatus::kPutOk;
    EXPECT_EQ(schedule.deliver_due(), 40);
    EXPECT_EQ(schedule.offset(3), 40);
    EXPECT_EQ(store_.puts.back().body, "d39");
    EXPECT_EQ(schedule.deliver_due(), 0);
}

TEST_F(Processors, ActingMasterEscapesDueDelayedMessagesOnlyWhileActing) {
    create("T", 2);
    ASSERT_EQ(send("T", "x", 1, std::string("DELAY\x01") + "3").code, RC::kSuccess);
    const size_t local_puts = store_.puts.size();
    ScheduleMessageService schedule(clock_, store_,
                                    DelayLevels::parse(kDefaultMessageDelayLevel).value(), "");
    bool acting = false;
    bool remote_ok = false;
    std::vector<protocol::MessageExt> escaped;
    schedule.set_remote_delivery([&] { return acting; },
                                 [&](const protocol::MessageExt& m) -> Status {
                                     if (!remote_ok) {
                                         return Status::error(Errc::kUnavailable, "no master");
                                     }
                                     escaped.push_back(m);
                                     return Status::ok();
                                 });
    store_.now_ms = clock_.wall_millis();
    clock_.advance(2s);
    EXPECT_EQ(schedule.deliver_due(), 0);  // due, but this slave is not the acting master
    EXPECT_EQ(schedule.offset(3), 0);
    acting = true;
    EXPECT_EQ(schedule.deliver_due(), 0);  // remote put failed: retried later, never skipped
    EXPECT_EQ(schedule.offset(3), 0);
    remote_ok = true;
    EXPECT_EQ(schedule.deliver_due(), 1);
    EXPECT_EQ(schedule.offset(3), 1);
    ASSERT_EQ(escaped.size(), 1u);
    EXPECT_EQ(escaped[0].topic, "T");
    EXPECT_EQ(escaped[0].body, "x");
    EXPECT_EQ(escaped[0].property("DELAY"), nullptr);
    EXPECT_EQ(store_.puts.size(), local_puts);  // nothing re-put locally
}

TEST_F(Processors, PullStatusPathsAndCommitOffset) {
    create("T", 2);
    ASSERT_EQ(send("T", "a", 0, std::string("TAGS\x01") + "A").code, RC::kSuccess);
    ASSERT_EQ(send("T", "b", 0, std::string("TAGS\x01") + "B").code, RC::kSuccess);
    RemotingCommand found = pull("T", 0, 0, 5);
    ASSERT_EQ(found.code, RC::kSuccess);
    EXPECT_EQ(found.remark, "FOUND");
    EXPECT_EQ(protocol::decode_messages(found.body).value().size(), 2u);
    EXPECT_EQ(*found.ext("nextBeginOffset"), "2");
    EXPECT_EQ(*found.ext("suggestWhichBrokerId"), "0");
    EXPECT_EQ(offsets_.query_offset("CG", "T", 0), 5);  // commit offset from the request
    RemotingCommand only_b = pull("T", 0, 0, 4, "B");
    ASSERT_EQ(protocol::decode_messages(only_b.body).value().size(), 1u);
    EXPECT_EQ(pull("T", 0, 0, 4, "C").code, RC::kPullRetryImmediately);
    EXPECT_EQ(pull("T", 0, 2).code, RC::kPullNotFound);
    EXPECT_EQ(pull("T", 0, 5).code, RC::kPullOffsetMoved);
    EXPECT_EQ(pull("T", 1, 3).code, RC::kPullOffsetMoved);  // no queue, offset != 0
    EXPECT_EQ(pull("T", 1, 0).code, RC::kPullNotFound);
    EXPECT_EQ(pull("T", 2, 0).code, RC::kInvalidParameter);
    EXPECT_EQ(pull("Nope", 0, 0).code, RC::kTopicNotExist);
    EXPECT_EQ(pull("T", 0, 0, 0).code, RC::kSubscriptionNotExist);
    EXPECT_EQ(pull("T", 0, 0, 4, "a > 1 ||").code, RC::kPullRetryImmediately);  // tag "a > 1"
    RemotingCommand bad = RemotingCommand::request(Req::kPullMessage);
    bad.ext_fields = {{"topic", "T"}};
    RemotingCommand r = run(bad);
    EXPECT_EQ(r.code, RC::kSystemError);
    EXPECT_NE(r.remark->find("consumerGroup"), std::string::npos);
}

// SQL92 (any non-TAG expression) is refused as RocketMQ does with enablePropertyFilter=false,
// at CHECK_CLIENT_CONFIG and at every pull, never served unfiltered.
TEST_F(Processors, Sql92SubscriptionsAreRefusedNotServedUnfiltered) {
    create("T", 1);
    ASSERT_EQ(send("T", "a", 0, std::string("TAGS\x01") + "A").code, RC::kSuccess);
    const std::string remark = "The broker does not support consumer to filter message by SQL92";

    RemotingCommand check = RemotingCommand::request(Req::kCheckClientConfig);
    check.body = R"({"clientId":"c1","group":"SG","subscriptionData":{"topic":"T",)"
                 R"("subString":"a > 1","expressionType":"SQL92","tagsSet":[],"codeSet":[]}})";
    RemotingCommand r = run(check);
    EXPECT_EQ(r.code, RC::kSystemError);
    EXPECT_EQ(r.remark.value_or(""), remark);
    check.body = R"({"clientId":"c1","group":"SG","subscriptionData":{"topic":"T",)"
                 R"("subString":"A","expressionType":"TAG"}})";
    EXPECT_EQ(run(check).code, RC::kSuccess);
    check.body.clear();
    EXPECT_EQ(run(check).code, RC::kSuccess);

    // The subscription in the pull request itself (sysFlag bit 2).
    RemotingCommand p = RemotingCommand::request(Req::kPullMessage);
    p.ext_fields = {{"consumerGroup", "SG"},    {"topic", "T"},
                    {"queueId", "0"},           {"queueOffset", "0"},
                    {"maxMsgNums", "32"},       {"sysFlag", "4"},
                    {"commitOffset", "0"},      {"suspendTimeoutMillis", "0"},
                    {"subscription", "a > 1"},  {"subVersion", "0"},
                    {"expressionType", "SQL92"}};
    r = run(p);
    EXPECT_EQ(r.code, RC::kSystemError);
    EXPECT_EQ(r.remark.value_or(""), remark);
    EXPECT_TRUE(r.body.empty());

    // The subscription registered by heartbeat (the usual Java client path: sysFlag 0).
    RemotingCommand hb = RemotingCommand::request(Req::kHeartBeat);
    hb.body = R"({"clientID":"c1","consumerDataSet":[{"groupName":"SG","consumeType":)"
              R"("CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":)"
              R"("CONSUME_FROM_LAST_OFFSET","subscriptionDataSet":[{"topic":"T","subString":)"
              R"("a > 1","expressionType":"SQL92","tagsSet":[],"codeSet":[],"subVersion":1}]}],)"
              R"("producerDataSet":[]})";
    ASSERT_EQ(run(hb).code, RC::kSuccess);
    p.ext_fields["sysFlag"] = "0";
    p.ext_fields.erase("subscription");
    p.ext_fields.erase("expressionType");
    r = run(p);
    EXPECT_EQ(r.code, RC::kSystemError);
    EXPECT_EQ(r.remark.value_or(""), remark);
    EXPECT_TRUE(r.body.empty());
}

// enablePropertyFilter=true: SQL92 subscriptions are compiled and applied, from the pull header
// (sysFlag bit 2) and from heartbeats; skipped messages are passed as for a tag mismatch.
TEST_F(Processors, Sql92FiltersWhenPropertyFilterIsEnabled) {
    ASSERT_TRUE(config_.update({{"enablePropertyFilter", "true"}}).is_ok());
    create("T", 1);
    for (int a = 1; a <= 3; ++a) {
        ASSERT_EQ(send("T", "m" + std::to_string(a), 0, "a\x01" + std::to_string(a)).code,
                  RC::kSuccess);
    }
    auto sql_pull = [this](const std::string& sub, int sys_flag, int64_t sub_version) {
        RemotingCommand p = RemotingCommand::request(Req::kPullMessage);
        p.ext_fields = {{"consumerGroup", "SG"},
                        {"topic", "T"},
                        {"queueId", "0"},
                        {"queueOffset", "0"},
                        {"maxMsgNums", "32"},
                        {"sysFlag", std::to_string(sys_flag)},
                        {"commitOffset", "0"},
                        {"suspendTimeoutMillis", "0"},
                        {"subVersion", std::to_string(sub_version)},
                        {"expressionType", "SQL92"}};
        if (!sub.empty()) {
            p.ext_fields["subscription"] = sub;
        }
        return run(std::move(p));
    };
    auto bodies = [](const RemotingCommand& r) {
        std::vector<std::string> out;
        auto msgs = protocol::decode_messages(r.body);
        EXPECT_TRUE(msgs.is_ok());
        for (const auto& m : msgs.value()) {
            out.push_back(m.body);
        }
        return out;
    };

    RemotingCommand r = sql_pull("a >= 2", 4, 0);
    ASSERT_EQ(r.code, RC::kSuccess) << r.remark.value_or("");
    EXPECT_EQ(bodies(r), (std::vector<std::string>{"m2", "m3"}));
    EXPECT_EQ(r.ext_fields["nextBeginOffset"], "3");
    r = sql_pull("a > 5", 4, 0);
    EXPECT_EQ(r.code, RC::kPullRetryImmediately);
    EXPECT_EQ(r.ext_fields["nextBeginOffset"], "3");
    r = sql_pull("a >", 4, 0);
    EXPECT_EQ(r.code, RC::kSubscriptionParseFailed);
    EXPECT_EQ(r.remark.value_or(""),
              "parse the consumer's subscription failed: Invalid MessageSelector: unexpected end "
              "of selector at line 1, column 4");

    RemotingCommand check = RemotingCommand::request(Req::kCheckClientConfig);
    check.body = R"({"clientId":"c1","group":"SG","subscriptionData":{"topic":"T",)"
                 R"("subString":"a BETWEEN 3 AND 1","expressionType":"SQL92"}})";
    r = run(check);
    EXPECT_EQ(r.code, RC::kSubscriptionParseFailed);
    EXPECT_EQ(r.remark.value_or(""),
              "Invalid MessageSelector: illegal values of BETWEEN: left value 3 must be less "
              "than or equal to right value 1 at line 1, column 3");
    check.body = R"({"clientId":"c1","group":"SG","subscriptionData":{"topic":"T",)"
                 R"("subString":"a IS NULL","expressionType":"SQL92"}})";
    EXPECT_EQ(run(check).code, RC::kSuccess);

    // Registered by heartbeat: pulls without a subscription use it.
    auto heartbeat = [this](const std::string& expr, int64_t version) {
        RemotingCommand hb = RemotingCommand::request(Req::kHeartBeat);
        hb.body = R"({"clientID":"c1","consumerDataSet":[{"groupName":"SG","consumeType":)"
                  R"("CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":)"
                  R"("CONSUME_FROM_LAST_OFFSET","subscriptionDataSet":[{"topic":"T",)"
                  R"("subString":")" +
                  expr + R"(","expressionType":"SQL92","tagsSet":[],"codeSet":[],)" +
                  R"("subVersion":)" + std::to_string(version) + "}]}]}";
        return run(std::move(hb)).code;
    };
    ASSERT_EQ(heartbeat("a = 2", 5), RC::kSuccess);
    r = sql_pull("", 0, 5);
    ASSERT_EQ(r.code, RC::kSuccess) << r.remark.value_or("");
    EXPECT_EQ(bodies(r), (std::vector<std::string>{"m2"}));
    // A newer version that does not compile removes the filter.
    ASSERT_EQ(heartbeat("a = ", 6), RC::kSuccess);
    r = sql_pull("", 0, 6);
    EXPECT_EQ(r.code, RC::kFilterDataNotExist);
    EXPECT_EQ(r.remark.value_or(""),
              "The broker's consumer filter data is not exist!Your expression may be wrong!");
    ASSERT_EQ(heartbeat("a <> 2", 7), RC::kSuccess);
    r = sql_pull("", 0, 7);
    ASSERT_EQ(r.code, RC::kSuccess) << r.remark.value_or("");
    EXPECT_EQ(bodies(r), (std::vector<std::string>{"m1", "m3"}));
}

// A parked SQL92 pull wakes on any arrival (no tag code to match) and answers with what the
// filter lets through.
TEST_F(Processors, Sql92HeldPullWakesOnArrival) {
    ASSERT_TRUE(config_.update({{"enablePropertyFilter", "true"}}).is_ok());
    create("T", 1);
    RemotingCommand p = RemotingCommand::request(Req::kPullMessage);
    p.ext_fields = {{"consumerGroup", "SG"},
                    {"topic", "T"},
                    {"queueId", "0"},
                    {"queueOffset", "0"},
                    {"maxMsgNums", "32"},
                    {"sysFlag", "6"},
                    {"commitOffset", "0"},
                    {"suspendTimeoutMillis", "15000"},
                    {"subscription", "a = 'yes'"},
                    {"subVersion", "0"},
                    {"expressionType", "SQL92"}};
    EXPECT_EQ(run(p).code, -1);  // parked
    EXPECT_EQ(holds_.held_count(), 1u);
    ASSERT_EQ(send("T", "hit", 0, std::string("a\x01yes\x02TAGS\x01Other")).code, RC::kSuccess);
    EXPECT_EQ(holds_.held_count(), 0u);
    ASSERT_GE(responses_.size(), 2u);
    const RemotingCommand& woke = responses_[responses_.size() - 2];  // before the send reply
    ASSERT_EQ(woke.code, RC::kSuccess);
    EXPECT_EQ(protocol::decode_messages(woke.body).value().at(0).body, "hit");
}

// filterSupportRetry: messages of the group's retry topic are judged by the group's filter on
// their original topic (RETRY_TOPIC), as Java's ExpressionForRetryMessageFilter does.
TEST_F(Processors, Sql92FiltersRetryTopicsWithFilterSupportRetry) {
    ASSERT_TRUE(
        config_.update({{"enablePropertyFilter", "true"}, {"filterSupportRetry", "true"}}).is_ok());
    create("T", 1);
    create("%RETRY%SG", 1);
    for (int a = 1; a <= 3; ++a) {
        ASSERT_EQ(send("%RETRY%SG", "r" + std::to_string(a), 0,
                       "a\x01" + std::to_string(a) + "\x02RETRY_TOPIC\x01T")
                      .code,
                  RC::kSuccess);
    }
    RemotingCommand hb = RemotingCommand::request(Req::kHeartBeat);
    hb.body = R"({"clientID":"c1","consumerDataSet":[{"groupName":"SG","consumeType":)"
              R"("CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":)"
              R"("CONSUME_FROM_LAST_OFFSET","subscriptionDataSet":[{"topic":"T",)"
              R"("subString":"a >= 2","expressionType":"SQL92","subVersion":1},)"
              R"({"topic":"%RETRY%SG","subString":"*","expressionType":"TAG","subVersion":1}]}]})";
    ASSERT_EQ(run(hb).code, RC::kSuccess);
    RemotingCommand p = RemotingCommand::request(Req::kPullMessage);
    p.ext_fields = {{"consumerGroup", "SG"}, {"topic", "%RETRY%SG"},        {"queueId", "0"},
                    {"queueOffset", "0"},    {"maxMsgNums", "32"},          {"sysFlag", "4"},
                    {"commitOffset", "0"},   {"suspendTimeoutMillis", "0"}, {"subscription", "*"},
                    {"subVersion", "1"}};
    RemotingCommand r = run(p);
    ASSERT_EQ(r.code, RC::kSuccess) << r.remark.value_or("");
    auto msgs = protocol::decode_messages(r.body);
    ASSERT_TRUE(msgs.is_ok());
    ASSERT_EQ(msgs->size(), 2u);
    EXPECT_EQ((*msgs)[0].body, "r2");
    EXPECT_EQ((*msgs)[1].body, "r3");
    // Off (the default): the retry topic's "*" lets every message through.
    ASSERT_TRUE(config_.update({{"filterSupportRetry", "false"}}).is_ok());
    r = run(p);
    ASSERT_EQ(r.code, RC::kSuccess);
    EXPECT_EQ(protocol::decode_messages(r.body)->size(), 3u);
}

// Transactions are not built: a half (prepared) message would be stored but never dispatched, so
// SEND_OK would lose it. Refused with RocketMQ's rejectTransactionMessage answer instead, and
// nothing is stored.
// Without a TransactionalMessageService (and always for a typed sysFlag without TRAN_MSG), a
// half is refused, never stored and acknowledged.
TEST_F(Processors, TransactionalHalfMessagesAreRefusedNotLost) {
    create("T", 1);
    const size_t stored = store_.puts.size();
    RemotingCommand half = send("T", "half", 0, std::string("TRAN_MSG\x01true\x02PGROUP\x01PG"));
    EXPECT_EQ(half.code, RC::kNoPermission);
    EXPECT_NE(half.remark.value_or("").find("sending transaction message is forbidden"),
              std::string::npos)
        << half.remark.value_or("");
    EXPECT_NE(half.remark.value_or("").find("not enabled"), std::string::npos);
    // The prepared type in sysFlag alone (field "f" of SEND_MESSAGE_V2), and rollback.
    for (const char* sys_flag : {"4", "12"}) {
        RemotingCommand r = RemotingCommand::request(Req::kSendMessageV2);
        r.ext_fields = {{"a", "PG"},     {"b", "T"}, {"c", "TBW102"}, {"d", "4"}, {"e", "0"},
                        {"f", sys_flag}, {"g", "1"}, {"h", "0"},      {"i", ""}};
        r.body = "typed";
        EXPECT_EQ(run(std::move(r)).code, RC::kNoPermission) << sys_flag;
    }
    EXPECT_EQ(store_.puts.size(), stored);
    // A committed-type or plain message is stored as usual.
    EXPECT_EQ(send("T", "plain", 0).code, RC::kSuccess);
    EXPECT_EQ(store_.puts.size(), stored + 1);
}

TEST_F(Processors, HalfMessageIsStoredAsHalfAndEndTransactionCommitsIt) {
    TransactionalMessageService::Deps d;
    d.config = &config_;
    d.clock = &clock_;
    d.store = &store_;
    d.topics = &topics_;
    d.offsets = &offsets_;
    TransactionalMessageService tx(std::move(d));
    ctx_.transactions = &tx;
    create("T", 4);
    const std::string props("TRAN_MSG\x01true\x02PGROUP\x01PG\x02UNIQ_KEY\x01U1");
    RemotingCommand half = send("T", "half", 2, props);
    ASSERT_EQ(half.code, RC::kSuccess) << half.remark.value_or("");
    EXPECT_EQ(*half.ext("queueId"), "2");  // the real queue, as 4.9.8 answers
    EXPECT_EQ(*half.ext("queueOffset"), "0");
    EXPECT_EQ(*half.ext("transactionId"), "U1");
    EXPECT_EQ(store_.max_offset_in_queue("T", 2), 0);  // invisible to consumers
    ASSERT_EQ(store_.max_offset_in_queue("RMQ_SYS_TRANS_HALF_TOPIC", 0), 1);
    auto stored = store_.look_message_by_offset(
        store_.consume_queue_unit("RMQ_SYS_TRANS_HALF_TOPIC", 0, 0)->physical_offset);
    ASSERT_TRUE(stored.has_value());
    EXPECT_EQ(*stored->property("REAL_TOPIC"), "T");
    EXPECT_EQ(*stored->property("REAL_QID"), "2");
    EXPECT_EQ(protocol::sysflag::transaction_value(stored->sys_flag), 0);
    EXPECT_TRUE(topics_.select("RMQ_SYS_TRANS_OP_HALF_TOPIC").has_value());

    EndTransactionProcessor end_tx(ctx_);
    RemotingCommand end = RemotingCommand::request(Req::kEndTransaction);
    end.ext_fields = {{"producerGroup", "PG"},
                      {"tranStateTableOffset", "0"},
                      {"commitLogOffset", std::to_string(stored->commit_log_offset)},
                      {"commitOrRollback", "8"},
                      {"fromTransactionCheck", "false"},
                      {"msgId", "U1"}};
    end_tx.process(rc_, end, capture());
    EXPECT_EQ(responses_.back().code, RC::kSuccess) << responses_.back().remark.value_or("");
    ASSERT_EQ(store_.max_offset_in_queue("T", 2), 1);
    EXPECT_EQ(store_.max_offset_in_queue("RMQ_SYS_TRANS_OP_HALF_TOPIC", 0), 1);
    // UNKNOWN is not answered (4.9.8 returns no response) and changes nothing.
    const size_t answered = responses_.size();
    end.ext_fields["commitOrRollback"] = "0";
    end_tx.process(rc_, end, capture());
    EXPECT_EQ(responses_.size(), answered);

    ASSERT_TRUE(config_.update({{"rejectTransactionMessage", "true"}}).is_ok());
    RemotingCommand refused = send("T", "half2", 2, props);
    EXPECT_EQ(refused.code, RC::kNoPermission);
    EXPECT_NE(refused.remark.value_or("").find("sending transaction message is forbidden"),
              std::string::npos);
    EXPECT_EQ(store_.max_offset_in_queue("RMQ_SYS_TRANS_HALF_TOPIC", 0), 1);
    ctx_.transactions = nullptr;
}

TEST_F(Processors, LongPollingHoldsAndWakesOnArrival) {
    create("T", 1);
    RemotingCommand held = pull("T", 0, 0, 6);
    EXPECT_EQ(held.code, -1);  // parked, no answer yet
    EXPECT_EQ(holds_.held_count(), 1u);
    ASSERT_EQ(send("T", "wake", 0).code, RC::kSuccess);  // the fake store notifies on put
    EXPECT_EQ(holds_.held_count(), 0u);
    ASSERT_GE(responses_.size(), 2u);
    const RemotingCommand& woke = responses_[responses_.size() - 2];  // before the send reply
    EXPECT_EQ(woke.code, RC::kSuccess);
    EXPECT_EQ(protocol::decode_messages(woke.body).value().at(0).body, "wake");

    // Timeout path: the captured 4.9.8 exchange (held past 15 s -> NOT_FOUND OFFSET_OVERFLOW_ONE).
    ASSERT_TRUE(consumers_.register_consumer(
        "VecConsumerGroup", ClientChannelInfo{ChannelId(7), "c", {}, 0, {}}, "CONSUME_PASSIVELY",
        "CLUSTERING", "CONSUME_FROM_LAST_OFFSET",
        {build_subscription("VecTopic", "*", "TAG").value()}, false));
    create("VecTopic", 4);
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(send("VecTopic", "m", 0).code, RC::kSuccess);
    }
    // The stored subscription version must be >= the request's.
    auto sub = build_subscription("VecTopic", "*", "TAG").value();
    sub.sub_version = 1796061431819;
    consumers_.register_consumer(
        "VecConsumerGroup", ClientChannelInfo{ChannelId(7), "c", {}, 0, {}}, "CONSUME_PASSIVELY",
        "CLUSTERING", "CONSUME_FROM_LAST_OFFSET", {sub}, false);
    const size_t before = responses_.size();
    pull_.process(rc_, load_frame("0071-c2s-PULL_MESSAGE"), capture());
    EXPECT_EQ(responses_.size(), before);
    clock_.advance(16s);
    holds_.check_all();
    ASSERT_EQ(responses_.size(), before + 1);
    RemotingCommand want = load_frame("0093-s2c-PULL_MESSAGE-resp-PULL_NOT_FOUND");
    const RemotingCommand& got = responses_.back();
    EXPECT_EQ(got.code, want.code);
    EXPECT_EQ(got.remark, want.remark);
    EXPECT_EQ(got.opaque, want.opaque);
    EXPECT_EQ(got.ext_fields, want.ext_fields);
}

TEST_F(Processors, HeartbeatCreatesRetryTopicAndConsumerList) {
    RemotingCommand hb = load_frame("0045-c2s-HEART_BEAT");
    RemotingCommand got = run(hb);
    RemotingCommand want = load_frame("0048-s2c-HEART_BEAT-resp-SUCCESS");
    EXPECT_EQ(got.code, want.code);
    EXPECT_TRUE(got.ext_fields.empty());
    EXPECT_TRUE(topics_.select("%RETRY%VecConsumerGroup").has_value());
    EXPECT_EQ(topic_changes_, 1);
    RemotingCommand list = RemotingCommand::request(Req::kGetConsumerListByGroup);
    list.ext_fields = {{"consumerGroup", "VecConsumerGroup"}};
    RemotingCommand l = run(list);
    ASSERT_EQ(l.code, RC::kSuccess);
    EXPECT_NE(l.body.find("consumerIdList"), std::string::npos);
    list.ext_fields = {{"consumerGroup", "Nobody"}};
    RemotingCommand none = run(list);
    EXPECT_EQ(none.code, RC::kSystemError);
    EXPECT_EQ(none.remark, "no consumer for this group, Nobody");
    RemotingCommand garbage = RemotingCommand::request(Req::kHeartBeat);
    garbage.body = "{not json";
    EXPECT_EQ(run(garbage).code, RC::kSystemError);
    // Odd shapes: a body that is not an object or names no client is refused with a remark;
    // malformed entries inside a valid body are skipped, the rest is registered.
    struct Case {
        const char* body;
        int code;
        const char* remark;  // nullptr: no remark
    };
    const Case heartbeats[] = {
        {R"([1,2])", RC::kSystemError, "decode heartbeat body failed: not an object"},
        {R"({"clientID":"x","consumerDataSet":[1,"a",{"groupName":"G2",)"
         R"("subscriptionDataSet":[1,{"topic":7},{"topic":"T","codeSet":["a"]}]}]})",
         RC::kSuccess, nullptr},
        {R"({"clientID":"x","producerDataSet":[null,{"groupName":5}]})", RC::kSuccess, nullptr},
        {R"({"clientID":""})", RC::kSystemError, "heartbeat without clientID"},
    };
    // Sends `req` with each case's body and checks the code and the exact remark (or none).
    auto expect_cases = [this](RemotingCommand req, const auto& cases) {
        for (const Case& c : cases) {
            req.body = c.body;
            RemotingCommand r = run(req);
            EXPECT_EQ(r.code, c.code) << c.body;
            EXPECT_EQ(r.remark.has_value(), c.remark != nullptr) << c.body;
            if (c.remark != nullptr) {
                EXPECT_EQ(r.remark.value_or(""), c.remark) << c.body;
            }
        }
    };
    expect_cases(garbage, heartbeats);
    // The well-formed consumer entry of the second body was registered.
    list.ext_fields = {{"consumerGroup", "G2"}};
    RemotingCommand g2 = run(list);
    ASSERT_EQ(g2.code, RC::kSuccess) << g2.remark.value_or("");
    EXPECT_NE(g2.body.find("\"x\""), std::string::npos) << g2.body;
    RemotingCommand lock = RemotingCommand::request(Req::kLockBatchMq);
    const Case locks[] = {
        {"", RC::kSystemError,
         "LockBatchRequestBody: JSON parse error at byte 0: The document is empty."},
        {"[]", RC::kSystemError, "lock body is not an object"},
        {R"({"clientId":1})", RC::kSystemError, "lock body needs consumerGroup and clientId"},
        {R"({"clientId":"c","consumerGroup":"G","mqSet":[1,{"queueId":"x"}]})", RC::kSuccess,
         nullptr},
    };
    expect_cases(lock, locks);
}

TEST_F(Processors, SendBackRetriesThenDeadLetters) {
    create("T", 1);
    ASSERT_EQ(send("T", "payload", 0).code, RC::kSuccess);
    const int64_t phys = store_.puts.back().commit_log_offset;
    auto back = [&](int64_t offset, int32_t level) {
        RemotingCommand r = RemotingCommand::request(Req::kConsumerSendMsgBack);
        r.version = 409;
        r.ext_fields = {{"offset", std::to_string(offset)},
                        {"group", "G"},
                        {"delayLevel", std::to_string(level)},
                        {"maxReconsumeTimes", "1"}};
        return run(r);
    };
    ASSERT_EQ(back(phys, 0).code, RC::kSuccess);
    const auto retry = store_.puts.back();
    EXPECT_EQ(retry.topic, "SCHEDULE_TOPIC_XXXX");
    EXPECT_EQ(*retry.property("REAL_TOPIC"), "%RETRY%G");
    EXPECT_EQ(*retry.property("DELAY"), "3");  // level 0 -> 3 + reconsumeTimes
    EXPECT_EQ(retry.reconsume_times, 1);
    EXPECT_EQ(*retry.property("RETRY_TOPIC"), "T");
    ASSERT_EQ(back(retry.commit_log_offset, 0).code, RC::kSuccess);
    const auto dlq = store_.puts.back();
    EXPECT_EQ(dlq.topic, "%DLQ%G");
    EXPECT_EQ(dlq.reconsume_times, 2);
    EXPECT_EQ(topics_.select("%DLQ%G")->perm, 6);
    RemotingCommand missing = back(999999, 0);
    EXPECT_EQ(missing.code, RC::kSystemError);
    EXPECT_EQ(missing.remark, "look message by offset failed, 999999");
    // Stored but not PUT_OK: RocketMQ answers SYSTEM_ERROR naming the status (the consumer then
    // sends the message back itself), never SUCCESS.
    for (auto st :
         {store::PutMessageStatus::kFlushDiskTimeout, store::PutMessageStatus::kFlushSlaveTimeout,
          store::PutMessageStatus::kSlaveNotAvailable}) {
        store_.next_status = st;
        RemotingCommand degraded = back(phys, 0);
        EXPECT_EQ(degraded.code, RC::kSystemError) << store::put_message_status_name(st);
        EXPECT_EQ(degraded.remark.value_or("").rfind(store::put_message_status_name(st), 0), 0u)
            << degraded.remark.value_or("");
    }
    store_.next_status = store::PutMessageStatus::kPutOk;
}

TEST_F(Processors, QueryConsumerOffsetRules) {
    create("T", 1);
    RemotingCommand q = RemotingCommand::request(Req::kQueryConsumerOffset);
    q.ext_fields = {{"consumerGroup", "G"}, {"topic", "T"}, {"queueId", "0"}};
    RemotingCommand zero = run(q);
    EXPECT_EQ(zero.code, RC::kSuccess);
    EXPECT_EQ(*zero.ext("offset"), "0");
    q.ext_fields["setZeroIfNotFound"] = "false";
    EXPECT_EQ(run(q).code, RC::kQueryNotFound);
    RemotingCommand u = RemotingCommand::request(Req::kUpdateConsumerOffset);
    u.ext_fields = {
        {"consumerGroup", "G"}, {"topic", "T"}, {"queueId", "0"}, {"commitOffset", "9"}};
    EXPECT_EQ(run(u).code, RC::kSuccess);
    EXPECT_EQ(*run(q).ext("offset"), "9");
    u.ext_fields["queueId"] = "3";
    EXPECT_EQ(run(u).code, RC::kInvalidParameter);
}

// A new group (no committed offset) on a queue whose first message is still in memory starts at
// 0; once that message is only on disk (a long backlog) RocketMQ answers QUERY_NOT_FOUND and the
// client starts from its CONSUME_FROM policy instead of replaying everything.
TEST_F(Processors, QueryConsumerOffsetOfNewGroupOnEvictedBacklog) {
    create("T", 1);
    ASSERT_EQ(send("T", "first", 0).code, RC::kSuccess);
    RemotingCommand q = RemotingCommand::request(Req::kQueryConsumerOffset);
    q.ext_fields = {{"consumerGroup", "NewGroup"}, {"topic", "T"}, {"queueId", "0"}};
    RemotingCommand in_memory = run(q);
    EXPECT_EQ(in_memory.code, RC::kSuccess);
    EXPECT_EQ(*in_memory.ext("offset"), "0");
    store_.in_memory = false;
    RemotingCommand on_disk = run(q);
    EXPECT_EQ(on_disk.code, RC::kQueryNotFound);
    EXPECT_EQ(on_disk.remark.value_or(""),
              "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first");
}

TEST_F(Processors, LockBatchAndAdmin) {
    RemotingCommand lock = RemotingCommand::request(Req::kLockBatchMq);
    lock.body =
        R"({"clientId":"c1","consumerGroup":"G","mqSet":[{"brokerName":"b","queueId":0,"topic":"T"}],"onlyThisBroker":false})";
    RemotingCommand l1 = run(lock);
    EXPECT_EQ(l1.body, R"({"lockOKMQSet":[{"brokerName":"b","queueId":0,"topic":"T"}]})");
    lock.body =
        R"({"clientId":"c2","consumerGroup":"G","mqSet":[{"brokerName":"b","queueId":0,"topic":"T"}]})";
    EXPECT_EQ(run(lock).body, R"({"lockOKMQSet":[]})");

    RemotingCommand create_req = RemotingCommand::request(Req::kUpdateAndCreateTopic);
    create_req.ext_fields = {{"topic", "Admin"},     {"defaultTopic", "TBW102"},
                             {"readQueueNums", "3"}, {"writeQueueNums", "3"},
                             {"perm", "6"},          {"topicFilterType", "SINGLE_TAG"},
                             {"order", "false"},     {"attributes", "+k=v"}};
    ASSERT_EQ(run(create_req).code, RC::kSuccess);
    EXPECT_EQ(topics_.select("Admin")->attributes.at("k"), "v");
    create_req.ext_fields["topic"] = "bad/name";
    EXPECT_EQ(run(create_req).code, RC::kInvalidParameter);

    ASSERT_EQ(send("Admin", "x", 1).code, RC::kSuccess);
    RemotingCommand stats = RemotingCommand::request(Req::kGetTopicStatsInfo);
    stats.ext_fields = {{"topic", "Admin"}};
    RemotingCommand s = run(stats);
    ASSERT_EQ(s.code, RC::kSuccess);
    EXPECT_NE(
        s.body.find(
            R"({"brokerName":"broker-a","queueId":1,"topic":"Admin"}:{"lastUpdateTimestamp":)"),
        std::string::npos)
        << s.body;
    stats.ext_fields = {{"topic", "Missing"}};
    EXPECT_EQ(run(stats).code, RC::kTopicNotExist);

    RemotingCommand all = RemotingCommand::request(Req::kGetAllTopicConfig);
    EXPECT_NE(run(all).body.find("\"Admin\""), std::string::npos);
    RemotingCommand cfg = RemotingCommand::request(Req::kGetBrokerConfig);
    RemotingCommand c = run(cfg);
    EXPECT_NE(c.body.find("brokerName=broker-a\n"), std::string::npos);
    RemotingCommand upd = RemotingCommand::request(Req::kUpdateBrokerConfig);
    upd.body = "brokerPermission=4\n";
    EXPECT_EQ(run(upd).code, RC::kSuccess);
    EXPECT_EQ(config_.get().broker_permission, 4);
    // 4.9.8's DataVersion of the configuration: the update counted, no stateVersion.
    RemotingCommand after = run(cfg);
    ASSERT_NE(after.ext("version"), nullptr);
    EXPECT_NE(after.ext("version")->find("\"counter\":1,\"timestamp\":"), std::string::npos)
        << *after.ext("version");
    EXPECT_EQ(after.ext("version")->find("stateVersion"), std::string::npos);
    upd.body = "listenPort=abc\n";
    EXPECT_EQ(run(upd).code, RC::kSystemError);
    RemotingCommand rt = RemotingCommand::request(Req::kGetBrokerRuntimeInfo);
    EXPECT_NE(run(rt).body.find("\"msgPutTotalTodayNow\":\"1\""), std::string::npos);
    RemotingCommand del = RemotingCommand::request(Req::kDeleteTopicInBroker);
    del.ext_fields = {{"topic", "Admin"}};
    EXPECT_EQ(run(del).code, RC::kSuccess);
    EXPECT_FALSE(topics_.select("Admin").has_value());
    EXPECT_EQ(run(RemotingCommand::request(9999)).code, RC::kRequestCodeNotSupported);
}

// The admin and consumer-manage processors dispatch through a table of request codes: every
// code they took before the table still reaches a handler (an empty request gets that handler's
// answer, never REQUEST_CODE_NOT_SUPPORTED), and an unknown code keeps its answer and remark.
TEST_F(Processors, AdminAndConsumerManageTablesAnswerTheirCodes) {
    for (int32_t code : {Req::kGetMaxOffset,
                         Req::kGetMinOffset,
                         Req::kSearchOffsetByTimestamp,
                         Req::kGetEarliestMsgStoretime,
                         Req::kLockBatchMq,
                         Req::kUnlockBatchMq,
                         Req::kUpdateAndCreateTopic,
                         Req::kDeleteTopicInBroker,
                         Req::kCleanUnusedTopic,
                         Req::kCleanExpiredConsumequeue,
                         Req::kQueryConsumeQueue,
                         Req::kGetAllTopicConfig,
                         Req::kUpdateAndCreateSubscriptionGroup,
                         Req::kDeleteSubscriptionGroup,
                         Req::kGetAllSubscriptionGroupConfig,
                         Req::kGetAllConsumerOffset,
                         Req::kGetAllDelayOffset,
                         Req::kGetBrokerRuntimeInfo,
                         Req::kGetTopicStatsInfo,
                         Req::kGetConsumeStats,
                         Req::kViewBrokerStatsData,
                         Req::kGetBrokerConfig,
                         Req::kUpdateBrokerConfig,
                         Req::kGetConsumerListByGroup,
                         Req::kQueryConsumerOffset,
                         Req::kUpdateConsumerOffset}) {
        EXPECT_NE(run(RemotingCommand::request(code)).code, RC::kRequestCodeNotSupported)
            << "request code " << code;
    }
    RemotingCommand unknown = run(RemotingCommand::request(9999));
    EXPECT_EQ(unknown.code, RC::kRequestCodeNotSupported);
    EXPECT_EQ(unknown.remark.value_or(""), "request type 9999 not supported");
    consumer_.process(rc_, RemotingCommand::request(9998), capture());
    ASSERT_FALSE(responses_.empty());
    EXPECT_EQ(responses_.back().code, RC::kRequestCodeNotSupported);
    EXPECT_EQ(responses_.back().remark.value_or(""), "request type 9998 not supported");
}

TEST(PutStatusMapping, EveryStatusHasACode) {
    using S = store::PutMessageStatus;
    EXPECT_EQ(map_put_status({S::kPutOk, {}, ""}).code, RC::kSuccess);
    EXPECT_EQ(map_put_status({S::kFlushSlaveTimeout, {}, ""}).code, RC::kFlushSlaveTimeout);
    EXPECT_EQ(map_put_status({S::kSlaveNotAvailable, {}, ""}).code, RC::kSlaveNotAvailable);
    EXPECT_EQ(map_put_status({S::kMessageIllegal, {}, ""}).code, RC::kMessageIllegal);
    EXPECT_EQ(map_put_status({S::kPropertiesSizeExceeded, {}, ""}).code, RC::kMessageIllegal);
    EXPECT_EQ(map_put_status({S::kCreateMappedFileFailed, {}, ""}).code, RC::kSystemError);
    EXPECT_EQ(map_put_status({S::kUnknownError, {}, "boom"}).remark, "UNKNOWN_ERROR: boom");
}

}  // namespace
}  // namespace comet::broker
