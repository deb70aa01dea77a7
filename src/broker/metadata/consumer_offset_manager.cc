#include "broker/metadata/consumer_offset_manager.h"

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <charconv>

#include "broker/metadata/json_file.h"
#include "protocol/admin_bodies.h"

namespace comet::broker {
namespace {

rapidjson::Value int_map_to_json(const std::map<int32_t, int64_t>& m,
                                 rapidjson::Document::AllocatorType& a) {
    rapidjson::Value v(rapidjson::kObjectType);
    for (const auto& [k, off] : m) {
        const std::string ks = std::to_string(k);
        v.AddMember(rapidjson::Value(ks.c_str(), a), rapidjson::Value(static_cast<int64_t>(off)), a);
    }
    return v;
}

Result<std::map<int32_t, int64_t>> int_map_from_json(const rapidjson::Value& v,
                                                     std::string_view what) {
    std::map<int32_t, int64_t> out;
    if (!v.IsObject()) {
        return Status::error(Errc::kCorruption, "{}: offset map is not an object", what);
    }
    for (const auto& m : v.GetObject()) {
        const std::string_view ks(m.name.GetString(), m.name.GetStringLength());
        int32_t k = 0;
        const auto [p, ec] = std::from_chars(ks.data(), ks.data() + ks.size(), k);
        if (ec != std::errc() || p != ks.data() + ks.size()) {
            return Status::error(Errc::kCorruption, "{}: key '{}' is not an integer", what, ks);
        }
        if (!m.value.IsInt64()) {
            return Status::error(Errc::kCorruption, "{}: value of '{}' is not an integer", what, ks);
        }
        out[k] = m.value.GetInt64();
    }
    return out;
}

}  // namespace

Status ConsumerOffsetManager::load() {
    return file_.load([this](std::string_view text) { return decode(text); });
}

Status ConsumerOffsetManager::decode(std::string_view json) {
    auto wrapper = protocol::ConsumerOffsetSerializeWrapper::decode(json);
    if (!wrapper.is_ok()) {
        return Status::error(Errc::kCorruption, "consumerOffset.json: {}",
                             wrapper.status().message());
    }
    MutexLock l(mu_);
    table_ = std::move(wrapper->offset_table);
    return Status::ok();
}

std::map<std::string, std::map<int32_t, int64_t>> ConsumerOffsetManager::table() const {
    MutexLock l(mu_);
    return table_;
}

std::string ConsumerOffsetManager::encode(bool pretty) const {
    protocol::ConsumerOffsetSerializeWrapper wrapper;
    wrapper.offset_table = table();
    return format_json(wrapper.encode(), pretty);
}

Status ConsumerOffsetManager::persist() {
    return file_.persist([this] { return encode(false); });
}

void ConsumerOffsetManager::commit_offset(const std::string& group, const std::string& topic,
                                          int32_t queue_id, int64_t offset) {
    MutexLock l(mu_);
    table_[key(topic, group)][queue_id] = offset;
}

int64_t ConsumerOffsetManager::query_offset(const std::string& group, const std::string& topic,
                                            int32_t queue_id) const {
    MutexLock l(mu_);
    auto it = table_.find(key(topic, group));
    if (it == table_.end()) {
        return -1;
    }
    auto q = it->second.find(queue_id);
    return q == it->second.end() ? -1 : q->second;
}

std::map<int32_t, int64_t> ConsumerOffsetManager::query_offsets(const std::string& group,
                                                                const std::string& topic) const {
    MutexLock l(mu_);
    auto it = table_.find(key(topic, group));
    return it == table_.end() ? std::map<int32_t, int64_t>{} : it->second;
}

std::set<std::string> ConsumerOffsetManager::topics_of_group(const std::string& group) const {
    MutexLock l(mu_);
    std::set<std::string> out;
    for (const auto& [k, _] : table_) {
        const size_t at = k.rfind('@');
        if (at != std::string::npos && k.substr(at + 1) == group) {
            out.insert(k.substr(0, at));
        }
    }
    return out;
}

std::set<std::string> ConsumerOffsetManager::groups_of_topic(const std::string& topic) const {
    MutexLock l(mu_);
    std::set<std::string> out;
    for (const auto& [k, _] : table_) {
        const size_t at = k.rfind('@');
        if (at != std::string::npos && k.substr(0, at) == topic) {
            out.insert(k.substr(at + 1));
        }
    }
    return out;
}

void ConsumerOffsetManager::remove_topic(const std::string& topic) {
    MutexLock l(mu_);
    for (auto it = table_.begin(); it != table_.end();) {
        const size_t at = it->first.rfind('@');
        if (at != std::string::npos && it->first.substr(0, at) == topic) {
            it = table_.erase(it);
        } else {
            ++it;
        }
    }
}

void ConsumerOffsetManager::remove_group(const std::string& group) {
    MutexLock l(mu_);
    for (auto it = table_.begin(); it != table_.end();) {
        const size_t at = it->first.rfind('@');
        if (at != std::string::npos && it->first.substr(at + 1) == group) {
            it = table_.erase(it);
        } else {
            ++it;
        }
    }
}

std::string encode_int_offset_table(const std::map<int32_t, int64_t>& table, bool pretty) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    doc.AddMember("offsetTable", int_map_to_json(table, a), a);
    return to_json(doc, pretty);
}

Result<std::map<int32_t, int64_t>> decode_int_offset_table(std::string_view json,
                                                           std::string_view what) {
    rapidjson::Document doc;
    COMET_RETURN_IF_ERROR(parse_lenient_json(json, what, &doc));
    if (!doc.IsObject()) {
        return Status::error(Errc::kCorruption, "{}: not an object", what);
    }
    auto it = doc.FindMember("offsetTable");
    if (it == doc.MemberEnd()) {
        return std::map<int32_t, int64_t>{};
    }
    return int_map_from_json(it->value, what);
}

}  // namespace comet::broker
