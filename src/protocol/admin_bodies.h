#pragma once
// JSON bodies of the consumer-group and admin RPCs (reference §4.3, §4.4): ConsumerListBody,
// MessageQueue, Lock/UnlockBatchRequestBody, LockBatchResponseBody, SubscriptionGroupConfig and its
// wrapper, TopicStatsTable, ConsumeStats, ConsumerOffsetSerializeWrapper, Consumer/ProducerConnection, and the Java Properties
// text body (GET/UPDATE_BROKER_CONFIG). Codec functions: COMET_JSON_BODY in json_body.h.
//
// TopicStatsTable and ConsumeStats are Map<MessageQueue, X> in Java; fastjson writes such maps
// with JSON-object keys ({{"brokerName":"b","queueId":0,"topic":"T"}:{...}}) and Java tools only
// read that form, so encode() emits it too (the one place we emit non-standard JSON).

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/heartbeat_body.h"
#include "protocol/json_body.h"
#include "protocol/route_bodies.h"

namespace comet::protocol {

struct ConsumerListBody {
    std::vector<std::string> consumer_id_list;
    bool operator==(const ConsumerListBody&) const = default;
    COMET_JSON_BODY(ConsumerListBody)
};

struct MessageQueue {
    std::string topic;
    std::string broker_name;
    int32_t queue_id = 0;
    auto operator<=>(const MessageQueue&) const = default;
    bool operator==(const MessageQueue&) const = default;
    COMET_JSON_BODY(MessageQueue)
};

// LOCK_BATCH_MQ and UNLOCK_BATCH_MQ request body (Java Lock/UnlockBatchRequestBody).
struct LockBatchRequestBody {
    std::string consumer_group;
    std::string client_id;
    bool only_this_broker = false;
    std::set<MessageQueue> mq_set;
    bool operator==(const LockBatchRequestBody&) const = default;
    COMET_JSON_BODY(LockBatchRequestBody)
};
using UnlockBatchRequestBody = LockBatchRequestBody;

struct LockBatchResponseBody {
    std::set<MessageQueue> lock_ok_mq_set;  // "lockOKMQSet"
    bool operator==(const LockBatchResponseBody&) const = default;
    COMET_JSON_BODY(LockBatchResponseBody)
};

struct SubscriptionGroupConfig {
    std::string group_name;
    bool consume_enable = true;
    bool consume_from_min_enable = true;
    bool consume_broadcast_enable = true;
    bool consume_message_orderly = false;
    int32_t retry_queue_nums = 1;
    int32_t retry_max_times = 16;
    int64_t broker_id = 0;
    int64_t which_broker_when_consume_slowly = 1;
    bool notify_consumer_ids_changed_enable = true;
    int32_t group_sys_flag = 0;
    int32_t consume_timeout_minute = 15;
    std::map<std::string, std::string> attributes;
    bool operator==(const SubscriptionGroupConfig&) const = default;
    COMET_JSON_BODY(SubscriptionGroupConfig)
};

// GET_ALL_SUBSCRIPTIONGROUP_CONFIG body.
struct SubscriptionGroupWrapper {
    std::map<std::string, SubscriptionGroupConfig> subscription_group_table;
    DataVersion data_version;
    bool operator==(const SubscriptionGroupWrapper&) const = default;
    COMET_JSON_BODY(SubscriptionGroupWrapper)
};

struct TopicOffset {
    int64_t min_offset = 0;
    int64_t max_offset = 0;
    int64_t last_update_timestamp = 0;
    bool operator==(const TopicOffset&) const = default;
    COMET_JSON_BODY(TopicOffset)
};

// GET_TOPIC_STATS_INFO body.
struct TopicStatsTable {
    std::map<MessageQueue, TopicOffset> offset_table;
    double topic_put_tps = 0;
    bool operator==(const TopicStatsTable&) const = default;
    COMET_JSON_BODY(TopicStatsTable)
};

struct OffsetWrapper {
    int64_t broker_offset = 0;
    int64_t consumer_offset = 0;
    int64_t pull_offset = 0;
    int64_t last_timestamp = 0;
    bool operator==(const OffsetWrapper&) const = default;
    COMET_JSON_BODY(OffsetWrapper)
};

// GET_CONSUME_STATS body.
struct ConsumeStats {
    std::map<MessageQueue, OffsetWrapper> offset_table;
    double consume_tps = 0;
    bool operator==(const ConsumeStats&) const = default;
    COMET_JSON_BODY(ConsumeStats)
};

// GET_ALL_CONSUMER_OFFSET body / config/consumerOffset.json: "topic@group" -> queueId -> offset.
struct ConsumerOffsetSerializeWrapper {
    std::map<std::string, std::map<int32_t, int64_t>> offset_table;
    std::optional<DataVersion> data_version;
    bool operator==(const ConsumerOffsetSerializeWrapper&) const = default;
    COMET_JSON_BODY(ConsumerOffsetSerializeWrapper)
};

// One client channel as admin tools see it (Java Connection).
struct Connection {
    std::string client_id;
    std::string client_addr;
    std::string language = "JAVA";  // LanguageCode name
    int32_t version = 0;
    auto operator<=>(const Connection&) const = default;
    bool operator==(const Connection&) const = default;
    COMET_JSON_BODY(Connection)
};

// GET_CONSUMER_CONNECTION_LIST body.
struct ConsumerConnection {
    std::set<Connection> connection_set;
    std::map<std::string, SubscriptionData> subscription_table;  // topic -> subscription
    std::optional<std::string> consume_type;
    std::optional<std::string> message_model;
    std::optional<std::string> consume_from_where;
    bool operator==(const ConsumerConnection&) const = default;
    COMET_JSON_BODY(ConsumerConnection)
};

// GET_PRODUCER_CONNECTION_LIST body.
struct ProducerConnection {
    std::set<Connection> connection_set;
    bool operator==(const ProducerConnection&) const = default;
    COMET_JSON_BODY(ProducerConnection)
};

// Java Properties text ("key=value" lines; '#'/'!' comments; '\' escapes and continuations), as
// used by GET_BROKER_CONFIG / UPDATE_BROKER_CONFIG / namesrv config bodies.
std::map<std::string, std::string> parse_properties_text(std::string_view text);
// MixAll#properties2String: "key=value\n" per entry, in key order.
std::string encode_properties_text(const std::map<std::string, std::string>& props);

}  // namespace comet::protocol
