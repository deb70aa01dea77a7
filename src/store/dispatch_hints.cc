#include "store/dispatch_hints.h"

#include <utility>

#include "base/check.h"

namespace comet::store {

DispatchHints::DispatchHints(size_t capacity) : slots_(capacity), mask_(capacity - 1) {
    COMET_CHECK(capacity > 0 && (capacity & (capacity - 1)) == 0,
                "dispatch hints capacity {} is not a power of two", capacity);
}

DispatchRequest* DispatchHints::begin_push() {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) >= slots_.size()) {
        return nullptr;
    }
    return &slots_[head & mask_].req;
}

void DispatchHints::end_push() {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    slots_[head & mask_].generation = generation_.load(std::memory_order_acquire);
    head_.store(head + 1, std::memory_order_release);
}

bool DispatchHints::take(int64_t offset, int64_t limit, DispatchRequest* out) {
    uint64_t tail = tail_.load(std::memory_order_relaxed);
    const uint64_t head = head_.load(std::memory_order_acquire);
    const uint64_t generation = generation_.load(std::memory_order_acquire);
    bool found = false;
    while (tail != head) {
        Slot& s = slots_[tail & mask_];
        const int64_t at = s.req.commit_log_offset.value();
        if (s.generation != generation || at < offset) {
            ++tail;  // stale, or a record already passed (decoded instead)
            continue;
        }
        if (at == offset && at + s.req.msg_size <= limit) {
            std::swap(*out, s.req);
            ++tail;
            found = true;
        }
        break;
    }
    tail_.store(tail, std::memory_order_release);
    return found;
}

}  // namespace comet::store
