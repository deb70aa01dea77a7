#pragma once
// ThreadPoolExecutor: a named, fixed-size thread pool with a bounded task queue. Each group of
// request codes runs on its own pool (Java: sendMessageExecutor, pullMessageExecutor,
// adminBrokerExecutor...), so a slow admin call never stalls sends.
//
// Owner: whoever builds it (the broker, namesrv); RemotingServer/RemotingClient keep a shared_ptr
// and call shutdown() on the pools registered with them when they shut down.
// Threads: execute() from any thread; tasks run on the pool's threads, named "<name>_<i>" (cut
// to the 15 characters Linux allows). shutdown() runs every task already queued, then joins.
// Invariant: once shutdown() has begun, execute() accepts nothing and returns false.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace comet::net {

// Names the calling thread for ps/top/gdb (cut to 15 bytes, the pthread limit).
void set_current_thread_name(const std::string& name);

class ThreadPoolExecutor {
public:
    // Requires: threads >= 1, queue_capacity >= 1.
    ThreadPoolExecutor(std::string name, size_t threads, size_t queue_capacity = 10000);
    ~ThreadPoolExecutor();  // shutdown()
    ThreadPoolExecutor(const ThreadPoolExecutor&) = delete;
    ThreadPoolExecutor& operator=(const ThreadPoolExecutor&) = delete;

    // Queues `task`. False when the queue is full or the pool is shut down (the caller answers
    // SYSTEM_BUSY, as Java does on RejectedExecutionException).
    [[nodiscard]] bool execute(std::function<void()> task);

    // Stops accepting, runs every queued task, joins the threads. Idempotent; must not be
    // called from one of this pool's own threads.
    void shutdown();

    const std::string& name() const { return name_; }
    size_t queued() const;

private:
    void run(size_t index);

    const std::string name_;
    const size_t capacity_;
    mutable Mutex mu_;
    std::condition_variable_any cv_;
    std::deque<std::function<void()>> tasks_ GUARDED_BY(mu_);
    bool stopping_ GUARDED_BY(mu_) = false;
    std::vector<std::thread> threads_;  // written only by the constructor and shutdown()
    Mutex join_mu_;                     // serializes concurrent shutdown() calls
};

}  // namespace comet::net
