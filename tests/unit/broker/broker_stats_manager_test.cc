// BrokerStatsManager: the minute / hour / day windows of StatsItem, driven by hand-made wall
// times (the caller's injected clock).
#include "broker/stats/broker_stats_manager.h"

#include <gtest/gtest.h>

namespace comet::broker {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000;

TEST(BrokerStatsManager, UnknownItemOrKeyIsNotFound) {
    BrokerStatsManager m;
    EXPECT_FALSE(m.in_minute(kTopicPutNums, "T").has_value());
    m.sample(kT0, kTopicPutNums, "T", 0, 0);
    EXPECT_TRUE(m.in_minute(kTopicPutNums, "T").has_value());
    EXPECT_FALSE(m.in_minute(kTopicPutNums, "U").has_value());
    EXPECT_FALSE(m.in_hour(kGroupGetNums, "T").has_value());
    EXPECT_EQ(m.keys(kTopicPutNums), std::vector<std::string>{"T"});
    EXPECT_TRUE(m.keys(kGroupGetNums).empty());
}

TEST(BrokerStatsManager, FirstSampleCountsWhatCameBefore) {
    // 10 messages in 4 sends before the key's first sample: they count, over one second.
    BrokerStatsManager m;
    m.sample(kT0, kTopicPutNums, "T", 10, 4);
    const auto s = m.in_minute(kTopicPutNums, "T");
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->sum, 10);
    EXPECT_DOUBLE_EQ(s->tps, 10.0);
    EXPECT_DOUBLE_EQ(s->avgpt, 2.5);
    EXPECT_EQ(m.in_hour(kTopicPutNums, "T")->sum, 10);
    EXPECT_EQ(m.in_day(kTopicPutNums, "T")->sum, 10);
}

TEST(BrokerStatsManager, MinuteWindowSlides) {
    BrokerStatsManager m;
    // 5 messages a second, one send each, for 120 seconds.
    for (int64_t s = 0; s <= 120; ++s) {
        m.sample(kT0 + s * 1000, kTopicPutNums, "T", 5 * s, s);
    }
    const auto minute = m.in_minute(kTopicPutNums, "T");
    ASSERT_TRUE(minute.has_value());
    EXPECT_EQ(minute->sum, 300);  // the last 60 seconds only
    EXPECT_DOUBLE_EQ(minute->tps, 5.0);
    EXPECT_DOUBLE_EQ(minute->avgpt, 5.0);
    // The hour window holds everything so far (first sample one minute before kT0).
    EXPECT_EQ(m.in_hour(kTopicPutNums, "T")->sum, 600);
}

TEST(BrokerStatsManager, SamplesCloserThanAPeriodAreSkipped) {
    BrokerStatsManager m;
    m.sample(kT0, kGroupGetNums, "T@G", 0, 0);
    m.sample(kT0 + 400, kGroupGetNums, "T@G", 7, 1);  // < 1 s after the last: ignored
    EXPECT_EQ(m.in_minute(kGroupGetNums, "T@G")->sum, 0);
    m.sample(kT0 + 1000, kGroupGetNums, "T@G", 8, 2);
    const auto s = m.in_minute(kGroupGetNums, "T@G");
    EXPECT_EQ(s->sum, 8);
    EXPECT_DOUBLE_EQ(s->tps, 4.0);  // 8 over the 2 s since the zero sample at kT0 - 1 s
    EXPECT_DOUBLE_EQ(s->avgpt, 4.0);
}

TEST(BrokerStatsManager, HourAndDayWindowsSlide) {
    BrokerStatsManager m;
    // One message a second for 26 hours, sampled once a minute.
    const int64_t minutes = 26 * 60;
    for (int64_t i = 0; i <= minutes; ++i) {
        m.sample(kT0 + i * BrokerStatsManager::kMinuteMs, kTopicPutSize, "T", i * 60, i);
    }
    const auto hour = m.in_hour(kTopicPutSize, "T");
    EXPECT_EQ(hour->sum, 3600);
    EXPECT_DOUBLE_EQ(hour->tps, 1.0);
    EXPECT_DOUBLE_EQ(hour->avgpt, 60.0);
    const auto day = m.in_day(kTopicPutSize, "T");
    EXPECT_EQ(day->sum, 24 * 3600);
    EXPECT_DOUBLE_EQ(day->tps, 1.0);
    // Per-second samples a minute apart: the minute window spans one minute.
    EXPECT_EQ(m.in_minute(kTopicPutSize, "T")->sum, 60);
}

TEST(BrokerStatsManager, NoTimesMeansNoAvgpt) {
    BrokerStatsManager m;
    m.sample(kT0, kBrokerPutNums, "DefaultCluster", 0, 0);
    m.sample(kT0 + 2000, kBrokerPutNums, "DefaultCluster", 6, 0);
    const auto s = m.in_minute(kBrokerPutNums, "DefaultCluster");
    EXPECT_EQ(s->sum, 6);
    EXPECT_DOUBLE_EQ(s->tps, 2.0);
    EXPECT_DOUBLE_EQ(s->avgpt, 0.0);
}

// add() keeps running totals that sample_added() feeds into the windows: GROUP_GET_LATENCY's
// avgpt is the mean latency of the pulls in the window.
TEST(BrokerStatsManager, AddedTotalsAreSampled) {
    BrokerStatsManager m;
    m.add(kGroupGetLatency, "0@T@G", 30, 1);
    m.add(kGroupGetLatency, "0@T@G", 10, 1);
    m.add(kSndbckPutNums, "T@G", 1, 1);
    EXPECT_FALSE(m.in_minute(kGroupGetLatency, "0@T@G").has_value());  // not sampled yet
    m.sample_added(kT0);
    auto lat = m.in_minute(kGroupGetLatency, "0@T@G");
    ASSERT_TRUE(lat.has_value());
    EXPECT_EQ(lat->sum, 40);
    EXPECT_DOUBLE_EQ(lat->avgpt, 20.0);
    m.add(kSndbckPutNums, "T@G", 1, 1);
    m.sample_added(kT0 + 1000);
    EXPECT_EQ(m.in_minute(kSndbckPutNums, "T@G")->sum, 2);
    EXPECT_EQ(m.in_minute(kGroupGetLatency, "0@T@G")->sum, 40);
    EXPECT_FALSE(m.in_minute(kGroupGetFromDiskNums, "T@G").has_value());
}

}  // namespace
}  // namespace comet::broker
