#pragma once
// RocketMQ request codes (RequestCode.java, reference §2.1; DLedger codes §8.1) as named constants,
// plus request_code_name() for logs and error remarks. Pure constants, no state.

#include <cstdint>
#include <string_view>

namespace comet::protocol {

// X(constant, value, JAVA_NAME). One list drives both the constants and the name lookup.
#define COMET_REQUEST_CODES(X)                                              \
    X(kSendMessage, 10, "SEND_MESSAGE")                                     \
    X(kPullMessage, 11, "PULL_MESSAGE")                                     \
    X(kQueryMessage, 12, "QUERY_MESSAGE")                                   \
    X(kQueryBrokerOffset, 13, "QUERY_BROKER_OFFSET")                        \
    X(kQueryConsumerOffset, 14, "QUERY_CONSUMER_OFFSET")                    \
    X(kUpdateConsumerOffset, 15, "UPDATE_CONSUMER_OFFSET")                  \
    X(kUpdateAndCreateTopic, 17, "UPDATE_AND_CREATE_TOPIC")                 \
    X(kUpdateAndCreateTopicList, 18, "UPDATE_AND_CREATE_TOPIC_LIST")        \
    X(kGetAllTopicConfig, 21, "GET_ALL_TOPIC_CONFIG")                       \
    X(kGetTopicConfigList, 22, "GET_TOPIC_CONFIG_LIST")                     \
    X(kGetTopicNameList, 23, "GET_TOPIC_NAME_LIST")                         \
    X(kUpdateBrokerConfig, 25, "UPDATE_BROKER_CONFIG")                      \
    X(kGetBrokerConfig, 26, "GET_BROKER_CONFIG")                            \
    X(kTriggerDeleteFiles, 27, "TRIGGER_DELETE_FILES")                      \
    X(kGetBrokerRuntimeInfo, 28, "GET_BROKER_RUNTIME_INFO")                 \
    X(kSearchOffsetByTimestamp, 29, "SEARCH_OFFSET_BY_TIMESTAMP")           \
    X(kGetMaxOffset, 30, "GET_MAX_OFFSET")                                  \
    X(kGetMinOffset, 31, "GET_MIN_OFFSET")                                  \
    X(kGetEarliestMsgStoretime, 32, "GET_EARLIEST_MSG_STORETIME")           \
    X(kViewMessageById, 33, "VIEW_MESSAGE_BY_ID")                           \
    X(kHeartBeat, 34, "HEART_BEAT")                                         \
    X(kUnregisterClient, 35, "UNREGISTER_CLIENT")                           \
    X(kConsumerSendMsgBack, 36, "CONSUMER_SEND_MSG_BACK")                   \
    X(kEndTransaction, 37, "END_TRANSACTION")                               \
    X(kGetConsumerListByGroup, 38, "GET_CONSUMER_LIST_BY_GROUP")            \
    X(kCheckTransactionState, 39, "CHECK_TRANSACTION_STATE")                \
    X(kNotifyConsumerIdsChanged, 40, "NOTIFY_CONSUMER_IDS_CHANGED")         \
    X(kLockBatchMq, 41, "LOCK_BATCH_MQ")                                    \
    X(kUnlockBatchMq, 42, "UNLOCK_BATCH_MQ")                                \
    X(kGetAllConsumerOffset, 43, "GET_ALL_CONSUMER_OFFSET")                 \
    X(kGetAllDelayOffset, 45, "GET_ALL_DELAY_OFFSET")                       \
    X(kCheckClientConfig, 46, "CHECK_CLIENT_CONFIG")                        \
    X(kGetClientConfig, 47, "GET_CLIENT_CONFIG")                            \
    X(kUpdateAndCreateAclConfig, 50, "UPDATE_AND_CREATE_ACL_CONFIG")        \
    X(kDeleteAclConfig, 51, "DELETE_ACL_CONFIG")                            \
    X(kGetBrokerClusterAclInfo, 52, "GET_BROKER_CLUSTER_ACL_INFO")          \
    X(kUpdateGlobalWhiteAddrsConfig, 53, "UPDATE_GLOBAL_WHITE_ADDRS_CONFIG") \
    X(kGetBrokerClusterAclConfig, 54, "GET_BROKER_CLUSTER_ACL_CONFIG")      \
    X(kGetTimerCheckPoint, 60, "GET_TIMER_CHECK_POINT")                     \
    X(kGetTimerMetrics, 61, "GET_TIMER_METRICS")                            \
    X(kPutKvConfig, 100, "PUT_KV_CONFIG")                                   \
    X(kGetKvConfig, 101, "GET_KV_CONFIG")                                   \
    X(kDeleteKvConfig, 102, "DELETE_KV_CONFIG")                             \
    X(kRegisterBroker, 103, "REGISTER_BROKER")                              \
    X(kUnregisterBroker, 104, "UNREGISTER_BROKER")                          \
    X(kGetRouteinfoByTopic, 105, "GET_ROUTEINFO_BY_TOPIC")                  \
    X(kGetBrokerClusterInfo, 106, "GET_BROKER_CLUSTER_INFO")                \
    X(kUpdateAndCreateSubscriptionGroup, 200, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP") \
    X(kGetAllSubscriptionGroupConfig, 201, "GET_ALL_SUBSCRIPTIONGROUP_CONFIG") \
    X(kGetTopicStatsInfo, 202, "GET_TOPIC_STATS_INFO")                      \
    X(kGetConsumerConnectionList, 203, "GET_CONSUMER_CONNECTION_LIST")      \
    X(kGetProducerConnectionList, 204, "GET_PRODUCER_CONNECTION_LIST")      \
    X(kWipeWritePermOfBroker, 205, "WIPE_WRITE_PERM_OF_BROKER")             \
    X(kGetAllTopicListFromNameserver, 206, "GET_ALL_TOPIC_LIST_FROM_NAMESERVER") \
    X(kDeleteSubscriptionGroup, 207, "DELETE_SUBSCRIPTIONGROUP")            \
    X(kGetConsumeStats, 208, "GET_CONSUME_STATS")                           \
    X(kDeleteTopicInBroker, 215, "DELETE_TOPIC_IN_BROKER")                  \
    X(kDeleteTopicInNamesrv, 216, "DELETE_TOPIC_IN_NAMESRV")                \
    X(kRegisterTopicInNamesrv, 217, "REGISTER_TOPIC_IN_NAMESRV")            \
    X(kGetKvlistByNamespace, 219, "GET_KVLIST_BY_NAMESPACE")                \
    X(kResetConsumerClientOffset, 220, "RESET_CONSUMER_CLIENT_OFFSET")      \
    X(kGetConsumerStatusFromClient, 221, "GET_CONSUMER_STATUS_FROM_CLIENT") \
    X(kInvokeBrokerToResetOffset, 222, "INVOKE_BROKER_TO_RESET_OFFSET")     \
    X(kInvokeBrokerToGetConsumerStatus, 223, "INVOKE_BROKER_TO_GET_CONSUMER_STATUS") \
    X(kGetTopicsByCluster, 224, "GET_TOPICS_BY_CLUSTER")                    \
    X(kQueryTopicConsumeByWho, 300, "QUERY_TOPIC_CONSUME_BY_WHO")           \
    X(kQueryConsumeTimeSpan, 303, "QUERY_CONSUME_TIME_SPAN")                \
    X(kGetSystemTopicListFromNs, 304, "GET_SYSTEM_TOPIC_LIST_FROM_NS")      \
    X(kCleanExpiredConsumequeue, 306, "CLEAN_EXPIRED_CONSUMEQUEUE")         \
    X(kGetConsumerRunningInfo, 307, "GET_CONSUMER_RUNNING_INFO")            \
    X(kConsumeMessageDirectly, 309, "CONSUME_MESSAGE_DIRECTLY")             \
    X(kSendMessageV2, 310, "SEND_MESSAGE_V2")                               \
    X(kCloneGroupOffset, 314, "CLONE_GROUP_OFFSET")                         \
    X(kViewBrokerStatsData, 315, "VIEW_BROKER_STATS_DATA")                  \
    X(kCleanUnusedTopic, 316, "CLEAN_UNUSED_TOPIC")                         \
    X(kGetBrokerConsumeStats, 317, "GET_BROKER_CONSUME_STATS")              \
    X(kUpdateNamesrvConfig, 318, "UPDATE_NAMESRV_CONFIG")                   \
    X(kGetNamesrvConfig, 319, "GET_NAMESRV_CONFIG")                         \
    X(kSendBatchMessage, 320, "SEND_BATCH_MESSAGE")                         \
    X(kQueryConsumeQueue, 321, "QUERY_CONSUME_QUEUE")                       \
    X(kQueryDataVersion, 322, "QUERY_DATA_VERSION")                         \
    X(kSendReplyMessage, 324, "SEND_REPLY_MESSAGE")                         \
    X(kSendReplyMessageV2, 325, "SEND_REPLY_MESSAGE_V2")                    \
    X(kPushReplyMessageToClient, 326, "PUSH_REPLY_MESSAGE_TO_CLIENT")       \
    X(kAddWritePermOfBroker, 327, "ADD_WRITE_PERM_OF_BROKER")               \
    X(kGetTopicConfig, 351, "GET_TOPIC_CONFIG")                             \
    X(kLitePullMessage, 361, "LITE_PULL_MESSAGE")                           \
    X(kQueryAssignment, 400, "QUERY_ASSIGNMENT")                            \
    X(kGetAllMessageRequestMode, 402, "GET_ALL_MESSAGE_REQUEST_MODE")       \
    X(kGetBrokerMemberGroup, 901, "GET_BROKER_MEMBER_GROUP")                \
    X(kAddBroker, 902, "ADD_BROKER")                                        \
    X(kRemoveBroker, 903, "REMOVE_BROKER")                                  \
    X(kBrokerHeartbeat, 904, "BROKER_HEARTBEAT")                            \
    X(kNotifyMinBrokerIdChange, 905, "NOTIFY_MIN_BROKER_ID_CHANGE")         \
    X(kExchangeBrokerHaInfo, 906, "EXCHANGE_BROKER_HA_INFO")                \
    X(kGetBrokerHaStatus, 907, "GET_BROKER_HA_STATUS")                      \
    X(kResetMasterFlushOffset, 908, "RESET_MASTER_FLUSH_OFFSET")            \
    X(kControllerAlterSyncStateSet, 1001, "CONTROLLER_ALTER_SYNC_STATE_SET") \
    X(kControllerElectMaster, 1002, "CONTROLLER_ELECT_MASTER")              \
    X(kControllerRegisterBroker, 1003, "CONTROLLER_REGISTER_BROKER")        \
    X(kControllerGetReplicaInfo, 1004, "CONTROLLER_GET_REPLICA_INFO")       \
    X(kControllerGetMetadataInfo, 1005, "CONTROLLER_GET_METADATA_INFO")     \
    X(kControllerGetSyncStateData, 1006, "CONTROLLER_GET_SYNC_STATE_DATA")  \
    X(kGetBrokerEpochCache, 1007, "GET_BROKER_EPOCH_CACHE")                 \
    X(kNotifyBrokerRoleChanged, 1008, "NOTIFY_BROKER_ROLE_CHANGED")         \
    X(kUpdateControllerConfig, 1009, "UPDATE_CONTROLLER_CONFIG")            \
    X(kGetControllerConfig, 1010, "GET_CONTROLLER_CONFIG")                  \
    X(kCleanBrokerData, 1011, "CLEAN_BROKER_DATA")                          \
    X(kControllerGetNextBrokerId, 1012, "CONTROLLER_GET_NEXT_BROKER_ID")    \
    X(kControllerApplyBrokerId, 1013, "CONTROLLER_APPLY_BROKER_ID")         \
    X(kDledgerMetadata, 50000, "METADATA")                                  \
    X(kDledgerAppend, 50001, "APPEND")                                      \
    X(kDledgerGet, 50002, "GET")                                            \
    X(kDledgerVote, 51001, "VOTE")                                          \
    X(kDledgerHeartBeat, 51002, "DLEDGER_HEART_BEAT")                       \
    X(kDledgerPull, 51003, "PULL")                                          \
    X(kDledgerPush, 51004, "PUSH")                                          \
    X(kDledgerLeadershipTransfer, 51005, "LEADERSHIP_TRANSFER")             \
    X(kPopMessage, 200050, "POP_MESSAGE")                                   \
    X(kAckMessage, 200051, "ACK_MESSAGE")                                   \
    X(kPeekMessage, 200052, "PEEK_MESSAGE")                                 \
    X(kChangeMessageInvisibletime, 200053, "CHANGE_MESSAGE_INVISIBLETIME")  \
    X(kNotification, 200054, "NOTIFICATION")                                \
    X(kPollingInfo, 200055, "POLLING_INFO")                                 \
    X(kPopRollback, 200056, "POP_ROLLBACK")                                 \
    X(kBatchAckMessage, 200151, "BATCH_ACK_MESSAGE")

namespace RequestCode {  // NOLINT(readability-identifier-naming): mirrors Java's RequestCode
#define COMET_DEFINE_CODE(name, value, text) inline constexpr int32_t name = value;
COMET_REQUEST_CODES(COMET_DEFINE_CODE)
#undef COMET_DEFINE_CODE
}  // namespace RequestCode

// "SEND_MESSAGE_V2"; unknown codes give "UNKNOWN".
std::string_view request_code_name(int32_t code);

}  // namespace comet::protocol
