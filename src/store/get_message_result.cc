#include "store/get_message_result.h"

#include <algorithm>

namespace comet::store {

std::string_view get_message_status_name(GetMessageStatus s) {
    switch (s) {
        case GetMessageStatus::kFound:
            return "FOUND";
        case GetMessageStatus::kNoMatchedMessage:
            return "NO_MATCHED_MESSAGE";
        case GetMessageStatus::kMessageWasRemoving:
            return "MESSAGE_WAS_REMOVING";
        case GetMessageStatus::kOffsetFoundNull:
            return "OFFSET_FOUND_NULL";
        case GetMessageStatus::kOffsetOverflowBadly:
            return "OFFSET_OVERFLOW_BADLY";
        case GetMessageStatus::kOffsetOverflowOne:
            return "OFFSET_OVERFLOW_ONE";
        case GetMessageStatus::kOffsetTooSmall:
            return "OFFSET_TOO_SMALL";
        case GetMessageStatus::kNoMatchedLogicQueue:
            return "NO_MATCHED_LOGIC_QUEUE";
        case GetMessageStatus::kNoMessageInQueue:
            return "NO_MESSAGE_IN_QUEUE";
    }
    return "UNKNOWN";
}

bool TagsCodeFilter::is_matched_by_consume_queue(std::optional<int64_t> tags_code) const {
    if (codes_.empty() || !tags_code.has_value()) {
        return true;  // "*", or a unit whose code is not a tag hash: let the client decide
    }
    return std::find(codes_.begin(), codes_.end(), *tags_code) != codes_.end();
}

}  // namespace comet::store
