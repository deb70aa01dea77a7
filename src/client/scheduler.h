#pragma once
// A single-thread timer for the client's background work (route refresh, heartbeats,
// rebalance, offset commits, delayed pulls). Tasks run one at a time on the "client_timer"
// thread in due order; they must not block for long.
//
// Owner: MqClientInstance. Threads: schedule_* from any thread; mu_ is a leaf lock, never held
// while a task runs. After shutdown() every schedule_* call is a no-op.

#include <condition_variable>
#include <functional>
#include <map>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"

namespace comet::client {

class Scheduler {
public:
    Scheduler() = default;
    ~Scheduler();
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    void start();
    // Drops pending tasks and joins the thread. Idempotent. Must not be called from a task.
    void shutdown();

    void schedule_after(Duration delay, std::function<void()> task);
    // Runs `task` after `initial`, then every `period` until shutdown.
    void schedule_every(Duration initial, Duration period, std::function<void()> task);

private:
    void run();

    Mutex mu_;
    std::condition_variable_any cv_;
    std::multimap<TimePoint, std::function<void()>> tasks_ GUARDED_BY(mu_);
    bool stopped_ GUARDED_BY(mu_) = false;
    std::thread thread_;
};

}  // namespace comet::client
