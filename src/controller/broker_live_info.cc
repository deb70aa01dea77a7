#include "controller/broker_live_info.h"

namespace comet::controller {

bool master_lease_valid(TimePoint now, std::optional<TimePoint> last_acked_send_time,
                        Millis lease) {
    if (!last_acked_send_time) {
        return false;
    }
    return now - *last_acked_send_time <= lease;
}

bool master_lease_expired(TimePoint now, std::optional<TimePoint> last_received,
                          TimePoint tracking_since, const MasterLeaseConfig& config) {
    const Duration wait = config.lease + config.clock_drift_margin;
    if (now - tracking_since <= wait + config.leader_overlap) {
        return false;
    }
    return !last_received || now - *last_received > wait;
}

void BrokerHeartbeatManager::on_heartbeat(TimePoint now, const std::string& cluster,
                                          const std::string& broker_name, BrokerId id,
                                          const std::string& addr, std::optional<int32_t> epoch,
                                          std::optional<int64_t> max_offset,
                                          std::optional<int64_t> confirm_offset,
                                          std::optional<Millis> timeout,
                                          std::optional<int32_t> election_priority) {
    const int32_t real_epoch = epoch.value_or(-1);
    const int64_t real_max = max_offset.value_or(-1);
    auto [it, inserted] = table_.try_emplace(Key{cluster, broker_name, id});
    BrokerLiveInfo& info = it->second;
    if (inserted) {
        info.cluster_name = cluster;
        info.broker_name = broker_name;
        info.broker_id = id;
        info.epoch = real_epoch;
        info.max_offset = real_max;
        info.confirm_offset = confirm_offset.value_or(-1);
    } else if (real_epoch > info.epoch ||
               (real_epoch == info.epoch && real_max > info.max_offset)) {
        info.epoch = real_epoch;
        info.max_offset = real_max;
        info.confirm_offset = confirm_offset.value_or(-1);
    }
    // Java keeps the first address; a broker whose address changed re-registers anyway.
    if (inserted) {
        info.broker_addr = addr;
    }
    info.last_update = now;
    info.heartbeat_timeout = timeout.value_or(Millis(10000));
    info.election_priority = election_priority.value_or(INT32_MAX);
}

void BrokerHeartbeatManager::grant_lease(TimePoint now, const std::string& cluster,
                                         const std::string& broker_name, BrokerId id) {
    last_received_[Key{cluster, broker_name, id}] = now;
}

void BrokerHeartbeatManager::remove(const std::string& cluster, const std::string& broker_name,
                                    BrokerId id) {
    table_.erase(Key{cluster, broker_name, id});
}

const BrokerLiveInfo* BrokerHeartbeatManager::find(const std::string& cluster,
                                                   const std::string& broker_name,
                                                   BrokerId id) const {
    auto it = table_.find(Key{cluster, broker_name, id});
    return it == table_.end() ? nullptr : &it->second;
}

bool BrokerHeartbeatManager::is_active(TimePoint now, const std::string& cluster,
                                       const std::string& broker_name, BrokerId id) const {
    const BrokerLiveInfo* info = find(cluster, broker_name, id);
    return info != nullptr && info->is_active(now);
}

bool BrokerHeartbeatManager::lease_expired(TimePoint now, const std::string& cluster,
                                           const std::string& broker_name, BrokerId id) const {
    std::optional<TimePoint> last;
    if (auto it = last_received_.find(Key{cluster, broker_name, id}); it != last_received_.end()) {
        last = it->second;
    }
    return master_lease_expired(now, last, tracking_since_, lease_);
}

std::vector<BrokerLiveInfo> BrokerHeartbeatManager::scan_not_active(TimePoint now) {
    std::vector<BrokerLiveInfo> out;
    for (auto it = table_.begin(); it != table_.end();) {
        if (!it->second.is_active(now)) {
            out.push_back(std::move(it->second));
            it = table_.erase(it);
        } else {
            ++it;
        }
    }
    return out;
}

}  // namespace comet::controller
