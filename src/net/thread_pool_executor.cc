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

bool ThreadPoolExecutor::execute(std::function<void()> task) {
    {
        MutexLock lock(mu_);
        if (stopping_ || tasks_.size() >= capacity_) {
            return false;
        }
        tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
    return true;
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
        task = std::move(tasks_.front());
        tasks_.pop_front();
        mu_.unlock();
        task();
    }
}

}  // namespace comet::net
