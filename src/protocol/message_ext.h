#pragma once
// MessageExt: a message as stored in the CommitLog and delivered in pull bodies (Java
// org.apache.rocketmq.common.message.MessageExt), with its ordered properties, sysFlag bits
// (reference §5.2), well-known property keys (§5.3) and host addresses (IPv4 or IPv6).
// Pure value types: no threads, no I/O.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace comet::protocol {

// MessageSysFlag bits.
namespace sysflag {
inline constexpr int32_t kCompressed = 0x1;
inline constexpr int32_t kMultiTags = 0x2;
inline constexpr int32_t kTransactionNotType = 0;
inline constexpr int32_t kTransactionPreparedType = 0x4;
inline constexpr int32_t kTransactionCommitType = 0x8;
inline constexpr int32_t kTransactionRollbackType = 0xC;
inline constexpr int32_t kTransactionMask = 0xC;
inline constexpr int32_t kBornHostV6 = 0x10;
inline constexpr int32_t kStoreHostAddressV6 = 0x20;
inline constexpr int32_t kNeedUnwrap = 0x40;
inline constexpr int32_t kInnerBatch = 0x80;
inline constexpr int32_t kCompressionTypeMask = 0x700;  // 0x100 LZ4, 0x200 ZSTD, 0x300 ZLIB

inline constexpr int32_t transaction_value(int32_t flag) { return flag & kTransactionMask; }
inline constexpr int32_t reset_transaction_value(int32_t flag, int32_t type) {
    return (flag & ~kTransactionMask) | type;
}
}  // namespace sysflag

// MessageConst property keys used by the broker and store.
namespace property {
inline constexpr std::string_view kKeys = "KEYS";
inline constexpr std::string_view kTags = "TAGS";
inline constexpr std::string_view kWaitStoreMsgOk = "WAIT";
inline constexpr std::string_view kDelayTimeLevel = "DELAY";
inline constexpr std::string_view kRetryTopic = "RETRY_TOPIC";
inline constexpr std::string_view kRealTopic = "REAL_TOPIC";
inline constexpr std::string_view kRealQueueId = "REAL_QID";
inline constexpr std::string_view kTransactionPrepared = "TRAN_MSG";
inline constexpr std::string_view kProducerGroup = "PGROUP";
inline constexpr std::string_view kMinOffset = "MIN_OFFSET";
inline constexpr std::string_view kMaxOffset = "MAX_OFFSET";
inline constexpr std::string_view kUniqClientMessageIdKeyIdx = "UNIQ_KEY";
inline constexpr std::string_view kOriginMessageId = "ORIGIN_MESSAGE_ID";
inline constexpr std::string_view kReconsumeTime = "RECONSUME_TIME";
inline constexpr std::string_view kMaxReconsumeTimes = "MAX_RECONSUME_TIMES";
inline constexpr std::string_view kCluster = "CLUSTER";
inline constexpr std::string_view kShardingKey = "__SHARDINGKEY";
inline constexpr std::string_view kInnerNum = "INNER_NUM";
inline constexpr std::string_view kInnerBase = "INNER_BASE";
inline constexpr std::string_view kCrc32 = "__CRC32#";
}  // namespace property

inline constexpr char kNameValueSeparator = 1;
inline constexpr char kPropertySeparator = 2;

// Message properties in insertion order (the order of the stored string is preserved, so a
// decoded record re-encodes byte for byte). Keys are unique; set() replaces in place.
// Capacity is kept: erase() and assign_from_string() leave the dropped entries' strings behind
// as spares that later insertions reuse, so a MessageProperties refilled for every message (the
// broker's per-thread send message, issue 16) stops allocating once its strings have grown.
class MessageProperties {
public:
    using Entry = std::pair<std::string, std::string>;

    MessageProperties() = default;
    MessageProperties(const MessageProperties& other);
    MessageProperties& operator=(const MessageProperties& other);
    MessageProperties(MessageProperties&& other) noexcept;
    MessageProperties& operator=(MessageProperties&& other) noexcept;

    const std::string* get(std::string_view key) const;
    void set(std::string_view key, std::string_view value);
    bool erase(std::string_view key);
    // Removes every entry (their strings stay as spares).
    void clear() { size_ = 0; }
    bool empty() const { return size_ == 0; }
    size_t size() const { return size_; }
    void reserve(size_t n) { entries_.reserve(n); }
    std::span<const Entry> entries() const { return {entries_.data(), size_}; }
    // The properties of the §5.3 string `s`, read as string_to_message_properties() reads it,
    // into this object's strings (replaces what it held).
    void assign_from_string(std::string_view s);
    bool operator==(const MessageProperties& other) const;
    // Exchanges the entries and spares of two objects (no string is moved or freed).
    friend void swap(MessageProperties& a, MessageProperties& b) noexcept {
        a.entries_.swap(b.entries_);
        std::swap(a.size_, b.size_);
    }

private:
    // [0, size_) are the entries; the rest are spares whose strings keep their capacity.
    std::vector<Entry> entries_;
    size_t size_ = 0;
};

// §5.3 writer: key 0x01 value, pairs separated by 0x02, no separator after the last pair (as
// RocketMQ 4.9.x writes them; the captured CommitLog shows it). A key or value containing a
// separator is a caller bug that Java would write as is too.
std::string message_properties_to_string(const MessageProperties& props);
// Same, into *out (cleared first; its capacity is reused).
void message_properties_to_string(const MessageProperties& props, std::string* out);
// §5.3 reader, lenient like Java: segments without a separator, with an empty key or an empty
// value are dropped; later duplicates win.
MessageProperties string_to_message_properties(std::string_view s);

// An IPv4 or IPv6 address and port, as RocketMQ writes BORNHOST / STOREHOST.
struct HostAddress {
    std::array<uint8_t, 16> ip{};  // first 4 bytes used for IPv4
    bool v6 = false;
    int32_t port = 0;

    size_t ip_len() const { return v6 ? 16 : 4; }
    // "a.b.c.d:port" or "[v6]:port".
    std::string to_string() const;
    static HostAddress ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, int32_t port);
    bool operator==(const HostAddress&) const = default;
};
// Parses "1.2.3.4:10911" or "[::1]:10911"; errors are kInvalidArgument.
Result<HostAddress> parse_host_address(std::string_view text);

struct MessageExt {
    // Message (producer-side) fields.
    std::string topic;
    int32_t flag = 0;
    MessageProperties properties;
    // Exact properties bytes as stored, kept by decode so a record re-encodes byte for byte
    // (RocketMQ stores batch properties with duplicate keys, e.g. WAIT twice). When set, encode
    // writes it instead of serializing `properties`; set_property()/erase_property() reset it.
    std::optional<std::string> stored_properties;
    std::string body;  // as stored (possibly compressed; sysflag says)

    // Broker-side fields.
    int32_t store_size = 0;  // TOTALSIZE
    int32_t body_crc = 0;
    int32_t queue_id = 0;
    int64_t queue_offset = 0;
    int64_t commit_log_offset = 0;
    int32_t sys_flag = 0;
    int64_t born_timestamp = 0;
    HostAddress born_host;
    int64_t store_timestamp = 0;
    HostAddress store_host;
    int32_t reconsume_times = 0;
    int64_t prepared_transaction_offset = 0;
    std::string msg_id;  // offset message id, filled by decode

    // Every field back to its default, the strings and properties keeping their capacity (a
    // message refilled for every send: issue 16).
    void clear();
    // Member by member: each message keeps a set of buffers (a consumer moving messages in and
    // out of a batch and decoding over them again allocates nothing; std::swap's moves would
    // free the properties' spares).
    friend void swap(MessageExt& a, MessageExt& b) noexcept;

    const std::string* property(std::string_view key) const { return properties.get(key); }
    void set_property(std::string_view key, std::string_view value);
    bool erase_property(std::string_view key);
    // The string encode writes: stored_properties, or properties serialized.
    std::string properties_string() const;
    std::string tags() const;  // TAGS property or ""
    std::string keys() const;  // KEYS property or ""
    // UNIQ_KEY if present, else the offset msg id (Java MessageClientExt#getMsgId).
    std::string unique_id() const;
    // WAIT property absent, or "true" in any case (Java Boolean.parseBoolean).
    bool wait_store_msg_ok() const;
};

}  // namespace comet::protocol
