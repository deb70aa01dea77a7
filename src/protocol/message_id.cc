#include "protocol/message_id.h"

#include <chrono>
#include <cstring>

#include "base/bytes.h"

namespace comet::protocol {

namespace {
// The upper-case hex digits of every byte value.
struct HexPairs {
    char pairs[256][2];
    constexpr HexPairs() : pairs() {
        constexpr char kDigits[] = "0123456789ABCDEF";
        for (int b = 0; b < 256; ++b) {
            pairs[b][0] = kDigits[b >> 4];
            pairs[b][1] = kDigits[b & 0xF];
        }
    }
};
constexpr HexPairs kHexPairs;
}  // namespace

char* write_hex(const uint8_t* bytes, size_t n, char* out) {
    for (size_t i = 0; i < n; ++i) {
        std::memcpy(out + 2 * i, kHexPairs.pairs[bytes[i]], 2);  // a byte's two digits at once
    }
    return out + 2 * n;
}

std::string bytes_to_hex(std::string_view bytes) {
    std::string out(bytes.size() * 2, '0');
    write_hex(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), out.data());
    return out;
}

namespace {
int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}
}  // namespace

Result<std::string> hex_to_bytes(std::string_view hex) {
    if (hex.size() % 2 != 0) {
        return Status::error(Errc::kInvalidArgument, "hex string of odd length {}", hex.size());
    }
    std::string out(hex.size() / 2, '\0');
    for (size_t i = 0; i < out.size(); ++i) {
        int hi = hex_value(hex[2 * i]);
        int lo = hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            return Status::error(Errc::kInvalidArgument, "non-hex character in '{}'", hex);
        }
        out[i] = static_cast<char>((hi << 4) | lo);
    }
    return out;
}

char* write_offset_msg_id(const HostAddress& store_host, int64_t physical_offset, char* out) {
    // ip (4 or 16 bytes) | port (4, big-endian) | offset (8, big-endian), in upper-case hex.
    uint8_t raw[28];
    const size_t ip_len = store_host.ip_len();
    std::memcpy(raw, store_host.ip.data(), ip_len);
    put_be32(raw + ip_len, static_cast<uint32_t>(store_host.port));
    put_be64(raw + ip_len + 4, static_cast<uint64_t>(physical_offset));
    return write_hex(raw, ip_len + 12, out);
}

std::string create_offset_msg_id(const HostAddress& store_host, int64_t physical_offset) {
    std::string id;
    create_offset_msg_id(store_host, physical_offset, &id);
    return id;
}

void create_offset_msg_id(const HostAddress& store_host, int64_t physical_offset,
                          std::string* out) {
    // Written straight into *out (decoding a pull of a thousand messages makes as many).
    char hex[kMaxOffsetMsgIdChars];
    out->assign(hex, write_offset_msg_id(store_host, physical_offset, hex));
}

Result<OffsetMsgId> decode_offset_msg_id(std::string_view id) {
    if (id.size() != 32 && id.size() != 56) {
        return Status::error(Errc::kInvalidArgument,
                             "offset message id '{}' must have 32 or 56 hex characters", id);
    }
    COMET_ASSIGN_OR_RETURN(std::string raw, hex_to_bytes(id));
    OffsetMsgId out;
    out.store_host.v6 = id.size() == 56;
    size_t ip_len = out.store_host.ip_len();
    std::copy(raw.begin(), raw.begin() + static_cast<std::ptrdiff_t>(ip_len),
              out.store_host.ip.begin());
    const auto* p = reinterpret_cast<const uint8_t*>(raw.data()) + ip_len;
    out.store_host.port = static_cast<int32_t>(get_be32(p));
    out.physical_offset = static_cast<int64_t>(get_be64(p + 4));
    return out;
}

void month_bounds_utc(int64_t now_ms, int64_t* start_ms, int64_t* next_start_ms) {
    using namespace std::chrono;
    sys_days day = floor<days>(sys_time<milliseconds>(milliseconds(now_ms)));
    year_month_day ymd(day);
    year_month ym = ymd.year() / ymd.month();
    sys_days start = sys_days(ym / 1);
    sys_days next = sys_days((ym + months(1)) / 1);
    *start_ms = duration_cast<milliseconds>(start.time_since_epoch()).count();
    *next_start_ms = duration_cast<milliseconds>(next.time_since_epoch()).count();
}

MessageClientIdSetter::MessageClientIdSetter(const HostAddress& ip, int16_t pid, int32_t salt) {
    std::string raw;
    ByteWriter w(&raw);
    w.bytes(std::string_view(reinterpret_cast<const char*>(ip.ip.data()), ip.ip_len()));
    w.be16(static_cast<uint16_t>(pid));
    w.be32(static_cast<uint32_t>(salt));
    prefix_ = bytes_to_hex(raw);
}

std::string MessageClientIdSetter::create_uniq_id(int64_t now_ms) {
    if (now_ms >= next_start_ms_.load(std::memory_order_acquire)) {
        int64_t s = 0;
        int64_t n = 0;
        month_bounds_utc(now_ms, &s, &n);
        start_ms_.store(s, std::memory_order_release);
        next_start_ms_.store(n, std::memory_order_release);
    }
    auto since = static_cast<uint32_t>(now_ms - start_ms_.load(std::memory_order_acquire));
    auto counter = static_cast<uint16_t>(counter_.fetch_add(1, std::memory_order_relaxed));
    uint8_t tail[6];
    put_be32(tail, since);
    put_be16(tail + 4, counter);
    return prefix_ + bytes_to_hex(std::string_view(reinterpret_cast<const char*>(tail), 6));
}

}  // namespace comet::protocol
