#include "store/store_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>

namespace comet::store {

namespace {
constexpr size_t kMaxSamples = 601;  // 600 s of one-second samples

// Java PUT_MESSAGE_ENTIRE_TIME_MAX_DESC, one per putMessageDistributeTime range.
constexpr const char* kDistributeDesc[StoreStatsService::kDistributeRanges] = {
    "[<=0ms]", "[0~10ms]", "[10~50ms]", "[50~100ms]", "[100~200ms]", "[200~500ms]", "[500ms~1s]",
    "[1~2s]",  "[2~3s]",   "[3~4s]",    "[4~5s]",     "[5~10s]",     "[10s~]"};
// Upper bounds (ms, exclusive) of the ranges after the first ("<= 0").
constexpr int64_t kDistributeBelow[StoreStatsService::kDistributeRanges - 1] = {
    1, 10, 50, 100, 200, 500, 1000, 2000, 3000, 4000, 5000, 10000};

// The fine buckets' inclusive upper bounds (see kLatencyBuckets).
constexpr std::array<int64_t, StoreStatsService::kLatencyBuckets> latency_bounds() {
    constexpr std::pair<int64_t, int> kSteps[] = {{1, 20}, {2, 15},  {5, 10},  {10, 10},
                                                  {50, 6}, {100, 5}, {1000, 9}};
    std::array<int64_t, StoreStatsService::kLatencyBuckets> out{};
    size_t i = 0;
    int64_t at = 0;
    for (const auto& [step, times] : kSteps) {
        for (int k = 0; k < times; ++k) {
            at += step;
            out[i++] = at;
        }
    }
    out[i] = std::numeric_limits<int64_t>::max();
    return out;
}
constexpr auto kLatencyBounds = latency_bounds();
static_assert(kLatencyBounds[StoreStatsService::kLatencyBuckets - 2] == 10000);

size_t distribute_range(int64_t ms) {
    if (ms <= 0) {
        return 0;
    }
    size_t i = 1;
    while (i < StoreStatsService::kDistributeRanges - 1 && ms >= kDistributeBelow[i]) {
        ++i;
    }
    return i;
}

size_t latency_bucket(int64_t ms) {
    // Java buckets.ceilingEntry(ms): the first bound >= ms.
    return static_cast<size_t>(std::lower_bound(kLatencyBounds.begin(), kLatencyBounds.end(), ms) -
                               kLatencyBounds.begin());
}

void max_into(std::atomic<int64_t>& slot, int64_t v) {
    int64_t prev = slot.load(std::memory_order_relaxed);
    while (v > prev && !slot.compare_exchange_weak(prev, v, std::memory_order_relaxed)) {
    }
}

}  // namespace

StoreStatsService::StoreStatsService(const Clock& clock)
    : clock_(clock), boot_wall_ms_(clock.wall_millis()) {
    MutexLock l(mu_);
    ring_.push_back(current());
    last_rotate_ = ring_.back().at;
}

void StoreStatsService::on_put(int64_t bytes) {
    put_times_.fetch_add(1, std::memory_order_relaxed);
    put_size_.fetch_add(bytes, std::memory_order_relaxed);
}

void StoreStatsService::on_put_latency(int64_t elapsed_ms) {
    distribute_[distribute_range(elapsed_ms)].fetch_add(1, std::memory_order_relaxed);
    latency_[latency_bucket(elapsed_ms)].fetch_add(1, std::memory_order_relaxed);
    max_into(put_time_max_ms_, elapsed_ms);
}

void StoreStatsService::on_get_latency(int64_t elapsed_ms) {
    max_into(get_time_max_ms_, elapsed_ms);
}

void StoreStatsService::on_get(bool found, int64_t transferred_msgs) {
    if (found) {
        get_found_.fetch_add(1, std::memory_order_relaxed);
        get_transferred_.fetch_add(transferred_msgs, std::memory_order_relaxed);
    } else {
        get_miss_.fetch_add(1, std::memory_order_relaxed);
    }
}

StoreStatsService::Snapshot StoreStatsService::current() const {
    Snapshot s;
    s.at = clock_.now();
    s.put = put_times_.load(std::memory_order_relaxed);
    s.found = get_found_.load(std::memory_order_relaxed);
    s.miss = get_miss_.load(std::memory_order_relaxed);
    s.transferred = get_transferred_.load(std::memory_order_relaxed);
    return s;
}

void StoreStatsService::sample(int64_t dispatch_behind) {
    max_into(dispatch_max_buffer_, dispatch_behind);
    MutexLock l(mu_);
    ring_.push_back(current());
    while (ring_.size() > kMaxSamples) {
        ring_.pop_front();
    }
    if (ring_.back().at - last_rotate_ >= std::chrono::seconds(60)) {
        last_rotate_ = ring_.back().at;
        for (size_t i = 0; i < kDistributeRanges; ++i) {
            last_distribute_[i].store(distribute_[i].exchange(0, std::memory_order_relaxed),
                                      std::memory_order_relaxed);
        }
        for (size_t i = 0; i < kLatencyBuckets; ++i) {
            last_latency_[i].store(latency_[i].exchange(0, std::memory_order_relaxed),
                                   std::memory_order_relaxed);
        }
        have_last_minute_.store(true);
    }
}

double StoreStatsService::put_latency_px(double px) const {
    // Until a whole minute has passed, the minute so far (Java reports 0.00 then).
    const auto& buckets = have_last_minute_.load() ? last_latency_ : latency_;
    std::array<int64_t, kLatencyBuckets> counts{};
    int64_t total = 0;
    for (size_t i = 0; i < kLatencyBuckets; ++i) {
        counts[i] = buckets[i].load(std::memory_order_relaxed);
        total += counts[i];
    }
    const auto index = static_cast<int64_t>(static_cast<double>(total) * px);
    int64_t passed = 0;
    for (size_t i = 0; i < kLatencyBuckets; ++i) {
        if (index <= passed + counts[i]) {
            const double from = i == 0 ? 0.0 : static_cast<double>(kLatencyBounds[i - 1]);
            const double width = static_cast<double>(kLatencyBounds[i]) - from;
            return counts[i] == 0 ? from
                                  : from + width * static_cast<double>(index - passed) /
                                               static_cast<double>(counts[i]);
        }
        passed += counts[i];
    }
    return 0;
}

double StoreStatsService::rate(int seconds, int64_t Snapshot::*field) const {
    const Snapshot now = current();
    MutexLock l(mu_);
    // The oldest sample no older than `seconds` (or the oldest one there is).
    const Snapshot* base = &ring_.front();
    for (auto it = ring_.rbegin(); it != ring_.rend(); ++it) {
        if (now.at - it->at > std::chrono::seconds(seconds)) {
            break;
        }
        base = &*it;
    }
    const double secs = std::chrono::duration<double>(now.at - base->at).count();
    if (secs <= 0) {
        return 0;
    }
    return static_cast<double>(now.*field - base->*field) / secs;
}

double StoreStatsService::put_tps(int seconds) const { return rate(seconds, &Snapshot::put); }
double StoreStatsService::get_found_tps(int seconds) const {
    return rate(seconds, &Snapshot::found);
}
double StoreStatsService::get_miss_tps(int seconds) const { return rate(seconds, &Snapshot::miss); }
double StoreStatsService::get_transferred_tps(int seconds) const {
    return rate(seconds, &Snapshot::transferred);
}

std::string StoreStatsService::tps3(int64_t Snapshot::*field) const {
    return fmt::format("{:.2f} {:.2f} {:.2f}", rate(10, field), rate(60, field), rate(600, field));
}

std::map<std::string, std::string> StoreStatsService::runtime_info() const {
    std::map<std::string, std::string> m;
    const int64_t puts = put_times_total();
    m["bootTimestamp"] = std::to_string(boot_wall_ms_);
    const int64_t up_s = (clock_.wall_millis() - boot_wall_ms_) / 1000;
    m["runtime"] = fmt::format("[ {} days, {} hours, {} minutes, {} seconds ]", up_s / 86400,
                               up_s / 3600 % 24, up_s / 60 % 60, up_s % 60);
    m["putMessageTimesTotal"] = std::to_string(puts);
    m["putMessageSizeTotal"] = std::to_string(put_size_total());
    m["putMessageAverageSize"] =
        fmt::format("{:.2f}", puts == 0 ? 0.0 : static_cast<double>(put_size_total()) / puts);
    m["putMessageFailedTimes"] = std::to_string(put_failed_total());
    m["putMessageEntireTimeMax"] = std::to_string(put_time_max_ms_.load());
    m["putTps"] = tps3(&Snapshot::put);
    m["getFoundTps"] = tps3(&Snapshot::found);
    m["getMissTps"] = tps3(&Snapshot::miss);
    m["getTransferedTps"] = tps3(&Snapshot::transferred);  // sic: Java's key spelling
    m["getTotalTps"] = fmt::format("{:.2f} {:.2f} {:.2f}", get_found_tps(10) + get_miss_tps(10),
                                   get_found_tps(60) + get_miss_tps(60),
                                   get_found_tps(600) + get_miss_tps(600));
    m["getMessageEntireTimeMax"] = std::to_string(get_time_max_ms_.load());
    // 4.9.8 declares dispatchMaxBuffer but never sets it (always 0); here the largest reput
    // backlog (dispatchBehindBytes) seen at a one-second sample.
    m["dispatchMaxBuffer"] = std::to_string(dispatch_max_buffer_.load());
    // "[<=0ms]:n [0~10ms]:n ... [10s~]:n " of the last whole minute (Java prints "null" before
    // the first one; here the minute so far).
    const auto& ranges = have_last_minute_.load() ? last_distribute_ : distribute_;
    std::string dist;
    for (size_t i = 0; i < kDistributeRanges; ++i) {
        dist += fmt::format("{}:{} ", kDistributeDesc[i], ranges[i].load());
    }
    m["putMessageDistributeTime"] = std::move(dist);
    m["putLatency99"] = fmt::format("{:.2f}", put_latency_px(0.99));
    m["putLatency999"] = fmt::format("{:.2f}", put_latency_px(0.999));
    return m;
}

}  // namespace comet::store
