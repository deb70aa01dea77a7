#pragma once
// Outcomes of a CommitLog put, one-to-one with RocketMQ's PutMessageStatus / AppendMessageStatus,
// and the offset types the store hands out.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/inline_function.h"
#include "base/inline_string.h"
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
using OffsetMsgIds = InlineString<56>;

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
