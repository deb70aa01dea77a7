#pragma once
// Header fast path (issue 16, decision 020): decodes a frame and, for the two hot request codes
// (requests only: the response flag is clear),
// reads the request header straight into its typed struct without a DOM or an extFields map:
//   SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320) -> SendMessageRequestHeaderV2
//   SEND_MESSAGE (10), read with its long names     -> SendMessageRequestHeaderV2 (from_v1)
//   PULL_MESSAGE (11)                               -> PullMessageRequestHeader
// Both serializations (JSON, ROCKETMQ). Pure, stateless, any thread.
//
// Contract: the result equals decode_frame_payload + T::from_ext on the same bytes (same frame
// errors, same typed header or the same kInvalidArgument error), except that cmd.ext_fields is
// left empty for the codes above. ROCKETMQ headers share the general scanner (header_scan.h).
// JSON headers are scanned once for the shape Java/Go/C++ clients write (flat object, scalar
// values, integer numbers, escapes other than surrogate pairs); anything else -- including every
// malformed header -- is handed to the general RapidJSON decoder, so errors cannot differ.

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "protocol/pull_headers.h"
#include "protocol/remoting_command.h"
#include "protocol/send_headers.h"

namespace comet::protocol {

struct FastFrame {
    RemotingCommand cmd;  // ext_fields empty when send_v2 or pull is set
    std::optional<Result<SendMessageRequestHeaderV2>> send_v2;  // codes 10, 310 and 320
    std::optional<Result<PullMessageRequestHeader>> pull;       // code 11
    bool json_fallback = false;  // the JSON scanner handed this header to the general decoder
};

// As decode_frame_payload (same errors), plus the typed header for the codes above.
// borrow_send_body: the body of a SEND_MESSAGE, SEND_MESSAGE_V2 or SEND_BATCH_MESSAGE request
// is left in `payload` (cmd.borrowed_body, valid as long as `payload`) instead of copied into
// cmd.body (issue 16).
Result<FastFrame> decode_frame_payload_fast(std::string_view payload,
                                            size_t max_frame_bytes = kDefaultMaxFrameBytes,
                                            bool borrow_send_body = false);

// Differential check for tests and the fuzzer: decodes `payload` both ways and describes the
// first difference (frame status, command fields, typed header or its error), or nullopt.
std::optional<std::string> fast_header_mismatch(std::string_view payload,
                                                size_t max_frame_bytes = kDefaultMaxFrameBytes);

}  // namespace comet::protocol
