#pragma once
// HandlerMemory<Bytes>: room for one asynchronous operation at a time (asio's custom handler
// allocation), for an operation an owner never has two of outstanding: a connection's write,
// or the post that kicks its writer. asio would otherwise take the operation's state from its
// per-thread recycling cache, which holds two blocks and so, with a read, a kick and a write
// of different sizes in turn on one loop, went back to the heap once per burst of requests
// (issue 16). HandlerAllocator<T> hands it to asio (asio::bind_allocator).
//
// Threads: allocate() and deallocate() may run on different threads (a kick is posted from a
// completion's thread and freed on the I/O thread); the in-use flag is atomic. A request that
// is larger than Bytes, or that comes while the block is in use, goes to the heap. The memory
// must outlive the operations: the owner keeps itself alive through their handlers (asio
// destroys a handler only after freeing its operation's memory).

#include <atomic>
#include <cstddef>
#include <new>

namespace comet::net {

template <size_t Bytes>
class HandlerMemory {
public:
    HandlerMemory() = default;
    HandlerMemory(const HandlerMemory&) = delete;
    HandlerMemory& operator=(const HandlerMemory&) = delete;

    void* allocate(size_t size) {
        if (size <= Bytes && !in_use_.exchange(true, std::memory_order_acquire)) {
            return storage_;
        }
        return ::operator new(size);
    }
    void deallocate(void* p) noexcept {
        if (p == storage_) {
            in_use_.store(false, std::memory_order_release);
        } else {
            ::operator delete(p);
        }
    }

private:
    alignas(std::max_align_t) unsigned char storage_[Bytes];
    std::atomic<bool> in_use_{false};
};

template <typename T, size_t Bytes>
class HandlerAllocator {
public:
    using value_type = T;
    template <typename U>
    struct rebind {
        using other = HandlerAllocator<U, Bytes>;
    };

    explicit HandlerAllocator(HandlerMemory<Bytes>* memory) noexcept : memory_(memory) {}
    template <typename U>
    HandlerAllocator(const HandlerAllocator<U, Bytes>& other) noexcept  // NOLINT
        : memory_(other.memory()) {}

    T* allocate(size_t n) {
        static_assert(alignof(T) <= alignof(std::max_align_t), "over-aligned handler state");
        return static_cast<T*>(memory_->allocate(sizeof(T) * n));
    }
    void deallocate(T* p, size_t) noexcept { memory_->deallocate(p); }

    HandlerMemory<Bytes>* memory() const noexcept { return memory_; }
    template <typename U>
    bool operator==(const HandlerAllocator<U, Bytes>& other) const noexcept {
        return memory_ == other.memory();
    }

private:
    HandlerMemory<Bytes>* memory_;
};

}  // namespace comet::net
