#pragma once
// HaClient (slave side; Java DefaultHAClient). Connects to the master's HA address, sends the
// Comet handshake (brokerName, brokerId; optional so it can also talk to a RocketMQ master —
// which would misread it, so keep sendHandshake=false against one), then reports its CommitLog
// max offset: right after connecting, after every batch of appended frames, and at least every
// haSendHeartbeatInterval. Each received frame must start exactly at the local max offset;
// otherwise (or on a malformed frame, an append error, or nothing read for
// haHousekeepingInterval) it closes and reconnects after reconnect_interval.
// AutoSwitch mode (auto_switch, controller mode, rocketmq-wire.md §7.5; Java
// AutoSwitchHAClient): after connecting it sends the 16-byte handshake (brokerControllerId and
// the syncFromLastFile / asyncLearner flags), reads the master's epoch list, computes the
// consistent point against EpochPort::epochs() (no common epoch: error, close, retry), truncates
// the local log there through EpochPort::truncate_to() when it has more, reports the point and
// then streams as above. A frame of a new epoch starts it locally (EpochPort::begin_epoch);
// every frame's confirm offset, capped at the local max offset, goes to set_confirm_offset().
// Threads: one io_context of a net::IoLoopGroup (the broker's remoting loops, picked round robin
// once, for the client's life; or a one-thread "HaClient" group of its own when none is given)
// runs the socket, the tick, the store's append and EpochPort::set_confirm_offset. AutoSwitch:
// truncate_to and begin_epoch (file cuts, fsync) run on a one-thread "HaEpochStore" executor
// while the stream waits (src/ha/README.md). Public methods from any thread, shutdown() not on
// an I/O thread; mu_ guards the stats (leaf).
// Lifetime: handlers hold the shared Impl; shutdown() runs a stop step on the loop and waits for
// it, after which no handler touches the store, the epochs or this object.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "ha/epoch_port.h"
#include "ha/ha_store_port.h"

namespace comet::net {
class IoLoopGroup;
}

namespace comet::ha {

struct HaClientConfig {
    std::string master_host;  // haMasterAddress / register result haServerAddr (host part)
    uint16_t master_port = 0;
    std::string broker_name;
    int64_t broker_id = 1;       // > 0
    bool send_handshake = true;  // classic mode only
    // Controller mode: the AutoSwitch protocol (broker_id = brokerControllerId); start() then
    // needs an EpochPort.
    bool auto_switch = false;
    bool sync_from_last_file = false;  // syncFromLastFile (AutoSwitch handshake flag)
    bool async_learner = false;        // asyncLearner (AutoSwitch handshake flag)
    std::chrono::milliseconds heartbeat_interval{5000};      // haSendHeartbeatInterval
    std::chrono::milliseconds housekeeping_interval{20000};  // haHousekeepingInterval
    std::chrono::milliseconds reconnect_interval{5000};      // RocketMQ retries every 5 s
    std::chrono::milliseconds tick_interval{20};
};

struct HaClientStats {
    bool connected = false;
    int64_t frames = 0;            // data frames appended
    int64_t heartbeats = 0;        // empty frames received
    int64_t bytes = 0;             // CommitLog bytes appended
    int64_t connects = 0;          // successful connections
    int64_t connect_failures = 0;  // connection attempts that failed (refused, unreachable)
    int64_t protocol_errors = 0;   // frames refused (offset mismatch, bad frame, append error)
    // AutoSwitch only:
    int64_t handshakes = 0;           // master handshakes accepted
    int64_t truncations = 0;          // local log cut back to the consistent point
    int64_t no_consistent_point = 0;  // masters refused for having no epoch in common
};

class HaClient {
public:
    // Starts on one loop of `loops` (null: a one-thread "HaClient" group of its own); it
    // connects at once (or once a shared group starts). `store`, `clock` and `epochs` must
    // outlive the client (until shutdown() returns); `epochs` is required with auto_switch and
    // unused otherwise. Errors: bad config.
    static Result<std::unique_ptr<HaClient>> start(
        HaClientConfig config, HaStorePort& store, Clock& clock, EpochPort* epochs = nullptr,
        std::shared_ptr<net::IoLoopGroup> loops = nullptr);
    ~HaClient();
    HaClient(const HaClient&) = delete;
    HaClient& operator=(const HaClient&) = delete;

    // Closes on the loop and waits for that (joins an own group); idempotent. No append or
    // EpochPort call runs after it returns.
    void shutdown();
    // Register result changed the master's HA address: reconnect there.
    void update_master_address(std::string host, uint16_t port);
    HaClientStats stats() const;

private:
    struct Impl;
    HaClient(HaClientConfig config, HaStorePort& store, Clock& clock, EpochPort* epochs);

    HaClientConfig config_;
    HaStorePort& store_;
    Clock& clock_;
    EpochPort* epochs_;  // AutoSwitch mode only
    std::shared_ptr<Impl> impl_;  // shared with the handlers on the loop
    mutable Mutex mu_;
    HaClientStats stats_ GUARDED_BY(mu_);
    bool stopped_ GUARDED_BY(mu_) = false;
};

}  // namespace comet::ha
