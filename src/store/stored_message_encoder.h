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
// PHYSICALOFFSET and STORETIMESTAMP are written as in msg (the CommitLog patches them). Errors (kInvalidArgument), nothing appended: properties
// > 32767 bytes, topic > 32767 bytes (> 127 with magic v1), record > INT32_MAX, bad magic.
Status encode_stored_message(const protocol::MessageExt& msg, std::string_view props,
                             const protocol::HostAddress& store_host, std::string* out,
                             int32_t magic = 0);

}  // namespace comet::store
