#include "broker/controller/sync_state_policy.h"

#include <algorithm>

namespace comet::broker {

ControllerPutDecision decide_controller_put(const ControllerQuorum& q, size_t sync_state_set_size,
                                            bool wait_store_msg_ok) {
    using V = ControllerPutDecision::Verdict;
    ControllerPutDecision d;
    const auto size = static_cast<int32_t>(std::max<size_t>(sync_state_set_size, 1));
    if (size < q.min_in_sync_replicas) {
        d.verdict = V::kInSyncReplicasNotEnough;
        d.need_ack_nums = q.min_in_sync_replicas;
        return d;
    }
    if (!wait_store_msg_ok) {
        return d;
    }
    int32_t need = q.all_ack_in_sync_state_set ? size : q.in_sync_replicas;
    if (!q.all_ack_in_sync_state_set && q.enable_auto_in_sync_replicas) {
        need = std::max(q.min_in_sync_replicas, std::min(need, size));
    }
    d.need_ack_nums = std::max(need, 1);
    if (d.need_ack_nums > size) {
        d.verdict = V::kInSyncReplicasNotEnough;
    } else if (d.need_ack_nums > 1) {
        d.verdict = V::kWaitForSlaves;
    }
    return d;
}

int64_t confirm_offset(int64_t master_max_offset, const std::set<int64_t>& sync_state_set,
                       int64_t master_id, const std::vector<ReplicaProgress>& slaves,
                       bool all_ack_in_sync_state_set) {
    if (!all_ack_in_sync_state_set || sync_state_set.size() <= 1) {
        return master_max_offset;
    }
    int64_t confirm = master_max_offset;
    for (int64_t id : sync_state_set) {
        if (id == master_id) {
            continue;
        }
        int64_t ack = 0;
        for (const ReplicaProgress& s : slaves) {
            if (s.broker_id == id) {
                ack = std::max(ack, s.ack_offset);
            }
        }
        confirm = std::min(confirm, ack);
    }
    return confirm;
}

std::optional<std::set<int64_t>> next_sync_state_set(const std::set<int64_t>& current,
                                                     int64_t master_id,
                                                     const std::vector<ReplicaProgress>& slaves,
                                                     int64_t confirm, int64_t epoch_start_offset,
                                                     TimePoint now, Duration max_not_catchup,
                                                     bool shrink) {
    auto find = [&](int64_t id) -> const ReplicaProgress* {
        const ReplicaProgress* best = nullptr;
        for (const ReplicaProgress& s : slaves) {
            if (s.broker_id == id && (best == nullptr || (s.connected && !best->connected))) {
                best = &s;
            }
        }
        return best;
    };
    std::set<int64_t> next = current;
    next.insert(master_id);
    if (shrink) {
        for (int64_t id : current) {
            if (id == master_id) {
                continue;
            }
            const ReplicaProgress* s = find(id);
            if (s == nullptr || !s->connected || now - s->caught_up_at > max_not_catchup) {
                next.erase(id);
            }
        }
    }
    for (const ReplicaProgress& s : slaves) {
        // A member just dropped is not re-added in the same pass: the confirm offset it was
        // compared with still counted it.
        if (s.broker_id <= 0 || s.broker_id == master_id || current.count(s.broker_id) != 0 ||
            next.count(s.broker_id) != 0 || !s.connected || s.async_learner) {
            continue;
        }
        if (s.ack_offset >= confirm && s.ack_offset >= epoch_start_offset) {
            next.insert(s.broker_id);
        }
    }
    if (next == current) {
        return std::nullopt;
    }
    return next;
}

}  // namespace comet::broker
