#include "broker/metadata/topic_config_manager.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "broker/metadata/json_file.h"

namespace comet::broker {

TopicConfigManager::TopicConfigManager(const BrokerConfig& config, Clock& clock, std::string path)
    : config_(config), clock_(clock), file_(std::move(path)) {
    MutexLock l(mu_);
    add_system_topics_locked();
}

void TopicConfigManager::put_locked(TopicConfig c) {
    std::string name = c.topic_name;
    table_[name] = std::move(c);
}

void TopicConfigManager::add_system_topics_locked() {
    auto sys = [&](std::string name, int32_t r, int32_t w, int32_t perm) {
        system_topics_.push_back(name);
        if (table_.count(name) != 0) {
            return;
        }
        TopicConfig c;
        c.topic_name = std::move(name);
        c.read_queue_nums = r;
        c.write_queue_nums = w;
        c.perm = perm;
        put_locked(std::move(c));
    };
    const int32_t rw = kPermRead | kPermWrite;
    sys(std::string(kSelfTestTopic), 1, 1, rw);
    if (config_.auto_create_topic_enable) {
        sys(std::string(kAutoCreateTopicKeyTopic), config_.default_topic_queue_nums,
            config_.default_topic_queue_nums, rw | kPermInherit);
    }
    sys(std::string(kBenchmarkTopic), 1024, 1024, rw);
    sys(config_.broker_cluster_name, 16, 16,
        kPermInherit | (config_.cluster_topic_enable ? rw : 0));
    sys(config_.broker_name, 1, 1, kPermInherit | (config_.broker_topic_enable ? rw : 0));
    sys(std::string(kOffsetMovedEvent), 1, 1, rw);
    sys(std::string(kScheduleTopic), 18, 18, rw);
    sys(config_.broker_cluster_name + "_REPLY_TOPIC", 1, 1, rw);
    sys(std::string(kTransHalfTopic), 1, 1, rw);
    sys(std::string(kTransOpHalfTopic), 1, 1, rw);
    if (config_.trace_topic_enable) {
        sys(config_.msg_trace_topic_name, 1, 1, rw);
    }
}

Status TopicConfigManager::load() {
    bool found = false;
    COMET_RETURN_IF_ERROR(file_.load([&](std::string_view text) {
        found = true;
        return decode(text);
    }));
    if (found) {
        spdlog::info("TopicConfigManager: loaded {} topics from {}", all().size(), file_.path());
    }
    return Status::ok();
}

Status TopicConfigManager::decode(std::string_view json) {
    const std::string_view what = file_.path().empty() ? std::string_view("topics") : file_.path();
    auto doc = protocol::parse_json_body(json);
    auto wrapper = doc.is_ok() ? protocol::TopicConfigSerializeWrapper::from_json(doc.value())
                               : Result<protocol::TopicConfigSerializeWrapper>(doc.status());
    if (!wrapper.is_ok()) {
        return Status::error(Errc::kCorruption, "{}: {}", what, wrapper.status().message());
    }
    std::map<std::string, TopicConfig> loaded;
    for (auto& [name, c] : wrapper->topic_config_table) {
        if (c.topic_name.empty()) {
            return Status::error(Errc::kCorruption,
                                 "{}: topic '{}': topic config without topicName", what, name);
        }
        loaded[c.topic_name] = std::move(c);
    }
    MutexLock l(mu_);
    if (protocol::find_member(doc.value(), "dataVersion") != nullptr) {
        version_ = wrapper->data_version;
    }
    table_ = std::move(loaded);
    system_topics_.clear();
    add_system_topics_locked();
    return Status::ok();
}

std::string TopicConfigManager::encode(bool pretty) const {
    protocol::TopicConfigSerializeWrapper wrapper;
    {
        MutexLock l(mu_);
        wrapper.data_version = version_;
        wrapper.topic_config_table = table_;
    }
    return format_json(wrapper.encode(), pretty);
}

Status TopicConfigManager::persist() {
    return file_.persist([this] { return encode(false); });
}

void TopicConfigManager::persist_or_log() {
    Status st = persist();
    if (!st.is_ok()) {
        spdlog::error("TopicConfigManager: persist {} failed: {}", file_.path(), st.to_string());
    }
}

std::optional<TopicConfig> TopicConfigManager::select(const std::string& topic) const {
    MutexLock l(mu_);
    auto it = table_.find(topic);
    if (it == table_.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::vector<TopicConfig> TopicConfigManager::all() const {
    MutexLock l(mu_);
    std::vector<TopicConfig> out;
    out.reserve(table_.size());
    for (const auto& [_, c] : table_) {
        out.push_back(c);
    }
    return out;
}

DataVersion TopicConfigManager::data_version() const {
    MutexLock l(mu_);
    return version_;
}

TopicConfigManager::CreateResult TopicConfigManager::create_in_send(
    const std::string& topic, const std::string& default_topic, int32_t client_default_queue_nums,
    int32_t topic_sys_flag) {
    CreateResult r;
    {
        MutexLock l(mu_);
        auto existing = table_.find(topic);
        if (existing != table_.end()) {
            r.config = existing->second;
            return r;
        }
        auto def = table_.find(default_topic);
        if (def == table_.end()) {
            spdlog::warn("create topic {}: default topic {} does not exist", topic, default_topic);
            return r;
        }
        int32_t perm = def->second.perm;
        if (default_topic == kAutoCreateTopicKeyTopic) {
            if (config_.auto_create_topic_enable) {
                perm = kPermRead | kPermWrite | kPermInherit;
            }
        }
        if (!perm_inherit(perm)) {
            spdlog::warn("create topic {}: default topic {} has no inherit permission (perm {})",
                         topic, default_topic, perm);
            return r;
        }
        TopicConfig c;
        c.topic_name = topic;
        const int32_t nums = std::max(
            1, std::min(client_default_queue_nums, def->second.write_queue_nums));
        c.read_queue_nums = nums;
        c.write_queue_nums = nums;
        c.perm = perm & ~kPermInherit;
        c.topic_sys_flag = topic_sys_flag;
        c.topic_filter_type = def->second.topic_filter_type;
        put_locked(c);
        version_.next_version(clock_.wall_millis());
        r.config = std::move(c);
        r.created = true;
    }
    spdlog::info("create topic {} from default topic {}: {} queues", topic, default_topic,
                 r.config->write_queue_nums);
    persist_or_log();
    return r;
}

TopicConfigManager::CreateResult TopicConfigManager::create_in_send_back(const std::string& topic,
                                                                         int32_t queue_nums,
                                                                         int32_t perm,
                                                                         int32_t topic_sys_flag) {
    CreateResult r;
    {
        MutexLock l(mu_);
        auto existing = table_.find(topic);
        if (existing != table_.end()) {
            r.config = existing->second;
            return r;
        }
        TopicConfig c;
        c.topic_name = topic;
        c.read_queue_nums = queue_nums;
        c.write_queue_nums = queue_nums;
        c.perm = perm;
        c.topic_sys_flag = topic_sys_flag;
        put_locked(c);
        version_.next_version(clock_.wall_millis());
        r.config = std::move(c);
        r.created = true;
    }
    spdlog::info("create topic {}: {} queues, perm {}", topic, queue_nums, perm);
    persist_or_log();
    return r;
}

Status TopicConfigManager::update(const TopicConfig& config) {
    COMET_RETURN_IF_ERROR(validate_topic(config.topic_name));
    if (config.read_queue_nums <= 0 || config.write_queue_nums <= 0 ||
        config.read_queue_nums > 65535 || config.write_queue_nums > 65535) {
        return Status::error(Errc::kInvalidArgument,
                             "topic {}: queue nums read {} write {} not in [1, 65535]",
                             config.topic_name, config.read_queue_nums, config.write_queue_nums);
    }
    {
        MutexLock l(mu_);
        put_locked(config);
        version_.next_version(clock_.wall_millis());
    }
    spdlog::info("update topic {}: read {} write {} perm {}", config.topic_name,
                 config.read_queue_nums, config.write_queue_nums, config.perm);
    return persist();
}

bool TopicConfigManager::remove(const std::string& topic) {
    {
        MutexLock l(mu_);
        if (table_.erase(topic) == 0) {
            return false;
        }
        version_.next_version(clock_.wall_millis());
    }
    spdlog::info("delete topic {}", topic);
    persist_or_log();
    return true;
}

bool TopicConfigManager::is_system_topic(const std::string& topic) const {
    MutexLock l(mu_);
    return std::find(system_topics_.begin(), system_topics_.end(), topic) != system_topics_.end();
}

}  // namespace comet::broker
