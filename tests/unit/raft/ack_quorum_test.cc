#include "raft/ack_quorum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "base/rng.h"

namespace comet::raft {
namespace {

TEST(AckQuorumTest, KthHighestOfThreeAndFive) {
    const std::vector<int64_t> three{5, 9, 7};
    EXPECT_EQ(kth_highest(three, 1), 9);
    EXPECT_EQ(kth_highest(three, 2), 7);  // majority of 3 has reached 7
    EXPECT_EQ(kth_highest(three, 3), 5);
    const std::vector<int64_t> five{10, 3, 3, 8, 12};
    EXPECT_EQ(kth_highest(five, majority(5)), 8);
    EXPECT_EQ(kth_highest(five, 5), 3);
}

TEST(AckQuorumTest, DuplicatesAndSingle) {
    const std::vector<int64_t> same{4, 4, 4};
    EXPECT_EQ(kth_highest(same, 2), 4);
    const std::vector<int64_t> one{42};
    EXPECT_EQ(kth_highest(one, 1), 42);
}

TEST(AckQuorumTest, MatchesSortOnRandomInputsSmallAndLarge) {
    Rng rng(17);
    for (int round = 0; round < 500; ++round) {
        const auto n = static_cast<size_t>(rng.uniform(1, round % 2 == 0 ? 7 : 40));
        std::vector<int64_t> v(n);
        for (auto& x : v) {
            x = rng.uniform(0, 20);
        }
        const auto k = static_cast<size_t>(rng.uniform(1, static_cast<int64_t>(n)));
        std::vector<int64_t> sorted = v;
        std::sort(sorted.begin(), sorted.end(), std::greater<int64_t>());
        ASSERT_EQ(kth_highest(v, k), sorted[k - 1]);
        // At least k values are >= the answer, fewer than k are > it.
        const int64_t ans = kth_highest(v, k);
        EXPECT_GE(std::count_if(v.begin(), v.end(), [&](int64_t x) { return x >= ans; }),
                  static_cast<std::ptrdiff_t>(k));
        EXPECT_LT(std::count_if(v.begin(), v.end(), [&](int64_t x) { return x > ans; }),
                  static_cast<std::ptrdiff_t>(k));
    }
}

TEST(AckQuorumTest, MajoritySizes) {
    EXPECT_EQ(majority(1), 1U);
    EXPECT_EQ(majority(3), 2U);
    EXPECT_EQ(majority(4), 3U);
    EXPECT_EQ(majority(5), 3U);
}

}  // namespace
}  // namespace comet::raft
