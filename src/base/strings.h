#pragma once
// Small string helpers shared by config readers and command-line tools.

#include <string_view>

namespace comet {

// `s` without leading and trailing whitespace (space, \t, \n, \v, \f, \r).
std::string_view trim_whitespace(std::string_view s);

}  // namespace comet
