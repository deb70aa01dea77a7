#include "store/stored_message_encoder.h"

#include <cstring>

#include "base/bytes.h"
#include "protocol/message_decoder.h"
#include "store/fast_crc32.h"

namespace comet::store {

namespace pm = comet::protocol;

namespace {

uint8_t* put_host(uint8_t* p, const pm::HostAddress& h) {
    std::memcpy(p, h.ip.data(), h.ip_len());
    p += h.ip_len();
    put_be32(p, static_cast<uint32_t>(h.port));
    return p + 4;
}

}  // namespace

Result<StoredRecordLayout> layout_stored_message(const pm::MessageExt& msg, std::string_view body,
                                                 std::string_view props,
                                                 const pm::HostAddress& store_host, int32_t magic) {
    if (magic == 0) {
        magic = pm::magic_for_topic(msg.topic.size());
    }
    if (magic != pm::kMessageMagicCodeV1 && magic != pm::kMessageMagicCodeV2) {
        return Status::error(Errc::kInvalidArgument, "unknown message magic {:#x}", magic);
    }
    if (props.size() > static_cast<size_t>(pm::kMaxPropertiesLength)) {
        return Status::error(Errc::kInvalidArgument, "properties length {} exceeds {}",
                             props.size(), pm::kMaxPropertiesLength);
    }
    const size_t max_topic = magic == pm::kMessageMagicCodeV1 ? 127 : 32767;
    if (msg.topic.size() > max_topic) {
        return Status::error(Errc::kInvalidArgument, "topic length {} exceeds {}", msg.topic.size(),
                             max_topic);
    }
    StoredRecordLayout l;
    l.magic = magic;
    l.sys_flag = msg.sys_flag & ~(pm::sysflag::kBornHostV6 | pm::sysflag::kStoreHostAddressV6);
    if (msg.born_host.v6) {
        l.sys_flag |= pm::sysflag::kBornHostV6;
    }
    if (store_host.v6) {
        l.sys_flag |= pm::sysflag::kStoreHostAddressV6;
    }
    l.total = pm::stored_message_length(l.sys_flag, static_cast<int64_t>(body.size()),
                                        static_cast<int64_t>(msg.topic.size()),
                                        static_cast<int64_t>(props.size()), magic);
    if (l.total > INT32_MAX) {
        return Status::error(Errc::kInvalidArgument, "message record of {} bytes is too large",
                             l.total);
    }
    return l;
}

void write_stored_message(uint8_t* p, const StoredRecordLayout& l, const pm::MessageExt& msg,
                          std::string_view body, std::string_view props,
                          const pm::HostAddress& store_host, uint32_t body_crc) {
    put_be32(p, static_cast<uint32_t>(l.total));
    put_be32(p + 4, static_cast<uint32_t>(l.magic));
    put_be32(p + 8, body_crc);
    put_be32(p + 12, static_cast<uint32_t>(msg.queue_id));
    put_be32(p + 16, static_cast<uint32_t>(msg.flag));
    put_be64(p + 20, static_cast<uint64_t>(msg.queue_offset));
    put_be64(p + 28, static_cast<uint64_t>(msg.commit_log_offset));
    put_be32(p + 36, static_cast<uint32_t>(l.sys_flag));
    put_be64(p + 40, static_cast<uint64_t>(msg.born_timestamp));
    p = put_host(p + 48, msg.born_host);
    put_be64(p, static_cast<uint64_t>(msg.store_timestamp));
    p = put_host(p + 8, store_host);
    put_be32(p, static_cast<uint32_t>(msg.reconsume_times));
    put_be64(p + 4, static_cast<uint64_t>(msg.prepared_transaction_offset));
    put_be32(p + 12, static_cast<uint32_t>(body.size()));
    p += 16;
    if (!body.empty()) {
        std::memcpy(p, body.data(), body.size());
    }
    p += body.size();
    if (l.magic == pm::kMessageMagicCodeV2) {
        put_be16(p, static_cast<uint16_t>(msg.topic.size()));
        p += 2;
    } else {
        *p++ = static_cast<uint8_t>(msg.topic.size());
    }
    std::memcpy(p, msg.topic.data(), msg.topic.size());
    p += msg.topic.size();
    put_be16(p, static_cast<uint16_t>(props.size()));
    p += 2;
    if (!props.empty()) {
        std::memcpy(p, props.data(), props.size());
    }
}

Status encode_stored_message(const pm::MessageExt& msg, std::string_view props,
                             const pm::HostAddress& store_host, std::string* out, int32_t magic) {
    return encode_stored_message(msg, msg.body, props, store_host, out, magic);
}

Status encode_stored_message(const pm::MessageExt& msg, std::string_view body,
                             std::string_view props, const pm::HostAddress& store_host,
                             std::string* out, int32_t magic) {
    COMET_ASSIGN_OR_RETURN(StoredRecordLayout l,
                           layout_stored_message(msg, body, props, store_host, magic));
    const size_t at = out->size();
    out->resize(at + static_cast<size_t>(l.total));
    write_stored_message(reinterpret_cast<uint8_t*>(out->data() + at), l, msg, body, props,
                         store_host, fast_body_crc32(body));
    return Status::ok();
}

}  // namespace comet::store
