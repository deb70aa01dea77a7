#pragma once
// The buffer helpers the HA stream decoders share (classic ha_codec and autoswitch_codec):
// bytes are appended to a std::string and consumed from a position.

#include <cstddef>
#include <cstdint>
#include <string>

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
