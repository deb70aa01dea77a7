// When a DLedger follower stops syncing on its driver (decision 034 as amended): one sync a
// little slow is tolerated, a very slow one or slow ones that keep coming are not.
#include "dledger/inline_sync_policy.h"

#include <gtest/gtest.h>

namespace comet::dledger {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = InlineSyncPolicy::Clock;

TEST(InlineSyncPolicy, OneSlowSyncKeepsSyncsOnTheDriver) {
    InlineSyncPolicy p(milliseconds(150));  // slow: > 37.5 ms, very slow: > 75 ms
    const Clock::time_point t0{seconds(100)};
    EXPECT_TRUE(p.inline_allowed(t0));
    EXPECT_FALSE(p.on_sync(milliseconds(2), t0));
    EXPECT_FALSE(p.on_sync(milliseconds(65), t0 + milliseconds(10)));  // a host flush stall
    EXPECT_TRUE(p.inline_allowed(t0 + milliseconds(11)));
}

TEST(InlineSyncPolicy, AVerySlowSyncMovesSyncsToTheFlushThreadForAWhile) {
    InlineSyncPolicy p(milliseconds(150));
    const Clock::time_point t0{seconds(100)};
    EXPECT_TRUE(p.on_sync(milliseconds(80), t0));
    EXPECT_FALSE(p.inline_allowed(t0 + seconds(9)));
    EXPECT_TRUE(p.inline_allowed(t0 + seconds(10)));
}

TEST(InlineSyncPolicy, SlowSyncsThatKeepComingMoveThemToo) {
    InlineSyncPolicy p(milliseconds(150));
    const Clock::time_point t0{seconds(100)};
    EXPECT_FALSE(p.on_sync(milliseconds(40), t0));
    EXPECT_FALSE(p.on_sync(milliseconds(1), t0 + seconds(1)));  // fast ones in between count not
    EXPECT_FALSE(p.on_sync(milliseconds(40), t0 + seconds(2)));
    EXPECT_TRUE(p.on_sync(milliseconds(40), t0 + seconds(3)));  // the third within 10 s
    EXPECT_FALSE(p.inline_allowed(t0 + seconds(4)));
    EXPECT_TRUE(p.inline_allowed(t0 + seconds(13)));
    // The count starts over once syncs are back on the driver.
    EXPECT_FALSE(p.on_sync(milliseconds(40), t0 + seconds(14)));
    EXPECT_TRUE(p.inline_allowed(t0 + seconds(14)));
}

TEST(InlineSyncPolicy, SlowSyncsFarApartAreNotCountedTogether) {
    InlineSyncPolicy p(milliseconds(150));
    const Clock::time_point t0{seconds(100)};
    EXPECT_FALSE(p.on_sync(milliseconds(40), t0));
    EXPECT_FALSE(p.on_sync(milliseconds(40), t0 + seconds(6)));
    EXPECT_FALSE(p.on_sync(milliseconds(40), t0 + seconds(11)));  // the first is 11 s old
    EXPECT_FALSE(p.on_sync(milliseconds(40), t0 + seconds(15)));
    EXPECT_TRUE(p.on_sync(milliseconds(40), t0 + seconds(16)));   // three since 11 s
}

}  // namespace
}  // namespace comet::dledger
