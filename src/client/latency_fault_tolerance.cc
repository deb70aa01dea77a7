#include "client/latency_fault_tolerance.h"

#include <array>

namespace comet::client {

void LatencyFaultTolerance::update_fault_item(const std::string& broker,
                                              milliseconds current_latency,
                                              milliseconds not_available) {
    MutexLock lock(mu_);
    FaultItem& item = items_[broker];
    item.latency = current_latency;
    item.start_time = clock_->now() + not_available;
}

bool LatencyFaultTolerance::is_available(const std::string& broker) const {
    MutexLock lock(mu_);
    auto it = items_.find(broker);
    return it == items_.end() || clock_->now() >= it->second.start_time;
}

void LatencyFaultTolerance::remove(const std::string& broker) {
    MutexLock lock(mu_);
    items_.erase(broker);
}

size_t LatencyFaultTolerance::size() const {
    MutexLock lock(mu_);
    return items_.size();
}

std::optional<std::string> LatencyFaultTolerance::pick_one_at_least() const {
    MutexLock lock(mu_);
    const TimePoint now = clock_->now();
    const std::string* best = nullptr;
    const FaultItem* best_item = nullptr;
    for (const auto& [name, item] : items_) {
        if (best_item == nullptr) {
            best = &name;
            best_item = &item;
            continue;
        }
        const bool a = now >= item.start_time;
        const bool b = now >= best_item->start_time;
        bool better;
        if (a != b) {
            better = a;
        } else if (item.latency != best_item->latency) {
            better = item.latency < best_item->latency;
        } else {
            better = item.start_time < best_item->start_time;
        }
        if (better) {
            best = &name;
            best_item = &item;
        }
    }
    if (best == nullptr) {
        return std::nullopt;
    }
    return *best;
}

milliseconds LatencyFaultTolerance::not_available_duration(milliseconds latency) {
    static constexpr std::array<int64_t, 7> kLatencyMax = {50, 100, 550, 1000, 2000, 3000, 15000};
    static constexpr std::array<int64_t, 7> kNotAvailable = {0,      0,      30000, 60000,
                                                             120000, 180000, 600000};
    for (size_t i = kLatencyMax.size(); i-- > 0;) {
        if (latency.count() >= kLatencyMax[i]) {
            return milliseconds(kNotAvailable[i]);
        }
    }
    return milliseconds(0);
}

}  // namespace comet::client
