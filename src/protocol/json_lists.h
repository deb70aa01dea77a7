#pragma once
// Internal helpers for the body codecs: read arrays/maps of JSON body types.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "protocol/json_body.h"

namespace comet::protocol {

template <typename T>
Status read_object_list(const JsonValue& obj, const char* key, std::vector<T>* out) {
    const JsonValue* v = find_member(obj, key);
    if (v == nullptr) {
        return Status::ok();
    }
    if (!v->IsArray()) {
        return Status::error(Errc::kInvalidArgument, "JSON body: {} is not an array", key);
    }
    out->clear();
    for (const auto& e : v->GetArray()) {
        COMET_ASSIGN_OR_RETURN(T item, T::from_json(e));
        out->push_back(std::move(item));
    }
    return Status::ok();
}

template <typename T>
Status read_object_map(const JsonValue& obj, const char* key, std::map<std::string, T>* out) {
    const JsonValue* v = find_member(obj, key);
    if (v == nullptr) {
        return Status::ok();
    }
    COMET_RETURN_IF_ERROR(expect_object(*v, key));
    out->clear();
    for (const auto& m : v->GetObject()) {
        if (m.value.IsNull()) {
            continue;
        }
        COMET_ASSIGN_OR_RETURN(T item, T::from_json(m.value));
        (*out)[std::string(m.name.GetString(), m.name.GetStringLength())] = std::move(item);
    }
    return Status::ok();
}

template <typename T>
void write_object_list(JsonWriter& w, const std::vector<T>& items) {
    w.begin_array();
    for (const auto& item : items) {
        item.write_json(w);
    }
    w.end_array();
}

// {"k":"v",...} in key order.
inline void write_string_map(JsonWriter& w, const std::map<std::string, std::string>& m) {
    w.begin_object();
    for (const auto& [k, v] : m) {
        w.member(k, v);
    }
    w.end_object();
}

// The 5.x "attributes" member of TopicConfig / SubscriptionGroupConfig: written only when there
// are some (4.9.8 has no such member).
inline void write_attributes(JsonWriter& w, const std::map<std::string, std::string>& attributes) {
    if (!attributes.empty()) {
        w.key("attributes");
        write_string_map(w, attributes);
    }
}

template <typename C>
void write_value_list(JsonWriter& w, const C& items) {
    w.begin_array();
    for (const auto& item : items) {
        w.value(item);
    }
    w.end_array();
}

}  // namespace comet::protocol
