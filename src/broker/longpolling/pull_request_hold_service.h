#pragma once
// PullRequestHoldService: long polling (Java PullRequestHoldService). A PULL_MESSAGE that found
// nothing is parked here under "topic@queueId" until (a) the dispatcher reports a new message in
// that queue whose tag matches the subscription, or (b) its suspend deadline passes. Then its
// `wake` callback runs once (outside mu_) and the request leaves the table; the callback
// re-executes the pull with suspension forbidden and answers the client.
// Threads: suspend() from pull executors, notify_message_arriving() from the store's dispatch
// thread, check_all() from the service thread ("PullRequestHoldService") every check interval.
// Invariant: a parked request is woken exactly once (or dropped, unanswered, at shutdown).

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "broker/client/subscription_data.h"

namespace comet::broker {

struct HeldPullRequest {
    std::string topic;
    int32_t queue_id = 0;
    int64_t pull_from_offset = 0;  // the request's queueOffset
    TimePoint deadline{};          // suspend timeout
    std::optional<SubscriptionData> subscription;  // nullopt: every tag matches
    std::function<void()> wake;    // re-executes the pull; must not block for long
};

class PullRequestHoldService {
public:
    // `max_offset(topic, queueId)` = the ConsumeQueue's max offset (next to write).
    using MaxOffsetFn = std::function<int64_t(const std::string&, int32_t)>;

    PullRequestHoldService(Clock& clock, MaxOffsetFn max_offset, Duration check_interval);
    ~PullRequestHoldService();

    void suspend(HeldPullRequest request);
    // The dispatcher appended a unit with `tags_code` to topic/queue; `max_offset` = new max.
    // tags_code nullopt = unknown (wake every pending pull behind max_offset).
    void notify_message_arriving(const std::string& topic, int32_t queue_id, int64_t max_offset,
                                 std::optional<int64_t> tags_code);
    // Re-checks every parked request against the queue's max offset and its deadline.
    void check_all();
    size_t held_count() const;
    // The number of parked requests, readable without the lock (the store wakes its
    // dispatcher on every append while it is above zero).
    const std::atomic<int64_t>* held_counter() const { return &held_; }

    void start();     // starts the service thread
    void shutdown();  // joins it; parked requests are dropped (their connections close)

private:
    static std::string key(const std::string& topic, int32_t queue_id) {
        return topic + "@" + std::to_string(queue_id);
    }
    // Moves requests of `k` that are ready into `out`.
    void collect_locked(const std::string& k, int64_t max_offset, std::optional<int64_t> tags_code,
                        TimePoint now, std::vector<HeldPullRequest>* out) REQUIRES(mu_);
    void run();

    Clock& clock_;
    MaxOffsetFn max_offset_;
    const Duration check_interval_;
    mutable Mutex mu_;
    std::map<std::string, std::vector<HeldPullRequest>> table_ GUARDED_BY(mu_);
    std::atomic<int64_t> held_{0};  // requests in table_, stored after every change under mu_
    bool stopping_ GUARDED_BY(mu_) = false;
    std::condition_variable_any cv_;
    std::thread thread_;
};

}  // namespace comet::broker
