#include "protocol/header_codec.h"

#include <charconv>
#include <limits>

namespace comet::protocol {
namespace {

template <typename Int>
Result<Int> parse_java_int(std::string_view field, std::string_view text, const char* java_type) {
    std::string_view digits = text;
    if (!digits.empty() && digits.front() == '+') {
        digits.remove_prefix(1);
        if (!digits.empty() && digits.front() == '-') {
            digits = {};  // "+-1" is not a number
        }
    }
    Int v{};
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size()) {
        return Status::error(Errc::kInvalidArgument,
                             "the custom field {} has invalid {} value '{}'", field, java_type,
                             text);
    }
    return v;
}

}  // namespace

Result<int32_t> parse_ext_int32(std::string_view field, std::string_view text) {
    return parse_java_int<int32_t>(field, text, "Integer");
}

Result<int64_t> parse_ext_int64(std::string_view field, std::string_view text) {
    return parse_java_int<int64_t>(field, text, "Long");
}

bool parse_java_bool(std::string_view text) {
    if (text.size() != 4) {
        return false;
    }
    const char* t = "true";
    for (size_t i = 0; i < 4; ++i) {
        char c = text[i];
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
        if (c != t[i]) {
            return false;
        }
    }
    return true;
}

}  // namespace comet::protocol
