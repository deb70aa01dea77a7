// StoreStatsService's 4.9.8 runtime-info figures: putMessageDistributeTime and putLatency99/999
// over the last whole minute, getMessageEntireTimeMax, dispatchMaxBuffer (ManualClock).
#include "store/store_stats.h"

#include <gtest/gtest.h>

namespace comet::store {
namespace {

using namespace std::chrono_literals;

TEST(StoreStats, DistributeTimeCountsEachPutInItsRange) {
    ManualClock clock;
    StoreStatsService s(clock);
    for (int64_t ms : {0, 5, 15, 1500, 12000}) {
        s.on_put_latency(ms);
    }
    // The minute so far, until a whole one has passed.
    EXPECT_EQ(s.runtime_info()["putMessageDistributeTime"],
              "[<=0ms]:1 [0~10ms]:1 [10~50ms]:1 [50~100ms]:0 [100~200ms]:0 [200~500ms]:0 "
              "[500ms~1s]:0 [1~2s]:1 [2~3s]:0 [3~4s]:0 [4~5s]:0 [5~10s]:0 [10s~]:1 ");
    EXPECT_EQ(s.runtime_info()["putMessageEntireTimeMax"], "12000");
    // A minute later the finished minute is reported; this one's puts wait for the next.
    clock.advance(60s);
    s.sample();
    s.on_put_latency(7);
    EXPECT_EQ(s.runtime_info()["putMessageDistributeTime"],
              "[<=0ms]:1 [0~10ms]:1 [10~50ms]:1 [50~100ms]:0 [100~200ms]:0 [200~500ms]:0 "
              "[500ms~1s]:0 [1~2s]:1 [2~3s]:0 [3~4s]:0 [4~5s]:0 [5~10s]:0 [10s~]:1 ");
    clock.advance(60s);
    s.sample();
    EXPECT_EQ(s.runtime_info()["putMessageDistributeTime"],
              "[<=0ms]:0 [0~10ms]:1 [10~50ms]:0 [50~100ms]:0 [100~200ms]:0 [200~500ms]:0 "
              "[500ms~1s]:0 [1~2s]:0 [2~3s]:0 [3~4s]:0 [4~5s]:0 [5~10s]:0 [10s~]:0 ");
}

TEST(StoreStats, LatencyPercentilesInterpolateInsideTheirBucket) {
    ManualClock clock;
    StoreStatsService s(clock);
    EXPECT_EQ(s.runtime_info()["putLatency99"], "0.00");
    // 100 puts of 5 ms (bucket (4, 5]): the 99th lies 99/100 into it.
    for (int i = 0; i < 100; ++i) {
        s.on_put_latency(5);
    }
    EXPECT_DOUBLE_EQ(s.put_latency_px(0.99), 4.99);
    // One slow put of 300 ms (bucket (250, 300]) among 1000: the 99.9th is in that bucket.
    for (int i = 0; i < 899; ++i) {
        s.on_put_latency(5);
    }
    s.on_put_latency(300);
    clock.advance(60s);
    s.sample();
    const auto info = s.runtime_info();
    EXPECT_EQ(info.at("putLatency99"), "4.99");
    EXPECT_EQ(info.at("putLatency999"), "5.00");
    EXPECT_DOUBLE_EQ(s.put_latency_px(1.0), 300.0);
}

TEST(StoreStats, GetTimeAndDispatchBufferKeepTheirMaximum) {
    ManualClock clock;
    StoreStatsService s(clock);
    s.on_get_latency(3);
    s.on_get_latency(1);
    s.sample(4096);
    s.sample(100);
    const auto info = s.runtime_info();
    EXPECT_EQ(info.at("getMessageEntireTimeMax"), "3");
    EXPECT_EQ(info.at("dispatchMaxBuffer"), "4096");
}

}  // namespace
}  // namespace comet::store
