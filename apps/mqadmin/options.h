#pragma once
// Command-line options of mqadmin sub-commands, shaped like RocketMQ's commons-cli options:
// each option has a one-letter short form ("-t TOPIC") and a long form ("--topic TOPIC" or
// "--topic=TOPIC"). Every sub-command also takes -n/--namesrvAddr and -h/--help.
// Pure parsing and help text; no I/O, no threads.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace comet::mqadmin {

struct OptionSpec {
    char short_name = 0;
    std::string long_name;
    bool has_arg = true;
    bool required = false;
    std::string help;
};

// The values given for one sub-command. Keys are short option letters.
class ParsedOptions {
public:
    bool has(char c) const { return values_.count(c) != 0; }
    std::string get(char c, const std::string& fallback = {}) const;
    // The option as an integer; kInvalidArgument naming the option when it is not one.
    Result<int64_t> get_int(char c, int64_t fallback) const;
    // "true"/"false" (any case); kInvalidArgument otherwise.
    Result<bool> get_bool(char c, bool fallback) const;
    void set(char c, std::string v) { values_[c] = std::move(v); }
    // Positional words (none of RocketMQ's commands take any; kept for clear errors).
    std::vector<std::string> rest;

private:
    std::map<char, std::string> values_;
};

// The options every sub-command accepts (-h help, -n namesrvAddr).
std::vector<OptionSpec> common_options();

// Parses `args` (the words after the sub-command name) against `specs` + common_options().
// Errors (kInvalidArgument): unknown option, missing argument, missing required option (unless
// -h was given), positional words.
Result<ParsedOptions> parse_options(const std::vector<OptionSpec>& specs,
                                    const std::vector<std::string>& args);

// "usage: mqadmin <cmd> [-h] -n <arg> ..." followed by one aligned line per option.
std::string format_usage(std::string_view command, const std::vector<OptionSpec>& specs);

}  // namespace comet::mqadmin
