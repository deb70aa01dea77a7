#include "protocol/json_text.h"

#include <cstring>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace comet::protocol {
namespace {

constexpr int kMaxJsonDepth = 200;

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool is_bare_char(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           c == '-' || c == '+' || c == '.' || c == '$';
}

// Recursive-descent copier from lenient JSON to standard compact JSON. Each function consumes
// one syntactic element at pos_ and appends its standard form to *out.
class LenientNormalizer {
public:
    explicit LenientNormalizer(std::string_view in) : in_(in) {}

    Status run(std::string* out) {
        skip_ws();
        COMET_RETURN_IF_ERROR(value(out, 0));
        skip_ws();
        if (pos_ != in_.size()) {
            return error("trailing characters after the JSON value");
        }
        return Status::ok();
    }

private:
    Status error(std::string_view what) const {
        return Status::error(Errc::kCorruption, "invalid JSON body at offset {}: {}", pos_, what);
    }
    void skip_ws() {
        while (pos_ < in_.size() && is_ws(in_[pos_])) {
            ++pos_;
        }
    }
    bool at_end() const { return pos_ >= in_.size(); }

    Status value(std::string* out, int depth) {
        if (depth > kMaxJsonDepth) {
            return error("nesting too deep");
        }
        if (at_end()) {
            return error("unexpected end");
        }
        char c = in_[pos_];
        if (c == '{') {
            return object(out, depth + 1);
        }
        if (c == '[') {
            return array(out, depth + 1);
        }
        if (c == '"' || c == '\'') {
            std::string s;
            COMET_RETURN_IF_ERROR(string(&s));
            append_json_string(s, out);
            return Status::ok();
        }
        size_t start = pos_;
        while (pos_ < in_.size() && is_bare_char(in_[pos_])) {
            ++pos_;
        }
        if (pos_ == start) {
            return error("unexpected character");
        }
        out->append(in_.substr(start, pos_ - start));  // number or literal; RapidJSON checks it
        return Status::ok();
    }

    // Reads a quoted string (either quote kind) and stores its decoded UTF-8 value.
    Status string(std::string* s) {
        char quote = in_[pos_++];
        while (true) {
            if (at_end()) {
                return error("unterminated string");
            }
            char c = in_[pos_++];
            if (c == quote) {
                return Status::ok();
            }
            if (c != '\\') {
                s->push_back(c);
                continue;
            }
            if (at_end()) {
                return error("unterminated escape");
            }
            char e = in_[pos_++];
            switch (e) {
                case '"': s->push_back('"'); break;
                case '\'': s->push_back('\''); break;
                case '\\': s->push_back('\\'); break;
                case '/': s->push_back('/'); break;
                case 'b': s->push_back('\b'); break;
                case 'f': s->push_back('\f'); break;
                case 'n': s->push_back('\n'); break;
                case 'r': s->push_back('\r'); break;
                case 't': s->push_back('\t'); break;
                case 'u': {
                    uint32_t cp = 0;
                    COMET_RETURN_IF_ERROR(hex4(&cp));
                    if (cp >= 0xD800 && cp <= 0xDBFF && pos_ + 1 < in_.size() &&
                        in_[pos_] == '\\' && in_[pos_ + 1] == 'u') {
                        pos_ += 2;
                        uint32_t lo = 0;
                        COMET_RETURN_IF_ERROR(hex4(&lo));
                        if (lo >= 0xDC00 && lo <= 0xDFFF) {
                            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        } else {
                            append_utf8(cp, s);
                            cp = lo;
                        }
                    }
                    append_utf8(cp, s);
                    break;
                }
                default:
                    return error("bad escape");
            }
        }
    }

    Status hex4(uint32_t* cp) {
        if (in_.size() - pos_ < 4) {
            return error("short \\u escape");
        }
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            char h = in_[pos_++];
            v <<= 4;
            if (h >= '0' && h <= '9') {
                v |= static_cast<uint32_t>(h - '0');
            } else if (h >= 'a' && h <= 'f') {
                v |= static_cast<uint32_t>(h - 'a' + 10);
            } else if (h >= 'A' && h <= 'F') {
                v |= static_cast<uint32_t>(h - 'A' + 10);
            } else {
                return error("bad hex digit in \\u escape");
            }
        }
        *cp = v;
        return Status::ok();
    }

    static void append_utf8(uint32_t cp, std::string* s) {
        if (cp < 0x80) {
            s->push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
            s->push_back(static_cast<char>(0xC0 | (cp >> 6)));
            s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
            s->push_back(static_cast<char>(0xE0 | (cp >> 12)));
            s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else {
            s->push_back(static_cast<char>(0xF0 | (cp >> 18)));
            s->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
            s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
    }

    // An object key: quoted string, bare token ({0:"a"}), or a whole object/array (fastjson
    // writes maps keyed by beans that way); the latter becomes a string holding compact JSON.
    Status key(std::string* out, int depth) {
        char c = in_[pos_];
        if (c == '"' || c == '\'') {
            std::string s;
            COMET_RETURN_IF_ERROR(string(&s));
            append_json_string(s, out);
            return Status::ok();
        }
        if (c == '{' || c == '[') {
            std::string nested;
            COMET_RETURN_IF_ERROR(value(&nested, depth));
            append_json_string(nested, out);
            return Status::ok();
        }
        size_t start = pos_;
        while (pos_ < in_.size() && is_bare_char(in_[pos_])) {
            ++pos_;
        }
        if (pos_ == start) {
            return error("expected an object key");
        }
        append_json_string(in_.substr(start, pos_ - start), out);
        return Status::ok();
    }

    Status object(std::string* out, int depth) {
        ++pos_;  // '{'
        out->push_back('{');
        skip_ws();
        if (!at_end() && in_[pos_] == '}') {
            ++pos_;
            out->push_back('}');
            return Status::ok();
        }
        while (true) {
            skip_ws();
            if (at_end()) {
                return error("unterminated object");
            }
            COMET_RETURN_IF_ERROR(key(out, depth));
            skip_ws();
            if (at_end() || in_[pos_] != ':') {
                return error("expected ':' after object key");
            }
            ++pos_;
            out->push_back(':');
            skip_ws();
            COMET_RETURN_IF_ERROR(value(out, depth));
            skip_ws();
            if (at_end()) {
                return error("unterminated object");
            }
            if (in_[pos_] == ',') {
                ++pos_;
                out->push_back(',');
                continue;
            }
            if (in_[pos_] == '}') {
                ++pos_;
                out->push_back('}');
                return Status::ok();
            }
            return error("expected ',' or '}' in object");
        }
    }

    Status array(std::string* out, int depth) {
        ++pos_;  // '['
        out->push_back('[');
        skip_ws();
        if (!at_end() && in_[pos_] == ']') {
            ++pos_;
            out->push_back(']');
            return Status::ok();
        }
        while (true) {
            skip_ws();
            COMET_RETURN_IF_ERROR(value(out, depth));
            skip_ws();
            if (at_end()) {
                return error("unterminated array");
            }
            if (in_[pos_] == ',') {
                ++pos_;
                out->push_back(',');
                continue;
            }
            if (in_[pos_] == ']') {
                ++pos_;
                out->push_back(']');
                return Status::ok();
            }
            return error("expected ',' or ']' in array");
        }
    }

    std::string_view in_;
    size_t pos_ = 0;
};

}  // namespace

char* write_json_string(std::string_view s, char* w) {
    static constexpr char kHex[] = "0123456789abcdef";
    *w++ = '"';
    const char* p = s.data();
    const char* const end = p + s.size();
    while (p < end) {
        // Most strings need no escape at all: runs of plain bytes are copied whole.
        const size_t run = json_plain_prefix(p, end);
        std::memcpy(w, p, run);
        w += run;
        p += run;
        if (p == end) {
            break;
        }
        const auto c = static_cast<unsigned char>(*p++);
        *w++ = '\\';
        switch (c) {
            case '"': *w++ = '"'; break;
            case '\\': *w++ = '\\'; break;
            case '\b': *w++ = 'b'; break;
            case '\f': *w++ = 'f'; break;
            case '\n': *w++ = 'n'; break;
            case '\r': *w++ = 'r'; break;
            case '\t': *w++ = 't'; break;
            default:  // another control character
                *w++ = 'u';
                *w++ = '0';
                *w++ = '0';
                *w++ = kHex[c >> 4];
                *w++ = kHex[c & 0xF];
        }
    }
    *w++ = '"';
    return w;
}

size_t json_string_room(std::string_view s) {
    if (s.size() <= 256) {
        return 2 + 6 * s.size();
    }
    size_t n = 2 + s.size();
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' ||
            c == '\t') {
            n += 1;
        } else if (c < 0x20) {
            n += 5;
        }
    }
    return n;
}

void append_json_string(std::string_view s, std::string* out) {
    const size_t start = out->size();
    out->resize(start + json_string_room(s));
    char* end = write_json_string(s, out->data() + start);
    out->resize(static_cast<size_t>(end - out->data()));
}

std::string json_value_text(const rapidjson::Value& v) {
    if (v.IsString()) {
        return std::string(v.GetString(), v.GetStringLength());
    }
    if (v.IsBool()) {
        return v.GetBool() ? "true" : "false";
    }
    if (v.IsInt64()) {
        return std::to_string(v.GetInt64());
    }
    if (v.IsUint64()) {
        return std::to_string(v.GetUint64());
    }
    if (v.IsNull()) {
        return "null";
    }
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    v.Accept(w);
    return std::string(buf.GetString(), buf.GetSize());
}

Result<std::string> normalize_lenient_json(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 16);
    LenientNormalizer n(text);
    COMET_RETURN_IF_ERROR(n.run(&out));
    return out;
}

}  // namespace comet::protocol
