#include "namesrv/route_info_manager.h"

#include <algorithm>

#include "base/logging.h"

namespace comet::namesrv {

namespace {

constexpr int32_t kPermWrite = 2;  // PermName.PERM_WRITE
constexpr int32_t kPermRead = 4;   // PermName.PERM_READ

// RouteInfoManager#chooseBrokerAddrsToNotify: after a removal (or for a lone broker) everyone
// left; after a registration of a smaller id, everyone but the new minimum.
std::vector<std::string> choose_addrs_to_notify(const std::map<int64_t, std::string>& addrs,
                                                bool offline) {
    std::vector<std::string> out;
    for (const auto& [id, addr] : addrs) {
        if (offline || addrs.size() == 1 || id != addrs.begin()->first) {
            out.push_back(addr);
        }
    }
    return out;
}

// Errors: kInvalidArgument when cluster, name or address is empty or brokerId < 0.
Status check_register_request(const RegisterBrokerRequest& req) {
    if (req.cluster_name.empty() || req.broker_name.empty() || req.broker_addr.empty()) {
        return Status::error(Errc::kInvalidArgument,
                             "register broker: clusterName, brokerName and brokerAddr must be set "
                             "(cluster '{}', name '{}', addr '{}')",
                             req.cluster_name, req.broker_name, req.broker_addr);
    }
    if (req.broker_id < 0) {
        return Status::error(Errc::kInvalidArgument, "register broker {}: brokerId {} < 0",
                             req.broker_addr, req.broker_id);
    }
    return Status::ok();
}

}  // namespace

RouteInfoManager::RouteInfoManager(const Clock& clock,
                                   std::chrono::milliseconds default_expired_time)
    : clock_(clock), default_expired_time_(default_expired_time) {}

Result<RegisterBrokerResult> RouteInfoManager::register_broker(const RegisterBrokerRequest& req) {
    COMET_RETURN_IF_ERROR(check_register_request(req));
    RegisterBrokerResult result;
    MutexLock lock(mu_);
    const LiveKey key{req.cluster_name, req.broker_addr};
    bool register_first = broker_addr_table_.count(req.broker_name) == 0;
    if (!register_first && is_stale_registration_locked(req)) {
        return result;
    }
    cluster_addr_table_[req.cluster_name].insert(req.broker_name);
    BrokerData& bd = broker_addr_table_[req.broker_name];
    const MemberUpdate update = add_group_member_locked(req, register_first, bd);
    register_first = register_first || update.inserted;
    refresh_queue_data_locked(req, key, bd, register_first);
    record_live_broker_locked(req, key, update.replaced_addr);
    if (req.filter_server_list.empty()) {
        filter_server_table_.erase(key);
    } else {
        filter_server_table_[key] = req.filter_server_list;
    }
    if (req.broker_id != kMasterId) {
        fill_master_ha_locked(req, bd, &result);
    }
    if (update.min_id_changed && bd.enable_acting_master.value_or(false)) {
        queue_min_id_change_locked(req, bd);
    }
    return result;
}

// The same brokerId held by another live address: keep the one with the newer state.
bool RouteInfoManager::is_stale_registration_locked(const RegisterBrokerRequest& req) const {
    const BrokerData& bd = broker_addr_table_.at(req.broker_name);
    auto old = bd.broker_addrs.find(req.broker_id);
    if (old == bd.broker_addrs.end() || old->second == req.broker_addr) {
        return false;
    }
    auto old_live = broker_live_table_.find(LiveKey{req.cluster_name, old->second});
    if (old_live == broker_live_table_.end() ||
        old_live->second.data_version.state_version <= req.data_version.state_version) {
        return false;
    }
    spdlog::warn(
        "register broker ignored: {} brokerId {} of {} is held by {} with newer "
        "stateVersion {} > {}",
        req.broker_addr, req.broker_id, req.broker_name, old->second,
        old_live->second.data_version.state_version, req.data_version.state_version);
    return true;
}

RouteInfoManager::MemberUpdate RouteInfoManager::add_group_member_locked(
    const RegisterBrokerRequest& req, bool register_first, BrokerData& bd) {
    MemberUpdate update;
    if (register_first) {
        bd.cluster = req.cluster_name;
        bd.broker_name = req.broker_name;
    }
    // Unset (not written) when false: 4.9.8's BrokerData has no such field.
    bd.enable_acting_master =
        req.enable_acting_master ? std::optional<bool>(true) : std::optional<bool>();
    // A smaller brokerId than every registered one: the group's minimum changes.
    update.min_id_changed =
        !bd.broker_addrs.empty() && req.broker_id < bd.broker_addrs.begin()->first;
    if (req.zone_name) {
        bd.zone_name = req.zone_name;
    }
    // One address has one brokerId: a slave switched to master drops its old id entry.
    for (auto it = bd.broker_addrs.begin(); it != bd.broker_addrs.end();) {
        if (it->second == req.broker_addr && it->first != req.broker_id) {
            it = bd.broker_addrs.erase(it);
        } else {
            ++it;
        }
    }
    auto [slot, inserted] = bd.broker_addrs.try_emplace(req.broker_id, req.broker_addr);
    if (!inserted && slot->second != req.broker_addr) {
        update.replaced_addr = slot->second;
        slot->second = req.broker_addr;
    }
    update.inserted = inserted;
    return update;
}

// The master's topics make the route; so do those of the "prime slave" (the smallest brokerId
// of a group without master whose brokers support acting master), with the write permission
// wiped so producers skip the group. Only when its DataVersion changed or it is new.
void RouteInfoManager::refresh_queue_data_locked(const RegisterBrokerRequest& req,
                                                 const LiveKey& key, const BrokerData& bd,
                                                 bool register_first) {
    const bool is_prime_slave = req.enable_acting_master && req.broker_id != kMasterId &&
                                req.broker_id == bd.broker_addrs.begin()->first;
    if (req.broker_id != kMasterId && !is_prime_slave) {
        return;
    }
    auto live = broker_live_table_.find(key);
    const bool changed =
        live == broker_live_table_.end() || !(live->second.data_version == req.data_version);
    if (!changed && !register_first) {
        return;
    }
    for (const auto& [name, tc] : req.topic_config_table) {
        if (is_prime_slave) {
            TopicConfig wiped = tc;
            wiped.perm &= ~kPermWrite;
            create_and_update_queue_data_locked(req.broker_name, wiped);
        } else {
            create_and_update_queue_data_locked(req.broker_name, tc);
        }
    }
}

// Records the heartbeat; an address displaced from the broker's id loses its liveness.
void RouteInfoManager::record_live_broker_locked(const RegisterBrokerRequest& req,
                                                 const LiveKey& key,
                                                 const std::string& replaced_addr) {
    const std::chrono::milliseconds timeout =
        req.heartbeat_timeout_millis && *req.heartbeat_timeout_millis > 0
            ? std::chrono::milliseconds(*req.heartbeat_timeout_millis)
            : default_expired_time_;
    auto [live, is_new] = broker_live_table_.insert_or_assign(
        key,
        BrokerLiveInfo{clock_.now(), timeout, req.data_version, req.channel, req.ha_server_addr});
    (void)live;
    if (is_new) {
        spdlog::info("new broker registered: {} {} id {} cluster {} HA {}", req.broker_name,
                     req.broker_addr, req.broker_id, req.cluster_name, req.ha_server_addr);
    }
    if (!replaced_addr.empty()) {
        // The displaced address no longer belongs to the group; forget its liveness.
        spdlog::info("broker {} id {} moved from {} to {}", req.broker_name, req.broker_id,
                     replaced_addr, req.broker_addr);
        broker_live_table_.erase(LiveKey{req.cluster_name, replaced_addr});
        filter_server_table_.erase(LiveKey{req.cluster_name, replaced_addr});
    }
}

// A slave learns where its live master serves HA replication.
void RouteInfoManager::fill_master_ha_locked(const RegisterBrokerRequest& req, const BrokerData& bd,
                                             RegisterBrokerResult* result) const {
    auto master = bd.broker_addrs.find(kMasterId);
    if (master == bd.broker_addrs.end()) {
        return;
    }
    auto master_live = broker_live_table_.find(LiveKey{req.cluster_name, master->second});
    if (master_live != broker_live_table_.end()) {
        result->ha_server_addr = master_live->second.ha_server_addr;
        result->master_addr = master->second;
    }
}

void RouteInfoManager::queue_min_id_change_locked(const RegisterBrokerRequest& req,
                                                  const BrokerData& bd) {
    MinBrokerIdChange change;
    change.cluster_name = req.cluster_name;
    change.broker_name = req.broker_name;
    change.min_broker_id = bd.broker_addrs.begin()->first;
    change.min_broker_addr = bd.broker_addrs.begin()->second;
    change.ha_broker_addr = req.ha_server_addr;
    change.notify_addrs = choose_addrs_to_notify(bd.broker_addrs, false);
    spdlog::info("min broker id of {} changed to {} ({}): a smaller id registered", req.broker_name,
                 change.min_broker_id, change.min_broker_addr);
    min_id_changes_.push_back(std::move(change));
}

void RouteInfoManager::create_and_update_queue_data_locked(const std::string& broker_name,
                                                           const TopicConfig& tc) {
    QueueData qd{broker_name, tc.read_queue_nums, tc.write_queue_nums, tc.perm, tc.topic_sys_flag};
    auto& by_broker = topic_queue_table_[tc.topic_name];
    auto it = by_broker.find(broker_name);
    if (it == by_broker.end()) {
        spdlog::info("new topic registered: {} on {}", tc.topic_name, broker_name);
        by_broker.emplace(broker_name, qd);
    } else if (!(it->second == qd)) {
        spdlog::info("topic {} changed on {}: r/w {}/{} perm {} -> r/w {}/{} perm {}",
                     tc.topic_name, broker_name, it->second.read_queue_nums,
                     it->second.write_queue_nums, it->second.perm, qd.read_queue_nums,
                     qd.write_queue_nums, qd.perm);
        it->second = qd;
    }
}

void RouteInfoManager::remove_topic_by_broker_name_locked(const std::string& broker_name) {
    for (auto it = topic_queue_table_.begin(); it != topic_queue_table_.end();) {
        if (it->second.erase(broker_name) > 0) {
            spdlog::info("remove topic {} queue data of {}", it->first, broker_name);
        }
        if (it->second.empty()) {
            spdlog::info("remove topic {}: no broker serves it", it->first);
            it = topic_queue_table_.erase(it);
        } else {
            ++it;
        }
    }
}

void RouteInfoManager::remove_broker_locked(const LiveKey& key) {
    broker_live_table_.erase(key);
    filter_server_table_.erase(key);
    auto names = cluster_addr_table_.find(key.cluster);
    std::vector<std::string> emptied;
    for (auto it = broker_addr_table_.begin(); it != broker_addr_table_.end();) {
        BrokerData& bd = it->second;
        bool was_min = false;
        if (bd.cluster == key.cluster && !bd.broker_addrs.empty()) {
            was_min = bd.broker_addrs.begin()->second == key.addr;
            const size_t erased =
                std::erase_if(bd.broker_addrs, [&](const auto& e) { return e.second == key.addr; });
            if (erased > 0 && !bd.broker_addrs.empty() && bd.enable_acting_master.value_or(false)) {
                on_member_removed_locked(bd, key, was_min);
            }
        }
        if (bd.broker_addrs.empty()) {
            emptied.push_back(it->first);
            it = broker_addr_table_.erase(it);
        } else {
            ++it;
        }
    }
    for (const std::string& name : emptied) {
        spdlog::info("broker group {} has no member left, removing it from cluster {}", name,
                     key.cluster);
        if (names != cluster_addr_table_.end()) {
            names->second.erase(name);
        }
        remove_topic_by_broker_name_locked(name);
    }
    if (names != cluster_addr_table_.end() && names->second.empty()) {
        cluster_addr_table_.erase(names);
    }
}

void RouteInfoManager::unregister_broker(const std::string& cluster_name,
                                         const std::string& broker_addr,
                                         const std::string& broker_name, int64_t broker_id) {
    MutexLock lock(mu_);
    const LiveKey key{cluster_name, broker_addr};
    const bool was_live = broker_live_table_.contains(key);
    spdlog::info("unregister broker {} {} id {} cluster {} (was live: {})", broker_name,
                 broker_addr, broker_id, cluster_name, was_live);
    // By address rather than by id (Java): the same cleanup, and a stale unregister for an id
    // now held by another address cannot remove that address.
    remove_broker_locked(key);
}

void RouteInfoManager::on_member_removed_locked(const BrokerData& bd, const LiveKey& removed,
                                                bool was_min) {
    if (bd.broker_addrs.begin()->first != kMasterId) {
        // No master left: producers must skip the group (RocketMQ cleanTopicByUnRegisterRequests).
        for (auto& [topic, by_broker] : topic_queue_table_) {
            auto q = by_broker.find(bd.broker_name);
            if (q != by_broker.end() && (q->second.perm & kPermWrite) != 0) {
                q->second.perm &= ~kPermWrite;
            }
        }
    }
    if (!was_min) {
        return;
    }
    MinBrokerIdChange change;
    change.cluster_name = removed.cluster;
    change.broker_name = bd.broker_name;
    change.min_broker_id = bd.broker_addrs.begin()->first;
    change.min_broker_addr = bd.broker_addrs.begin()->second;
    change.offline_broker_addr = removed.addr;
    change.notify_addrs = choose_addrs_to_notify(bd.broker_addrs, true);
    spdlog::info("min broker id of {} changed to {} ({}): {} went offline", bd.broker_name,
                 change.min_broker_id, change.min_broker_addr, removed.addr);
    min_id_changes_.push_back(std::move(change));
}

std::vector<MinBrokerIdChange> RouteInfoManager::take_min_broker_id_changes() {
    MutexLock lock(mu_);
    std::vector<MinBrokerIdChange> out;
    out.swap(min_id_changes_);
    return out;
}

std::optional<TopicRouteData> RouteInfoManager::pick_topic_route_data(
    const std::string& topic) const {
    MutexLock lock(mu_);
    auto t = topic_queue_table_.find(topic);
    if (t == topic_queue_table_.end()) {
        return std::nullopt;
    }
    TopicRouteData route;
    for (const auto& [broker_name, qd] : t->second) {
        route.queue_datas.push_back(qd);
        auto bd = broker_addr_table_.find(broker_name);
        if (bd == broker_addr_table_.end()) {
            continue;
        }
        route.broker_datas.push_back(bd->second);
        for (const auto& [id, addr] : bd->second.broker_addrs) {
            auto fs = filter_server_table_.find(LiveKey{bd->second.cluster, addr});
            if (fs != filter_server_table_.end()) {
                route.filter_server_table[addr] = fs->second;
            }
        }
    }
    if (route.broker_datas.empty() || route.queue_datas.empty()) {
        return std::nullopt;
    }
    if (support_acting_master_.load()) {
        // RocketMQ 5 pickupTopicRouteData: a group without master, acting-master capable, whose
        // queues are read-only, shows its smallest brokerId as the master (id 0).
        for (BrokerData& bd : route.broker_datas) {
            if (bd.broker_addrs.empty() || bd.broker_addrs.contains(kMasterId) ||
                !bd.enable_acting_master.value_or(false)) {
                continue;
            }
            for (const QueueData& qd : route.queue_datas) {
                if (qd.broker_name == bd.broker_name) {
                    if ((qd.perm & kPermWrite) == 0) {
                        auto min = bd.broker_addrs.begin();
                        std::string acting = min->second;
                        bd.broker_addrs.erase(min);
                        bd.broker_addrs.emplace(kMasterId, std::move(acting));
                    }
                    break;
                }
            }
        }
    }
    return route;
}

ClusterInfo RouteInfoManager::get_all_cluster_info() const {
    MutexLock lock(mu_);
    return ClusterInfo{broker_addr_table_, cluster_addr_table_};
}

std::vector<std::string> RouteInfoManager::get_all_topic_list() const {
    MutexLock lock(mu_);
    std::vector<std::string> out;
    out.reserve(topic_queue_table_.size());
    for (const auto& [topic, by_broker] : topic_queue_table_) {
        out.push_back(topic);
    }
    return out;
}

int RouteInfoManager::wipe_write_perm_of_broker(const std::string& broker_name) {
    MutexLock lock(mu_);
    int count = 0;
    for (auto& [topic, by_broker] : topic_queue_table_) {
        auto q = by_broker.find(broker_name);
        if (q != by_broker.end()) {
            q->second.perm &= ~kPermWrite;
            ++count;
        }
    }
    return count;
}

int RouteInfoManager::add_write_perm_of_broker(const std::string& broker_name) {
    MutexLock lock(mu_);
    int count = 0;
    for (auto& [topic, by_broker] : topic_queue_table_) {
        auto q = by_broker.find(broker_name);
        if (q != by_broker.end()) {
            q->second.perm = kPermRead | kPermWrite;  // Java: PERM_READ | PERM_WRITE, not |=
            ++count;
        }
    }
    return count;
}

std::vector<std::string> RouteInfoManager::get_system_topic_list(std::string* broker_addr) const {
    MutexLock lock(mu_);
    std::set<std::string> names;
    for (const auto& [cluster, broker_names] : cluster_addr_table_) {
        names.insert(cluster);
        names.insert(broker_names.begin(), broker_names.end());
    }
    broker_addr->clear();
    for (const auto& [name, bd] : broker_addr_table_) {
        if (!bd.broker_addrs.empty()) {
            *broker_addr = bd.broker_addrs.begin()->second;
            break;
        }
    }
    return {names.begin(), names.end()};
}

std::vector<std::string> RouteInfoManager::get_topics_by_cluster(
    const std::string& cluster_name) const {
    MutexLock lock(mu_);
    std::vector<std::string> out;
    auto names = cluster_addr_table_.find(cluster_name);
    if (names == cluster_addr_table_.end()) {
        return out;
    }
    for (const auto& [topic, by_broker] : topic_queue_table_) {
        for (const auto& [broker_name, qd] : by_broker) {
            if (names->second.contains(broker_name)) {
                out.push_back(topic);
                break;
            }
        }
    }
    return out;
}

bool RouteInfoManager::delete_topic(const std::string& topic,
                                    const std::optional<std::string>& cluster_name) {
    MutexLock lock(mu_);
    auto t = topic_queue_table_.find(topic);
    if (t == topic_queue_table_.end()) {
        return false;
    }
    if (!cluster_name || cluster_name->empty()) {
        topic_queue_table_.erase(t);
        spdlog::info("delete topic {} from the name server", topic);
        return true;
    }
    auto names = cluster_addr_table_.find(*cluster_name);
    if (names != cluster_addr_table_.end()) {
        for (const std::string& name : names->second) {
            t->second.erase(name);
        }
    }
    if (t->second.empty()) {
        topic_queue_table_.erase(t);
    }
    spdlog::info("delete topic {} of cluster {} from the name server", topic, *cluster_name);
    return true;
}

BrokerMemberGroup RouteInfoManager::get_broker_member_group(const std::string& cluster_name,
                                                            const std::string& broker_name) const {
    MutexLock lock(mu_);
    BrokerMemberGroup group{cluster_name, broker_name, {}};
    auto bd = broker_addr_table_.find(broker_name);
    if (bd != broker_addr_table_.end() && bd->second.cluster == cluster_name) {
        for (const auto& [id, addr] : bd->second.broker_addrs) {
            if (broker_live_table_.contains(LiveKey{cluster_name, addr})) {
                group.broker_addrs.emplace(id, addr);
            }
        }
    }
    return group;
}

bool RouteInfoManager::is_broker_topic_config_changed(const std::string& cluster_name,
                                                      const std::string& broker_addr,
                                                      const DataVersion& version) const {
    MutexLock lock(mu_);
    auto live = broker_live_table_.find(LiveKey{cluster_name, broker_addr});
    return live == broker_live_table_.end() || !(live->second.data_version == version);
}

std::optional<DataVersion> RouteInfoManager::query_broker_topic_config(
    const std::string& cluster_name, const std::string& broker_addr) const {
    MutexLock lock(mu_);
    auto live = broker_live_table_.find(LiveKey{cluster_name, broker_addr});
    if (live == broker_live_table_.end()) {
        return std::nullopt;
    }
    return live->second.data_version;
}

bool RouteInfoManager::update_broker_info_update_timestamp(const std::string& cluster_name,
                                                           const std::string& broker_addr) {
    MutexLock lock(mu_);
    auto live = broker_live_table_.find(LiveKey{cluster_name, broker_addr});
    if (live == broker_live_table_.end()) {
        return false;
    }
    live->second.last_update = clock_.now();
    return true;
}

std::vector<ExpiredBroker> RouteInfoManager::scan_not_active_broker() {
    MutexLock lock(mu_);
    const TimePoint now = clock_.now();
    std::vector<ExpiredBroker> expired;
    for (const auto& [key, info] : broker_live_table_) {
        if (info.last_update + info.timeout < now) {
            expired.push_back(ExpiredBroker{key.cluster, key.addr, info.channel});
        }
    }
    for (const ExpiredBroker& e : expired) {
        spdlog::warn(
            "the broker channel expired: {} (cluster {}), no heartbeat for more than its "
            "timeout; removing it",
            e.broker_addr, e.cluster_name);
        remove_broker_locked(LiveKey{e.cluster_name, e.broker_addr});
    }
    return expired;
}

std::vector<std::string> RouteInfoManager::on_channel_destroy(ChannelId channel) {
    std::vector<std::string> removed;
    if (channel == 0) {
        return removed;
    }
    MutexLock lock(mu_);
    std::vector<LiveKey> keys;
    for (const auto& [key, info] : broker_live_table_) {
        if (info.channel == channel) {
            keys.push_back(key);
        }
    }
    for (const LiveKey& key : keys) {
        spdlog::info("broker channel closed: removing {} (cluster {})", key.addr, key.cluster);
        remove_broker_locked(key);
        removed.push_back(key.addr);
    }
    return removed;
}

size_t RouteInfoManager::live_broker_count() const {
    MutexLock lock(mu_);
    return broker_live_table_.size();
}

bool RouteInfoManager::check_invariants() const {
    MutexLock lock(mu_);
    bool ok = true;
    for (const auto& [cluster, names] : cluster_addr_table_) {
        for (const std::string& name : names) {
            auto bd = broker_addr_table_.find(name);
            if (bd == broker_addr_table_.end() || bd->second.broker_addrs.empty()) {
                spdlog::error("invariant: cluster {} lists group {} without addresses", cluster,
                              name);
                ok = false;
            }
        }
    }
    for (const auto& [name, bd] : broker_addr_table_) {
        for (const auto& [id, addr] : bd.broker_addrs) {
            if (!broker_live_table_.contains(LiveKey{bd.cluster, addr})) {
                spdlog::error("invariant: {} id {} of {} has no live entry", addr, id, name);
                ok = false;
            }
        }
    }
    for (const auto& [topic, by_broker] : topic_queue_table_) {
        if (by_broker.empty()) {
            spdlog::error("invariant: topic {} has an empty queue map", topic);
            ok = false;
        }
    }
    return ok;
}

}  // namespace comet::namesrv
