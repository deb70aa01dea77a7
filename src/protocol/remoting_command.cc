#include "protocol/remoting_command.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <array>
#include <charconv>
#include <cstring>
#include <limits>

#include "base/bytes.h"
#include "base/check.h"
#include "protocol/header_scan.h"
#include "protocol/json_text.h"

namespace comet::protocol {
namespace {

constexpr std::array<std::string_view, 14> kLanguageNames = {
    "JAVA", "CPP", "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY",
    "OTHER", "HTTP", "GO", "PHP", "OMS", "RUST", "NODE_JS",
};

constexpr size_t kMaxHeaderBytes = 0xFFFFFF;

// ROCKETMQ serialization carries code and version as int16; codes outside that range (POP,
// DLedger) must travel as JSON, so the encoder falls back to JSON for them.
// Likewise extFields keys longer than an int16 length can express.
SerializeType effective_type(const RemotingCommand& cmd) {
    if (cmd.serialize_type != SerializeType::kRocketMq ||
        cmd.code < std::numeric_limits<int16_t>::min() ||
        cmd.code > std::numeric_limits<int16_t>::max() ||
        cmd.version < std::numeric_limits<int16_t>::min() ||
        cmd.version > std::numeric_limits<int16_t>::max()) {
        return SerializeType::kJson;
    }
    for (const auto& [k, v] : cmd.ext_fields) {
        if (k.size() > static_cast<size_t>(std::numeric_limits<int16_t>::max()) ||
            v.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
            return SerializeType::kJson;
        }
    }
    return SerializeType::kRocketMq;
}

// Raw writers for encode_json_header: the caller made room.
char* put_text(char* w, std::string_view text) {
    std::memcpy(w, text.data(), text.size());
    return w + text.size();
}
char* put_int(char* w, int64_t v) { return std::to_chars(w, w + 20, v).ptr; }

void encode_json_header(const RemotingCommand& cmd, std::string* out) {
    // Keys in alphabetical order like fastjson; nulls omitted; extFields values always strings.
    // Sized once and written through a pointer: a response header per send (issue 16).
    const std::string_view language = language_name(cmd.language);
    size_t bound = 128 + language.size() + 4 * 20;  // fixed text (~100 bytes), four integers
    for (const auto& [k, v] : cmd.ext_fields) {
        bound += json_string_room(k) + json_string_room(v) + 2;
    }
    if (cmd.remark) {
        bound += json_string_room(*cmd.remark) + 12;
    }
    const size_t start = out->size();
    out->resize(start + bound);
    char* w = out->data() + start;
    w = put_text(w, "{\"code\":");
    w = put_int(w, cmd.code);
    if (!cmd.ext_fields.empty()) {
        w = put_text(w, ",\"extFields\":{");
        bool first = true;
        for (const auto& [k, v] : cmd.ext_fields) {
            if (!first) {
                *w++ = ',';
            }
            first = false;
            w = write_json_string(k, w);
            *w++ = ':';
            w = write_json_string(v, w);
        }
        *w++ = '}';
    }
    w = put_text(w, ",\"flag\":");
    w = put_int(w, cmd.flag);
    w = put_text(w, ",\"language\":\"");
    w = put_text(w, language);
    w = put_text(w, "\",\"opaque\":");
    w = put_int(w, cmd.opaque);
    if (cmd.remark) {
        w = put_text(w, ",\"remark\":");
        w = write_json_string(*cmd.remark, w);
    }
    w = put_text(w, ",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":");
    w = put_int(w, cmd.version);
    *w++ = '}';
    out->resize(static_cast<size_t>(w - out->data()));
}

void encode_rocketmq_header(const RemotingCommand& cmd, std::string* out) {
    ByteWriter w(out);
    w.be16(static_cast<uint16_t>(static_cast<int16_t>(cmd.code)));
    w.u8(static_cast<uint8_t>(cmd.language));
    w.be16(static_cast<uint16_t>(static_cast<int16_t>(cmd.version)));
    w.be32(static_cast<uint32_t>(cmd.opaque));
    w.be32(static_cast<uint32_t>(cmd.flag));
    if (cmd.remark && !cmd.remark->empty()) {
        w.be32(static_cast<uint32_t>(cmd.remark->size()));
        w.bytes(*cmd.remark);
    } else {
        w.be32(0);
    }
    size_t ext_len = 0;
    for (const auto& [k, v] : cmd.ext_fields) {
        ext_len += 2 + k.size() + 4 + v.size();
    }
    w.be32(static_cast<uint32_t>(ext_len));
    for (const auto& [k, v] : cmd.ext_fields) {
        COMET_CHECK(k.size() <= 0x7FFF, "extFields key too long for ROCKETMQ header: {}",
                    k.size());
        w.be16(static_cast<uint16_t>(k.size()));
        w.bytes(k);
        w.be32(static_cast<uint32_t>(v.size()));
        w.bytes(v);
    }
}

// Reads an int32 header field that fastjson would also accept as a numeric string.
Status json_int_field(const rapidjson::Value& obj, const char* name, int32_t* out) {
    auto it = obj.FindMember(name);
    if (it == obj.MemberEnd() || it->value.IsNull()) {
        return Status::ok();  // keep the default, as fastjson does for an absent property
    }
    if (!it->value.IsString()) {
        return Status::error(Errc::kCorruption, "JSON header field {} is not a number", name);
    }
    std::string_view s(it->value.GetString(), it->value.GetStringLength());
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v < std::numeric_limits<int32_t>::min() ||
        v > std::numeric_limits<int32_t>::max()) {
        return Status::error(Errc::kCorruption, "JSON header field {} has bad value '{}'", name,
                             s);
    }
    *out = static_cast<int32_t>(v);
    return Status::ok();
}

Result<RemotingCommand> decode_json_header(std::string_view header) {
    rapidjson::Document doc;
    // Numbers as strings: a 13-digit timestamp or any other number keeps its exact text.
    // Iterative: nesting depth in untrusted input must not grow the stack.
    doc.Parse<rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseIterativeFlag>(
        header.data(), header.size());
    if (doc.HasParseError()) {
        return Status::error(Errc::kCorruption, "invalid JSON header at offset {}: {}",
                             doc.GetErrorOffset(), rapidjson::GetParseError_En(doc.GetParseError()));
    }
    if (!doc.IsObject()) {
        return Status::error(Errc::kCorruption, "JSON header is not an object");
    }
    // Read through a const view: const member iterators compare unambiguously in C++20.
    const rapidjson::Value& root = doc;
    RemotingCommand cmd;
    cmd.serialize_type = SerializeType::kJson;
    cmd.language = LanguageCode::kOther;
    cmd.version = 0;
    COMET_RETURN_IF_ERROR(json_int_field(root, "code", &cmd.code));
    COMET_RETURN_IF_ERROR(json_int_field(root, "version", &cmd.version));
    COMET_RETURN_IF_ERROR(json_int_field(root, "opaque", &cmd.opaque));
    COMET_RETURN_IF_ERROR(json_int_field(root, "flag", &cmd.flag));
    if (auto it = root.FindMember("language"); it != root.MemberEnd() && it->value.IsString()) {
        std::string_view s(it->value.GetString(), it->value.GetStringLength());
        // A numeric language (ordinal) is accepted too.
        uint32_t ordinal = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), ordinal);
        if (!s.empty() && ec == std::errc() && p == s.data() + s.size()) {
            cmd.language = ordinal < kLanguageNames.size() ? static_cast<LanguageCode>(ordinal)
                                                           : LanguageCode::kOther;
        } else {
            cmd.language = language_from_name(s);
        }
    }
    if (auto it = root.FindMember("remark"); it != root.MemberEnd() && !it->value.IsNull()) {
        if (it->value.IsObject() || it->value.IsArray()) {
            return Status::error(Errc::kCorruption, "JSON header remark is not a string");
        }
        cmd.remark = json_value_text(it->value);
    }
    if (auto it = root.FindMember("extFields"); it != root.MemberEnd() && !it->value.IsNull()) {
        if (!it->value.IsObject()) {
            return Status::error(Errc::kCorruption, "JSON header extFields is not an object");
        }
        for (const auto& m : it->value.GetObject()) {
            if (m.value.IsNull()) {
                continue;
            }
            std::string key(m.name.GetString(), m.name.GetStringLength());
            if (m.value.IsObject() || m.value.IsArray()) {
                return Status::error(Errc::kCorruption,
                                     "JSON header extFields value of '{}' is not a scalar", key);
            }
            cmd.ext_fields[std::move(key)] = json_value_text(m.value);
        }
    }
    return cmd;
}

Result<RemotingCommand> decode_rocketmq_header(std::string_view header) {
    RemotingCommand cmd;
    COMET_RETURN_IF_ERROR(detail::scan_rocketmq_header(
        header, &cmd, [&cmd](std::string_view key, std::string_view value) {
            cmd.ext_fields[std::string(key)] = std::string(value);  // later duplicates win
        }));
    return cmd;
}

}  // namespace

std::string_view language_name(LanguageCode c) {
    auto i = static_cast<size_t>(c);
    return i < kLanguageNames.size() ? kLanguageNames[i] : std::string_view("OTHER");
}

LanguageCode language_from_name(std::string_view name) {
    for (size_t i = 0; i < kLanguageNames.size(); ++i) {
        if (kLanguageNames[i] == name) {
            return static_cast<LanguageCode>(i);
        }
    }
    return LanguageCode::kOther;
}

RemotingCommand RemotingCommand::request(int32_t code) {
    RemotingCommand cmd;
    cmd.code = code;
    return cmd;
}

RemotingCommand RemotingCommand::response_to(const RemotingCommand& req, int32_t code,
                                             std::optional<std::string> remark) {
    RemotingCommand cmd;
    cmd.reset_as_response(req.opaque, code, std::move(remark));
    return cmd;
}

void RemotingCommand::reset_as_response(int32_t request_opaque, int32_t response_code,
                                        std::optional<std::string> response_remark) {
    code = response_code;
    language = kDefaultLanguage;
    version = kCometVersion;
    opaque = request_opaque;
    flag = kFlagResponse;
    remark = std::move(response_remark);
    body.clear();
    borrowed_body = {};
    serialize_type = SerializeType::kJson;
    typed_send_v2.reset();
    typed_pull.reset();
}

const std::string* RemotingCommand::ext(std::string_view key) const {
    auto it = ext_fields.find(key);
    return it == ext_fields.end() ? nullptr : &it->second;
}

std::string encode_header(const RemotingCommand& cmd) {
    std::string out;
    if (effective_type(cmd) == SerializeType::kRocketMq) {
        encode_rocketmq_header(cmd, &out);
    } else {
        encode_json_header(cmd, &out);
    }
    return out;
}

namespace {

void append_frame_prefix(const RemotingCommand& cmd, size_t body_size, std::string* out) {
    const size_t start = out->size();
    out->append(8, '\0');
    SerializeType type = effective_type(cmd);
    if (type == SerializeType::kRocketMq) {
        encode_rocketmq_header(cmd, out);
    } else {
        encode_json_header(cmd, out);
    }
    size_t header_len = out->size() - start - 8;
    COMET_CHECK(header_len <= kMaxHeaderBytes, "remoting header too large: {} bytes", header_len);
    size_t length = 4 + header_len + body_size;
    COMET_CHECK(length <= static_cast<size_t>(std::numeric_limits<int32_t>::max()),
                "remoting frame too large: {} bytes", length);
    auto* p = reinterpret_cast<uint8_t*>(out->data() + start);
    put_be32(p, static_cast<uint32_t>(length));
    put_be32(p + 4, (static_cast<uint32_t>(type) << 24) | static_cast<uint32_t>(header_len));
}

}  // namespace

std::string encode_frame_prefix(const RemotingCommand& cmd, size_t body_size) {
    std::string out;
    append_frame_prefix(cmd, body_size, &out);
    return out;
}

std::string encode_frame(const RemotingCommand& cmd) {
    std::string out;
    append_frame(cmd, &out);
    return out;
}

void append_frame(const RemotingCommand& cmd, std::string* out) {
    const std::string_view body = cmd.body_view();
    append_frame_prefix(cmd, body.size(), out);
    out->append(body);
}

namespace detail {

LanguageCode language_from_byte(uint8_t b) {
    return b < kLanguageNames.size() ? static_cast<LanguageCode>(b) : LanguageCode::kOther;
}

Result<PayloadParts> split_payload(std::string_view payload, size_t max_frame_bytes) {
    if (payload.size() + 4 > max_frame_bytes) {
        return Status::error(Errc::kResourceExhausted, "frame of {} bytes exceeds limit {}",
                             payload.size() + 4, max_frame_bytes);
    }
    if (payload.size() < 4) {
        return Status::error(Errc::kCorruption,
                             "frame truncated: {} payload bytes, header length word needs 4",
                             payload.size());
    }
    uint32_t word = get_be32(reinterpret_cast<const uint8_t*>(payload.data()));
    size_t header_len = word & 0xFFFFFF;
    if (header_len > payload.size() - 4) {
        return Status::error(Errc::kCorruption,
                             "header length {} exceeds frame ({} bytes after the length word)",
                             header_len, payload.size() - 4);
    }
    PayloadParts parts;
    parts.type = word >> 24;
    parts.header = payload.substr(4, header_len);
    parts.body = payload.substr(4 + header_len);
    return parts;
}

}  // namespace detail

Result<RemotingCommand> decode_frame_payload(std::string_view payload, size_t max_frame_bytes) {
    COMET_ASSIGN_OR_RETURN(detail::PayloadParts parts,
                           detail::split_payload(payload, max_frame_bytes));
    Result<RemotingCommand> cmd = Status(Errc::kInternal, "unset");
    if (parts.type == static_cast<uint32_t>(SerializeType::kJson)) {
        cmd = decode_json_header(parts.header);
    } else if (parts.type == static_cast<uint32_t>(SerializeType::kRocketMq)) {
        cmd = decode_rocketmq_header(parts.header);
    } else {
        return Status::error(Errc::kCorruption, "unknown serialization type {}", parts.type);
    }
    if (!cmd.is_ok()) {
        return cmd;
    }
    cmd->body = std::string(parts.body);
    return cmd;
}

FrameSplit split_frame(std::string_view buffer, size_t max_frame_bytes) {
    FrameSplit s;
    if (buffer.size() < 4) {
        s.state = FrameSplit::State::kNeedMore;
        return s;
    }
    auto length = static_cast<int32_t>(get_be32(reinterpret_cast<const uint8_t*>(buffer.data())));
    if (length < 4) {
        s.state = FrameSplit::State::kError;
        s.error = Status::error(Errc::kCorruption,
                                "frame length {} is below the 4-byte minimum", length);
        return s;
    }
    size_t total = static_cast<size_t>(length) + 4;
    if (total > max_frame_bytes) {
        s.state = FrameSplit::State::kError;
        s.error = Status::error(Errc::kResourceExhausted, "frame length {} exceeds limit {}",
                                total, max_frame_bytes);
        return s;
    }
    if (buffer.size() < total) {
        s.state = FrameSplit::State::kNeedMore;
        s.frame_bytes = total;
        return s;
    }
    s.state = FrameSplit::State::kFrame;
    s.frame_bytes = total;
    return s;
}

}  // namespace comet::protocol
