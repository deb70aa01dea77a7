// mqdashboard: a live web page of a Comet (RocketMQ-protocol) cluster. Polls the name servers
// and brokers with the admin requests mqadmin uses and serves one embedded HTML page plus JSON
// documents (docs/dashboard.md). Usage:
//   mqdashboard -n 127.0.0.1:9876 [--listenHost 127.0.0.1] [--port 8089] [--pollInterval 1000]
//   mqdashboard -c dashboard.conf   (the same keys as properties; the command line wins)
// Prints the URL it serves on once bound. Stops cleanly on SIGINT / SIGTERM. Exit status: 0
// normal, 1 start-up failure (port taken), 2 bad arguments or no name server.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "base/logging.h"
#include "base/properties.h"
#include "base/stop_signals.h"
#include "dashboard/dashboard_service.h"

namespace {

using namespace comet;

// Applies `file`'s keys to the options the command line left unset. Errors name the key and
// the file:line.
Status apply_config_file(const std::string& file, const CLI::App& app,
                         std::map<std::string, std::string*> keys) {
    COMET_ASSIGN_OR_RETURN(std::vector<PropertyEntry> entries, load_properties_file(file));
    for (const PropertyEntry& e : entries) {
        auto it = keys.find(e.key);
        if (it == keys.end()) {
            return Status::error(Errc::kInvalidArgument, "unknown key '{}' at {}", e.key,
                                 e.location());
        }
        if (app.get_option("--" + e.key)->count() == 0) {
            *it->second = e.value;
        }
    }
    return Status::ok();
}

bool parse_number(const std::string& key, const std::string& text, int64_t lo, int64_t hi,
                  int64_t* out) {
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || v < lo || v > hi) {
        std::fprintf(stderr, "mqdashboard: %s=%s: expected a number in %lld..%lld\n", key.c_str(),
                     text.c_str(), static_cast<long long>(lo), static_cast<long long>(hi));
        return false;
    }
    *out = v;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    dashboard::DashboardOptions o;
    std::string config_file;
    std::string namesrv;
    std::string host = o.listen_host;
    std::string port = std::to_string(o.port);
    std::string poll_ms = std::to_string(o.poll_interval.count());
    std::string timeout_ms = std::to_string(o.rpc_timeout.count());
    std::string log_level = "info";
    CLI::App app{"mqdashboard: live cluster dashboard for Comet"};
    app.add_option("-c,--configFile", config_file,
                   "properties file with any of the keys below (the command line wins)");
    app.add_option("-n,--namesrvAddr", namesrv,
                   "name server address(es), host:port[;host:port] (default $NAMESRV_ADDR)");
    app.add_option("--listenHost", host, "address to serve the page on")->capture_default_str();
    app.add_option("--port", port, "port to serve the page on (0: any free port)")
        ->capture_default_str();
    app.add_option("--pollInterval", poll_ms, "milliseconds between two polls of the cluster")
        ->capture_default_str();
    app.add_option("--rpcTimeout", timeout_ms, "milliseconds an admin request may take")
        ->capture_default_str();
    app.add_option("--logLevel", log_level, "trace, debug, info, warn, error")
        ->capture_default_str();
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    if (!config_file.empty()) {
        Status st = apply_config_file(config_file, app,
                                      {{"namesrvAddr", &namesrv},
                                       {"listenHost", &host},
                                       {"port", &port},
                                       {"pollInterval", &poll_ms},
                                       {"rpcTimeout", &timeout_ms},
                                       {"logLevel", &log_level}});
        if (!st.is_ok()) {
            std::fprintf(stderr, "mqdashboard: %s\n", st.message().c_str());
            return 2;
        }
    }
    if (namesrv.empty()) {
        if (const char* env = std::getenv("NAMESRV_ADDR"); env != nullptr) {
            namesrv = env;
        }
    }
    int64_t port_n = 0;
    int64_t poll_n = 0;
    int64_t timeout_n = 0;
    if (!parse_number("port", port, 0, 65535, &port_n) ||
        !parse_number("pollInterval", poll_ms, 100, 600000, &poll_n) ||
        !parse_number("rpcTimeout", timeout_ms, 100, 60000, &timeout_n)) {
        return 2;
    }
    o.namesrv_addr = namesrv;
    o.listen_host = host;
    o.port = static_cast<uint16_t>(port_n);
    o.poll_interval = std::chrono::milliseconds(poll_n);
    o.rpc_timeout = std::chrono::milliseconds(timeout_n);

    // Before any thread starts: they inherit the blocked set (base/stop_signals.h).
    StopSignals stop_signals;

    LogOptions log;
    log.component = "dashboard";
    log.file = false;
    log.level = log_level;
    init_logging(log);

    dashboard::DashboardService service(o);
    if (Status st = service.start(); !st.is_ok()) {
        std::fprintf(stderr, "mqdashboard: %s\n", st.to_string().c_str());
        return st.code() == Errc::kInvalidArgument ? 2 : 1;
    }
    std::printf("mqdashboard: serving %s (name servers %s)\n", service.url().c_str(),
                o.namesrv_addr.c_str());
    std::fflush(stdout);
    const int sig = stop_signals.wait();
    spdlog::info("mqdashboard: signal {}, shutting down", sig);
    service.shutdown();
    return 0;
}
