// mqnamesrv: the Comet name server. Usage: mqnamesrv [-c namesrv.conf] [--key=value ...] [-p|-m|-h]
// Stops cleanly on SIGINT / SIGTERM. Exit status: 0 normal, 1 start-up failure, 2 bad arguments.

#include <pthread.h>
#include <signal.h>

#include <cstdio>

#include "base/command_line.h"
#include "base/config.h"
#include "base/logging.h"
#include "namesrv/namesrv_config.h"
#include "namesrv/namesrv_controller.h"

int main(int argc, char** argv) {
    using namespace comet;
    namesrv::NamesrvConfig config;
    ConfigRegistry registry;
    namesrv::register_namesrv_config(registry, &config);
    ParsedCommandLine parsed;
    if (auto code = handle_command_line(argc, argv, registry, &parsed)) {
        return *code;
    }

    // Every thread started from here on inherits the blocked set; main waits for the signal.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    LogOptions log;
    log.component = "namesrv";
    log.dir = config.log_dir;
    log.level = config.log_level;
    init_logging(log);
    for (const std::string& w : parsed.warnings) {
        spdlog::warn("{}", w);
    }
    if (!parsed.config_file.empty()) {
        spdlog::info("config file {} loaded", parsed.config_file);
    }
    spdlog::info("effective config:\n{}", registry.to_properties_text());
    registry.seal();

    namesrv::NamesrvController controller(config, registry);
    if (Status st = controller.initialize(); !st.is_ok()) {
        spdlog::error("name server initialize failed: {}", st.message());
        std::fprintf(stderr, "ERROR: %s\n", st.message().c_str());
        return 1;
    }
    if (Status st = controller.start(); !st.is_ok()) {
        spdlog::error("name server start failed: {}", st.message());
        std::fprintf(stderr, "ERROR: %s\n", st.message().c_str());
        return 1;
    }
    const std::string host = config.listen_host.empty() || config.listen_host == "0.0.0.0"
                                 ? "127.0.0.1"
                                 : config.listen_host;
    const std::string boot = fmt::format(
        "The Name Server boot success. serializeType=JSON, address {}:{}", host, controller.port());
    spdlog::info("{}", boot);
    std::printf("%s\n", boot.c_str());
    std::fflush(stdout);

    int sig = 0;
    sigwait(&signals, &sig);
    spdlog::info("received signal {}, shutting down", sig);
    controller.shutdown();
    spdlog::shutdown();
    return 0;
}
