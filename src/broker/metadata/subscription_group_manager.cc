#include "broker/metadata/subscription_group_manager.h"

#include <spdlog/spdlog.h>

#include <array>

#include "broker/metadata/json_file.h"

namespace comet::broker {
namespace {
constexpr std::array<const char*, 8> kSystemGroups = {
    "TOOLS_CONSUMER",        "FILTERSRV_CONSUMER",    "SELF_TEST_C_GROUP",
    "CID_ONS-HTTP-PROXY",    "CID_ONSAPI_PULL",       "CID_ONSAPI_PERMISSION",
    "CID_ONSAPI_OWNER",      "CID_SYS_RMQ_TRANS",
};
}  // namespace

SubscriptionGroupManager::SubscriptionGroupManager(Clock& clock, std::string path,
                                                   bool auto_create,
                                                   int32_t default_retry_max_times)
    : clock_(clock),
      file_(std::move(path)),
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
    return file_.load([this](std::string_view text) { return decode(text); });
}

Status SubscriptionGroupManager::decode(std::string_view json) {
    auto doc = protocol::parse_json_body(json);
    auto wrapper = doc.is_ok() ? protocol::SubscriptionGroupWrapper::from_json(doc.value())
                               : Result<protocol::SubscriptionGroupWrapper>(doc.status());
    if (!wrapper.is_ok()) {
        return Status::error(Errc::kCorruption, "subscriptionGroup.json: {}",
                             wrapper.status().message());
    }
    std::map<std::string, SubscriptionGroupConfig> loaded;
    for (auto& [name, c] : wrapper->subscription_group_table) {
        if (c.group_name.empty()) {
            return Status::error(Errc::kCorruption,
                                 "subscriptionGroup.json: group '{}': subscription group config "
                                 "without groupName",
                                 name);
        }
        loaded[c.group_name] = std::move(c);
    }
    MutexLock l(mu_);
    if (protocol::find_member(doc.value(), "dataVersion") != nullptr) {
        version_ = wrapper->data_version;
    }
    table_ = std::move(loaded);
    add_system_groups_locked();
    return Status::ok();
}

std::string SubscriptionGroupManager::encode(bool pretty) const {
    protocol::SubscriptionGroupWrapper wrapper;
    {
        MutexLock l(mu_);
        wrapper.data_version = version_;
        wrapper.subscription_group_table = table_;
    }
    return format_json(wrapper.encode(), pretty);
}

Status SubscriptionGroupManager::persist() {
    return file_.persist([this] { return encode(false); });
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
