#pragma once
// Stored-message codec (reference §5.1): the CommitLog record that is also each element of a
// pull-response body and the VIEW_MESSAGE_BY_ID body. Mirrors Java MessageDecoder (decode,
// decodes, decodeMessages) and the store's MessageExtEncoder (encode). Pure: no I/O.
//
// Record (big-endian), v1 magic with IPv4 hosts; IPv6 hosts widen BORNHOST / STOREHOST to 20:
//   0 TOTALSIZE i32 | 4 MAGICCODE i32 | 8 BODYCRC i32 | 12 QUEUEID i32 | 16 FLAG i32
//   20 QUEUEOFFSET i64 | 28 PHYSICALOFFSET i64 | 36 SYSFLAG i32 | 40 BORNTIMESTAMP i64
//   48 BORNHOST ip+port | STORETIMESTAMP i64 | STOREHOST ip+port | RECONSUMETIMES i32
//   PREPAREDTRANSACTIONOFFSET i64 | BODYLEN i32 + body | TOPICLEN (i8 v1 / i16 v2) + topic
//   PROPERTIESLEN i16 + properties
// See docs/formats/stored-message.md.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "protocol/message_ext.h"

namespace comet::protocol {

inline constexpr int32_t kMessageMagicCodeV1 = static_cast<int32_t>(0xDAA320A7);  // -626843481
inline constexpr int32_t kMessageMagicCodeV2 = static_cast<int32_t>(0xDAA320AB);  // -626843477
inline constexpr int32_t kBlankMagicCode = static_cast<int32_t>(0xCBD43194);      // -875286124
inline constexpr int32_t kMaxPropertiesLength = 32767;  // Short.MAX_VALUE

// Fixed field positions (independent of host widths).
inline constexpr int32_t kMsgTotalSizePos = 0;
inline constexpr int32_t kMsgMagicPos = 4;
inline constexpr int32_t kMsgBodyCrcPos = 8;
inline constexpr int32_t kMsgQueueIdPos = 12;
inline constexpr int32_t kMsgFlagPos = 16;
inline constexpr int32_t kMsgQueueOffsetPos = 20;
inline constexpr int32_t kMsgPhysicalOffsetPos = 28;
inline constexpr int32_t kMsgSysFlagPos = 36;
inline constexpr int32_t kMsgBornTimestampPos = 40;
inline constexpr int32_t kMsgBornHostPos = 48;

// Position of STORETIMESTAMP (after the born host).
inline constexpr int32_t store_timestamp_position(int32_t sys_flag) {
    return kMsgBornHostPos + ((sys_flag & sysflag::kBornHostV6) != 0 ? 20 : 8);
}

// Chooses magic v2 when the topic is longer than 127 bytes (autoMessageVersionOnTopicLen).
inline constexpr int32_t magic_for_topic(size_t topic_len) {
    return topic_len > 127 ? kMessageMagicCodeV2 : kMessageMagicCodeV1;
}

// TOTALSIZE of a record with these lengths.
int64_t stored_message_length(int32_t sys_flag, int64_t body_len, int64_t topic_len,
                              int64_t properties_len, int32_t magic);

// Java UtilAll.crc32: CRC32 (zlib) & 0x7FFFFFFF.
int32_t body_crc32(std::string_view body);

// Appends the record of `msg` to *out. The properties string is msg.properties_string();
// sysflag host bits are set from born_host.v6 / store_host.v6; BODYCRC is computed;
// TOTALSIZE, QUEUEOFFSET, PHYSICALOFFSET, STORETIMESTAMP are written as in msg (the CommitLog
// patches them in place at append). magic 0 chooses by topic length.
// Errors: kInvalidArgument for properties > 32767 bytes, topic > 32767 bytes (or > 127 with
// magic v1), record > INT32_MAX.
Status encode_message(const MessageExt& msg, std::string* out, int32_t magic = 0);

struct DecodeOptions {
    bool read_body = true;
    bool check_crc = false;  // verify BODYCRC (recovery with checkCRCOnRecover)
};

// Decodes one record that starts at record[0]; record may extend past it (the TOTALSIZE
// field decides). Fills msg_id from store host + physical offset. Errors (kCorruption): bad
// magic, TOTALSIZE beyond the buffer, inconsistent lengths, CRC mismatch.
Result<MessageExt> decode_message(std::string_view record, DecodeOptions opts = {});
// Decodes every record of a pull body (§5.6) in order.
Result<std::vector<MessageExt>> decode_messages(std::string_view body, DecodeOptions opts = {});
// The same into *out, whose elements are reused: their strings and properties keep their
// buffers, so a consumer decoding pull after pull into one vector allocates nothing per
// message once it has grown (issue 16). On success *out holds exactly the body's messages; on
// an error, the ones before the bad record.
Status decode_messages(std::string_view body, DecodeOptions opts, std::vector<MessageExt>* out);

// One message of a SEND_BATCH_MESSAGE body (§5.7).
struct BatchEntry {
    int32_t flag = 0;
    std::string_view body;
    std::string_view properties;  // raw §5.3 string
};
// Splits a batch body. Errors (kInvalidArgument): truncated or inconsistent entry.
Result<std::vector<BatchEntry>> decode_batch_body(std::string_view body);
// The same into `out` (cleared first; its capacity is kept, for callers that reuse it).
Status decode_batch_body(std::string_view body, std::vector<BatchEntry>* out);
// Builds a batch body (Java MessageDecoder.encodeMessages); for clients and tests.
void encode_batch_entry(int32_t flag, std::string_view body, std::string_view properties,
                        std::string* out);

}  // namespace comet::protocol
