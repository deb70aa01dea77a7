#pragma once
// PoolAllocator<T>: a standard allocator for objects allocated one at a time (the control block
// and object of std::allocate_shared, for instance) that recycles freed blocks through per-thread
// free lists, one per block size, so that a steady stream of same-sized objects allocates nothing
// after warm-up (the send path's per-request state, issue 16).
//
// Threads: any. A block is taken from the allocating thread's list and returned to the freeing
// thread's list (no lock, no atomic): a block allocated on one thread and freed on another
// migrates. Each list keeps at most kMaxFreeBlocks blocks; the others go back to the heap, and so
// does a list's content when its thread exits. Arrays (n > 1) always come from the heap.

#include <cstddef>
#include <cstdint>
#include <new>

namespace comet {

namespace detail {

inline constexpr size_t kMaxFreeBlocks = 1024;

// One thread's free blocks of one size. Trivially destructible, so that it may still be used
// (as a pass-through to the heap) during thread exit after its guard has emptied it.
struct FreeBlockList {
    struct Block {
        Block* next;
    };
    Block* head;
    uint32_t count;
    bool dead;  // the thread is exiting: blocks go straight back to the heap
};

// Frees the list's blocks when the thread exits.
struct FreeBlockListGuard {
    FreeBlockList* list;
    ~FreeBlockListGuard() {
        while (list->head != nullptr) {
            FreeBlockList::Block* b = list->head;
            list->head = b->next;
            ::operator delete(b);
        }
        list->count = 0;
        list->dead = true;
    }
};

template <size_t BlockSize>
FreeBlockList& free_block_list() {
    thread_local FreeBlockList list{nullptr, 0, false};
    thread_local FreeBlockListGuard guard{&list};
    (void)guard;
    return list;
}

template <size_t BlockSize>
void* pool_allocate() {
    FreeBlockList& list = free_block_list<BlockSize>();
    if (list.head != nullptr) {
        FreeBlockList::Block* b = list.head;
        list.head = b->next;
        --list.count;
        return b;
    }
    return ::operator new(BlockSize);
}

template <size_t BlockSize>
void pool_deallocate(void* p) noexcept {
    FreeBlockList& list = free_block_list<BlockSize>();
    if (list.dead || list.count >= kMaxFreeBlocks) {
        ::operator delete(p);
        return;
    }
    auto* b = static_cast<FreeBlockList::Block*>(p);
    b->next = list.head;
    list.head = b;
    ++list.count;
}

}  // namespace detail

template <typename T>
class PoolAllocator {
public:
    using value_type = T;

    PoolAllocator() noexcept = default;
    template <typename U>
    PoolAllocator(const PoolAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)

    T* allocate(size_t n) {
        if (n != 1) {
            return static_cast<T*>(::operator new(n * sizeof(T)));
        }
        return static_cast<T*>(detail::pool_allocate<kBlockSize>());
    }
    void deallocate(T* p, size_t n) noexcept {
        if (n != 1) {
            ::operator delete(p);
            return;
        }
        detail::pool_deallocate<kBlockSize>(p);
    }

    template <typename U>
    bool operator==(const PoolAllocator<U>&) const noexcept {
        return true;
    }

private:
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                  "PoolAllocator hands out blocks with operator new's default alignment");
    // Sizes are rounded up to 16 bytes: types of similar size share a list.
    static constexpr size_t kBlockSize = (sizeof(T) + 15) / 16 * 16;
};

}  // namespace comet
