#include "controller/elect_policy.h"

namespace comet::controller {
namespace {

std::optional<BrokerId> try_elect(const ElectInput& in, const std::set<BrokerId>& brokers,
                                  const BrokerLiveness& liveness) {
    std::set<BrokerId> candidates;
    for (BrokerId id : brokers) {
        if (liveness.is_alive(in.cluster_name, in.broker_name, id)) {
            candidates.insert(id);
        }
    }
    if (candidates.empty()) {
        return std::nullopt;
    }
    if (in.old_master && candidates.count(*in.old_master) != 0 &&
        (!in.designated || *in.designated == *in.old_master)) {
        return in.old_master;
    }
    if (in.designated) {
        if (candidates.count(*in.designated) != 0) {
            return in.designated;
        }
        return std::nullopt;
    }
    std::optional<BrokerId> best;
    const BrokerLiveInfo* best_info = nullptr;
    for (BrokerId id : candidates) {
        const BrokerLiveInfo* info = liveness.live_info(in.cluster_name, in.broker_name, id);
        if (!best || ranks_before(id, info, *best, best_info)) {
            best = id;
            best_info = info;
        }
    }
    return best;
}

}  // namespace

bool ranks_before(BrokerId a, const BrokerLiveInfo* ia, BrokerId b, const BrokerLiveInfo* ib) {
    if ((ia == nullptr) != (ib == nullptr)) {
        return ia != nullptr;
    }
    if (ia != nullptr) {
        if (ia->epoch != ib->epoch) {
            return ia->epoch > ib->epoch;
        }
        if (ia->max_offset != ib->max_offset) {
            return ia->max_offset > ib->max_offset;
        }
        if (ia->election_priority != ib->election_priority) {
            return ia->election_priority < ib->election_priority;
        }
    }
    return a < b;
}

std::optional<BrokerId> elect_master(const ElectInput& in, const BrokerLiveness& liveness) {
    if (auto m = try_elect(in, in.sync_state_set, liveness)) {
        return m;
    }
    if (in.all_replicas) {
        return try_elect(in, *in.all_replicas, liveness);
    }
    return std::nullopt;
}

}  // namespace comet::controller
