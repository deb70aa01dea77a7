// PoolAllocator: a freed block is handed out again on the same thread, allocate_shared works
// through it, blocks freed on another thread are safe and come back to the allocating thread,
// arrays bypass the lists.

#include "base/pool_allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace comet {
namespace {

struct Payload {
    std::string text;
    int64_t n = 0;
};

TEST(PoolAllocatorTest, AFreedBlockIsReusedOnTheSameThread) {
    PoolAllocator<Payload> alloc;
    Payload* a = alloc.allocate(1);
    alloc.deallocate(a, 1);
    Payload* b = alloc.allocate(1);
    EXPECT_EQ(a, b);
    alloc.deallocate(b, 1);

    // Types of the same rounded size share the list.
    struct SameSize {
        char bytes[sizeof(Payload)];
    };
    PoolAllocator<SameSize> other;
    SameSize* c = other.allocate(1);
    EXPECT_EQ(static_cast<void*>(c), static_cast<void*>(a));
    other.deallocate(c, 1);

    Payload* arr = alloc.allocate(3);  // arrays come from the heap
    arr[2].n = 0;
    alloc.deallocate(arr, 3);
}

TEST(PoolAllocatorTest, AllocateSharedRecyclesItsControlBlock) {
    const void* first = nullptr;
    {
        auto p = std::allocate_shared<Payload>(PoolAllocator<Payload>(), Payload{"x", 1});
        first = p.get();
        EXPECT_EQ(p->text, "x");
    }
    auto q = std::allocate_shared<Payload>(PoolAllocator<Payload>(), Payload{"y", 2});
    EXPECT_EQ(static_cast<const void*>(q.get()), first);
    EXPECT_EQ(q->n, 2);
}

TEST(PoolAllocatorTest, BlocksMayBeFreedOnAnotherThreadAndOnThreadExit) {
    std::vector<std::shared_ptr<Payload>> made;
    std::thread maker([&made] {
        for (int i = 0; i < 100; ++i) {
            made.push_back(
                std::allocate_shared<Payload>(PoolAllocator<Payload>(), Payload{"m", i}));
        }
        // Some blocks freed here stay on this thread's list until it exits.
        for (int i = 0; i < 10; ++i) {
            auto tmp = std::allocate_shared<Payload>(PoolAllocator<Payload>(), Payload{"t", i});
        }
    });
    maker.join();
    ASSERT_EQ(made.size(), 100u);
    EXPECT_EQ(made[99]->n, 99);
    made.clear();  // freed on this thread: they join its list (up to the bound)
    std::vector<std::shared_ptr<Payload>> again;
    for (int i = 0; i < 200; ++i) {
        again.push_back(std::allocate_shared<Payload>(PoolAllocator<Payload>(), Payload{"a", i}));
    }
    EXPECT_EQ(again[150]->n, 150);
}

// A request's state allocated on an I/O thread and freed by the thread that completed the
// request: the blocks come back to the allocating thread (through the shared list) instead of
// staying on the freeing thread while the allocating one goes to the heap.
TEST(PoolAllocatorTest, BlocksFreedOnAnotherThreadComeBackToTheAllocatingThread) {
    struct Odd {
        char bytes[200];  // a size no other test uses: its lists start empty
    };
    PoolAllocator<Odd> alloc;
    constexpr int kBlocks = 40;  // fewer than one transfer
    std::vector<Odd*> first;
    for (int i = 0; i < kBlocks; ++i) {
        first.push_back(alloc.allocate(1));
    }
    // The completer stays alive until the blocks are allocated again: blocks kept on its own
    // list would be out of reach.
    std::promise<void> freed;
    std::promise<void> done;
    std::thread completer([&] {
        for (Odd* p : first) {
            alloc.deallocate(p, 1);
        }
        freed.set_value();
        done.get_future().wait();
    });
    freed.get_future().wait();
    std::vector<Odd*> again;
    for (int i = 0; i < kBlocks; ++i) {
        again.push_back(alloc.allocate(1));
    }
    done.set_value();
    completer.join();
    std::sort(first.begin(), first.end());
    std::sort(again.begin(), again.end());
    EXPECT_EQ(first, again);
    for (Odd* p : again) {
        alloc.deallocate(p, 1);
    }
}

}  // namespace
}  // namespace comet
