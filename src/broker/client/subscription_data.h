#pragma once
// SubscriptionData: one consumer's subscription to a topic (Java SubscriptionData +
// FilterAPI.buildSubscriptionData), and the tag-hash filter the pull path applies to ConsumeQueue
// units (ExpressionMessageFilter for TAG). Value types and pure functions.

#include <rapidjson/document.h>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "base/status.h"

namespace comet::broker {

inline constexpr std::string_view kSubAll = "*";

// Java String.hashCode() over the UTF-16 code units of the UTF-8 string `s` (int32 wrap-around).
// This is the ConsumeQueue tagsCode of a message tag.
int32_t java_string_hash(std::string_view s);

struct SubscriptionData {
    std::string topic;
    std::string sub_string = std::string(kSubAll);
    std::set<std::string> tags_set;
    std::set<int32_t> code_set;
    int64_t sub_version = 0;
    std::string expression_type = "TAG";
    bool class_filter_mode = false;

    bool operator==(const SubscriptionData&) const = default;
    bool matches_all() const { return sub_string.empty() || sub_string == kSubAll; }

    rapidjson::Value to_json(rapidjson::Document::AllocatorType& a) const;
    static SubscriptionData from_json(const rapidjson::Value& v);
};

// FilterAPI.buildSubscriptionData for TAG expressions: "*" / empty = all, else tags split by
// "||" and trimmed. Errors: kInvalidArgument for an unsupported expression type (SQL92) or an
// expression with no tags.
Result<SubscriptionData> build_subscription(std::string_view topic, std::string_view expression,
                                            std::string_view expression_type);

// ExpressionType.isTagType: null, empty or "TAG".
inline bool is_tag_type(std::string_view expression_type) {
    return expression_type.empty() || expression_type == "TAG";
}
// The remark RocketMQ answers with SYSTEM_ERROR when enablePropertyFilter is off: a non-TAG
// subscription (SQL92) is then refused, never served unfiltered.
std::string property_filter_unsupported_remark(std::string_view expression_type);

// Tag-hash match of a ConsumeQueue unit (superset of the exact tag match; clients re-check).
// A non-TAG (SQL92) subscription passes every unit: its filter reads the record.
bool tag_code_matches(const SubscriptionData& sub, int64_t tags_code);
// Exact match of a message's TAGS property value.
bool tag_matches(const SubscriptionData& sub, std::string_view tag);

}  // namespace comet::broker
