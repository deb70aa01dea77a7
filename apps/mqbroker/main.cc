// mqbroker: the Comet broker. Usage:
//   mqbroker [-c broker.conf] [-n namesrvAddr] [--key=value ...] [-p | -m | -h]
// Keys are RocketMQ's broker properties (BrokerConfig and MessageStoreConfig names), parsed by
// the shared command line (base/command_line.h): --key=value wins over the file, -n over both.
// Stops cleanly on SIGINT / SIGTERM (unregister, flush, no abort file). Exit status: 0 normal,
// 1 start-up failure, 2 bad arguments, 3 DLedger log storage failed (restart it: decision 040).

#include <cstdio>

#include "base/command_line.h"
#include "base/config.h"
#include "base/logging.h"
#include "base/stop_signals.h"
#include "broker/broker_controller.h"
#include "broker/context/store_adapter.h"
#include "broker/metadata/broker_config.h"
#include "broker/replication/replication_service.h"

int main(int argc, char** argv) {
    using namespace comet;
    broker::BrokerConfig config;
    store::MessageStoreConfig store_config;
    ConfigRegistry registry;
    broker::register_broker_config(registry, &config);
    broker::register_store_config(registry, &store_config);
    ParsedCommandLine parsed;
    if (auto code = handle_command_line(argc, argv, registry, &parsed)) {
        return *code;
    }
    // Which keys the file and the command line set decides the quorum rules (docs/durability.md).
    broker::note_keys_set(registry, &config);
    const std::string source =
        parsed.config_file.empty() ? std::string("command line") : parsed.config_file;
    if (Status st = config.validate(); !st.is_ok()) {
        std::fprintf(stderr, "ERROR: %s: %s\n", source.c_str(), st.message().c_str());
        return 2;
    }
    // Replication keys (docs/replication.md): impossible combinations stop the broker here;
    // warnings (SYNC_MASTER with inSyncReplicas=1, ...) are logged loudly by the controller.
    if (auto repl = broker::make_replication_config(config, nullptr); !repl.is_ok()) {
        std::fprintf(stderr, "ERROR: %s: %s\n", source.c_str(), repl.status().message().c_str());
        return 2;
    }

    // Before any thread starts: they inherit the blocked set (base/stop_signals.h).
    StopSignals stop_signals;

    LogOptions log;
    log.component = "broker";
    log.dir = config.log_dir;
    init_logging(log);
    for (const std::string& w : parsed.warnings) {
        spdlog::warn("{}", w);
    }
    if (!parsed.config_file.empty()) {
        spdlog::info("config file {} loaded", parsed.config_file);
    }
    spdlog::info("effective config:\n{}", registry.to_properties_text());
    registry.seal();

    broker::BrokerController controller(config, SystemClock::instance(), store_config);
    if (Status st = controller.initialize(); !st.is_ok()) {
        spdlog::error("broker initialize failed: {}", st.message());
        std::fprintf(stderr, "ERROR: %s\n", st.message().c_str());
        return 1;
    }
    if (Status st = controller.start(); !st.is_ok()) {
        spdlog::error("broker start failed: {}", st.message());
        std::fprintf(stderr, "ERROR: %s\n", st.message().c_str());
        controller.shutdown();
        return 1;
    }
    const std::string boot =
        fmt::format("The broker[{}, {}:{}] boot success. serializeType=JSON and name server is {}",
                    config.broker_name, config.broker_ip1, controller.port(), config.namesrv_addr);
    std::printf("%s\n", boot.c_str());
    std::fflush(stdout);

    const int sig = stop_signals.wait();
    spdlog::info("received signal {}, shutting down", sig);
    controller.shutdown();
    spdlog::shutdown();
    return 0;
}
