#include "controller/lease_grant.h"

namespace comet::controller {

const char* lease_verdict_name(LeaseVerdict v) {
    switch (v) {
        case LeaseVerdict::kGranted:
            return "granted";
        case LeaseVerdict::kNotServing:
            return "not-serving";
        case LeaseVerdict::kUnknownSet:
            return "unknown-broker-set";
        case LeaseVerdict::kNoMaster:
            return "no-master";
        case LeaseVerdict::kNotMaster:
            return "not-master";
        case LeaseVerdict::kStaleEpoch:
            return "stale-epoch";
        case LeaseVerdict::kElectionUnderWay:
            return "election-under-way";
    }
    return "?";
}

LeaseDecision decide_lease(const BrokerSetState* set, BrokerId broker,
                           std::optional<int32_t> reported_epoch, bool serving,
                           bool election_under_way) {
    LeaseDecision d;
    if (set == nullptr) {
        d.verdict = serving ? LeaseVerdict::kUnknownSet : LeaseVerdict::kNotServing;
        return d;
    }
    d.master = set->master;
    d.master_epoch = set->master_epoch;
    if (set->master) {
        if (auto it = set->replicas.find(*set->master); it != set->replicas.end()) {
            d.master_address = it->second.address;
        }
    }
    // The order matters only for the verdict's name: every branch but the last refuses.
    if (!serving) {
        d.verdict = LeaseVerdict::kNotServing;
    } else if (!set->master) {
        d.verdict = LeaseVerdict::kNoMaster;
    } else if (*set->master != broker) {
        d.verdict = LeaseVerdict::kNotMaster;
    } else if (!reported_epoch || MasterEpoch(*reported_epoch) != set->master_epoch) {
        d.verdict = LeaseVerdict::kStaleEpoch;
    } else if (election_under_way) {
        d.verdict = LeaseVerdict::kElectionUnderWay;
    } else {
        d.verdict = LeaseVerdict::kGranted;
    }
    return d;
}

}  // namespace comet::controller
