#include "broker/client/rebalance_lock_manager.h"

#include <spdlog/spdlog.h>

namespace comet::broker {

std::set<MessageQueueId> RebalanceLockManager::try_lock_batch(const std::string& group,
                                                              const std::set<MessageQueueId>& mqs,
                                                              const std::string& client_id) {
    std::set<MessageQueueId> locked;
    MutexLock l(mu_);
    const TimePoint now = clock_.now();
    auto& g = table_[group];
    for (const auto& mq : mqs) {
        auto it = g.find(mq);
        if (it == g.end()) {
            g.emplace(mq, LockEntry{client_id, now});
            locked.insert(mq);
            continue;
        }
        LockEntry& e = it->second;
        if (e.client_id == client_id) {
            e.last_update = now;
            locked.insert(mq);
        } else if (expired(e, now)) {
            spdlog::info("lock {}:{}:{} for group {}: expired lock of {} taken by {}", mq.topic,
                         mq.broker_name, mq.queue_id, group, e.client_id, client_id);
            e = LockEntry{client_id, now};
            locked.insert(mq);
        }
    }
    return locked;
}

void RebalanceLockManager::unlock_batch(const std::string& group,
                                        const std::set<MessageQueueId>& mqs,
                                        const std::string& client_id) {
    MutexLock l(mu_);
    auto g = table_.find(group);
    if (g == table_.end()) {
        return;
    }
    for (const auto& mq : mqs) {
        auto it = g->second.find(mq);
        if (it != g->second.end() && it->second.client_id == client_id) {
            g->second.erase(it);
        }
    }
    if (g->second.empty()) {
        table_.erase(g);
    }
}

bool RebalanceLockManager::is_locked(const std::string& group, const MessageQueueId& mq,
                                     const std::string& client_id) const {
    MutexLock l(mu_);
    auto g = table_.find(group);
    if (g == table_.end()) {
        return false;
    }
    auto it = g->second.find(mq);
    return it != g->second.end() && it->second.client_id == client_id &&
           !expired(it->second, clock_.now());
}

bool RebalanceLockManager::group_has_live_locks(const std::string& group) const {
    MutexLock l(mu_);
    auto g = table_.find(group);
    if (g == table_.end()) {
        return false;
    }
    const TimePoint now = clock_.now();
    for (const auto& [_, e] : g->second) {
        if (!expired(e, now)) {
            return true;
        }
    }
    return false;
}

}  // namespace comet::broker
