#include "broker/metadata/topic_config.h"


namespace comet::broker {

std::string retry_topic(std::string_view group) {
    return std::string(kRetryGroupTopicPrefix) + std::string(group);
}
std::string dlq_topic(std::string_view group) {
    return std::string(kDlqGroupTopicPrefix) + std::string(group);
}
bool is_retry_topic(std::string_view topic) { return topic.starts_with(kRetryGroupTopicPrefix); }
bool is_dlq_topic(std::string_view topic) { return topic.starts_with(kDlqGroupTopicPrefix); }

Status validate_topic(std::string_view topic) {
    if (topic.empty()) {
        return Status::error(Errc::kInvalidArgument, "The specified topic is blank.");
    }
    for (const char c : topic) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                        c == '%' || c == '|' || c == '_' || c == '-';
        if (!ok) {
            return Status::error(Errc::kInvalidArgument,
                                 "The specified topic[{}] contains illegal characters, allowing only "
                                 "^[%|a-zA-Z0-9_-]+$",
                                 topic);
        }
    }
    const size_t limit = (is_retry_topic(topic) || is_dlq_topic(topic)) ? kRetryOrDlqTopicMaxLength
                                                                        : kTopicMaxLength;
    if (topic.size() > limit) {
        return Status::error(Errc::kInvalidArgument,
                             "The specified topic is longer than topic max length {}.", limit);
    }
    return Status::ok();
}

bool is_not_allowed_send_topic(std::string_view topic) {
    return topic == kScheduleTopic || topic == kTransHalfTopic || topic == kTransOpHalfTopic ||
           topic == kTransCheckMaxTimeTopic;
}

}  // namespace comet::broker
