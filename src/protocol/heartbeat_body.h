#pragma once
// HEART_BEAT (34) body: HeartbeatData with producerDataSet and consumerDataSet (reference §4.2).
// Enum-valued fields (consumeType, messageModel, consumeFromWhere) are kept as their Java names.
// Codec functions: see COMET_JSON_BODY in json_body.h. Plain values, no threads.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "protocol/json_body.h"

namespace comet::protocol {

struct SubscriptionData {
    bool class_filter_mode = false;
    std::string topic;
    std::string sub_string;  // "*", "a || b", or an SQL92 expression
    std::set<std::string> tags_set;
    std::set<int32_t> code_set;  // Java String.hashCode() of each tag
    int64_t sub_version = 0;
    std::string expression_type = "TAG";
    bool operator==(const SubscriptionData&) const = default;
    COMET_JSON_BODY(SubscriptionData)
};

struct ConsumerData {
    std::string group_name;
    std::string consume_type;        // CONSUME_ACTIVELY / CONSUME_PASSIVELY / CONSUME_POP
    std::string message_model;       // CLUSTERING / BROADCASTING
    std::string consume_from_where;  // CONSUME_FROM_LAST_OFFSET, ...
    std::vector<SubscriptionData> subscription_data_set;
    bool unit_mode = false;
    bool operator==(const ConsumerData&) const = default;
    COMET_JSON_BODY(ConsumerData)
};

struct ProducerData {
    std::string group_name;
    bool operator==(const ProducerData&) const = default;
    COMET_JSON_BODY(ProducerData)
};

struct HeartbeatData {
    std::string client_id;  // "clientID"
    std::vector<ProducerData> producer_data_set;
    std::vector<ConsumerData> consumer_data_set;
    std::optional<int32_t> heartbeat_fingerprint;  // 5.x heartbeat v2
    std::optional<bool> without_sub;               // 5.x
    bool operator==(const HeartbeatData&) const = default;
    COMET_JSON_BODY(HeartbeatData)
};

}  // namespace comet::protocol
