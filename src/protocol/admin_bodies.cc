#include "protocol/admin_bodies.h"

#include <cctype>

#include "protocol/json_lists.h"

namespace comet::protocol {
namespace {

Status read_mq_set(const JsonValue& v, const char* key, std::set<MessageQueue>* out) {
    std::vector<MessageQueue> list;
    COMET_RETURN_IF_ERROR(read_object_list(v, key, &list));
    out->insert(list.begin(), list.end());
    return Status::ok();
}

// Map<MessageQueue, T> written by fastjson with object keys; after normalize_lenient_json each
// key is a string holding the key object's JSON.
template <typename T>
Status read_mq_map(const JsonValue& v, const char* key, std::map<MessageQueue, T>* out) {
    const JsonValue* t = find_member(v, key);
    if (t == nullptr) {
        return Status::ok();
    }
    COMET_RETURN_IF_ERROR(expect_object(*t, key));
    for (const auto& m : t->GetObject()) {
        COMET_ASSIGN_OR_RETURN(
            MessageQueue mq,
            MessageQueue::decode(std::string_view(m.name.GetString(), m.name.GetStringLength())));
        COMET_ASSIGN_OR_RETURN(T value, T::from_json(m.value));
        (*out)[std::move(mq)] = std::move(value);
    }
    return Status::ok();
}

template <typename T>
void write_mq_map(JsonWriter& w, const std::map<MessageQueue, T>& m) {
    w.begin_object();
    for (const auto& [mq, value] : m) {
        w.raw_key(mq.encode());
        value.write_json(w);
    }
    w.end_object();
}

}  // namespace

void ConsumerListBody::write_json(JsonWriter& w) const {
    w.begin_object().key("consumerIdList");
    write_value_list(w, consumer_id_list);
    w.end_object();
}

Result<ConsumerListBody> ConsumerListBody::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "ConsumerListBody"));
    ConsumerListBody b;
    COMET_RETURN_IF_ERROR(read_string_list(v, "consumerIdList", &b.consumer_id_list));
    return b;
}

void MessageQueue::write_json(JsonWriter& w) const {
    w.begin_object()
        .member("brokerName", broker_name)
        .member("queueId", queue_id)
        .member("topic", topic)
        .end_object();
}

Result<MessageQueue> MessageQueue::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "MessageQueue"));
    MessageQueue mq;
    COMET_RETURN_IF_ERROR(read_string(v, "brokerName", &mq.broker_name));
    COMET_RETURN_IF_ERROR(read_int32(v, "queueId", &mq.queue_id));
    COMET_RETURN_IF_ERROR(read_string(v, "topic", &mq.topic));
    return mq;
}

void LockBatchRequestBody::write_json(JsonWriter& w) const {
    w.begin_object()
        .member("clientId", client_id)
        .member("consumerGroup", consumer_group)
        .key("mqSet")
        .begin_array();
    for (const auto& mq : mq_set) {
        mq.write_json(w);
    }
    w.end_array().member("onlyThisBroker", only_this_broker).end_object();
}

Result<LockBatchRequestBody> LockBatchRequestBody::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "LockBatchRequestBody"));
    LockBatchRequestBody b;
    COMET_RETURN_IF_ERROR(read_string(v, "clientId", &b.client_id));
    COMET_RETURN_IF_ERROR(read_string(v, "consumerGroup", &b.consumer_group));
    COMET_RETURN_IF_ERROR(read_bool(v, "onlyThisBroker", &b.only_this_broker));
    COMET_RETURN_IF_ERROR(read_mq_set(v, "mqSet", &b.mq_set));
    return b;
}

void LockBatchResponseBody::write_json(JsonWriter& w) const {
    w.begin_object().key("lockOKMQSet").begin_array();
    for (const auto& mq : lock_ok_mq_set) {
        mq.write_json(w);
    }
    w.end_array().end_object();
}

Result<LockBatchResponseBody> LockBatchResponseBody::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "LockBatchResponseBody"));
    LockBatchResponseBody b;
    COMET_RETURN_IF_ERROR(read_mq_set(v, "lockOKMQSet", &b.lock_ok_mq_set));
    return b;
}

void SubscriptionGroupConfig::write_json(JsonWriter& w) const {
    w.begin_object();
    write_attributes(w, attributes);
    w.member("brokerId", broker_id)
        .member("consumeBroadcastEnable", consume_broadcast_enable)
        .member("consumeEnable", consume_enable)
        .member("consumeFromMinEnable", consume_from_min_enable)
        .member("consumeMessageOrderly", consume_message_orderly)
        .member("consumeTimeoutMinute", consume_timeout_minute)
        .member("groupName", group_name)
        .member("groupSysFlag", group_sys_flag)
        .member("notifyConsumerIdsChangedEnable", notify_consumer_ids_changed_enable)
        .member("retryMaxTimes", retry_max_times)
        .member("retryQueueNums", retry_queue_nums)
        .member("whichBrokerWhenConsumeSlowly", which_broker_when_consume_slowly)
        .end_object();
}

Result<SubscriptionGroupConfig> SubscriptionGroupConfig::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "SubscriptionGroupConfig"));
    SubscriptionGroupConfig c;
    COMET_RETURN_IF_ERROR(read_string_map(v, "attributes", &c.attributes));
    COMET_RETURN_IF_ERROR(read_int64(v, "brokerId", &c.broker_id));
    COMET_RETURN_IF_ERROR(read_bool(v, "consumeBroadcastEnable", &c.consume_broadcast_enable));
    COMET_RETURN_IF_ERROR(read_bool(v, "consumeEnable", &c.consume_enable));
    COMET_RETURN_IF_ERROR(read_bool(v, "consumeFromMinEnable", &c.consume_from_min_enable));
    COMET_RETURN_IF_ERROR(read_bool(v, "consumeMessageOrderly", &c.consume_message_orderly));
    COMET_RETURN_IF_ERROR(read_int32(v, "consumeTimeoutMinute", &c.consume_timeout_minute));
    COMET_RETURN_IF_ERROR(read_string(v, "groupName", &c.group_name));
    COMET_RETURN_IF_ERROR(read_int32(v, "groupSysFlag", &c.group_sys_flag));
    COMET_RETURN_IF_ERROR(read_bool(v, "notifyConsumerIdsChangedEnable",
                                    &c.notify_consumer_ids_changed_enable));
    COMET_RETURN_IF_ERROR(read_int32(v, "retryMaxTimes", &c.retry_max_times));
    COMET_RETURN_IF_ERROR(read_int32(v, "retryQueueNums", &c.retry_queue_nums));
    COMET_RETURN_IF_ERROR(
        read_int64(v, "whichBrokerWhenConsumeSlowly", &c.which_broker_when_consume_slowly));
    return c;
}

void SubscriptionGroupWrapper::write_json(JsonWriter& w) const {
    w.begin_object().key("dataVersion");
    data_version.write_json(w);
    w.key("subscriptionGroupTable").begin_object();
    for (const auto& [name, c] : subscription_group_table) {
        w.key(name);
        c.write_json(w);
    }
    w.end_object().end_object();
}

Result<SubscriptionGroupWrapper> SubscriptionGroupWrapper::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "SubscriptionGroupWrapper"));
    SubscriptionGroupWrapper s;
    if (const JsonValue* d = find_member(v, "dataVersion")) {
        COMET_ASSIGN_OR_RETURN(s.data_version, DataVersion::from_json(*d));
    }
    COMET_RETURN_IF_ERROR(read_object_map(v, "subscriptionGroupTable", &s.subscription_group_table));
    return s;
}

void TopicOffset::write_json(JsonWriter& w) const {
    w.begin_object()
        .member("lastUpdateTimestamp", last_update_timestamp)
        .member("maxOffset", max_offset)
        .member("minOffset", min_offset)
        .end_object();
}

Result<TopicOffset> TopicOffset::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "TopicOffset"));
    TopicOffset t;
    COMET_RETURN_IF_ERROR(read_int64(v, "lastUpdateTimestamp", &t.last_update_timestamp));
    COMET_RETURN_IF_ERROR(read_int64(v, "maxOffset", &t.max_offset));
    COMET_RETURN_IF_ERROR(read_int64(v, "minOffset", &t.min_offset));
    return t;
}

void TopicStatsTable::write_json(JsonWriter& w) const {
    w.begin_object().key("offsetTable");
    write_mq_map(w, offset_table);
    w.member("topicPutTps", topic_put_tps).end_object();
}

Result<TopicStatsTable> TopicStatsTable::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "TopicStatsTable"));
    TopicStatsTable t;
    COMET_RETURN_IF_ERROR(read_mq_map(v, "offsetTable", &t.offset_table));
    COMET_RETURN_IF_ERROR(read_double(v, "topicPutTps", &t.topic_put_tps));
    return t;
}

void OffsetWrapper::write_json(JsonWriter& w) const {
    w.begin_object()
        .member("brokerOffset", broker_offset)
        .member("consumerOffset", consumer_offset)
        .member("lastTimestamp", last_timestamp)
        .member("pullOffset", pull_offset)
        .end_object();
}

Result<OffsetWrapper> OffsetWrapper::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "OffsetWrapper"));
    OffsetWrapper o;
    COMET_RETURN_IF_ERROR(read_int64(v, "brokerOffset", &o.broker_offset));
    COMET_RETURN_IF_ERROR(read_int64(v, "consumerOffset", &o.consumer_offset));
    COMET_RETURN_IF_ERROR(read_int64(v, "lastTimestamp", &o.last_timestamp));
    COMET_RETURN_IF_ERROR(read_int64(v, "pullOffset", &o.pull_offset));
    return o;
}

void ConsumeStats::write_json(JsonWriter& w) const {
    w.begin_object().member("consumeTps", consume_tps).key("offsetTable");
    write_mq_map(w, offset_table);
    w.end_object();
}

Result<ConsumeStats> ConsumeStats::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "ConsumeStats"));
    ConsumeStats c;
    COMET_RETURN_IF_ERROR(read_double(v, "consumeTps", &c.consume_tps));
    COMET_RETURN_IF_ERROR(read_mq_map(v, "offsetTable", &c.offset_table));
    return c;
}

void ConsumerOffsetSerializeWrapper::write_json(JsonWriter& w) const {
    w.begin_object();
    if (data_version) {
        w.key("dataVersion");
        data_version->write_json(w);
    }
    w.key("offsetTable").begin_object();
    for (const auto& [topic_group, queues] : offset_table) {
        w.key(topic_group).begin_object();
        for (const auto& [qid, off] : queues) {
            w.member(std::to_string(qid), off);
        }
        w.end_object();
    }
    w.end_object().end_object();
}

Result<ConsumerOffsetSerializeWrapper> ConsumerOffsetSerializeWrapper::from_json(
    const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "ConsumerOffsetSerializeWrapper"));
    ConsumerOffsetSerializeWrapper c;
    if (const JsonValue* d = find_member(v, "dataVersion")) {
        COMET_ASSIGN_OR_RETURN(c.data_version, DataVersion::from_json(*d));
    }
    if (const JsonValue* t = find_member(v, "offsetTable")) {
        COMET_RETURN_IF_ERROR(expect_object(*t, "offsetTable"));
        for (const auto& m : t->GetObject()) {
            auto& queues =
                c.offset_table[std::string(m.name.GetString(), m.name.GetStringLength())];
            if (m.value.IsNull()) {
                continue;
            }
            COMET_RETURN_IF_ERROR(expect_object(m.value, "offsetTable entry"));
            for (const auto& q : m.value.GetObject()) {
                COMET_ASSIGN_OR_RETURN(int64_t qid, json_to_int64(q.name, "offsetTable queueId"));
                COMET_ASSIGN_OR_RETURN(int64_t off, json_to_int64(q.value, "offsetTable offset"));
                if (qid < INT32_MIN || qid > INT32_MAX) {
                    return Status::error(Errc::kInvalidArgument,
                                         "JSON body: offsetTable queueId {} overflows int32", qid);
                }
                queues[static_cast<int32_t>(qid)] = off;
            }
        }
    }
    return c;
}

void Connection::write_json(JsonWriter& w) const {
    w.begin_object()
        .member("clientAddr", client_addr)
        .member("clientId", client_id)
        .member("language", language)
        .member("version", version)
        .end_object();
}

Result<Connection> Connection::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "Connection"));
    Connection c;
    COMET_RETURN_IF_ERROR(read_string(v, "clientAddr", &c.client_addr));
    COMET_RETURN_IF_ERROR(read_string(v, "clientId", &c.client_id));
    COMET_RETURN_IF_ERROR(read_string(v, "language", &c.language));
    COMET_RETURN_IF_ERROR(read_int32(v, "version", &c.version));
    return c;
}

namespace {

Status read_connection_set(const JsonValue& v, std::set<Connection>* out) {
    std::vector<Connection> list;
    COMET_RETURN_IF_ERROR(read_object_list(v, "connectionSet", &list));
    out->insert(list.begin(), list.end());
    return Status::ok();
}

void write_connection_set(JsonWriter& w, const std::set<Connection>& set) {
    w.key("connectionSet").begin_array();
    for (const auto& c : set) {
        c.write_json(w);
    }
    w.end_array();
}

}  // namespace

void ConsumerConnection::write_json(JsonWriter& w) const {
    w.begin_object();
    write_connection_set(w, connection_set);
    if (consume_from_where) {
        w.member("consumeFromWhere", *consume_from_where);
    }
    if (consume_type) {
        w.member("consumeType", *consume_type);
    }
    if (message_model) {
        w.member("messageModel", *message_model);
    }
    w.key("subscriptionTable").begin_object();
    for (const auto& [topic, sub] : subscription_table) {
        w.key(topic);
        sub.write_json(w);
    }
    w.end_object().end_object();
}

Result<ConsumerConnection> ConsumerConnection::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "ConsumerConnection"));
    ConsumerConnection c;
    COMET_RETURN_IF_ERROR(read_connection_set(v, &c.connection_set));
    COMET_RETURN_IF_ERROR(read_string(v, "consumeFromWhere", &c.consume_from_where));
    COMET_RETURN_IF_ERROR(read_string(v, "consumeType", &c.consume_type));
    COMET_RETURN_IF_ERROR(read_string(v, "messageModel", &c.message_model));
    COMET_RETURN_IF_ERROR(read_object_map(v, "subscriptionTable", &c.subscription_table));
    return c;
}

void ProducerConnection::write_json(JsonWriter& w) const {
    w.begin_object();
    write_connection_set(w, connection_set);
    w.end_object();
}

Result<ProducerConnection> ProducerConnection::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "ProducerConnection"));
    ProducerConnection p;
    COMET_RETURN_IF_ERROR(read_connection_set(v, &p.connection_set));
    return p;
}

namespace {

// Whitespace between a key and its value, and before a key or a continued line.
bool is_properties_blank(char c) { return c == ' ' || c == '\t' || c == '\f'; }

// The logical lines of `text`: a line ending in an odd number of '\' continues on the next
// one, whose leading whitespace is dropped.
std::vector<std::string> join_properties_lines(std::string_view text) {
    std::vector<std::string> lines;
    std::string cur;
    bool continuing = false;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t nl = text.find_first_of("\r\n", pos);
        std::string_view line = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
        if (continuing) {
            size_t i = 0;
            while (i < line.size() && is_properties_blank(line[i])) {
                ++i;
            }
            line.remove_prefix(i);
        }
        size_t backslashes = 0;
        while (backslashes < line.size() && line[line.size() - 1 - backslashes] == '\\') {
            ++backslashes;
        }
        if (backslashes % 2 == 1) {
            cur.append(line.substr(0, line.size() - 1));
            continuing = true;
            continue;
        }
        cur.append(line);
        lines.push_back(std::move(cur));
        cur.clear();
        continuing = false;
    }
    return lines;
}

// Code point `cp` (below 0x10000) appended as UTF-8.
void append_properties_utf8(uint32_t cp, std::string* target) {
    if (cp < 0x80) {
        target->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        target->push_back(static_cast<char>(0xC0 | (cp >> 6)));
        target->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        target->push_back(static_cast<char>(0xE0 | (cp >> 12)));
        target->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        target->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

// The escape after the '\' at raw[i] (Requires: i + 1 < raw.size()) appended to *target;
// \uXXXX takes up to four hex digits. Returns the index of the escape's last character.
size_t unescape_properties_char(const std::string& raw, size_t i, std::string* target) {
    char e = raw[++i];
    switch (e) {
        case 't':
            target->push_back('\t');
            break;
        case 'n':
            target->push_back('\n');
            break;
        case 'r':
            target->push_back('\r');
            break;
        case 'f':
            target->push_back('\f');
            break;
        case 'u': {
            uint32_t cp = 0;
            int digits = 0;
            while (digits < 4 && i + 1 < raw.size() &&
                   std::isxdigit(static_cast<unsigned char>(raw[i + 1]))) {
                char h = raw[++i];
                cp = cp * 16 + static_cast<uint32_t>(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
                ++digits;
            }
            append_properties_utf8(cp, target);
            break;
        }
        default:
            target->push_back(e);
    }
    return i;
}

// The separator that ends a key at raw[i]: whitespace, then at most one '='/':', then
// whitespace. Returns the index of its last character.
size_t skip_properties_separator(const std::string& raw, size_t i) {
    size_t j = i;
    while (j < raw.size() && is_properties_blank(raw[j])) {
        ++j;
    }
    if (j < raw.size() && (raw[j] == '=' || raw[j] == ':')) {
        ++j;
    }
    while (j < raw.size() && is_properties_blank(raw[j])) {
        ++j;
    }
    return j - 1;
}

// One logical line into *key and *value (escapes decoded); false for a blank or comment line.
bool parse_properties_line(const std::string& raw, std::string* key, std::string* value) {
    size_t i = 0;
    while (i < raw.size() && is_properties_blank(raw[i])) {
        ++i;
    }
    if (i >= raw.size() || raw[i] == '#' || raw[i] == '!') {
        return false;
    }
    std::string* target = key;
    bool in_key = true;
    for (; i < raw.size(); ++i) {
        char c = raw[i];
        if (c == '\\' && i + 1 < raw.size()) {
            i = unescape_properties_char(raw, i, target);
            continue;
        }
        if (in_key && (c == '=' || c == ':' || is_properties_blank(c))) {
            in_key = false;
            i = skip_properties_separator(raw, i);
            target = value;
            continue;
        }
        target->push_back(c);
    }
    return true;
}

}  // namespace

std::map<std::string, std::string> parse_properties_text(std::string_view text) {
    std::map<std::string, std::string> out;
    for (const std::string& raw : join_properties_lines(text)) {
        std::string key;
        std::string value;
        if (parse_properties_line(raw, &key, &value)) {
            out[std::move(key)] = std::move(value);
        }
    }
    return out;
}

std::string encode_properties_text(const std::map<std::string, std::string>& props) {
    std::string out;
    for (const auto& [k, v] : props) {
        out.append(k).append("=").append(v).append("\n");
    }
    return out;
}

}  // namespace comet::protocol
