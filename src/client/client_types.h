#pragma once
// Value types of the C++ client API (Java Message, SendResult, PullResult, MessageQueue).
// Plain values, no threads.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/admin_bodies.h"
#include "protocol/message_ext.h"

namespace comet::client {

using protocol::MessageExt;
using protocol::MessageQueue;

// A message to send (Java org.apache.rocketmq.common.message.Message).
struct Message {
    std::string topic;
    std::string body;
    int32_t flag = 0;
    protocol::MessageProperties properties;

    Message() = default;
    Message(std::string t, std::string b, std::string tags = {}, std::string keys = {});

    void set_tags(std::string_view tags) { properties.set(protocol::property::kTags, tags); }
    void set_keys(std::string_view keys) { properties.set(protocol::property::kKeys, keys); }
    // 1..18: delivered after the broker's messageDelayLevel[level-1].
    void set_delay_level(int level);
    std::string tags() const;
    std::string keys() const;
    // UNIQ_KEY, or "" before the producer assigned one.
    std::string uniq_id() const;
};

// Java SendStatus.
enum class SendStatus { kSendOk, kFlushDiskTimeout, kFlushSlaveTimeout, kSlaveNotAvailable };
std::string_view send_status_name(SendStatus s);
// The send status a response code stands for (SEND_OK and the codes that carry a stored
// message's result, as Java's MQClientAPIImpl#processSendResponse), or nullopt for an error.
std::optional<SendStatus> send_status_of_code(int32_t code);

struct SendResult {
    SendStatus status = SendStatus::kSendOk;
    std::string msg_id;         // UNIQ_KEY (comma-joined for a batch)
    std::string offset_msg_id;  // broker's offset id(s)
    MessageQueue message_queue;
    int64_t queue_offset = 0;
};

// Java PullStatus.
enum class PullStatus { kFound, kNoNewMsg, kNoMatchedMsg, kOffsetIllegal };
std::string_view pull_status_name(PullStatus s);

struct PullResult {
    PullStatus status = PullStatus::kNoNewMsg;
    int64_t next_begin_offset = 0;
    int64_t min_offset = 0;
    int64_t max_offset = 0;
    std::vector<MessageExt> messages;
    int64_t suggest_which_broker_id = 0;  // where the broker wants the next pull (0 = master)
    // kFound from a pull whose decoding was deferred (pull_async with decode = false): the
    // response body, not decoded nor filtered; `messages` is empty. decode_pulled() turns it
    // into messages.
    std::string undecoded_body;
};

// Java MessageSelector: how a consumer filters a topic, by tags ("*", "tagA || tagB") or by a
// SQL92 expression over message properties (e.g. "a > 5 AND TAGS IN ('x')"; the broker must
// run with enablePropertyFilter=true, else it refuses the subscription).
struct MessageSelector {
    std::string type = "TAG";  // ExpressionType: TAG or SQL92
    std::string expression = "*";

    static MessageSelector by_tag(std::string tags) { return {"TAG", std::move(tags)}; }
    static MessageSelector by_sql(std::string sql) { return {"SQL92", std::move(sql)}; }
    bool is_tag() const { return type.empty() || type == "TAG"; }
};

// Java ConsumeFromWhere (the three non-deprecated values).
enum class ConsumeFromWhere { kLastOffset, kFirstOffset, kTimestamp };
std::string_view consume_from_where_name(ConsumeFromWhere w);

// Name of the retry topic of a consumer group (MixAll.getRetryTopic).
std::string retry_topic(const std::string& group);
inline constexpr const char* kRetryGroupTopicPrefix = "%RETRY%";
inline constexpr const char* kAutoCreateTopicKey = "TBW102";

// Java String#hashCode of a UTF-8 byte string interpreted as Latin-1/ASCII (tag code sets).
int32_t java_string_hash(std::string_view s);

}  // namespace comet::client
