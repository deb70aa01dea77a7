#include "store/store_stats.h"

#include <fmt/format.h>

#include <chrono>

namespace comet::store {

namespace {
constexpr size_t kMaxSamples = 601;  // 600 s of one-second samples
}

StoreStatsService::StoreStatsService(const Clock& clock)
    : clock_(clock), boot_wall_ms_(clock.wall_millis()) {
    MutexLock l(mu_);
    ring_.push_back(current());
}

void StoreStatsService::on_put(int64_t bytes, int64_t elapsed_ms) {
    put_times_.fetch_add(1, std::memory_order_relaxed);
    put_size_.fetch_add(bytes, std::memory_order_relaxed);
    int64_t prev = put_time_max_ms_.load(std::memory_order_relaxed);
    while (elapsed_ms > prev &&
           !put_time_max_ms_.compare_exchange_weak(prev, elapsed_ms, std::memory_order_relaxed)) {
    }
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

void StoreStatsService::sample() {
    MutexLock l(mu_);
    ring_.push_back(current());
    while (ring_.size() > kMaxSamples) {
        ring_.pop_front();
    }
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
    return m;
}

}  // namespace comet::store
