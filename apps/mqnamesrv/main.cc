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

// The name server's settings and the embedded controller's, registered with each other: one
// -c file feeds both (each registry knows the other's keys, so neither warns about them).
struct NamesrvSettings {
    NamesrvSettings() {
        namesrv::register_namesrv_config(registry, &config);
        controller::register_controller_config(ctl.registry, &ctl.config);
        registry.share_file_with(ctl.registry);
        ctl.registry.share_file_with(registry);
    }
    namesrv::NamesrvConfig config;
    ConfigRegistry registry;
    EmbeddedController ctl;
};

// With enableControllerInNamesrv=true loads and checks the controller keys of `file`;
// otherwise only warns about them. Errors (kInvalidArgument) name the key and the file.
Status load_controller_settings(const std::string& file, NamesrvSettings& s,
                                std::vector<std::string>* warnings) {
    if (s.config.enable_controller_in_namesrv) {
        return load_embedded_controller(file, s.config, &s.ctl, warnings);
    }
    if (!file.empty()) {
        warn_unused_controller_keys(file, s.registry, s.ctl.registry, warnings);
    }
    return Status::ok();
}

// -p, -m, -h: the name server's text, then (RocketMQ's -p adds them) the controller's keys.
void print_settings(const CommandLineOutcome& outcome, const NamesrvSettings& s) {
    std::fputs(outcome.out_text.c_str(), stdout);
    using Action = ParsedCommandLine::Action;
    const ParsedCommandLine& parsed = outcome.parsed;
    if (s.config.enable_controller_in_namesrv && parsed.action != Action::kHelp) {
        std::printf("# embedded controller (enableControllerInNamesrv=true)\n%s",
                    parsed.action == Action::kPrintAll
                        ? s.ctl.registry.to_properties_text().c_str()
                        : s.ctl.registry.important_properties_text().c_str());
    }
}

// Starts logging, logs the warnings and the effective configuration, then seals the
// registries (from here on only UPDATE_*_CONFIG changes them).
void start_logging(NamesrvSettings& s, const std::string& config_file,
                   const std::vector<std::string>& warnings) {
    LogOptions log;
    log.component = "namesrv";
    log.dir = s.config.log_dir;
    log.level = s.config.log_level;
    init_logging(log);
    for (const std::string& w : warnings) {
        spdlog::warn("{}", w);
    }
    if (!config_file.empty()) {
        spdlog::info("config file {} loaded", config_file);
    }
    spdlog::info("effective config:\n{}", s.registry.to_properties_text());
    s.registry.seal();
    if (s.config.enable_controller_in_namesrv) {
        spdlog::info("embedded controller config:\n{}", s.ctl.registry.to_properties_text());
        s.ctl.registry.seal();
    }
}

// Initializes and starts the name server, then prints its boot line; false (logged and
// printed) on failure.
bool start_name_server(namesrv::NamesrvController& controller,
                       const namesrv::NamesrvConfig& config) {
    if (Status st = controller.initialize(); !st.is_ok()) {
        spdlog::error("name server initialize failed: {}", st.message());
        std::fprintf(stderr, "ERROR: %s\n", st.message().c_str());
        return false;
    }
    if (Status st = controller.start(); !st.is_ok()) {
        spdlog::error("name server start failed: {}", st.message());
        std::fprintf(stderr, "ERROR: %s\n", st.message().c_str());
        return false;
    }
    const std::string host = config.listen_host.empty() || config.listen_host == "0.0.0.0"
                                 ? "127.0.0.1"
                                 : config.listen_host;
    const std::string boot = fmt::format(
        "The Name Server boot success. serializeType=JSON, address {}:{}", host, controller.port());
    spdlog::info("{}", boot);
    std::printf("%s\n", boot.c_str());
    std::fflush(stdout);
    return true;
}

// Starts the embedded controller into *out and prints its boot line; false (logged and
// printed) on failure. Takes the resolved peers out of `ctl`.
bool start_embedded_controller(EmbeddedController& ctl,
                               std::unique_ptr<controller::ControllerServer>* out) {
    *out = std::make_unique<controller::ControllerServer>(ctl.config, std::move(ctl.peers),
                                                          &ctl.registry);
    if (Status st = (*out)->start(); !st.is_ok()) {
        spdlog::error("embedded controller start failed: {}", st.message());
        std::fprintf(stderr, "ERROR: embedded controller: %s\n", st.message().c_str());
        return false;
    }
    const std::string tip =
        fmt::format("The ControllerManager boot success. controller {} of group {}, port {}",
                    ctl.config.self_id, ctl.config.group, (*out)->port());
    spdlog::info("{}", tip);
    std::printf("%s\n", tip.c_str());
    std::fflush(stdout);
    return true;
}

// Runs the name server (and the embedded controller) until SIGINT or SIGTERM; the exit
// status. Start: name server, then controller; shutdown in the reverse order.
int serve(NamesrvSettings& s, StopSignals& stop_signals) {
    namesrv::NamesrvController controller(s.config, s.registry);
    if (!start_name_server(controller, s.config)) {
        return 1;
    }
    std::unique_ptr<controller::ControllerServer> embedded;
    if (s.config.enable_controller_in_namesrv && !start_embedded_controller(s.ctl, &embedded)) {
        controller.shutdown();
        return 1;
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

}  // namespace

int main(int argc, char** argv) {
    NamesrvSettings settings;
    CommandLineOutcome outcome = evaluate_command_line(argc, argv, settings.registry);
    std::fputs(outcome.err_text.c_str(), stderr);
    if (outcome.exit_code.has_value() && *outcome.exit_code != 0) {
        return *outcome.exit_code;
    }
    const ParsedCommandLine& parsed = outcome.parsed;
    std::vector<std::string> warnings = parsed.warnings;
    if (Status st = load_controller_settings(parsed.config_file, settings, &warnings);
        !st.is_ok()) {
        std::fprintf(stderr, "ERROR: %s\n", st.message().c_str());
        return 2;
    }
    if (outcome.exit_code.has_value()) {  // -p, -m, -h
        print_settings(outcome, settings);
        return 0;
    }

    // Before any thread starts: they inherit the blocked set (base/stop_signals.h).
    StopSignals stop_signals;
    start_logging(settings, parsed.config_file, warnings);
    return serve(settings, stop_signals);
}
