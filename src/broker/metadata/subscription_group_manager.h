#pragma once
// SubscriptionGroupManager: consumer group settings (Java SubscriptionGroupManager). Groups are
// created on demand when autoCreateSubscriptionGroup is on (or the group is a system group), and
// persisted to <storeRoot>/config/subscriptionGroup.json as
// {"dataVersion":..,"subscriptionGroupTable":{name: SubscriptionGroupConfig}}, atomically
// (ConfigFile). Thread-safety: any thread; mu_ guards the table; file writes outside it, serialised
// by the ConfigFile.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "broker/metadata/config_file.h"
#include "protocol/admin_bodies.h"
#include "protocol/route_bodies.h"

namespace comet::broker {

using protocol::DataVersion;
using protocol::SubscriptionGroupConfig;  // JSON codec: protocol/admin_bodies.h

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
    ConfigFile file_;
    const bool auto_create_;
    const int32_t default_retry_max_times_;
    mutable Mutex mu_;
    std::map<std::string, SubscriptionGroupConfig> table_ GUARDED_BY(mu_);
    DataVersion version_ GUARDED_BY(mu_);
};

}  // namespace comet::broker
