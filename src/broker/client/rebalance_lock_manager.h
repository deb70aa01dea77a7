#pragma once
// RebalanceLockManager: per-group message-queue locks for orderly consumption (Java
// RebalanceLockManager; LOCK_BATCH_MQ / UNLOCK_BATCH_MQ). A lock held by a client stays valid
// for `lock_max_live_time` (60 s default) after its last renewal; an expired lock can be taken
// by any client of the group. Thread-safety: any thread; mu_ guards the table.

#include <map>
#include <set>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"

namespace comet::broker {

struct MessageQueueId {
    std::string topic;
    std::string broker_name;
    int32_t queue_id = 0;
    auto operator<=>(const MessageQueueId&) const = default;
};

class RebalanceLockManager {
public:
    RebalanceLockManager(Clock& clock, Duration lock_max_live_time)
        : clock_(clock), max_live_(lock_max_live_time) {}

    // Locks (or renews) each queue for `client_id`; returns the queues now held by that client.
    std::set<MessageQueueId> try_lock_batch(const std::string& group,
                                            const std::set<MessageQueueId>& mqs,
                                            const std::string& client_id);
    // Releases the queues held by `client_id` (others' locks are left alone).
    void unlock_batch(const std::string& group, const std::set<MessageQueueId>& mqs,
                      const std::string& client_id);
    bool is_locked(const std::string& group, const MessageQueueId& mq,
                   const std::string& client_id) const;
    // True when the group holds any unexpired lock (send-back goes to DLQ for orderly groups).
    bool group_has_live_locks(const std::string& group) const;

private:
    struct LockEntry {
        std::string client_id;
        TimePoint last_update{};
    };
    bool expired(const LockEntry& e, TimePoint now) const { return now - e.last_update > max_live_; }

    Clock& clock_;
    const Duration max_live_;
    mutable Mutex mu_;
    std::map<std::string, std::map<MessageQueueId, LockEntry>> table_ GUARDED_BY(mu_);
};

}  // namespace comet::broker
