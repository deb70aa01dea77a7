#include "net/thread_pool_executor.h"

#include <pthread.h>

#include <algorithm>

#include "base/check.h"
#include "base/log_tag.h"

namespace comet::net {

void set_current_thread_name(const std::string& name) {
    std::string cut = name.substr(0, 15);
    pthread_setname_np(pthread_self(), cut.c_str());
}

ThreadPoolExecutor::ThreadPoolExecutor(std::string name, size_t threads, size_t queue_capacity)
    : name_(std::move(name)), capacity_(queue_capacity) {
    COMET_CHECK(threads >= 1, "executor {} needs at least one thread", name_);
    COMET_CHECK(queue_capacity >= 1, "executor {} needs a queue capacity", name_);
    threads_.reserve(threads);
    for (size_t i = 0; i < threads; ++i) {
        threads_.push_back(tagged_thread([this, i] { run(i); }));
    }
}

ThreadPoolExecutor::~ThreadPoolExecutor() { shutdown(); }

bool ThreadPoolExecutor::execute(std::function<void()> task, Reject reject) {
    const SteadyTime now = std::chrono::steady_clock::now();  // outside the lock
    {
        MutexLock lock(mu_);
        if (stopping_ || tasks_.size() >= capacity_) {
            return false;
        }
        tasks_.push_back(Queued{std::move(task), reject, now});
    }
    cv_.notify_one();
    return true;
}

std::optional<ThreadPoolExecutor::TakenBack> ThreadPoolExecutor::take_head_if_waited(
    std::chrono::milliseconds max_wait, SteadyTime now) {
    MutexLock lock(mu_);
    if (tasks_.empty() || tasks_.front().reject == nullptr) {
        return std::nullopt;
    }
    const auto waited =
        std::chrono::duration_cast<std::chrono::milliseconds>(now - tasks_.front().enqueued);
    if (waited < max_wait) {
        return std::nullopt;
    }
    TakenBack out{std::move(tasks_.front().task), tasks_.front().reject,
                  std::max(waited, std::chrono::milliseconds(0)), 0};
    tasks_.pop_front();
    out.left = tasks_.size();
    return out;
}

std::chrono::milliseconds ThreadPoolExecutor::head_wait(SteadyTime now) const {
    MutexLock lock(mu_);
    if (tasks_.empty()) {
        return std::chrono::milliseconds(0);
    }
    return std::max(
        std::chrono::milliseconds(0),
        std::chrono::duration_cast<std::chrono::milliseconds>(now - tasks_.front().enqueued));
}

void ThreadPoolExecutor::shutdown() {
    MutexLock join_lock(join_mu_);
    {
        MutexLock lock(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) {
        COMET_CHECK(t.get_id() != std::this_thread::get_id(),
                    "executor {} shut down from its own thread", name_);
        if (t.joinable()) {
            t.join();
        }
    }
    threads_.clear();
}

size_t ThreadPoolExecutor::queued() const {
    MutexLock lock(mu_);
    return tasks_.size();
}

void ThreadPoolExecutor::run(size_t index) {
    const std::string suffix = "_" + std::to_string(index + 1);
    set_current_thread_name(name_.substr(0, 15 - std::min<size_t>(suffix.size(), 15)) + suffix);
    for (;;) {
        std::function<void()> task;
        mu_.lock();  // plain lock/unlock so the thread-safety analysis follows it
        cv_.wait(mu_, [this]() NO_THREAD_SAFETY_ANALYSIS { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) {
            mu_.unlock();
            return;  // stopping and drained
        }
        task = std::move(tasks_.front().task);
        tasks_.pop_front();
        mu_.unlock();
        task();
    }
}

}  // namespace comet::net
