#pragma once
// Codec of the classic HA byte stream (RocketMQ DefaultHAConnection / DefaultHAClient), plus the
// Comet handshake. Layouts (big-endian, see docs/formats/ha.md):
//   slave -> master report   : int64 max physical offset (>= 0)
//   slave -> master handshake: int64 kHandshakeMagic (negative, so never a valid offset)
//                              int32 body length L, then body:
//                              int16 n, n bytes brokerName (UTF-8), int64 brokerId
//   master -> slave transfer : int64 physical offset, int32 size n (0 = heartbeat), n bytes
// The handshake is optional and only ever first: a RocketMQ slave's plain reports still decode.
// Pure; decoders are single-threaded (one per connection).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "ha/stream_buffer.h"

namespace comet::ha {

// "\xC0" "CMTHA" "\x00\x01": high bit set (negative int64), version 1.
inline constexpr uint64_t kHandshakeMagic = 0xC0434D5448410001ULL;
inline constexpr size_t kReportSize = 8;
inline constexpr size_t kTransferHeaderSize = 12;
inline constexpr size_t kMaxBrokerNameBytes = 1024;

struct HaHandshake {
    std::string broker_name;
    int64_t broker_id = 0;
};

std::string encode_report(int64_t max_offset);
std::string encode_handshake(const HaHandshake& hs);
std::string encode_transfer_header(int64_t offset, int32_t size);

// Master side: slave -> master stream. feed() bytes as they arrive, then next() until empty.
class SlaveStreamDecoder {
public:
    struct Event {
        enum class Kind { kHandshake, kReport } kind;
        HaHandshake handshake;  // kHandshake
        int64_t offset = 0;     // kReport
    };
    void feed(std::string_view bytes) { buf_.append(bytes); }
    // Next complete event, nullopt when more bytes are needed. Errors (kCorruption): a negative
    // offset that is not the handshake magic, a handshake after the first report or a second
    // one, a malformed handshake body. After an error the stream is unusable.
    Result<std::optional<Event>> next();

private:
    std::string buf_;
    size_t pos_ = 0;
    bool any_event_ = false;
};

// Slave side: master -> slave transfer frames. Bytes come in by feed() (a copy) or, without a
// copy, by reading the socket into prepare(n) and then commit(read).
class TransferDecoder {
public:
    struct Frame {
        int64_t offset = 0;
        std::string data;  // empty = heartbeat
    };
    // `data` views the decoder's buffer: valid until the next feed() / prepare().
    struct FrameView {
        int64_t offset = 0;
        std::string_view data;  // empty = heartbeat
    };
    explicit TransferDecoder(int32_t max_body_bytes = 64 * 1024 * 1024)
        : max_body_bytes_(max_body_bytes) {}
    void feed(std::string_view bytes) { buf_.append(bytes); }
    char* prepare(size_t n) { return buf_.prepare(n); }
    void commit(size_t n) { buf_.commit(n); }
    // Errors (kCorruption): negative offset, negative size, size above max_body_bytes.
    Result<std::optional<Frame>> next();
    Result<std::optional<FrameView>> next_view();
    size_t buffered() const { return buf_.size(); }

private:
    StreamBuffer buf_;
    int32_t max_body_bytes_;
};

}  // namespace comet::ha
