#include "net/peer_backoff.h"

#include <algorithm>

namespace comet::net {

void PeerBackoff::on_write(bool ok, Clock::time_point now) {
    if (ok) {
        backoff_ms_.store(0);
        return;
    }
    const int64_t next = std::clamp<int64_t>(backoff_ms_.load() * 2, kFirstMs, kMaxMs);
    backoff_ms_.store(next);
    retry_at_.store(now + std::chrono::milliseconds(next));
}

void PeerBackoff::reset() {
    if (backoff_ms_.load() != 0 || retry_at_.load() != Clock::time_point{}) {
        backoff_ms_.store(0);
        retry_at_.store({});
    }
}

}  // namespace comet::net
