#include "store/write_ring.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "base/check.h"

namespace comet::store {

WriteRing::WriteRing(size_t capacity) : capacity_(capacity) {
    COMET_CHECK(capacity > 0, "write ring of 0 bytes");
    // MAP_POPULATE: every page is resident before the first put (no fault on the put path).
    void* p = ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    COMET_CHECK(p != MAP_FAILED, "cannot map a write ring of {} bytes", capacity);
    base_ = static_cast<char*>(p);
}

WriteRing::~WriteRing() { ::munmap(base_, capacity_); }

void WriteRing::copy_in(int64_t at, const void* src, size_t n) {
    COMET_CHECK(n <= capacity_, "copy of {} bytes into a {}-byte ring", n, capacity_);
    const size_t i = index(at);
    const size_t first = std::min(n, capacity_ - i);
    std::memcpy(base_ + i, src, first);
    if (first < n) {
        std::memcpy(base_, static_cast<const char*>(src) + first, n - first);
    }
}

void WriteRing::zero(int64_t at, size_t n) {
    COMET_CHECK(n <= capacity_, "zero of {} bytes in a {}-byte ring", n, capacity_);
    const size_t i = index(at);
    const size_t first = std::min(n, capacity_ - i);
    std::memset(base_ + i, 0, first);
    if (first < n) {
        std::memset(base_, 0, n - first);
    }
}

std::pair<std::string_view, std::string_view> WriteRing::view(int64_t at, size_t n) const {
    COMET_CHECK(n <= capacity_, "view of {} bytes of a {}-byte ring", n, capacity_);
    const size_t i = index(at);
    const size_t first = std::min(n, capacity_ - i);
    return {std::string_view(base_ + i, first), std::string_view(base_, n - first)};
}

}  // namespace comet::store
