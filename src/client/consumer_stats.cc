#include "client/consumer_stats.h"

namespace comet::client {

namespace {

constexpr int64_t kMinuteMs = 60 * 1000;
constexpr int64_t kHourMs = 60 * kMinuteMs;

// Per second of the span from `first` to `last`; 0 over an empty span.
double per_second(int64_t difference, int64_t first_ms, int64_t last_ms) {
    return last_ms > first_ms
               ? static_cast<double>(difference) * 1000.0 / static_cast<double>(last_ms - first_ms)
               : 0.0;
}

// `sum` / `times` (Java avgpt); 0 without times.
double average(double sum, int64_t times) {
    return times > 0 ? sum / static_cast<double>(times) : 0.0;
}

}  // namespace

ConsumerStats::Counters& ConsumerStats::counters(const std::string& topic) {
    MutexLock l(mu_);
    auto& t = topics_[topic];
    if (t == nullptr) {
        t = std::make_unique<Topic>();
    }
    return t->counters;
}

ConsumerStats::Sample ConsumerStats::read(int64_t now_ms, const Counters& c) {
    Sample s;
    s.at_ms = now_ms;
    s.pulls = c.pulls.load(std::memory_order_relaxed);
    s.pull_rt_ms = c.pull_rt_ms.load(std::memory_order_relaxed);
    s.pulled_msgs = c.pulled_msgs.load(std::memory_order_relaxed);
    s.consumes = c.consumes.load(std::memory_order_relaxed);
    s.consume_rt_us = c.consume_rt_us.load(std::memory_order_relaxed);
    s.ok_msgs = c.ok_msgs.load(std::memory_order_relaxed);
    s.failed_msgs = c.failed_msgs.load(std::memory_order_relaxed);
    return s;
}

void ConsumerStats::sample(int64_t now_ms) {
    MutexLock l(mu_);
    for (auto& [name, t] : topics_) {
        if (t->seconds.empty()) {
            // A topic's first sample: what it counted before counts in, from zero a second ago.
            t->seconds.push_back(Sample{.at_ms = now_ms - 1000});
            t->minutes.push_back(t->seconds.back());
        }
        t->seconds.push_back(read(now_ms, t->counters));
        while (t->seconds.size() > 2 && now_ms - t->seconds[1].at_ms >= kMinuteMs) {
            t->seconds.pop_front();
        }
        if (now_ms - t->minutes.back().at_ms >= kMinuteMs) {
            t->minutes.push_back(t->seconds.back());
        }
        while (t->minutes.size() > 2 && now_ms - t->minutes[1].at_ms >= kHourMs) {
            t->minutes.pop_front();
        }
    }
}

ConsumerStats::Figures ConsumerStats::status(const std::string& topic) const {
    MutexLock l(mu_);
    Figures f;
    const auto it = topics_.find(topic);
    if (it == topics_.end() || it->second->seconds.empty()) {
        return f;
    }
    const Topic& t = *it->second;
    const Sample& a = t.seconds.front();
    const Sample& b = t.seconds.back();
    f.pull_rt = average(static_cast<double>(b.pull_rt_ms - a.pull_rt_ms), b.pulls - a.pulls);
    f.pull_tps = per_second(b.pulled_msgs - a.pulled_msgs, a.at_ms, b.at_ms);
    f.consume_rt = average(static_cast<double>(b.consume_rt_us - a.consume_rt_us) / 1000.0,
                           b.consumes - a.consumes);
    f.consume_ok_tps = per_second(b.ok_msgs - a.ok_msgs, a.at_ms, b.at_ms);
    f.consume_failed_tps = per_second(b.failed_msgs - a.failed_msgs, a.at_ms, b.at_ms);
    f.consume_failed_msgs = b.failed_msgs - t.minutes.front().failed_msgs;
    return f;
}

}  // namespace comet::client
