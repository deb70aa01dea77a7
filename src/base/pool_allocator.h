#pragma once
// PoolAllocator<T>: a standard allocator for objects allocated one at a time (the control block
// and object of std::allocate_shared, for instance) that recycles freed blocks through per-thread
// free lists, one per block size, so that a steady stream of same-sized objects allocates nothing
// after warm-up (the send path's per-request state, issue 16).
//
// Threads: any. A block is taken from the allocating thread's list (no lock, no atomic) and
// remembers that thread. Freed on the same thread, it goes back to that thread's list (no lock);
// freed on another thread (a request's state released by the thread that completed the
// request), it goes to a list shared by all threads for its size (under a mutex), from which a
// thread whose own list is empty takes up to kTransferBlocks at once before it asks the heap. So
// blocks flow back to the threads that allocate instead of piling up on threads that only free.
// A thread's list keeps at most kMaxFreeBlocks blocks and the shared list kMaxSharedBlocks; the
// others go back to the heap, and so does a thread's list when the thread exits. Arrays (n > 1)
// always come from the heap.
//
// Layout: each pooled block is a 16-byte header (the list of the thread that allocated it last)
// followed by the object, so the object keeps operator new's 16-byte alignment.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>

namespace comet {

namespace detail {

inline constexpr uint32_t kMaxFreeBlocks = 1024;
inline constexpr uint32_t kMaxSharedBlocks = 4096;
inline constexpr uint32_t kTransferBlocks = 64;
inline constexpr size_t kBlockHeaderBytes = 16;

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

// The blocks of one size freed on threads that had not allocated them. Never destroyed: its
// blocks stay reachable until the process exits.
struct SharedBlockList {
    std::mutex mu;
    FreeBlockList::Block* head = nullptr;
    uint32_t count = 0;
};

template <size_t BlockSize>
SharedBlockList& shared_block_list() {
    static SharedBlockList* const shared = new SharedBlockList();
    return *shared;
}

// The header of a block (its first bytes) holds the list of the thread that allocated it.
inline FreeBlockList*& owner_of(FreeBlockList::Block* b) {
    return *reinterpret_cast<FreeBlockList**>(b);
}

template <size_t BlockSize>
void* pool_allocate() {
    FreeBlockList& list = free_block_list<BlockSize>();
    if (list.head == nullptr && !list.dead) {
        SharedBlockList& shared = shared_block_list<BlockSize>();
        std::lock_guard<std::mutex> lock(shared.mu);
        for (uint32_t i = 0; i < kTransferBlocks && shared.head != nullptr; ++i) {
            FreeBlockList::Block* b = shared.head;
            shared.head = b->next;
            --shared.count;
            b->next = list.head;
            list.head = b;
            ++list.count;
        }
    }
    FreeBlockList::Block* b = list.head;
    if (b != nullptr) {
        list.head = b->next;
        --list.count;
    } else {
        b = static_cast<FreeBlockList::Block*>(::operator new(kBlockHeaderBytes + BlockSize));
    }
    owner_of(b) = &list;
    return reinterpret_cast<char*>(b) + kBlockHeaderBytes;
}

template <size_t BlockSize>
void pool_deallocate(void* p) noexcept {
    auto* b = reinterpret_cast<FreeBlockList::Block*>(static_cast<char*>(p) - kBlockHeaderBytes);
    FreeBlockList& list = free_block_list<BlockSize>();
    if (list.dead) {
        ::operator delete(b);
        return;
    }
    if (owner_of(b) == &list) {
        if (list.count >= kMaxFreeBlocks) {
            ::operator delete(b);
            return;
        }
        b->next = list.head;
        list.head = b;
        ++list.count;
        return;
    }
    SharedBlockList& shared = shared_block_list<BlockSize>();
    {
        std::lock_guard<std::mutex> lock(shared.mu);
        if (shared.count < kMaxSharedBlocks) {
            b->next = shared.head;
            shared.head = b;
            ++shared.count;
            return;
        }
    }
    ::operator delete(b);
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
    static_assert(alignof(T) <= detail::kBlockHeaderBytes,
                  "PoolAllocator hands out blocks aligned to 16 bytes");
    // Sizes are rounded up to 16 bytes: types of similar size share a list.
    static constexpr size_t kBlockSize = (sizeof(T) + 15) / 16 * 16;
};

}  // namespace comet
