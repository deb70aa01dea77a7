#include "namesrv/namesrv_controller.h"

#include <pthread.h>

#include <fmt/ranges.h>

#include <unordered_set>

#include "base/logging.h"
#include "namesrv/min_broker_id_notifier.h"
#include "protocol/request_code.h"

namespace comet::namesrv {

class NamesrvController::BrokerHousekeeping final : public net::ConnectionListener {
public:
    explicit BrokerHousekeeping(NamesrvController& owner) : owner_(owner) {}
    void on_closed(const net::ConnectionPtr& conn, const Status& reason) override {
        std::vector<std::string> removed = owner_.routes_.on_channel_destroy(conn->id());
        for (const std::string& addr : removed) {
            spdlog::info("broker {} removed: its connection {} closed ({})", addr,
                         conn->remote_address(), reason.message());
        }
        if (!removed.empty()) {
            owner_.send_min_broker_id_changes();
        }
    }

private:
    NamesrvController& owner_;
};

NamesrvController::NamesrvController(NamesrvConfig& config, ConfigRegistry& registry,
                                     Clock& clock)
    : config_(config),
      registry_(registry),
      clock_(clock),
      routes_(clock, std::chrono::milliseconds(config.broker_channel_expired_time)),
      kv_(config.kv_config_path) {}

NamesrvController::~NamesrvController() { shutdown(); }

Status NamesrvController::initialize() { return kv_.load(); }

Status NamesrvController::start() {
    COMET_CHECK(!started_, "NamesrvController started twice");
    net::RemotingServerConfig sc;
    sc.name = "NSServer";
    sc.listen_host = config_.listen_host.empty() ? "0.0.0.0" : config_.listen_host;
    sc.listen_port = static_cast<uint16_t>(config_.listen_port);
    sc.io_threads = static_cast<size_t>(config_.server_selector_threads);
    sc.connection.max_idle = std::chrono::seconds(config_.server_channel_max_idle_time_seconds);
    server_ = std::make_unique<net::RemotingServer>(sc, &clock_);
    metrics::MetricsConfig mc;
    mc.metrics_port = config_.metrics_port;
    mc.exporter_type = config_.metrics_exporter_type;
    mc.prom_exporter_port = config_.metrics_prom_exporter_port;
    mc.prom_exporter_host = config_.metrics_prom_exporter_host;
    COMET_RETURN_IF_ERROR(mc.validate());
    metrics_ = std::make_unique<metrics::Registry>(
        metrics::Labels{{"node_type", "nameserver"},
                        {"node_id", sc.listen_host + ":" + std::to_string(sc.listen_port)}});
    rpc_metrics_ = std::make_unique<metrics::RpcMetrics>(metrics_.get());
    metrics_->add_collector([this](std::vector<metrics::FamilySnapshot>* out) {
        out->push_back(metrics::FamilySnapshot{
            "comet_namesrv_live_brokers", "Brokers registered and alive.", metrics::Type::kGauge,
            {metrics::Sample{"", {}, static_cast<double>(routes_.live_broker_count())}}});
        out->push_back(metrics::FamilySnapshot{
            "comet_namesrv_topics", "Topics with a route.", metrics::Type::kGauge,
            {metrics::Sample{"", {}, static_cast<double>(routes_.get_all_topic_list().size())}}});
    });
    server_->set_rpc_observer(rpc_metrics_.get());

    net::RemotingClientConfig notify_cfg;
    notify_cfg.name = "NSNotify";
    notify_client_ = std::make_unique<net::RemotingClient>(notify_cfg, &clock_);
    notify_client_->start();
    processor_ = std::make_shared<DefaultRequestProcessor>(routes_, kv_, config_, registry_);
    processor_->set_after_membership_change([this] { send_min_broker_id_changes(); });
    auto default_pool = std::make_shared<net::ThreadPoolExecutor>(
        "NSDefault", static_cast<size_t>(config_.default_thread_pool_nums),
        static_cast<size_t>(config_.default_thread_pool_queue_capacity));
    auto client_pool = std::make_shared<net::ThreadPoolExecutor>(
        "NSClient", static_cast<size_t>(config_.client_request_thread_pool_nums),
        static_cast<size_t>(config_.client_request_thread_pool_queue_capacity));
    for (int32_t code : DefaultRequestProcessor::handled_codes()) {
        // Route queries get their own pool so a burst of client lookups never delays broker
        // registrations (Java ClientRequestProcessor on clientRequestExecutor).
        server_->register_processor(
            code, processor_,
            code == protocol::RequestCode::kGetRouteinfoByTopic ? client_pool : default_pool);
    }
    server_->set_connection_listener(std::make_shared<BrokerHousekeeping>(*this));
    COMET_RETURN_IF_ERROR(server_->start());
    if (const auto where = mc.listen(sc.listen_host)) {
        metrics_endpoint_ = std::make_unique<metrics::MetricsEndpoint>(metrics_.get(), *where);
        if (Status st = metrics_endpoint_->start(); !st.is_ok()) {
            server_->shutdown();
            return Status(st.code(), "metrics endpoint (metricsPort): " + st.message());
        }
        spdlog::info("name server metrics on http://{}:{}/metrics", where->host,
                     metrics_endpoint_->port());
    }
    {
        MutexLock lock(scan_mu_);
        scan_stop_ = false;
    }
    scan_thread_ = std::thread([this] { scan_loop(); });
    started_ = true;
    spdlog::info("name server listening on {}:{}", sc.listen_host, server_->port());
    return Status::ok();
}

uint16_t NamesrvController::port() const {
    COMET_CHECK(server_ != nullptr, "NamesrvController::port() before start()");
    return server_->port();
}

void NamesrvController::send_min_broker_id_changes() {
    std::vector<MinBrokerIdChange> changes = routes_.take_min_broker_id_changes();
    if (changes.empty() || !config_.notify_min_broker_id_changed.load() ||
        notify_client_ == nullptr) {
        return;
    }
    for (const MinBrokerIdChange& c : changes) {
        spdlog::info("min broker id of {} changed to {} ({}), offline broker {}: notify {}",
                     c.broker_name, c.min_broker_id, c.min_broker_addr,
                     c.offline_broker_addr.empty() ? "-" : c.offline_broker_addr,
                     fmt::join(c.notify_addrs, ","));
        for (const std::string& addr : c.notify_addrs) {
            notify_client_->invoke_oneway_async(
                addr, make_min_broker_id_change_request(c), [addr](Status st) {
                    if (!st.is_ok()) {
                        spdlog::warn("NOTIFY_MIN_BROKER_ID_CHANGE to {} failed: {}", addr,
                                     st.message());
                    }
                });
        }
    }
}

void NamesrvController::scan_not_active_broker() {
    std::vector<ExpiredBroker> expired = routes_.scan_not_active_broker();
    if (expired.empty() || server_ == nullptr) {
        return;
    }
    send_min_broker_id_changes();
    std::unordered_set<ChannelId> channels;
    for (const ExpiredBroker& e : expired) {
        if (e.channel != 0) {
            channels.insert(e.channel);
        }
    }
    for (const net::ConnectionPtr& conn : server_->connections()) {
        if (channels.contains(conn->id())) {
            conn->close(Status(Errc::kTimeout, "broker channel expired"));
        }
    }
}

void NamesrvController::scan_loop() {
    pthread_setname_np(pthread_self(), "NSScanBroker");
    while (true) {
        const auto interval =
            std::chrono::milliseconds(config_.scan_not_active_broker_interval.load());
        {
            MutexLock lock(scan_mu_);
            // Real time is right here: this thread only paces the scan; expiry itself is
            // decided by RouteInfoManager against the injected clock.
            scan_cv_.wait_for(scan_mu_, interval,
                              [this]() NO_THREAD_SAFETY_ANALYSIS { return scan_stop_; });
            if (scan_stop_) {
                return;
            }
        }
        scan_not_active_broker();
    }
}

uint16_t NamesrvController::metrics_port() const {
    return metrics_endpoint_ != nullptr ? metrics_endpoint_->port() : 0;
}

void NamesrvController::shutdown() {
    if (!started_) {
        return;
    }
    started_ = false;
    if (metrics_endpoint_) {
        metrics_endpoint_->stop();
    }
    {
        MutexLock lock(scan_mu_);
        scan_stop_ = true;
    }
    scan_cv_.notify_all();
    if (scan_thread_.joinable()) {
        scan_thread_.join();
    }
    server_->shutdown();
    if (notify_client_) {
        notify_client_->shutdown();
    }
    spdlog::info("name server shut down");
}

}  // namespace comet::namesrv
