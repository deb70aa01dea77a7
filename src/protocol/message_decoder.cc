#include "protocol/message_decoder.h"

#include "base/bytes.h"
#include "base/crc32.h"
#include "protocol/message_id.h"

namespace comet::protocol {

int64_t stored_message_length(int32_t sys_flag, int64_t body_len, int64_t topic_len,
                              int64_t properties_len, int32_t magic) {
    int64_t born_len = (sys_flag & sysflag::kBornHostV6) != 0 ? 20 : 8;
    int64_t store_len = (sys_flag & sysflag::kStoreHostAddressV6) != 0 ? 20 : 8;
    int64_t topic_len_size = magic == kMessageMagicCodeV2 ? 2 : 1;
    return 4      // TOTALSIZE
           + 4    // MAGICCODE
           + 4    // BODYCRC
           + 4    // QUEUEID
           + 4    // FLAG
           + 8    // QUEUEOFFSET
           + 8    // PHYSICALOFFSET
           + 4    // SYSFLAG
           + 8    // BORNTIMESTAMP
           + born_len  // BORNHOST
           + 8         // STORETIMESTAMP
           + store_len  // STOREHOSTADDRESS
           + 4          // RECONSUMETIMES
           + 8          // PREPARED TRANSACTION OFFSET
           + 4 + body_len  // BODY
           + topic_len_size + topic_len  // TOPIC
           + 2 + properties_len;         // PROPERTIES
}

int32_t body_crc32(std::string_view body) {
    return static_cast<int32_t>(crc32(body) & 0x7FFFFFFFu);
}

namespace {

void write_host(ByteWriter& w, const HostAddress& h) {
    w.bytes(std::string_view(reinterpret_cast<const char*>(h.ip.data()), h.ip_len()));
    w.be32(static_cast<uint32_t>(h.port));
}

bool read_host(ByteReader& r, bool v6, HostAddress* h) {
    std::string_view ip;
    uint32_t port = 0;
    h->v6 = v6;
    h->ip = {};
    if (!r.bytes(h->ip_len(), &ip) || !r.be32(&port)) {
        return false;
    }
    std::copy(ip.begin(), ip.end(), h->ip.begin());
    h->port = static_cast<int32_t>(port);
    return true;
}

}  // namespace

Status encode_message(const MessageExt& msg, std::string* out, int32_t magic) {
    if (magic == 0) {
        magic = magic_for_topic(msg.topic.size());
    }
    if (magic != kMessageMagicCodeV1 && magic != kMessageMagicCodeV2) {
        return Status::error(Errc::kInvalidArgument, "unknown message magic {:#x}", magic);
    }
    std::string props = msg.properties_string();
    if (props.size() > static_cast<size_t>(kMaxPropertiesLength)) {
        return Status::error(Errc::kInvalidArgument, "properties length {} exceeds {}",
                             props.size(), kMaxPropertiesLength);
    }
    size_t max_topic = magic == kMessageMagicCodeV1 ? 127 : 32767;
    if (msg.topic.size() > max_topic) {
        return Status::error(Errc::kInvalidArgument, "topic length {} exceeds {}",
                             msg.topic.size(), max_topic);
    }
    int32_t sys_flag = msg.sys_flag & ~(sysflag::kBornHostV6 | sysflag::kStoreHostAddressV6);
    if (msg.born_host.v6) {
        sys_flag |= sysflag::kBornHostV6;
    }
    if (msg.store_host.v6) {
        sys_flag |= sysflag::kStoreHostAddressV6;
    }
    int64_t total = stored_message_length(sys_flag, static_cast<int64_t>(msg.body.size()),
                                          static_cast<int64_t>(msg.topic.size()),
                                          static_cast<int64_t>(props.size()), magic);
    if (total > INT32_MAX) {
        return Status::error(Errc::kInvalidArgument, "message record of {} bytes is too large",
                             total);
    }
    out->reserve(out->size() + static_cast<size_t>(total));
    ByteWriter w(out);
    w.be32(static_cast<uint32_t>(total));
    w.be32(static_cast<uint32_t>(magic));
    w.be32(static_cast<uint32_t>(body_crc32(msg.body)));
    w.be32(static_cast<uint32_t>(msg.queue_id));
    w.be32(static_cast<uint32_t>(msg.flag));
    w.be64(static_cast<uint64_t>(msg.queue_offset));
    w.be64(static_cast<uint64_t>(msg.commit_log_offset));
    w.be32(static_cast<uint32_t>(sys_flag));
    w.be64(static_cast<uint64_t>(msg.born_timestamp));
    write_host(w, msg.born_host);
    w.be64(static_cast<uint64_t>(msg.store_timestamp));
    write_host(w, msg.store_host);
    w.be32(static_cast<uint32_t>(msg.reconsume_times));
    w.be64(static_cast<uint64_t>(msg.prepared_transaction_offset));
    w.be32(static_cast<uint32_t>(msg.body.size()));
    w.bytes(msg.body);
    if (magic == kMessageMagicCodeV2) {
        w.be16(static_cast<uint16_t>(msg.topic.size()));
    } else {
        w.u8(static_cast<uint8_t>(msg.topic.size()));
    }
    w.bytes(msg.topic);
    w.be16(static_cast<uint16_t>(props.size()));
    w.bytes(props);
    return Status::ok();
}

namespace {
// decode_message_into's steps, one per part of the record, in record order; each writes its
// fields of the message and checks them. Always inlined: they are its only callers' code.

// TOTALSIZE and MAGICCODE: a known magic, and a size within the bytes available.
[[gnu::always_inline]] inline Status read_record_frame(std::string_view record, uint32_t* total,
                                                       int32_t* magic) {
    ByteReader r(record);
    uint32_t magic_u = 0;
    if (!r.be32(total) || !r.be32(&magic_u)) {
        return Status::error(Errc::kCorruption, "message record shorter than 8 bytes ({})",
                             record.size());
    }
    *magic = static_cast<int32_t>(magic_u);
    if (*magic != kMessageMagicCodeV1 && *magic != kMessageMagicCodeV2) {
        return Status::error(Errc::kCorruption, "bad message magic {:#010x}", magic_u);
    }
    if (*total < 8 || *total > record.size()) {
        return Status::error(Errc::kCorruption,
                             "message TOTALSIZE {} outside the {} bytes available", *total,
                             record.size());
    }
    return Status::ok();
}

// BODYCRC through PREPARED TRANSACTION OFFSET (the hosts' sizes by SYSFLAG); false when the
// record ends first.
[[gnu::always_inline]] inline bool read_fixed_fields(ByteReader& r, MessageExt& m) {
    uint32_t u32 = 0;
    uint64_t u64 = 0;
    bool ok = true;
    ok = ok && r.be32(&u32);
    m.body_crc = static_cast<int32_t>(u32);
    ok = ok && r.be32(&u32);
    m.queue_id = static_cast<int32_t>(u32);
    ok = ok && r.be32(&u32);
    m.flag = static_cast<int32_t>(u32);
    ok = ok && r.be64(&u64);
    m.queue_offset = static_cast<int64_t>(u64);
    ok = ok && r.be64(&u64);
    m.commit_log_offset = static_cast<int64_t>(u64);
    ok = ok && r.be32(&u32);
    m.sys_flag = static_cast<int32_t>(u32);
    ok = ok && r.be64(&u64);
    m.born_timestamp = static_cast<int64_t>(u64);
    ok = ok && read_host(r, (m.sys_flag & sysflag::kBornHostV6) != 0, &m.born_host);
    ok = ok && r.be64(&u64);
    m.store_timestamp = static_cast<int64_t>(u64);
    ok = ok && read_host(r, (m.sys_flag & sysflag::kStoreHostAddressV6) != 0, &m.store_host);
    ok = ok && r.be32(&u32);
    m.reconsume_times = static_cast<int32_t>(u32);
    ok = ok && r.be64(&u64);
    m.prepared_transaction_offset = static_cast<int64_t>(u64);
    return ok;
}

// BODYLENGTH and BODY: CRC-checked when opts.check_crc, kept when opts.read_body.
[[gnu::always_inline]] inline Status read_body_field(ByteReader& r, DecodeOptions opts,
                                                     uint32_t total, MessageExt& m) {
    uint32_t body_len = 0;
    std::string_view body;
    if (!r.be32(&body_len) || !r.bytes(body_len, &body)) {
        return Status::error(Errc::kCorruption, "message body length {} exceeds record of {} bytes",
                             body_len, total);
    }
    if (opts.check_crc && body_crc32(body) != m.body_crc) {
        return Status::error(Errc::kCorruption, "message body CRC mismatch: stored {} computed {}",
                             m.body_crc, body_crc32(body));
    }
    if (opts.read_body) {
        m.body.assign(body);
    } else {
        m.body.clear();
    }
    return Status::ok();
}

// TOPICLENGTH (2 bytes in v2, 1 in v1) and TOPIC.
[[gnu::always_inline]] inline Status read_topic_field(ByteReader& r, int32_t magic, MessageExt& m) {
    bool ok = true;
    size_t topic_len = 0;
    if (magic == kMessageMagicCodeV2) {
        uint16_t l = 0;
        ok = r.be16(&l);
        topic_len = l;
    } else {
        uint8_t l = 0;
        ok = r.u8(&l);
        topic_len = l;
        if (ok && l > 127) {  // Java reads this byte signed: a negative length is invalid
            return Status::error(Errc::kCorruption, "v1 topic length byte {} is negative", l);
        }
    }
    std::string_view topic;
    if (!ok || !r.bytes(topic_len, &topic)) {
        return Status::error(Errc::kCorruption, "message topic length {} exceeds record", topic_len);
    }
    m.topic.assign(topic);
    return Status::ok();
}

// PROPERTIESLENGTH and PROPERTIES, which must end the record.
[[gnu::always_inline]] inline Status read_properties_field(ByteReader& r, MessageExt& m) {
    uint16_t props_len = 0;
    std::string_view props;
    if (!r.be16(&props_len) || !r.bytes(props_len, &props)) {
        return Status::error(Errc::kCorruption, "message properties length {} exceeds record",
                             props_len);
    }
    if (r.remaining() != 0) {
        return Status::error(Errc::kCorruption, "message record has {} trailing bytes",
                             r.remaining());
    }
    m.properties.assign_from_string(props);
    if (m.stored_properties.has_value()) {
        m.stored_properties->assign(props);
    } else {
        m.stored_properties.emplace(props);
    }
    return Status::ok();
}

// decode_message into *out, a default-constructed message or one decoded before: every field
// is written, the strings and properties keep their buffers (decode_messages decodes each
// record in the vector's own element, reused from pull to pull: no message is moved).
Status decode_message_into(std::string_view record, DecodeOptions opts, MessageExt* out) {
    MessageExt& m = *out;
    uint32_t total = 0;
    int32_t magic = 0;
    COMET_RETURN_IF_ERROR(read_record_frame(record, &total, &magic));
    ByteReader r(record.substr(0, total));
    r.skip(8);
    m.store_size = static_cast<int32_t>(total);
    if (!read_fixed_fields(r, m)) {
        return Status::error(Errc::kCorruption, "message record of {} bytes truncated in header",
                             total);
    }
    COMET_RETURN_IF_ERROR(read_body_field(r, opts, total, m));
    COMET_RETURN_IF_ERROR(read_topic_field(r, magic, m));
    COMET_RETURN_IF_ERROR(read_properties_field(r, m));
    create_offset_msg_id(m.store_host, m.commit_log_offset, &m.msg_id);
    return Status::ok();
}
}  // namespace

Result<MessageExt> decode_message(std::string_view record, DecodeOptions opts) {
    MessageExt m;
    COMET_RETURN_IF_ERROR(decode_message_into(record, opts, &m));
    return m;
}

Result<std::vector<MessageExt>> decode_messages(std::string_view body, DecodeOptions opts) {
    std::vector<MessageExt> out;
    COMET_RETURN_IF_ERROR(decode_messages(body, opts, &out));
    return out;
}

namespace {
// The records of a pull body by their TOTALSIZE words, up to the first impossible one (which
// the decode reports).
size_t count_records(std::string_view body) {
    size_t records = 0;
    for (size_t at = 0; at + 4 <= body.size(); ++records) {
        const uint32_t total = get_be32(reinterpret_cast<const uint8_t*>(body.data() + at));
        if (total < 8) {
            break;
        }
        at += total;
    }
    return records;
}
}  // namespace

Status decode_messages(std::string_view body, DecodeOptions opts, std::vector<MessageExt>* out) {
    if (out->empty()) {
        // Sized once; bounded, as a corrupt body can claim many records. A vector decoded into
        // before has grown already.
        out->reserve(std::min<size_t>(count_records(body), 1024));
    }
    // The messages already there are decoded over; a shorter body drops the ones past its
    // records at the end (a drain's pulls are full ones, of the same size).
    size_t used = 0;
    size_t pos = 0;
    while (pos < body.size()) {
        if (used == out->size()) {
            out->emplace_back();
        }
        MessageExt& m = (*out)[used];
        if (Status st = decode_message_into(body.substr(pos), opts, &m); !st.is_ok()) {
            out->resize(used);
            return st;
        }
        pos += static_cast<size_t>(m.store_size);
        ++used;
    }
    out->resize(used);
    return Status::ok();
}

Result<std::vector<BatchEntry>> decode_batch_body(std::string_view body) {
    std::vector<BatchEntry> out;
    COMET_RETURN_IF_ERROR(decode_batch_body(body, &out));
    return out;
}

Status decode_batch_body(std::string_view body, std::vector<BatchEntry>* entries) {
    std::vector<BatchEntry>& out = *entries;
    out.clear();
    ByteReader r(body);
    while (r.remaining() > 0) {
        size_t start = r.position();
        uint32_t total = 0;
        uint32_t magic = 0;
        uint32_t crc = 0;
        uint32_t flag = 0;
        uint32_t body_len = 0;
        uint16_t props_len = 0;
        BatchEntry e;
        if (!r.be32(&total) || !r.be32(&magic) || !r.be32(&crc) || !r.be32(&flag) ||
            !r.be32(&body_len) || !r.bytes(body_len, &e.body) || !r.be16(&props_len) ||
            !r.bytes(props_len, &e.properties)) {
            return Status::error(Errc::kInvalidArgument,
                                 "batch entry {} at byte {} is truncated", out.size(), start);
        }
        if (total != r.position() - start) {
            return Status::error(Errc::kInvalidArgument,
                                 "batch entry {} at byte {}: TOTALSIZE {} but entry has {} bytes",
                                 out.size(), start, total, r.position() - start);
        }
        e.flag = static_cast<int32_t>(flag);
        out.push_back(e);
    }
    return Status::ok();
}

void encode_batch_entry(int32_t flag, std::string_view body, std::string_view properties,
                        std::string* out) {
    ByteWriter w(out);
    auto total = static_cast<uint32_t>(4 + 4 + 4 + 4 + 4 + body.size() + 2 + properties.size());
    w.be32(total);
    w.be32(0);  // MAGICCODE: clients write 0
    w.be32(0);  // BODYCRC: clients write 0
    w.be32(static_cast<uint32_t>(flag));
    w.be32(static_cast<uint32_t>(body.size()));
    w.bytes(body);
    w.be16(static_cast<uint16_t>(properties.size()));
    w.bytes(properties);
}

}  // namespace comet::protocol
