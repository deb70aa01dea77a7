#include "ha/group_transfer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <vector>

namespace comet::ha {
namespace {

using namespace std::chrono_literals;
using store::PutMessageStatus;

// Outcomes are declared before the GroupTransfer of a test: its destructor fails the puts still
// waiting, which writes into their Outcome.
struct Outcome {
    std::optional<PutMessageStatus> status;
    GroupTransfer::Completion cb() {
        return [this](PutMessageStatus s) {
            ASSERT_FALSE(status.has_value()) << "completed twice";
            status = s;
        };
    }
};

TEST(GroupTransfer, CompletesWhenKthHighestSlaveAckReachesOffset) {
    ManualClock clock;
    Outcome a, b, c;
    GroupTransfer gt(clock);
    gt.put_request(100, 2, 3s, a.cb());  // master + 1 slave
    gt.put_request(200, 3, 3s, b.cb());  // master + 2 slaves
    gt.put_request(300, 2, 3s, c.cb());
    EXPECT_EQ(gt.pending(), 3u);

    std::vector<int64_t> acks{150, 50};
    gt.on_acks(acks);
    EXPECT_EQ(a.status, PutMessageStatus::kPutOk);
    EXPECT_FALSE(b.status);
    EXPECT_FALSE(c.status);

    acks = {250, 199};  // second-highest 199 < 200
    gt.on_acks(acks);
    EXPECT_FALSE(b.status);
    acks = {250, 200};
    gt.on_acks(acks);
    EXPECT_EQ(b.status, PutMessageStatus::kPutOk);
    EXPECT_FALSE(c.status);
    EXPECT_EQ(gt.pending(), 1u);
}

// Hundreds of puts in flight with mixed quorums, reports completing a few at a time: exactly
// the covered ones complete, each once, in put order, and the rest keep waiting in order (the
// timeouts afterwards come in put order too).
TEST(GroupTransfer, ManyWaitingPutsCompleteExactlyTheCoveredOnesInOrder) {
    ManualClock clock;
    constexpr int kPuts = 300;
    std::vector<int> order;  // completion order, by put index
    std::vector<std::optional<PutMessageStatus>> got(kPuts);
    GroupTransfer gt(clock);
    auto need_of = [](int i) { return i % 3 == 0 ? 3 : 2; };
    for (int i = 0; i < kPuts; ++i) {
        gt.put_request(100 * (i + 1), need_of(i), 3s, [&, i](PutMessageStatus st) {
            ASSERT_FALSE(got[i].has_value()) << "completed twice: " << i;
            got[i] = st;
            order.push_back(i);
        });
    }
    // Slave A runs ahead, slave B behind: need 2 follows A, need 3 follows B.
    for (int64_t b = 0, a = 0; a <= 100 * kPuts / 2; a += 700, b += 300) {
        std::vector<int64_t> acks{a, b};
        gt.on_acks(acks);
        for (int i = 0; i < kPuts; ++i) {
            const int64_t end = 100 * (i + 1);
            const bool should = need_of(i) == 2 ? end <= a : end <= b;
            EXPECT_EQ(got[i].has_value(), should) << "put " << i << " acks " << a << "/" << b;
        }
    }
    const size_t done_by_acks = order.size();
    EXPECT_EQ(gt.pending(), kPuts - done_by_acks);
    for (size_t k = 1; k < order.size(); ++k) {
        // Within one report completions follow put order; across reports a need-2 put may
        // complete before an earlier need-3 one.
        if (need_of(order[k - 1]) == need_of(order[k])) {
            EXPECT_LT(order[k - 1], order[k]);
        }
    }
    clock.advance(3s);
    gt.expire();
    EXPECT_EQ(gt.pending(), 0u);
    for (size_t k = done_by_acks + 1; k < order.size(); ++k) {
        EXPECT_LT(order[k - 1], order[k]);  // the timed-out rest, in put order
    }
    for (int i = 0; i < kPuts; ++i) {
        ASSERT_TRUE(got[i].has_value()) << i;
    }
}

TEST(GroupTransfer, TimesOutAtDeadlineOnly) {
    ManualClock clock;
    Outcome a, b;
    GroupTransfer gt(clock);
    gt.put_request(100, 2, 3000ms, a.cb());
    clock.advance(1000ms);
    gt.put_request(100, 2, 3000ms, b.cb());
    EXPECT_EQ(gt.next_deadline(), clock.now() + 2000ms);
    clock.advance(1999ms);
    gt.expire();
    EXPECT_FALSE(a.status);
    clock.advance(1ms);
    gt.expire();
    EXPECT_EQ(a.status, PutMessageStatus::kFlushSlaveTimeout);
    EXPECT_FALSE(b.status);
    clock.advance(1000ms);
    gt.expire();
    EXPECT_EQ(b.status, PutMessageStatus::kFlushSlaveTimeout);
    EXPECT_EQ(gt.pending(), 0u);
    EXPECT_EQ(gt.next_deadline(), TimePoint::max());
}

TEST(GroupTransfer, NotEnoughSlavesConnectedWaitsThenTimesOut) {
    ManualClock clock;
    Outcome a;
    GroupTransfer gt(clock);
    gt.put_request(10, 3, 1s, a.cb());
    std::vector<int64_t> acks{1000};  // only one slave: master + 1 < 3
    gt.on_acks(acks);
    EXPECT_FALSE(a.status);
    clock.advance(1s);
    gt.expire();
    EXPECT_EQ(a.status, PutMessageStatus::kFlushSlaveTimeout);
}

TEST(GroupTransfer, AlreadyCoveredCompletesAtOnce) {
    ManualClock clock;
    Outcome a, b;
    GroupTransfer gt(clock);
    std::vector<int64_t> acks{500, 400};
    gt.on_acks(acks);
    gt.put_request(400, 3, 1s, a.cb());
    EXPECT_EQ(a.status, PutMessageStatus::kPutOk);
    gt.put_request(401, 3, 1s, b.cb());
    EXPECT_FALSE(b.status);
    EXPECT_EQ(gt.pending(), 1u);
}

TEST(GroupTransfer, ShutdownFailsWaitingPuts) {
    ManualClock clock;
    Outcome a;
    {
        GroupTransfer gt(clock);
        gt.put_request(10, 2, 1s, a.cb());
        gt.shutdown();
        EXPECT_EQ(a.status, PutMessageStatus::kServiceNotAvailable);
        gt.shutdown();  // idempotent
    }
}

TEST(GroupTransfer, APutAfterShutdownFailsAtOnceInsteadOfWaitingForever) {
    // Nothing expires requests once the HA driver stopped (a master that lost its role).
    ManualClock clock;
    Outcome late;
    GroupTransfer gt(clock);
    gt.shutdown();
    gt.put_request(10, 2, 1s, late.cb());
    ASSERT_TRUE(late.status.has_value());
    EXPECT_EQ(*late.status, PutMessageStatus::kServiceNotAvailable);
    EXPECT_EQ(gt.pending(), 0u);
}

TEST(GroupTransfer, CompletionMayRegisterAnotherPut) {
    // Completions run outside the lock: re-entering is safe.
    ManualClock clock;
    Outcome inner;
    GroupTransfer gt(clock);
    bool outer_done = false;
    gt.put_request(10, 2, 1s, [&](PutMessageStatus) {
        outer_done = true;
        gt.put_request(20, 2, 1s, inner.cb());
    });
    std::vector<int64_t> acks{15};
    gt.on_acks(acks);
    EXPECT_TRUE(outer_done);
    EXPECT_FALSE(inner.status);
    acks = {20};
    gt.on_acks(acks);
    EXPECT_EQ(inner.status, PutMessageStatus::kPutOk);
}

}  // namespace
}  // namespace comet::ha
