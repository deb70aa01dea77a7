#include "net/io_loop.h"

#include <spdlog/spdlog.h>

#include <condition_variable>

#include "base/check.h"
#include "base/log_tag.h"
#include "base/mutex.h"
#include "net/thread_pool_executor.h"

namespace comet::net {

namespace {
thread_local bool t_on_io_thread = false;
}  // namespace

IoLoopGroup::IoLoopGroup(std::string name, size_t threads) : name_(std::move(name)) {
    COMET_CHECK(threads >= 1, "io loop group {} needs at least one thread", name_);
    for (size_t i = 0; i < threads; ++i) {
        auto loop = std::make_unique<Loop>();
        // Concurrency hint 1: each context is driven by exactly one thread.
        loop->ctx = std::make_unique<asio::io_context>(1);
        loops_.push_back(std::move(loop));
    }
}

IoLoopGroup::~IoLoopGroup() { shutdown(); }

void IoLoopGroup::start() {
    if (started_) {
        return;
    }
    started_ = true;
    ever_started_ = true;
    running_.store(true, std::memory_order_release);
    for (size_t i = 0; i < loops_.size(); ++i) {
        Loop* loop = loops_[i].get();
        loop->guard.emplace(asio::make_work_guard(*loop->ctx));
        const std::string suffix = "_" + std::to_string(i + 1);
        std::string thread_name =
            name_.substr(0, 15 - std::min<size_t>(suffix.size(), 15)) + suffix;
        loop->thread = tagged_thread([loop, thread_name] {
            set_current_thread_name(thread_name);
            t_on_io_thread = true;
            loop->ctx->run();
            loop->done = true;
        });
    }
}

void IoLoopGroup::shutdown(std::chrono::milliseconds drain_timeout) {
    if (!ever_started_) {
        // No thread will ever run what was posted to this group (a server whose start failed
        // after services sharing its loops queued their first handlers). Such a handler may own,
        // through its captures, an object that owns this group: run the queue out here, on the
        // caller's thread, as run_and_wait does for a group that is not running. Services
        // check their stop flags first, so each handler returns and drops what it held.
        for (auto& loop : loops_) {
            loop->ctx->restart();
            for (int round = 0; round < 100 && loop->ctx->poll() > 0; ++round) {
            }
        }
        return;
    }
    if (!started_) {
        return;
    }
    started_ = false;
    for (auto& loop : loops_) {
        loop->guard.reset();
    }
    const auto deadline = std::chrono::steady_clock::now() + drain_timeout;
    for (auto& loop : loops_) {
        // Bounded wait for the loop to run out of work; a leftover timer or socket operation
        // would otherwise keep run() going forever.
        while (!loop->done && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if (!loop->done) {
            spdlog::warn("net: io loop {} still busy after {} ms at shutdown, stopping it", name_,
                         drain_timeout.count());
            loop->ctx->stop();
        }
        if (loop->thread.joinable()) {
            loop->thread.join();
        }
    }
    running_.store(false, std::memory_order_release);
}

void IoLoopGroup::run_and_wait(size_t index, std::function<void()> step) {
    COMET_CHECK(!on_io_thread() || !running(), "run_and_wait on an I/O thread of group {}",
                name_);
    struct State {
        std::atomic<bool> claimed{false};
        Mutex mu;
        std::condition_variable_any cv;
        bool done GUARDED_BY(mu) = false;
        std::function<void()> step;
    };
    auto st = std::make_shared<State>();
    st->step = std::move(step);
    asio::post(context(index), [st] {
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
        if (!running() && !st->claimed.exchange(true)) {
            st->step();  // no loop thread exists: nothing runs concurrently with it
            return;
        }
    }
}

size_t IoLoopGroup::next() { return next_.fetch_add(1, std::memory_order_relaxed) % loops_.size(); }

bool IoLoopGroup::on_io_thread() { return t_on_io_thread; }

}  // namespace comet::net
