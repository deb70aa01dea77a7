#pragma once
// Clock: injectable time source. Everything that waits or times out takes a Clock& so tests
// can use ManualClock and move time by hand. SystemClock is the production one.
// Thread-safety: both implementations may be called from any thread.

#include <atomic>
#include <chrono>
#include <cstdint>

namespace comet {

using Duration = std::chrono::nanoseconds;
using TimePoint = std::chrono::time_point<std::chrono::steady_clock, Duration>;

class Clock {
public:
    virtual ~Clock() = default;
    // Monotonic time for timeouts and intervals.
    virtual TimePoint now() const = 0;
    // Wall-clock milliseconds since the Unix epoch (store timestamps, born timestamps).
    virtual int64_t wall_millis() const = 0;
};

class SystemClock final : public Clock {
public:
    TimePoint now() const override;
    int64_t wall_millis() const override;
    // Process-wide instance.
    static SystemClock& instance();
};

// Time moves only when advance() or set_wall_millis() is called.
class ManualClock final : public Clock {
public:
    explicit ManualClock(int64_t start_wall_millis = 1'700'000'000'000) : wall_(start_wall_millis) {}
    TimePoint now() const override { return TimePoint(Duration(mono_ns_.load())); }
    int64_t wall_millis() const override { return wall_.load(); }
    void advance(Duration d) {
        mono_ns_ += d.count();
        wall_ += std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
    }
    void set_wall_millis(int64_t ms) { wall_ = ms; }

private:
    std::atomic<int64_t> mono_ns_{1'000'000'000};
    std::atomic<int64_t> wall_;
};

}  // namespace comet
