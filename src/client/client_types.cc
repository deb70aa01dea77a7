#include "client/client_types.h"

#include "protocol/response_code.h"

namespace comet::client {

Message::Message(std::string t, std::string b, std::string tags, std::string keys)
    : topic(std::move(t)), body(std::move(b)) {
    if (!tags.empty()) {
        set_tags(tags);
    }
    if (!keys.empty()) {
        set_keys(keys);
    }
}

void Message::set_delay_level(int level) {
    properties.set(protocol::property::kDelayTimeLevel, std::to_string(level));
}

std::string Message::tags() const {
    const std::string* v = properties.get(protocol::property::kTags);
    return v != nullptr ? *v : std::string();
}

std::string Message::keys() const {
    const std::string* v = properties.get(protocol::property::kKeys);
    return v != nullptr ? *v : std::string();
}

std::string Message::uniq_id() const {
    const std::string* v = properties.get(protocol::property::kUniqClientMessageIdKeyIdx);
    return v != nullptr ? *v : std::string();
}

std::string_view send_status_name(SendStatus s) {
    switch (s) {
        case SendStatus::kSendOk: return "SEND_OK";
        case SendStatus::kFlushDiskTimeout: return "FLUSH_DISK_TIMEOUT";
        case SendStatus::kFlushSlaveTimeout: return "FLUSH_SLAVE_TIMEOUT";
        case SendStatus::kSlaveNotAvailable: return "SLAVE_NOT_AVAILABLE";
    }
    return "UNKNOWN";
}

std::optional<SendStatus> send_status_of_code(int32_t code) {
    namespace RC = protocol::ResponseCode;
    switch (code) {
        case RC::kSuccess: return SendStatus::kSendOk;
        case RC::kFlushDiskTimeout: return SendStatus::kFlushDiskTimeout;
        case RC::kFlushSlaveTimeout: return SendStatus::kFlushSlaveTimeout;
        case RC::kSlaveNotAvailable: return SendStatus::kSlaveNotAvailable;
        default: return std::nullopt;
    }
}

std::string_view pull_status_name(PullStatus s) {
    switch (s) {
        case PullStatus::kFound: return "FOUND";
        case PullStatus::kNoNewMsg: return "NO_NEW_MSG";
        case PullStatus::kNoMatchedMsg: return "NO_MATCHED_MSG";
        case PullStatus::kOffsetIllegal: return "OFFSET_ILLEGAL";
    }
    return "UNKNOWN";
}

std::string_view consume_from_where_name(ConsumeFromWhere w) {
    switch (w) {
        case ConsumeFromWhere::kLastOffset: return "CONSUME_FROM_LAST_OFFSET";
        case ConsumeFromWhere::kFirstOffset: return "CONSUME_FROM_FIRST_OFFSET";
        case ConsumeFromWhere::kTimestamp: return "CONSUME_FROM_TIMESTAMP";
    }
    return "CONSUME_FROM_LAST_OFFSET";
}

std::string retry_topic(const std::string& group) { return kRetryGroupTopicPrefix + group; }

int32_t java_string_hash(std::string_view s) {
    uint32_t h = 0;
    for (unsigned char c : s) {
        h = 31 * h + c;
    }
    return static_cast<int32_t>(h);
}

}  // namespace comet::client
