#pragma once
// ConsumerStats: a push consumer's per-topic pull and consume figures, the ConsumeStatus of its
// CONSUMER_RUNNING_INFO answer (RocketMQ 4.9.8 ConsumerStatsManager: pullRT, pullTPS,
// consumeRT, consumeOKTPS, consumeFailedTPS over the last minute, consumeFailedMsgs over the
// last hour).
//
// The pull callback and the consume threads bump a topic's cumulative Counters (relaxed
// atomics, no lock: each queue holds its topic's Counters). sample() records them once a second
// (the client's Scheduler); status() computes a window's figures from its first and last sample
// as Java's StatsItem#computeStatsData does: tps = difference per second of the span, an RT =
// time difference / count difference.
//
// Differs from 4.9.8: Java snapshots every 10 s (minute window) and every 10 min (hour window),
// so its figures stay 0 for the first 10 s and consumeFailedMsgs for the first 10 min; here the
// minute window has one-second samples and the hour window one-minute samples, the newest
// second sample closing both.
//
// Owner: DefaultMqPushConsumer. Threads: counters() from the rebalance (under no lock of the
// caller's; mu_ inside), the Counters' atomics from any thread, sample() from the scheduler,
// status() from the thread answering CONSUMER_RUNNING_INFO. mu_ is a leaf. Counters live as long
// as this object (their addresses never change).

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "base/mutex.h"

namespace comet::client {

class ConsumerStats {
public:
    // Cumulative totals of one topic.
    struct Counters {
        std::atomic<int64_t> pulls{0};          // pull answers (any status)
        std::atomic<int64_t> pull_rt_ms{0};     // summed time from pull sent to its answer
        std::atomic<int64_t> pulled_msgs{0};    // messages found
        std::atomic<int64_t> consumes{0};       // listener calls (batches)
        std::atomic<int64_t> consume_rt_us{0};  // summed listener time
        std::atomic<int64_t> ok_msgs{0};        // messages the listener consumed
        std::atomic<int64_t> failed_msgs{0};    // messages it asked to consume later
    };
    // ConsumeStatus' figures.
    struct Figures {
        double pull_rt = 0;
        double pull_tps = 0;
        double consume_rt = 0;
        double consume_ok_tps = 0;
        double consume_failed_tps = 0;
        int64_t consume_failed_msgs = 0;
    };

    // The topic's counters, created at the first call. The reference stays valid.
    Counters& counters(const std::string& topic);
    // Records every topic's totals at wall time `now_ms` (monotonic non-decreasing).
    void sample(int64_t now_ms);
    // The topic's figures; zeros for a topic never sampled.
    Figures status(const std::string& topic) const;

private:
    struct Sample {
        int64_t at_ms = 0;
        int64_t pulls = 0, pull_rt_ms = 0, pulled_msgs = 0;
        int64_t consumes = 0, consume_rt_us = 0, ok_msgs = 0, failed_msgs = 0;
    };
    struct Topic {
        Counters counters;
        std::deque<Sample> seconds;  // spans at most a minute, oldest first
        std::deque<Sample> minutes;  // spans at most an hour, oldest first
    };
    static Sample read(int64_t now_ms, const Counters& c);

    mutable Mutex mu_;
    std::map<std::string, std::unique_ptr<Topic>> topics_ GUARDED_BY(mu_);
};

}  // namespace comet::client
