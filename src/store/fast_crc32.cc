#include "store/fast_crc32.h"

#include "base/crc32.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace comet::store {

#if defined(__x86_64__)
namespace {

// Folding constants for the bit-reflected polynomial 0x04C11DB7 (x^n mod P(x) for the fold
// distances 4x128+-32, 128+-32 and 64 bits), and the Barrett pair (P, floor(x^64 / P)).
constexpr uint64_t kFold4Lo = 0x154442bd4ULL;
constexpr uint64_t kFold4Hi = 0x1c6e41596ULL;
constexpr uint64_t kFold1Lo = 0x1751997d0ULL;
constexpr uint64_t kFold1Hi = 0x0ccaa009eULL;
constexpr uint64_t kFold64 = 0x163cd6124ULL;
constexpr uint64_t kPoly = 0x1db710641ULL;
constexpr uint64_t kMu = 0x1f7011641ULL;

__attribute__((target("pclmul,sse4.1"))) inline __m128i fold(__m128i acc, __m128i k,
                                                               __m128i next) {
    const __m128i lo = _mm_clmulepi64_si128(acc, k, 0x00);
    const __m128i hi = _mm_clmulepi64_si128(acc, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

// Raw CRC state (not complemented) over len bytes, len a multiple of 16 and >= 64.
__attribute__((target("pclmul,sse4.1"))) uint32_t fold_crc(uint32_t state, const uint8_t* p,
                                                            size_t len) {
    auto load = [](const uint8_t* q) {
        return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    };
    __m128i x1 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(state)));
    __m128i x2 = load(p + 16);
    __m128i x3 = load(p + 32);
    __m128i x4 = load(p + 48);
    p += 64;
    len -= 64;
    const __m128i k4 = _mm_set_epi64x(static_cast<int64_t>(kFold4Hi),
                                      static_cast<int64_t>(kFold4Lo));
    while (len >= 64) {
        x1 = fold(x1, k4, load(p));
        x2 = fold(x2, k4, load(p + 16));
        x3 = fold(x3, k4, load(p + 32));
        x4 = fold(x4, k4, load(p + 48));
        p += 64;
        len -= 64;
    }
    const __m128i k1 = _mm_set_epi64x(static_cast<int64_t>(kFold1Hi),
                                      static_cast<int64_t>(kFold1Lo));
    x1 = fold(x1, k1, x2);
    x1 = fold(x1, k1, x3);
    x1 = fold(x1, k1, x4);
    while (len >= 16) {
        x1 = fold(x1, k1, load(p));
        p += 16;
        len -= 16;
    }
    // 128 -> 64 bits.
    __m128i t = _mm_clmulepi64_si128(x1, k1, 0x10);
    x1 = _mm_xor_si128(t, _mm_srli_si128(x1, 8));
    // 64 -> 32 bits.
    const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
    t = _mm_srli_si128(x1, 4);
    x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32),
                              _mm_set_epi64x(0, static_cast<int64_t>(kFold64)), 0x00);
    x1 = _mm_xor_si128(x1, t);
    // Barrett reduction to the 32-bit remainder.
    const __m128i pu = _mm_set_epi64x(static_cast<int64_t>(kMu), static_cast<int64_t>(kPoly));
    t = x1;
    x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), pu, 0x10);
    x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), pu, 0x00);
    x1 = _mm_xor_si128(x1, t);
    return static_cast<uint32_t>(_mm_extract_epi32(x1, 1));
}

bool detect() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

const bool kAccelerated = detect();

}  // namespace

bool fast_crc32_accelerated() { return kAccelerated; }

uint32_t fast_crc32_update(uint32_t crc, const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    if (kAccelerated && size >= 64) {
        const size_t bulk = size & ~static_cast<size_t>(15);
        crc = ~fold_crc(~crc, p, bulk);
        p += bulk;
        size -= bulk;
    }
    return size == 0 ? crc : comet::crc32_update(crc, p, size);
}

#else

bool fast_crc32_accelerated() { return false; }

uint32_t fast_crc32_update(uint32_t crc, const void* data, size_t size) {
    return comet::crc32_update(crc, data, size);
}

#endif

}  // namespace comet::store
