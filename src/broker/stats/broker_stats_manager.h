#pragma once
// BrokerStatsManager: RocketMQ 4.9.8's per-key statistics (BrokerStatsManager / StatsItemSet /
// StatsItem), read by VIEW_BROKER_STATS_DATA and `mqadmin statsAll`.
//
// Each (item name, key) keeps cumulative totals (value, times) sampled once a second: the last
// minute of per-second samples, the last hour of per-minute samples and the last day of
// per-hour samples. A window's figures are computed from its first and last sample as
// StatsItem#computeStatsData does: sum = value difference, tps = sum per second of the span,
// avgpt = sum / times difference.
//
// Differs from 4.9.8: RocketMQ snapshots its per-key counters every 10 s (minute list), 10 min
// (hour list) and 1 h (day list); here the totals are sampled every second from the hot-path
// counters the broker already keeps (BrokerMetrics), so sends take no lock for them. The rarer
// items (SNDBCK_PUT_NUMS, GROUP_GET_FROM_DISK_*, GROUP_GET_LATENCY) go through add(): one
// short leaf lock per send-back or found pull.
//
// Owner: BrokerController. Threads: sample() / sample_added() from the broker's scheduler
// thread, add() from the send and pull executors, the getters from the admin executor. mu_
// guards the windows, totals_mu_ the added totals; neither is held while taking the other.
// Pure: time comes in as wall milliseconds from the caller (the injected Clock).

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/mutex.h"

namespace comet::broker {

// RocketMQ 4.9.8's item names (BrokerStatsManager).
inline constexpr std::string_view kTopicPutNums = "TOPIC_PUT_NUMS";    // key: topic
inline constexpr std::string_view kTopicPutSize = "TOPIC_PUT_SIZE";    // key: topic
inline constexpr std::string_view kGroupGetNums = "GROUP_GET_NUMS";    // topic@group
inline constexpr std::string_view kGroupGetSize = "GROUP_GET_SIZE";    // topic@group
inline constexpr std::string_view kSndbckPutNums = "SNDBCK_PUT_NUMS";  // topic@group
inline constexpr std::string_view kBrokerPutNums = "BROKER_PUT_NUMS";  // clusterName
inline constexpr std::string_view kBrokerGetNums = "BROKER_GET_NUMS";  // clusterName
// Pulls served from data no longer in memory (topic@group). 4.9.8 declares these two items but
// never adds to them; Comet counts a found pull whose store read suggested the slave
// (GetMessageResult::suggest_pulling_from_slave: the data is further behind the CommitLog's end
// than accessMessageInMemoryMaxRatio % of physical memory).
inline constexpr std::string_view kGroupGetFromDiskNums = "GROUP_GET_FROM_DISK_NUMS";
inline constexpr std::string_view kGroupGetFromDiskSize = "GROUP_GET_FROM_DISK_SIZE";
// queueId@topic@group (4.9.8 with enableDetailStat, its default): per found pull, the ms from
// the start of the processing pass that answered (a woken long poll's second pass, not its
// suspension) to the messages being read; avgpt is the mean.
inline constexpr std::string_view kGroupGetLatency = "GROUP_GET_LATENCY";

// StatsSnapshot: one window's figures.
struct StatsSnapshot {
    int64_t sum = 0;
    double tps = 0;
    double avgpt = 0;
};

class BrokerStatsManager {
public:
    // Records the cumulative totals of `key` under `item` at wall time `now_ms` (monotonic
    // non-decreasing across calls). `value`: the counted quantity (messages, bytes); `times`:
    // the number of increments (sends, pulls). A key seen the first time starts from zero one
    // period earlier (as StatsItem's first snapshot), so what it counted before counts in.
    void sample(int64_t now_ms, std::string_view item, std::string_view key, int64_t value,
                int64_t times);

    // Adds to the cumulative totals of `key` under `item`, for items the broker does not keep
    // in BrokerMetrics (SNDBCK_PUT_NUMS, GROUP_GET_FROM_DISK_*, GROUP_GET_LATENCY): any thread,
    // under totals_mu_ (a leaf lock; one map update per send-back or found pull).
    void add(std::string_view item, std::string_view key, int64_t value, int64_t times);
    // sample() of every total add() kept, at now_ms (the scheduler thread).
    void sample_added(int64_t now_ms);
    // Null when the item or key was never sampled (4.9.8: "The stats <name> <key> not exist").
    std::optional<StatsSnapshot> in_minute(std::string_view item, std::string_view key) const;
    std::optional<StatsSnapshot> in_hour(std::string_view item, std::string_view key) const;
    std::optional<StatsSnapshot> in_day(std::string_view item, std::string_view key) const;
    // Keys sampled under `item`, in order.
    std::vector<std::string> keys(std::string_view item) const;

    static constexpr int64_t kSecondMs = 1000;
    static constexpr int64_t kMinuteMs = 60 * kSecondMs;
    static constexpr int64_t kHourMs = 60 * kMinuteMs;

private:
    struct Snap {
        int64_t at_ms;
        int64_t value;
        int64_t times;
    };
    // One key's three windows; each list is oldest first.
    struct Item {
        std::deque<Snap> seconds;  // spans at most a minute
        std::deque<Snap> minutes;  // spans at most an hour
        std::deque<Snap> hours;    // spans at most a day
    };
    enum class Span : uint8_t { kMinute, kHour, kDay };
    std::optional<StatsSnapshot> get(std::string_view item, std::string_view key, Span s) const;
    static StatsSnapshot compute(const std::deque<Snap>& list);

    mutable Mutex totals_mu_;  // never held with mu_
    std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> totals_
        GUARDED_BY(totals_mu_);
    mutable Mutex mu_;
    std::map<std::string, std::map<std::string, Item, std::less<>>, std::less<>> items_
        GUARDED_BY(mu_);
};

}  // namespace comet::broker
