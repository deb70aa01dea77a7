#include "container/dev_cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <map>

#include "base/file_io.h"
#include "base/logging.h"
#include "ha/durability_contract.h"

namespace comet::container {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHost = "127.0.0.1";

// The keys of peer i, in the order they are written (comments come from dev_broker_properties).
std::vector<std::pair<std::string, std::string>> peer_keys(const DevLayout& l, size_t i) {
    std::string peers;
    for (size_t j = 0; j < l.peers.size(); ++j) {
        peers += fmt::format("{}{}-{}:{}", j == 0 ? "" : ";", l.peers[j].id, kHost,
                             l.peers[j].dledger_port);
    }
    const DevPeer& p = l.peers[i];
    return {
        {"brokerClusterName", kDevClusterName},
        {"brokerName", kDevBrokerName},
        // The group sets brokerId and brokerRole (leader: 0 / SYNC_MASTER, follower: id + 1 /
        // SLAVE); the file's values are the follower's, the broker's state before the election.
        // The container names this broker by the file's brokerId (mqadmin removeBroker).
        {"brokerId", std::to_string(p.broker_id)},
        {"brokerRole", "SLAVE"},
        {"listenPort", std::to_string(p.listen_port)},
        {"listenHost", kHost},
        {"brokerIP1", kHost},
        {"storePathRootDir", p.store_dir},
        {"flushDiskType", "ASYNC_FLUSH"},
        {"autoCreateTopicEnable", "true"},
        {"mappedFileSizeCommitLog", std::to_string(64 * 1024 * 1024)},
        {"enableDLegerCommitLog", "true"},
        {"dLegerGroup", kDevBrokerName},
        {"dLegerPeers", peers},
        {"dLegerSelfId", p.id},
    };
}

Result<int32_t> parse_base(const std::string& text) {
    int32_t v = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, v);
    if (text.empty() || ec != std::errc() || ptr != end || v < 1 || v > 65535 - kDevPortSpan) {
        return Status::error(Errc::kInvalidArgument,
                             "--dev-port: \"{}\" is not a port in 1..{} (the dev cluster uses the "
                             "base and the {} ports above it)",
                             text, 65535 - kDevPortSpan, kDevPortSpan);
    }
    return v;
}

// Everything in the file; on the console only errors while the peers start and stop (each
// peer warns about the others' DLedger ports until they listen), warnings too once the banner
// is out. Returns the console sink.
spdlog::sink_ptr init_dev_logging(const std::string& dir) {
    std::vector<spdlog::sink_ptr> sinks;
    auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    console->set_level(spdlog::level::err);
    sinks.push_back(console);
    try {
        fs::create_directories(dir);
        sinks.push_back(std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
            dir + "/container.log", 128 * 1024 * 1024, 8));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "logging: cannot open log file in %s: %s\n", dir.c_str(), e.what());
    }
    auto logger = std::make_shared<spdlog::logger>("container", sinks.begin(), sinks.end());
    logger->set_level(spdlog::level::info);
    logger->set_formatter(make_log_formatter());
    logger->flush_on(spdlog::level::warn);
    spdlog::set_default_logger(logger);
    spdlog::flush_every(std::chrono::seconds(1));
    return console;
}

// Waits up to `timeout` for SIGINT / SIGTERM (blocked by StopSignals); the signal or 0.
int wait_signal(std::chrono::milliseconds timeout) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    ts.tv_nsec = static_cast<long>((timeout.count() % 1000) * 1000000);
    const int sig = ::sigtimedwait(&set, nullptr, &ts);
    return sig > 0 ? sig : 0;
}

}  // namespace

Result<DevArgs> parse_dev_args(const std::vector<std::string>& args) {
    DevArgs out;
    std::vector<std::string> others;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&](const std::string& flag) -> Result<std::string> {
            if (a.size() > flag.size() && a.compare(0, flag.size() + 1, flag + "=") == 0) {
                return a.substr(flag.size() + 1);
            }
            if (i + 1 >= args.size()) {
                return Status::error(Errc::kInvalidArgument, "{} needs a value", flag);
            }
            return args[++i];
        };
        if (a == "--dev") {
            out.dev = true;
        } else if (a == "--dev-dir" || a.starts_with("--dev-dir=")) {
            COMET_ASSIGN_OR_RETURN(std::string dir, value("--dev-dir"));
            if (dir.empty()) {
                return Status::error(Errc::kInvalidArgument, "--dev-dir needs a directory");
            }
            out.options.dir = dir;
            out.dev = true;
        } else if (a == "--dev-port" || a.starts_with("--dev-port=")) {
            COMET_ASSIGN_OR_RETURN(std::string text, value("--dev-port"));
            COMET_ASSIGN_OR_RETURN(out.options.base_port, parse_base(text));
            out.dev = true;
        } else {
            others.push_back(a);
        }
    }
    if (out.dev && !others.empty()) {
        return Status::error(Errc::kInvalidArgument,
                             "\"{}\": dev mode takes only --dev, --dev-dir and --dev-port (the "
                             "brokers' settings are generated; for your own, run -c FILE)",
                             others.front());
    }
    return out;
}

std::string dev_usage() {
    return fmt::format(
        "Dev mode (a name server and a 3-peer DLedger group in this process, on 127.0.0.1):\n"
        "  --dev              start it (the other options are then not accepted)\n"
        "  --dev-dir DIR      generated configs, stores and log under DIR (default {})\n"
        "  --dev-port BASE    name server on BASE (default {}), container admin port BASE+1,\n"
        "                     broker n<i> on BASE+10*(i+1) with its DLedger port 2 above\n",
        kDefaultDevDir, kDefaultDevBasePort);
}

std::string DevLayout::namesrv_addr() const { return fmt::format("{}:{}", kHost, namesrv_port); }

std::string DevLayout::peer_addr(size_t i) const {
    return fmt::format("{}:{}", kHost, peers[i].listen_port);
}

DevLayout make_dev_layout(const DevClusterOptions& options) {
    DevLayout l;
    std::error_code ec;
    fs::path dir = fs::absolute(options.dir, ec);
    l.dir = (ec ? fs::path(options.dir) : dir).lexically_normal().string();
    if (l.dir.size() > 1 && l.dir.back() == '/') {
        l.dir.pop_back();
    }
    l.namesrv_port = options.base_port;
    l.container_port = options.base_port + 1;
    for (size_t i = 0; i < l.peers.size(); ++i) {
        DevPeer& p = l.peers[i];
        p.id = "n" + std::to_string(i);
        p.broker_id = static_cast<int64_t>(i) + 1;
        p.listen_port = options.base_port + 10 * (static_cast<int32_t>(i) + 1);
        p.dledger_port = p.listen_port + 2;
        p.config_path = fmt::format("{}/broker-{}.properties", l.dir, p.id);
        p.store_dir = fmt::format("{}/{}-{}", l.dir, kDevBrokerName, p.id);
    }
    return l;
}

std::string dev_broker_properties(const DevLayout& l, size_t i) {
    std::string out = fmt::format(
        "# Peer {} of the dev cluster's 3-peer DLedger group {} (mqbrokercontainer --dev).\n"
        "# Generated at every start: edits are overwritten. For your own settings copy the three\n"
        "# files, list them in a container file (brokerConfigPaths) and run -c "
        "(docs/container.md).\n"
        "# namesrvAddr is the container's: {}. docs/dledger.md explains the keys.\n",
        l.peers[i].id, kDevBrokerName, l.namesrv_addr());
    for (const auto& [k, v] : peer_keys(l, i)) {
        out += k + "=" + v + "\n";
    }
    return out;
}

std::string dev_banner(const DevLayout& l, size_t leader, const std::string& tools_dir) {
    std::map<std::string, std::string> props;
    for (const auto& [k, v] : peer_keys(l, leader)) {
        props[k] = v;
    }
    const ha::DurabilityExplanation dur =
        ha::explain_durability(ha::durability_facts_from_properties(props));
    const std::string mqadmin = tools_dir.empty() ? "mqadmin" : tools_dir + "/mqadmin/mqadmin";
    const std::string mqbench = tools_dir.empty() ? "mqbench" : tools_dir + "/mqbench/mqbench";
    const std::string ns = l.namesrv_addr();
    std::string peers;
    for (size_t i = 0; i < l.peers.size(); ++i) {
        peers += fmt::format("{}{} {}{}", i == 0 ? "" : ", ", l.peers[i].id, l.peer_addr(i),
                             i == leader ? " (leader)" : "");
    }
    std::string s;
    s += fmt::format(
        "Comet dev mode is ready: a name server and a 3-peer DLedger group in one "
        "process, data in {}\n",
        l.dir);
    s += fmt::format("  name server  export NAMESRV_ADDR={}\n", ns);
    s += fmt::format("  cluster      {}, broker group {} (DLedger peers {})\n", kDevClusterName,
                     kDevBrokerName, peers);
    s += fmt::format(
        "  durability   {}{}. All three peers share this process and this disk: "
        "this shows the protocol, not fault tolerance; after a crash a restart "
        "recovers every acknowledged message.\n",
        static_cast<char>(std::toupper(static_cast<unsigned char>(dur.contract[0]))),
        dur.contract.substr(1));
    s += fmt::format("  try it       {} sendMessage -n {} -t DevTopic -p hello\n", mqadmin, ns);
    s += fmt::format("               {} consumeMessage -n {} -t DevTopic\n", mqadmin, ns);
    s += fmt::format("               {} producer -n {} -t DevTopic --count 10000\n", mqbench, ns);
    s += fmt::format("               {} clusterList -n {}\n", mqadmin, ns);
    s += fmt::format(
        "  files        {}/broker-n{{0,1,2}}.properties (generated), stores {}/{}-n{{0,1,2}}, "
        "log {}/logs/container.log\n",
        l.dir, l.dir, kDevBrokerName, l.dir);
    s += fmt::format(
        "  container    {}:{} (mqadmin removeBroker -c {}:{} -b {}:{}:<1|2|3> stops "
        "peer n0|n1|n2; addBroker -b <its file> starts it again)\n",
        kHost, l.container_port, kHost, l.container_port, kDevClusterName, kDevBrokerName);
    s += "  stop         Ctrl-C (SIGINT) or SIGTERM: the brokers stop, then the name server; a "
         "restart on the same directory keeps the data\n";
    return s;
}

DevCluster::DevCluster(DevClusterOptions options) : layout_(make_dev_layout(options)) {
    namesrv::register_namesrv_config(ns_registry_, &ns_config_);
    ns_config_.listen_port = layout_.namesrv_port;
    ns_config_.listen_host = kHost;
    ns_config_.kv_config_path = layout_.dir + "/namesrv/kvConfig.json";
    ns_config_.config_store_path = layout_.dir + "/namesrv/namesrv.properties";
    ns_config_.log_dir = layout_.dir + "/logs";
}

DevCluster::~DevCluster() { shutdown(); }

Status DevCluster::start() {
    // Nothing on disk locks a store: two dev processes on one directory would corrupt it.
    std::error_code ec;
    fs::create_directories(layout_.dir, ec);
    const std::string lock_path = layout_.dir + "/dev.lock";
    lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd_ < 0) {
        return io_error("open", lock_path);
    }
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
        return Status::error(Errc::kAlreadyExists,
                             "{} is in use by another dev mode process (it holds {})", layout_.dir,
                             lock_path);
    }
    for (size_t i = 0; i < layout_.peers.size(); ++i) {
        ReplaceOptions ro;
        ro.create_dirs = true;
        COMET_RETURN_IF_ERROR(replace_file_durably(layout_.peers[i].config_path,
                                                   dev_broker_properties(layout_, i), ro));
    }
    ns_registry_.seal();
    namesrv_ = std::make_unique<namesrv::NamesrvController>(ns_config_, ns_registry_);
    if (Status st = namesrv_->initialize(); !st.is_ok()) {
        return Status::error(st.code(), "name server: {}", st.message());
    }
    if (Status st = namesrv_->start(); !st.is_ok()) {
        return Status::error(st.code(), "name server on port {}: {}", layout_.namesrv_port,
                             st.message());
    }
    spdlog::info("dev: name server listening on {}", layout_.namesrv_addr());

    BrokerContainerConfig cc;
    cc.listen_port = layout_.container_port;
    cc.listen_host = kHost;
    cc.namesrv_addr = layout_.namesrv_addr();
    cc.log_dir = layout_.dir + "/logs";
    container_ = std::make_unique<BrokerContainer>(cc);
    COMET_RETURN_IF_ERROR(container_->start());
    for (const DevPeer& p : layout_.peers) {
        auto info = container_->add_broker(p.config_path);
        if (!info.is_ok()) {
            return Status::error(info.status().code(), "broker {}: {}", p.id,
                                 info.status().message());
        }
        spdlog::info("dev: peer {} serving on {}:{}", p.id, kHost, info->port);
    }
    return Status::ok();
}

std::optional<size_t> DevCluster::registered_leader() {
    if (namesrv_ == nullptr) {
        return std::nullopt;
    }
    const protocol::ClusterInfo info = namesrv_->route_info_manager().get_all_cluster_info();
    auto it = info.broker_addr_table.find(kDevBrokerName);
    if (it == info.broker_addr_table.end()) {
        return std::nullopt;
    }
    auto master = it->second.broker_addrs.find(0);
    if (master == it->second.broker_addrs.end()) {
        return std::nullopt;
    }
    for (size_t i = 0; i < layout_.peers.size(); ++i) {
        if (master->second == layout_.peer_addr(i)) {
            return i;
        }
    }
    return std::nullopt;
}

void DevCluster::shutdown() {
    if (container_ != nullptr) {
        container_->shutdown();
    }
    if (namesrv_ != nullptr) {
        namesrv_->shutdown();
    }
    if (lock_fd_ >= 0) {
        ::close(lock_fd_);  // releases the directory's lock
        lock_fd_ = -1;
    }
}

int run_dev_cluster(const DevClusterOptions& options, const std::string& tools_dir,
                    std::chrono::milliseconds ready_timeout) {
    DevCluster dev(options);
    const DevLayout& l = dev.layout();
    const spdlog::sink_ptr console = init_dev_logging(l.dir + "/logs");
    spdlog::info("dev mode: directory {}, name server port {}, container port {}", l.dir,
                 l.namesrv_port, l.container_port);
    std::printf("Comet dev mode: starting a name server and 3 DLedger peers in %s ...\n",
                l.dir.c_str());
    std::fflush(stdout);
    if (Status st = dev.start(); !st.is_ok()) {
        spdlog::error("dev mode start failed: {}", st.message());
        std::fprintf(stderr, "ERROR: dev mode: %s\n", st.message().c_str());
        dev.shutdown();
        spdlog::shutdown();
        return 1;
    }

    // The group elects its leader; ready once the leader has registered as brokerId 0.
    const auto deadline = std::chrono::steady_clock::now() + ready_timeout;
    std::optional<size_t> leader;
    int sig = 0;
    while (!(leader = dev.registered_leader()).has_value()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            spdlog::error("dev mode: no leader registered within {} ms", ready_timeout.count());
            std::fprintf(stderr,
                         "ERROR: dev mode: the DLedger group registered no leader within "
                         "%lld ms (see %s/logs/container.log)\n",
                         static_cast<long long>(ready_timeout.count()), l.dir.c_str());
            dev.shutdown();
            spdlog::shutdown();
            return 1;
        }
        sig = wait_signal(std::chrono::milliseconds(50));
        if (sig != 0) {
            break;
        }
    }
    if (sig == 0) {
        const std::string banner = dev_banner(l, *leader, tools_dir);
        spdlog::info("dev mode ready:\n{}", banner);
        std::fputs(banner.c_str(), stdout);
        std::fflush(stdout);
        console->set_level(spdlog::level::warn);
        // Say so when the group's master changes (a removed or stopped leader, a transfer).
        std::optional<size_t> shown = leader;
        while ((sig = wait_signal(std::chrono::seconds(1))) == 0) {
            const std::optional<size_t> now = dev.registered_leader();
            if (now.has_value() && now != shown) {
                std::printf("Comet dev mode: the leader is now %s (%s)\n", l.peers[*now].id.c_str(),
                            l.peer_addr(*now).c_str());
                std::fflush(stdout);
                spdlog::info("dev mode: the leader is now {} ({})", l.peers[*now].id,
                             l.peer_addr(*now));
            }
            if (now.has_value()) {
                shown = now;
            }
        }
    }
    console->set_level(spdlog::level::err);
    spdlog::info("dev mode: received signal {}, stopping the brokers, then the name server", sig);
    std::printf("Comet dev mode: stopping (signal %d)\n", sig);
    std::fflush(stdout);
    dev.shutdown();
    std::printf("Comet dev mode: stopped; data kept in %s\n", l.dir.c_str());
    std::fflush(stdout);
    spdlog::shutdown();
    return 0;
}

}  // namespace comet::container
