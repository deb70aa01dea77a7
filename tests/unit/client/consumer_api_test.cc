#include "client/consumer_api.h"

#include <gtest/gtest.h>

#include <set>

#include "client/producer.h"
#include "protocol/message_decoder.h"
#include "protocol/message_id.h"
#include "protocol/response_code.h"

namespace comet::client {
namespace {

namespace RC = protocol::ResponseCode;

TEST(ClientTypes, JavaStringHash) {
    EXPECT_EQ(java_string_hash(""), 0);
    EXPECT_EQ(java_string_hash("TagA"), 2598919);
    EXPECT_EQ(java_string_hash("hello world"), 1794106052);
}

TEST(Subscription, ParsesTagExpressions) {
    auto all = build_subscription("T", "*", 7);
    EXPECT_EQ(all.sub_string, "*");
    EXPECT_TRUE(all.tags_set.empty());
    EXPECT_EQ(all.sub_version, 7);
    auto two = build_subscription("T", "TagA || TagB ||  ", 1);
    EXPECT_EQ(two.tags_set, (std::set<std::string>{"TagA", "TagB"}));
    EXPECT_EQ(two.code_set.count(java_string_hash("TagA")), 1u);
    EXPECT_TRUE(tags_match(two, "TagB"));
    EXPECT_FALSE(tags_match(two, "TagC"));
    EXPECT_FALSE(tags_match(two, ""));
    EXPECT_TRUE(tags_match(all, ""));
}

protocol::MessageExt stored(const std::string& topic, int64_t offset, const std::string& tags) {
    protocol::MessageExt m;
    m.topic = topic;
    m.body = "body" + std::to_string(offset);
    m.queue_offset = offset;
    m.commit_log_offset = 1000 + offset;
    m.born_host = protocol::HostAddress::ipv4(127, 0, 0, 1, 5);
    m.store_host = protocol::HostAddress::ipv4(127, 0, 0, 1, 10911);
    if (!tags.empty()) {
        m.set_property(protocol::property::kTags, tags);
    }
    return m;
}

protocol::RemotingCommand pull_response(int32_t code, const std::vector<protocol::MessageExt>& ms) {
    auto req = protocol::RemotingCommand::request(11);
    auto resp = protocol::RemotingCommand::response_to(req, code);
    protocol::PullMessageResponseHeader h;
    h.next_begin_offset = 42;
    h.min_offset = 0;
    h.max_offset = 50;
    h.to_ext(resp);
    for (const auto& m : ms) {
        EXPECT_TRUE(protocol::encode_message(m, &resp.body).is_ok());
    }
    return resp;
}

TEST(PullResponse, DecodesFiltersAndRestoresRetryTopics) {
    auto retry = stored("%RETRY%g", 3, "");
    retry.set_property(protocol::property::kRetryTopic, "T");
    auto resp = pull_response(RC::kSuccess, {stored("T", 1, "TagA"), stored("T", 2, "TagB"), retry});
    auto r = process_pull_response(resp, build_subscription("T", "TagA", 0));
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->status, PullStatus::kFound);
    EXPECT_EQ(r->next_begin_offset, 42);
    EXPECT_EQ(r->max_offset, 50);
    ASSERT_EQ(r->messages.size(), 1u);
    EXPECT_EQ(r->messages[0].queue_offset, 1);

    auto all = process_pull_response(resp, build_subscription("T", "*", 0));
    ASSERT_TRUE(all.is_ok());
    ASSERT_EQ(all->messages.size(), 3u);
    EXPECT_EQ(all->messages[2].topic, "T");  // back to the original topic

    auto none = process_pull_response(resp, build_subscription("T", "TagZ", 0));
    ASSERT_TRUE(none.is_ok());
    EXPECT_EQ(none->status, PullStatus::kNoMatchedMsg);
}

// The push consumer decodes pull bodies on its consume thread (decode_pulled): same messages,
// same filtering and retry-topic restoring as process_pull_response on the whole response.
TEST(PullResponse, DeferredDecodingMatchesTheWholeResponse) {
    auto retry = stored("%RETRY%g", 3, "");
    retry.set_property(protocol::property::kRetryTopic, "T");
    auto resp = pull_response(RC::kSuccess, {stored("T", 1, "TagA"), stored("T", 2, "TagB"), retry});
    for (const std::string expr : {"TagA", "*", "TagZ"}) {
        const auto sub = build_subscription("T", expr, 0);
        auto whole = process_pull_response(resp, sub);
        auto deferred = decode_pulled(resp.body, sub);
        ASSERT_TRUE(whole.is_ok() && deferred.is_ok()) << expr;
        ASSERT_EQ(deferred->size(), whole->messages.size()) << expr;
        for (size_t i = 0; i < deferred->size(); ++i) {
            EXPECT_EQ((*deferred)[i].queue_offset, whole->messages[i].queue_offset);
            EXPECT_EQ((*deferred)[i].topic, whole->messages[i].topic);
            EXPECT_EQ((*deferred)[i].body, whole->messages[i].body);
            EXPECT_EQ((*deferred)[i].msg_id, whole->messages[i].msg_id);
        }
    }
    EXPECT_EQ(decode_pulled(resp.body, build_subscription("T", "*", 0))->back().topic, "T");
    EXPECT_FALSE(decode_pulled("garbage that is not a message", build_subscription("T", "*", 0))
                     .is_ok());
}

TEST(PullResponse, StatusCodesAndErrors) {
    const auto sub = build_subscription("T", "*", 0);
    EXPECT_EQ(process_pull_response(pull_response(RC::kPullNotFound, {}), sub)->status,
              PullStatus::kNoNewMsg);
    EXPECT_EQ(process_pull_response(pull_response(RC::kPullRetryImmediately, {}), sub)->status,
              PullStatus::kNoMatchedMsg);
    EXPECT_EQ(process_pull_response(pull_response(RC::kPullOffsetMoved, {}), sub)->status,
              PullStatus::kOffsetIllegal);
    auto err = process_pull_response(pull_response(RC::kSubscriptionNotExist, {}), sub);
    ASSERT_FALSE(err.is_ok());
    EXPECT_NE(err.status().message().find("SUBSCRIPTION_NOT_EXIST"), std::string::npos);
    auto bad = pull_response(RC::kSuccess, {});
    bad.body = "garbage that is not a message";
    EXPECT_FALSE(process_pull_response(bad, sub).is_ok());
}

TEST(MessageIds, UniqKeysAreRocketMqShapedAndDistinct) {
    protocol::MessageClientIdSetter ids(protocol::HostAddress::ipv4(10, 1, 2, 3, 0), 1234, 99);
    std::set<std::string> seen;
    for (int i = 0; i < 1000; ++i) {
        std::string id = ids.create_uniq_id(1'700'000'000'000 + i);
        EXPECT_EQ(id.size(), 32u);
        EXPECT_EQ(id.substr(0, 8), "0A010203");  // the IP comes first
        EXPECT_EQ(id.find_first_not_of("0123456789ABCDEF"), std::string::npos);
        seen.insert(id);
    }
    EXPECT_EQ(seen.size(), 1000u);
}

TEST(Producer, RejectsBadMessagesBeforeSending) {
    ProducerConfig cfg;
    cfg.client.namesrv_addr = "127.0.0.1:1";
    DefaultMqProducer p(cfg);
    auto empty_topic = p.send(Message("", "x"));
    EXPECT_EQ(empty_topic.status().code(), Errc::kInvalidArgument);
    auto empty_body = p.send(Message("T", ""));
    EXPECT_EQ(empty_body.status().code(), Errc::kInvalidArgument);
    std::vector<Message> mixed = {Message("A", "x"), Message("B", "y")};
    EXPECT_EQ(p.send_batch(std::move(mixed)).status().code(), Errc::kInvalidArgument);
    std::vector<Message> delayed = {Message("A", "x")};
    delayed[0].set_delay_level(2);
    EXPECT_EQ(p.send_batch(std::move(delayed)).status().code(), Errc::kInvalidArgument);
}

TEST(ClientConfig, SplitsNameServerLists) {
    EXPECT_EQ(split_namesrv_addr("a:1;b:2, c:3;;"),
              (std::vector<std::string>{"a:1", "b:2", "c:3"}));
    EXPECT_TRUE(split_namesrv_addr("").empty());
}

}  // namespace
}  // namespace comet::client
