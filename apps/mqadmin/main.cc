// mqadmin: RocketMQ-style admin tool for Comet (and RocketMQ) clusters. Usage:
//   mqadmin <command> [-n namesrvAddr] [options]      mqadmin help [command]
// The name server address comes from -n, else $NAMESRV_ADDR. The client library's own log
// lines go to stderr at level $MQADMIN_LOG_LEVEL (default "error"), never to stdout, so the
// tables stay parseable.

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "mqadmin/commands.h"

int main(int argc, char** argv) {
    std::signal(SIGPIPE, SIG_IGN);
    auto logger = spdlog::stderr_color_mt("mqadmin");
    const char* level = std::getenv("MQADMIN_LOG_LEVEL");
    logger->set_level(spdlog::level::from_str(level != nullptr ? level : "error"));
    spdlog::set_default_logger(logger);
    return comet::mqadmin::run_mqadmin(argc, argv, stdout, stderr);
}
