#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace comet::net {

// Back-off for one-way sends to a peer that may be down (Raft messages of DLedger and the
// controller). Raft retries by itself (heartbeats, probes), so after a failed write nothing goes
// to the peer until the back-off passes, 50 ms doubling to 1 s, instead of a connect attempt and
// a warning every heartbeat. Hearing from the peer ends the back-off at once.
//
// Thread-safe: the driver thread asks and resets, the I/O thread reports write results.
class PeerBackoff {
public:
    using Clock = std::chrono::steady_clock;
    static constexpr int64_t kFirstMs = 50;
    static constexpr int64_t kMaxMs = 1000;

    // False while a back-off after a failed write is running.
    bool may_send(Clock::time_point now) const { return now >= retry_at_.load(); }

    // The outcome of one write.
    void on_write(bool ok, Clock::time_point now);

    // The peer spoke to us: it is up again.
    void reset();

    int64_t backoff_ms() const { return backoff_ms_.load(); }

private:
    std::atomic<Clock::time_point> retry_at_{};
    std::atomic<int64_t> backoff_ms_{0};
};

}  // namespace comet::net
