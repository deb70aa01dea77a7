#include "container/broker_container.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "base/log_tag.h"
#include "container/broker_container_processor.h"
#include "net/thread_pool_executor.h"
#include "protocol/request_code.h"

namespace comet::container {
namespace {

// Binds host:port for a moment (with SO_REUSEADDR, as the broker's acceptors) to find a port
// another process holds before the broker is built. kAlreadyExists naming the key when the bind
// fails; OK for port 0 and for hosts that are not IPv4 literals (the broker's own bind decides).
// A port taken between this check and the broker's bind still fails the broker's start.
Status probe_port(const std::string& host, int32_t port, const char* key) {
    if (port <= 0) {
        return Status::ok();
    }
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(port));
    if (::inet_pton(AF_INET, host.empty() ? "0.0.0.0" : host.c_str(), &sa.sin_addr) != 1) {
        return Status::ok();
    }
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return Status::ok();
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    const bool ok = ::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) == 0;
    const int err = errno;
    ::close(fd);
    if (!ok) {
        return Status::error(Errc::kAlreadyExists, "{} {} cannot be bound on {}: {}", key, port,
                             host.empty() ? "0.0.0.0" : host, std::strerror(err));
    }
    return Status::ok();
}

}  // namespace

BrokerContainer::BrokerContainer(BrokerContainerConfig config, Clock& clock)
    : config_(std::move(config)), clock_(clock) {}

BrokerContainer::~BrokerContainer() { shutdown(); }

void BrokerContainer::start_shared_locked() {
    if (io_loops_ != nullptr) {
        return;
    }
    const size_t threads =
        config_.server_selector_threads > 0
            ? static_cast<size_t>(config_.server_selector_threads)
            : std::max<size_t>(1, std::thread::hardware_concurrency());
    io_loops_ = std::make_shared<net::IoLoopGroup>("BrokerServer", threads);
    io_loops_->start();
    net::RemotingClientConfig cc;
    cc.name = "ContainerOuterAPI";
    cc.loops = io_loops_;
    namesrv_client_ = std::make_unique<net::RemotingClient>(cc, &clock_);
    namesrv_client_->start();
    spdlog::info("container: {} shared I/O threads", threads);
}

Status BrokerContainer::start() {
    {
        MutexLock ops(ops_mu_);
        start_shared_locked();
    }
    net::RemotingServerConfig sc;
    sc.name = "ContainerServer";
    sc.listen_host = config_.listen_host.empty() ? "0.0.0.0" : config_.listen_host;
    sc.listen_port = static_cast<uint16_t>(config_.listen_port);
    sc.loops = io_loops_;
    server_ = std::make_unique<net::RemotingServer>(sc, &clock_);
    auto processor = std::make_shared<BrokerContainerProcessor>(*this);
    auto executor = std::make_shared<net::ThreadPoolExecutor>("ContainerAdmin", 1, 64);
    server_->register_default_processor(processor, executor);
    if (Status st = server_->start(); !st.is_ok()) {
        return Status::error(st.code(), "container listenPort {}: {}", config_.listen_port,
                             st.message());
    }
    admin_port_.store(server_->port());
    spdlog::info("broker container listening on {}:{} for ADD_BROKER / REMOVE_BROKER",
                 sc.listen_host, server_->port());
    return Status::ok();
}

uint16_t BrokerContainer::port() const { return admin_port_.load(); }

Result<BrokerInfo> BrokerContainer::add_broker(const std::string& config_path) {
    MutexLock ops(ops_mu_);
    if (stopping_) {
        return Status::error(Errc::kFailedPrecondition,
                             "{}: the container is shutting down, broker not added", config_path);
    }
    COMET_ASSIGN_OR_RETURN(BrokerInstanceConfig cfg,
                           load_broker_instance_config(config_path, config_));
    {
        std::vector<const BrokerInstanceConfig*> running;
        MutexLock l(mu_);
        for (const auto& inst : instances_) {
            running.push_back(&inst->config);
        }
        COMET_RETURN_IF_ERROR(
            check_instance_conflicts(cfg, running, static_cast<int32_t>(admin_port_.load())));
    }
    // Ports other processes hold are refused before anything opens (a broker whose start fails
    // at its bind would leave its store recovered for nothing).
    {
        const std::string host = cfg.broker.listen_host;
        Status st = probe_port(host, cfg.broker.listen_port, "listenPort");
        if (st.is_ok()) {
            st = probe_port(host, cfg.broker.effective_ha_listen_port(), "haListenPort");
        }
        if (!st.is_ok()) {
            return Status::error(st.code(), "{}: {}", config_path, st.message());
        }
    }
    for (const std::string& w : cfg.warnings) {
        spdlog::warn("{}", w);
    }
    const std::string name = cfg.identity().to_string();
    spdlog::info("container: starting broker {} from {} (store {}, listenPort {})", name,
                 config_path, cfg.broker.store_root(), cfg.broker.listen_port);

    auto inst = std::make_shared<Instance>();
    start_shared_locked();
    // Every thread the broker starts, and its requests on the shared I/O threads, log with its
    // identity (base/log_tag.h).
    ScopedLogTag tag(intern_log_tag(name));
    inst->controller = std::make_unique<broker::BrokerController>(cfg.broker, clock_, cfg.store);
    inst->controller->use_shared_services({io_loops_, namesrv_client_.get()});
    if (Status st = inst->controller->initialize(); !st.is_ok()) {
        inst->controller->shutdown();  // closes what initialize() opened (store: no abort file)
        return Status::error(st.code(), "{}: broker {} initialize failed: {}", config_path, name,
                             st.message());
    }
    if (Status st = inst->controller->start(); !st.is_ok()) {
        inst->controller->shutdown();
        return Status::error(st.code(), "{}: broker {} start failed: {}", config_path, name,
                             st.message());
    }
    inst->info.identity = cfg.identity();
    inst->info.config_path = config_path;
    inst->info.role = cfg.broker.broker_role;
    inst->info.port = inst->controller->port();
    inst->info.store_root = cfg.broker.store_root();
    inst->config = std::move(cfg);
    const BrokerInfo info = inst->info;
    {
        MutexLock l(mu_);
        instances_.push_back(std::move(inst));
    }
    spdlog::info("container: broker {} ({}) boot success on port {}", name, info.role, info.port);
    return info;
}

Status BrokerContainer::remove_broker(const InstanceIdentity& identity) {
    MutexLock ops(ops_mu_);
    std::shared_ptr<Instance> victim;
    {
        MutexLock l(mu_);
        auto it = std::find_if(instances_.begin(), instances_.end(),
                               [&](const auto& i) { return i->info.identity == identity; });
        if (it == instances_.end()) {
            return Status::error(Errc::kNotFound, "broker {} is not in this container",
                                 identity.to_string());
        }
        victim = *it;
        instances_.erase(it);
    }
    spdlog::info("container: stopping broker {} (port {})", identity.to_string(),
                 victim->info.port);
    {
        ScopedLogTag tag(intern_log_tag(identity.to_string()));
        victim->controller->shutdown();
    }
    spdlog::info("container: broker {} removed", identity.to_string());
    return Status::ok();
}

std::vector<BrokerInfo> BrokerContainer::list() const {
    MutexLock l(mu_);
    std::vector<BrokerInfo> out;
    out.reserve(instances_.size());
    for (const auto& inst : instances_) {
        out.push_back(inst->info);
    }
    return out;
}

void BrokerContainer::shutdown() {
    {
        MutexLock ops(ops_mu_);
        if (stopping_) {
            return;
        }
        stopping_ = true;
        std::vector<std::shared_ptr<Instance>> all;
        {
            MutexLock l(mu_);
            all.swap(instances_);
        }
        for (auto it = all.rbegin(); it != all.rend(); ++it) {
            spdlog::info("container: stopping broker {} (port {})",
                         (*it)->info.identity.to_string(), (*it)->info.port);
            ScopedLogTag tag(intern_log_tag((*it)->info.identity.to_string()));
            (*it)->controller->shutdown();
        }
    }
    // Without ops_mu_: the server drains its queued requests, and a queued ADD_BROKER /
    // REMOVE_BROKER takes ops_mu_ (it is answered "shutting down" / BROKER_NOT_EXIST).
    if (server_) {
        server_->shutdown();
    }
    // Last, the shared services: no broker and no admin request uses them any more.
    if (namesrv_client_) {
        namesrv_client_->shutdown();
    }
    if (io_loops_) {
        io_loops_->shutdown();
    }
    spdlog::info("broker container shut down");
}

}  // namespace comet::container
