#include "base/crc32.h"

#include <zlib.h>

namespace comet {

uint32_t crc32_update(uint32_t crc, const void* data, size_t size) {
    const auto* p = static_cast<const Bytef*>(data);
    uLong c = crc;
    while (size > 0) {
        const uInt chunk = size > 0x40000000 ? 0x40000000 : static_cast<uInt>(size);
        c = ::crc32(c, p, chunk);
        p += chunk;
        size -= chunk;
    }
    return static_cast<uint32_t>(c);
}

uint32_t crc32(const void* data, size_t size) { return crc32_update(0, data, size); }

}  // namespace comet
