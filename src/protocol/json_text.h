#pragma once
// Small JSON text helpers shared by the remoting header and body codecs. Pure functions.
//   append_json_string: a JSON string literal the way fastjson writes it (UTF-8 kept raw,
//     '"' '\\' and control characters escaped).
//   json_value_text:    the text a Java header field would get for a non-string JSON value
//     (numbers keep their exact digits, booleans "true"/"false", containers compact JSON).
//   normalize_lenient_json: rewrites fastjson's non-standard output (unquoted object keys such as
//     {0:"a"}, single-quoted strings) into standard JSON so RapidJSON can parse it (reference §3).

#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include "base/status.h"

namespace comet::protocol {

void append_json_string(std::string_view s, std::string* out);

// Requires: `v` was parsed with kParseNumbersAsStringsFlag or is a bool/container.
std::string json_value_text(const rapidjson::Value& v);

// Returns standard JSON equivalent to `text`, or an error naming the offset of the problem.
// Accepts: unquoted keys made of letters, digits, '_', '-', '.', '$'; single-quoted strings.
Result<std::string> normalize_lenient_json(std::string_view text);

}  // namespace comet::protocol
