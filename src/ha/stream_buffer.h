#pragma once
// The buffer helpers the HA stream decoders share (classic ha_codec and autoswitch_codec):
// bytes are appended to a std::string and consumed from a position.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace comet::ha::detail {

inline const uint8_t* at(const std::string& s, size_t pos) {
    return reinterpret_cast<const uint8_t*>(s.data()) + pos;
}

// Drops consumed bytes once they dominate the buffer, so it never grows without bound.
inline void compact(std::string& buf, size_t& pos) {
    if (pos > 0 && (pos == buf.size() || pos >= 4096)) {
        buf.erase(0, pos);
        pos = 0;
    }
}

}  // namespace comet::ha::detail

namespace comet::ha {

// The slave's receive buffer (the convention of net::Connection's read buffer): the socket reads
// straight into its free tail (prepare / commit), frames are decoded and handed out as views of
// it, and consumed bytes are reclaimed by moving the unread rest (at most one partial frame) to
// the front only when the tail runs short. Grows to the largest frame seen; never zero-fills
// what it reuses. Single-threaded.
class StreamBuffer {
public:
    // Writable room of at least `n` bytes after the unread ones; valid until the next call.
    char* prepare(size_t n) {
        if (buf_.size() - end_ < n) {
            if (pos_ > 0) {
                std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
                end_ -= pos_;
                pos_ = 0;
            }
            if (buf_.size() - end_ < n) {
                buf_.resize(end_ + n);
            }
        }
        return buf_.data() + end_;
    }
    // `n` bytes were written at prepare()'s pointer.
    void commit(size_t n) { end_ += n; }
    void append(std::string_view bytes) {
        std::memcpy(prepare(bytes.size()), bytes.data(), bytes.size());
        commit(bytes.size());
    }
    size_t size() const { return end_ - pos_; }  // unread bytes
    const uint8_t* at(size_t off) const {
        return reinterpret_cast<const uint8_t*>(buf_.data()) + pos_ + off;
    }
    // Unread bytes [off, off + n): valid until the next prepare() / append().
    std::string_view view(size_t off, size_t n) const {
        return std::string_view(buf_.data() + pos_ + off, n);
    }
    void consume(size_t n) {
        pos_ += n;
        if (pos_ == end_) {
            pos_ = end_ = 0;
        }
    }

private:
    std::vector<char> buf_;  // [pos_, end_) unread; the rest is free room
    size_t pos_ = 0;
    size_t end_ = 0;
};

}  // namespace comet::ha
