#include "mqadmin/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace comet::mqadmin {

std::string ParsedOptions::get(char c, const std::string& fallback) const {
    auto it = values_.find(c);
    return it == values_.end() ? fallback : it->second;
}

Result<int64_t> ParsedOptions::get_int(char c, int64_t fallback) const {
    auto it = values_.find(c);
    if (it == values_.end()) {
        return fallback;
    }
    const std::string& s = it->second;
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || s.empty()) {
        return Status::error(Errc::kInvalidArgument, "option -{} wants an integer, got '{}'", c, s);
    }
    return v;
}

Result<bool> ParsedOptions::get_bool(char c, bool fallback) const {
    auto it = values_.find(c);
    if (it == values_.end()) {
        return fallback;
    }
    std::string s = it->second;
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (s == "true") {
        return true;
    }
    if (s == "false") {
        return false;
    }
    return Status::error(Errc::kInvalidArgument, "option -{} wants true or false, got '{}'", c,
                         it->second);
}

std::vector<OptionSpec> common_options() {
    return {{'h', "help", false, false, "Print help"},
            {'n', "namesrvAddr", true, false,
             "Name server address list, eg: '192.168.0.1:9876;192.168.0.2:9876' "
             "(default: $NAMESRV_ADDR)"}};
}

Result<ParsedOptions> parse_options(const std::vector<OptionSpec>& specs,
                                    const std::vector<std::string>& args) {
    std::vector<OptionSpec> all = common_options();
    all.insert(all.end(), specs.begin(), specs.end());
    auto find_short = [&](char c) -> const OptionSpec* {
        for (const auto& o : all) {
            if (o.short_name == c) {
                return &o;
            }
        }
        return nullptr;
    };
    auto find_long = [&](std::string_view name) -> const OptionSpec* {
        for (const auto& o : all) {
            if (o.long_name == name) {
                return &o;
            }
        }
        return nullptr;
    };

    ParsedOptions out;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        const OptionSpec* spec = nullptr;
        std::string inline_value;
        bool has_inline = false;
        if (a.size() > 2 && a.compare(0, 2, "--") == 0) {
            std::string name = a.substr(2);
            size_t eq = name.find('=');
            if (eq != std::string::npos) {
                inline_value = name.substr(eq + 1);
                name.resize(eq);
                has_inline = true;
            }
            spec = find_long(name);
            if (spec == nullptr) {
                return Status::error(Errc::kInvalidArgument, "unknown option --{}", name);
            }
        } else if (a.size() >= 2 && a[0] == '-' &&
                   !std::isdigit(static_cast<unsigned char>(a[1]))) {
            spec = find_short(a[1]);
            if (spec == nullptr) {
                return Status::error(Errc::kInvalidArgument, "unknown option -{}", a[1]);
            }
            if (a.size() > 2) {  // "-tTopic" like commons-cli
                inline_value = a.substr(2);
                has_inline = true;
            }
        } else {
            out.rest.push_back(a);
            continue;
        }
        if (!spec->has_arg) {
            if (has_inline) {
                return Status::error(Errc::kInvalidArgument, "option -{} takes no value",
                                     spec->short_name);
            }
            out.set(spec->short_name, "true");
            continue;
        }
        if (has_inline) {
            out.set(spec->short_name, inline_value);
            continue;
        }
        if (i + 1 >= args.size()) {
            return Status::error(Errc::kInvalidArgument, "missing argument for option -{} ({})",
                                 spec->short_name, spec->long_name);
        }
        out.set(spec->short_name, args[++i]);
    }
    if (!out.rest.empty()) {
        return Status::error(Errc::kInvalidArgument, "unexpected argument '{}'", out.rest[0]);
    }
    if (!out.has('h')) {
        for (const auto& o : specs) {
            if (o.required && !out.has(o.short_name)) {
                return Status::error(Errc::kInvalidArgument, "missing required option: -{} ({})",
                                     o.short_name, o.long_name);
            }
        }
    }
    return out;
}

std::string format_usage(std::string_view command, const std::vector<OptionSpec>& specs) {
    std::vector<OptionSpec> all = common_options();
    all.insert(all.end(), specs.begin(), specs.end());
    std::string line = fmt::format("usage: mqadmin {}", command);
    for (const auto& o : all) {
        std::string item = fmt::format("-{}{}", o.short_name, o.has_arg ? " <arg>" : "");
        line += o.required ? fmt::format(" {}", item) : fmt::format(" [{}]", item);
    }
    size_t width = 0;
    for (const auto& o : all) {
        width = std::max(width, o.long_name.size());
    }
    std::string out = line + "\n";
    for (const auto& o : all) {
        out += fmt::format(" -{},--{:<{}} {}{}\n", o.short_name, o.long_name, width + 1, o.help,
                           o.required ? " (required)" : "");
    }
    return out;
}

}  // namespace comet::mqadmin
