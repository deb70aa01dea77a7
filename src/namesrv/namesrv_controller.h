#pragma once
// NamesrvController: wires one name server together (Java NamesrvController): the routing
// tables, the KV config, the request processor on a RemotingServer, the broker-connection close
// hook, and the expiry scan thread.
//
// Owner: main() of mqnamesrv (or a test). Threads: "NSScanBroker" (expiry scan every
// scanNotActiveBrokerInterval), the server's I/O threads ("NSServer_N"), executors "NSDefault"
// (registration, admin, KV) and "NSClient" (route queries). start()/shutdown() from the owner's
// thread only. Lock: scan_mu_ guards the scan thread's stop flag (leaf). "NSNotify" client
// threads send NOTIFY_MIN_BROKER_ID_CHANGE one-way (RocketMQ 5 acting master).
// Lifecycle: initialize() (load KV config) -> start() (bind, start the scan) -> shutdown()
// (stop the scan, stop the server; idempotent, also run by the destructor).

#include <condition_variable>
#include <memory>
#include <thread>

#include "base/clock.h"
#include "base/config.h"
#include "base/mutex.h"
#include "base/status.h"
#include "namesrv/default_request_processor.h"
#include "namesrv/kv_config_manager.h"
#include "namesrv/namesrv_config.h"
#include "namesrv/route_info_manager.h"
#include "net/remoting_client.h"
#include "metrics/endpoint.h"
#include "net/remoting_server.h"

namespace comet::namesrv {

class NamesrvController {
public:
    // `config` and `registry` must outlive the controller; the registry is the one `config`
    // was registered into (GET/UPDATE_NAMESRV_CONFIG use it).
    NamesrvController(NamesrvConfig& config, ConfigRegistry& registry,
                      Clock& clock = SystemClock::instance());
    ~NamesrvController();
    NamesrvController(const NamesrvController&) = delete;
    NamesrvController& operator=(const NamesrvController&) = delete;

    // Loads the KV config. Errors: those of KvConfigManager::load().
    Status initialize();
    // Binds the port and starts serving. Errors: kIoError naming the address.
    Status start();
    void shutdown();

    // Requires: start() succeeded.
    uint16_t port() const;
    // The bound /metrics port; 0 when metrics are off.
    uint16_t metrics_port() const;
    RouteInfoManager& route_info_manager() { return routes_; }
    KvConfigManager& kv_config_manager() { return kv_; }

    // One expiry scan now: removes expired brokers and closes their connections.
    void scan_not_active_broker();

    // Sends the queued NOTIFY_MIN_BROKER_ID_CHANGE requests (one-way, to each broker's
    // address) when notifyMinBrokerIdChanged is on; drops them otherwise.
    void send_min_broker_id_changes();

private:
    class BrokerHousekeeping;  // ConnectionListener: a closed connection unregisters its broker
    void scan_loop();

    NamesrvConfig& config_;
    ConfigRegistry& registry_;
    Clock& clock_;
    RouteInfoManager routes_;
    KvConfigManager kv_;
    std::shared_ptr<DefaultRequestProcessor> processor_;
    // Metrics (docs/metrics.md): declared before the server, which reports RPCs to rpc_metrics_.
    std::unique_ptr<metrics::Registry> metrics_;
    std::unique_ptr<metrics::RpcMetrics> rpc_metrics_;
    std::unique_ptr<metrics::MetricsEndpoint> metrics_endpoint_;
    std::unique_ptr<net::RemotingServer> server_;
    std::unique_ptr<net::RemotingClient> notify_client_;  // NOTIFY_MIN_BROKER_ID_CHANGE

    Mutex scan_mu_;
    std::condition_variable_any scan_cv_;
    bool scan_stop_ GUARDED_BY(scan_mu_) = false;
    std::thread scan_thread_;
    bool started_ = false;  // owner thread only
};

}  // namespace comet::namesrv
