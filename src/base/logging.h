#pragma once
// Logging on spdlog. Each binary calls init_logging() once at start: a console sink plus a
// rotating file <dir>/<component>.log (RocketMQ keeps ~/logs/rocketmqlogs/; Comet keeps
// ~/logs/comet/ unless `logDir` says otherwise). Libraries log through spdlog's default logger.

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace comet {

struct LogOptions {
    std::string component = "comet";  // file name stem: broker, namesrv, controller, ...
    std::string dir;                  // empty: $HOME/logs/comet
    bool console = true;
    bool file = true;
    std::string level = "info";  // trace, debug, info, warn, error, critical, off
};

// Safe to call more than once (the last call wins). Never throws; a file sink that cannot be
// opened is reported on stderr and logging continues on the console.
void init_logging(const LogOptions& options);

// Comet's line format: time, level, [thread id], the broker's tag when the thread works for a
// broker of a container (" [cluster:name:id]", base/log_tag.h), the message. For loggers built
// elsewhere (the dev mode's).
std::unique_ptr<spdlog::formatter> make_log_formatter();

// Default log directory: $HOME/logs/comet (or ./logs/comet when HOME is unset).
std::string default_log_dir();

}  // namespace comet
