#include "protocol/json_body.h"

#include <fmt/format.h>
#include <rapidjson/error/en.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "protocol/json_text.h"

namespace comet::protocol {

void JsonWriter::before_value() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!has_items_.empty()) {
        if (has_items_.back()) {
            out_.push_back(',');
        }
        has_items_.back() = true;
    }
}

JsonWriter& JsonWriter::begin_object() {
    before_value();
    out_.push_back('{');
    has_items_.push_back(false);
    return *this;
}

JsonWriter& JsonWriter::end_object() {
    out_.push_back('}');
    has_items_.pop_back();
    return *this;
}

JsonWriter& JsonWriter::begin_array() {
    before_value();
    out_.push_back('[');
    has_items_.push_back(false);
    return *this;
}

JsonWriter& JsonWriter::end_array() {
    out_.push_back(']');
    has_items_.pop_back();
    return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
    before_value();
    append_json_string(k, &out_);
    out_.push_back(':');
    after_key_ = true;
    return *this;
}

JsonWriter& JsonWriter::raw_key(std::string_view json) {
    before_value();
    out_.append(json);
    out_.push_back(':');
    after_key_ = true;
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
    before_value();
    append_json_string(s, &out_);
    return *this;
}

JsonWriter& JsonWriter::value(int32_t v) {
    before_value();
    out_.append(std::to_string(v));
    return *this;
}

JsonWriter& JsonWriter::value(int64_t v) {
    before_value();
    out_.append(std::to_string(v));
    return *this;
}

JsonWriter& JsonWriter::value(bool v) {
    before_value();
    out_.append(v ? "true" : "false");
    return *this;
}

JsonWriter& JsonWriter::value(double v) {
    before_value();
    if (!std::isfinite(v)) {
        out_.append("null");  // JSON has no NaN/Infinity; fastjson writes null too
    } else if (v == std::trunc(v) && std::fabs(v) < 1e15) {
        out_.append(fmt::format("{:.1f}", v));
    } else {
        out_.append(fmt::format("{}", v));
    }
    return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json) {
    before_value();
    out_.append(json);
    return *this;
}

Result<rapidjson::Document> parse_json_body(std::string_view text) {
    COMET_ASSIGN_OR_RETURN(std::string normalized, normalize_lenient_json(text));
    rapidjson::Document doc;
    doc.Parse(normalized.data(), normalized.size());
    if (doc.HasParseError()) {
        return Status::error(Errc::kInvalidArgument, "invalid JSON body at offset {}: {}",
                             doc.GetErrorOffset(), rapidjson::GetParseError_En(doc.GetParseError()));
    }
    return doc;
}

const JsonValue* find_member(const JsonValue& obj, const char* key) {
    auto it = obj.FindMember(key);
    if (it == obj.MemberEnd() || it->value.IsNull()) {
        return nullptr;
    }
    return &it->value;
}

Status expect_object(const JsonValue& v, std::string_view what) {
    if (!v.IsObject()) {
        return Status::error(Errc::kInvalidArgument, "JSON body: {} is not an object", what);
    }
    return Status::ok();
}

Result<int64_t> json_to_int64(const JsonValue& v, std::string_view what) {
    if (v.IsInt64()) {
        return v.GetInt64();
    }
    if (v.IsString()) {
        std::string_view s(v.GetString(), v.GetStringLength());
        int64_t out = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
        if (!s.empty() && ec == std::errc() && p == s.data() + s.size()) {
            return out;
        }
        return Status::error(Errc::kInvalidArgument, "JSON body: {} has non-numeric value '{}'",
                             what, s);
    }
    if (v.IsDouble()) {
        double d = v.GetDouble();
        if (d == std::trunc(d) && std::fabs(d) < 9.2e18) {
            return static_cast<int64_t>(d);
        }
    }
    return Status::error(Errc::kInvalidArgument, "JSON body: {} is not an integer", what);
}

Result<std::string> json_to_string(const JsonValue& v, std::string_view what) {
    if (v.IsString()) {
        return std::string(v.GetString(), v.GetStringLength());
    }
    if (v.IsNumber() || v.IsBool()) {
        return json_value_text(v);
    }
    return Status::error(Errc::kInvalidArgument, "JSON body: {} is not a string", what);
}

Status read_string(const JsonValue& obj, const char* key, std::string* out) {
    const JsonValue* v = find_member(obj, key);
    if (v == nullptr) {
        return Status::ok();
    }
    COMET_ASSIGN_OR_RETURN(*out, json_to_string(*v, key));
    return Status::ok();
}

Status read_string(const JsonValue& obj, const char* key, std::optional<std::string>* out) {
    const JsonValue* v = find_member(obj, key);
    if (v == nullptr) {
        return Status::ok();
    }
    COMET_ASSIGN_OR_RETURN(*out, json_to_string(*v, key));
    return Status::ok();
}

Status read_int64(const JsonValue& obj, const char* key, int64_t* out) {
    const JsonValue* v = find_member(obj, key);
    if (v == nullptr) {
        return Status::ok();
    }
    COMET_ASSIGN_OR_RETURN(*out, json_to_int64(*v, key));
    return Status::ok();
}

Status read_int32(const JsonValue& obj, const char* key, int32_t* out) {
    int64_t wide = *out;
    COMET_RETURN_IF_ERROR(read_int64(obj, key, &wide));
    if (wide < std::numeric_limits<int32_t>::min() || wide > std::numeric_limits<int32_t>::max()) {
        return Status::error(Errc::kInvalidArgument, "JSON body: {} value {} overflows int32", key,
                             wide);
    }
    *out = static_cast<int32_t>(wide);
    return Status::ok();
}

Status read_bool(const JsonValue& obj, const char* key, bool* out) {
    const JsonValue* v = find_member(obj, key);
    if (v == nullptr) {
        return Status::ok();
    }
    if (v->IsBool()) {
        *out = v->GetBool();
        return Status::ok();
    }
    if (v->IsString()) {
        std::string_view s(v->GetString(), v->GetStringLength());
        *out = s == "true";
        return Status::ok();
    }
    if (v->IsInt64()) {
        *out = v->GetInt64() != 0;  // fastjson accepts 1/0
        return Status::ok();
    }
    return Status::error(Errc::kInvalidArgument, "JSON body: {} is not a boolean", key);
}

Status read_bool(const JsonValue& obj, const char* key, std::optional<bool>* out) {
    if (find_member(obj, key) == nullptr) {
        return Status::ok();
    }
    bool b = false;
    COMET_RETURN_IF_ERROR(read_bool(obj, key, &b));
    *out = b;
    return Status::ok();
}

Status read_double(const JsonValue& obj, const char* key, double* out) {
    const JsonValue* v = find_member(obj, key);
    if (v == nullptr) {
        return Status::ok();
    }
    if (v->IsNumber()) {
        *out = v->GetDouble();
        return Status::ok();
    }
    if (v->IsString()) {
        std::string s(v->GetString(), v->GetStringLength());
        char* end = nullptr;
        double d = std::strtod(s.c_str(), &end);
        if (!s.empty() && end == s.c_str() + s.size()) {
            *out = d;
            return Status::ok();
        }
    }
    return Status::error(Errc::kInvalidArgument, "JSON body: {} is not a number", key);
}

Status read_string_list(const JsonValue& obj, const char* key, std::vector<std::string>* out) {
    const JsonValue* v = find_member(obj, key);
    if (v == nullptr) {
        return Status::ok();
    }
    if (!v->IsArray()) {
        return Status::error(Errc::kInvalidArgument, "JSON body: {} is not an array", key);
    }
    out->clear();
    for (const auto& e : v->GetArray()) {
        if (e.IsNull()) {
            continue;
        }
        COMET_ASSIGN_OR_RETURN(std::string s, json_to_string(e, key));
        out->push_back(std::move(s));
    }
    return Status::ok();
}

Status read_string_map(const JsonValue& obj, const char* key,
                       std::map<std::string, std::string>* out) {
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
        COMET_ASSIGN_OR_RETURN(std::string s, json_to_string(m.value, key));
        (*out)[std::string(m.name.GetString(), m.name.GetStringLength())] = std::move(s);
    }
    return Status::ok();
}

Status read_long_string_map(const JsonValue& obj, const char* key,
                            std::map<int64_t, std::string>* out) {
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
        COMET_ASSIGN_OR_RETURN(int64_t id, json_to_int64(m.name, key));
        COMET_ASSIGN_OR_RETURN(std::string s, json_to_string(m.value, key));
        (*out)[id] = std::move(s);
    }
    return Status::ok();
}

}  // namespace comet::protocol
