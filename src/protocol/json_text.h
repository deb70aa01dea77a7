#pragma once
// Small JSON text helpers shared by the remoting header and body codecs. Pure functions.
//   append_json_string / write_json_string: a JSON string literal the way fastjson writes it
//     (UTF-8 kept raw, '"' '\\' and control characters escaped).
//   json_plain_prefix: how many bytes of a string need no escape (sixteen, then eight at a
//   time).
//   json_value_text:    the text a Java header field would get for a non-string JSON value
//     (numbers keep their exact digits, booleans "true"/"false", containers compact JSON).
//   normalize_lenient_json: rewrites fastjson's non-standard output (unquoted object keys such as
//     {0:"a"}, single-quoted strings) into standard JSON so RapidJSON can parse it (reference §3).

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <rapidjson/document.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "base/status.h"

namespace comet::protocol {

void append_json_string(std::string_view s, std::string* out);

// The same written at `w`, which must have room for json_string_room(s) bytes; returns the end
// of what was written. For encoders that size their output once (issue 16).
char* write_json_string(std::string_view s, char* w);
// Room enough for `s` as a JSON string: the worst case (quotes, \u00XX per byte) for short
// strings, which need no counting pass; the exact size for long ones (bodies), so that a buffer
// never holds six times the text.
size_t json_string_room(std::string_view s);

// The bytes of `word` (eight bytes read with memcpy) that end a run of plain JSON string bytes
// -- a '"', a '\\' or a control character -- as a mask with the top bit of each such byte set,
// except that bytes after the first special one may be marked falsely (SWAR: a byte of x is
// zero when (x - 0x01) & ~x has its top bit set, below 0x20 when b - 0x20 borrows with b's top
// bit clear; a borrow can only mark higher bytes). The first marked byte is always right.
inline uint64_t json_special_mask(uint64_t word) {
    constexpr uint64_t kOnes = 0x0101010101010101ull;
    constexpr uint64_t kHigh = 0x8080808080808080ull;
    const uint64_t quote = word ^ (kOnes * '"');
    const uint64_t slash = word ^ (kOnes * '\\');
    const uint64_t zero_q = (quote - kOnes) & ~quote;
    const uint64_t zero_s = (slash - kOnes) & ~slash;
    const uint64_t control = (word - kOnes * 0x20) & ~word;
    return (zero_q | zero_s | control) & kHigh;
}

// The number of plain string bytes (none of '"', '\\', a control character) at the start of
// [p, end): a JSON string's run up to its closing quote or its next escape, eight bytes at a
// time; a tail of four to seven bytes as one word of two overlapping halves, so that short
// strings (header keys, numbers) take no byte loop.
inline size_t json_plain_prefix(const char* p, const char* end) {
    const char* const start = p;
#if defined(__SSE2__)
    // Sixteen bytes a step: a byte is special when it equals '"' or '\\', or when it is below
    // 0x20 (unsigned: max(b, 0x1f) == 0x1f). The words and the tail below finish the rest.
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i below = _mm_set1_epi8(0x1f);
    while (end - p >= 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const __m128i special =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                         _mm_cmpeq_epi8(_mm_max_epu8(v, below), below));
        if (const auto mask = static_cast<unsigned>(_mm_movemask_epi8(special)); mask != 0) {
            return static_cast<size_t>(p - start) + static_cast<size_t>(std::countr_zero(mask));
        }
        p += 16;
    }
#endif
    // Little-endian only: there the first byte in memory is the mask's lowest, which borrows
    // cannot mark falsely. Elsewhere the byte loop below does it all.
    if constexpr (std::endian::native == std::endian::little) {
        while (end - p >= 8) {
            uint64_t word;
            std::memcpy(&word, p, 8);
            if (const uint64_t mask = json_special_mask(word); mask != 0) {
                return static_cast<size_t>(p - start) +
                       static_cast<size_t>(std::countr_zero(mask) >> 3);
            }
            p += 8;
        }
        const auto left = static_cast<size_t>(end - p);
        if (left >= 4) {
            // Lanes 0-3: p[0..3]; lanes 4-7: p[left-4..left-1]. The lowest marked lane is a
            // real special byte (a borrow only marks lanes above one), and both halves are in
            // byte order, so it is the first special byte.
            uint32_t low;
            uint32_t high;
            std::memcpy(&low, p, 4);
            std::memcpy(&high, end - 4, 4);
            const uint64_t mask = json_special_mask(uint64_t{low} | (uint64_t{high} << 32));
            if (mask == 0) {
                return static_cast<size_t>(end - start);
            }
            const auto lane = static_cast<size_t>(std::countr_zero(mask) >> 3);
            return static_cast<size_t>(p - start) + (lane < 4 ? lane : left - 8 + lane);
        }
    }
    while (p < end) {
        const auto c = static_cast<unsigned char>(*p);
        if (c < 0x20 || c == '"' || c == '\\') {
            break;
        }
        ++p;
    }
    return static_cast<size_t>(p - start);
}

// Requires: `v` was parsed with kParseNumbersAsStringsFlag or is a bool/container.
std::string json_value_text(const rapidjson::Value& v);

// Returns standard JSON equivalent to `text`, or an error naming the offset of the problem.
// Accepts: unquoted keys made of letters, digits, '_', '-', '.', '$'; single-quoted strings.
Result<std::string> normalize_lenient_json(std::string_view text);

}  // namespace comet::protocol
