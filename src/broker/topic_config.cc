#include "broker/topic_config.h"

#include "broker/json_file.h"

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

std::string_view topic_filter_type_name(TopicFilterType t) {
    return t == TopicFilterType::kMultiTag ? "MULTI_TAG" : "SINGLE_TAG";
}

rapidjson::Value TopicConfig::to_json(rapidjson::Document::AllocatorType& a) const {
    rapidjson::Value v(rapidjson::kObjectType);
    rapidjson::Value attrs(rapidjson::kObjectType);
    for (const auto& [k, val] : attributes) {
        attrs.AddMember(rapidjson::Value(k.c_str(), a), rapidjson::Value(val.c_str(), a), a);
    }
    v.AddMember("attributes", attrs, a);
    v.AddMember("order", order, a);
    v.AddMember("perm", perm, a);
    v.AddMember("readQueueNums", read_queue_nums, a);
    const std::string_view ft = topic_filter_type_name(topic_filter_type);
    v.AddMember("topicFilterType",
                rapidjson::Value(ft.data(), static_cast<rapidjson::SizeType>(ft.size()), a), a);
    v.AddMember("topicName", rapidjson::Value(topic_name.c_str(), a), a);
    v.AddMember("topicSysFlag", topic_sys_flag, a);
    v.AddMember("writeQueueNums", write_queue_nums, a);
    return v;
}

Result<TopicConfig> TopicConfig::from_json(const rapidjson::Value& v) {
    if (!v.IsObject()) {
        return Status::error(Errc::kCorruption, "topic config is not a JSON object");
    }
    TopicConfig t;
    t.topic_name = json_string(v, "topicName");
    if (t.topic_name.empty()) {
        return Status::error(Errc::kCorruption, "topic config without topicName");
    }
    t.read_queue_nums = static_cast<int32_t>(json_int(v, "readQueueNums", 16));
    t.write_queue_nums = static_cast<int32_t>(json_int(v, "writeQueueNums", 16));
    t.perm = static_cast<int32_t>(json_int(v, "perm", kPermRead | kPermWrite));
    t.topic_filter_type = json_string(v, "topicFilterType") == "MULTI_TAG"
                              ? TopicFilterType::kMultiTag
                              : TopicFilterType::kSingleTag;
    t.topic_sys_flag = static_cast<int32_t>(json_int(v, "topicSysFlag", 0));
    t.order = json_bool(v, "order", false);
    auto it = v.FindMember("attributes");
    if (it != v.MemberEnd() && it->value.IsObject()) {
        for (const auto& m : it->value.GetObject()) {
            if (m.value.IsString()) {
                t.attributes[m.name.GetString()] = m.value.GetString();
            }
        }
    }
    return t;
}

}  // namespace comet::broker
