#pragma once
// Dev mode (`mqbrokercontainer --dev`, the default of `make run`): the fastest way to try Comet.
// One process runs a name server and a 3-peer DLedger group (three brokers of one
// BrokerContainer) on 127.0.0.1, with its files under one directory (default ./data/dev):
//
//   <dir>/broker-n0.properties ... broker-n2.properties   generated at every start (read them;
//                                                          edits are overwritten)
//   <dir>/broker-dev-n0/ ... broker-dev-n2/               the three stores (kept across restarts)
//   <dir>/namesrv/                                        the name server's kvConfig.json
//   <dir>/logs/container.log                              the process's log
//   <dir>/dev.lock                                        flock held while running: a second
//                                                          dev process on the directory is refused
//
// Ports, from a base B (default 9876, `--dev-port B`):
//   B                 name server
//   B + 1             the container's admin port (ADD_BROKER / REMOVE_BROKER)
//   B + 10 * (i + 1)  broker peer n<i> (i = 0, 1, 2): 9886, 9896, 9906 for B = 9876;
//                     + 1 stays free (the HA port, unused in DLedger mode but checked by the
//                     container), + 2 is the peer's DLedger port (9888, 9898, 9908)
// DLedger needs every peer's port in every peer's dLegerPeers, so the ports are fixed, never
// ephemeral; a test passes a base whose 33 ports it found free.
//
// Durability: the DLedger defaults (dLegerSyncBeforeAck=true): a send is acknowledged once 2 of
// the 3 peers have it fsynced (docs/dledger.md). The banner says so, and that the three peers
// share one process and one disk here.
//
// Threads: DevCluster is owned by main(); start(), wait_ready() and shutdown() run on the main
// thread. The name server and the brokers run their own threads (see their classes).

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/config.h"
#include "base/status.h"
#include "container/broker_container.h"
#include "namesrv/namesrv_config.h"
#include "namesrv/namesrv_controller.h"

namespace comet::container {

inline constexpr int32_t kDefaultDevBasePort = 9876;
inline constexpr const char* kDefaultDevDir = "./data/dev";
inline constexpr const char* kDevClusterName = "DefaultCluster";
inline constexpr const char* kDevBrokerName = "broker-dev";
inline constexpr int kDevPeers = 3;
// The highest port a dev cluster uses is base + kDevPortSpan.
inline constexpr int32_t kDevPortSpan = 32;

struct DevClusterOptions {
    std::string dir = kDefaultDevDir;         // --dev-dir
    int32_t base_port = kDefaultDevBasePort;  // --dev-port
};

// What main() makes of its arguments. `dev` is false when none of --dev, --dev-dir, --dev-port
// was given (the container then starts as usual from -c / --key=value).
struct DevArgs {
    bool dev = false;
    DevClusterOptions options;
};

// Looks for --dev, --dev-dir DIR (or --dev-dir=DIR), --dev-port BASE (or =BASE); the last two
// imply --dev. In dev mode no other argument is accepted. Errors (kInvalidArgument): a missing
// or bad value, a base outside 1..65535 - kDevPortSpan, another argument next to --dev.
Result<DevArgs> parse_dev_args(const std::vector<std::string>& args);
// The help text of the three options.
std::string dev_usage();

// One peer's place in the dev cluster.
struct DevPeer {
    std::string id;            // "n0"
    int64_t broker_id = 0;     // the file's brokerId (the container's identity): 1, 2, 3
    int32_t listen_port = 0;   // base + 10 * (i + 1)
    int32_t dledger_port = 0;  // listen_port + 2
    std::string config_path;   // <dir>/broker-n<i>.properties
    std::string store_dir;     // <dir>/broker-dev-n<i>
};

struct DevLayout {
    std::string dir;  // absolute
    int32_t namesrv_port = 0;
    int32_t container_port = 0;
    std::array<DevPeer, kDevPeers> peers;

    std::string namesrv_addr() const;  // "127.0.0.1:<namesrv_port>"
    std::string peer_addr(size_t i) const;
};

// Pure: the ports and paths of `options` (the dir made absolute against the working directory).
DevLayout make_dev_layout(const DevClusterOptions& options);
// Pure: peer i's properties file, with comments (the keys as in docs/dledger.md).
std::string dev_broker_properties(const DevLayout& layout, size_t i);
// Pure: the banner printed once the group has a leader registered. `leader` is the index of
// the peer registered as brokerId 0, `tools_dir` the directory of mqadmin / mqbench
// ("" when unknown: the bare names are printed).
std::string dev_banner(const DevLayout& layout, size_t leader, const std::string& tools_dir);

// The name server and the BrokerContainer of one dev cluster.
class DevCluster {
public:
    explicit DevCluster(DevClusterOptions options);
    ~DevCluster();  // shutdown()
    DevCluster(const DevCluster&) = delete;
    DevCluster& operator=(const DevCluster&) = delete;

    // Locks the directory, writes the three properties files, starts the name server, the
    // container and the three brokers. Errors name the step (the directory in use by another
    // dev process, a port in use, a store that cannot open); what started is stopped again by
    // shutdown().
    Status start();
    // The index of the peer registered as brokerId 0 with the name server, if any.
    std::optional<size_t> registered_leader();
    const DevLayout& layout() const { return layout_; }
    // Brokers first (the container, reverse order of addition), then the name server.
    // Idempotent.
    void shutdown();

private:
    const DevLayout layout_;
    namesrv::NamesrvConfig ns_config_;
    ConfigRegistry ns_registry_;
    std::unique_ptr<namesrv::NamesrvController> namesrv_;
    std::unique_ptr<BrokerContainer> container_;
    int lock_fd_ = -1;  // flock on <dir>/dev.lock, held from start() to shutdown()
};

// The dev-mode main: logging (warnings on the console, everything in <dir>/logs), start, the
// banner on stdout once a leader is registered (at most `ready_timeout`), then wait for SIGINT /
// SIGTERM and stop; while it runs, a line on stdout for each change of leader. Requires: a
// StopSignals was constructed before (signals blocked). Returns the
// exit status: 0 after a signal, 1 when the cluster could not start or elect a leader in time.
int run_dev_cluster(const DevClusterOptions& options, const std::string& tools_dir,
                    std::chrono::milliseconds ready_timeout = std::chrono::seconds(60));

}  // namespace comet::container
