#pragma once
// run_on_loop_and_wait: the stop step HaService and HaClient run on each io_context they use
// before shutdown() returns. `step` runs on loop `index` of `loops` and the caller waits for it;
// since a loop runs its handlers one at a time, every handler of that loop that runs later sees
// what `step` set (the "stopping" flags) and touches nothing the caller is about to free.
// When the group is not running (never started, or already joined), no thread will run the
// posted step, so it runs on the caller's thread instead, exactly once either way.
// Threads: any thread except the loop's own (it would wait for itself).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>

#include "base/check.h"
#include "base/mutex.h"
#include "net/asio.h"
#include "net/io_loop.h"

namespace comet::ha::detail {

inline void run_on_loop_and_wait(net::IoLoopGroup& loops, size_t index,
                                 std::function<void()> step) {
    COMET_CHECK(!net::IoLoopGroup::on_io_thread() || !loops.running(),
                "HA shutdown on an I/O thread would wait for its own loop");
    struct State {
        std::atomic<bool> claimed{false};
        Mutex mu;
        std::condition_variable_any cv;
        bool done GUARDED_BY(mu) = false;
        std::function<void()> step;
    };
    auto st = std::make_shared<State>();
    st->step = std::move(step);
    asio::post(loops.context(index), [st] {
        if (st->claimed.exchange(true)) {
            return;
        }
        st->step();
        MutexLock l(st->mu);
        st->done = true;
        st->cv.notify_all();
    });
    for (;;) {
        {
            std::unique_lock<Mutex> l(st->mu);
            if (st->cv.wait_for(l, std::chrono::milliseconds(20),
                                [&st]() NO_THREAD_SAFETY_ANALYSIS { return st->done; })) {
                return;
            }
        }
        if (!loops.running() && !st->claimed.exchange(true)) {
            // No loop thread exists: nothing runs concurrently with the step.
            st->step();
            return;
        }
    }
}

}  // namespace comet::ha::detail
