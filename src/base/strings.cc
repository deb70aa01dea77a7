#include "base/strings.h"

namespace comet {

std::string_view trim_whitespace(std::string_view s) {
    auto blank = [](char c) {
        return c == ' ' || c == '\t' || c == '\f' || c == '\r' || c == '\n' || c == '\v';
    };
    while (!s.empty() && blank(s.front())) {
        s.remove_prefix(1);
    }
    while (!s.empty() && blank(s.back())) {
        s.remove_suffix(1);
    }
    return s;
}

}  // namespace comet
