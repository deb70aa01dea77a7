#pragma once
// RemotingCommand: one RocketMQ remoting frame (request or response), and its frame codec.
// Pure: no sockets, no threads. Layout (all big-endian), see docs/formats/remoting.md:
//   int32 length (= 4 + H + bodyLen, excludes itself) | uint8 serType | uint24 H | header[H] | body
// serType 0 = JSON header, 1 = ROCKETMQ binary header (21 fixed bytes + remark + ext block).

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "protocol/ext_fields.h"

namespace comet::protocol {

enum class SerializeType : uint8_t { kJson = 0, kRocketMq = 1 };

struct SendMessageRequestHeaderV2;  // send_headers.h
struct PullMessageRequestHeader;    // pull_headers.h

// LanguageCode byte values as RocketMQ's LanguageCode enum ordinals.
enum class LanguageCode : uint8_t {
    kJava = 0, kCpp = 1, kDotnet = 2, kPython = 3, kDelphi = 4, kErlang = 5, kRuby = 6,
    kOther = 7, kHttp = 8, kGo = 9, kPhp = 10, kOms = 11, kRust = 12, kNodeJs = 13,
};
std::string_view language_name(LanguageCode c);           // "JAVA", "CPP", ...
LanguageCode language_from_name(std::string_view name);  // unknown -> kOther

inline constexpr int32_t kFlagResponse = 1;  // RPC_TYPE bit
inline constexpr int32_t kFlagOneway = 2;    // RPC_ONEWAY bit
inline constexpr size_t kDefaultMaxFrameBytes = 16 * 1024 * 1024;
// Version Comet announces in its responses (MQVersion V5_3_3 ordinal).
inline constexpr int32_t kCometVersion = 479;

struct RemotingCommand {
    static constexpr LanguageCode kDefaultLanguage = LanguageCode::kCpp;

    int32_t code = 0;
    LanguageCode language = kDefaultLanguage;
    int32_t version = kCometVersion;
    int32_t opaque = 0;
    int32_t flag = 0;
    std::optional<std::string> remark;
    ExtFields ext_fields;  // sorted by key: JSON output is sorted like fastjson
    std::string body;
    // The body of a received SEND_MESSAGE / SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE request, left
    // in the connection's read buffer instead of copied into `body` (issue 16: the put copies
    // it once, into the CommitLog); `body` is empty while it is set. Valid only during the
    // ConnectionHandler::on_request call that delivered the command (on the I/O thread that
    // read it): whatever keeps the command longer (an executor's queue) calls own_body()
    // first. Readers of a request's body that may be borrowed use body_view().
    std::string_view borrowed_body;
    // Serialization the header arrived in (requests) or will be written in (responses).
    SerializeType serialize_type = SerializeType::kJson;
    // Header fast path (decision 020): a received SEND_MESSAGE / SEND_MESSAGE_V2 /
    // SEND_BATCH_MESSAGE (in the V2 shape) or PULL_MESSAGE request whose typed header decoded
    // carries it here and no ext_fields. Read
    // through decode_send_message_header / decode_pull_message_header, which fall back to
    // ext_fields when it is unset. Never set on commands built locally. take_send_message_header
    // moves the send header's strings out when this command is its only owner.
    std::shared_ptr<SendMessageRequestHeaderV2> typed_send_v2;
    std::shared_ptr<const PullMessageRequestHeader> typed_pull;

    bool is_response() const { return (flag & kFlagResponse) != 0; }
    // The body: `body`, or the borrowed one.
    std::string_view body_view() const {
        return borrowed_body.empty() ? std::string_view(body) : borrowed_body;
    }
    // Copies a borrowed body into `body` (the command then outlives the read buffer).
    void own_body() {
        if (!borrowed_body.empty()) {
            body.assign(borrowed_body);
            borrowed_body = {};
        }
    }
    bool is_oneway() const { return (flag & kFlagOneway) != 0; }

    static RemotingCommand request(int32_t code);
    // A response to `req`: same opaque, response flag set, JSON serialization (as Java servers
    // answer; see reference §1.1), the given code and remark.
    static RemotingCommand response_to(const RemotingCommand& req, int32_t code,
                                       std::optional<std::string> remark = std::nullopt);
    // Makes this command the bare response response_to() builds (code, opaque, remark, JSON,
    // default language and version, no body or typed header) while keeping its buffers for
    // reuse; ext_fields is left as it is, for the caller to assign (ExtFields::assign_sorted).
    void reset_as_response(int32_t request_opaque, int32_t response_code,
                           std::optional<std::string> response_remark);

    // extFields helpers. The pointer ext() returns is invalidated by any later insertion or
    // erasure in ext_fields (set_ext included): copy what must outlive a change.
    const std::string* ext(std::string_view key) const;
    void set_ext(std::string key, std::string value) { ext_fields[std::move(key)] = std::move(value); }
};

// Encoded header bytes (JSON or ROCKETMQ) of `cmd`, without the frame prefix. ROCKETMQ is used
// only when cmd.serialize_type asks for it and code/version/keys fit its int16 fields; otherwise
// JSON. Requires (all encoders): the encoded header is < 16 MiB (COMET_CHECK).
std::string encode_header(const RemotingCommand& cmd);

// The first 8 bytes + header of a frame whose body is `body_size` bytes long, so a caller can
// send the body from elsewhere (scatter/gather from mapped memory).
std::string encode_frame_prefix(const RemotingCommand& cmd, size_t body_size);

// Whole frame: prefix + cmd.body.
std::string encode_frame(const RemotingCommand& cmd);
// The same bytes appended to *out (a write buffer that several frames share).
void append_frame(const RemotingCommand& cmd, std::string* out);

// Decodes the payload of one frame: the bytes after the 4-byte length word (header-length
// word + header + body). Errors (kInvalidArgument / kCorruption) name what was wrong.
Result<RemotingCommand> decode_frame_payload(std::string_view payload,
                                             size_t max_frame_bytes = kDefaultMaxFrameBytes);

// Incremental frame splitter for a byte stream.
struct FrameSplit {
    enum class State { kNeedMore, kFrame, kError } state = State::kNeedMore;
    size_t frame_bytes = 0;  // kFrame: total bytes of the frame including the length word
                             // (kNeedMore: the same once the length word is known, else 0)
    Status error;            // kError: why the stream is unusable (length over limit, negative)
};
// Looks at the start of `buffer`: whether a whole frame is there.
FrameSplit split_frame(std::string_view buffer, size_t max_frame_bytes = kDefaultMaxFrameBytes);

}  // namespace comet::protocol
