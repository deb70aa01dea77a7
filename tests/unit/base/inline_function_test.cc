// InlineFunction: inline storage up to its capacity, heap beyond, move-only callables, moves
// that carry the callable, destruction exactly once.

#include "base/inline_function.h"

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>

namespace comet {
namespace {

struct Counted {
    static inline int alive = 0;
    Counted() { ++alive; }
    Counted(const Counted&) { ++alive; }
    Counted(Counted&&) noexcept { ++alive; }
    ~Counted() { --alive; }
};

TEST(InlineFunctionTest, SmallCallablesLiveInlineAndLargeOnesStillWork) {
    using Fn = InlineFunction<int(int), 64>;
    int base = 40;
    auto small = [base](int x) { return base + x; };
    static_assert(Fn::fits_inline<decltype(small)>());
    Fn f = small;
    EXPECT_EQ(f(2), 42);

    std::array<int, 64> big{};
    big[63] = 7;
    auto large = [big](int x) { return big[63] * x; };
    static_assert(!Fn::fits_inline<decltype(large)>());
    Fn g = large;
    EXPECT_EQ(g(6), 42);
}

TEST(InlineFunctionTest, HoldsMoveOnlyCallablesAndMovesThem) {
    using Fn = InlineFunction<std::string(), 32>;
    auto owned = std::make_unique<std::string>("moved along");
    Fn f = [p = std::move(owned)]() { return *p; };
    Fn g = std::move(f);
    EXPECT_FALSE(static_cast<bool>(f));
    ASSERT_TRUE(static_cast<bool>(g));
    EXPECT_EQ(g(), "moved along");
    Fn h;
    h = std::move(g);
    EXPECT_EQ(h(), "moved along");
    h = nullptr;
    EXPECT_FALSE(static_cast<bool>(h));
}

TEST(InlineFunctionTest, DestroysItsCallableExactlyOnceInlineOrOnTheHeap) {
    Counted::alive = 0;
    {
        InlineFunction<void(), 32> inline_fn = [c = Counted()]() {};
        InlineFunction<void(), 32> moved = std::move(inline_fn);
        std::array<char, 100> pad{};
        InlineFunction<void(), 32> heap_fn = [c = Counted(), pad]() { (void)pad; };
        InlineFunction<void(), 32> heap_moved = std::move(heap_fn);
        EXPECT_EQ(Counted::alive, 2);
    }
    EXPECT_EQ(Counted::alive, 0);
}

TEST(InlineFunctionTest, MutableCallableKeepsItsStateAcrossCalls) {
    InlineFunction<int(), 16> next = [n = 0]() mutable { return ++n; };
    EXPECT_EQ(next(), 1);
    EXPECT_EQ(next(), 2);
}

}  // namespace
}  // namespace comet
