#pragma once
// Which heartbeat renews a master lease (broker_live_info.h states the lease rule). The
// controller leader grants a lease only to the replica that is the master of the broker set's
// current masterEpoch, as the broker itself reports it. A master that was replaced while it was
// cut off, and whose heartbeats reach the controller again, is told who the master is now
// instead of being renewed: it stops acknowledging at once and changes role, rather than writing
// on a log the new master does not hold until its next metadata poll. The heartbeat table
// counts a lease only when one was granted, so the wait before replacing a master ends at the
// last lease really handed out.
//
// Pure: the controller driver calls decide_lease() on its thread for each BROKER_HEARTBEAT.

#include <optional>
#include <string>

#include "controller/events.h"
#include "controller/replicas_info_manager.h"

namespace comet::controller {

enum class LeaseVerdict {
    kGranted,           // the sender is the master of the set's current epoch
    kNotServing,        // this controller is not a caught-up leader: its state may be stale
    kUnknownSet,        // no broker set of that name
    kNoMaster,          // the set has no master now
    kNotMaster,         // another replica is the master
    kStaleEpoch,        // the master by id, but it reports another epoch: it has not taken
                        // the current one up yet (or was replaced and elected again since)
    kElectionUnderWay,  // an election for the set is being committed, or a designated
                        // handover waits for this lease to run out
};

const char* lease_verdict_name(LeaseVerdict v);

// The verdict and the master the heartbeat's answer names (none when the set is unknown).
struct LeaseDecision {
    LeaseVerdict verdict = LeaseVerdict::kNotServing;
    std::optional<BrokerId> master;
    std::string master_address;
    MasterEpoch master_epoch{0};

    bool granted() const { return verdict == LeaseVerdict::kGranted; }
};

// A BROKER_HEARTBEAT from replica `broker` of `set` (nullptr: unknown set) reporting
// `reported_epoch` (the last epoch of its store; absent: unknown). `serving`: this controller is
// the leader with every committed entry applied. `election_under_way`: the set's master may
// change as soon as an entry being committed applies, or a handover holds the lease back.
LeaseDecision decide_lease(const BrokerSetState* set, BrokerId broker,
                           std::optional<int32_t> reported_epoch, bool serving,
                           bool election_under_way);

}  // namespace comet::controller
