#pragma once
// Internal helpers shared by the event and snapshot codecs (events.cc, replicas_info_manager.cc):
// strings are be32 length + bytes, ids and epochs are fixed-width big-endian. Not a public API.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/bytes.h"

namespace comet::controller::detail {

// Upper bound on any string or element count a decoder accepts: far above real names and
// addresses, small enough that garbage lengths are rejected before anything is allocated.
inline constexpr uint32_t kMaxFieldLength = 1 << 20;

inline void put_string(ByteWriter& w, std::string_view s) {
    w.be32(static_cast<uint32_t>(s.size()));
    w.bytes(s);
}

inline bool get_string(ByteReader& r, std::string* out) {
    uint32_t n = 0;
    std::string_view v;
    if (!r.be32(&n) || n > kMaxFieldLength || !r.bytes(n, &v)) {
        return false;
    }
    out->assign(v);
    return true;
}

inline bool get_i64(ByteReader& r, int64_t* out) {
    uint64_t v = 0;
    if (!r.be64(&v)) {
        return false;
    }
    *out = static_cast<int64_t>(v);
    return true;
}

inline bool get_i32(ByteReader& r, int32_t* out) {
    uint32_t v = 0;
    if (!r.be32(&v)) {
        return false;
    }
    *out = static_cast<int32_t>(v);
    return true;
}

// A count of elements that each take at least `min_element_bytes`: rejects counts the remaining
// input could not hold.
inline bool get_count(ByteReader& r, size_t min_element_bytes, uint32_t* out) {
    if (!r.be32(out) || *out > kMaxFieldLength) {
        return false;
    }
    return static_cast<uint64_t>(*out) * min_element_bytes <= r.remaining();
}

}  // namespace comet::controller::detail
