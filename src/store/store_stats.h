#pragma once
// StoreStatsService: counters of the put and get paths and their rates (Java
// org.apache.rocketmq.store.StoreStatsService), reported through MessageStore::runtime_info()
// for GET_BROKER_RUNTIME_INFO.
//
// Owner: MessageStore. Threads: the on_* counters from any thread (relaxed atomics); sample()
// from the store's scheduler thread about once a second; rates/report from any thread. mu_
// guards only the sample ring.
// TPS values follow Java: "putTps" = "<10 s> <60 s> <600 s>" average rates with two decimals.

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"

namespace comet::store {

class StoreStatsService {
public:
    explicit StoreStatsService(const Clock& clock);

    void on_put(int64_t bytes);  // a stored message (each of a batch)
    // One put call (a message or a whole batch) took `elapsed_ms` from the call to its stored
    // answer: the latency histograms and putMessageEntireTimeMax (Java
    // setPutMessageEntireTimeMax, once per put).
    void on_put_latency(int64_t elapsed_ms);
    void on_put_failed() { put_failed_.fetch_add(1, std::memory_order_relaxed); }
    void on_get(bool found, int64_t transferred_msgs);
    // One get call took `elapsed_ms` (getMessageEntireTimeMax).
    void on_get_latency(int64_t elapsed_ms);

    // Records a snapshot of the counters (call about once per second); `dispatch_behind` is the
    // reput's backlog in bytes now (dispatchMaxBuffer keeps the largest seen). Every 60 s the
    // latency histograms of the interval become the reported ones (Java printTps resets them).
    void sample(int64_t dispatch_behind = 0);

    int64_t put_times_total() const { return put_times_.load(std::memory_order_relaxed); }
    int64_t put_size_total() const { return put_size_.load(std::memory_order_relaxed); }
    int64_t put_failed_total() const { return put_failed_.load(std::memory_order_relaxed); }
    int64_t get_found_total() const { return get_found_.load(std::memory_order_relaxed); }
    int64_t get_miss_total() const { return get_miss_.load(std::memory_order_relaxed); }

    // Average rate of a counter over the last `seconds` (using the oldest sample in range).
    double put_tps(int seconds) const;
    double get_found_tps(int seconds) const;
    double get_miss_tps(int seconds) const;
    double get_transferred_tps(int seconds) const;

    // Java StoreStatsService#getRuntimeInfo keys.
    std::map<std::string, std::string> runtime_info() const;

    // Java findPutMessageEntireTimePX over the last whole minute's buckets: the put latency
    // (ms) below which `px` of the puts fell, interpolated inside its bucket; 0 without puts.
    double put_latency_px(double px) const;
    // The 13 ranges of putMessageDistributeTime ("[<=0ms]" .. "[10s~]").
    static constexpr size_t kDistributeRanges = 13;
    // The fine buckets' upper bounds (ms): 1..20 by 1, ..50 by 2, ..100 by 5, ..200 by 10,
    // ..500 by 50, ..1000 by 100, ..10000 by 1000, then one for everything above (Java's
    // PUT_MESSAGE_ENTIRE_TIME_BUCKETS).
    static constexpr size_t kLatencyBuckets = 76;

private:
    struct Snapshot {
        TimePoint at;
        int64_t put = 0;
        int64_t found = 0;
        int64_t miss = 0;
        int64_t transferred = 0;
    };
    Snapshot current() const;
    double rate(int seconds, int64_t Snapshot::*field) const;
    std::string tps3(int64_t Snapshot::*field) const;

    const Clock& clock_;
    const int64_t boot_wall_ms_;
    std::atomic<int64_t> put_times_{0};
    std::atomic<int64_t> put_size_{0};
    std::atomic<int64_t> put_failed_{0};
    std::atomic<int64_t> put_time_max_ms_{0};
    std::atomic<int64_t> get_found_{0};
    std::atomic<int64_t> get_miss_{0};
    std::atomic<int64_t> get_transferred_{0};
    std::atomic<int64_t> get_time_max_ms_{0};
    std::atomic<int64_t> dispatch_max_buffer_{0};
    // This minute's counts (bumped by on_put_latency) and the last whole minute's (read by the
    // report); rotated by sample() every 60 s.
    std::array<std::atomic<int64_t>, kDistributeRanges> distribute_{};
    std::array<std::atomic<int64_t>, kLatencyBuckets> latency_{};
    std::array<std::atomic<int64_t>, kDistributeRanges> last_distribute_{};
    std::array<std::atomic<int64_t>, kLatencyBuckets> last_latency_{};
    std::atomic<bool> have_last_minute_{false};
    mutable Mutex mu_;
    std::deque<Snapshot> ring_ GUARDED_BY(mu_);  // oldest first, at most ~601 entries
    TimePoint last_rotate_ GUARDED_BY(mu_);
};

}  // namespace comet::store
