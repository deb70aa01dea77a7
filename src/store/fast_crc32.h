#pragma once
// CRC-32 (IEEE 802.3, zlib's crc32) for the put path's BODYCRC: folds 64 bytes per step with
// carry-less multiplication (PCLMULQDQ, the method of Intel's "Fast CRC Computation for Generic
// Polynomials Using PCLMULQDQ") when the CPU has it, else falls back to zlib (comet::crc32).
// zlib's table-driven crc32 costs about as much as the rest of a 1 KiB put together.
// Pure functions, any thread. Results are identical to comet::crc32 / zlib's crc32().

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace comet::store {

// Same contract as zlib's crc32(crc, data, size): crc is a previous result (0 to start).
uint32_t fast_crc32_update(uint32_t crc, const void* data, size_t size);

inline uint32_t fast_crc32(std::string_view bytes) {
    return fast_crc32_update(0, bytes.data(), bytes.size());
}

// RocketMQ's BODYCRC: UtilAll.crc32(body) & 0x7FFFFFFF (protocol::body_crc32, faster).
inline int32_t fast_body_crc32(std::string_view body) {
    return static_cast<int32_t>(fast_crc32(body) & 0x7FFFFFFFu);
}

// Whether the carry-less multiply path is in use on this CPU (tests, benchmarks).
bool fast_crc32_accelerated();

}  // namespace comet::store
