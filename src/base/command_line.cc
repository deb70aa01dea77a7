#include "base/command_line.h"

#include <cstdio>
#include <string_view>

namespace comet {

namespace {

constexpr int kExitUsage = 2;

std::string program_name(int argc, const char* const* argv) {
    if (argc < 1 || argv[0] == nullptr) {
        return "comet";
    }
    std::string_view p = argv[0];
    size_t slash = p.rfind('/');
    return std::string(slash == std::string_view::npos ? p : p.substr(slash + 1));
}

}  // namespace

std::string command_line_usage(const std::string& program, const ConfigRegistry& registry) {
    std::string out = fmt::format(
        "usage: {} [-c FILE] [-n ADDR] [-p] [-m] [--key=value ...] [-h]\n"
        "  -c FILE         properties file (key=value lines, # comments)\n"
        "  -n ADDR         name server address list, e.g. 127.0.0.1:9876;127.0.0.2:9876\n"
        "  -p              print every effective key=value and exit\n"
        "  -m              print only the important keys and exit\n"
        "  --key=value     override one key (wins over the file)\n"
        "  -h, --help      this help\n"
        "keys:\n",
        program);
    for (const ConfigField* f : registry.fields()) {
        std::string type(config_type_name(f->type()));
        if (f->type() == ConfigType::kEnum) {
            type.clear();
            for (const std::string& n : f->enum_names()) {
                type += type.empty() ? n : "|" + n;
            }
        }
        out += fmt::format("  {} ({}, default {}){}{}{}\n", f->name(), type,
                           f->default_text().empty() ? "\"\"" : f->default_text(),
                           f->is_important() ? " [important]" : "",
                           f->is_runtime_updatable() ? " [runtime]" : "",
                           f->description().empty() ? "" : ": " + f->description());
    }
    return out;
}

Result<ParsedCommandLine> parse_command_line(int argc, const char* const* argv,
                                             ConfigRegistry& registry) {
    const std::string program = program_name(argc, argv);
    ParsedCommandLine parsed;
    std::optional<std::string> namesrv_addr;
    std::vector<PropertyEntry> overrides;
    bool print_all = false;
    bool print_important = false;

    auto missing_argument = [&](std::string_view opt) {
        return Status::error(Errc::kInvalidArgument, "{}: option {} needs an argument", program,
                             opt);
    };
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i] == nullptr ? std::string_view() : argv[i];
        if (arg == "-h" || arg == "--help") {
            parsed.action = ParsedCommandLine::Action::kHelp;
            parsed.output = command_line_usage(program, registry);
            return parsed;
        }
        if (arg == "-p" || arg == "--printConfigItem") {
            print_all = true;
        } else if (arg == "-m" || arg == "--printImportantConfig") {
            print_important = true;
        } else if (arg == "-c" || arg == "-n") {
            if (i + 1 >= argc || argv[i + 1] == nullptr) {
                return missing_argument(arg);
            }
            (arg == "-c" ? parsed.config_file : namesrv_addr.emplace()) = argv[++i];
        } else if (arg.size() > 2 && (arg.starts_with("-c") || arg.starts_with("-n")) &&
                   arg[1] != '-') {
            (arg[1] == 'c' ? parsed.config_file : namesrv_addr.emplace()) = arg.substr(2);
        } else if (arg.starts_with("--configFile=")) {
            parsed.config_file = arg.substr(std::string_view("--configFile=").size());
        } else if (arg.starts_with("--") && arg.size() > 2) {
            const size_t eq = arg.find('=');
            if (eq == std::string_view::npos) {
                return Status::error(Errc::kInvalidArgument,
                                     "{}: option {} must be written --key=value", program, arg);
            }
            std::string key(arg.substr(2, eq - 2));
            if (!registry.contains(key)) {
                return Status::error(Errc::kInvalidArgument,
                                     "{}: unknown config key '{}' on the command line "
                                     "(-h lists the keys)",
                                     program, key);
            }
            overrides.push_back(
                PropertyEntry{std::move(key), std::string(arg.substr(eq + 1)), "command line", 0});
        } else {
            return Status::error(Errc::kInvalidArgument, "{}: unknown option '{}' (-h for help)",
                                 program, arg);
        }
    }

    if (!parsed.config_file.empty()) {
        COMET_ASSIGN_OR_RETURN(std::vector<PropertyEntry> entries,
                               load_properties_file(parsed.config_file));
        COMET_RETURN_IF_ERROR(registry.update(entries, &parsed.warnings));
    }
    COMET_RETURN_IF_ERROR(registry.update(overrides, nullptr));
    if (namesrv_addr) {
        if (registry.contains("namesrvAddr")) {
            COMET_RETURN_IF_ERROR(registry.set("namesrvAddr", *namesrv_addr, "command line -n"));
        } else {
            parsed.warnings.push_back(
                fmt::format("option -n ignored: {} has no namesrvAddr setting", program));
        }
    }
    if (print_all) {
        parsed.action = ParsedCommandLine::Action::kPrintAll;
        parsed.output = registry.to_properties_text();
    } else if (print_important) {
        parsed.action = ParsedCommandLine::Action::kPrintImportant;
        parsed.output = registry.important_properties_text();
    }
    return parsed;
}

CommandLineOutcome evaluate_command_line(int argc, const char* const* argv,
                                         ConfigRegistry& registry) {
    CommandLineOutcome outcome;
    Result<ParsedCommandLine> r = parse_command_line(argc, argv, registry);
    if (!r.is_ok()) {
        outcome.exit_code = kExitUsage;
        outcome.err_text = fmt::format("ERROR: {}\n", r.status().message());
        return outcome;
    }
    outcome.parsed = std::move(r).value();
    for (const std::string& w : outcome.parsed.warnings) {
        outcome.err_text += fmt::format("WARNING: {}\n", w);
    }
    if (outcome.parsed.action != ParsedCommandLine::Action::kRun) {
        outcome.exit_code = 0;
        outcome.out_text = outcome.parsed.output;
    }
    return outcome;
}

std::optional<int> handle_command_line(int argc, const char* const* argv, ConfigRegistry& registry,
                                       ParsedCommandLine* parsed) {
    CommandLineOutcome outcome = evaluate_command_line(argc, argv, registry);
    if (!outcome.err_text.empty()) {
        std::fputs(outcome.err_text.c_str(), stderr);
        std::fflush(stderr);
    }
    if (!outcome.out_text.empty()) {
        std::fputs(outcome.out_text.c_str(), stdout);
        std::fflush(stdout);
    }
    if (parsed != nullptr) {
        *parsed = std::move(outcome.parsed);
    }
    return outcome.exit_code;
}

}  // namespace comet
