#include "client/scheduler.h"

#include <memory>

namespace comet::client {

Scheduler::~Scheduler() { shutdown(); }

void Scheduler::start() {
    thread_ = std::thread([this] { run(); });
}

void Scheduler::shutdown() {
    {
        MutexLock lock(mu_);
        stopped_ = true;
        tasks_.clear();
    }
    cv_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
}

void Scheduler::schedule_after(Duration delay, std::function<void()> task) {
    {
        MutexLock lock(mu_);
        if (stopped_) {
            return;
        }
        tasks_.emplace(SystemClock::instance().now() + delay, std::move(task));
    }
    cv_.notify_all();
}

void Scheduler::schedule_every(Duration initial, Duration period, std::function<void()> task) {
    auto shared = std::make_shared<std::function<void()>>(std::move(task));
    auto self = std::make_shared<std::function<void()>>();
    std::weak_ptr<std::function<void()>> weak = self;
    *self = [this, shared, weak, period] {
        (*shared)();
        if (auto again = weak.lock()) {
            schedule_after(period, [again] { (*again)(); });
        }
    };
    // The chain keeps itself alive through the queued copy of `self`.
    schedule_after(initial, [self] { (*self)(); });
}

void Scheduler::run() {
    mu_.lock();
    while (!stopped_) {
        if (tasks_.empty()) {
            cv_.wait(mu_);
            continue;
        }
        auto first = tasks_.begin();
        const TimePoint now = SystemClock::instance().now();
        if (first->first > now) {
            cv_.wait_for(mu_, first->first - now);
            continue;
        }
        std::function<void()> task = std::move(first->second);
        tasks_.erase(first);
        mu_.unlock();
        task();
        mu_.lock();
    }
    mu_.unlock();
}

}  // namespace comet::client
