#include "namesrv/route_json.h"

#include <zlib.h>

#include <charconv>

#include "protocol/json_body.h"

namespace comet::namesrv {

using protocol::JsonValue;
using protocol::JsonWriter;

namespace {

constexpr int32_t kVersionV5_0_0 = 413;
constexpr int32_t kVersionV4_9_4 = 401;
// A compressed register body larger than this once inflated is refused (a broker with 100k
// topics stays far below it).
constexpr size_t kMaxInflatedBytes = 64 * 1024 * 1024;

Status read_data_version(const JsonValue& v, DataVersion* out) {
    COMET_RETURN_IF_ERROR(protocol::expect_object(v, "dataVersion"));
    COMET_RETURN_IF_ERROR(protocol::read_int64(v, "timestamp", &out->timestamp));
    COMET_RETURN_IF_ERROR(protocol::read_int64(v, "counter", &out->counter));
    COMET_RETURN_IF_ERROR(protocol::read_int64(v, "stateVersion", &out->state_version));
    return Status::ok();
}

void write_data_version(JsonWriter& w, const DataVersion& v) {
    w.begin_object();
    w.member("counter", v.counter);
    w.member("stateVersion", v.state_version);
    w.member("timestamp", v.timestamp);
    w.end_object();
}

Status read_topic_config(const JsonValue& v, const std::string& name, TopicConfig* tc) {
    COMET_RETURN_IF_ERROR(protocol::expect_object(v, "topicConfigTable." + name));
    tc->topic_name = name;
    COMET_RETURN_IF_ERROR(protocol::read_string(v, "topicName", &tc->topic_name));
    COMET_RETURN_IF_ERROR(protocol::read_int32(v, "readQueueNums", &tc->read_queue_nums));
    COMET_RETURN_IF_ERROR(protocol::read_int32(v, "writeQueueNums", &tc->write_queue_nums));
    COMET_RETURN_IF_ERROR(protocol::read_int32(v, "perm", &tc->perm));
    COMET_RETURN_IF_ERROR(protocol::read_int32(v, "topicSysFlag", &tc->topic_sys_flag));
    COMET_RETURN_IF_ERROR(protocol::read_bool(v, "order", &tc->order));
    COMET_RETURN_IF_ERROR(protocol::read_string(v, "topicFilterType", &tc->topic_filter_type));
    if (tc->topic_name.empty()) {
        return Status::error(Errc::kInvalidArgument, "topicConfigTable.{}: empty topicName",
                             name);
    }
    return Status::ok();
}

void write_topic_config(JsonWriter& w, const TopicConfig& tc) {
    w.begin_object();
    w.member("order", tc.order);
    w.member("perm", tc.perm);
    w.member("readQueueNums", tc.read_queue_nums);
    w.member("topicFilterType", tc.topic_filter_type);
    w.member("topicName", tc.topic_name);
    w.member("topicSysFlag", tc.topic_sys_flag);
    w.member("writeQueueNums", tc.write_queue_nums);
    w.end_object();
}

void write_broker_addrs(JsonWriter& w, const std::map<int64_t, std::string>& addrs,
                        RouteKeyStyle style) {
    w.begin_object();
    for (const auto& [id, addr] : addrs) {
        if (style == RouteKeyStyle::kStandard) {
            w.key(std::to_string(id));
        } else {
            w.raw_key(std::to_string(id));
        }
        w.value(addr);
    }
    w.end_object();
}

void write_broker_data(JsonWriter& w, const BrokerData& bd, RouteKeyStyle style) {
    w.begin_object();
    w.key("brokerAddrs");
    write_broker_addrs(w, bd.broker_addrs, style);
    w.member("brokerName", bd.broker_name);
    w.member("cluster", bd.cluster);
    // RocketMQ 4.9 has no such field; 5.x writes it always. Omitted when false so the body is
    // byte-identical to 4.9.8's for ordinary brokers (clients ignore it either way).
    if (bd.enable_acting_master) {
        w.member("enableActingMaster", true);
    }
    if (bd.zone_name) {
        w.member("zoneName", *bd.zone_name);
    }
    w.end_object();
}

Status read_broker_data(const JsonValue& v, BrokerData* bd) {
    COMET_RETURN_IF_ERROR(protocol::expect_object(v, "brokerData"));
    COMET_RETURN_IF_ERROR(protocol::read_string(v, "cluster", &bd->cluster));
    COMET_RETURN_IF_ERROR(protocol::read_string(v, "brokerName", &bd->broker_name));
    COMET_RETURN_IF_ERROR(protocol::read_long_string_map(v, "brokerAddrs", &bd->broker_addrs));
    COMET_RETURN_IF_ERROR(protocol::read_bool(v, "enableActingMaster", &bd->enable_acting_master));
    COMET_RETURN_IF_ERROR(protocol::read_string(v, "zoneName", &bd->zone_name));
    return Status::ok();
}

// Big-endian reader over the inflated compressed body.
class Cursor {
public:
    explicit Cursor(std::string_view data) : data_(data) {}
    Result<int32_t> int32(std::string_view what) {
        if (data_.size() - pos_ < 4) {
            return Status::error(Errc::kCorruption, "compressed register body truncated at {}",
                                 what);
        }
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            v = (v << 8) | static_cast<uint8_t>(data_[pos_ + static_cast<size_t>(i)]);
        }
        pos_ += 4;
        return static_cast<int32_t>(v);
    }
    Result<std::string_view> chunk(std::string_view what) {
        COMET_ASSIGN_OR_RETURN(int32_t len, int32(what));
        if (len < 0 || static_cast<size_t>(len) > data_.size() - pos_) {
            return Status::error(Errc::kCorruption,
                                 "compressed register body: {} length {} exceeds the data", what,
                                 len);
        }
        std::string_view out = data_.substr(pos_, static_cast<size_t>(len));
        pos_ += static_cast<size_t>(len);
        return out;
    }

private:
    std::string_view data_;
    size_t pos_ = 0;
};

Result<std::string> inflate_all(std::string_view data) {
    z_stream zs{};
    if (inflateInit(&zs) != Z_OK) {
        return Status(Errc::kInternal, "inflateInit failed");
    }
    std::string out;
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    zs.avail_in = static_cast<uInt>(data.size());
    int rc = Z_OK;
    char buf[16384];
    while (rc != Z_STREAM_END) {
        zs.next_out = reinterpret_cast<Bytef*>(buf);
        zs.avail_out = sizeof(buf);
        rc = inflate(&zs, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) {
            inflateEnd(&zs);
            return Status::error(Errc::kCorruption, "compressed register body: inflate error {}",
                                 rc);
        }
        out.append(buf, sizeof(buf) - zs.avail_out);
        if (out.size() > kMaxInflatedBytes) {
            inflateEnd(&zs);
            return Status(Errc::kResourceExhausted, "compressed register body inflates too large");
        }
        if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
            inflateEnd(&zs);
            return Status(Errc::kCorruption, "compressed register body: truncated zlib stream");
        }
    }
    inflateEnd(&zs);
    return out;
}

Result<int32_t> parse_int_field(std::string_view s, std::string_view what) {
    int32_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) {
        return Status::error(Errc::kInvalidArgument, "topic config: bad {} '{}'", what, s);
    }
    return v;
}

// TopicConfig#decode: "name read write perm filterType [attributesJson]".
Result<TopicConfig> decode_topic_config_line(std::string_view line) {
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (parts.size() < 5) {
        size_t sp = line.find(' ', start);
        if (sp == std::string_view::npos) {
            parts.push_back(line.substr(start));
            start = line.size();
            break;
        }
        parts.push_back(line.substr(start, sp - start));
        start = sp + 1;
    }
    if (parts.size() < 5) {
        return Status::error(Errc::kInvalidArgument, "topic config '{}': fewer than 5 fields",
                             line);
    }
    TopicConfig tc;
    tc.topic_name = std::string(parts[0]);
    COMET_ASSIGN_OR_RETURN(tc.read_queue_nums, parse_int_field(parts[1], "readQueueNums"));
    COMET_ASSIGN_OR_RETURN(tc.write_queue_nums, parse_int_field(parts[2], "writeQueueNums"));
    COMET_ASSIGN_OR_RETURN(tc.perm, parse_int_field(parts[3], "perm"));
    tc.topic_filter_type = std::string(parts[4]);
    if (tc.topic_name.empty()) {
        return Status(Errc::kInvalidArgument, "topic config with an empty name");
    }
    return tc;
}

void append_be32(std::string* out, uint32_t v) {
    out->push_back(static_cast<char>(v >> 24));
    out->push_back(static_cast<char>(v >> 16));
    out->push_back(static_cast<char>(v >> 8));
    out->push_back(static_cast<char>(v));
}

}  // namespace

Result<RegisterBrokerBody> decode_register_broker_body(std::string_view json) {
    COMET_ASSIGN_OR_RETURN(rapidjson::Document doc, protocol::parse_json_body(json));
    COMET_RETURN_IF_ERROR(protocol::expect_object(doc, "RegisterBrokerBody"));
    RegisterBrokerBody body;
    COMET_RETURN_IF_ERROR(
        protocol::read_string_list(doc, "filterServerList", &body.filter_server_list));
    const JsonValue* wrapper = protocol::find_member(doc, "topicConfigSerializeWrapper");
    if (wrapper == nullptr) {
        return body;
    }
    COMET_RETURN_IF_ERROR(protocol::expect_object(*wrapper, "topicConfigSerializeWrapper"));
    if (const JsonValue* dv = protocol::find_member(*wrapper, "dataVersion")) {
        COMET_RETURN_IF_ERROR(read_data_version(*dv, &body.data_version));
    }
    if (const JsonValue* table = protocol::find_member(*wrapper, "topicConfigTable")) {
        COMET_RETURN_IF_ERROR(protocol::expect_object(*table, "topicConfigTable"));
        for (auto it = table->MemberBegin(); it != table->MemberEnd(); ++it) {
            std::string name(it->name.GetString(), it->name.GetStringLength());
            TopicConfig tc;
            COMET_RETURN_IF_ERROR(read_topic_config(it->value, name, &tc));
            body.topic_config_table[tc.topic_name] = std::move(tc);
        }
    }
    return body;
}

Result<RegisterBrokerBody> decode_compressed_register_broker_body(std::string_view data,
                                                                  int32_t request_version) {
    COMET_ASSIGN_OR_RETURN(std::string raw, inflate_all(data));
    Cursor c(raw);
    RegisterBrokerBody body;
    COMET_ASSIGN_OR_RETURN(std::string_view dv_json, c.chunk("dataVersion"));
    COMET_ASSIGN_OR_RETURN(body.data_version, decode_data_version(dv_json));
    COMET_ASSIGN_OR_RETURN(int32_t topics, c.int32("topic count"));
    if (topics < 0) {
        return Status::error(Errc::kCorruption, "compressed register body: topic count {}",
                             topics);
    }
    for (int32_t i = 0; i < topics; ++i) {
        COMET_ASSIGN_OR_RETURN(std::string_view line, c.chunk("topic config"));
        COMET_ASSIGN_OR_RETURN(TopicConfig tc, decode_topic_config_line(line));
        body.topic_config_table[tc.topic_name] = std::move(tc);
    }
    COMET_ASSIGN_OR_RETURN(std::string_view fs_json, c.chunk("filterServerList"));
    if (!fs_json.empty() && fs_json != "null") {
        std::string wrapped = "{\"l\":" + std::string(fs_json) + "}";
        COMET_ASSIGN_OR_RETURN(rapidjson::Document doc, protocol::parse_json_body(wrapped));
        COMET_RETURN_IF_ERROR(protocol::read_string_list(doc, "l", &body.filter_server_list));
    }
    if (request_version >= kVersionV5_0_0) {
        // Static-topic mapping infos: Comet does not serve static topics; validate framing only.
        COMET_ASSIGN_OR_RETURN(int32_t n, c.int32("mapping count"));
        for (int32_t i = 0; i < n; ++i) {
            COMET_ASSIGN_OR_RETURN(std::string_view ignored, c.chunk("mapping info"));
            (void)ignored;
        }
    }
    return body;
}

std::string encode_register_broker_body(const RegisterBrokerBody& body) {
    JsonWriter w;
    w.begin_object();
    w.key("filterServerList").begin_array();
    for (const std::string& s : body.filter_server_list) {
        w.value(s);
    }
    w.end_array();
    w.key("topicConfigSerializeWrapper").begin_object();
    w.key("dataVersion");
    write_data_version(w, body.data_version);
    w.key("topicConfigTable").begin_object();
    for (const auto& [name, tc] : body.topic_config_table) {
        w.key(name);
        write_topic_config(w, tc);
    }
    w.end_object();
    w.end_object();
    w.end_object();
    return w.take();
}

std::string encode_compressed_register_broker_body(const RegisterBrokerBody& body,
                                                   int32_t request_version) {
    std::string raw;
    std::string dv = encode_data_version(body.data_version);
    append_be32(&raw, static_cast<uint32_t>(dv.size()));
    raw += dv;
    append_be32(&raw, static_cast<uint32_t>(body.topic_config_table.size()));
    for (const auto& [name, tc] : body.topic_config_table) {
        std::string line = fmt::format("{} {} {} {} {}", tc.topic_name, tc.read_queue_nums,
                                       tc.write_queue_nums, tc.perm, tc.topic_filter_type);
        append_be32(&raw, static_cast<uint32_t>(line.size()));
        raw += line;
    }
    JsonWriter fw;
    fw.begin_array();
    for (const std::string& s : body.filter_server_list) {
        fw.value(s);
    }
    fw.end_array();
    std::string fs = fw.take();
    append_be32(&raw, static_cast<uint32_t>(fs.size()));
    raw += fs;
    if (request_version >= kVersionV5_0_0) {
        append_be32(&raw, 0);
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

RouteKeyStyle route_key_style(int32_t request_version, bool accept_standard_json_only) {
    return request_version >= kVersionV4_9_4 || accept_standard_json_only
               ? RouteKeyStyle::kStandard
               : RouteKeyStyle::kFastjson;
}

std::string encode_topic_route_data(const TopicRouteData& route, RouteKeyStyle style) {
    JsonWriter w;
    w.begin_object();
    w.key("brokerDatas").begin_array();
    for (const BrokerData& bd : route.broker_datas) {
        write_broker_data(w, bd, style);
    }
    w.end_array();
    w.key("filterServerTable").begin_object();
    for (const auto& [addr, servers] : route.filter_server_table) {
        w.key(addr).begin_array();
        for (const std::string& s : servers) {
            w.value(s);
        }
        w.end_array();
    }
    w.end_object();
    if (route.order_topic_conf) {
        w.member("orderTopicConf", *route.order_topic_conf);
    }
    w.key("queueDatas").begin_array();
    for (const QueueData& qd : route.queue_datas) {
        w.begin_object();
        w.member("brokerName", qd.broker_name);
        w.member("perm", qd.perm);
        w.member("readQueueNums", qd.read_queue_nums);
        w.member("topicSysFlag", qd.topic_sys_flag);
        w.member("writeQueueNums", qd.write_queue_nums);
        w.end_object();
    }
    w.end_array();
    w.end_object();
    return w.take();
}

Result<TopicRouteData> decode_topic_route_data(std::string_view json) {
    COMET_ASSIGN_OR_RETURN(rapidjson::Document doc, protocol::parse_json_body(json));
    COMET_RETURN_IF_ERROR(protocol::expect_object(doc, "TopicRouteData"));
    TopicRouteData route;
    if (const JsonValue* arr = protocol::find_member(doc, "brokerDatas")) {
        if (!arr->IsArray()) {
            return Status(Errc::kInvalidArgument, "brokerDatas is not an array");
        }
        for (const JsonValue& v : arr->GetArray()) {
            BrokerData bd;
            COMET_RETURN_IF_ERROR(read_broker_data(v, &bd));
            route.broker_datas.push_back(std::move(bd));
        }
    }
    if (const JsonValue* arr = protocol::find_member(doc, "queueDatas")) {
        if (!arr->IsArray()) {
            return Status(Errc::kInvalidArgument, "queueDatas is not an array");
        }
        for (const JsonValue& v : arr->GetArray()) {
            COMET_RETURN_IF_ERROR(protocol::expect_object(v, "queueData"));
            QueueData qd;
            COMET_RETURN_IF_ERROR(protocol::read_string(v, "brokerName", &qd.broker_name));
            COMET_RETURN_IF_ERROR(protocol::read_int32(v, "perm", &qd.perm));
            COMET_RETURN_IF_ERROR(protocol::read_int32(v, "readQueueNums", &qd.read_queue_nums));
            COMET_RETURN_IF_ERROR(
                protocol::read_int32(v, "writeQueueNums", &qd.write_queue_nums));
            COMET_RETURN_IF_ERROR(protocol::read_int32(v, "topicSysFlag", &qd.topic_sys_flag));
            route.queue_datas.push_back(std::move(qd));
        }
    }
    if (const JsonValue* fst = protocol::find_member(doc, "filterServerTable")) {
        COMET_RETURN_IF_ERROR(protocol::expect_object(*fst, "filterServerTable"));
        for (auto it = fst->MemberBegin(); it != fst->MemberEnd(); ++it) {
            std::string addr(it->name.GetString(), it->name.GetStringLength());
            rapidjson::Document tmp;
            tmp.SetObject();
            JsonValue copy(it->value, tmp.GetAllocator());
            tmp.AddMember("l", copy, tmp.GetAllocator());
            COMET_RETURN_IF_ERROR(
                protocol::read_string_list(tmp, "l", &route.filter_server_table[addr]));
        }
    }
    COMET_RETURN_IF_ERROR(protocol::read_string(doc, "orderTopicConf", &route.order_topic_conf));
    return route;
}

std::string encode_cluster_info(const ClusterInfo& info) {
    JsonWriter w;
    w.begin_object();
    w.key("brokerAddrTable").begin_object();
    for (const auto& [name, bd] : info.broker_addr_table) {
        w.key(name);
        write_broker_data(w, bd, RouteKeyStyle::kStandard);
    }
    w.end_object();
    w.key("clusterAddrTable").begin_object();
    for (const auto& [cluster, names] : info.cluster_addr_table) {
        w.key(cluster).begin_array();
        for (const std::string& n : names) {
            w.value(n);
        }
        w.end_array();
    }
    w.end_object();
    w.end_object();
    return w.take();
}

Result<ClusterInfo> decode_cluster_info(std::string_view json) {
    COMET_ASSIGN_OR_RETURN(rapidjson::Document doc, protocol::parse_json_body(json));
    COMET_RETURN_IF_ERROR(protocol::expect_object(doc, "ClusterInfo"));
    ClusterInfo info;
    if (const JsonValue* t = protocol::find_member(doc, "brokerAddrTable")) {
        COMET_RETURN_IF_ERROR(protocol::expect_object(*t, "brokerAddrTable"));
        for (auto it = t->MemberBegin(); it != t->MemberEnd(); ++it) {
            BrokerData bd;
            COMET_RETURN_IF_ERROR(read_broker_data(it->value, &bd));
            info.broker_addr_table[std::string(it->name.GetString(),
                                               it->name.GetStringLength())] = std::move(bd);
        }
    }
    if (const JsonValue* t = protocol::find_member(doc, "clusterAddrTable")) {
        COMET_RETURN_IF_ERROR(protocol::expect_object(*t, "clusterAddrTable"));
        for (auto it = t->MemberBegin(); it != t->MemberEnd(); ++it) {
            if (!it->value.IsArray()) {
                return Status(Errc::kInvalidArgument, "clusterAddrTable value is not an array");
            }
            auto& names = info.cluster_addr_table[std::string(it->name.GetString(),
                                                              it->name.GetStringLength())];
            for (const JsonValue& n : it->value.GetArray()) {
                COMET_ASSIGN_OR_RETURN(std::string s,
                                       protocol::json_to_string(n, "clusterAddrTable entry"));
                names.insert(std::move(s));
            }
        }
    }
    return info;
}

std::string encode_topic_list(const std::vector<std::string>& topics,
                              const std::string& broker_addr) {
    JsonWriter w;
    w.begin_object();
    if (!broker_addr.empty()) {
        w.member("brokerAddr", broker_addr);
    }
    w.key("topicList").begin_array();
    for (const std::string& t : topics) {
        w.value(t);
    }
    w.end_array();
    w.end_object();
    return w.take();
}

std::string encode_broker_member_group(const BrokerMemberGroup& group) {
    JsonWriter w;
    w.begin_object();
    w.key("brokerMemberGroup").begin_object();
    w.key("brokerAddrs");
    write_broker_addrs(w, group.broker_addrs, RouteKeyStyle::kStandard);
    w.member("brokerName", group.broker_name);
    w.member("cluster", group.cluster);
    w.end_object();
    w.end_object();
    return w.take();
}

std::string encode_data_version(const DataVersion& v) {
    JsonWriter w;
    write_data_version(w, v);
    return w.take();
}

Result<DataVersion> decode_data_version(std::string_view json) {
    COMET_ASSIGN_OR_RETURN(rapidjson::Document doc, protocol::parse_json_body(json));
    DataVersion v;
    COMET_RETURN_IF_ERROR(read_data_version(doc, &v));
    return v;
}

std::string encode_kv_table(const std::map<std::string, std::string>& table) {
    JsonWriter w;
    w.begin_object();
    w.key("table").begin_object();
    for (const auto& [k, v] : table) {
        w.member(k, v);
    }
    w.end_object();
    w.end_object();
    return w.take();
}

Result<std::map<std::string, std::string>> decode_kv_table(std::string_view json) {
    COMET_ASSIGN_OR_RETURN(rapidjson::Document doc, protocol::parse_json_body(json));
    COMET_RETURN_IF_ERROR(protocol::expect_object(doc, "KVTable"));
    std::map<std::string, std::string> table;
    COMET_RETURN_IF_ERROR(protocol::read_string_map(doc, "table", &table));
    return table;
}

}  // namespace comet::namesrv
