#pragma once
// Message arrival notification for long polling (Java MessageArrivingListener and the
// broker's PullRequestHoldService wake-up): after the dispatch thread appends a unit to a
// ConsumeQueue, the store calls MessageArrivingListener::arriving() and ArrivalWaiters.
//
// ArrivalWaiters: "call me when topic/queue holds a message at offset >= X (its max offset
// becomes > X), or when my deadline passes". Owner: MessageStore. Threads: add()/cancel() from
// any thread; on_arrival() from the dispatch thread; expire() from the store scheduler (or a
// test with a ManualClock). Callbacks run on those threads, outside mu_, exactly once each, and
// must not block (post to an executor).

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "store/put_message_status.h"

namespace comet::store {

class MessageArrivingListener {
public:
    virtual ~MessageArrivingListener() = default;
    // logic_offset: the queue's max offset after the new unit (unit offset + 1), as Java's
    // notifyMessageArriving receives it.
    virtual void arriving(const std::string& topic, int32_t queue_id, QueueOffset logic_offset,
                          int64_t tags_code, int64_t store_timestamp) = 0;
};

class ArrivalWaiters final : public MessageArrivingListener {
public:
    // arrived = true: a message at >= offset exists (max_offset > offset); false: timed out
    // or the store is shutting down.
    using Callback = std::function<void(bool arrived, QueueOffset max_offset)>;
    using Id = uint64_t;

    // current_max: the queue's max offset now; if it is already > offset the callback runs
    // at once on this thread and 0 is returned.
    Id add(std::string_view topic, int32_t queue_id, QueueOffset offset, QueueOffset current_max,
           TimePoint deadline, Callback cb);
    // False when the waiter already ran.
    bool cancel(Id id);

    void arriving(const std::string& topic, int32_t queue_id, QueueOffset logic_offset,
                  int64_t tags_code, int64_t store_timestamp) override;
    // Completes (false) every waiter whose deadline <= now. Returns how many.
    int expire(TimePoint now);
    // Completes every waiter with false (shutdown).
    void cancel_all();
    size_t size() const;
    // Whether any waiter is registered (lock-free; may lag a concurrent add/cancel).
    bool any() const { return count_.load(std::memory_order_acquire) > 0; }

private:
    struct Waiter {
        std::string key;
        QueueOffset offset;
        TimePoint deadline;
        Callback cb;
    };
    static std::string key_of(std::string_view topic, int32_t queue_id);

    mutable Mutex mu_;
    Id next_id_ GUARDED_BY(mu_) = 1;
    std::map<Id, Waiter> waiters_ GUARDED_BY(mu_);
    std::multimap<std::string, Id, std::less<>> by_key_ GUARDED_BY(mu_);
    std::atomic<size_t> count_{0};  // waiters_.size(), stored after every change under mu_
};

}  // namespace comet::store
