#include "broker/client/subscription_data.h"

#include "broker/metadata/json_file.h"

namespace comet::broker {
namespace {

std::string_view trim_spaces_tabs(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

}  // namespace

int32_t java_string_hash(std::string_view s) {
    uint32_t h = 0;
    auto add = [&h](uint32_t unit) { h = h * 31u + unit; };
    size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        uint32_t cp = 0;
        size_t len = 1;
        if (c < 0x80) {
            cp = c;
        } else if ((c >> 5) == 0x6 && i + 1 < s.size()) {
            cp = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3Fu);
            len = 2;
        } else if ((c >> 4) == 0xE && i + 2 < s.size()) {
            cp = ((c & 0x0Fu) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 6) |
                 (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
            len = 3;
        } else if ((c >> 3) == 0x1E && i + 3 < s.size()) {
            cp = ((c & 0x07u) << 18) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 12) |
                 ((static_cast<unsigned char>(s[i + 2]) & 0x3Fu) << 6) |
                 (static_cast<unsigned char>(s[i + 3]) & 0x3Fu);
            len = 4;
        } else {
            cp = 0xFFFD;  // invalid byte: Java's decoder substitutes U+FFFD
        }
        if (cp >= 0x10000) {
            cp -= 0x10000;
            add(0xD800u + (cp >> 10));
            add(0xDC00u + (cp & 0x3FFu));
        } else {
            add(cp);
        }
        i += len;
    }
    return static_cast<int32_t>(h);
}

rapidjson::Value SubscriptionData::to_json(rapidjson::Document::AllocatorType& a) const {
    rapidjson::Value v(rapidjson::kObjectType);
    v.AddMember("classFilterMode", class_filter_mode, a);
    rapidjson::Value codes(rapidjson::kArrayType);
    for (int32_t c : code_set) {
        codes.PushBack(c, a);
    }
    v.AddMember("codeSet", codes, a);
    v.AddMember("expressionType", rapidjson::Value(expression_type.c_str(), a), a);
    v.AddMember("subString", rapidjson::Value(sub_string.c_str(), a), a);
    v.AddMember("subVersion", sub_version, a);
    rapidjson::Value tags(rapidjson::kArrayType);
    for (const auto& t : tags_set) {
        tags.PushBack(rapidjson::Value(t.c_str(), a), a);
    }
    v.AddMember("tagsSet", tags, a);
    v.AddMember("topic", rapidjson::Value(topic.c_str(), a), a);
    return v;
}

SubscriptionData SubscriptionData::from_json(const rapidjson::Value& v) {
    SubscriptionData s;
    if (!v.IsObject()) {
        return s;
    }
    s.topic = json_string(v, "topic");
    s.sub_string = json_string(v, "subString", kSubAll);
    s.sub_version = json_int(v, "subVersion", 0);
    s.expression_type = json_string(v, "expressionType", "TAG");
    s.class_filter_mode = json_bool(v, "classFilterMode", false);
    auto tags = v.FindMember("tagsSet");
    if (tags != v.MemberEnd() && tags->value.IsArray()) {
        for (const auto& t : tags->value.GetArray()) {
            if (t.IsString()) {
                s.tags_set.insert(t.GetString());
            }
        }
    }
    auto codes = v.FindMember("codeSet");
    if (codes != v.MemberEnd() && codes->value.IsArray()) {
        for (const auto& c : codes->value.GetArray()) {
            if (c.IsInt()) {
                s.code_set.insert(c.GetInt());
            }
        }
    }
    // Clients that send tags without codes (or codes computed differently) still filter right.
    if (s.code_set.empty()) {
        for (const auto& t : s.tags_set) {
            s.code_set.insert(java_string_hash(t));
        }
    }
    return s;
}

std::string property_filter_unsupported_remark(std::string_view expression_type) {
    return "The broker does not support consumer to filter message by " +
           std::string(expression_type);
}

Result<SubscriptionData> build_subscription(std::string_view topic, std::string_view expression,
                                            std::string_view expression_type) {
    if (!expression_type.empty() && expression_type != "TAG") {
        return Status::error(Errc::kInvalidArgument,
                             "expression type {} is not supported (only TAG)", expression_type);
    }
    SubscriptionData s;
    s.topic = std::string(topic);
    const std::string_view expr = trim_spaces_tabs(expression);
    if (expr.empty() || expr == kSubAll) {
        s.sub_string = std::string(kSubAll);
        return s;
    }
    s.sub_string = std::string(expr);
    std::string_view rest = expr;
    while (true) {
        const size_t p = rest.find("||");
        const std::string_view tag = trim_spaces_tabs(rest.substr(0, p));
        if (!tag.empty()) {
            s.tags_set.insert(std::string(tag));
            s.code_set.insert(java_string_hash(tag));
        }
        if (p == std::string_view::npos) {
            break;
        }
        rest.remove_prefix(p + 2);
    }
    if (s.tags_set.empty()) {
        return Status::error(Errc::kInvalidArgument, "subscription '{}' has no tags", expression);
    }
    return s;
}

bool tag_code_matches(const SubscriptionData& sub, int64_t tags_code) {
    if (sub.matches_all() || !is_tag_type(sub.expression_type)) {
        return true;
    }
    return sub.code_set.count(static_cast<int32_t>(tags_code)) != 0;
}

bool tag_matches(const SubscriptionData& sub, std::string_view tag) {
    if (sub.matches_all()) {
        return true;
    }
    return sub.tags_set.count(std::string(tag)) != 0;
}

}  // namespace comet::broker
