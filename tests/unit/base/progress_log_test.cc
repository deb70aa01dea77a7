#include "base/progress_log.h"

#include <gtest/gtest.h>

namespace comet {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

TEST(ProgressLog, ShortWorkPrintsNothing) {
    ManualClock clock;
    ProgressLog p("recovery", 0, 100 * kMiB, clock);
    EXPECT_FALSE(p.update(10 * kMiB).has_value());
    clock.advance(std::chrono::milliseconds(1999));
    EXPECT_FALSE(p.update(50 * kMiB).has_value());
    EXPECT_FALSE(p.finish(100 * kMiB).has_value());
}

TEST(ProgressLog, OneLinePerIntervalWithRateAndEta) {
    ManualClock clock;
    ProgressLog p("CommitLog recovery scan", 10 * kMiB, 110 * kMiB, clock);
    clock.advance(std::chrono::seconds(2));
    auto l = p.update(30 * kMiB);
    ASSERT_TRUE(l.has_value());
    EXPECT_EQ(*l, "CommitLog recovery scan: 20.0 of 100.0 MiB (20%), 10.0 MiB/s, about 8 s left");
    clock.advance(std::chrono::seconds(1));
    EXPECT_FALSE(p.update(40 * kMiB).has_value());
    clock.advance(std::chrono::seconds(1));
    l = p.update(50 * kMiB);
    ASSERT_TRUE(l.has_value());
    EXPECT_EQ(*l, "CommitLog recovery scan: 40.0 of 100.0 MiB (40%), 10.0 MiB/s, about 6 s left");
    clock.advance(std::chrono::seconds(1));
    auto f = p.finish(110 * kMiB);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(*f, "CommitLog recovery scan: done, 100.0 MiB in 5.0 s");
}

TEST(ProgressLog, UnknownTotalShowsAmountAndRate) {
    ManualClock clock;
    ProgressLog p("slave catch-up", 0, 0, clock, std::chrono::seconds(5));
    clock.advance(std::chrono::seconds(5));
    auto l = p.update(25 * kMiB);
    ASSERT_TRUE(l.has_value());
    EXPECT_EQ(*l, "slave catch-up: 25.0 MiB, 5.0 MiB/s");
}

}  // namespace
}  // namespace comet
