#pragma once
// FaultProxy: a TCP proxy on 127.0.0.1 (ephemeral or given listen port → one target) for fault
// tests between Comet processes (master ↔ slave HA links, client ↔ broker). Every accepted
// connection gets its own upstream connection to the target; bytes are forwarded in both
// directions with runtime-controlled faults:
//   - one-way latency per direction (each chunk is held `delay` after it was read),
//   - bandwidth throttle per direction (token bucket, bytes/s, per connection),
//   - pause (hold every byte, keep reading until a per-direction buffer cap, then backpressure),
//   - drop (close every current connection, before drop() returns; new ones are still accepted),
//   - refuse (new connections are accepted and closed at once).
// Changes apply to bytes read after the change (latency) or at once (rate, pause, drop).
//
// Owner: one test (or the comet_faultproxy CLI). Threads: one named loop thread ("FaultProxy")
// does all socket I/O with poll(); the control methods may be called from any thread and take
// mu_, which the loop only holds to copy the settings. Lock order: mu_ only.
// Invariants: bytes of one direction leave in the order they arrived (FIFO chunks); a direction
// never buffers more than kMaxBufferedBytes (reading stops at the cap); shutdown() closes every
// socket and joins the loop.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "base/status.h"

namespace comet::it {

enum class ProxyDirection {
    kUpstream,    // accepted client → target
    kDownstream,  // target → accepted client
};

struct FaultProxyStats {
    uint64_t accepted = 0;       // connections accepted so far
    uint64_t active = 0;         // connections open now
    uint64_t upstream_bytes = 0;    // bytes written to the target
    uint64_t downstream_bytes = 0;  // bytes written to clients
};

class FaultProxy {
public:
    static constexpr size_t kMaxBufferedBytes = 4 * 1024 * 1024;

    // Listens on listen_host:listen_port (0 = ephemeral) and forwards to target_host:target_port.
    // Errors: kIoError (socket/bind/listen failed, message names the address).
    static Result<std::unique_ptr<FaultProxy>> start(const std::string& target_host,
                                                     uint16_t target_port,
                                                     uint16_t listen_port = 0,
                                                     const std::string& listen_host = "127.0.0.1");
    ~FaultProxy();  // shutdown()
    FaultProxy(const FaultProxy&) = delete;
    FaultProxy& operator=(const FaultProxy&) = delete;

    uint16_t port() const { return listen_port_; }
    std::string address() const;  // "127.0.0.1:<port>"

    void set_delay(ProxyDirection dir, std::chrono::milliseconds delay);
    void set_delay(std::chrono::milliseconds delay);  // both directions
    // 0 = unlimited.
    void set_rate(ProxyDirection dir, uint64_t bytes_per_second);
    void set_rate(uint64_t bytes_per_second);  // both directions
    void pause();
    void resume();  // ends pause and refuse
    void drop();    // closes every current connection (queued bytes are lost)
    void set_refuse(bool refuse);
    // Clears delay, rate, pause and refuse.
    void heal();

    FaultProxyStats stats() const;
    // Joins the loop and closes every socket. Idempotent.
    void shutdown();

private:
    struct Settings {
        std::chrono::milliseconds delay[2]{std::chrono::milliseconds(0),
                                           std::chrono::milliseconds(0)};
        uint64_t rate[2]{0, 0};
        bool paused = false;
        bool refuse = false;
        uint64_t drop_generation = 0;
    };
    struct Link;
    struct Loop;

    FaultProxy(int listen_fd, uint16_t listen_port, std::string target_host,
               uint16_t target_port, int wake_fd);
    void wake();
    Settings settings() const;
    void run();

    const int listen_fd_;
    const uint16_t listen_port_;
    const std::string target_host_;
    const uint16_t target_port_;
    const int wake_fd_;  // eventfd: control changes and shutdown wake the loop

    mutable Mutex mu_;
    Settings settings_ GUARDED_BY(mu_);

    std::atomic<bool> stop_{false};
    std::atomic<uint64_t> drops_done_{0};  // the last drop generation the loop carried out
    std::atomic<uint64_t> accepted_{0};
    std::atomic<uint64_t> active_{0};
    std::atomic<uint64_t> bytes_[2]{0, 0};
    std::thread thread_;
    bool shut_ = false;  // owner thread only
};

}  // namespace comet::it
