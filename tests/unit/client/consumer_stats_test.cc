// ConsumerStats: the ConsumeStatus figures of a push consumer's running info, from counters
// sampled once a second (times given by the test).
#include "client/consumer_stats.h"

#include <gtest/gtest.h>

namespace comet::client {
namespace {

TEST(ConsumerStats, NeverSampledTopicIsAllZero) {
    ConsumerStats s;
    s.counters("T").pulls = 3;
    const ConsumerStats::Figures f = s.status("T");
    EXPECT_EQ(f.pull_rt, 0.0);
    EXPECT_EQ(f.pull_tps, 0.0);
    EXPECT_EQ(f.consume_failed_msgs, 0);
    EXPECT_EQ(s.status("Unknown").consume_ok_tps, 0.0);
}

TEST(ConsumerStats, MinuteRatesAndMeansFromTheFirstAndLastSample) {
    ConsumerStats s;
    ConsumerStats::Counters& c = s.counters("T");
    EXPECT_EQ(&c, &s.counters("T"));  // one set per topic, stable
    // Counted before the first sample: counted in, from zero a second earlier.
    c.pulls = 2;
    c.pull_rt_ms = 30;
    c.pulled_msgs = 10;
    s.sample(10'000);
    // Two more seconds: 4 consumes of 2 messages each, 3 ms each; 2 messages failed.
    c.consumes = 4;
    c.consume_rt_us = 12'000;
    c.ok_msgs = 6;
    c.failed_msgs = 2;
    s.sample(11'000);
    s.sample(12'000);
    const ConsumerStats::Figures f = s.status("T");
    EXPECT_DOUBLE_EQ(f.pull_rt, 15.0);         // 30 ms over 2 pulls
    EXPECT_DOUBLE_EQ(f.pull_tps, 10.0 / 3.0);  // 10 messages over 3 s
    EXPECT_DOUBLE_EQ(f.consume_rt, 3.0);
    EXPECT_DOUBLE_EQ(f.consume_ok_tps, 2.0);
    EXPECT_DOUBLE_EQ(f.consume_failed_tps, 2.0 / 3.0);
    EXPECT_EQ(f.consume_failed_msgs, 2);
}

TEST(ConsumerStats, MinuteWindowForgetsButTheHourKeepsFailures) {
    ConsumerStats s;
    ConsumerStats::Counters& c = s.counters("T");
    c.failed_msgs = 5;
    c.ok_msgs = 50;
    s.sample(0);
    // Two quiet minutes later: no rate any more, the failures still in the hour.
    for (int64_t t = 1'000; t <= 120'000; t += 1'000) {
        s.sample(t);
    }
    ConsumerStats::Figures f = s.status("T");
    EXPECT_EQ(f.consume_ok_tps, 0.0);
    EXPECT_EQ(f.consume_failed_tps, 0.0);
    EXPECT_EQ(f.consume_failed_msgs, 5);
    // Past the hour they are gone too.
    for (int64_t t = 180'000; t <= 3'900'000; t += 60'000) {
        s.sample(t);
    }
    EXPECT_EQ(s.status("T").consume_failed_msgs, 0);
}

}  // namespace
}  // namespace comet::client
