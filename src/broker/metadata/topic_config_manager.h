#pragma once
// TopicConfigManager: the broker's topic table (mirrors Java TopicConfigManager). Creates the
// system topics at start, auto-creates topics on send through the default topic (TBW102) and on
// send-back (%RETRY% / %DLQ%), and persists the table to <storeRoot>/config/topics.json in
// RocketMQ's format ({"dataVersion":{..},"topicConfigTable":{name: TopicConfig}}), written
// atomically through ConfigFile. Every change bumps dataVersion.
// Thread-safety: all methods may be called from any thread; one mutex guards the table; file
// writes happen outside it, serialised by the ConfigFile.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "broker/metadata/broker_config.h"
#include "broker/metadata/config_file.h"
#include "broker/metadata/topic_config.h"
#include "protocol/route_bodies.h"

namespace comet::broker {

using protocol::DataVersion;

class TopicConfigManager {
public:
    // `path` = topics.json location; empty = memory only (tests).
    TopicConfigManager(const BrokerConfig& config, Clock& clock, std::string path);

    // Loads the file (or its .bak) if present, then adds the system topics missing from it.
    // Errors: kCorruption when the file exists but cannot be parsed.
    Status load();
    Status persist();

    std::optional<TopicConfig> select(const std::string& topic) const;
    std::vector<TopicConfig> all() const;
    DataVersion data_version() const;

    struct CreateResult {
        std::optional<TopicConfig> config;  // nullopt: not created (see remark)
        bool created = false;               // true when the table changed (register with namesrv)
    };
    // createTopicInSendMessageMethod: `topic` inherits from `default_topic` when that exists, has
    // the INHERIT bit (or is TBW102 with autoCreateTopicEnable) and the broker allows it.
    // queue nums = min(client_default_queue_nums, default.writeQueueNums); perm = default's
    // without INHERIT.
    CreateResult create_in_send(const std::string& topic, const std::string& default_topic,
                                int32_t client_default_queue_nums, int32_t topic_sys_flag);
    // createTopicInSendMessageBackMethod: creates `topic` with the given shape if absent.
    CreateResult create_in_send_back(const std::string& topic, int32_t queue_nums, int32_t perm,
                                     int32_t topic_sys_flag);
    // Adds or replaces a topic (admin UPDATE_AND_CREATE_TOPIC), bumps dataVersion, persists.
    Status update(const TopicConfig& config);
    // Removes a topic; returns false when it did not exist.
    bool remove(const std::string& topic);
    bool is_system_topic(const std::string& topic) const;

    // topics.json content: {"dataVersion":..,"topicConfigTable":..}.
    std::string encode(bool pretty) const;
    // Replaces the table from JSON (file content or a TopicConfigSerializeWrapper).
    Status decode(std::string_view json);

private:
    void put_locked(TopicConfig c) REQUIRES(mu_);
    void add_system_topics_locked() REQUIRES(mu_);
    void persist_or_log();

    const BrokerConfig config_;
    Clock& clock_;
    ConfigFile file_;
    mutable Mutex mu_;
    std::map<std::string, TopicConfig> table_ GUARDED_BY(mu_);
    std::vector<std::string> system_topics_ GUARDED_BY(mu_);
    DataVersion version_ GUARDED_BY(mu_);
};

}  // namespace comet::broker
