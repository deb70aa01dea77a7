#pragma once
// RocketMQ response codes (RemotingSysResponseCode + ResponseCode, reference §2.2) as named
// constants, plus response_code_name(). DLedger's in-body result codes are dledger's business.

#include <cstdint>
#include <string_view>

namespace comet::protocol {

#define COMET_RESPONSE_CODES(X)                                                     \
    X(kSuccess, 0, "SUCCESS")                                                       \
    X(kSystemError, 1, "SYSTEM_ERROR")                                              \
    X(kSystemBusy, 2, "SYSTEM_BUSY")                                                \
    X(kRequestCodeNotSupported, 3, "REQUEST_CODE_NOT_SUPPORTED")                    \
    X(kTransactionFailed, 4, "TRANSACTION_FAILED")                                  \
    X(kFlushDiskTimeout, 10, "FLUSH_DISK_TIMEOUT")                                  \
    X(kSlaveNotAvailable, 11, "SLAVE_NOT_AVAILABLE")                                \
    X(kFlushSlaveTimeout, 12, "FLUSH_SLAVE_TIMEOUT")                                \
    X(kMessageIllegal, 13, "MESSAGE_ILLEGAL")                                       \
    X(kServiceNotAvailable, 14, "SERVICE_NOT_AVAILABLE")                            \
    X(kVersionNotSupported, 15, "VERSION_NOT_SUPPORTED")                            \
    X(kNoPermission, 16, "NO_PERMISSION")                                           \
    X(kTopicNotExist, 17, "TOPIC_NOT_EXIST")                                        \
    X(kTopicExistAlready, 18, "TOPIC_EXIST_ALREADY")                                \
    X(kPullNotFound, 19, "PULL_NOT_FOUND")                                          \
    X(kPullRetryImmediately, 20, "PULL_RETRY_IMMEDIATELY")                          \
    X(kPullOffsetMoved, 21, "PULL_OFFSET_MOVED")                                    \
    X(kQueryNotFound, 22, "QUERY_NOT_FOUND")                                        \
    X(kSubscriptionParseFailed, 23, "SUBSCRIPTION_PARSE_FAILED")                    \
    X(kSubscriptionNotExist, 24, "SUBSCRIPTION_NOT_EXIST")                          \
    X(kSubscriptionNotLatest, 25, "SUBSCRIPTION_NOT_LATEST")                        \
    X(kSubscriptionGroupNotExist, 26, "SUBSCRIPTION_GROUP_NOT_EXIST")               \
    X(kFilterDataNotExist, 27, "FILTER_DATA_NOT_EXIST")                             \
    X(kFilterDataNotLatest, 28, "FILTER_DATA_NOT_LATEST")                           \
    X(kInvalidParameter, 29, "INVALID_PARAMETER")                                   \
    X(kTransactionShouldCommit, 200, "TRANSACTION_SHOULD_COMMIT")                   \
    X(kTransactionShouldRollback, 201, "TRANSACTION_SHOULD_ROLLBACK")               \
    X(kTransactionStateUnknow, 202, "TRANSACTION_STATE_UNKNOW")                     \
    X(kTransactionStateGroupWrong, 203, "TRANSACTION_STATE_GROUP_WRONG")            \
    X(kNoBuyerId, 204, "NO_BUYER_ID")                                               \
    X(kNotInCurrentUnit, 205, "NOT_IN_CURRENT_UNIT")                                \
    X(kConsumerNotOnline, 206, "CONSUMER_NOT_ONLINE")                               \
    X(kConsumeMsgTimeout, 207, "CONSUME_MSG_TIMEOUT")                               \
    X(kNoMessage, 208, "NO_MESSAGE")                                                \
    X(kPollingFull, 209, "POLLING_FULL")                                            \
    X(kPollingTimeout, 210, "POLLING_TIMEOUT")                                      \
    X(kBrokerNotExist, 211, "BROKER_NOT_EXIST")                                     \
    X(kBrokerDispatchNotComplete, 212, "BROKER_DISPATCH_NOT_COMPLETE")              \
    X(kBroadcastConsumption, 213, "BROADCAST_CONSUMPTION")                          \
    X(kFlowControl, 215, "FLOW_CONTROL")                                            \
    X(kNotLeaderForQueue, 501, "NOT_LEADER_FOR_QUEUE")                              \
    X(kIllegalOperation, 604, "ILLEGAL_OPERATION")                                  \
    X(kGoAway, 1500, "GO_AWAY")                                                     \
    X(kControllerFencedMasterEpoch, 2000, "CONTROLLER_FENCED_MASTER_EPOCH")         \
    X(kControllerFencedSyncStateSetEpoch, 2001, "CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH") \
    X(kControllerInvalidMaster, 2002, "CONTROLLER_INVALID_MASTER")                  \
    X(kControllerInvalidReplicas, 2003, "CONTROLLER_INVALID_REPLICAS")              \
    X(kControllerMasterNotAvailable, 2004, "CONTROLLER_MASTER_NOT_AVAILABLE")       \
    X(kControllerInvalidRequest, 2005, "CONTROLLER_INVALID_REQUEST")                \
    X(kControllerBrokerNotAlive, 2006, "CONTROLLER_BROKER_NOT_ALIVE")               \
    X(kControllerNotLeader, 2007, "CONTROLLER_NOT_LEADER")                          \
    X(kControllerBrokerMetadataNotExist, 2008, "CONTROLLER_BROKER_METADATA_NOT_EXIST") \
    X(kControllerInvalidCleanBrokerMetadata, 2009, "CONTROLLER_INVALID_CLEAN_BROKER_METADATA") \
    X(kControllerBrokerNeedToBeRegistered, 2010, "CONTROLLER_BROKER_NEED_TO_BE_REGISTERED") \
    X(kControllerMasterStillExist, 2011, "CONTROLLER_MASTER_STILL_EXIST")           \
    X(kControllerElectMasterFailed, 2012, "CONTROLLER_ELECT_MASTER_FAILED")         \
    X(kControllerAlterSyncStateSetFailed, 2013, "CONTROLLER_ALTER_SYNC_STATE_SET_FAILED") \
    X(kControllerBrokerIdInvalid, 2014, "CONTROLLER_BROKER_ID_INVALID")             \
    X(kControllerJraftInternalError, 2015, "CONTROLLER_JRAFT_INTERNAL_ERROR")       \
    X(kControllerBrokerLiveInfoNotExists, 2016, "CONTROLLER_BROKER_LIVE_INFO_NOT_EXISTS") \
    X(kUserNotExist, 3001, "USER_NOT_EXIST")                                        \
    X(kPolicyNotExist, 3002, "POLICY_NOT_EXIST")

namespace ResponseCode {  // NOLINT(readability-identifier-naming): mirrors Java's ResponseCode
#define COMET_DEFINE_CODE(name, value, text) inline constexpr int32_t name = value;
COMET_RESPONSE_CODES(COMET_DEFINE_CODE)
#undef COMET_DEFINE_CODE
}  // namespace ResponseCode

// "TOPIC_NOT_EXIST"; unknown codes give "UNKNOWN".
std::string_view response_code_name(int32_t code);

}  // namespace comet::protocol
