#pragma once
// MasterLease: the broker half of controller mode's "no dual master" rule
// (src/controller/broker_live_info.h states the rule and why the two halves cannot overlap).
//
// A controller-mode master may acknowledge a write only while its lease runs: `lease` after the
// broker's own clock reading taken when it *sent* the newest heartbeat that a controller leader
// answered. The lease length is the controller's (its heartbeat answer carries masterLeaseMills,
// so the two sides cannot be configured apart). A controller that answers heartbeats without
// that field grants no leases (RocketMQ's own controller): then nothing is enforced, exactly as
// with RocketMQ's brokers.
//
// States: kUnknown (no answer from a leader yet: a master refuses, it cannot know whether a
// lease is needed) -> kGranted (Comet's controller) or kNotGranted (a controller without leases).
//
// Threads: on_answer() runs on the controller link's I/O thread, may_acknowledge() on any put
// path; lock-free (atomics only).

#include <atomic>
#include <cstdint>
#include <string>

#include "base/clock.h"
#include "protocol/remoting_command.h"

namespace comet::broker {

class MasterLease {
public:
    enum class State : int { kUnknown = 0, kGranted = 1, kNotGranted = 2 };

    // Ext fields of Comet's BROKER_HEARTBEAT answer.
    static constexpr const char* kLeaseField = "masterLeaseMills";
    static constexpr const char* kLeaderField = "controllerLeader";

    // The answer to a heartbeat sent at `sent_at` (broker clock). Counts only a SUCCESS from a
    // controller that says it is the leader; a SUCCESS without kLeaseField makes the state
    // kNotGranted (unless a lease was ever granted: one controller of the group without leases
    // must not switch the rule off for the others).
    void on_answer(TimePoint sent_at, const protocol::RemotingCommand& answer);

    // May a master acknowledge a write now?
    bool may_acknowledge(TimePoint now) const;
    // Why not (for a remark); "" when it may.
    std::string refusal(TimePoint now) const;

    State state() const { return static_cast<State>(state_.load(std::memory_order_acquire)); }
    int64_t lease_ms() const { return lease_ms_.load(std::memory_order_relaxed); }

private:
    std::atomic<int> state_{static_cast<int>(State::kUnknown)};
    std::atomic<int64_t> lease_ms_{0};
    std::atomic<int64_t> last_sent_ns_{INT64_MIN};  // newest leader-answered heartbeat's send time
};

}  // namespace comet::broker
