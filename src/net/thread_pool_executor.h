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
// Each queued task carries its enqueue time (one steady-clock read in execute()), so the wait of
// the head (Java headSlowTimeMills) can be reported and a task that waited too long can be taken
// back and answered instead of run (Java BrokerFastFailure, take_head_if_waited).

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
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

    using SteadyTime = std::chrono::steady_clock::time_point;
    // Answers, instead of running it, a task taken back from the queue (the task's own state,
    // e.g. its request's Responder, is inside `task`: a plain function, no allocation).
    using Reject = void (*)(std::function<void()>& task, int32_t code, const std::string& remark);

    // Queues `task`. False when the queue is full or the pool is shut down (the caller answers
    // SYSTEM_BUSY, as Java does on RejectedExecutionException). A task with a `reject` may be
    // taken back by take_head_if_waited(); one without is never (it stops the scan there).
    [[nodiscard]] bool execute(std::function<void()> task, Reject reject = nullptr);

    // A task taken back from the head of the queue: answer it with task.reject.
    struct TakenBack {
        std::function<void()> task;
        Reject reject;
        std::chrono::milliseconds waited;  // in the queue, up to `now`
        size_t left;                       // tasks still queued after it
    };
    // Java BrokerFastFailure's queue scan: removes and returns the head task when it has waited
    // at least `max_wait` by `now` and can be rejected; nullopt otherwise (empty queue, a
    // younger head, or a head without reject).
    std::optional<TakenBack> take_head_if_waited(std::chrono::milliseconds max_wait,
                                                 SteadyTime now);
    // How long the head task has waited by `now` (Java headSlowTimeMills); 0 when empty.
    std::chrono::milliseconds head_wait(SteadyTime now) const;
    size_t capacity() const { return capacity_; }

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
    struct Queued {
        std::function<void()> task;
        Reject reject;
        SteadyTime enqueued;
    };
    std::deque<Queued> tasks_ GUARDED_BY(mu_);
    bool stopping_ GUARDED_BY(mu_) = false;
    std::vector<std::thread> threads_;  // written only by the constructor and shutdown()
    Mutex join_mu_;                     // serializes concurrent shutdown() calls
};

}  // namespace comet::net
