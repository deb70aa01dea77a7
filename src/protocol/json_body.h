#pragma once
// Building blocks for the JSON body codecs (route_bodies.h, heartbeat_body.h, admin_bodies.h).
//   JsonWriter: compact standard JSON (quoted keys, no whitespace); callers emit keys in
//     alphabetical order like fastjson. raw_key() writes fastjson's object-as-map-key form.
//   parse_json_body(): lenient parse (reference §3: unquoted keys, object keys) into a
//     RapidJSON document; numbers keep full int64 precision.
//   read_*(): typed member access that leaves the output untouched when the member is absent or
//     null, converts between numbers and numeric strings like fastjson, and otherwise returns an
//     error naming the member.
// Pure functions; a JsonWriter is owned by one caller.

#include <rapidjson/document.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace comet::protocol {

class JsonWriter {
public:
    JsonWriter& begin_object();
    JsonWriter& end_object();
    JsonWriter& begin_array();
    JsonWriter& end_array();
    JsonWriter& key(std::string_view k);
    // Object member whose key is itself JSON (fastjson Map<Bean,V>): {{"a":1}:v}.
    JsonWriter& raw_key(std::string_view json);
    JsonWriter& value(std::string_view s);
    JsonWriter& value(const char* s) { return value(std::string_view(s)); }
    JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
    JsonWriter& value(int32_t v);
    JsonWriter& value(int64_t v);
    JsonWriter& value(bool v);
    JsonWriter& value(double v);  // Java Double.toString-like: 0.0, 1.5
    JsonWriter& raw(std::string_view json);
    // Shorthand: key then value.
    template <typename T>
    JsonWriter& member(std::string_view k, const T& v) {
        key(k);
        return value(v);
    }

    std::string take() { return std::move(out_); }
    const std::string& str() const { return out_; }

private:
    void before_value();
    std::string out_;
    std::vector<bool> has_items_;  // per open container: something written already
    bool after_key_ = false;
};

Result<rapidjson::Document> parse_json_body(std::string_view text);

using JsonValue = rapidjson::Value;

Status read_string(const JsonValue& obj, const char* key, std::string* out);
Status read_string(const JsonValue& obj, const char* key, std::optional<std::string>* out);
Status read_int32(const JsonValue& obj, const char* key, int32_t* out);
Status read_int64(const JsonValue& obj, const char* key, int64_t* out);
Status read_bool(const JsonValue& obj, const char* key, bool* out);
Status read_bool(const JsonValue& obj, const char* key, std::optional<bool>* out);
Status read_double(const JsonValue& obj, const char* key, double* out);
Status read_string_list(const JsonValue& obj, const char* key, std::vector<std::string>* out);
Status read_string_map(const JsonValue& obj, const char* key,
                       std::map<std::string, std::string>* out);
// {0:"a",1:"b"} or {"0":"a"}: keys parsed as Long.
Status read_long_string_map(const JsonValue& obj, const char* key,
                            std::map<int64_t, std::string>* out);

// Value conversions used by the map readers; `what` names the value in errors.
Result<int64_t> json_to_int64(const JsonValue& v, std::string_view what);
Result<std::string> json_to_string(const JsonValue& v, std::string_view what);

// The JSON member `key` of `obj` if present and not null; else nullptr. Requires obj.IsObject().
const JsonValue* find_member(const JsonValue& obj, const char* key);

// Checks that `v` is an object; error names `what`.
Status expect_object(const JsonValue& v, std::string_view what);

}  // namespace comet::protocol

// Declares, inside a body struct, the codec functions every JSON body type has:
//   void write_json(JsonWriter&) const;  static Result<T> from_json(const JsonValue&);
//   std::string encode() const;          static Result<T> decode(std::string_view body);
#define COMET_JSON_BODY(Type)                                    \
    void write_json(::comet::protocol::JsonWriter& w) const;     \
    static ::comet::Result<Type> from_json(const ::comet::protocol::JsonValue& v); \
    std::string encode() const {                                 \
        ::comet::protocol::JsonWriter w;                         \
        write_json(w);                                           \
        return w.take();                                         \
    }                                                            \
    static ::comet::Result<Type> decode(std::string_view body) { \
        COMET_ASSIGN_OR_RETURN(auto doc, ::comet::protocol::parse_json_body(body)); \
        return from_json(doc);                                   \
    }
