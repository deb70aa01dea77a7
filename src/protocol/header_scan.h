#pragma once
// Internal to src/protocol: the frame-prefix check and the ROCKETMQ header scanner shared by the
// general decoder (decode_frame_payload) and the typed fast path (fast_header.h), so both give
// the same fields and the same errors by construction. Pure, stateless.

#include <cstdint>
#include <string_view>

#include "base/bytes.h"
#include "base/status.h"
#include "protocol/remoting_command.h"

namespace comet::protocol::detail {

// The parts of one frame payload (bytes after the 4-byte length word).
struct PayloadParts {
    uint32_t type = 0;  // serialization byte, not yet checked
    std::string_view header;
    std::string_view body;
};
// Errors as decode_frame_payload: kResourceExhausted over the limit, kCorruption if truncated.
Result<PayloadParts> split_payload(std::string_view payload, size_t max_frame_bytes);

LanguageCode language_from_byte(uint8_t b);

// Reads a ROCKETMQ binary header: the fixed fields and remark into *cmd (ext_fields untouched),
// then on_ext(key, value) per extFields pair in wire order (views into `header`; a later
// duplicate must win). Errors (kCorruption) name what was truncated or out of range.
template <typename OnExt>
Status scan_rocketmq_header(std::string_view header, RemotingCommand* cmd, OnExt&& on_ext) {
    constexpr size_t kRocketMqFixedHeader = 21;
    ByteReader r(header);
    if (header.size() < kRocketMqFixedHeader) {
        return Status::error(Errc::kCorruption,
                             "ROCKETMQ header truncated: {} bytes, fixed part needs {}",
                             header.size(), kRocketMqFixedHeader);
    }
    uint16_t code16 = 0;
    uint8_t lang = 0;
    uint16_t version16 = 0;
    uint32_t opaque = 0;
    uint32_t flag = 0;
    uint32_t remark_len = 0;
    (void)r.be16(&code16);
    (void)r.u8(&lang);
    (void)r.be16(&version16);
    (void)r.be32(&opaque);
    (void)r.be32(&flag);
    (void)r.be32(&remark_len);
    cmd->serialize_type = SerializeType::kRocketMq;
    cmd->code = static_cast<int16_t>(code16);
    cmd->language = language_from_byte(lang);
    cmd->version = static_cast<int16_t>(version16);
    cmd->opaque = static_cast<int32_t>(opaque);
    cmd->flag = static_cast<int32_t>(flag);
    if (remark_len > 0) {
        std::string_view remark;
        if (!r.bytes(remark_len, &remark)) {
            return Status::error(Errc::kCorruption,
                                 "ROCKETMQ header remark length {} exceeds header ({} bytes left)",
                                 static_cast<int32_t>(remark_len), r.remaining());
        }
        cmd->remark = std::string(remark);
    }
    uint32_t ext_len = 0;
    if (!r.be32(&ext_len)) {
        return Status::error(Errc::kCorruption,
                             "ROCKETMQ header truncated before extFields length");
    }
    if (ext_len > r.remaining()) {
        return Status::error(Errc::kCorruption,
                             "ROCKETMQ header extFields length {} exceeds header ({} bytes left)",
                             static_cast<int32_t>(ext_len), r.remaining());
    }
    std::string_view ext_block;
    (void)r.bytes(ext_len, &ext_block);
    ByteReader er(ext_block);
    while (er.remaining() > 0) {
        uint16_t klen = 0;
        std::string_view key;
        uint32_t vlen = 0;
        std::string_view value;
        if (!er.be16(&klen)) {
            return Status::error(Errc::kCorruption,
                                 "ROCKETMQ header extFields key truncated at offset {}",
                                 er.position());
        }
        if (klen > 0x7FFF) {  // Java reads a signed short
            return Status::error(Errc::kCorruption,
                                 "ROCKETMQ header extFields key length {} is negative",
                                 static_cast<int16_t>(klen));
        }
        if (!er.bytes(klen, &key)) {
            return Status::error(Errc::kCorruption,
                                 "ROCKETMQ header extFields key truncated at offset {}",
                                 er.position());
        }
        if (!er.be32(&vlen) || !er.bytes(vlen, &value)) {
            return Status::error(Errc::kCorruption,
                                 "ROCKETMQ header extFields value of '{}' truncated", key);
        }
        on_ext(key, value);
    }
    return Status::ok();
}

}  // namespace comet::protocol::detail
