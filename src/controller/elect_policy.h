#pragma once
// DefaultElectPolicy (reference §7.3, Java controller.elect.impl.DefaultElectPolicy): picks the
// master of one broker set from liveness input. Pure function of its arguments; no state.
//
// Rules, tried first on the SyncStateSet and then, only if that yields no one and
// all_replicas is given (enableElectUncleanMaster), on every replica:
//   1. candidates = the alive members of the set under consideration;
//   2. no candidate: nobody from this set;
//   3. the old master is a candidate and no one (or the old master) is designated: keep it;
//   4. a designated broker wins if it is a candidate, otherwise nobody from this set;
//   5. else the best candidate by: highest epoch, then highest maxOffset, then LOWEST
//      electionPriority, then (Comet) lowest brokerId. Java's TreeSet keeps whichever equal
//      candidate HashSet iteration met first; the id tie-break makes the choice deterministic.
//      A candidate without live info ranks below every one with it.
// The first-ever election (requester wins) is ReplicasInfoManager's rule, not the policy's.

#include <optional>
#include <set>
#include <string>

#include "controller/broker_live_info.h"
#include "controller/events.h"

namespace comet::controller {

struct ElectInput {
    std::string cluster_name;
    std::string broker_name;
    std::set<BrokerId> sync_state_set;
    std::optional<std::set<BrokerId>> all_replicas;  // set only with enableElectUncleanMaster
    std::optional<BrokerId> old_master;
    std::optional<BrokerId> designated;  // designateElect=true: the requester
};

// The new (or kept) master, or nullopt when no one qualifies.
std::optional<BrokerId> elect_master(const ElectInput& in, const BrokerLiveness& liveness);

// True when `a` ranks before `b` under rule 5 (exposed for tests).
bool ranks_before(BrokerId a, const BrokerLiveInfo* ia, BrokerId b, const BrokerLiveInfo* ib);

}  // namespace comet::controller
