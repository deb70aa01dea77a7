#pragma once
// The put path's encoder of RocketMQ's stored-message format (docs/formats/stored-message.md):
// the same bytes as protocol::encode_message, written with direct big-endian stores into one
// pre-sized buffer, the properties string passed in (built once by the caller) and BODYCRC by
// fast_crc32. Pure function, any thread.

#include <string>
#include <string_view>

#include "base/status.h"
#include "protocol/message_ext.h"

namespace comet::store {

// Appends the record of `msg` with properties string `props` and STOREHOSTADDRESS `store_host`
// (msg.store_host is ignored) to *out; magic 0 chooses v1/v2 by topic length. QUEUEOFFSET,
// PHYSICALOFFSET and STORETIMESTAMP are written as in msg (the CommitLog patches them). Errors
// (kInvalidArgument), nothing appended: properties > 32767 bytes, topic > 32767 bytes (> 127 with
// magic v1), record > INT32_MAX, bad magic.
Status encode_stored_message(const protocol::MessageExt& msg, std::string_view props,
                             const protocol::HostAddress& store_host, std::string* out,
                             int32_t magic = 0);
// Same, with the body `body` (msg.body is not read): a body that lives elsewhere (a request's
// frame) is copied only into *out.
Status encode_stored_message(const protocol::MessageExt& msg, std::string_view body,
                             std::string_view props, const protocol::HostAddress& store_host,
                             std::string* out, int32_t magic = 0);

// The same encoder in two steps, for a caller that picks the destination after knowing the
// size (the CommitLog writes straight into its write buffer): layout_stored_message validates
// and sizes the record (same errors as above); write_stored_message writes exactly
// layout.total bytes at p with the given BODYCRC. Both take the body as `body` (msg.body is not
// read).
struct StoredRecordLayout {
    int32_t magic = 0;
    int32_t sys_flag = 0;  // msg.sys_flag with the IPv6 host bits set from the addresses
    int64_t total = 0;
};
Result<StoredRecordLayout> layout_stored_message(const protocol::MessageExt& msg,
                                                 std::string_view body, std::string_view props,
                                                 const protocol::HostAddress& store_host,
                                                 int32_t magic = 0);
void write_stored_message(uint8_t* p, const StoredRecordLayout& layout,
                          const protocol::MessageExt& msg, std::string_view body,
                          std::string_view props, const protocol::HostAddress& store_host,
                          uint32_t body_crc);

}  // namespace comet::store
