#pragma once
// Big-endian byte helpers for RocketMQ's wire and disk formats (all integers big-endian).

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace comet {

inline void put_be16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}
inline void put_be32(uint8_t* p, uint32_t v) {
    for (int i = 3; i >= 0; --i) {
        p[i] = static_cast<uint8_t>(v);
        v >>= 8;
    }
}
inline void put_be64(uint8_t* p, uint64_t v) {
    for (int i = 7; i >= 0; --i) {
        p[i] = static_cast<uint8_t>(v);
        v >>= 8;
    }
}
inline uint16_t get_be16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
inline uint32_t get_be32(const uint8_t* p) {
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}
inline uint64_t get_be64(const uint8_t* p) {
    return (uint64_t{get_be32(p)} << 32) | uint64_t{get_be32(p + 4)};
}

// Appends big-endian values to a std::string buffer.
class ByteWriter {
public:
    explicit ByteWriter(std::string* out) : out_(out) {}
    void u8(uint8_t v) { out_->push_back(static_cast<char>(v)); }
    void be16(uint16_t v) {
        uint8_t b[2];
        put_be16(b, v);
        out_->append(reinterpret_cast<char*>(b), 2);
    }
    void be32(uint32_t v) {
        uint8_t b[4];
        put_be32(b, v);
        out_->append(reinterpret_cast<char*>(b), 4);
    }
    void be64(uint64_t v) {
        uint8_t b[8];
        put_be64(b, v);
        out_->append(reinterpret_cast<char*>(b), 8);
    }
    void bytes(std::string_view s) { out_->append(s); }

private:
    std::string* out_;
};

// Bounds-checked big-endian reader; every read reports failure instead of overrunning.
class ByteReader {
public:
    ByteReader(const void* data, size_t size)
        : p_(static_cast<const uint8_t*>(data)), size_(size) {}
    explicit ByteReader(std::string_view s) : ByteReader(s.data(), s.size()) {}
    size_t remaining() const { return size_ - pos_; }
    size_t position() const { return pos_; }
    bool u8(uint8_t* v) {
        if (remaining() < 1) return false;
        *v = p_[pos_++];
        return true;
    }
    bool be16(uint16_t* v) {
        if (remaining() < 2) return false;
        *v = get_be16(p_ + pos_);
        pos_ += 2;
        return true;
    }
    bool be32(uint32_t* v) {
        if (remaining() < 4) return false;
        *v = get_be32(p_ + pos_);
        pos_ += 4;
        return true;
    }
    bool be64(uint64_t* v) {
        if (remaining() < 8) return false;
        *v = get_be64(p_ + pos_);
        pos_ += 8;
        return true;
    }
    bool bytes(size_t n, std::string_view* v) {
        if (remaining() < n) return false;
        *v = std::string_view(reinterpret_cast<const char*>(p_ + pos_), n);
        pos_ += n;
        return true;
    }
    bool skip(size_t n) {
        if (remaining() < n) return false;
        pos_ += n;
        return true;
    }

private:
    const uint8_t* p_;
    size_t size_;
    size_t pos_ = 0;
};

}  // namespace comet
