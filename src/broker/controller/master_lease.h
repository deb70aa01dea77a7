#pragma once
// MasterLease: the broker half of controller mode's "no dual master" rule
// (src/controller/broker_live_info.h states the rule and why the two halves cannot overlap;
// src/controller/lease_grant.h says who is granted a lease).
//
// A controller-mode master may acknowledge a write only while its lease runs: `lease` after the
// broker's own clock reading taken when it *sent* the newest heartbeat that a controller leader
// granted a lease to, as the master of the epoch this broker leads. The lease length is the
// controller's (its heartbeat answer carries masterLeaseMills, so the two sides cannot be
// configured apart). A controller that answers heartbeats without that field grants no leases
// (RocketMQ's own controller): then nothing is enforced, exactly as with RocketMQ's brokers.
//
// Every answer of Comet's controller also names the master and masterEpoch it knows. One that
// names a newer epoch, or another master (or none) at the epoch this broker leads, revokes the
// lease at once: the broker was replaced (say while cut off from the controllers) and must not
// acknowledge another write on its log before it has changed role. on_answer() says so, and the
// ReplicasManager then fetches the replica info at once, as its metadata poll would.
//
// States: kUnknown (no answer from a leader yet: a master refuses, it cannot know whether a
// lease is needed) -> kGranted (Comet's controller) or kNotGranted (a controller without leases).
//
// Threads: on_answer() runs on the controller link's I/O thread, may_acknowledge() on any put
// path, on_role() on the ReplicasManager thread; lock-free (atomics only).

#include <atomic>
#include <cstdint>
#include <string>

#include "base/clock.h"
#include "protocol/remoting_command.h"

namespace comet::broker {

class MasterLease {
public:
    enum class State : int { kUnknown = 0, kGranted = 1, kNotGranted = 2 };
    // What an answer did.
    enum class Effect {
        kNone,        // nothing (an error, a follower's answer, no lease granted)
        kRenewed,     // the lease now runs from this heartbeat's send time
        kSuperseded,  // it names a newer epoch, or another master at ours: lease revoked
    };

    // Ext fields of Comet's BROKER_HEARTBEAT answer.
    static constexpr const char* kLeaseField = "masterLeaseMills";
    static constexpr const char* kLeaderField = "controllerLeader";
    static constexpr const char* kGrantedField = "leaseGranted";
    static constexpr const char* kMasterIdField = "masterBrokerId";
    static constexpr const char* kMasterEpochField = "masterEpoch";

    // The role this broker took (ReplicasManager, after each role change): its controller id,
    // the masterEpoch in force and whether it is that epoch's master. A new master epoch starts
    // without a lease: only a grant for that epoch lets the broker acknowledge.
    void on_role(int64_t my_id, int32_t master_epoch, bool master);

    // The answer to a heartbeat sent at `sent_at` (broker clock). Renews only on a SUCCESS from
    // a controller leader that granted the lease to this broker as the master of its epoch; a
    // SUCCESS without kLeaseField makes the state kNotGranted (unless a lease was ever granted:
    // one controller of the group without leases must not switch the rule off for the others).
    Effect on_answer(TimePoint sent_at, const protocol::RemotingCommand& answer);

    // May a master acknowledge a write now?
    bool may_acknowledge(TimePoint now) const;
    // Why not (for a remark); "" when it may.
    std::string refusal(TimePoint now) const;

    State state() const { return static_cast<State>(state_.load(std::memory_order_acquire)); }
    int64_t lease_ms() const { return lease_ms_.load(std::memory_order_relaxed); }

private:
    bool superseded(const protocol::RemotingCommand& answer) const;
    void renew(TimePoint sent_at, int64_t lease_ms);

    std::atomic<int> state_{static_cast<int>(State::kUnknown)};
    std::atomic<int64_t> lease_ms_{0};
    std::atomic<int64_t> last_sent_ns_{INT64_MIN};  // newest granted heartbeat's send time
    std::atomic<int64_t> my_id_{0};
    std::atomic<int32_t> epoch_{0};    // masterEpoch in force at this broker (0: none yet)
    std::atomic<bool> master_{false};  // master of epoch_, and not revoked
};

}  // namespace comet::broker
