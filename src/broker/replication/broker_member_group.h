#pragma once
// BrokerMemberGroup tracking on a broker (RocketMQ 5 BrokerController#syncBrokerMemberGroup,
// #updateMinBroker, #onMinBrokerChange and the store's aliveReplicaNumInGroup): which members of
// this broker's group the name server sees alive, the smallest brokerId among them, and whether
// this broker is the group's acting master (a slave whose brokerId is the minimum while the
// master is gone).
//
// BrokerMemberGroupTracker is pure state: it is fed GET_BROKER_MEMBER_GROUP answers and
// NOTIFY_MIN_BROKER_ID_CHANGE headers and returns the MinBrokerChange to apply (the caller does
// the I/O). Thread-safe (one leaf mutex); alive_replica_num() and is_acting_master() are
// lock-free reads for the send and pull paths.
// Invariants: alive_replica_num() >= 1; acting master only when enableSlaveActingMaster, this
// broker is a slave and the minimum brokerId is its own.

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "base/mutex.h"
#include "base/status.h"
#include "broker/metadata/broker_config.h"
#include "protocol/header_codec.h"
#include "protocol/namesrv_headers.h"

namespace comet::broker {

// The replication-group keys this module reads. They are looked up by RocketMQ name in
// BrokerConfig::to_properties(), so they work whether BrokerConfig models them or keeps them in
// `extra`.
struct MemberGroupSettings {
    bool enable_slave_acting_master = false;         // enableSlaveActingMaster
    int64_t sync_broker_member_group_period = 1000;  // syncBrokerMemberGroupPeriod (ms)
    int64_t slave_sync_period = 10000;  // Comet slaveSynchronizePeriod (ms; RocketMQ: fixed 10 s)
    // Errors: kInvalidArgument naming the key when a value does not parse or is out of range.
    static Result<MemberGroupSettings> from(const BrokerConfig& config);
};

// NOTIFY_MIN_BROKER_ID_CHANGE (905) request header (protocol/namesrv_headers.h).
using MinBrokerIdChangeHeader = protocol::NotifyMinBrokerIdChangeRequestHeader;

// What changed when the group's minimum brokerId moved (BrokerController#onMinBrokerChange).
struct MinBrokerChange {
    int64_t min_broker_id = 0;
    std::string min_broker_addr;
    std::string offline_broker_addr;  // the previous minimum, when it went away
    std::string master_ha_addr;       // from the notification (may be empty)
    bool acting_master = false;       // this broker is now the acting master
    bool master_online = false;       // min is 0 again: sync from / replicate to it
    bool master_offline = false;      // the old minimum (our master) left
};

// suggestWhichBrokerId of PULL_MESSAGE responses (RocketMQ 5
// PullMessageProcessor#composeResponseHeader), as a pure function so every combination is
// unit-tested (defined in pull_message_processor.cc).
struct SuggestBroker {
    int64_t broker_id = 0;         // suggestWhichBrokerId
    bool retry_at_master = false;  // answer PULL_RETRY_IMMEDIATELY (nothing found on a slave)
};
struct PullSituation {
    bool is_slave = false;           // brokerId != 0
    bool master_is_minimum = true;   // the group's minimum brokerId is 0 (master alive)
    bool slave_read_enable = false;  // slaveReadEnable
    bool lagging = false;            // store: data beyond accessMessageInMemoryMaxRatio of RAM
    bool found = false;              // GetMessageStatus FOUND
    int64_t group_broker_id = 0;     // subscription group brokerId
    int64_t which_broker_when_consume_slowly = 1;
};
// - slaveReadEnable: whichBrokerWhenConsumeSlowly when lagging, else the group's brokerId;
//   otherwise 0 (the master).
// - a slave whose group still has its master, for a consumer that is not lagging: suggests 0,
//   serves what it FOUND, answers PULL_RETRY_IMMEDIATELY for anything else (back to the
//   master). With the master gone (acting master, or its minimum moved) it serves normally.
SuggestBroker suggest_which_broker(const PullSituation& s);

class BrokerMemberGroupTracker {
public:
    BrokerMemberGroupTracker(int64_t self_id, std::string self_addr,
                             bool enable_slave_acting_master);

    // A GET_BROKER_MEMBER_GROUP answer (brokerId -> addr of live members). An empty map is
    // ignored (name server without the group; RocketMQ keeps its values). Updates the alive count
    // always; the minimum only on a slave with enableSlaveActingMaster.
    std::optional<MinBrokerChange> on_member_group(const std::map<int64_t, std::string>& members);

    // A NOTIFY_MIN_BROKER_ID_CHANGE (ignored on masters and without enableSlaveActingMaster).
    std::optional<MinBrokerChange> on_min_broker_id_change(const MinBrokerIdChangeHeader& h);

    // Live members counted by the name server, this broker included; never < 1.
    int32_t alive_replica_num() const { return alive_.load(std::memory_order_relaxed); }
    bool is_acting_master() const { return acting_master_.load(std::memory_order_relaxed); }
    int64_t min_broker_id() const;
    std::string min_broker_addr() const;
    std::map<int64_t, std::string> members() const;

private:
    std::optional<MinBrokerChange> update_min_locked(int64_t min_id, const std::string& min_addr,
                                                     std::optional<std::string> offline_addr,
                                                     const std::string& ha_addr) REQUIRES(mu_);

    const int64_t self_id_;
    const std::string self_addr_;
    const bool enable_slave_acting_master_;
    mutable Mutex mu_;
    int64_t min_id_ GUARDED_BY(mu_) = 0;  // RocketMQ starts with MASTER_ID
    std::string min_addr_ GUARDED_BY(mu_);
    std::map<int64_t, std::string> members_ GUARDED_BY(mu_);
    std::atomic<int32_t> alive_{1};
    std::atomic<bool> acting_master_{false};
};

}  // namespace comet::broker
