#pragma once
// The rules around topic names: TopicValidator, system topic names, retry/DLQ naming (MixAll).
// Pure functions. TopicConfig and the PermName bits are protocol's (protocol/route_bodies.h).

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "protocol/route_bodies.h"

namespace comet::broker {

using protocol::kPermInherit;
using protocol::kPermPriority;
using protocol::kPermRead;
using protocol::kPermWrite;
using protocol::perm_inherit;
using protocol::perm_readable;
using protocol::perm_writeable;
using protocol::TopicConfig;
using protocol::TopicFilterType;
using protocol::topic_filter_type_name;

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

}  // namespace comet::broker
