#pragma once
// The byte buffer a connection reads into. Unlike std::vector<char>, growing it never
// zero-fills the new bytes: a large frame (a pull response of a thousand messages is over a
// megabyte) would otherwise be written twice, once with zeros and once by the socket read.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>

namespace comet::net {

class ReadBuffer {
public:
    char* data() { return data_.get(); }
    const char* data() const { return data_.get(); }
    size_t size() const { return size_; }

    // Replaces the storage with `n` bytes, of which the first `keep` (at most both sizes) are
    // copied from the old storage; the rest are uninitialized. n == 0 frees the storage.
    void reallocate(size_t n, size_t keep) {
        if (n == 0) {
            data_.reset();
            size_ = 0;
            return;
        }
        auto fresh = std::make_unique_for_overwrite<char[]>(n);
        keep = std::min({keep, size_, n});
        if (keep > 0) {
            std::memcpy(fresh.get(), data_.get(), keep);
        }
        data_ = std::move(fresh);
        size_ = n;
    }

private:
    std::unique_ptr<char[]> data_;
    size_t size_ = 0;
};

}  // namespace comet::net
