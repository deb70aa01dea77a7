#include "base/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "base/log_tag.h"

namespace comet {
namespace {

// %* in the pattern: " [<tag>]" for a thread working for a tagged broker (base/log_tag.h).
class LogTagFlag final : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg&, const std::tm&,
                spdlog::memory_buf_t& dest) override {
        if (const std::string* tag = current_log_tag()) {
            dest.push_back(' ');
            dest.push_back('[');
            dest.append(tag->data(), tag->data() + tag->size());
            dest.push_back(']');
        }
    }
    std::unique_ptr<custom_flag_formatter> clone() const override {
        return std::make_unique<LogTagFlag>();
    }
};

}  // namespace

std::unique_ptr<spdlog::formatter> make_log_formatter() {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<LogTagFlag>('*').set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ [%t]%* %v");
    return formatter;
}

std::string default_log_dir() {
    const char* home = std::getenv("HOME");
    std::filesystem::path base = home != nullptr && *home != '\0' ? home : ".";
    return (base / "logs" / "comet").string();
}

void init_logging(const LogOptions& options) {
    std::vector<spdlog::sink_ptr> sinks;
    if (options.console) {
        sinks.push_back(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    }
    if (options.file) {
        const std::string dir = options.dir.empty() ? default_log_dir() : options.dir;
        try {
            std::filesystem::create_directories(dir);
            sinks.push_back(std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
                dir + "/" + options.component + ".log", 128 * 1024 * 1024, 8));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "logging: cannot open log file in %s: %s\n", dir.c_str(),
                         e.what());
        }
    }
    auto logger = std::make_shared<spdlog::logger>(options.component, sinks.begin(), sinks.end());
    logger->set_level(spdlog::level::from_str(options.level));
    logger->set_formatter(make_log_formatter());
    logger->flush_on(spdlog::level::warn);
    spdlog::set_default_logger(logger);
    spdlog::flush_every(std::chrono::seconds(1));
}

}  // namespace comet
