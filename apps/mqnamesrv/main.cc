// mqnamesrv: the Comet name server. Usage: mqnamesrv [-c namesrv.conf] [--key=value ...] [-p|-m|-h]
// With enableControllerInNamesrv=true (RocketMQ 5's embedded controller, NamesrvStartup) the
// process also runs one member of the controller group (src/controller_server) from the
// controller keys of the same -c file. As in RocketMQ the controller serves on its own
// controllerDLegerPeers port, not on listenPort: that port answers the name server's requests
// only (docs/controller.md, "The controller inside the name server"). The command line sets name
// server keys only, as RocketMQ's does.
// Start: name server, then controller; shutdown in the reverse order.
// Stops cleanly on SIGINT / SIGTERM. Exit status: 0 normal, 1 start-up failure, 2 bad arguments
// or a configuration that cannot work (the message names the key and the file).

#include <cstdio>
#include <memory>

#include "base/command_line.h"
#include "base/config.h"
#include "base/logging.h"
#include "base/properties.h"
#include "base/stop_signals.h"
#include "controller_server/controller_config.h"
#include "controller_server/controller_server.h"
#include "namesrv/namesrv_config.h"
#include "namesrv/namesrv_controller.h"

namespace {

using namespace comet;

// The embedded controller's settings, read from the name server's file.
struct EmbeddedController {
    controller::ControllerConfig config;
    ConfigRegistry registry;  // GET/UPDATE_CONTROLLER_CONFIG answer from it
    controller::ControllerPeers peers;
};

// Applies the controller keys of `file` (empty: none) to `ctl` and checks them. Keys both
// registries know (scanNotActiveBrokerInterval, listenHost, logDir, logLevel) set both, as
// RocketMQ's properties2Object does. Errors (kInvalidArgument) name the key and the file.
Status load_embedded_controller(const std::string& file, const namesrv::NamesrvConfig& ns,
                                EmbeddedController* ctl, std::vector<std::string>* warnings) {
    const std::string where = file.empty() ? "the command line (no -c file)" : file;
    if (!file.empty()) {
        COMET_ASSIGN_OR_RETURN(std::vector<PropertyEntry> entries, load_properties_file(file));
        COMET_RETURN_IF_ERROR(ctl->registry.update(entries, warnings));
    }
    auto peers = controller::resolve_controller_peers(ctl->config, warnings);
    if (!peers.is_ok()) {
        return Status::error(Errc::kInvalidArgument, "enableControllerInNamesrv=true: {} (in {})",
                             peers.status().message(), where);
    }
    ctl->peers = std::move(peers).value();
    // The metrics keys of the shared file belong to the name server, whose /metrics serves
    // this process (docs/metrics.md).
    ctl->config.metrics_port = 0;
    ctl->config.metrics_exporter_type = "DISABLE";
    if (ctl->peers.self->port == ns.listen_port) {
        return Status::error(Errc::kInvalidArgument,
                             "enableControllerInNamesrv=true: controllerDLegerPeers gives {} the "
                             "port {}, which is listenPort; the embedded controller needs a port "
                             "of its own (in {})",
                             ctl->config.self_id, ns.listen_port, where);
    }
    return Status::ok();
}

// Controller keys in a file whose name server does not run the controller: say they are unused
// (before share_file_with() they were warned about as unknown keys).
void warn_unused_controller_keys(const std::string& file, const ConfigRegistry& ns,
                                 const ConfigRegistry& ctl, std::vector<std::string>* warnings) {
    auto entries = load_properties_file(file);
    if (!entries.is_ok()) {
        return;
    }
    for (const PropertyEntry& e : *entries) {
        if (ctl.contains(e.key) && !ns.contains(e.key)) {
            warnings->push_back(
                fmt::format("controller key '{}' at {} ignored: enableControllerInNamesrv is false",
                            e.key, e.location()));
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    namesrv::NamesrvConfig config;
    ConfigRegistry registry;
    namesrv::register_namesrv_config(registry, &config);
    EmbeddedController ctl;
    controller::register_controller_config(ctl.registry, &ctl.config);
    registry.share_file_with(ctl.registry);
    ctl.registry.share_file_with(registry);
    CommandLineOutcome outcome = evaluate_command_line(argc, argv, registry);
    std::fputs(outcome.err_text.c_str(), stderr);
    if (outcome.exit_code.has_value() && *outcome.exit_code != 0) {
        return *outcome.exit_code;
    }
    const ParsedCommandLine& parsed = outcome.parsed;
    std::vector<std::string> warnings = parsed.warnings;
    if (config.enable_controller_in_namesrv) {
        if (Status st = load_embedded_controller(parsed.config_file, config, &ctl, &warnings);
            !st.is_ok()) {
            std::fprintf(stderr, "ERROR: %s\n", st.message().c_str());
            return 2;
        }
    } else if (!parsed.config_file.empty()) {
        warn_unused_controller_keys(parsed.config_file, registry, ctl.registry, &warnings);
    }
    if (outcome.exit_code.has_value()) {  // -p, -m, -h: RocketMQ's -p adds the controller's keys
        std::fputs(outcome.out_text.c_str(), stdout);
        using Action = ParsedCommandLine::Action;
        if (config.enable_controller_in_namesrv && parsed.action != Action::kHelp) {
            std::printf("# embedded controller (enableControllerInNamesrv=true)\n%s",
                        parsed.action == Action::kPrintAll
                            ? ctl.registry.to_properties_text().c_str()
                            : ctl.registry.important_properties_text().c_str());
        }
        return 0;
    }

    // Before any thread starts: they inherit the blocked set (base/stop_signals.h).
    StopSignals stop_signals;

    LogOptions log;
    log.component = "namesrv";
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
    if (config.enable_controller_in_namesrv) {
        spdlog::info("embedded controller config:\n{}", ctl.registry.to_properties_text());
        ctl.registry.seal();
    }

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

    std::unique_ptr<controller::ControllerServer> embedded;
    if (config.enable_controller_in_namesrv) {
        embedded = std::make_unique<controller::ControllerServer>(ctl.config, std::move(ctl.peers),
                                                                  &ctl.registry);
        if (Status st = embedded->start(); !st.is_ok()) {
            spdlog::error("embedded controller start failed: {}", st.message());
            std::fprintf(stderr, "ERROR: embedded controller: %s\n", st.message().c_str());
            controller.shutdown();
            return 1;
        }
        const std::string tip =
            fmt::format("The ControllerManager boot success. controller {} of group {}, port {}",
                        ctl.config.self_id, ctl.config.group, embedded->port());
        spdlog::info("{}", tip);
        std::printf("%s\n", tip.c_str());
        std::fflush(stdout);
    }

    const int sig = stop_signals.wait();
    spdlog::info("received signal {}, shutting down", sig);
    if (embedded) {
        embedded->shutdown();
        spdlog::info("embedded controller shut down");
    }
    controller.shutdown();
    spdlog::shutdown();
    return 0;
}
