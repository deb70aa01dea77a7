#pragma once
// Typed headers of the admin RPCs (reference §4.4): topic create/delete, subscription groups,
// topic/consume stats, broker config, QUERY_MESSAGE, VIEW_MESSAGE_BY_ID, GET_ALL_TOPIC_CONFIG.

#include <optional>
#include <string>

#include "protocol/header_codec.h"

namespace comet::protocol {

// UPDATE_AND_CREATE_TOPIC (17).
struct CreateTopicRequestHeader {
    std::string topic;
    std::string default_topic;
    int32_t read_queue_nums = 0;
    int32_t write_queue_nums = 0;
    int32_t perm = 0;
    std::string topic_filter_type;  // SINGLE_TAG / MULTI_TAG
    std::optional<int32_t> topic_sys_flag;
    bool order = false;
    std::optional<std::string> attributes;  // "+k=v,+k2=v2,-k3"
    std::optional<bool> force;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("topic", s.topic);
        v.required("defaultTopic", s.default_topic);
        v.required("readQueueNums", s.read_queue_nums);
        v.required("writeQueueNums", s.write_queue_nums);
        v.required("perm", s.perm);
        v.required("topicFilterType", s.topic_filter_type);
        v.optional("topicSysFlag", s.topic_sys_flag);
        v.required("order", s.order);
        v.optional("attributes", s.attributes);
        v.optional("force", s.force);
    }
    COMET_EXT_HEADER(CreateTopicRequestHeader)
};

// DELETE_TOPIC_IN_BROKER (215), GET_TOPIC_STATS_INFO (202): topic only.
struct TopicRequestHeader {
    std::string topic;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("topic", s.topic);
    }
    COMET_EXT_HEADER(TopicRequestHeader)
};
using DeleteTopicRequestHeader = TopicRequestHeader;
using GetTopicStatsInfoRequestHeader = TopicRequestHeader;

struct DeleteSubscriptionGroupRequestHeader {
    std::string group_name;
    std::optional<bool> clean_offset;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("groupName", s.group_name);
        v.optional("cleanOffset", s.clean_offset);
    }
    COMET_EXT_HEADER(DeleteSubscriptionGroupRequestHeader)
};

// QUERY_CONSUME_QUEUE (321): `count` units of topic/queueId from `index`; consumerGroup adds the
// group's subscription and filter to the answer (Java QueryConsumeQueueRequestHeader).
struct QueryConsumeQueueRequestHeader {
    std::string topic;
    int32_t queue_id = 0;
    int64_t index = 0;
    int32_t count = 0;
    std::optional<std::string> consumer_group;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("topic", s.topic);
        v.required("queueId", s.queue_id);
        v.required("index", s.index);
        v.optional("count", s.count);
        v.optional("consumerGroup", s.consumer_group);
    }
    COMET_EXT_HEADER(QueryConsumeQueueRequestHeader)
};

// GET_CONSUME_STATS (208).
struct GetConsumeStatsRequestHeader {
    std::string consumer_group;
    std::optional<std::string> topic;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("consumerGroup", s.consumer_group);
        v.optional("topic", s.topic);
    }
    COMET_EXT_HEADER(GetConsumeStatsRequestHeader)
};

// GET_CONSUMER_CONNECTION_LIST (203).
struct GetConsumerConnectionListRequestHeader {
    std::string consumer_group;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("consumerGroup", s.consumer_group);
    }
    COMET_EXT_HEADER(GetConsumerConnectionListRequestHeader)
};

// GET_BROKER_CONFIG (26) response; the body is a `key=value\n` properties text.
struct GetBrokerConfigResponseHeader {
    std::string version;  // DataVersion JSON of the config

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("version", s.version);
    }
    COMET_EXT_HEADER(GetBrokerConfigResponseHeader)
};

// GET_ALL_TOPIC_CONFIG (21) paging (5.x); all absent means everything.
struct GetAllTopicConfigRequestHeader {
    std::optional<int32_t> topic_seq;
    std::optional<std::string> data_version;
    std::optional<int32_t> max_topic_num;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("topicSeq", s.topic_seq);
        v.optional("dataVersion", s.data_version);
        v.optional("maxTopicNum", s.max_topic_num);
    }
    COMET_EXT_HEADER(GetAllTopicConfigRequestHeader)
};

struct GetAllTopicConfigResponseHeader {
    std::optional<int32_t> total_topic_num;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("totalTopicNum", s.total_topic_num);
    }
    COMET_EXT_HEADER(GetAllTopicConfigResponseHeader)
};

// QUERY_MESSAGE (12): by key within a time range.
struct QueryMessageRequestHeader {
    std::string topic;
    std::string key;
    int32_t max_num = 0;
    int64_t begin_timestamp = 0;
    int64_t end_timestamp = 0;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("topic", s.topic);
        v.required("key", s.key);
        v.required("maxNum", s.max_num);
        v.required("beginTimestamp", s.begin_timestamp);
        v.required("endTimestamp", s.end_timestamp);
    }
    COMET_EXT_HEADER(QueryMessageRequestHeader)
};

struct QueryMessageResponseHeader {
    int64_t index_last_update_timestamp = 0;
    int64_t index_last_update_phyoffset = 0;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("indexLastUpdateTimestamp", s.index_last_update_timestamp);
        v.required("indexLastUpdatePhyoffset", s.index_last_update_phyoffset);
    }
    COMET_EXT_HEADER(QueryMessageResponseHeader)
};

// VIEW_MESSAGE_BY_ID (33): physical offset of the stored message.
struct ViewMessageRequestHeader {
    std::optional<std::string> topic;
    int64_t offset = 0;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("topic", s.topic);
        v.required("offset", s.offset);
    }
    COMET_EXT_HEADER(ViewMessageRequestHeader)
};

// ADD_BROKER (902), sent to a broker container (RocketMQ 5 AddBrokerRequestHeader): the path,
// on the container's host, of the new broker's properties file.
struct AddBrokerRequestHeader {
    std::optional<std::string> config_path;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("configPath", s.config_path);
    }
    COMET_EXT_HEADER(AddBrokerRequestHeader)
};

// REMOVE_BROKER (903), sent to a broker container (RocketMQ 5 RemoveBrokerRequestHeader): the
// identity of the broker to stop.
struct RemoveBrokerRequestHeader {
    std::string broker_name;
    std::string broker_cluster_name;
    int64_t broker_id = 0;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("brokerName", s.broker_name);
        v.required("brokerClusterName", s.broker_cluster_name);
        v.required("brokerId", s.broker_id);
    }
    COMET_EXT_HEADER(RemoveBrokerRequestHeader)
};

}  // namespace comet::protocol
