#pragma once
// CRC32 (zlib polynomial), as RocketMQ's UtilAll.crc32 computes it for the body CRC field.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace comet {

uint32_t crc32(const void* data, size_t size);
inline uint32_t crc32(std::string_view s) { return crc32(s.data(), s.size()); }
// Continue a running CRC.
uint32_t crc32_update(uint32_t crc, const void* data, size_t size);

}  // namespace comet
