#pragma once
// Helpers shared by the broker's JSON config files (topics.json, subscriptionGroup.json,
// consumerOffset.json, delayOffset.json): lenient parsing of fastjson output and atomic writes.
// Pure functions except read/write, which touch only the given path. Thread-safe (no state).

#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include "base/status.h"

namespace comet::broker {

// fastjson writes maps with non-String keys unquoted ({0:12}); rapidjson rejects that. Returns
// `text` with every unquoted object key made of [-0-9A-Za-z_.] characters quoted. Strings are
// copied untouched. See reference §3.1.
std::string quote_bare_keys(std::string_view text);

// Parses `text` (fastjson or standard JSON) into `doc`. Errors: kCorruption naming `what`.
Status parse_lenient_json(std::string_view text, std::string_view what, rapidjson::Document* doc);

// Reads a whole file. kNotFound when the file does not exist, kIoError on other failures.
Result<std::string> read_file(const std::string& path);

// Writes `content` to `path` atomically: `<path>.tmp`, fsync, rename over `path`, fsync of the
// directory. The previous version is kept as `<path>.bak` (as RocketMQ's ConfigManager does), so a
// crash leaves either the old or the new file. Creates missing parent directories.
Status write_file_atomic(const std::string& path, std::string_view content);

// Loads `path`, falling back to `<path>.bak` when `path` is missing or unparsable. Returns
// kNotFound when neither exists (a fresh store).
Result<std::string> read_config_file(const std::string& path);

// JSON text of a value: compact, or indented like RocketMQ's config files when `pretty`.
std::string to_json(const rapidjson::Value& v, bool pretty = false);
// `compact` (standard JSON, as protocol::JsonWriter writes it) unchanged, or indented like
// to_json(.., true) when `pretty`. Requires: `compact` is valid JSON.
std::string format_json(std::string compact, bool pretty);

// Field readers that tolerate numbers sent as strings and vice versa (Java headers and bodies).
int64_t json_int(const rapidjson::Value& obj, const char* key, int64_t dflt);
bool json_bool(const rapidjson::Value& obj, const char* key, bool dflt);
std::string json_string(const rapidjson::Value& obj, const char* key, std::string_view dflt = {});

}  // namespace comet::broker
