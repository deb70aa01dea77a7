#include "base/properties.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace comet {

std::string PropertyEntry::location() const {
    if (line <= 0) {
        return source;
    }
    return fmt::format("{}:{}", source, line);
}

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\f'; }

// One physical line of input, without its terminator.
struct PhysicalLine {
    std::string_view text;
    int number = 0;
};

std::vector<PhysicalLine> split_lines(std::string_view text) {
    std::vector<PhysicalLine> lines;
    size_t start = 0;
    int number = 1;
    while (start < text.size()) {
        size_t end = start;
        while (end < text.size() && text[end] != '\n' && text[end] != '\r') {
            ++end;
        }
        lines.push_back({text.substr(start, end - start), number++});
        if (end < text.size() && text[end] == '\r' && end + 1 < text.size() &&
            text[end + 1] == '\n') {
            ++end;
        }
        start = end + 1;
    }
    return lines;
}

// True when the line ends with an odd number of backslashes (a continuation).
bool continues(std::string_view line) {
    size_t n = 0;
    for (size_t i = line.size(); i > 0 && line[i - 1] == '\\'; --i) {
        ++n;
    }
    return n % 2 == 1;
}

void append_utf8(std::string* out, uint32_t cp) {
    if (cp < 0x80) {
        out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

// Resolves backslash escapes of one key or value.
Result<std::string> unescape(std::string_view raw, std::string_view source, int line) {
    std::string out;
    out.reserve(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
        char c = raw[i];
        if (c != '\\' || i + 1 >= raw.size()) {
            out.push_back(c);
            continue;
        }
        char e = raw[++i];
        switch (e) {
            case 't': out.push_back('\t'); break;
            case 'n': out.push_back('\n'); break;
            case 'r': out.push_back('\r'); break;
            case 'f': out.push_back('\f'); break;
            case 'u': {
                uint32_t cp = 0;
                for (int k = 0; k < 4; ++k) {
                    int d = i + 1 < raw.size() ? hex_digit(raw[i + 1]) : -1;
                    if (d < 0) {
                        return Status::error(Errc::kInvalidArgument,
                                             "{}:{}: malformed \\uXXXX escape", source, line);
                    }
                    cp = cp * 16 + static_cast<uint32_t>(d);
                    ++i;
                }
                append_utf8(&out, cp);
                break;
            }
            default: out.push_back(e); break;
        }
    }
    return out;
}

}  // namespace

Result<std::vector<PropertyEntry>> parse_properties(std::string_view text,
                                                    std::string_view source) {
    std::vector<PropertyEntry> entries;
    const std::vector<PhysicalLine> lines = split_lines(text);
    for (size_t i = 0; i < lines.size(); ++i) {
        std::string_view first = lines[i].text;
        size_t p = 0;
        while (p < first.size() && is_blank(first[p])) {
            ++p;
        }
        first.remove_prefix(p);
        if (first.empty() || first[0] == '#' || first[0] == '!') {
            continue;  // comment lines never continue, as in Java
        }
        const int start_line = lines[i].number;
        // Join continuation lines into one logical line.
        std::string logical(first);
        while (continues(logical)) {
            logical.pop_back();
            if (i + 1 >= lines.size()) {
                break;
            }
            std::string_view next = lines[++i].text;
            size_t q = 0;
            while (q < next.size() && is_blank(next[q])) {
                ++q;
            }
            logical.append(next.substr(q));
        }
        // Key: up to the first unescaped separator or blank.
        size_t k = 0;
        bool escaped = false;
        for (; k < logical.size(); ++k) {
            char c = logical[k];
            if (escaped) {
                escaped = false;
                continue;
            }
            if (c == '\\') {
                escaped = true;
                continue;
            }
            if (c == '=' || c == ':' || is_blank(c)) {
                break;
            }
        }
        std::string_view rest = std::string_view(logical).substr(k);
        size_t v = 0;
        while (v < rest.size() && is_blank(rest[v])) {
            ++v;
        }
        if (v < rest.size() && (rest[v] == '=' || rest[v] == ':')) {
            ++v;
            while (v < rest.size() && is_blank(rest[v])) {
                ++v;
            }
        }
        const std::string_view raw_key = std::string_view(logical).substr(0, k);
        COMET_ASSIGN_OR_RETURN(std::string key, unescape(raw_key, source, start_line));
        COMET_ASSIGN_OR_RETURN(std::string value, unescape(rest.substr(v), source, start_line));
        entries.push_back(
            PropertyEntry{std::move(key), std::move(value), std::string(source), start_line});
    }
    return entries;
}

Result<std::vector<PropertyEntry>> load_properties_file(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        return Status::error(Errc::kNotFound, "config file not found: {}", path);
    }
    if (std::filesystem::is_directory(path, ec)) {
        return Status::error(Errc::kInvalidArgument, "config file is a directory: {}", path);
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        int err = errno;
        if (err == ENOENT) {
            return Status::error(Errc::kNotFound, "config file not found: {}", path);
        }
        return Status::error(Errc::kIoError, "cannot open config file {}: {}", path,
                             std::strerror(err));
    }
    std::ostringstream buf;
    buf << in.rdbuf();
    if (in.bad()) {
        return Status::error(Errc::kIoError, "cannot read config file {}", path);
    }
    return parse_properties(buf.str(), path);
}

std::string properties_to_text(const std::vector<PropertyEntry>& entries) {
    std::string out;
    for (const PropertyEntry& e : entries) {
        out.append(e.key).append("=").append(e.value).append("\n");
    }
    return out;
}

}  // namespace comet
