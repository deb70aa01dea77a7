#include "broker/stats/broker_stats_manager.h"

namespace comet::broker {
namespace {

// Appends `s` when the list's last sample is at least `period` old, then drops samples older
// than `keep` before the newest one (the newest always stays).
template <typename Snap>
void push(std::deque<Snap>* list, const Snap& s, int64_t period, int64_t keep) {
    if (!list->empty() && s.at_ms - list->back().at_ms < period) {
        return;
    }
    list->push_back(s);
    while (list->size() > 1 && s.at_ms - list->front().at_ms > keep) {
        list->pop_front();
    }
}

}  // namespace

void BrokerStatsManager::sample(int64_t now_ms, std::string_view item, std::string_view key,
                                int64_t value, int64_t times) {
    MutexLock lock(mu_);
    auto set = items_.find(item);
    if (set == items_.end()) {
        set = items_.emplace(std::string(item), std::map<std::string, Item, std::less<>>{}).first;
    }
    auto it = set->second.find(key);
    if (it == set->second.end()) {
        Item fresh;
        fresh.seconds.push_back({now_ms - kSecondMs, 0, 0});
        fresh.minutes.push_back({now_ms - kMinuteMs, 0, 0});
        fresh.hours.push_back({now_ms - kHourMs, 0, 0});
        it = set->second.emplace(std::string(key), std::move(fresh)).first;
    }
    const Snap s{now_ms, value, times};
    push(&it->second.seconds, s, kSecondMs, kMinuteMs);
    push(&it->second.minutes, s, kMinuteMs, kHourMs);
    push(&it->second.hours, s, kHourMs, 24 * kHourMs);
}

StatsSnapshot BrokerStatsManager::compute(const std::deque<Snap>& list) {
    StatsSnapshot out;
    if (list.empty()) {
        return out;
    }
    const Snap& first = list.front();
    const Snap& last = list.back();
    out.sum = last.value - first.value;
    if (last.at_ms > first.at_ms) {
        out.tps =
            static_cast<double>(out.sum) * 1000.0 / static_cast<double>(last.at_ms - first.at_ms);
    }
    if (const int64_t times = last.times - first.times; times > 0) {
        out.avgpt = static_cast<double>(out.sum) / static_cast<double>(times);
    }
    return out;
}

std::optional<StatsSnapshot> BrokerStatsManager::get(std::string_view item, std::string_view key,
                                                     Span span) const {
    MutexLock lock(mu_);
    const auto set = items_.find(item);
    if (set == items_.end()) {
        return std::nullopt;
    }
    const auto it = set->second.find(key);
    if (it == set->second.end()) {
        return std::nullopt;
    }
    switch (span) {
        case Span::kMinute:
            return compute(it->second.seconds);
        case Span::kHour:
            return compute(it->second.minutes);
        case Span::kDay:
            return compute(it->second.hours);
    }
    return std::nullopt;
}

std::optional<StatsSnapshot> BrokerStatsManager::in_minute(std::string_view item,
                                                           std::string_view key) const {
    return get(item, key, Span::kMinute);
}

std::optional<StatsSnapshot> BrokerStatsManager::in_hour(std::string_view item,
                                                         std::string_view key) const {
    return get(item, key, Span::kHour);
}

std::optional<StatsSnapshot> BrokerStatsManager::in_day(std::string_view item,
                                                        std::string_view key) const {
    return get(item, key, Span::kDay);
}

void BrokerStatsManager::add(std::string_view item, std::string_view key, int64_t value,
                             int64_t times) {
    MutexLock lock(totals_mu_);
    auto& t = totals_[{std::string(item), std::string(key)}];
    t.first += value;
    t.second += times;
}

void BrokerStatsManager::sample_added(int64_t now_ms) {
    std::vector<std::pair<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>>> copy;
    {
        MutexLock lock(totals_mu_);
        copy.assign(totals_.begin(), totals_.end());
    }
    for (const auto& [ik, vt] : copy) {
        sample(now_ms, ik.first, ik.second, vt.first, vt.second);
    }
}

std::vector<std::string> BrokerStatsManager::keys(std::string_view item) const {
    std::vector<std::string> out;
    MutexLock lock(mu_);
    const auto set = items_.find(item);
    if (set != items_.end()) {
        for (const auto& [k, v] : set->second) {
            out.push_back(k);
        }
    }
    return out;
}

}  // namespace comet::broker
