#pragma once
// Broker liveness as the controller leader sees it (mirrors Java BrokerLiveInfo and
// DefaultBrokerHeartbeatManager), with time passed in instead of read from a clock, plus the
// master-lease rule that keeps two masters of one broker set from accepting writes at once.
//
// Liveness is leader-local, like Java: heartbeats arrive on every controller node but are not
// replicated through Raft, so two controller nodes may disagree about who is alive. Only request
// handling (ReplicasInfoManager::handle_*) reads it; apply() never does, so replicas stay
// identical.
//
// Owner: the controller driver; one thread calls every method (no locks inside).

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "base/clock.h"
#include "controller/events.h"

namespace comet::controller {

using Millis = std::chrono::milliseconds;

// Last heartbeat of one replica (BROKER_HEARTBEAT 904 fields) and when it arrived here.
struct BrokerLiveInfo {
    std::string cluster_name;
    std::string broker_name;
    BrokerId broker_id;
    std::string broker_addr;
    TimePoint last_update;  // controller's monotonic receive time of the last heartbeat
    Millis heartbeat_timeout{10000};
    int32_t epoch = -1;  // broker's last master epoch (-1 unknown)
    int64_t max_offset = -1;
    int64_t confirm_offset = -1;
    int32_t election_priority = INT32_MAX;  // lower wins ties (brokerElectionPriority)

    // Java isBrokerActive: last + timeout >= now.
    bool is_active(TimePoint now) const { return last_update + heartbeat_timeout >= now; }
};

// The master lease ("no dual master"). A master may acknowledge writes only while its lease
// runs; the controller may elect a replacement only once it is sure that lease has run out.
//
//   broker:     writes allowed while  now_b - send_time_of_last_acknowledged_heartbeat <= lease
//   controller: replacement allowed when  now_c - receive_time_of_last_heartbeat
//                                             > lease + clock_drift_margin
//               and  now_c - tracking_since > lease + clock_drift_margin + leader_overlap
//
// Why the two cannot overlap: a heartbeat is received after it is sent, so for the last heartbeat
// the broker saw acknowledged, send_time <= receive_time <= the controller's last receive time
// (later heartbeats only move the controller's mark further out). The broker therefore stops at
// most `lease` after a point that is no later than the controller's mark, and the controller
// waits `lease + clock_drift_margin` after its mark. Each side measures an *interval* on its own
// monotonic clock, so the clocks need not agree on the time, only on the rate: the margin must
// cover the drift of both clocks over one lease (e.g. 2 x 200 ppm x lease) plus scheduling delay
// between the broker's check and its write acknowledgement.
//
// The second controller condition covers liveness that is missing or lost: a controller node
// that just started or just became leader may never have seen the master's latest heartbeats
// (they went to the previous leader). tracking_since is when this node started counting
// (on_become_leader); leader_overlap bounds how long a deposed leader can keep acknowledging
// heartbeats after a new one is elected (the Raft check-quorum window: a leader that hears from
// no majority for an election timeout steps down). Brokers must count acknowledgements only from
// a controller that answered as leader.
struct MasterLeaseConfig {
    Millis lease{10000};
    Millis clock_drift_margin{1000};
    Millis leader_overlap{1000};
};

// Broker side: may the master still acknowledge writes? `last_acked_send_time` is the broker's
// own clock reading taken when it *sent* the last heartbeat that a leader controller acknowledged
// (nullopt: none yet, so no lease).
bool master_lease_valid(TimePoint now, std::optional<TimePoint> last_acked_send_time, Millis lease);

// Controller side, one replica: has the lease of a master whose last granted heartbeat reached
// this node at `last_received` (nullopt: never) surely run out?
bool master_lease_expired(TimePoint now, std::optional<TimePoint> last_received,
                          TimePoint tracking_since, const MasterLeaseConfig& config);

// What request handling and the elect policy ask about replicas. Implemented by
// BrokerHeartbeatManager::View (real heartbeats) and by test fakes.
class BrokerLiveness {
public:
    virtual ~BrokerLiveness() = default;
    virtual bool is_alive(const std::string& cluster, const std::string& broker_name,
                          BrokerId id) const = 0;
    // nullptr: no heartbeat known. The pointer is valid until the liveness source changes.
    virtual const BrokerLiveInfo* live_info(const std::string& cluster,
                                            const std::string& broker_name, BrokerId id) const = 0;
    // See MasterLeaseConfig. Default: expired exactly when not alive (no lease rule).
    virtual bool lease_expired(const std::string& cluster, const std::string& broker_name,
                               BrokerId id) const {
        return !is_alive(cluster, broker_name, id);
    }
};

// Heartbeat table keyed by (cluster, brokerName, brokerId). Invariant: every entry's key equals
// its info's identity fields.
class BrokerHeartbeatManager {
public:
    using Key = std::tuple<std::string, std::string, BrokerId>;

    explicit BrokerHeartbeatManager(MasterLeaseConfig lease = {}, TimePoint tracking_since = {})
        : lease_(lease), tracking_since_(tracking_since) {}

    // A BROKER_HEARTBEAT arrived at `now`. Like Java onBrokerHeartbeat: timeout and priority are
    // refreshed every time; epoch/maxOffset/confirmOffset only when (epoch, maxOffset) moved
    // forward. Absent optionals get Java's defaults (-1, 10000 ms, INT32_MAX). Liveness only:
    // the lease mark moves in grant_lease().
    void on_heartbeat(TimePoint now, const std::string& cluster, const std::string& broker_name,
                      BrokerId id, const std::string& addr, std::optional<int32_t> epoch,
                      std::optional<int64_t> max_offset, std::optional<int64_t> confirm_offset,
                      std::optional<Millis> timeout, std::optional<int32_t> election_priority);
    // This node granted replica `id` a master lease at `now`, answering a heartbeat it received
    // then (lease_grant.h decides). Only granted leases count: a heartbeat that was refused one
    // (a deposed master's, say) must not hold back the election of its replacement, and one
    // that was granted must, whatever the broker's liveness says.
    void grant_lease(TimePoint now, const std::string& cluster, const std::string& broker_name,
                     BrokerId id);
    // The broker's connection closed: forget its live info (Java onBrokerChannelClose). Its lease
    // record stays: a closed connection says nothing about whether the broker still writes.
    void remove(const std::string& cluster, const std::string& broker_name, BrokerId id);
    // This node became controller leader at `now` (restarts the lease's tracking window).
    void on_become_leader(TimePoint now) { tracking_since_ = now; }

    const BrokerLiveInfo* find(const std::string& cluster, const std::string& broker_name,
                               BrokerId id) const;
    bool is_active(TimePoint now, const std::string& cluster, const std::string& broker_name,
                   BrokerId id) const;
    bool lease_expired(TimePoint now, const std::string& cluster, const std::string& broker_name,
                       BrokerId id) const;
    // Java scanNotActiveBroker: removes and returns every entry inactive at `now`, in key order.
    // Lease records are kept (see remove()).
    std::vector<BrokerLiveInfo> scan_not_active(TimePoint now);

    // A BrokerLiveness answering as of `now`. Keeps a reference: the manager must outlive it.
    class View final : public BrokerLiveness {
    public:
        View(const BrokerHeartbeatManager& m, TimePoint now) : m_(m), now_(now) {}
        bool is_alive(const std::string& cluster, const std::string& broker_name,
                      BrokerId id) const override {
            return m_.is_active(now_, cluster, broker_name, id);
        }
        const BrokerLiveInfo* live_info(const std::string& cluster, const std::string& broker_name,
                                        BrokerId id) const override {
            return m_.find(cluster, broker_name, id);
        }
        bool lease_expired(const std::string& cluster, const std::string& broker_name,
                           BrokerId id) const override {
            return m_.lease_expired(now_, cluster, broker_name, id);
        }

    private:
        const BrokerHeartbeatManager& m_;
        TimePoint now_;
    };
    View view(TimePoint now) const { return View(*this, now); }

    const MasterLeaseConfig& lease_config() const { return lease_; }
    size_t size() const { return table_.size(); }

private:
    MasterLeaseConfig lease_;
    TimePoint tracking_since_;
    std::map<Key, BrokerLiveInfo> table_;
    // Receive time of the last heartbeat that was granted a lease, per replica; outlives table_
    // entries so that dropping an inactive broker's live info cannot shorten its master lease.
    std::map<Key, TimePoint> last_received_;
};

}  // namespace comet::controller
