#pragma once
// Wire form of raft::Message for drivers that carry it over a byte transport (DLedger mode puts
// one encoded message in the body of a Comet remoting request). Pure: no I/O.
//
// Layout (big-endian), version 1:
//   u8 version | u8 type | be32 from | be32 to | be64 term | be64 index | be64 log_term |
//   be64 commit | u8 flags (1 reject, 2 transfer, 4 regressed) | be64 reject_hint | be64
//   conflict_term | be64 tag (the driver's: DLedger sends its log's base offset) | be32 n | n x
//   (be64 term | be64 index | u8 entry type | be32 size | size bytes) InstallSnapshot /
//   InstallSnapshotResponse only, then: be64 snapshot_offset | be64 snapshot_size | u8
//   snapshot_done | be32 size | size bytes of snapshot data
// (every other type is encoded byte for byte as before snapshots existed).
// decode() copies nothing: entry payloads are views into the buffer it was given, kept alive
// by `owner`.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "raft/types.h"

namespace comet::raft {

// Appends the encoded message (with the driver's tag) to *out.
void encode_message(const Message& m, int64_t tag, std::string* out);
// The same bytes without copying entry payloads or snapshot data: the encoding is *head
// followed by every piece of *tail in order. *head gets everything up to the first payload;
// pieces are the payloads (sharing their owners) and views of one buffer holding the bytes
// between them. For transports that write a frame from several buffers (writev).
void encode_message_parts(const Message& m, int64_t tag, std::string* head,
                          std::vector<SharedBytes>* tail);
// Errors (kCorruption): truncated input, unknown version/type, trailing bytes.
Result<Message> decode_message(std::shared_ptr<const std::string> owner, int64_t* tag);

}  // namespace comet::raft
