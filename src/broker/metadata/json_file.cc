#include "broker/metadata/json_file.h"

#include <rapidjson/error/en.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/check.h"
#include "base/file_io.h"

namespace comet::broker {
namespace {

bool is_bare_key_char(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
           c == '_' || c == '.';
}

}  // namespace

std::string quote_bare_keys(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 16);
    bool in_string = false;
    bool expect_key = false;  // after '{' or ',' inside an object (whitespace skipped)
    size_t i = 0;
    while (i < text.size()) {
        const char c = text[i];
        if (in_string) {
            out.push_back(c);
            if (c == '\\' && i + 1 < text.size()) {
                out.push_back(text[i + 1]);
                i += 2;
                continue;
            }
            if (c == '"') {
                in_string = false;
            }
            ++i;
            continue;
        }
        if (c == '"') {
            in_string = true;
            expect_key = false;
            out.push_back(c);
            ++i;
            continue;
        }
        if (c == '{' || c == ',') {
            expect_key = true;
            out.push_back(c);
            ++i;
            continue;
        }
        if (expect_key && is_bare_key_char(c)) {
            size_t j = i;
            while (j < text.size() && is_bare_key_char(text[j])) {
                ++j;
            }
            size_t k = j;
            while (k < text.size() && (text[k] == ' ' || text[k] == '\t' || text[k] == '\r' ||
                                       text[k] == '\n')) {
                ++k;
            }
            if (k < text.size() && text[k] == ':') {
                out.push_back('"');
                out.append(text.substr(i, j - i));
                out.push_back('"');
                i = j;
                expect_key = false;
                continue;
            }
            // A bare value inside an array ("[1,2]"): copy as is.
            out.append(text.substr(i, j - i));
            i = j;
            expect_key = false;
            continue;
        }
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
            expect_key = false;
        }
        out.push_back(c);
        ++i;
    }
    return out;
}

Status parse_lenient_json(std::string_view text, std::string_view what, rapidjson::Document* doc) {
    const std::string fixed = quote_bare_keys(text);
    doc->Parse(fixed.data(), fixed.size());
    if (doc->HasParseError()) {
        return Status::error(Errc::kCorruption, "{}: JSON parse error at byte {}: {}", what,
                             doc->GetErrorOffset(), rapidjson::GetParseError_En(doc->GetParseError()));
    }
    return Status::ok();
}

Result<std::string> read_file(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        return Status::error(Errc::kNotFound, "{} does not exist", path);
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Status::error(Errc::kIoError, "open {}: {}", path, std::strerror(errno));
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
        return Status::error(Errc::kIoError, "read {} failed", path);
    }
    return ss.str();
}

Status write_file_atomic(const std::string& path, std::string_view content) {
    return replace_file_durably(path, content, ReplaceOptions{.backup_suffix = ".bak",
                                                              .create_dirs = true});
}

Result<std::string> read_config_file(const std::string& path) {
    auto main = read_file(path);
    if (main.is_ok() && !main.value().empty()) {
        rapidjson::Document doc;
        if (parse_lenient_json(main.value(), path, &doc).is_ok()) {
            return main;
        }
    }
    auto bak = read_file(path + ".bak");
    if (bak.is_ok()) {
        return bak;
    }
    if (main.is_ok()) {
        return main;  // unparsable and no backup: let the caller report the parse error
    }
    return main.status();
}

std::string to_json(const rapidjson::Value& v, bool pretty) {
    rapidjson::StringBuffer buf;
    if (pretty) {
        rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
        v.Accept(w);
    } else {
        rapidjson::Writer<rapidjson::StringBuffer> w(buf);
        v.Accept(w);
    }
    return std::string(buf.GetString(), buf.GetSize());
}

std::string format_json(std::string compact, bool pretty) {
    if (!pretty) {
        return compact;
    }
    rapidjson::Document doc;
    doc.Parse(compact.data(), compact.size());
    COMET_CHECK(!doc.HasParseError(), "format_json: invalid JSON at byte {}", doc.GetErrorOffset());
    return to_json(doc, true);
}

int64_t json_int(const rapidjson::Value& obj, const char* key, int64_t dflt) {
    if (!obj.IsObject()) {
        return dflt;
    }
    auto it = obj.FindMember(key);
    if (it == obj.MemberEnd()) {
        return dflt;
    }
    const auto& v = it->value;
    if (v.IsInt64()) {
        return v.GetInt64();
    }
    if (v.IsUint64()) {
        return static_cast<int64_t>(v.GetUint64());
    }
    if (v.IsDouble()) {
        return static_cast<int64_t>(v.GetDouble());
    }
    if (v.IsString()) {
        char* end = nullptr;
        const long long x = std::strtoll(v.GetString(), &end, 10);
        if (end != v.GetString() && *end == '\0') {
            return x;
        }
    }
    return dflt;
}

bool json_bool(const rapidjson::Value& obj, const char* key, bool dflt) {
    if (!obj.IsObject()) {
        return dflt;
    }
    auto it = obj.FindMember(key);
    if (it == obj.MemberEnd()) {
        return dflt;
    }
    if (it->value.IsBool()) {
        return it->value.GetBool();
    }
    if (it->value.IsString()) {
        const std::string_view s(it->value.GetString(), it->value.GetStringLength());
        if (s == "true") {
            return true;
        }
        if (s == "false") {
            return false;
        }
    }
    return dflt;
}

std::string json_string(const rapidjson::Value& obj, const char* key, std::string_view dflt) {
    if (!obj.IsObject()) {
        return std::string(dflt);
    }
    auto it = obj.FindMember(key);
    if (it == obj.MemberEnd() || !it->value.IsString()) {
        return std::string(dflt);
    }
    return std::string(it->value.GetString(), it->value.GetStringLength());
}

}  // namespace comet::broker
