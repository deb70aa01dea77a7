#include "store/put_message_status.h"

namespace comet::store {

std::string_view put_message_status_name(PutMessageStatus s) {
    switch (s) {
        case PutMessageStatus::kPutOk: return "PUT_OK";
        case PutMessageStatus::kFlushDiskTimeout: return "FLUSH_DISK_TIMEOUT";
        case PutMessageStatus::kFlushSlaveTimeout: return "FLUSH_SLAVE_TIMEOUT";
        case PutMessageStatus::kSlaveNotAvailable: return "SLAVE_NOT_AVAILABLE";
        case PutMessageStatus::kServiceNotAvailable: return "SERVICE_NOT_AVAILABLE";
        case PutMessageStatus::kCreateMappedFileFailed: return "CREATE_MAPPED_FILE_FAILED";
        case PutMessageStatus::kMessageIllegal: return "MESSAGE_ILLEGAL";
        case PutMessageStatus::kPropertiesSizeExceeded: return "PROPERTIES_SIZE_EXCEEDED";
        case PutMessageStatus::kOsPageCacheBusy: return "OS_PAGE_CACHE_BUSY";
        case PutMessageStatus::kUnknownError: return "UNKNOWN_ERROR";
        case PutMessageStatus::kPutToRemoteBrokerFailed: return "PUT_TO_REMOTE_BROKER_FAILED";
        case PutMessageStatus::kLmqConsumeQueueNumExceeded: return "LMQ_CONSUME_QUEUE_NUM_EXCEEDED";
        case PutMessageStatus::kWheelTimerFlowControl: return "WHEEL_TIMER_FLOW_CONTROL";
        case PutMessageStatus::kWheelTimerMsgIllegal: return "WHEEL_TIMER_MSG_ILLEGAL";
        case PutMessageStatus::kWheelTimerNotEnable: return "WHEEL_TIMER_NOT_ENABLE";
        case PutMessageStatus::kInSyncReplicasNotEnough: return "IN_SYNC_REPLICAS_NOT_ENOUGH";
    }
    return "UNKNOWN";
}

std::string_view append_message_status_name(AppendMessageStatus s) {
    switch (s) {
        case AppendMessageStatus::kPutOk: return "PUT_OK";
        case AppendMessageStatus::kEndOfFile: return "END_OF_FILE";
        case AppendMessageStatus::kMessageSizeExceeded: return "MESSAGE_SIZE_EXCEEDED";
        case AppendMessageStatus::kPropertiesSizeExceeded: return "PROPERTIES_SIZE_EXCEEDED";
        case AppendMessageStatus::kUnknownError: return "UNKNOWN_ERROR";
    }
    return "UNKNOWN";
}

}  // namespace comet::store
