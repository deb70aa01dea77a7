#pragma once
// TopicConfig (per-topic queue counts, permission, filter type) and the rules around topic names:
// PermName bits, TopicValidator, system topic names, retry/DLQ naming (MixAll). Value types and
// pure functions.

#include <rapidjson/document.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"

namespace comet::broker {

// PermName bits.
inline constexpr int32_t kPermPriority = 8;
inline constexpr int32_t kPermRead = 4;
inline constexpr int32_t kPermWrite = 2;
inline constexpr int32_t kPermInherit = 1;
inline bool perm_readable(int32_t p) { return (p & kPermRead) != 0; }
inline bool perm_writeable(int32_t p) { return (p & kPermWrite) != 0; }
inline bool perm_inherit(int32_t p) { return (p & kPermInherit) != 0; }

// Well-known topic and group names (TopicValidator, MixAll).
inline constexpr std::string_view kAutoCreateTopicKeyTopic = "TBW102";
inline constexpr std::string_view kScheduleTopic = "SCHEDULE_TOPIC_XXXX";
inline constexpr std::string_view kSelfTestTopic = "SELF_TEST_TOPIC";
inline constexpr std::string_view kBenchmarkTopic = "BenchmarkTest";
inline constexpr std::string_view kOffsetMovedEvent = "OFFSET_MOVED_EVENT";
inline constexpr std::string_view kTransHalfTopic = "RMQ_SYS_TRANS_HALF_TOPIC";
inline constexpr std::string_view kTransOpHalfTopic = "RMQ_SYS_TRANS_OP_HALF_TOPIC";
// TopicValidator.RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC: halves checked transactionCheckMax times.
inline constexpr std::string_view kTransCheckMaxTimeTopic = "TRANS_CHECK_MAX_TIME_TOPIC";
inline constexpr std::string_view kRetryGroupTopicPrefix = "%RETRY%";
inline constexpr std::string_view kDlqGroupTopicPrefix = "%DLQ%";
inline constexpr size_t kTopicMaxLength = 127;
inline constexpr size_t kRetryOrDlqTopicMaxLength = 255;

std::string retry_topic(std::string_view group);
std::string dlq_topic(std::string_view group);
bool is_retry_topic(std::string_view topic);
bool is_dlq_topic(std::string_view topic);

// Checks a topic name: non-empty, chars in [%|a-zA-Z0-9_-], length <= 127 (255 for %RETRY% and
// %DLQ% topics). Errors: kInvalidArgument with the reason (used as the response remark).
Status validate_topic(std::string_view topic);

// True for topics producers may not send to directly (SCHEDULE_TOPIC_XXXX, transaction topics).
bool is_not_allowed_send_topic(std::string_view topic);

enum class TopicFilterType { kSingleTag, kMultiTag };
std::string_view topic_filter_type_name(TopicFilterType t);  // "SINGLE_TAG" / "MULTI_TAG"

struct TopicConfig {
    std::string topic_name;
    int32_t read_queue_nums = 16;
    int32_t write_queue_nums = 16;
    int32_t perm = kPermRead | kPermWrite;
    TopicFilterType topic_filter_type = TopicFilterType::kSingleTag;
    int32_t topic_sys_flag = 0;
    bool order = false;
    std::map<std::string, std::string> attributes;

    bool operator==(const TopicConfig&) const = default;

    // RocketMQ's TopicConfig JSON object (attributes, order, perm, readQueueNums,
    // topicFilterType, topicName, topicSysFlag, writeQueueNums).
    rapidjson::Value to_json(rapidjson::Document::AllocatorType& a) const;
    static Result<TopicConfig> from_json(const rapidjson::Value& v);
};

}  // namespace comet::broker
