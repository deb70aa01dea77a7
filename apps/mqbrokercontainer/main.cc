// mqbrokercontainer: several brokers in one process (RocketMQ 5 BrokerContainerStartup,
// RIP-31). Usage:
//   mqbrokercontainer [-c broker-container.conf] [-n namesrvAddr] [--key=value ...] [-p | -m | -h]
// Container keys: brokerConfigPaths (each broker's properties file, ':'-separated), listenPort
// (the container's admin port, default 10811), namesrvAddr, listenHost, logDir
// (docs/container.md). Each broker listens on the listenPort of its own file.
// Start: the admin port, then each broker in the listed order. A broker that cannot start is
// reported (log and one stderr line naming its file and the reason) and left out. Stops
// cleanly on SIGINT / SIGTERM (every broker unregisters, flushes, leaves no abort file).
// Exit status: 0 normal, 1 the admin port could not be bound or no listed broker started,
// 2 bad arguments or container settings.
//
// Dev mode (`make run`'s default): mqbrokercontainer --dev [--dev-dir DIR] [--dev-port BASE]
// runs a name server and a 3-peer DLedger group in this process on 127.0.0.1, prints a banner
// once the group has a leader registered, and stops on SIGINT / SIGTERM (src/container/
// dev_cluster.h, docs/container.md "Dev mode"). Exit status: 0 after a signal, 1 when it could
// not start or elect a leader, 2 bad arguments.

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "base/command_line.h"
#include "base/config.h"
#include "base/logging.h"
#include "base/stop_signals.h"
#include "container/broker_container.h"
#include "container/container_config.h"
#include "container/dev_cluster.h"

namespace {

// The apps/ directory of this build (where mqadmin/mqadmin and mqbench/mqbench are), relative
// to the working directory when below it, or "" when the tools are not next to this binary.
std::string tools_dir() {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) {
        return "";
    }
    const fs::path apps = exe.parent_path().parent_path();
    if (!fs::exists(apps / "mqadmin" / "mqadmin", ec)) {
        return "";
    }
    const fs::path rel = apps.lexically_relative(fs::current_path(ec));
    return !ec && !rel.empty() && *rel.begin() != ".." ? rel.string() : apps.string();
}

}  // namespace

int main(int argc, char** argv) {
    using namespace comet;
    const std::vector<std::string> args(argv + 1, argv + argc);
    auto dev = container::parse_dev_args(args);
    if (!dev.is_ok()) {
        std::fprintf(stderr, "ERROR: %s\n%s", dev.status().message().c_str(),
                     container::dev_usage().c_str());
        return 2;
    }
    if (dev->dev) {
        StopSignals stop_signals;  // before any thread starts (base/stop_signals.h)
        return container::run_dev_cluster(dev->options, tools_dir());
    }

    container::BrokerContainerConfig config;
    ConfigRegistry registry;
    container::register_container_config(registry, &config);
    ParsedCommandLine parsed;
    if (auto code = handle_command_line(argc, argv, registry, &parsed)) {
        for (const std::string& a : args) {
            if (*code == 0 && (a == "-h" || a == "--help")) {
                std::printf("\n%s", container::dev_usage().c_str());
            }
        }
        return *code;
    }
    const std::vector<std::string> paths =
        container::split_broker_config_paths(config.broker_config_paths);

    // Before any thread starts: they inherit the blocked set (base/stop_signals.h).
    StopSignals stop_signals;

    // One log for the whole process: the brokers' own logDir keys are not used here.
    LogOptions log;
    log.component = "container";
    log.dir = config.log_dir;
    init_logging(log);
    for (const std::string& w : parsed.warnings) {
        spdlog::warn("{}", w);
    }
    if (!parsed.config_file.empty()) {
        spdlog::info("container config file {} loaded", parsed.config_file);
    }
    spdlog::info("effective container config:\n{}", registry.to_properties_text());
    registry.seal();

    container::BrokerContainer box(config);
    if (Status st = box.start(); !st.is_ok()) {
        spdlog::error("broker container start failed: {}", st.message());
        std::fprintf(stderr, "ERROR: %s\n", st.message().c_str());
        return 1;
    }
    std::printf("The broker container boot success. serializeType=JSON and name server is %s\n",
                config.namesrv_addr.c_str());
    std::fflush(stdout);

    size_t started = 0;
    for (const std::string& path : paths) {
        std::printf("Start broker from config file path %s\n", path.c_str());
        auto info = box.add_broker(path);
        if (!info.is_ok()) {
            // The message starts with the path and says why (bad key, store, port...).
            spdlog::error("broker not started: {}", info.status().message());
            std::fprintf(stderr, "ERROR: broker not started: %s\n",
                         info.status().message().c_str());
            continue;
        }
        ++started;
        std::printf("Broker [%s-%lld] boot success on port %u. serializeType=JSON\n",
                    info->identity.broker_name.c_str(),
                    static_cast<long long>(info->identity.broker_id),
                    static_cast<unsigned>(info->port));
        std::fflush(stdout);
    }
    std::fflush(stderr);
    if (!paths.empty() && started == 0) {
        spdlog::error("no broker of brokerConfigPaths could start; the container exits");
        std::fprintf(stderr, "ERROR: no broker could start\n");
        box.shutdown();
        spdlog::shutdown();
        return 1;
    }
    if (paths.empty()) {
        spdlog::warn("brokerConfigPaths is empty: the container waits for ADD_BROKER");
    }
    spdlog::info("broker container running {} of {} listed brokers", started, paths.size());

    const int sig = stop_signals.wait();
    spdlog::info("received signal {}, shutting down", sig);
    box.shutdown();
    spdlog::shutdown();
    return 0;
}
