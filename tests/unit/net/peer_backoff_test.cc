#include "net/peer_backoff.h"

#include <gtest/gtest.h>

namespace comet::net {
namespace {

using std::chrono::milliseconds;

TEST(PeerBackoff, FailedWritesDoubleTheWaitUpToOneSecond) {
    PeerBackoff b;
    const auto t0 = PeerBackoff::Clock::time_point{} + std::chrono::hours(1);
    EXPECT_TRUE(b.may_send(t0));
    b.on_write(false, t0);
    EXPECT_EQ(b.backoff_ms(), 50);
    EXPECT_FALSE(b.may_send(t0 + milliseconds(49)));
    EXPECT_TRUE(b.may_send(t0 + milliseconds(50)));
    for (int64_t want : {100, 200, 400, 800, 1000, 1000}) {
        b.on_write(false, t0);
        EXPECT_EQ(b.backoff_ms(), want);
    }
    EXPECT_FALSE(b.may_send(t0 + milliseconds(999)));
    EXPECT_TRUE(b.may_send(t0 + milliseconds(1000)));
}

TEST(PeerBackoff, ASuccessfulWriteStartsOverAndHearingFromThePeerEndsTheWait) {
    PeerBackoff b;
    const auto t0 = PeerBackoff::Clock::time_point{} + std::chrono::hours(1);
    b.on_write(false, t0);
    b.on_write(false, t0);
    b.on_write(true, t0 + milliseconds(200));
    EXPECT_EQ(b.backoff_ms(), 0);
    b.on_write(false, t0);
    EXPECT_EQ(b.backoff_ms(), 50);
    EXPECT_FALSE(b.may_send(t0));
    b.reset();
    EXPECT_TRUE(b.may_send(t0));
    EXPECT_EQ(b.backoff_ms(), 0);
}

}  // namespace
}  // namespace comet::net
