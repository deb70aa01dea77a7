#pragma once
// The pieces every Comet server shares to expose metrics: the /metrics HTTP endpoint over a
// Registry, the remoting RPC observer (rocketmq_rpc_latency), and the configuration keys
// (metricsPort, and RocketMQ 5's metricsExporterType / metricsPromExporterPort /
// metricsPromExporterHost). See docs/metrics.md.
//
// Owner: BrokerController, NamesrvController, ControllerServer (one of each per process).
// Threads: MetricsEndpoint serves on the http::Server thread ("HttpServer"), which renders the
// registry (collectors run there). RpcMetrics::on_rpc on whatever thread answers a request.

#include <cstdint>
#include <memory>
#include <map>
#include <optional>
#include <string>

#include "base/status.h"
#include "http/server.h"
#include "metrics/registry.h"
#include "net/processor.h"

namespace comet::metrics {

// Metrics keys of a server's config. metricsPort wins; otherwise metricsExporterType=PROM turns
// the endpoint on at metricsPromExporterPort (RocketMQ 5's default 5557).
struct MetricsConfig {
    int32_t metrics_port = 0;                    // metricsPort (Comet); 0 = off
    std::string exporter_type = "DISABLE";       // metricsExporterType: DISABLE | PROM
    int32_t prom_exporter_port = 5557;           // metricsPromExporterPort
    std::string prom_exporter_host;              // metricsPromExporterHost (empty: listen host)

    // Sets a key this struct knows; false for any other key. Errors: kInvalidArgument naming
    // the key for a bad value.
    Result<bool> set(std::string_view key, std::string_view value);
    // Every key as a string (for GET_BROKER_CONFIG style listings).
    void to_properties(std::map<std::string, std::string>* out) const;
    // Checks the values: port range, exporter type. OTLP_GRPC and LOG are refused with a
    // reason (Comet exports only Prometheus text).
    Status validate() const;

    struct Listen {
        std::string host;
        uint16_t port = 0;
    };
    // Where to serve /metrics, or nullopt when metrics are off. `listen_host` is the process's
    // bind address.
    std::optional<Listen> listen(const std::string& listen_host) const;
};

// Serves GET /metrics (and / with a pointer to it) from a Registry.
class MetricsEndpoint {
public:
    // Registry must outlive the endpoint.
    MetricsEndpoint(const Registry* registry, MetricsConfig::Listen where);
    ~MetricsEndpoint();
    Status start();  // kIoError naming host:port when the bind fails
    void stop();     // idempotent
    uint16_t port() const;

private:
    const Registry* registry_;
    http::Server server_;
};

// rocketmq_rpc_latency{protocol_type="remoting",request_code,response_code} in milliseconds
// (RocketMQ 5's buckets). Its _count is the number of requests by code and result.
class RpcMetrics final : public net::RpcObserver {
public:
    explicit RpcMetrics(Registry* registry);
    void on_rpc(int32_t request_code, int32_t response_code,
                std::chrono::nanoseconds took) const override;

private:
    HistogramFamily* latency_;
    const uint64_t id_;  // keys the per-thread cache
};

}  // namespace comet::metrics
