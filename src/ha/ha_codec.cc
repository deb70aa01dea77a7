#include "ha/ha_codec.h"

#include "base/bytes.h"
#include "ha/stream_buffer.h"

namespace comet::ha {
namespace {

using detail::at;
using detail::compact;

}  // namespace

std::string encode_report(int64_t max_offset) {
    std::string out;
    ByteWriter(&out).be64(static_cast<uint64_t>(max_offset));
    return out;
}

std::string encode_handshake(const HaHandshake& hs) {
    std::string out;
    ByteWriter w(&out);
    w.be64(kHandshakeMagic);
    w.be32(static_cast<uint32_t>(2 + hs.broker_name.size() + 8));
    w.be16(static_cast<uint16_t>(hs.broker_name.size()));
    w.bytes(hs.broker_name);
    w.be64(static_cast<uint64_t>(hs.broker_id));
    return out;
}

std::string encode_transfer_header(int64_t offset, int32_t size) {
    std::string out;
    ByteWriter w(&out);
    w.be64(static_cast<uint64_t>(offset));
    w.be32(static_cast<uint32_t>(size));
    return out;
}

Result<std::optional<SlaveStreamDecoder::Event>> SlaveStreamDecoder::next() {
    compact(buf_, pos_);
    if (buf_.size() - pos_ < kReportSize) {
        return std::optional<Event>();
    }
    uint64_t raw = get_be64(at(buf_, pos_));
    if (raw == kHandshakeMagic) {
        if (any_event_) {
            return Status::error(Errc::kCorruption,
                                 "HA handshake after the stream started (offset {} of input)",
                                 pos_);
        }
        if (buf_.size() - pos_ < kReportSize + 4) {
            return std::optional<Event>();
        }
        uint32_t len = get_be32(at(buf_, pos_ + 8));
        if (len < 10 || len > 10 + kMaxBrokerNameBytes) {
            return Status::error(Errc::kCorruption, "HA handshake body length {} out of range",
                                 len);
        }
        if (buf_.size() - pos_ < 12 + size_t{len}) {
            return std::optional<Event>();
        }
        const uint8_t* body = at(buf_, pos_ + 12);
        uint16_t n = get_be16(body);
        if (size_t{n} + 10 != len) {
            return Status::error(Errc::kCorruption,
                                 "HA handshake brokerName length {} does not fit body length {}",
                                 n, len);
        }
        Event ev{Event::Kind::kHandshake, {}, 0};
        ev.handshake.broker_name.assign(reinterpret_cast<const char*>(body + 2), n);
        ev.handshake.broker_id = static_cast<int64_t>(get_be64(body + 2 + n));
        pos_ += 12 + len;
        any_event_ = true;
        return std::optional<Event>(std::move(ev));
    }
    auto offset = static_cast<int64_t>(raw);
    if (offset < 0) {
        return Status::error(Errc::kCorruption, "HA report with negative offset {}", offset);
    }
    pos_ += kReportSize;
    any_event_ = true;
    return std::optional<Event>(Event{Event::Kind::kReport, {}, offset});
}

Result<std::optional<TransferDecoder::FrameView>> TransferDecoder::next_view() {
    if (buf_.size() < kTransferHeaderSize) {
        return std::optional<FrameView>();
    }
    auto offset = static_cast<int64_t>(get_be64(buf_.at(0)));
    auto size = static_cast<int32_t>(get_be32(buf_.at(8)));
    if (offset < 0) {
        return Status::error(Errc::kCorruption, "HA transfer frame with negative offset {}",
                             offset);
    }
    if (size < 0 || size > max_body_bytes_) {
        return Status::error(Errc::kCorruption,
                             "HA transfer frame at offset {} has size {} (limit {})", offset, size,
                             max_body_bytes_);
    }
    if (buf_.size() < kTransferHeaderSize + static_cast<size_t>(size)) {
        return std::optional<FrameView>();
    }
    FrameView f;
    f.offset = offset;
    f.data = buf_.view(kTransferHeaderSize, static_cast<size_t>(size));
    buf_.consume(kTransferHeaderSize + static_cast<size_t>(size));
    return std::optional<FrameView>(f);
}

Result<std::optional<TransferDecoder::Frame>> TransferDecoder::next() {
    auto r = next_view();
    if (!r.is_ok()) {
        return r.status();
    }
    if (!r.value()) {
        return std::optional<Frame>();
    }
    Frame f;
    f.offset = r.value()->offset;
    f.data.assign(r.value()->data);
    return std::optional<Frame>(std::move(f));
}

}  // namespace comet::ha
