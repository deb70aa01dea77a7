#pragma once
// BrokerContainer: several brokers in one process (RocketMQ 5 BrokerContainer, RIP-31). Each
// broker is a full broker::BrokerController built from its own properties file, with its own
// store, role, listen port (clients reach a broker on its own port, as RocketMQ's inner brokers
// keep theirs), HA port, name server client and threads. The container adds its own admin port
// (listenPort, default 10811) answering ADD_BROKER / REMOVE_BROKER / GET_BROKER_CONFIG
// (BrokerContainerProcessor).
//
// Shared by the brokers (broker::SharedServices): one set of I/O threads ("BrokerServer_N",
// serverSelectorThreads, default one per core) that runs every broker's remoting server, its
// HA sockets and the container's admin port; one name server client ("ContainerOuterAPI", on
// those threads) through which every broker registers; the process, its log (one file,
// <logDir>/container.log), the clock. Per broker: its executors (send, pull, admin... with
// their own queues and limits, so a flood of one broker's slow requests queues only there),
// its store and its flush / dispatch / HA / DLedger threads. Sends run to completion on the
// shared I/O threads (decision 028); a send that must wait (SYNC_FLUSH, a slave's ack, a Raft
// commit) holds no thread while it waits, so a broker whose slave hangs does not slow the
// others.
//
// Start order: start() binds the admin port; then add_broker() for each configured file (store
// recovery, replication, processors, registration happen inside BrokerController::initialize
// and start). Stop order (shutdown()): every broker in reverse order of addition, each
// gracefully (unregister, stop accepting, drain, persist tables, flush and close the store, no
// `abort` file), then the admin port.
// A broker that cannot be built or started is closed again (its store shut down cleanly) and
// left out; the error names its file and the reason. The others keep running.
//
// Threads: add_broker / remove_broker / shutdown come from main (start-up, signals) and from
// the admin executor ("ContainerAdmin", one thread). They are serialized by ops_mu_, which is
// held while one broker starts or stops (RocketMQ's synchronized addBroker/removeBroker): it
// guards only the broker set's membership changes and is never taken on a message path.
// mu_ (the broker table) is a leaf: never held while calling a broker or the network.
// Lock order: ops_mu_ before mu_.

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "broker/broker_controller.h"
#include "container/container_config.h"
#include "net/remoting_client.h"
#include "net/remoting_server.h"

namespace comet::container {

// One running broker, as list() reports it.
struct BrokerInfo {
    InstanceIdentity identity;
    std::string config_path;
    std::string role;   // brokerRole from its file
    uint16_t port = 0;  // the bound listen port
    std::string store_root;
};

class BrokerContainer {
public:
    explicit BrokerContainer(BrokerContainerConfig config, Clock& clock = SystemClock::instance());
    ~BrokerContainer();  // shutdown()
    BrokerContainer(const BrokerContainer&) = delete;
    BrokerContainer& operator=(const BrokerContainer&) = delete;

    // Binds the admin port and starts answering on it. kIoError naming the address when the
    // bind fails.
    Status start();
    // Reads, checks (check_instance_conflicts), initializes and starts the broker of
    // `config_path`. On error nothing of it keeps running. kFailedPrecondition once shutdown()
    // began.
    Result<BrokerInfo> add_broker(const std::string& config_path);
    // Stops one broker gracefully and forgets it. kNotFound when no such broker runs.
    Status remove_broker(const InstanceIdentity& identity);
    // The running brokers, in order of addition.
    std::vector<BrokerInfo> list() const;
    // The bound admin port; 0 before start() succeeded.
    uint16_t port() const;
    const BrokerContainerConfig& config() const { return config_; }
    // Stops every broker (reverse order of addition), then the admin port. Idempotent.
    void shutdown();

private:
    struct Instance {
        BrokerInstanceConfig config;
        std::unique_ptr<broker::BrokerController> controller;
        BrokerInfo info;
    };

    const BrokerContainerConfig config_;
    Clock& clock_;
    std::unique_ptr<net::RemotingServer> server_;
    std::atomic<uint16_t> admin_port_{0};  // set once start() bound the admin port

    // Creates and starts the shared I/O threads and name server client once (start() or the
    // first add_broker()).
    void start_shared_locked() REQUIRES(ops_mu_);

    Mutex ops_mu_;  // serializes add / remove / shutdown (see the class comment)
    bool stopping_ GUARDED_BY(ops_mu_) = false;
    // Set once by start_shared_locked, read-only after: stopped last, in shutdown().
    std::shared_ptr<net::IoLoopGroup> io_loops_;
    std::unique_ptr<net::RemotingClient> namesrv_client_;

    mutable Mutex mu_;
    std::vector<std::shared_ptr<Instance>> instances_ GUARDED_BY(mu_);
};

}  // namespace comet::container
