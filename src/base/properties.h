#pragma once
// Parser for RocketMQ's configuration files, which Java reads with java.util.Properties#load
// (MixAll.string2Properties does the same for UPDATE_*_CONFIG bodies). Every entry keeps the
// source name and the line it started on so errors can say `broker.conf:12`.
//
// Accepted syntax (java.util.Properties#load):
//   - lines end with \n, \r or \r\n; leading whitespace (space, \t, \f) is skipped;
//   - blank lines and lines whose first non-blank char is '#' or '!' are ignored;
//   - the key ends at the first unescaped '=', ':' or whitespace; whitespace around the
//     separator is skipped; `key=value`, `key:value`, `key value` are all the same;
//   - an odd number of trailing backslashes continues the logical line on the next line
//     (leading whitespace of the continuation is dropped);
//   - escapes \t \n \r \f \uXXXX; a backslash before any other char yields that char.
// Differs from Java: the text is UTF-8 (Java's load(InputStream) reads ISO-8859-1); a malformed
// \uXXXX is an error with file:line instead of an IllegalArgumentException. Values keep their
// trailing whitespace here; ConfigRegistry trims them (as MixAll.properties2Object does for
// strings). A key seen twice: both entries are returned in order, the last one wins when applied.
// Pure functions, thread-compatible.

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace comet {

struct PropertyEntry {
    std::string key;
    std::string value;
    std::string source;  // file path, "command line", "UPDATE_BROKER_CONFIG", ...
    int line = 0;        // 1-based line where the logical line starts; 0 when not from a file

    // "broker.conf:12", or just the source when line == 0.
    std::string location() const;
};

// Parses properties text. Errors: kInvalidArgument for a malformed \uXXXX escape, naming
// source:line.
Result<std::vector<PropertyEntry>> parse_properties(std::string_view text, std::string_view source);

// Reads and parses a file. Errors: kNotFound when the file does not exist, kIoError when it cannot
// be read; both name the path.
Result<std::vector<PropertyEntry>> load_properties_file(const std::string& path);

// "key=value\n" for each entry in the given order, as MixAll.properties2String writes it (no
// escaping: values containing newlines do not round-trip, exactly like RocketMQ).
std::string properties_to_text(const std::vector<PropertyEntry>& entries);

}  // namespace comet
