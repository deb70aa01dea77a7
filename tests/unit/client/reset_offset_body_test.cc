// ResetOffsetBody as RESET_CONSUMER_CLIENT_OFFSET carries it: fastjson's map form with
// MessageQueue object keys, and the list form the broker sends for a C++ admin request.
#include <gtest/gtest.h>

#include "client/push_consumer.h"

namespace comet::client {
namespace {

MessageQueue mq(const std::string& topic, const std::string& broker, int32_t q) {
    MessageQueue m;
    m.topic = topic;
    m.broker_name = broker;
    m.queue_id = q;
    return m;
}

TEST(ResetOffsetBody, ReadsTheJavaMapForm) {
    auto t =
        decode_reset_offset_body(R"({"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:5,)"
                                 R"({"brokerName":"b","queueId":1,"topic":"T"}:0}})");
    ASSERT_TRUE(t.is_ok()) << t.status().to_string();
    std::map<MessageQueue, int64_t> want{{mq("T", "b", 0), 5}, {mq("T", "b", 1), 0}};
    EXPECT_EQ(*t, want);
}

TEST(ResetOffsetBody, ReadsTheCppListForm) {
    auto t = decode_reset_offset_body(
        R"({"offsetTable":[{"brokerName":"b","offset":7,"queueId":2,"topic":"T"}]})");
    ASSERT_TRUE(t.is_ok()) << t.status().to_string();
    std::map<MessageQueue, int64_t> want{{mq("T", "b", 2), 7}};
    EXPECT_EQ(*t, want);
}

TEST(ResetOffsetBody, EmptyAndBadBodies) {
    auto empty = decode_reset_offset_body(R"({})");
    ASSERT_TRUE(empty.is_ok());
    EXPECT_TRUE(empty->empty());
    EXPECT_FALSE(decode_reset_offset_body("not json").is_ok());
    EXPECT_FALSE(decode_reset_offset_body(R"({"offsetTable":5})").is_ok());
    EXPECT_FALSE(decode_reset_offset_body(R"({"offsetTable":{"x":1}})").is_ok());
}

}  // namespace
}  // namespace comet::client
