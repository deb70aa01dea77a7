#include "protocol/route_bodies.h"

#include <zlib.h>

#include "base/bytes.h"
#include "protocol/json_lists.h"
#include "protocol/namesrv_headers.h"

namespace comet::protocol {
namespace {

// Decompressed RegisterBrokerBody larger than this is rejected (zip-bomb guard).
constexpr size_t kMaxInflatedBytes = 64 * 1024 * 1024;
constexpr int32_t kVersionV4_9_4 = 401;
constexpr int32_t kVersionV5_0_0 = 413;

void write_long_string_map(JsonWriter& w, const std::map<int64_t, std::string>& m,
                           RouteKeyStyle style = RouteKeyStyle::kStandard) {
    w.begin_object();
    for (const auto& [k, v] : m) {
        if (style == RouteKeyStyle::kStandard) {
            w.key(std::to_string(k));
        } else {
            w.raw_key(std::to_string(k));
        }
        w.value(v);
    }
    w.end_object();
}

void put_len_prefixed(std::string* out, std::string_view s) {
    ByteWriter w(out);
    w.be32(static_cast<uint32_t>(s.size()));
    w.bytes(s);
}

bool get_len_prefixed(ByteReader& r, std::string_view* s) {
    uint32_t len = 0;
    return r.be32(&len) && len <= 0x7FFFFFFF && r.bytes(len, s);
}

Result<std::string> inflate_all(std::string_view in) {
    z_stream zs{};
    if (inflateInit(&zs) != Z_OK) {
        return Status::error(Errc::kInternal, "inflateInit failed");
    }
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    zs.avail_in = static_cast<uInt>(in.size());
    std::string out;
    char buf[16384];
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        zs.next_out = reinterpret_cast<Bytef*>(buf);
        zs.avail_out = sizeof(buf);
        rc = inflate(&zs, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) {
            inflateEnd(&zs);
            return Status::error(Errc::kInvalidArgument,
                                 "compressed RegisterBrokerBody: zlib error {}", rc);
        }
        out.append(buf, sizeof(buf) - zs.avail_out);
        if (out.size() > kMaxInflatedBytes) {
            inflateEnd(&zs);
            return Status::error(Errc::kInvalidArgument,
                                 "compressed RegisterBrokerBody inflates beyond {} bytes",
                                 kMaxInflatedBytes);
        }
        if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
            inflateEnd(&zs);
            return Status::error(Errc::kInvalidArgument,
                                 "compressed RegisterBrokerBody: truncated zlib stream");
        }
    }
    inflateEnd(&zs);
    return out;
}

}  // namespace

std::string perm_to_string(int32_t perm) {
    std::string s = "---";
    if (perm & kPermRead) {
        s[0] = 'R';
    }
    if (perm & kPermWrite) {
        s[1] = 'W';
    }
    if (perm & kPermInherit) {
        s[2] = 'X';
    }
    return s;
}

std::string_view topic_filter_type_name(TopicFilterType t) {
    return t == TopicFilterType::kMultiTag ? "MULTI_TAG" : "SINGLE_TAG";
}

TopicFilterType topic_filter_type_from_name(std::string_view name) {
    return name == "MULTI_TAG" ? TopicFilterType::kMultiTag : TopicFilterType::kSingleTag;
}

// ---- DataVersion ----
void DataVersion::write_json(JsonWriter& w) const {
    w.begin_object()
        .member("counter", counter)
        .member("stateVersion", state_version)
        .member("timestamp", timestamp)
        .end_object();
}

Result<DataVersion> DataVersion::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "DataVersion"));
    DataVersion d;
    COMET_RETURN_IF_ERROR(read_int64(v, "counter", &d.counter));
    COMET_RETURN_IF_ERROR(read_int64(v, "stateVersion", &d.state_version));
    COMET_RETURN_IF_ERROR(read_int64(v, "timestamp", &d.timestamp));
    return d;
}

// ---- QueueData ----
void QueueData::write_json(JsonWriter& w) const {
    w.begin_object()
        .member("brokerName", broker_name)
        .member("perm", perm)
        .member("readQueueNums", read_queue_nums)
        .member("topicSysFlag", topic_sys_flag)
        .member("writeQueueNums", write_queue_nums)
        .end_object();
}

Result<QueueData> QueueData::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "QueueData"));
    QueueData q;
    COMET_RETURN_IF_ERROR(read_string(v, "brokerName", &q.broker_name));
    COMET_RETURN_IF_ERROR(read_int32(v, "perm", &q.perm));
    COMET_RETURN_IF_ERROR(read_int32(v, "readQueueNums", &q.read_queue_nums));
    COMET_RETURN_IF_ERROR(read_int32(v, "writeQueueNums", &q.write_queue_nums));
    // Brokers older than ~4.5 spelled it topicSynFlag.
    COMET_RETURN_IF_ERROR(read_int32(v, "topicSynFlag", &q.topic_sys_flag));
    COMET_RETURN_IF_ERROR(read_int32(v, "topicSysFlag", &q.topic_sys_flag));
    return q;
}

RouteKeyStyle route_key_style(int32_t request_version, bool accept_standard_json_only) {
    return request_version >= kVersionV4_9_4 || accept_standard_json_only
               ? RouteKeyStyle::kStandard
               : RouteKeyStyle::kFastjson;
}

// ---- BrokerData ----
void BrokerData::write_json(JsonWriter& w) const { write_json(w, RouteKeyStyle::kStandard); }

void BrokerData::write_json(JsonWriter& w, RouteKeyStyle style) const {
    w.begin_object().key("brokerAddrs");
    write_long_string_map(w, broker_addrs, style);
    w.member("brokerName", broker_name).member("cluster", cluster);
    if (enable_acting_master) {
        w.member("enableActingMaster", *enable_acting_master);
    }
    if (zone_name) {
        w.member("zoneName", *zone_name);
    }
    w.end_object();
}

Result<BrokerData> BrokerData::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "BrokerData"));
    BrokerData b;
    COMET_RETURN_IF_ERROR(read_long_string_map(v, "brokerAddrs", &b.broker_addrs));
    COMET_RETURN_IF_ERROR(read_string(v, "brokerName", &b.broker_name));
    COMET_RETURN_IF_ERROR(read_string(v, "cluster", &b.cluster));
    COMET_RETURN_IF_ERROR(read_bool(v, "enableActingMaster", &b.enable_acting_master));
    COMET_RETURN_IF_ERROR(read_string(v, "zoneName", &b.zone_name));
    return b;
}

// ---- TopicRouteData ----
void TopicRouteData::write_json(JsonWriter& w) const { write_json(w, RouteKeyStyle::kStandard); }

void TopicRouteData::write_json(JsonWriter& w, RouteKeyStyle style) const {
    w.begin_object().key("brokerDatas").begin_array();
    for (const auto& b : broker_datas) {
        b.write_json(w, style);
    }
    w.end_array().key("filterServerTable").begin_object();
    for (const auto& [broker, servers] : filter_server_table) {
        w.key(broker).begin_array();
        for (const auto& s : servers) {
            w.value(s);
        }
        w.end_array();
    }
    w.end_object();
    if (order_topic_conf) {
        w.member("orderTopicConf", *order_topic_conf);
    }
    w.key("queueDatas").begin_array();
    for (const auto& q : queue_datas) {
        q.write_json(w);
    }
    w.end_array().end_object();
}

Result<TopicRouteData> TopicRouteData::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "TopicRouteData"));
    TopicRouteData r;
    COMET_RETURN_IF_ERROR(read_object_list(v, "brokerDatas", &r.broker_datas));
    COMET_RETURN_IF_ERROR(read_object_list(v, "queueDatas", &r.queue_datas));
    COMET_RETURN_IF_ERROR(read_string(v, "orderTopicConf", &r.order_topic_conf));
    if (const JsonValue* f = find_member(v, "filterServerTable")) {
        COMET_RETURN_IF_ERROR(expect_object(*f, "filterServerTable"));
        for (const auto& m : f->GetObject()) {
            std::vector<std::string> servers;
            if (!m.value.IsNull()) {
                if (!m.value.IsArray()) {
                    return Status::error(Errc::kInvalidArgument,
                                         "JSON body: filterServerTable entry is not an array");
                }
                for (const auto& s : m.value.GetArray()) {
                    COMET_ASSIGN_OR_RETURN(std::string text, json_to_string(s, "filterServer"));
                    servers.push_back(std::move(text));
                }
            }
            r.filter_server_table[std::string(m.name.GetString(), m.name.GetStringLength())] =
                std::move(servers);
        }
    }
    return r;
}

// ---- ClusterInfo ----
void ClusterInfo::write_json(JsonWriter& w) const {
    w.begin_object().key("brokerAddrTable").begin_object();
    for (const auto& [name, b] : broker_addr_table) {
        w.key(name);
        b.write_json(w);
    }
    w.end_object().key("clusterAddrTable").begin_object();
    for (const auto& [cluster, brokers] : cluster_addr_table) {
        w.key(cluster).begin_array();
        for (const auto& b : brokers) {
            w.value(b);
        }
        w.end_array();
    }
    w.end_object().end_object();
}

Result<ClusterInfo> ClusterInfo::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "ClusterInfo"));
    ClusterInfo c;
    COMET_RETURN_IF_ERROR(read_object_map(v, "brokerAddrTable", &c.broker_addr_table));
    if (const JsonValue* t = find_member(v, "clusterAddrTable")) {
        COMET_RETURN_IF_ERROR(expect_object(*t, "clusterAddrTable"));
        for (const auto& m : t->GetObject()) {
            auto& set =
                c.cluster_addr_table[std::string(m.name.GetString(), m.name.GetStringLength())];
            if (m.value.IsNull()) {
                continue;
            }
            if (!m.value.IsArray()) {
                return Status::error(Errc::kInvalidArgument,
                                     "JSON body: clusterAddrTable entry is not an array");
            }
            for (const auto& s : m.value.GetArray()) {
                COMET_ASSIGN_OR_RETURN(std::string text, json_to_string(s, "clusterAddrTable"));
                set.insert(std::move(text));
            }
        }
    }
    return c;
}

// ---- TopicList ----
void TopicList::write_json(JsonWriter& w) const {
    w.begin_object();
    if (broker_addr) {
        w.member("brokerAddr", *broker_addr);
    }
    w.key("topicList").begin_array();
    for (const auto& t : topic_list) {
        w.value(t);
    }
    w.end_array().end_object();
}

Result<TopicList> TopicList::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "TopicList"));
    TopicList t;
    COMET_RETURN_IF_ERROR(read_string(v, "brokerAddr", &t.broker_addr));
    COMET_RETURN_IF_ERROR(read_string_list(v, "topicList", &t.topic_list));
    return t;
}

// ---- KvTable ----
void KvTable::write_json(JsonWriter& w) const {
    w.begin_object().key("table");
    write_string_map(w, table);
    w.end_object();
}

Result<KvTable> KvTable::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "KVTable"));
    KvTable t;
    COMET_RETURN_IF_ERROR(read_string_map(v, "table", &t.table));
    return t;
}

// ---- TopicConfig ----
void TopicConfig::write_json(JsonWriter& w) const {
    w.begin_object();
    write_attributes(w, attributes);
    w.member("order", order)
        .member("perm", perm)
        .member("readQueueNums", read_queue_nums)
        .member("topicFilterType", topic_filter_type_name(topic_filter_type))
        .member("topicName", topic_name)
        .member("topicSysFlag", topic_sys_flag)
        .member("writeQueueNums", write_queue_nums)
        .end_object();
}

Result<TopicConfig> TopicConfig::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "TopicConfig"));
    TopicConfig t;
    COMET_RETURN_IF_ERROR(read_string_map(v, "attributes", &t.attributes));
    COMET_RETURN_IF_ERROR(read_bool(v, "order", &t.order));
    COMET_RETURN_IF_ERROR(read_int32(v, "perm", &t.perm));
    COMET_RETURN_IF_ERROR(read_int32(v, "readQueueNums", &t.read_queue_nums));
    std::optional<std::string> filter_type;
    COMET_RETURN_IF_ERROR(read_string(v, "topicFilterType", &filter_type));
    if (filter_type) {
        t.topic_filter_type = topic_filter_type_from_name(*filter_type);
    }
    COMET_RETURN_IF_ERROR(read_string(v, "topicName", &t.topic_name));
    COMET_RETURN_IF_ERROR(read_int32(v, "topicSysFlag", &t.topic_sys_flag));
    COMET_RETURN_IF_ERROR(read_int32(v, "writeQueueNums", &t.write_queue_nums));
    return t;
}

std::string TopicConfig::encode_text() const {
    std::string text = fmt::format("{} {} {} {} {}", topic_name, read_queue_nums, write_queue_nums,
                                   perm, topic_filter_type_name(topic_filter_type));
    if (!attributes.empty()) {
        JsonWriter attrs;
        write_string_map(attrs, attributes);
        text += ' ';
        text += attrs.str();
    }
    return text;
}

Result<TopicConfig> TopicConfig::decode_text(std::string_view text) {
    std::vector<std::string_view> parts;
    size_t pos = 0;
    while (parts.size() < 5) {
        size_t sp = text.find(' ', pos);
        if (sp == std::string_view::npos) {
            parts.push_back(text.substr(pos));
            pos = text.size();
            break;
        }
        parts.push_back(text.substr(pos, sp - pos));
        pos = sp + 1;
    }
    if (parts.size() < 5) {
        return Status::error(Errc::kInvalidArgument,
                             "TopicConfig text has {} fields, needs 5: '{}'", parts.size(), text);
    }
    TopicConfig t;
    t.topic_name = std::string(parts[0]);
    COMET_ASSIGN_OR_RETURN(t.read_queue_nums, parse_ext_int32("readQueueNums", parts[1]));
    COMET_ASSIGN_OR_RETURN(t.write_queue_nums, parse_ext_int32("writeQueueNums", parts[2]));
    COMET_ASSIGN_OR_RETURN(t.perm, parse_ext_int32("perm", parts[3]));
    t.topic_filter_type = topic_filter_type_from_name(parts[4]);
    std::string_view rest = pos < text.size() ? text.substr(pos) : std::string_view();
    if (!rest.empty()) {
        COMET_ASSIGN_OR_RETURN(auto doc, parse_json_body(rest));
        if (!doc.IsObject()) {
            return Status::error(Errc::kInvalidArgument,
                                 "TopicConfig attributes are not an object");
        }
        const JsonValue& attrs = doc;  // const iterators: no C++20 operator ambiguity
        for (const auto& m : attrs.GetObject()) {
            COMET_ASSIGN_OR_RETURN(std::string val, json_to_string(m.value, "attributes"));
            t.attributes[std::string(m.name.GetString(), m.name.GetStringLength())] = val;
        }
    }
    return t;
}

// ---- TopicConfigSerializeWrapper ----
void TopicConfigSerializeWrapper::write_json(JsonWriter& w) const {
    w.begin_object().key("dataVersion");
    data_version.write_json(w);
    if (mapping_data_version) {
        w.key("mappingDataVersion");
        mapping_data_version->write_json(w);
    }
    w.key("topicConfigTable").begin_object();
    for (const auto& [name, tc] : topic_config_table) {
        w.key(name);
        tc.write_json(w);
    }
    w.end_object().end_object();
}

Result<TopicConfigSerializeWrapper> TopicConfigSerializeWrapper::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "TopicConfigSerializeWrapper"));
    TopicConfigSerializeWrapper t;
    if (const JsonValue* d = find_member(v, "dataVersion")) {
        COMET_ASSIGN_OR_RETURN(t.data_version, DataVersion::from_json(*d));
    }
    if (const JsonValue* d = find_member(v, "mappingDataVersion")) {
        COMET_ASSIGN_OR_RETURN(t.mapping_data_version, DataVersion::from_json(*d));
    }
    COMET_RETURN_IF_ERROR(read_object_map(v, "topicConfigTable", &t.topic_config_table));
    return t;
}

// ---- RegisterBrokerBody ----
void RegisterBrokerBody::write_json(JsonWriter& w) const {
    w.begin_object().key("filterServerList").begin_array();
    for (const auto& s : filter_server_list) {
        w.value(s);
    }
    w.end_array().key("topicConfigSerializeWrapper");
    topic_config_serialize_wrapper.write_json(w);
    w.end_object();
}

Result<RegisterBrokerBody> RegisterBrokerBody::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "RegisterBrokerBody"));
    RegisterBrokerBody b;
    COMET_RETURN_IF_ERROR(read_string_list(v, "filterServerList", &b.filter_server_list));
    if (const JsonValue* t = find_member(v, "topicConfigSerializeWrapper")) {
        COMET_ASSIGN_OR_RETURN(b.topic_config_serialize_wrapper,
                               TopicConfigSerializeWrapper::from_json(*t));
    }
    return b;
}

std::string RegisterBrokerBody::encode_compressed(int32_t request_version) const {
    std::string raw;
    put_len_prefixed(&raw, topic_config_serialize_wrapper.data_version.encode());
    ByteWriter w(&raw);
    w.be32(static_cast<uint32_t>(topic_config_serialize_wrapper.topic_config_table.size()));
    for (const auto& [name, tc] : topic_config_serialize_wrapper.topic_config_table) {
        put_len_prefixed(&raw, tc.encode_text());
    }
    JsonWriter fs;
    fs.begin_array();
    for (const auto& s : filter_server_list) {
        fs.value(s);
    }
    fs.end_array();
    put_len_prefixed(&raw, fs.str());
    if (request_version >= kVersionV5_0_0) {
        w.be32(0);  // no static-topic mapping entries
    }
    uLongf bound = compressBound(static_cast<uLong>(raw.size()));
    std::string out(bound, '\0');
    int rc = compress2(reinterpret_cast<Bytef*>(out.data()), &bound,
                       reinterpret_cast<const Bytef*>(raw.data()), static_cast<uLong>(raw.size()),
                       Z_BEST_COMPRESSION);
    COMET_CHECK(rc == Z_OK, "compress2 failed: {}", rc);
    out.resize(bound);
    return out;
}

Result<RegisterBrokerBody> RegisterBrokerBody::decode_compressed(std::string_view body,
                                                                int32_t request_version) {
    COMET_ASSIGN_OR_RETURN(std::string raw, inflate_all(body));
    ByteReader r(raw);
    RegisterBrokerBody b;
    std::string_view part;
    if (!get_len_prefixed(r, &part)) {
        return Status::error(Errc::kInvalidArgument,
                             "compressed RegisterBrokerBody: truncated DataVersion");
    }
    COMET_ASSIGN_OR_RETURN(b.topic_config_serialize_wrapper.data_version,
                           DataVersion::decode(part));
    uint32_t count = 0;
    if (!r.be32(&count) || count > r.remaining() / 4) {
        return Status::error(Errc::kInvalidArgument,
                             "compressed RegisterBrokerBody: bad topic count");
    }
    for (uint32_t i = 0; i < count; ++i) {
        if (!get_len_prefixed(r, &part)) {
            return Status::error(Errc::kInvalidArgument,
                                 "compressed RegisterBrokerBody: truncated topic {} of {}", i,
                                 count);
        }
        COMET_ASSIGN_OR_RETURN(TopicConfig tc, TopicConfig::decode_text(part));
        b.topic_config_serialize_wrapper.topic_config_table[tc.topic_name] = std::move(tc);
    }
    if (!get_len_prefixed(r, &part)) {
        return Status::error(Errc::kInvalidArgument,
                             "compressed RegisterBrokerBody: truncated filterServerList");
    }
    if (!part.empty() && part != "null") {
        COMET_ASSIGN_OR_RETURN(auto doc, parse_json_body(part));
        if (!doc.IsArray()) {
            return Status::error(Errc::kInvalidArgument,
                                 "compressed RegisterBrokerBody: filterServerList is not an array");
        }
        for (const auto& s : doc.GetArray()) {
            COMET_ASSIGN_OR_RETURN(std::string text, json_to_string(s, "filterServerList"));
            b.filter_server_list.push_back(std::move(text));
        }
    }
    // Brokers >= 5.0.0: mapping count + entries (Comet serves no static topics: framing is
    // validated, the entries skipped).
    if (request_version >= kVersionV5_0_0) {
        uint32_t mappings = 0;
        if (!r.be32(&mappings)) {
            return Status::error(Errc::kInvalidArgument,
                                 "compressed RegisterBrokerBody: truncated mapping count");
        }
        for (uint32_t i = 0; i < mappings; ++i) {
            if (!get_len_prefixed(r, &part)) {
                return Status::error(Errc::kInvalidArgument,
                                     "compressed RegisterBrokerBody: truncated mapping {}", i);
            }
        }
    }
    return b;
}

Result<RegisterBrokerBody> RegisterBrokerBody::decode_body(std::string_view body, bool compressed,
                                                           int32_t request_version) {
    return compressed ? decode_compressed(body, request_version) : decode(body);
}

// ---- RegisterBrokerResult ----
void RegisterBrokerResult::to_response(RemotingCommand& resp) const {
    RegisterBrokerResponseHeader h{ha_server_addr, master_addr};
    h.to_ext(resp);
    if (kv_table) {
        resp.body = kv_table->encode();
    }
}

Result<RegisterBrokerResult> RegisterBrokerResult::from_response(const RemotingCommand& resp) {
    COMET_ASSIGN_OR_RETURN(auto h, RegisterBrokerResponseHeader::from_ext(resp));
    RegisterBrokerResult r;
    r.ha_server_addr = std::move(h.ha_server_addr);
    r.master_addr = std::move(h.master_addr);
    if (!resp.body.empty()) {
        COMET_ASSIGN_OR_RETURN(r.kv_table, KvTable::decode(resp.body));
    }
    return r;
}

// ---- BrokerMemberGroup ----
void BrokerMemberGroup::write_json(JsonWriter& w) const {
    w.begin_object().key("brokerAddrs");
    write_long_string_map(w, broker_addrs);
    w.member("brokerName", broker_name).member("cluster", cluster).end_object();
}

Result<BrokerMemberGroup> BrokerMemberGroup::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "BrokerMemberGroup"));
    BrokerMemberGroup g;
    COMET_RETURN_IF_ERROR(read_long_string_map(v, "brokerAddrs", &g.broker_addrs));
    COMET_RETURN_IF_ERROR(read_string(v, "brokerName", &g.broker_name));
    COMET_RETURN_IF_ERROR(read_string(v, "cluster", &g.cluster));
    return g;
}

void GetBrokerMemberGroupResponseBody::write_json(JsonWriter& w) const {
    w.begin_object().key("brokerMemberGroup");
    broker_member_group.write_json(w);
    w.end_object();
}

Result<GetBrokerMemberGroupResponseBody> GetBrokerMemberGroupResponseBody::from_json(
    const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "GetBrokerMemberGroupResponseBody"));
    GetBrokerMemberGroupResponseBody b;
    if (const JsonValue* g = find_member(v, "brokerMemberGroup")) {
        COMET_ASSIGN_OR_RETURN(b.broker_member_group, BrokerMemberGroup::from_json(*g));
    }
    return b;
}

}  // namespace comet::protocol
