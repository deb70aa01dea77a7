#pragma once
// Typed headers of the consumer RPCs (reference §4.3): PULL_MESSAGE, consumer offsets, max/min
// offset, search by timestamp, earliest store time, UNREGISTER_CLIENT, CONSUMER_SEND_MSG_BACK,
// GET_CONSUMER_LIST_BY_GROUP, NOTIFY_CONSUMER_IDS_CHANGED. HEART_BEAT and LOCK/UNLOCK_BATCH_MQ
// carry bodies only (heartbeat_body.h, admin_bodies.h).

#include <optional>
#include <string>

#include "protocol/header_codec.h"

namespace comet::protocol {

// PullSysFlag bits.
inline constexpr int32_t kPullFlagCommitOffset = 0x1;
inline constexpr int32_t kPullFlagSuspend = 0x2;
inline constexpr int32_t kPullFlagSubscription = 0x4;
inline constexpr int32_t kPullFlagClassFilter = 0x8;
inline constexpr int32_t kPullFlagLitePull = 0x10;

struct PullMessageRequestHeader {
    std::string consumer_group;
    std::string topic;
    int32_t queue_id = 0;
    int64_t queue_offset = 0;
    int32_t max_msg_nums = 0;
    int32_t sys_flag = 0;
    int64_t commit_offset = 0;
    int64_t suspend_timeout_millis = 0;
    std::optional<std::string> subscription;
    int64_t sub_version = 0;
    std::optional<std::string> expression_type;  // "TAG" when absent
    std::optional<int32_t> max_msg_bytes;
    std::optional<std::string> broker_name;  // "bname"

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("consumerGroup", s.consumer_group);
        v.required("topic", s.topic);
        v.required("queueId", s.queue_id);
        v.required("queueOffset", s.queue_offset);
        v.required("maxMsgNums", s.max_msg_nums);
        v.required("sysFlag", s.sys_flag);
        v.required("commitOffset", s.commit_offset);
        v.required("suspendTimeoutMillis", s.suspend_timeout_millis);
        v.optional("subscription", s.subscription);
        v.required("subVersion", s.sub_version);
        v.optional("expressionType", s.expression_type);
        v.optional("maxMsgBytes", s.max_msg_bytes);
        v.optional("bname", s.broker_name);
    }
    COMET_EXT_HEADER(PullMessageRequestHeader)
};

// The PULL_MESSAGE request header: cmd.typed_pull when the fast path set it (decision 020),
// else from ext_fields.
Result<PullMessageRequestHeader> decode_pull_message_header(const RemotingCommand& cmd);

// Must be present on codes 0, 19, 20 and 21 (clients decode it for all four).
struct PullMessageResponseHeader {
    int64_t suggest_which_broker_id = 0;
    int64_t next_begin_offset = 0;
    int64_t min_offset = 0;
    int64_t max_offset = 0;
    std::optional<int64_t> offset_delta;
    std::optional<int32_t> topic_sys_flag;
    std::optional<int32_t> group_sys_flag;
    std::optional<int32_t> forbidden_type;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("suggestWhichBrokerId", s.suggest_which_broker_id);
        v.required("nextBeginOffset", s.next_begin_offset);
        v.required("minOffset", s.min_offset);
        v.required("maxOffset", s.max_offset);
        v.optional("offsetDelta", s.offset_delta);
        v.optional("topicSysFlag", s.topic_sys_flag);
        v.optional("groupSysFlag", s.group_sys_flag);
        v.optional("forbiddenType", s.forbidden_type);
    }
    COMET_EXT_HEADER(PullMessageResponseHeader)
};

struct QueryConsumerOffsetRequestHeader {
    std::string consumer_group;
    std::string topic;
    int32_t queue_id = 0;
    std::optional<bool> set_zero_if_not_found;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("consumerGroup", s.consumer_group);
        v.required("topic", s.topic);
        v.required("queueId", s.queue_id);
        v.optional("setZeroIfNotFound", s.set_zero_if_not_found);
    }
    COMET_EXT_HEADER(QueryConsumerOffsetRequestHeader)
};

// Response header with a single required Long "offset": QUERY_CONSUMER_OFFSET, GET_MAX_OFFSET,
// GET_MIN_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP.
struct OffsetResponseHeader {
    int64_t offset = 0;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("offset", s.offset);
    }
    COMET_EXT_HEADER(OffsetResponseHeader)
};
using QueryConsumerOffsetResponseHeader = OffsetResponseHeader;
using GetMaxOffsetResponseHeader = OffsetResponseHeader;
using GetMinOffsetResponseHeader = OffsetResponseHeader;
using SearchOffsetResponseHeader = OffsetResponseHeader;

struct UpdateConsumerOffsetRequestHeader {
    std::string consumer_group;
    std::string topic;
    int32_t queue_id = 0;
    int64_t commit_offset = 0;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("consumerGroup", s.consumer_group);
        v.required("topic", s.topic);
        v.required("queueId", s.queue_id);
        v.required("commitOffset", s.commit_offset);
    }
    COMET_EXT_HEADER(UpdateConsumerOffsetRequestHeader)
};

struct GetMaxOffsetRequestHeader {
    std::string topic;
    int32_t queue_id = 0;
    std::optional<bool> committed;  // default true

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("topic", s.topic);
        v.required("queueId", s.queue_id);
        v.optional("committed", s.committed);
    }
    COMET_EXT_HEADER(GetMaxOffsetRequestHeader)
};

// GET_MIN_OFFSET and GET_EARLIEST_MSG_STORETIME requests: topic + queueId.
struct TopicQueueRequestHeader {
    std::string topic;
    int32_t queue_id = 0;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("topic", s.topic);
        v.required("queueId", s.queue_id);
    }
    COMET_EXT_HEADER(TopicQueueRequestHeader)
};
using GetMinOffsetRequestHeader = TopicQueueRequestHeader;
using GetEarliestMsgStoretimeRequestHeader = TopicQueueRequestHeader;

struct SearchOffsetRequestHeader {
    std::string topic;
    int32_t queue_id = 0;
    int64_t timestamp = 0;
    std::optional<std::string> boundary_type;  // "lower" (default) / "upper"

    // Java BoundaryType.getType: "upper" case-insensitively, anything else LOWER.
    bool is_upper() const;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("topic", s.topic);
        v.required("queueId", s.queue_id);
        v.required("timestamp", s.timestamp);
        v.optional("boundaryType", s.boundary_type);
    }
    COMET_EXT_HEADER(SearchOffsetRequestHeader)
};

struct GetEarliestMsgStoretimeResponseHeader {
    int64_t timestamp = 0;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("timestamp", s.timestamp);
    }
    COMET_EXT_HEADER(GetEarliestMsgStoretimeResponseHeader)
};

struct UnregisterClientRequestHeader {
    std::string client_id;  // "clientID"
    std::optional<std::string> producer_group;
    std::optional<std::string> consumer_group;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("clientID", s.client_id);
        v.optional("producerGroup", s.producer_group);
        v.optional("consumerGroup", s.consumer_group);
    }
    COMET_EXT_HEADER(UnregisterClientRequestHeader)
};

struct ConsumerSendMsgBackRequestHeader {
    int64_t offset = 0;  // CommitLog physical offset of the original message
    std::string group;
    int32_t delay_level = 0;
    std::optional<std::string> origin_msg_id;
    std::optional<std::string> origin_topic;
    std::optional<bool> unit_mode;
    std::optional<int32_t> max_reconsume_times;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("offset", s.offset);
        v.required("group", s.group);
        v.required("delayLevel", s.delay_level);
        v.optional("originMsgId", s.origin_msg_id);
        v.optional("originTopic", s.origin_topic);
        v.optional("unitMode", s.unit_mode);
        v.optional("maxReconsumeTimes", s.max_reconsume_times);
    }
    COMET_EXT_HEADER(ConsumerSendMsgBackRequestHeader)
};

// GET_CONSUMER_LIST_BY_GROUP (38) and NOTIFY_CONSUMER_IDS_CHANGED (40): consumerGroup only.
struct ConsumerGroupRequestHeader {
    std::string consumer_group;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("consumerGroup", s.consumer_group);
    }
    COMET_EXT_HEADER(ConsumerGroupRequestHeader)
};
using GetConsumerListByGroupRequestHeader = ConsumerGroupRequestHeader;
using NotifyConsumerIdsChangedRequestHeader = ConsumerGroupRequestHeader;

}  // namespace comet::protocol
