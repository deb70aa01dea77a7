#pragma once
// Outcomes of a CommitLog put, one-to-one with RocketMQ's PutMessageStatus / AppendMessageStatus,
// and the offset types the store hands out.

#include <cstdint>
#include <cstring>
#include <iosfwd>
#include <string>
#include <string_view>

#include "base/inline_function.h"
#include "base/strong_id.h"

namespace comet::store {

using PhysicalOffset = StrongId<int64_t, struct PhysicalOffsetTag>;  // byte position in CommitLog
using QueueOffset = StrongId<int64_t, struct QueueOffsetTag>;        // slot index in a ConsumeQueue

// Mirrors org.apache.rocketmq.store.PutMessageStatus (5.x), same order and names.
enum class PutMessageStatus : int32_t {
    kPutOk,
    kFlushDiskTimeout,
    kFlushSlaveTimeout,
    kSlaveNotAvailable,
    kServiceNotAvailable,  // store read-only, shut down, disk full, slave role
    kCreateMappedFileFailed,
    kMessageIllegal,  // body or record too large, bad topic, malformed batch
    kPropertiesSizeExceeded,
    kOsPageCacheBusy,
    kUnknownError,
    kPutToRemoteBrokerFailed,
    kLmqConsumeQueueNumExceeded,
    kWheelTimerFlowControl,
    kWheelTimerMsgIllegal,
    kWheelTimerNotEnable,
    kInSyncReplicasNotEnough,
};

std::string_view put_message_status_name(PutMessageStatus s);

// True for the statuses after which the message is stored (RocketMQ answers with the offsets).
inline bool is_stored(PutMessageStatus s) {
    return s == PutMessageStatus::kPutOk || s == PutMessageStatus::kFlushDiskTimeout ||
           s == PutMessageStatus::kFlushSlaveTimeout || s == PutMessageStatus::kSlaveNotAvailable;
}

// The offset message id(s) of a put (§5.4, §5.7): one id, or a comma-joined list for a batch.
// One id (32 hex characters for an IPv4 store host, 56 for IPv6) is held inline, so a single
// put's result carries it with no allocation (issue 16); a longer list is held on the heap.
// Reads as a std::string_view.
class OffsetMsgIds {
public:
    OffsetMsgIds() = default;
    OffsetMsgIds(std::string_view ids) { append(ids); }  // NOLINT(google-explicit-constructor)
    OffsetMsgIds& operator=(std::string_view ids) {
        clear();
        append(ids);
        return *this;
    }

    void clear() {
        inline_size_ = 0;
        heap_.clear();
        on_heap_ = false;
    }
    void append(std::string_view s) {
        if (!on_heap_ && inline_size_ + s.size() <= kInlineChars) {
            std::memcpy(inline_ + inline_size_, s.data(), s.size());
            inline_size_ += static_cast<uint8_t>(s.size());
            return;
        }
        if (!on_heap_) {
            heap_.assign(inline_, inline_size_);
            on_heap_ = true;
        }
        heap_.append(s);
    }
    // Room for `n` characters in all (beyond the inline room: on the heap at once).
    void reserve(size_t n) {
        if (n > kInlineChars) {
            if (!on_heap_) {
                heap_.assign(inline_, inline_size_);
                on_heap_ = true;
            }
            heap_.reserve(n);
        }
    }

    std::string_view view() const {
        return on_heap_ ? std::string_view(heap_) : std::string_view(inline_, inline_size_);
    }
    operator std::string_view() const { return view(); }  // NOLINT(google-explicit-constructor)
    std::string str() const { return std::string(view()); }
    size_t size() const { return view().size(); }
    bool empty() const { return size() == 0; }
    const char* begin() const { return view().data(); }
    const char* end() const { return view().data() + view().size(); }

    friend bool operator==(const OffsetMsgIds& a, std::string_view b) { return a.view() == b; }
    friend bool operator==(const OffsetMsgIds& a, const OffsetMsgIds& b) {
        return a.view() == b.view();
    }
    friend std::ostream& operator<<(std::ostream& os, const OffsetMsgIds& ids);

    static constexpr size_t kInlineChars = 56;

private:
    char inline_[kInlineChars];
    uint8_t inline_size_ = 0;
    bool on_heap_ = false;
    std::string heap_;
};

// Mirrors org.apache.rocketmq.store.AppendMessageStatus.
enum class AppendMessageStatus : int32_t {
    kPutOk,
    kEndOfFile,
    kMessageSizeExceeded,
    kPropertiesSizeExceeded,
    kUnknownError,
};

std::string_view append_message_status_name(AppendMessageStatus s);

// What CommitLog::append wrote (Java AppendMessageResult). For a batch: wrote_offset and
// logics_offset of the first record, msg_num records, wrote_bytes in total.
struct AppendMessageResult {
    AppendMessageStatus status = AppendMessageStatus::kUnknownError;
    PhysicalOffset wrote_offset{0};
    int32_t wrote_bytes = 0;
    OffsetMsgIds msg_id;  // offset message id(s); comma-joined for a batch (§5.4, §5.7)
    int64_t store_timestamp = 0;
    QueueOffset logics_offset{0};
    int32_t msg_num = 1;
    // End of the last record written (wrote_offset + wrote_bytes, excluding any filler).
    PhysicalOffset end_offset() const { return wrote_offset + wrote_bytes; }
};

// Java PutMessageResult: the final status after flush (and, later, replication) waits.
struct PutMessageResult {
    PutMessageStatus status = PutMessageStatus::kUnknownError;
    AppendMessageResult append;
    std::string remark;  // human-readable reason when not OK
    bool ok() const { return status == PutMessageStatus::kPutOk; }
};

// Completion of a put (MessageStore, the broker's store port): runs once with the final result.
// Callables up to the capacity are held inline, so the send path's completion chain allocates
// nothing (issue 16).
using PutCompletion = InlineFunction<void(PutMessageResult&&), 448>;

}  // namespace comet::store
