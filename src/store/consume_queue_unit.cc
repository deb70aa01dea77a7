#include "store/consume_queue_unit.h"

namespace comet::store {

namespace {

// Decodes one code point starting at s[i]; advances i. Returns 0xFFFD for malformed input.
uint32_t next_code_point(std::string_view s, size_t& i) {
    const auto b0 = static_cast<uint8_t>(s[i]);
    if (b0 < 0x80) {
        ++i;
        return b0;
    }
    int extra = 0;
    uint32_t cp = 0;
    uint32_t min = 0;
    if ((b0 & 0xE0) == 0xC0) {
        extra = 1;
        cp = b0 & 0x1F;
        min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
        extra = 2;
        cp = b0 & 0x0F;
        min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
        extra = 3;
        cp = b0 & 0x07;
        min = 0x10000;
    } else {
        ++i;
        return 0xFFFD;
    }
    size_t j = i + 1;
    for (int k = 0; k < extra; ++k, ++j) {
        if (j >= s.size() || (static_cast<uint8_t>(s[j]) & 0xC0) != 0x80) {
            i = j;  // consume the valid prefix as one malformed sequence
            return 0xFFFD;
        }
        cp = (cp << 6) | (static_cast<uint8_t>(s[j]) & 0x3F);
    }
    i = j;
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return 0xFFFD;
    }
    return cp;
}

}  // namespace

int32_t java_string_hash_code(std::string_view utf8) {
    uint32_t h = 0;  // unsigned arithmetic: Java's int overflow wraps
    size_t i = 0;
    // ASCII runs (tags, keys, topics nearly always), four characters a step:
    // h*31^4 + c0*31^3 + c1*31^2 + c2*31 + c3, the same sum as one at a time.
    const auto* b = reinterpret_cast<const unsigned char*>(utf8.data());
    while (utf8.size() - i >= 4 && ((b[i] | b[i + 1] | b[i + 2] | b[i + 3]) & 0x80) == 0) {
        h = h * (31u * 31u * 31u * 31u) + b[i] * (31u * 31u * 31u) + b[i + 1] * (31u * 31u) +
            b[i + 2] * 31u + b[i + 3];
        i += 4;
    }
    while (i < utf8.size()) {
        const uint32_t cp = next_code_point(utf8, i);
        if (cp >= 0x10000) {
            const uint32_t v = cp - 0x10000;
            h = 31 * h + (0xD800 + (v >> 10));
            h = 31 * h + (0xDC00 + (v & 0x3FF));
        } else {
            h = 31 * h + cp;
        }
    }
    return static_cast<int32_t>(h);
}

}  // namespace comet::store
