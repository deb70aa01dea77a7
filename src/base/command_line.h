#pragma once
// The command line every Comet binary shares (RocketMQ's ServerUtil options plus -c/-p/-m):
//   -c FILE | -cFILE | --configFile=FILE   properties file (missing file: error, exit 2)
//   -n ADDR | -nADDR                       namesrvAddr (only for registries that have it;
//                                          elsewhere a warning)
//   -p | --printConfigItem                 print every effective key=value, sorted, exit 0
//   -m | --printImportantConfig            print only the important fields, exit 0
//   --key=value                            override one field (wins over the file)
//   -h | --help                            usage and the list of fields, exit 0
// Order of application: defaults, then the file, then --key=value overrides in argv order, then
// -n. Unknown keys in the file are warnings naming file:line; an unknown --key on the command line
// is an error (a typo there is never intended). Bad values are errors naming key, value and
// file:line or "command line"; every error means exit status 2 and nothing started.
// Thread-compatible; call from main() before any thread starts.

#include <optional>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/status.h"

namespace comet {

struct ParsedCommandLine {
    enum class Action {
        kRun,             // start the program with the registry's values
        kPrintAll,        // -p: print `output`, exit 0
        kPrintImportant,  // -m: print `output`, exit 0
        kHelp,            // -h: print `output`, exit 0
    };
    Action action = Action::kRun;
    std::string config_file;            // empty when -c was not given
    std::vector<std::string> warnings;  // unknown keys in the file, ignored options
    std::string output;                 // text for stdout when action != kRun
};

// Parses argv and applies the file and overrides to `registry`. `program` is used in messages
// and usage. Errors (all kInvalidArgument or kNotFound): unknown option, missing option argument,
// missing/unreadable config file, unknown --key, bad values. On error the registry may hold
// defaults or file values but the caller must not start.
Result<ParsedCommandLine> parse_command_line(int argc, const char* const* argv,
                                             ConfigRegistry& registry);

// What a main() should do after parsing, with the text it should print.
struct CommandLineOutcome {
    std::optional<int> exit_code;  // nullopt: continue starting; otherwise exit with this code
    std::string out_text;          // for stdout (-p, -m, -h)
    std::string err_text;          // for stderr (warnings, errors)
    ParsedCommandLine parsed;      // valid when exit_code is nullopt or 0
};

// Pure form of handle_command_line (tests use it): errors give exit code 2.
CommandLineOutcome evaluate_command_line(int argc, const char* const* argv,
                                         ConfigRegistry& registry);

// For main(): evaluates, writes out_text to stdout and err_text to stderr, and returns the exit
// code to use or nullopt to go on. On nullopt, *parsed (if set) receives the parse result, e.g.
// to log the warnings again once logging is initialised.
std::optional<int> handle_command_line(int argc, const char* const* argv, ConfigRegistry& registry,
                                       ParsedCommandLine* parsed = nullptr);

// Usage text: options and every field with type, default and description.
std::string command_line_usage(const std::string& program, const ConfigRegistry& registry);

}  // namespace comet
