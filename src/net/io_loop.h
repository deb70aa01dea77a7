#pragma once
// IoLoopGroup: N single-threaded asio io_contexts, each run by one named thread. A connection
// is bound to one loop for its whole life, so every handler of a connection runs on one thread
// and needs no strand. Java counterpart: Netty's EventLoopGroup (selector threads).
//
// Owner: RemotingServer / RemotingClient (through shared_ptr, because connections keep their
// loop's io_context alive after the owner is gone; see src/net/README.md "Lifetime").
// Threads: start()/shutdown() from the owner's thread; context()/next() from any thread.
// Invariant: after shutdown() returns no loop thread runs, and every connection bound to the
// group is closed (the owner closes them first), so nothing posts to the contexts any more.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/asio.h"

namespace comet::net {

class IoLoopGroup {
public:
    // Requires: threads >= 1.
    IoLoopGroup(std::string name, size_t threads);
    ~IoLoopGroup();
    IoLoopGroup(const IoLoopGroup&) = delete;
    IoLoopGroup& operator=(const IoLoopGroup&) = delete;

    void start();
    // Lets each loop run out of work (pending handlers run, so closed connections fail their
    // callbacks), then joins. A loop still busy after `drain_timeout` is stopped hard. A group
    // that never started runs what was posted to it on the caller's thread instead (bounded):
    // otherwise a handler owning an owner of the group would keep both alive forever.
    void shutdown(std::chrono::milliseconds drain_timeout = std::chrono::milliseconds(5000));

    size_t size() const { return loops_.size(); }
    asio::io_context& context(size_t i) { return *loops_[i]->ctx; }
    // Round-robin pick for a new connection.
    size_t next();

    // True from start() until shutdown() has joined the threads: handlers posted now will run
    // (or, during shutdown's drain, still may). Other services sharing the group (src/ha) use it
    // to tell a drain they can wait for from one no thread will ever run.
    bool running() const { return running_.load(std::memory_order_acquire); }

    // Runs `step` on loop `index` and waits for it. A loop runs its handlers one at a time, so
    // every handler of that loop that runs later sees what `step` set (a "stopping" flag): the
    // way a service sharing the group stops touching what its caller is about to free. When
    // the group is not running (never started, or joined) no thread would run the posted step:
    // it runs on the caller's thread instead, exactly once either way. Any thread except the
    // loop's own (it would wait for itself).
    void run_and_wait(size_t index, std::function<void()> step);

    // True on a thread of any IoLoopGroup (network threads must never block).
    static bool on_io_thread();

private:
    struct Loop {
        std::unique_ptr<asio::io_context> ctx;
        std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard;
        std::thread thread;
        std::atomic<bool> done{false};
    };

    const std::string name_;
    std::vector<std::unique_ptr<Loop>> loops_;
    std::atomic<size_t> next_{0};
    std::atomic<bool> running_{false};
    bool started_ = false;        // owner thread only
    bool ever_started_ = false;   // owner thread only
};

}  // namespace comet::net
