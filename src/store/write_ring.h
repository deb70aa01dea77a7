#pragma once
// WriteRing: the CommitLog's write buffer. A fixed block of anonymous memory, touched once at
// creation, that holds the log bytes [committed, reserved) between the put that encodes them
// and the commit thread that writes them into the segment file (MappedFile::write_at_end).
// Log offset x lives at ring byte x % capacity, so a range wraps at most once and is handed
// out as at most two spans.
//
// Pure memory, no threads and no locks: the CommitLog serialises writers (put lock) and
// guarantees that a range is never overwritten before it is committed (reserved - committed
// <= capacity). Any thread may read a range that the writer published.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

namespace comet::store {

class WriteRing {
public:
    // capacity > 0. Aborts when the memory cannot be mapped (start-up only).
    explicit WriteRing(size_t capacity);
    ~WriteRing();
    WriteRing(const WriteRing&) = delete;
    WriteRing& operator=(const WriteRing&) = delete;

    size_t capacity() const { return capacity_; }

    // Copies n bytes (n <= capacity) to log offset `at`.
    void copy_in(int64_t at, const void* src, size_t n);
    // Writes n zero bytes (n <= capacity) at log offset `at`.
    void zero(int64_t at, size_t n);
    // Writable pointer to [at, at + n) when that range does not wrap, else null.
    uint8_t* contiguous(int64_t at, size_t n) {
        const size_t i = index(at);
        return n <= capacity_ - i ? reinterpret_cast<uint8_t*>(base_ + i) : nullptr;
    }
    // The bytes of [at, at + n) (n <= capacity): the first span and, when the range wraps,
    // the second (empty otherwise).
    std::pair<std::string_view, std::string_view> view(int64_t at, size_t n) const;

private:
    size_t index(int64_t at) const { return static_cast<size_t>(at) % capacity_; }

    const size_t capacity_;
    char* base_;
};

}  // namespace comet::store
