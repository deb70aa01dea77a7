#pragma once
// HaService (master side; Java DefaultHAService + AcceptSocketService + DefaultHAConnection).
// Listens on haListenPort; per slave connection it reads 8-byte offset reports (after an
// optional Comet handshake naming brokerName/brokerId) and streams CommitLog bytes from the
// slave's requested offset in frames of at most haTransferBatchSize, pipelined: the next frame
// goes out as soon as the previous one is handed to the socket, without waiting for an ack.
// Tracks each slave's ack offset, feeds GroupTransfer, and closes a connection that
//  - acks above what was sent on it, or first asks for an offset beyond the master's end;
//  - names another broker group or brokerId <= 0 in its handshake (or skips the handshake when
//    requireHandshake is set);
//  - has been silent (nothing read) for haHousekeepingInterval — a hung slave stops counting.
// AutoSwitch mode (auto_switch, controller mode, rocketmq-wire.md §7.5; Java
// AutoSwitchHAConnection): the slave first sends a 16-byte handshake (brokerControllerId > 0,
// else closed), the master answers with its epoch list (EpochPort) and max offset, then reads
// 12-byte reports. Frames carry the epoch of their data, that epoch's start offset and the
// confirm offset, and never span two epochs. Everything else (pipelining, acks, timeouts,
// GroupTransfer) is the same as in classic mode.
// Threads: the io_contexts of a net::IoLoopGroup (the broker's remoting loops, or a one-thread
// "HaService" group of its own when none is given). The acceptor and the housekeeping tick
// (GroupTransfer::expire) live on one loop; each slave connection is bound to one loop, picked
// round robin, for its whole life, and all of its socket I/O, its timer and the GroupTransfer
// completions its acks trigger run there. Nothing here blocks. Public methods from any thread
// except the group's I/O threads for shutdown(). Locks: mu_ (slave table) is a leaf; never
// held across I/O, store calls or completions. Invariant per connection: ack_offset <=
// sent_end once the first report is processed.
// Lifetime: handlers hold the shared state (Impl) and their connection; shutdown() runs a stop
// step on every loop and waits for it, after which a late handler touches nothing but its own
// connection. So the store, clock and epochs may go once shutdown() returned. A shared group
// must keep running until then (the broker stops HA before its remoting server).

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "ha/epoch_port.h"
#include "ha/group_transfer.h"
#include "ha/ha_store_port.h"
#include "ha/quorum_policy.h"

namespace comet::net {
class IoLoopGroup;
}

namespace comet::ha {

struct HaServiceConfig {
    std::string broker_name;            // brokerName: slaves must name it in the handshake
    std::string listen_host = "0.0.0.0";
    uint16_t listen_port = 0;           // haListenPort; 0 = ephemeral (tests)
    int32_t transfer_batch_size = 32768;  // haTransferBatchSize
    std::chrono::milliseconds heartbeat_interval{5000};      // haSendHeartbeatInterval
    std::chrono::milliseconds housekeeping_interval{20000};  // haHousekeepingInterval
    std::chrono::milliseconds tick_interval{10};  // new-data poll / timeout check period
    bool require_handshake = false;  // false: plain RocketMQ slaves are accepted (classic only)
    // Controller mode: speak the AutoSwitch protocol instead of the classic one; start() then
    // needs an EpochPort.
    bool auto_switch = false;
    QuorumConfig quorum;
};

// One connected slave, as shown by GET_BROKER_RUNTIME_INFO.
struct SlaveInfo {
    uint64_t connection_id = 0;
    std::string address;     // ip:port of the slave's socket
    int64_t broker_id = -1;  // from the handshake; -1 for a plain RocketMQ slave
    int64_t ack_offset = 0;
    int64_t sent_offset = 0;  // end of the bytes handed to the socket so far
    // Last time this slave held everything the master had (RocketMQ lastCaughtUpTimeMs): an ack
    // at or above the master's max offset (now), or at or above the max offset as it was when
    // a frame went out (that frame's send time). Epoch (TimePoint{}) = never. Both modes. The
    // broker shrinks the SyncStateSet with it (haMaxTimeSlaveNotCatchup).
    TimePoint caught_up_at{};
    bool async_learner = false;  // AutoSwitch handshake isAsyncLearner: never in SyncStateSet
};

class HaService {
public:
    // Binds and starts serving on `loops` (null: a one-thread "HaService" group of its own,
    // started here and joined by shutdown()). `store`, `clock` and `epochs` must outlive the
    // service (until shutdown() returns); `epochs` is required with auto_switch and unused
    // otherwise. Handlers posted before a shared group starts run once it does. Errors: bad
    // quorum config (names the keys), auto_switch without `epochs`, bind failure (kIoError).
    static Result<std::unique_ptr<HaService>> start(
        HaServiceConfig config, HaStorePort& store, Clock& clock, EpochPort* epochs = nullptr,
        std::shared_ptr<net::IoLoopGroup> loops = nullptr);
    ~HaService();  // shutdown()
    HaService(const HaService&) = delete;
    HaService& operator=(const HaService&) = delete;

    // Closes every connection on its loop and waits for that, fails waiting puts
    // (SERVICE_NOT_AVAILABLE), joins an own group. Idempotent. Not on an I/O thread.
    void shutdown();
    uint16_t port() const { return port_; }

    // Wake the senders now (call after an append; otherwise the tick finds new data). Costs
    // nothing without a slave connection; at most one post is queued at a time.
    void notify_new_data();

    std::vector<SlaveInfo> slaves() const;
    // Ack offsets of the slaves that count: all of them, or those the ack filter accepts.
    std::vector<int64_t> slave_ack_offsets() const;
    // Controller mode: only slaves whose brokerId the filter accepts (SyncStateSet members)
    // count towards a put's acks and the in-sync figures. Called without this service's lock.
    void set_ack_filter(std::function<bool(int64_t broker_id)> filter);
    // Called (without this service's lock, on an HA I/O thread) after every slave ack or
    // departure: controller mode wakes the dispatcher, whose limit follows the acks.
    void set_ack_listener(std::function<void()> listener);
    // The filter's answers changed (a new SyncStateSet): waiting puts are checked again.
    void recount_acks() { publish_acks(); }
    // DefaultHAService#inSyncReplicasNums at the given master put offset.
    int32_t in_sync_replica_nums(int64_t master_put_offset) const;
    // QuorumPolicy decision with this service's live slave acks filled in.
    QuorumDecision decide(bool wait_store_msg_ok, int32_t alive_replica_num,
                          int64_t master_put_offset) const;
    GroupTransfer& group_transfer() { return group_transfer_; }
    const HaServiceConfig& config() const { return config_; }
    // Connections closed for a protocol violation (bad ack, bad handshake) so far.
    int64_t rejected_connections() const;

private:
    class Connection;
    struct Impl;
    HaService(HaServiceConfig config, HaStorePort& store, Clock& clock, EpochPort* epochs);

    void on_slave_update(uint64_t id, const SlaveInfo& info);
    void on_slave_closed(uint64_t id, bool rejected);
    void publish_acks();

    HaServiceConfig config_;
    HaStorePort& store_;
    Clock& clock_;
    EpochPort* epochs_;  // AutoSwitch mode only
    GroupTransfer group_transfer_;
    std::shared_ptr<Impl> impl_;  // shared with the handlers on the loops
    uint16_t port_ = 0;

    mutable Mutex mu_;
    std::map<uint64_t, SlaveInfo> slaves_ GUARDED_BY(mu_);
    std::function<bool(int64_t)> ack_filter_ GUARDED_BY(mu_);
    std::function<void()> ack_listener_ GUARDED_BY(mu_);
    int64_t rejected_ GUARDED_BY(mu_) = 0;
    bool stopped_ GUARDED_BY(mu_) = false;
};

}  // namespace comet::ha
