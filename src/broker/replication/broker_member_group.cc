#include "broker/replication/broker_member_group.h"

#include <spdlog/spdlog.h>

#include <charconv>

namespace comet::broker {

namespace {

Result<int64_t> int_key(const std::map<std::string, std::string>& props, const char* key,
                        int64_t dflt, int64_t min) {
    auto it = props.find(key);
    if (it == props.end() || it->second.empty()) {
        return dflt;
    }
    int64_t v = 0;
    const char* b = it->second.data();
    const char* e = b + it->second.size();
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || p != e || v < min) {
        return Status::error(Errc::kInvalidArgument, "{}={}: expected an integer >= {}", key,
                             it->second, min);
    }
    return v;
}

}  // namespace

Result<MemberGroupSettings> MemberGroupSettings::from(const BrokerConfig& config) {
    const auto props = config.to_properties();
    MemberGroupSettings s;
    if (auto it = props.find("enableSlaveActingMaster"); it != props.end()) {
        if (it->second == "true") {
            s.enable_slave_acting_master = true;
        } else if (it->second != "false" && !it->second.empty()) {
            return Status::error(Errc::kInvalidArgument,
                                 "enableSlaveActingMaster={}: expected true or false", it->second);
        }
    }
    COMET_ASSIGN_OR_RETURN(s.sync_broker_member_group_period,
                           int_key(props, "syncBrokerMemberGroupPeriod", 1000, 10));
    COMET_ASSIGN_OR_RETURN(s.slave_sync_period,
                           int_key(props, "slaveSynchronizePeriod", 10000, 100));
    return s;
}

BrokerMemberGroupTracker::BrokerMemberGroupTracker(int64_t self_id, std::string self_addr,
                                                   bool enable_slave_acting_master)
    : self_id_(self_id),
      self_addr_(std::move(self_addr)),
      enable_slave_acting_master_(enable_slave_acting_master) {}

std::optional<MinBrokerChange> BrokerMemberGroupTracker::on_member_group(
    const std::map<int64_t, std::string>& members) {
    if (members.empty()) {
        spdlog::warn("no member of this broker's group is known to the name server");
        return std::nullopt;
    }
    // BrokerController#calcAliveBrokerNumInGroup: this broker counts even when the name server
    // has not (yet) listed it.
    const size_t n = members.size() + (members.contains(self_id_) ? 0 : 1);
    alive_.store(static_cast<int32_t>(n), std::memory_order_relaxed);
    MutexLock l(mu_);
    members_ = members;
    if (!enable_slave_acting_master_ || self_id_ == 0) {
        return std::nullopt;
    }
    const auto& [min_id, min_addr] = *members.begin();
    if (min_id == min_id_) {
        min_addr_ = min_addr;  // learn the address of the current minimum (the master at start)
        return std::nullopt;
    }
    // updateMinBroker(2 args): the old minimum is offline when the minimum grew.
    std::optional<std::string> offline;
    if (min_id > min_id_ && !min_addr_.empty()) {
        offline = min_addr_;
    }
    return update_min_locked(min_id, min_addr, offline, "");
}

std::optional<MinBrokerChange> BrokerMemberGroupTracker::on_min_broker_id_change(
    const MinBrokerIdChangeHeader& h) {
    if (!enable_slave_acting_master_ || self_id_ == 0) {
        return std::nullopt;
    }
    MutexLock l(mu_);
    spdlog::warn("min broker id changed, prev {}, new {}", min_id_, h.min_broker_id);
    if (h.min_broker_id == min_id_) {
        return std::nullopt;
    }
    return update_min_locked(h.min_broker_id, h.min_broker_addr.value_or(""), h.offline_broker_addr,
                             h.ha_broker_addr.value_or(""));
}

std::optional<MinBrokerChange> BrokerMemberGroupTracker::update_min_locked(
    int64_t min_id, const std::string& min_addr, std::optional<std::string> offline_addr,
    const std::string& ha_addr) {
    const std::string prev_addr = min_addr_;
    MinBrokerChange c;
    c.min_broker_id = min_id;
    c.min_broker_addr = min_addr;
    c.offline_broker_addr = offline_addr.value_or("");
    c.master_ha_addr = ha_addr;
    c.acting_master = min_id == self_id_;
    c.master_online = min_id == 0 && !min_addr.empty();
    // onMinBrokerChange compares the offline address with the master we sync from; the master
    // is the only broker that can have been the minimum before us.
    c.master_offline = !c.offline_broker_addr.empty() && min_id_ == 0;
    min_id_ = min_id;
    min_addr_ = min_addr;
    acting_master_.store(c.acting_master, std::memory_order_relaxed);
    spdlog::info("group minimum brokerId now {} ({}), previous {}{}; acting master: {}", min_id,
                 min_addr, prev_addr.empty() ? "-" : prev_addr,
                 c.offline_broker_addr.empty() ? "" : " (offline)", c.acting_master);
    return c;
}

int64_t BrokerMemberGroupTracker::min_broker_id() const {
    MutexLock l(mu_);
    return min_id_;
}

std::string BrokerMemberGroupTracker::min_broker_addr() const {
    MutexLock l(mu_);
    return min_addr_;
}

std::map<int64_t, std::string> BrokerMemberGroupTracker::members() const {
    MutexLock l(mu_);
    return members_;
}

}  // namespace comet::broker
