#include "protocol/heartbeat_body.h"

#include "protocol/json_lists.h"

namespace comet::protocol {

void SubscriptionData::write_json(JsonWriter& w) const {
    w.begin_object().member("classFilterMode", class_filter_mode).key("codeSet");
    write_value_list(w, code_set);
    w.member("expressionType", expression_type)
        .member("subString", sub_string)
        .member("subVersion", sub_version)
        .key("tagsSet");
    write_value_list(w, tags_set);
    w.member("topic", topic).end_object();
}

Result<SubscriptionData> SubscriptionData::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "SubscriptionData"));
    SubscriptionData s;
    COMET_RETURN_IF_ERROR(read_bool(v, "classFilterMode", &s.class_filter_mode));
    COMET_RETURN_IF_ERROR(read_string(v, "topic", &s.topic));
    COMET_RETURN_IF_ERROR(read_string(v, "subString", &s.sub_string));
    COMET_RETURN_IF_ERROR(read_int64(v, "subVersion", &s.sub_version));
    COMET_RETURN_IF_ERROR(read_string(v, "expressionType", &s.expression_type));
    std::vector<std::string> tags;
    COMET_RETURN_IF_ERROR(read_string_list(v, "tagsSet", &tags));
    s.tags_set.insert(tags.begin(), tags.end());
    if (const JsonValue* codes = find_member(v, "codeSet")) {
        if (!codes->IsArray()) {
            return Status::error(Errc::kInvalidArgument, "JSON body: codeSet is not an array");
        }
        for (const auto& c : codes->GetArray()) {
            COMET_ASSIGN_OR_RETURN(int64_t code, json_to_int64(c, "codeSet"));
            s.code_set.insert(static_cast<int32_t>(code));
        }
    }
    return s;
}

void ConsumerData::write_json(JsonWriter& w) const {
    w.begin_object()
        .member("consumeFromWhere", consume_from_where)
        .member("consumeType", consume_type)
        .member("groupName", group_name)
        .member("messageModel", message_model)
        .key("subscriptionDataSet");
    write_object_list(w, subscription_data_set);
    w.member("unitMode", unit_mode).end_object();
}

Result<ConsumerData> ConsumerData::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "ConsumerData"));
    ConsumerData c;
    COMET_RETURN_IF_ERROR(read_string(v, "groupName", &c.group_name));
    COMET_RETURN_IF_ERROR(read_string(v, "consumeType", &c.consume_type));
    COMET_RETURN_IF_ERROR(read_string(v, "messageModel", &c.message_model));
    COMET_RETURN_IF_ERROR(read_string(v, "consumeFromWhere", &c.consume_from_where));
    COMET_RETURN_IF_ERROR(read_object_list(v, "subscriptionDataSet", &c.subscription_data_set));
    COMET_RETURN_IF_ERROR(read_bool(v, "unitMode", &c.unit_mode));
    return c;
}

void ProducerData::write_json(JsonWriter& w) const {
    w.begin_object().member("groupName", group_name).end_object();
}

Result<ProducerData> ProducerData::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "ProducerData"));
    ProducerData p;
    COMET_RETURN_IF_ERROR(read_string(v, "groupName", &p.group_name));
    return p;
}

void HeartbeatData::write_json(JsonWriter& w) const {
    w.begin_object().member("clientID", client_id).key("consumerDataSet");
    write_object_list(w, consumer_data_set);
    if (heartbeat_fingerprint) {
        w.member("heartbeatFingerprint", *heartbeat_fingerprint);
    }
    w.key("producerDataSet");
    write_object_list(w, producer_data_set);
    if (without_sub) {
        w.member("withoutSub", *without_sub);
    }
    w.end_object();
}

Result<HeartbeatData> HeartbeatData::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "HeartbeatData"));
    HeartbeatData h;
    COMET_RETURN_IF_ERROR(read_string(v, "clientID", &h.client_id));
    COMET_RETURN_IF_ERROR(read_object_list(v, "producerDataSet", &h.producer_data_set));
    COMET_RETURN_IF_ERROR(read_object_list(v, "consumerDataSet", &h.consumer_data_set));
    if (find_member(v, "heartbeatFingerprint") != nullptr) {
        int32_t fp = 0;
        COMET_RETURN_IF_ERROR(read_int32(v, "heartbeatFingerprint", &fp));
        h.heartbeat_fingerprint = fp;
    }
    COMET_RETURN_IF_ERROR(read_bool(v, "withoutSub", &h.without_sub));
    return h;
}

}  // namespace comet::protocol
