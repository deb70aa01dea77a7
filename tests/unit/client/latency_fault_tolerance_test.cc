#include "client/latency_fault_tolerance.h"

#include <gtest/gtest.h>

namespace comet::client {
namespace {

using std::chrono::milliseconds;

TEST(LatencyFaultTolerance, PenaltyTableMatchesMqFaultStrategy) {
    EXPECT_EQ(LatencyFaultTolerance::not_available_duration(milliseconds(0)), milliseconds(0));
    EXPECT_EQ(LatencyFaultTolerance::not_available_duration(milliseconds(99)), milliseconds(0));
    EXPECT_EQ(LatencyFaultTolerance::not_available_duration(milliseconds(549)), milliseconds(0));
    EXPECT_EQ(LatencyFaultTolerance::not_available_duration(milliseconds(550)),
              milliseconds(30000));
    EXPECT_EQ(LatencyFaultTolerance::not_available_duration(milliseconds(1000)),
              milliseconds(60000));
    EXPECT_EQ(LatencyFaultTolerance::not_available_duration(milliseconds(2500)),
              milliseconds(120000));
    EXPECT_EQ(LatencyFaultTolerance::not_available_duration(milliseconds(3000)),
              milliseconds(180000));
    EXPECT_EQ(LatencyFaultTolerance::not_available_duration(milliseconds(30000)),
              milliseconds(600000));
}

TEST(LatencyFaultTolerance, BrokerComesBackWhenThePenaltyEnds) {
    ManualClock clock;
    LatencyFaultTolerance f(&clock);
    EXPECT_TRUE(f.is_available("b"));
    f.update_fault_item("b", milliseconds(30000), milliseconds(600000));
    EXPECT_FALSE(f.is_available("b"));
    EXPECT_TRUE(f.is_available("other"));
    clock.advance(milliseconds(599999));
    EXPECT_FALSE(f.is_available("b"));
    clock.advance(milliseconds(1));
    EXPECT_TRUE(f.is_available("b"));
    // A fast answer clears the penalty at once.
    f.update_fault_item("b", milliseconds(30000), milliseconds(600000));
    f.update_fault_item("b", milliseconds(3), milliseconds(0));
    EXPECT_TRUE(f.is_available("b"));
    f.remove("b");
    EXPECT_EQ(f.size(), 0u);
}

TEST(LatencyFaultTolerance, PickOneAtLeastPrefersAvailableThenLowLatency) {
    ManualClock clock;
    LatencyFaultTolerance f(&clock);
    EXPECT_FALSE(f.pick_one_at_least().has_value());
    f.update_fault_item("slow", milliseconds(3000), milliseconds(180000));
    f.update_fault_item("slower", milliseconds(15000), milliseconds(600000));
    EXPECT_EQ(f.pick_one_at_least(), "slow");
    f.update_fault_item("ok", milliseconds(20000), milliseconds(0));
    EXPECT_EQ(f.pick_one_at_least(), "ok");  // available beats a lower latency
}

}  // namespace
}  // namespace comet::client
