#include "store/reput_arrival.h"

namespace comet::store {

std::string ArrivalWaiters::key_of(std::string_view topic, int32_t queue_id) {
    std::string k(topic);
    k.push_back('@');
    k.append(std::to_string(queue_id));
    return k;
}

ArrivalWaiters::Id ArrivalWaiters::add(std::string_view topic, int32_t queue_id,
                                       QueueOffset offset, QueueOffset current_max,
                                       TimePoint deadline, Callback cb) {
    if (current_max > offset) {
        cb(true, current_max);
        return 0;
    }
    MutexLock l(mu_);
    const Id id = next_id_++;
    std::string key = key_of(topic, queue_id);
    by_key_.emplace(key, id);
    waiters_.emplace(id, Waiter{std::move(key), offset, deadline, std::move(cb)});
    count_.store(waiters_.size(), std::memory_order_release);
    return id;
}

bool ArrivalWaiters::cancel(Id id) {
    MutexLock l(mu_);
    auto it = waiters_.find(id);
    if (it == waiters_.end()) {
        return false;
    }
    auto range = by_key_.equal_range(it->second.key);
    for (auto k = range.first; k != range.second; ++k) {
        if (k->second == id) {
            by_key_.erase(k);
            break;
        }
    }
    waiters_.erase(it);
    count_.store(waiters_.size(), std::memory_order_release);
    return true;
}

void ArrivalWaiters::arriving(const std::string& topic, int32_t queue_id,
                              QueueOffset logic_offset, int64_t, int64_t) {
    if (!any()) {
        return;  // the common case, once per dispatched record: no lock
    }
    std::vector<Callback> ready;
    {
        MutexLock l(mu_);
        if (waiters_.empty()) {
            return;
        }
        auto range = by_key_.equal_range(key_of(topic, queue_id));
        for (auto k = range.first; k != range.second;) {
            auto w = waiters_.find(k->second);
            if (w != waiters_.end() && logic_offset > w->second.offset) {
                ready.push_back(std::move(w->second.cb));
                waiters_.erase(w);
                k = by_key_.erase(k);
            } else {
                ++k;
            }
        }
        count_.store(waiters_.size(), std::memory_order_release);
    }
    for (auto& cb : ready) {
        cb(true, logic_offset);
    }
}

int ArrivalWaiters::expire(TimePoint now) {
    std::vector<Callback> expired;
    {
        MutexLock l(mu_);
        for (auto it = waiters_.begin(); it != waiters_.end();) {
            if (it->second.deadline <= now) {
                auto range = by_key_.equal_range(it->second.key);
                for (auto k = range.first; k != range.second; ++k) {
                    if (k->second == it->first) {
                        by_key_.erase(k);
                        break;
                    }
                }
                expired.push_back(std::move(it->second.cb));
                it = waiters_.erase(it);
            } else {
                ++it;
            }
        }
        count_.store(waiters_.size(), std::memory_order_release);
    }
    for (auto& cb : expired) {
        cb(false, QueueOffset(-1));
    }
    return static_cast<int>(expired.size());
}

void ArrivalWaiters::cancel_all() {
    std::vector<Callback> all;
    {
        MutexLock l(mu_);
        for (auto& [id, w] : waiters_) {
            all.push_back(std::move(w.cb));
        }
        waiters_.clear();
        by_key_.clear();
        count_.store(0, std::memory_order_release);
    }
    for (auto& cb : all) {
        cb(false, QueueOffset(-1));
    }
}

size_t ArrivalWaiters::size() const {
    MutexLock l(mu_);
    return waiters_.size();
}

}  // namespace comet::store
