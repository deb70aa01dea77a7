#include "broker/longpolling/pull_request_hold_service.h"

#include "base/log_tag.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

namespace comet::broker {

PullRequestHoldService::PullRequestHoldService(Clock& clock, MaxOffsetFn max_offset,
                                               Duration check_interval)
    : clock_(clock), max_offset_(std::move(max_offset)), check_interval_(check_interval) {}

PullRequestHoldService::~PullRequestHoldService() { shutdown(); }

void PullRequestHoldService::suspend(HeldPullRequest request) {
    MutexLock l(mu_);
    if (stopping_) {
        return;
    }
    table_[key(request.topic, request.queue_id)].push_back(std::move(request));
    held_.fetch_add(1, std::memory_order_release);
}

void PullRequestHoldService::collect_locked(const std::string& k, int64_t max_offset,
                                            std::optional<int64_t> tags_code, TimePoint now,
                                            std::vector<HeldPullRequest>* out) {
    auto it = table_.find(k);
    if (it == table_.end()) {
        return;
    }
    auto& list = it->second;
    std::vector<HeldPullRequest> keep;
    for (auto& r : list) {
        bool ready = false;
        if (max_offset > r.pull_from_offset) {
            ready = !tags_code.has_value() || !r.subscription.has_value() ||
                    tag_code_matches(*r.subscription, *tags_code);
        }
        if (!ready && now >= r.deadline) {
            ready = true;
        }
        if (ready) {
            out->push_back(std::move(r));
            held_.fetch_sub(1, std::memory_order_release);
        } else {
            keep.push_back(std::move(r));
        }
    }
    if (keep.empty()) {
        table_.erase(it);
    } else {
        list = std::move(keep);
    }
}

void PullRequestHoldService::notify_message_arriving(const std::string& topic, int32_t queue_id,
                                                     int64_t max_offset,
                                                     std::optional<int64_t> tags_code) {
    if (held_.load(std::memory_order_acquire) == 0) {
        return;  // the common case, once per dispatched record: no key, no lock
    }
    std::vector<HeldPullRequest> ready;
    {
        MutexLock l(mu_);
        collect_locked(key(topic, queue_id), max_offset, tags_code, clock_.now(), &ready);
    }
    for (auto& r : ready) {
        r.wake();
    }
}

void PullRequestHoldService::check_all() {
    std::vector<std::pair<std::string, int32_t>> queues;
    {
        MutexLock l(mu_);
        for (const auto& [k, list] : table_) {
            if (!list.empty()) {
                queues.emplace_back(list.front().topic, list.front().queue_id);
            }
        }
    }
    std::vector<HeldPullRequest> ready;
    for (const auto& [topic, qid] : queues) {
        const int64_t max = max_offset_(topic, qid);  // outside mu_: calls into the store
        MutexLock l(mu_);
        collect_locked(key(topic, qid), max, std::nullopt, clock_.now(), &ready);
    }
    for (auto& r : ready) {
        r.wake();
    }
}

size_t PullRequestHoldService::held_count() const {
    return static_cast<size_t>(held_.load(std::memory_order_acquire));
}

void PullRequestHoldService::start() {
    MutexLock l(mu_);
    if (thread_.joinable()) {
        return;
    }
    stopping_ = false;
    thread_ = tagged_thread([this] { run(); });
}

void PullRequestHoldService::shutdown() {
    {
        MutexLock l(mu_);
        stopping_ = true;
        table_.clear();
        held_.store(0, std::memory_order_release);
    }
    cv_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
}

void PullRequestHoldService::run() {
    pthread_setname_np(pthread_self(), "PullReqHold");
    while (true) {
        {
            MutexLock l(mu_);
            if (stopping_) {
                break;
            }
            std::unique_lock<Mutex> ul(mu_, std::adopt_lock);
            cv_.wait_for(ul, check_interval_);
            ul.release();
            if (stopping_) {
                break;
            }
        }
        check_all();
    }
}

}  // namespace comet::broker
