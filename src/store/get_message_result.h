#pragma once
// The get path's result types: GetMessageStatus (Java org.apache.rocketmq.store.GetMessageStatus,
// same names), GetMessageResult (Java GetMessageResult) and the MessageFilter interface (Java
// org.apache.rocketmq.store.MessageFilter), plus QueryMessageResult for lookups by key.
//
// GetMessageResult holds MappedViews: each message's bytes are read straight from the
// CommitLog's mapping (no copy), and holding the result keeps those segments mapped even if
// retention deletes them meanwhile. Value types; one owner (the pull processor), no locking.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/mapped_file.h"
#include "store/put_message_status.h"

namespace comet::store {

enum class GetMessageStatus : int32_t {
    kFound,
    kNoMatchedMessage,     // every unit examined was filtered out
    kMessageWasRemoving,   // CommitLog bytes under the units were already deleted
    kOffsetFoundNull,      // the ConsumeQueue segment holding the offset is missing
    kOffsetOverflowBadly,  // offset > maxOffset
    kOffsetOverflowOne,    // offset == maxOffset (nothing new yet)
    kOffsetTooSmall,       // offset < minOffset
    kNoMatchedLogicQueue,  // no ConsumeQueue for topic/queue
    kNoMessageInQueue,     // queue exists but maxOffset == 0
};

std::string_view get_message_status_name(GetMessageStatus s);

// Decides which messages a pull returns. is_matched_by_consume_queue is asked first with the
// unit's tagsCode (nullopt when the code is not a tag hash, e.g. a delivery time); only
// matching units are read, then is_matched_by_commit_log may look at the whole record.
// Called on the pulling thread; implementations must be thread-compatible.
class MessageFilter {
public:
    virtual ~MessageFilter() = default;
    virtual bool is_matched_by_consume_queue(std::optional<int64_t> tags_code) const = 0;
    // `record` is the stored message (reference §5.1).
    virtual bool is_matched_by_commit_log(std::string_view record) const = 0;
};

// Tag filter by hash code (ExpressionMessageFilter with type TAG): empty set = match all ("*").
class TagsCodeFilter final : public MessageFilter {
public:
    TagsCodeFilter() = default;
    explicit TagsCodeFilter(std::vector<int64_t> codes) : codes_(std::move(codes)) {}
    bool is_matched_by_consume_queue(std::optional<int64_t> tags_code) const override;
    bool is_matched_by_commit_log(std::string_view) const override { return true; }

private:
    std::vector<int64_t> codes_;
};

struct GetMessageResult {
    GetMessageStatus status = GetMessageStatus::kNoMessageInQueue;
    QueueOffset next_begin_offset{0};
    QueueOffset min_offset{0};
    QueueOffset max_offset{0};
    std::vector<MappedView> messages;        // one complete record each, in queue order
    std::vector<QueueOffset> message_queue_offsets;  // logical offset of each record
    int64_t buffer_total_size = 0;
    bool suggest_pulling_from_slave = false;  // the data read is far behind the write end

    int32_t message_count() const { return static_cast<int32_t>(messages.size()); }
    void add_message(MappedView view, QueueOffset offset) {
        buffer_total_size += static_cast<int64_t>(view.size);
        messages.push_back(std::move(view));
        message_queue_offsets.push_back(offset);
    }
};

// Result of a query by key (QUERY_MESSAGE): complete records, newest first.
struct QueryMessageResult {
    std::vector<MappedView> messages;
    int64_t index_last_update_timestamp = 0;
    PhysicalOffset index_last_update_phy_offset{0};
    int64_t buffer_total_size = 0;
};

}  // namespace comet::store
