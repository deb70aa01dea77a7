#pragma once
// RouteInfoManager: the NameServer's routing tables (Java namesrv RouteInfoManager), as pure
// logic: no sockets, time from an injected Clock, connections known only as ChannelIds.
//
// Tables (Java names):
//   clusterAddrTable  cluster -> {brokerName}
//   brokerAddrTable   brokerName -> BrokerData {cluster, brokerId -> addr}
//   topicQueueTable   topic -> brokerName -> QueueData (taken from the group's master only)
//   brokerLiveTable   (cluster, brokerAddr) -> last heartbeat, timeout, DataVersion, channel,
//                     HA address
//   filterServerTable (cluster, brokerAddr) -> filter servers
//
// Owner: NamesrvController. Threads: request executors and the scan timer call any method;
// one Mutex guards every table (Java uses a ReadWriteLock). The lock is a leaf: no callback or
// other module is called while holding it; channels to close are returned to the caller.
// Invariants: every brokerName in clusterAddrTable has a BrokerData with >= 1 address; every
// address in a BrokerData has a live entry (it is removed together with it); topicQueueTable
// holds no empty topic maps.

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "namesrv/route_types.h"

namespace comet::namesrv {

// Everything REGISTER_BROKER carries (header + RegisterBrokerBody), already decoded.
struct RegisterBrokerRequest {
    std::string cluster_name;
    std::string broker_addr;
    std::string broker_name;
    int64_t broker_id = kMasterId;
    std::string ha_server_addr;
    std::optional<int64_t> heartbeat_timeout_millis;  // absent: brokerChannelExpiredTime
    bool enable_acting_master = false;
    std::optional<std::string> zone_name;
    DataVersion data_version;
    std::map<std::string, TopicConfig> topic_config_table;  // full, or only changed topics
    std::vector<std::string> filter_server_list;
    ChannelId channel = 0;
};

// Filled only for a slave whose master is alive: where to connect for HA replication.
struct RegisterBrokerResult {
    std::string ha_server_addr;
    std::string master_addr;
};

// A group's minimum live brokerId changed (RocketMQ 5 RouteInfoManager#notifyMinBrokerIdChanged):
// the name server sends NOTIFY_MIN_BROKER_ID_CHANGE (905) one-way to every address in
// `notify_addrs`. Only groups whose brokers registered with enableActingMaster=true produce one.
struct MinBrokerIdChange {
    std::string cluster_name;
    std::string broker_name;
    int64_t min_broker_id = kMasterId;
    std::string min_broker_addr;
    std::string offline_broker_addr;  // empty: none (a broker with a smaller id registered)
    std::string ha_broker_addr;       // HA address of the registering broker (register path)
    std::vector<std::string> notify_addrs;
};

// A broker removed by the expiry scan; its channel (if any) should be closed.
struct ExpiredBroker {
    std::string cluster_name;
    std::string broker_addr;
    ChannelId channel = 0;
};

class RouteInfoManager {
public:
    // `default_expired_time` is NamesrvConfig.brokerChannelExpiredTime (120 s in RocketMQ).
    RouteInfoManager(const Clock& clock, std::chrono::milliseconds default_expired_time);

    // RouteInfoManager#registerBroker. Adds the broker to its cluster and group, drops any other
    // brokerId of the group registered from the same address (slave promoted to master), refreshes
    // queue data from a master's topic configs when its DataVersion changed or it is new, and
    // records the heartbeat. A registration whose brokerId is held by another live address with a
    // larger DataVersion.stateVersion is ignored (stale) and returns an empty result.
    // Errors: kInvalidArgument when cluster, name or address is empty or brokerId < 0.
    Result<RegisterBrokerResult> register_broker(const RegisterBrokerRequest& req);

    // RouteInfoManager#unregisterBroker. Unknown brokers are ignored.
    void unregister_broker(const std::string& cluster_name, const std::string& broker_addr,
                           const std::string& broker_name, int64_t broker_id);

    // The route of a topic, or nullopt when no live group serves it (TOPIC_NOT_EXIST).
    std::optional<TopicRouteData> pick_topic_route_data(const std::string& topic) const;

    ClusterInfo get_all_cluster_info() const;
    // Sorted topic names.
    std::vector<std::string> get_all_topic_list() const;
    // Topics served by the groups of one cluster, sorted.
    std::vector<std::string> get_topics_by_cluster(const std::string& cluster_name) const;
    // Removes a topic's queue data: all of it, or only the groups of `cluster_name` when given.
    // Returns false when the topic was unknown.
    bool delete_topic(const std::string& topic, const std::optional<std::string>& cluster_name);
    // Live addresses of one group by brokerId (empty map when unknown).
    BrokerMemberGroup get_broker_member_group(const std::string& cluster_name,
                                              const std::string& broker_name) const;

    // QUERY_DATA_VERSION support: true when the stored version differs (or the broker is unknown).
    bool is_broker_topic_config_changed(const std::string& cluster_name,
                                        const std::string& broker_addr,
                                        const DataVersion& version) const;
    std::optional<DataVersion> query_broker_topic_config(const std::string& cluster_name,
                                                         const std::string& broker_addr) const;
    // BROKER_HEARTBEAT / unchanged QUERY_DATA_VERSION: refresh the live timestamp. Returns false
    // for an unknown broker.
    bool update_broker_info_update_timestamp(const std::string& cluster_name,
                                             const std::string& broker_addr);

    // Removes every broker whose last heartbeat is older than its timeout; returns them so the
    // caller can close their channels (RouteInfoManager#scanNotActiveBroker).
    std::vector<ExpiredBroker> scan_not_active_broker();

    // The broker connection `channel` closed: remove the broker(s) registered over it
    // (RouteInfoManager#onChannelDestroy). Returns the removed addresses.
    std::vector<std::string> on_channel_destroy(ChannelId channel);

    // Pending minimum-brokerId changes, oldest first; the queue is emptied. Filled by
    // register_broker (a smaller brokerId joined), unregister_broker, scan_not_active_broker and
    // on_channel_destroy (the group's minimum left while others stay), only for groups that
    // registered with enableActingMaster=true. The caller sends the notifications.
    std::vector<MinBrokerIdChange> take_min_broker_id_changes();

    // NamesrvConfig.supportActingMaster: a route of a group without master whose queues lost
    // their write permission names its smallest brokerId as brokerId 0 (the acting master).
    void set_support_acting_master(bool on) { support_acting_master_.store(on); }

    // WIPE_WRITE_PERM_OF_BROKER / ADD_WRITE_PERM_OF_BROKER (Java operateWritePermOfBroker):
    // every topic queue data of `broker_name` loses the write bit (wipe) or becomes read+write
    // (add). Returns how many topics the group serves. Lasts until the group registers a
    // changed topic table.
    int wipe_write_perm_of_broker(const std::string& broker_name);
    int add_write_perm_of_broker(const std::string& broker_name);
    // GET_SYSTEM_TOPIC_LIST_FROM_NS (Java getSystemTopicList): every cluster name and every
    // brokerName (the per-cluster / per-broker system topics), and one broker address (empty
    // when no broker is registered).
    std::vector<std::string> get_system_topic_list(std::string* broker_addr) const;

    // Number of live brokers (for logs and tests).
    size_t live_broker_count() const;

    // Checks the class invariants (tests call it after each step); false with a log on violation.
    bool check_invariants() const;

private:
    struct LiveKey {
        std::string cluster;
        std::string addr;
        auto operator<=>(const LiveKey&) const = default;
    };
    struct BrokerLiveInfo {
        TimePoint last_update;
        std::chrono::milliseconds timeout;
        DataVersion data_version;
        ChannelId channel = 0;
        std::string ha_server_addr;
    };

    // What adding a registering broker to its group's BrokerData changed.
    struct MemberUpdate {
        bool min_id_changed = false;  // its brokerId is below every one registered before
        bool inserted = false;        // its brokerId was not in the group
        std::string replaced_addr;    // the address that held its brokerId until now
    };

    // The steps of register_broker, all under mu_. Requires (stale check): the group exists.
    bool is_stale_registration_locked(const RegisterBrokerRequest& req) const REQUIRES(mu_);
    MemberUpdate add_group_member_locked(const RegisterBrokerRequest& req, bool register_first,
                                         BrokerData& bd) REQUIRES(mu_);
    void refresh_queue_data_locked(const RegisterBrokerRequest& req, const LiveKey& key,
                                   const BrokerData& bd, bool register_first) REQUIRES(mu_);
    void record_live_broker_locked(const RegisterBrokerRequest& req, const LiveKey& key,
                                   const std::string& replaced_addr) REQUIRES(mu_);
    void fill_master_ha_locked(const RegisterBrokerRequest& req, const BrokerData& bd,
                               RegisterBrokerResult* result) const REQUIRES(mu_);
    void queue_min_id_change_locked(const RegisterBrokerRequest& req, const BrokerData& bd)
        REQUIRES(mu_);

    // Removes one live broker (cluster, addr) and everything only it kept alive. When the
    // group's master (or minimum brokerId) leaves and others stay, queues of an acting-master
    // group lose their write permission and a MinBrokerIdChange is queued.
    void remove_broker_locked(const LiveKey& key) REQUIRES(mu_);
    // A member of an acting-master group left and others stay: wipe write perms when no master
    // is left, queue a MinBrokerIdChange when it was the minimum.
    void on_member_removed_locked(const BrokerData& bd, const LiveKey& removed, bool was_min)
        REQUIRES(mu_);
    // Drops the queue data of a group that has no member left.
    void remove_topic_by_broker_name_locked(const std::string& broker_name) REQUIRES(mu_);
    void create_and_update_queue_data_locked(const std::string& broker_name, const TopicConfig& tc)
        REQUIRES(mu_);

    const Clock& clock_;
    const std::chrono::milliseconds default_expired_time_;

    mutable Mutex mu_;
    std::map<std::string, std::set<std::string>> cluster_addr_table_ GUARDED_BY(mu_);
    std::map<std::string, BrokerData> broker_addr_table_ GUARDED_BY(mu_);
    std::map<std::string, std::map<std::string, QueueData>> topic_queue_table_ GUARDED_BY(mu_);
    std::map<LiveKey, BrokerLiveInfo> broker_live_table_ GUARDED_BY(mu_);
    std::map<LiveKey, std::vector<std::string>> filter_server_table_ GUARDED_BY(mu_);
    std::vector<MinBrokerIdChange> min_id_changes_ GUARDED_BY(mu_);
    std::atomic<bool> support_acting_master_{false};
};

}  // namespace comet::namesrv
