#pragma once
// Ids, epochs and the events of the controller state machine (mirrors Java controller.impl.event:
// AlterSyncStateSetEvent, ApplyBrokerIdEvent, ElectMasterEvent, CleanBrokerDataEvent,
// UpdateBrokerAddressEvent). ReplicasInfoManager's request handlers produce events from the current
// state; the driver replicates them through the Raft log and every replica applies them in log
// order with ReplicasInfoManager::apply(). Plain values, no I/O.
//
// Differs from Java: ElectMasterEvent and AlterSyncStateSetEvent carry the epochs they were
// computed against, and apply() ignores an event whose epochs are stale, so a driver that
// pipelines requests (handles the next one before the previous events are applied) cannot apply a
// decision made on an outdated view. Java instead serialises handle+commit in its EventScheduler.

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <variant>

#include "base/status.h"
#include "base/strong_id.h"

namespace comet::controller {

// brokerControllerId: assigned by the controller, first one is 1 (MixAll.FIRST_BROKER_CONTROLLER_ID).
using BrokerId = StrongId<int64_t, struct BrokerIdTag>;
// +1 on every master election (successful or not, like Java SyncStateInfo.updateMasterInfo).
using MasterEpoch = StrongId<int32_t, struct MasterEpochTag>;
// +1 on every SyncStateSet change, elections included.
using SyncStateSetEpoch = StrongId<int32_t, struct SyncStateSetEpochTag>;

inline constexpr BrokerId kFirstBrokerId{1};
// ELECT_MASTER brokerId meaning "triggered by the controller itself" (ofControllerTrigger).
inline constexpr int64_t kControllerTriggeredBrokerId = -1;

// Java EventType ids; also the type byte of the encoding (docs/formats/controller-events.md).
enum class EventType : uint8_t {
    kAlterSyncStateSet = 1,
    kApplyBrokerId = 2,
    kElectMaster = 3,
    // 4 = READ_EVENT in Java (a no-op used to read through the log); not produced here.
    kCleanBrokerData = 5,
    kUpdateBrokerAddress = 6,
};

struct AlterSyncStateSetEvent {
    std::string broker_name;
    std::set<BrokerId> new_sync_state_set;
    SyncStateSetEpoch expected_epoch;  // epoch the request was validated against
    bool operator==(const AlterSyncStateSetEvent&) const = default;
};

struct ApplyBrokerIdEvent {
    std::string cluster_name;
    std::string broker_name;
    std::string broker_address;
    BrokerId broker_id;
    std::string register_check_code;
    bool operator==(const ApplyBrokerIdEvent&) const = default;
};

// new_master_elected == false: the old master is gone and no one could replace it; the master is
// cleared (master epoch still +1) and the SyncStateSet is kept.
struct ElectMasterEvent {
    std::string broker_name;
    bool new_master_elected = false;
    BrokerId new_master;  // meaningful only when new_master_elected
    MasterEpoch expected_master_epoch;
    SyncStateSetEpoch expected_sync_state_set_epoch;
    bool operator==(const ElectMasterEvent&) const = default;
};

// Empty ids_to_clean: drop the whole broker set.
struct CleanBrokerDataEvent {
    std::string broker_name;
    std::set<BrokerId> ids_to_clean;
    bool operator==(const CleanBrokerDataEvent&) const = default;
};

struct UpdateBrokerAddressEvent {
    std::string cluster_name;
    std::string broker_name;
    std::string broker_address;
    BrokerId broker_id;
    bool operator==(const UpdateBrokerAddressEvent&) const = default;
};

using Event = std::variant<AlterSyncStateSetEvent, ApplyBrokerIdEvent, ElectMasterEvent,
                           CleanBrokerDataEvent, UpdateBrokerAddressEvent>;

EventType event_type(const Event& e);
std::string_view event_type_name(EventType t);
// One line for logs: "ElectMaster broker-a elected=1 master=2 me=3 sse=5".
std::string describe(const Event& e);

// Event <-> bytes, one Raft log entry payload each. Layout: docs/formats/controller-events.md
//   u8 version(=1) | u8 type | fields (big-endian integers, strings as be32 length + bytes).
// decode() never reads past `bytes`; errors: kCorruption (truncated, trailing bytes, bad
// lengths), kUnsupported (unknown version or type).
std::string encode(const Event& e);
Result<Event> decode(std::string_view bytes);

}  // namespace comet::controller
