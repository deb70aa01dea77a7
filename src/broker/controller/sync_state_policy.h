#pragma once
// SyncStatePolicy: the pure decisions of controller mode's master (rocketmq-wire.md §7.3-7.6),
// separated from ReplicasManager's I/O so they can be table-tested:
//  - decide_controller_put: may a put go ahead, and how many replicas must hold it;
//  - confirm_offset: how far consumers may read (ConsumeQueues are built only up to it);
//  - next_sync_state_set: shrink (slaves that fell behind or are gone) and expand (slaves that
//    caught up) of the SyncStateSet the master proposes with ALTER_SYNC_STATE_SET.
// Comet's choice, stricter than RocketMQ: an in-set replica without a connection keeps counting
// with its last ack for the confirm offset until the set shrinks, so consumers never read what
// an electable replica might not hold (docs/controller.md, "Confirm offset").
// Pure: no clock, no threads, no I/O.

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "base/clock.h"

namespace comet::broker {

struct ControllerQuorum {
    int32_t in_sync_replicas = 1;       // inSyncReplicas (master counted)
    int32_t min_in_sync_replicas = 1;   // minInSyncReplicas
    bool all_ack_in_sync_state_set = false;  // allAckInSyncStateSet
    bool enable_auto_in_sync_replicas = false;  // enableAutoInSyncReplicas
};

struct ControllerPutDecision {
    enum class Verdict { kPutOkNow, kWaitForSlaves, kInSyncReplicasNotEnough } verdict =
        Verdict::kPutOkNow;
    int32_t need_ack_nums = 1;  // replicas, master included, that must hold the put
};

// RocketMQ 5 CommitLog#asyncPutMessage with AutoSwitchHAService: the in-sync figure is the
// SyncStateSet size. allAckInSyncStateSet: every member; otherwise inSyncReplicas, lowered to
// the set size (not below minInSyncReplicas) with enableAutoInSyncReplicas. A need above the
// set size, or a set below minInSyncReplicas, is IN_SYNC_REPLICAS_NOT_ENOUGH.
ControllerPutDecision decide_controller_put(const ControllerQuorum& q, size_t sync_state_set_size,
                                            bool wait_store_msg_ok);

// One slave as the master sees it.
struct ReplicaProgress {
    int64_t broker_id = 0;      // brokerControllerId from the AutoSwitch handshake
    int64_t ack_offset = 0;     // last reported offset
    bool connected = false;     // an HA connection is open now
    TimePoint caught_up_at{};   // last time its ack reached the master's end
    bool async_learner = false; // asyncLearner: replicates, never joins the SyncStateSet
};

// Master's confirm offset: its max offset when the set is only itself or allAckInSyncStateSet is
// off; otherwise the minimum ack among the other in-set members (connected or not: see above;
// a member never heard from counts as 0).
int64_t confirm_offset(int64_t master_max_offset, const std::set<int64_t>& sync_state_set,
                       int64_t master_id, const std::vector<ReplicaProgress>& slaves,
                       bool all_ack_in_sync_state_set);

// The set the master should propose now, or nullopt when it stays. Shrink (only when `shrink`):
// in-set slaves not connected, or not caught up for longer than `max_not_catchup`, leave.
// Expand: a connected slave outside the set joins once its ack is at or beyond both the confirm
// offset and the current epoch's start offset (never an async learner). The master stays in.
std::optional<std::set<int64_t>> next_sync_state_set(const std::set<int64_t>& current,
                                                     int64_t master_id,
                                                     const std::vector<ReplicaProgress>& slaves,
                                                     int64_t confirm, int64_t epoch_start_offset,
                                                     TimePoint now, Duration max_not_catchup,
                                                     bool shrink);

}  // namespace comet::broker
