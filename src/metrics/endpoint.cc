#include "metrics/endpoint.h"

#include <charconv>
#include <unordered_map>

namespace comet::metrics {
namespace {

std::atomic<uint64_t> g_next_rpc_metrics_id{1};

Result<int32_t> parse_port(std::string_view key, std::string_view value) {
    int32_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size()) {
        return Status::error(Errc::kInvalidArgument, "{}: '{}' is not a number", key, value);
    }
    return v;
}

}  // namespace

Result<bool> MetricsConfig::set(std::string_view key, std::string_view value) {
    if (key == "metricsPort") {
        COMET_ASSIGN_OR_RETURN(metrics_port, parse_port(key, value));
    } else if (key == "metricsPromExporterPort") {
        COMET_ASSIGN_OR_RETURN(prom_exporter_port, parse_port(key, value));
    } else if (key == "metricsExporterType") {
        exporter_type = std::string(value);
    } else if (key == "metricsPromExporterHost") {
        prom_exporter_host = std::string(value);
    } else {
        return false;
    }
    return true;
}

void MetricsConfig::to_properties(std::map<std::string, std::string>* out) const {
    (*out)["metricsPort"] = std::to_string(metrics_port);
    (*out)["metricsExporterType"] = exporter_type;
    (*out)["metricsPromExporterPort"] = std::to_string(prom_exporter_port);
    (*out)["metricsPromExporterHost"] = prom_exporter_host;
}

Status MetricsConfig::validate() const {
    if (metrics_port < 0 || metrics_port > 65535) {
        return Status::error(Errc::kInvalidArgument, "metricsPort {} out of range", metrics_port);
    }
    if (prom_exporter_port < 0 || prom_exporter_port > 65535) {
        return Status::error(Errc::kInvalidArgument, "metricsPromExporterPort {} out of range",
                             prom_exporter_port);
    }
    if (exporter_type != "DISABLE" && exporter_type != "PROM") {
        return Status::error(Errc::kUnsupported,
                             "metricsExporterType={} is not supported: Comet exports metrics "
                             "only in Prometheus text format (DISABLE or PROM)",
                             exporter_type);
    }
    return Status::ok();
}

std::optional<MetricsConfig::Listen> MetricsConfig::listen(const std::string& listen_host) const {
    if (metrics_port > 0) {
        return Listen{listen_host, static_cast<uint16_t>(metrics_port)};
    }
    if (exporter_type == "PROM") {
        return Listen{prom_exporter_host.empty() ? listen_host : prom_exporter_host,
                      static_cast<uint16_t>(prom_exporter_port)};
    }
    return std::nullopt;
}

MetricsEndpoint::MetricsEndpoint(const Registry* registry, MetricsConfig::Listen where)
    : registry_(registry), server_(std::move(where.host), where.port) {
    server_.route("/metrics", [this](const http::Request&) {
        return http::Response{200, std::string(kTextContentType), registry_->render()};
    });
    server_.route("/", [](const http::Request&) {
        return http::Response{200, "text/plain; charset=utf-8", "metrics: /metrics\n"};
    });
}

MetricsEndpoint::~MetricsEndpoint() { stop(); }
Status MetricsEndpoint::start() { return server_.start(); }
void MetricsEndpoint::stop() { server_.stop(); }
uint16_t MetricsEndpoint::port() const { return server_.port(); }

RpcMetrics::RpcMetrics(Registry* registry)
    : latency_(&registry->histogram("rocketmq_rpc_latency",
                                    "Remoting requests answered, by request and response code: "
                                    "time from dispatch to answer in milliseconds.",
                                    {"protocol_type", "request_code", "response_code"},
                                    rpc_latency_ms_bounds())),
      id_(g_next_rpc_metrics_id.fetch_add(1, std::memory_order_relaxed)) {}

void RpcMetrics::on_rpc(int32_t request_code, int32_t response_code,
                        std::chrono::nanoseconds took) const {
    // Per-thread cache keyed by (instance, request code, response code): no formatting and no
    // lock once a thread has seen the pair.
    thread_local std::unordered_map<uint64_t, std::unordered_map<uint64_t, Histogram*>> cache;
    auto& mine = cache[id_];
    const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(request_code)) << 32) |
                         static_cast<uint32_t>(response_code);
    auto it = mine.find(key);
    if (it == mine.end()) {
        Histogram* h = latency_->with(
            {"remoting", std::to_string(request_code), std::to_string(response_code)});
        it = mine.emplace(key, h).first;
    }
    it->second->observe(std::chrono::duration<double, std::milli>(took).count());
}

}  // namespace comet::metrics
