// mqcontroller: a member of Comet's controller group (controller mode, docs/controller.md).
// Usage: mqcontroller [-c controller.conf] [--key=value ...] [-p|-m|-h]
// Stops cleanly on SIGINT / SIGTERM. Exit status: 0 normal, 1 start-up failure, 2 bad arguments
// or a configuration that cannot work (the message names the key).

#include <cstdio>

#include "base/command_line.h"
#include "base/config.h"
#include "base/logging.h"
#include "base/stop_signals.h"
#include "controller_server/controller_config.h"
#include "controller_server/controller_server.h"

int main(int argc, char** argv) {
    using namespace comet;
    controller::ControllerConfig config;
    ConfigRegistry registry;
    controller::register_controller_config(registry, &config);
    ParsedCommandLine parsed;
    if (auto code = handle_command_line(argc, argv, registry, &parsed)) {
        return *code;
    }
    std::vector<std::string> warnings = parsed.warnings;
    auto peers = controller::resolve_controller_peers(config, &warnings);
    const std::string where = parsed.config_file.empty() ? "the command line" : parsed.config_file;
    if (!peers.is_ok()) {
        std::fprintf(stderr, "ERROR: %s (in %s)\n", peers.status().message().c_str(),
                     where.c_str());
        return 2;
    }

    // Before any thread starts: they inherit the blocked set (base/stop_signals.h).
    StopSignals stop_signals;

    LogOptions log;
    log.component = "controller";
    log.dir = config.log_dir;
    log.level = config.log_level;
    init_logging(log);
    for (const std::string& w : warnings) {
        spdlog::warn("{}", w);
    }
    if (!parsed.config_file.empty()) {
        spdlog::info("config file {} loaded", parsed.config_file);
    }
    spdlog::info("effective config:\n{}", registry.to_properties_text());
    registry.seal();

    controller::ControllerServer server(config, std::move(peers).value(), &registry);
    if (Status st = server.start(); !st.is_ok()) {
        spdlog::error("controller start failed: {}", st.message());
        std::fprintf(stderr, "ERROR: %s\n", st.message().c_str());
        return 1;
    }
    const std::string boot = fmt::format("The controller {} of group {} boot success, port {}",
                                         config.self_id, config.group, server.port());
    spdlog::info("{}", boot);
    std::printf("%s\n", boot.c_str());
    std::fflush(stdout);

    const int sig = stop_signals.wait();
    spdlog::info("received signal {}, shutting down", sig);
    server.shutdown();
    spdlog::shutdown();
    return 0;
}
