#pragma once
// When a DLedger follower syncs on its driver thread (decision 034) and when it leaves the syncs
// to its flush thread instead. Pure logic: the caller passes the time and how long each sync
// took.
//
// A driver blocked in a sync answers no heartbeat meanwhile; the leader steps down when it hears
// from no majority within the minimum election timeout. One slow sync is harmless (the shared
// virtual disk of the benchmarks stalls a flush for 40-70 ms every few seconds); a disk that
// keeps stalling is not. So the syncs leave the driver for `off_for` after one sync longer than
// half the minimum election timeout, or after `slow_limit` syncs longer than a quarter of it
// within `window`.
#include <chrono>

namespace comet::dledger {

class InlineSyncPolicy {
public:
    using Clock = std::chrono::steady_clock;

    explicit InlineSyncPolicy(std::chrono::milliseconds election_timeout_min,
                              int slow_limit = 3,
                              std::chrono::milliseconds window = std::chrono::seconds(10),
                              std::chrono::milliseconds off_for = std::chrono::seconds(10))
        : slow_(election_timeout_min / 4),
          very_slow_(election_timeout_min / 2),
          slow_limit_(slow_limit),
          window_(window),
          off_for_(off_for) {}

    // May the driver sync now?
    bool inline_allowed(Clock::time_point now) const { return now >= off_until_; }

    // A sync that ran on the driver took `took`, ending at `now`. True when this one turned
    // inline syncs off (the caller logs it).
    bool on_sync(Clock::duration took, Clock::time_point now) {
        if (took <= slow_) {
            return false;
        }
        if (slow_count_ == 0 || now - first_slow_ > window_) {
            first_slow_ = now;
            slow_count_ = 0;
        }
        ++slow_count_;
        if (took > very_slow_ || slow_count_ >= slow_limit_) {
            off_until_ = now + off_for_;
            slow_count_ = 0;
            return true;
        }
        return false;
    }

    std::chrono::milliseconds off_for() const { return off_for_; }

private:
    const Clock::duration slow_;
    const Clock::duration very_slow_;
    const int slow_limit_;
    const Clock::duration window_;
    const std::chrono::milliseconds off_for_;
    Clock::time_point off_until_{};
    Clock::time_point first_slow_{};
    int slow_count_ = 0;
};

}  // namespace comet::dledger
