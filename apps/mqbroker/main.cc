// mqbroker: the Comet broker. Usage:
//   mqbroker [-c broker.conf] [-n namesrvAddr] [--key=value ...] [-p | -m | -h]
// Keys are RocketMQ's broker properties (BrokerConfig and MessageStoreConfig names); --key=value
// wins over the file, -n over both. -p prints every effective property, -m the important ones.
// Stops cleanly on SIGINT / SIGTERM (flush, unregister, no abort file). Exit status: 0 normal,
// 1 start-up failure, 2 bad arguments.

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "base/logging.h"
#include "broker/broker_config.h"
#include "broker/broker_controller.h"
#include "broker/json_file.h"

namespace {

constexpr const char* kUsage =
    "usage: mqbroker [-c configFile] [-n namesrvAddr] [--key=value ...] [-p] [-m] [-h]\n"
    "  -c FILE   broker properties file (brokerClusterName, brokerName, listenPort, ...)\n"
    "  -n ADDR   name server address list, 'host:9876;host2:9876'\n"
    "  -p        print every effective property and exit\n"
    "  -m        print the important properties and exit\n";

int usage_error(const std::string& why) {
    std::fprintf(stderr, "ERROR: %s\n%s", why.c_str(), kUsage);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace comet;
    std::string config_file;
    std::string namesrv;
    std::map<std::string, std::string> overrides;
    bool print_all = false;
    bool print_important = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::printf("%s", kUsage);
            return 0;
        } else if (a == "-p" || a == "--printConfigItem") {
            print_all = true;
        } else if (a == "-m" || a == "--printImportantConfig") {
            print_important = true;
        } else if (a == "-c" || a == "-n") {
            if (i + 1 >= argc) {
                return usage_error(a + " needs an argument");
            }
            (a == "-c" ? config_file : namesrv) = argv[++i];
        } else if (a.rfind("-c", 0) == 0 && a.size() > 2 && a[2] != '-') {
            config_file = a.substr(2);
        } else if (a.rfind("--configFile=", 0) == 0) {
            config_file = a.substr(std::strlen("--configFile="));
        } else if (a.rfind("-n", 0) == 0 && a.size() > 2) {
            namesrv = a.substr(2);
        } else if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
            const size_t eq = a.find('=');
            overrides[a.substr(2, eq - 2)] = a.substr(eq + 1);
        } else {
            return usage_error("unknown option " + a);
        }
    }

    broker::BrokerConfig config;
    if (!config_file.empty()) {
        auto text = broker::read_file(config_file);
        if (!text.is_ok()) {
            return usage_error("config file: " + text.status().message());
        }
        auto props = broker::parse_properties(text.value());
        if (!props.is_ok()) {
            return usage_error(config_file + ": " + props.status().message());
        }
        if (Status st = config.apply(props.value()); !st.is_ok()) {
            return usage_error(config_file + ": " + st.message());
        }
    }
    if (Status st = config.apply(overrides); !st.is_ok()) {
        return usage_error("command line: " + st.message());
    }
    if (!namesrv.empty()) {
        config.namesrv_addr = namesrv;
    }
    if (Status st = config.validate(); !st.is_ok()) {
        return usage_error(st.message());
    }
    if (print_all || print_important) {
        static const char* kImportant[] = {"brokerClusterName", "brokerName", "brokerId",
                                           "listenPort", "namesrvAddr", "brokerIP1",
                                           "storePathRootDir", "brokerRole", "flushDiskType",
                                           "autoCreateTopicEnable"};
        const auto props = config.to_properties();
        for (const auto& [k, v] : props) {
            bool important = false;
            for (const char* name : kImportant) {
                important = important || k == name;
            }
            if (print_all || important) {
                std::printf("%s=%s\n", k.c_str(), v.c_str());
            }
        }
        return 0;
    }

    // Threads started from here on inherit the blocked set; main waits for the signal.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    signal(SIGPIPE, SIG_IGN);

    LogOptions log;
    log.component = "broker";
    log.dir = config.log_dir;
    init_logging(log);
    if (!config_file.empty()) {
        spdlog::info("config file {} loaded", config_file);
    }
    spdlog::info("effective config:\n{}", broker::properties_to_string(config.to_properties()));

    broker::BrokerController controller(config);
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

    int sig = 0;
    sigwait(&signals, &sig);
    spdlog::info("received signal {}, shutting down", sig);
    controller.shutdown();
    spdlog::shutdown();
    return 0;
}
