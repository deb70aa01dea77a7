#pragma once
// SubscriptionGroupManager: consumer group settings (Java SubscriptionGroupManager). Groups are
// created on demand when autoCreateSubscriptionGroup is on (or the group is a system group), and
// persisted to <storeRoot>/config/subscriptionGroup.json as
// {"dataVersion":..,"subscriptionGroupTable":{name: SubscriptionGroupConfig}}, atomically.
// Thread-safety: any thread; mu_ guards the table; file writes outside it under persist_mu_.

#include <rapidjson/document.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "protocol/route_bodies.h"

namespace comet::broker {

using protocol::DataVersion;

struct SubscriptionGroupConfig {
    std::string group_name;
    bool consume_enable = true;
    bool consume_from_min_enable = true;
    bool consume_broadcast_enable = true;
    bool consume_message_orderly = false;
    int32_t retry_queue_nums = 1;
    int32_t retry_max_times = 16;
    int64_t broker_id = 0;
    int64_t which_broker_when_consume_slowly = 1;
    bool notify_consumer_ids_changed_enable = true;
    int32_t group_sys_flag = 0;
    int32_t consume_timeout_minute = 15;

    bool operator==(const SubscriptionGroupConfig&) const = default;
    rapidjson::Value to_json(rapidjson::Document::AllocatorType& a) const;
    static Result<SubscriptionGroupConfig> from_json(const rapidjson::Value& v);
};

class SubscriptionGroupManager {
public:
    // `path` empty = memory only. `default_retry_max_times` seeds auto-created groups.
    SubscriptionGroupManager(Clock& clock, std::string path, bool auto_create,
                             int32_t default_retry_max_times = 16);

    Status load();
    Status persist();

    // The group's config; auto-creates it when allowed (then persists). nullopt when the group
    // does not exist and may not be created.
    std::optional<SubscriptionGroupConfig> find(const std::string& group);
    // Lookup only, never creates.
    std::optional<SubscriptionGroupConfig> get(const std::string& group) const;
    Status update(const SubscriptionGroupConfig& config);
    bool remove(const std::string& group);
    std::vector<SubscriptionGroupConfig> all() const;
    DataVersion data_version() const;
    static bool is_system_group(const std::string& group);

    std::string encode(bool pretty) const;
    Status decode(std::string_view json);

private:
    void add_system_groups_locked() REQUIRES(mu_);

    Clock& clock_;
    const std::string path_;
    const bool auto_create_;
    const int32_t default_retry_max_times_;
    mutable Mutex mu_;
    std::map<std::string, SubscriptionGroupConfig> table_ GUARDED_BY(mu_);
    DataVersion version_ GUARDED_BY(mu_);
    Mutex persist_mu_;
};

}  // namespace comet::broker
