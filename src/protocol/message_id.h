#pragma once
// Message ids (reference §5.4).
// - Offset message id (Java MessageDecoder.createMessageId): store host IP (4 or 16 bytes) +
//   port (i32) + physical offset (i64), as uppercase hex: 32 chars (IPv4) or 56 (IPv6).
// - UNIQ_KEY (Java MessageClientIDSetter): hex of a fixed prefix IP + pid (i16) + salt (i32),
//   then i32 milliseconds since the start of the current month + i16 counter.
// Pure: callers pass the time.

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "protocol/message_ext.h"

namespace comet::protocol {

std::string create_offset_msg_id(const HostAddress& store_host, int64_t physical_offset);
// The same into *out, replacing what it held (its capacity is reused).
void create_offset_msg_id(const HostAddress& store_host, int64_t physical_offset,
                          std::string* out);
// The same at `out`, which has room for kMaxOffsetMsgIdChars; returns the end of the id.
inline constexpr size_t kMaxOffsetMsgIdChars = 56;
char* write_offset_msg_id(const HostAddress& store_host, int64_t physical_offset, char* out);

struct OffsetMsgId {
    HostAddress store_host;
    int64_t physical_offset = 0;
};
// Errors (kInvalidArgument): not 32 or 56 hex characters.
Result<OffsetMsgId> decode_offset_msg_id(std::string_view id);

// Uppercase hex of bytes.
std::string bytes_to_hex(std::string_view bytes);
// The same at `out` (2n characters); returns their end.
char* write_hex(const uint8_t* bytes, size_t n, char* out);
// Errors (kInvalidArgument): odd length or a non-hex character.
Result<std::string> hex_to_bytes(std::string_view hex);

// Generates UNIQ_KEY values. Thread-safe (an atomic counter and an atomic month window).
class MessageClientIdSetter {
public:
    MessageClientIdSetter(const HostAddress& ip, int16_t pid, int32_t salt);

    // A new id for wall-clock time now_ms (ms since the Unix epoch, UTC).
    std::string create_uniq_id(int64_t now_ms);
    const std::string& prefix() const { return prefix_; }

private:
    std::string prefix_;
    std::atomic<int64_t> start_ms_{0};  // start of the month of the last id
    std::atomic<int64_t> next_start_ms_{0};
    std::atomic<uint32_t> counter_{0};
};

// Start of the UTC month containing now_ms, and of the next month (ms since the epoch).
void month_bounds_utc(int64_t now_ms, int64_t* start_ms, int64_t* next_start_ms);

}  // namespace comet::protocol
