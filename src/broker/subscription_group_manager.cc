#include "broker/subscription_group_manager.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include <array>

#include "broker/json_file.h"

namespace comet::broker {
namespace {
constexpr std::array<const char*, 8> kSystemGroups = {
    "TOOLS_CONSUMER",        "FILTERSRV_CONSUMER",    "SELF_TEST_C_GROUP",
    "CID_ONS-HTTP-PROXY",    "CID_ONSAPI_PULL",       "CID_ONSAPI_PERMISSION",
    "CID_ONSAPI_OWNER",      "CID_SYS_RMQ_TRANS",
};
}  // namespace

rapidjson::Value SubscriptionGroupConfig::to_json(rapidjson::Document::AllocatorType& a) const {
    rapidjson::Value v(rapidjson::kObjectType);
    v.AddMember("brokerId", broker_id, a);
    v.AddMember("consumeBroadcastEnable", consume_broadcast_enable, a);
    v.AddMember("consumeEnable", consume_enable, a);
    v.AddMember("consumeFromMinEnable", consume_from_min_enable, a);
    v.AddMember("consumeMessageOrderly", consume_message_orderly, a);
    v.AddMember("consumeTimeoutMinute", consume_timeout_minute, a);
    v.AddMember("groupName", rapidjson::Value(group_name.c_str(), a), a);
    v.AddMember("groupSysFlag", group_sys_flag, a);
    v.AddMember("notifyConsumerIdsChangedEnable", notify_consumer_ids_changed_enable, a);
    v.AddMember("retryMaxTimes", retry_max_times, a);
    v.AddMember("retryQueueNums", retry_queue_nums, a);
    v.AddMember("whichBrokerWhenConsumeSlowly", which_broker_when_consume_slowly, a);
    return v;
}

Result<SubscriptionGroupConfig> SubscriptionGroupConfig::from_json(const rapidjson::Value& v) {
    if (!v.IsObject()) {
        return Status::error(Errc::kInvalidArgument, "subscription group config is not an object");
    }
    SubscriptionGroupConfig c;
    c.group_name = json_string(v, "groupName");
    if (c.group_name.empty()) {
        return Status::error(Errc::kInvalidArgument, "subscription group config without groupName");
    }
    c.consume_enable = json_bool(v, "consumeEnable", true);
    c.consume_from_min_enable = json_bool(v, "consumeFromMinEnable", true);
    c.consume_broadcast_enable = json_bool(v, "consumeBroadcastEnable", true);
    c.consume_message_orderly = json_bool(v, "consumeMessageOrderly", false);
    c.retry_queue_nums = static_cast<int32_t>(json_int(v, "retryQueueNums", 1));
    c.retry_max_times = static_cast<int32_t>(json_int(v, "retryMaxTimes", 16));
    c.broker_id = json_int(v, "brokerId", 0);
    c.which_broker_when_consume_slowly = json_int(v, "whichBrokerWhenConsumeSlowly", 1);
    c.notify_consumer_ids_changed_enable = json_bool(v, "notifyConsumerIdsChangedEnable", true);
    c.group_sys_flag = static_cast<int32_t>(json_int(v, "groupSysFlag", 0));
    c.consume_timeout_minute = static_cast<int32_t>(json_int(v, "consumeTimeoutMinute", 15));
    return c;
}

SubscriptionGroupManager::SubscriptionGroupManager(Clock& clock, std::string path,
                                                   bool auto_create,
                                                   int32_t default_retry_max_times)
    : clock_(clock),
      path_(std::move(path)),
      auto_create_(auto_create),
      default_retry_max_times_(default_retry_max_times) {
    MutexLock l(mu_);
    add_system_groups_locked();
}

void SubscriptionGroupManager::add_system_groups_locked() {
    for (const char* g : kSystemGroups) {
        if (table_.count(g) == 0) {
            SubscriptionGroupConfig c;
            c.group_name = g;
            table_[g] = c;
        }
    }
}

bool SubscriptionGroupManager::is_system_group(const std::string& group) {
    for (const char* g : kSystemGroups) {
        if (group == g) {
            return true;
        }
    }
    return false;
}

Status SubscriptionGroupManager::load() {
    if (path_.empty()) {
        return Status::ok();
    }
    auto text = read_config_file(path_);
    if (!text.is_ok()) {
        return text.status().code() == Errc::kNotFound ? Status::ok() : text.status();
    }
    return decode(text.value());
}

Status SubscriptionGroupManager::decode(std::string_view json) {
    rapidjson::Document doc;
    COMET_RETURN_IF_ERROR(parse_lenient_json(json, "subscriptionGroup.json", &doc));
    if (!doc.IsObject()) {
        return Status::error(Errc::kCorruption, "subscriptionGroup.json: not an object");
    }
    std::map<std::string, SubscriptionGroupConfig> loaded;
    auto it = doc.FindMember("subscriptionGroupTable");
    if (it != doc.MemberEnd() && it->value.IsObject()) {
        for (const auto& m : it->value.GetObject()) {
            auto c = SubscriptionGroupConfig::from_json(m.value);
            if (!c.is_ok()) {
                return Status::error(Errc::kCorruption, "subscriptionGroup.json: group '{}': {}",
                                     m.name.GetString(), c.status().message());
            }
            loaded[c->group_name] = std::move(c).value();
        }
    }
    std::optional<DataVersion> version;
    if (const rapidjson::Value* dv = protocol::find_member(doc, "dataVersion")) {
        auto v = DataVersion::from_json(*dv);
        if (!v.is_ok()) {
            return Status::error(Errc::kCorruption, "{}: {}", "subscriptionGroup.json", v.status().message());
        }
        version = std::move(v).value();
    }
    MutexLock l(mu_);
    if (version) {
        version_ = *version;
    }
    table_ = std::move(loaded);
    add_system_groups_locked();
    return Status::ok();
}

std::string SubscriptionGroupManager::encode(bool pretty) const {
    rapidjson::Document scratch;  // allocator for the entries' DOM form
    protocol::JsonWriter w;
    {
        MutexLock l(mu_);
        w.begin_object().key("dataVersion");
        version_.write_json(w);
        w.key("subscriptionGroupTable").begin_object();
        for (const auto& [name, c] : table_) {
            w.key(name).raw(to_json(c.to_json(scratch.GetAllocator())));
        }
        w.end_object().end_object();
    }
    return format_json(w.take(), pretty);
}

Status SubscriptionGroupManager::persist() {
    if (path_.empty()) {
        return Status::ok();
    }
    MutexLock pl(persist_mu_);
    return write_file_atomic(path_, encode(true));
}

std::optional<SubscriptionGroupConfig> SubscriptionGroupManager::find(const std::string& group) {
    SubscriptionGroupConfig created;
    {
        MutexLock l(mu_);
        auto it = table_.find(group);
        if (it != table_.end()) {
            return it->second;
        }
        if (!auto_create_ && !is_system_group(group)) {
            return std::nullopt;
        }
        created.group_name = group;
        created.retry_max_times = default_retry_max_times_;
        table_[group] = created;
        version_.next_version(clock_.wall_millis());
    }
    spdlog::info("auto create subscription group {}", group);
    Status st = persist();
    if (!st.is_ok()) {
        spdlog::error("persist subscription groups failed: {}", st.to_string());
    }
    return created;
}

std::optional<SubscriptionGroupConfig> SubscriptionGroupManager::get(const std::string& group) const {
    MutexLock l(mu_);
    auto it = table_.find(group);
    if (it == table_.end()) {
        return std::nullopt;
    }
    return it->second;
}

Status SubscriptionGroupManager::update(const SubscriptionGroupConfig& config) {
    if (config.group_name.empty()) {
        return Status::error(Errc::kInvalidArgument, "groupName must not be empty");
    }
    {
        MutexLock l(mu_);
        table_[config.group_name] = config;
        version_.next_version(clock_.wall_millis());
    }
    spdlog::info("update subscription group {}", config.group_name);
    return persist();
}

bool SubscriptionGroupManager::remove(const std::string& group) {
    {
        MutexLock l(mu_);
        if (table_.erase(group) == 0) {
            return false;
        }
        version_.next_version(clock_.wall_millis());
    }
    Status st = persist();
    if (!st.is_ok()) {
        spdlog::error("persist subscription groups failed: {}", st.to_string());
    }
    return true;
}

std::vector<SubscriptionGroupConfig> SubscriptionGroupManager::all() const {
    MutexLock l(mu_);
    std::vector<SubscriptionGroupConfig> out;
    for (const auto& [_, c] : table_) {
        out.push_back(c);
    }
    return out;
}

DataVersion SubscriptionGroupManager::data_version() const {
    MutexLock l(mu_);
    return version_;
}

}  // namespace comet::broker
