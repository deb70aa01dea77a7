#pragma once
// ReplicasInfoManager: the controller's replicated state machine (mirrors Java
// controller.impl.manager.ReplicasInfoManager + BrokerReplicaInfo + SyncStateInfo).
//
// Per broker set (brokerName): cluster, replica table brokerControllerId -> {address,
// registerCheckCode}, next id to hand out, master (or none), masterEpoch, SyncStateSet and
// syncStateSetEpoch.
//
// Two phases, like Java:
//   handle_*(request, liveness) is const: it validates a request against the current state (and,
//     where the request needs it, leader-local liveness) and returns the RPC response (RocketMQ
//     code, remark, typed header, JSON body) plus the events that carry out the change;
//   apply(event) changes the state deterministically. The driver appends the events to the Raft
//     log and calls apply() on every replica, in log order, once they commit; it answers the
//     request after its events are applied (or, on a non-leader/lost commit, with an error).
// Events carry the epochs they were computed against; apply() ignores a stale one (see events.h),
// so identical logs give identical state even if the driver validates ahead of applying.
//
// Owner: the controller driver; single-threaded, no I/O, no clocks.
// Invariants (check_invariants()): in every broker set, ids >= 1 and < next_assign_broker_id;
// SyncStateSet ⊆ replicas; a master is a replica and a SyncStateSet member; epochs >= 0.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "controller/broker_live_info.h"
#include "controller/events.h"
#include "protocol/ha_bodies.h"
#include "protocol/ha_headers.h"

namespace comet::controller {

// One row of a broker set's replica table (Java BrokerReplicaInfo.brokerIdInfo value).
struct ReplicaEntry {
    std::string address;
    std::string register_check_code;  // "<brokerAddr>;<currentTimeMillis>" from APPLY_BROKER_ID
    bool operator==(const ReplicaEntry&) const = default;
};

// Everything the controller replicates about one broker set (Java BrokerReplicaInfo and
// SyncStateInfo in one value). Invariants: see ReplicasInfoManager.
struct BrokerSetState {
    std::string cluster_name;
    std::string broker_name;
    // Comet: max(previous, applied id + 1). Java counts adds instead, which can hand out an id
    // that is already taken after a broker applied an id out of order, and then loops forever.
    BrokerId next_assign_broker_id = kFirstBrokerId;
    std::map<BrokerId, ReplicaEntry> replicas;
    std::optional<BrokerId> master;
    MasterEpoch master_epoch{0};  // 0 = never elected (isFirstTimeForElect)
    SyncStateSetEpoch sync_state_set_epoch{0};
    std::set<BrokerId> sync_state_set;
    bool operator==(const BrokerSetState&) const = default;
};

// What a handler returns: the response for the requester and the events to replicate.
// `code` is a RocketMQ response code (controller_codes.h); `body` is the JSON body or empty.
template <typename Header>
struct ControllerResult {
    int32_t code = 0;
    std::string remark;
    Header header{};
    std::string body;
    std::vector<Event> events;

    void fail(int32_t c, std::string r) {
        code = c;
        remark = std::move(r);
    }
};
struct NoHeader {};

struct ReplicasInfoConfig {
    bool enable_elect_unclean_master = false;  // ControllerConfig.enableElectUncleanMaster
};

class ReplicasInfoManager {
public:
    explicit ReplicasInfoManager(ReplicasInfoConfig config = {}) : config_(config) {}

    // CONTROLLER_GET_NEXT_BROKER_ID (1012): nextBrokerId, 1 for an unknown set. No events.
    ControllerResult<protocol::GetNextBrokerIdResponseHeader> handle_get_next_broker_id(
        const protocol::GetNextBrokerIdRequestHeader& req) const;
    // CONTROLLER_APPLY_BROKER_ID (1013): claims appliedBrokerId. A new set accepts only id 1; a
    // known set accepts a free id or a retry with the same registerCheckCode; otherwise
    // CONTROLLER_BROKER_ID_INVALID. Event: ApplyBrokerId.
    ControllerResult<protocol::ApplyBrokerIdResponseHeader> handle_apply_broker_id(
        const protocol::ApplyBrokerIdRequestHeader& req) const;
    // CONTROLLER_REGISTER_BROKER (1003): CONTROLLER_BROKER_NEED_TO_BE_REGISTERED for an unknown
    // set or id; master fields only when the master is alive; body SyncStateSet. Event
    // UpdateBrokerAddress when the address changed.
    ControllerResult<protocol::RegisterBrokerToControllerResponseHeader> handle_register_broker(
        const protocol::RegisterBrokerToControllerRequestHeader& req,
        const BrokerLiveness& liveness) const;
    // CONTROLLER_ELECT_MASTER (1002). SUCCESS (event ElectMaster, body ElectMasterResponseBody),
    // CONTROLLER_MASTER_STILL_EXIST (old master kept, or its lease has not run out, designated
    // election or not: header filled, no event), CONTROLLER_MASTER_NOT_AVAILABLE
    // (controller-triggered and no one qualifies: event clears the master),
    // CONTROLLER_ELECT_MASTER_FAILED (broker-requested and no one qualifies),
    // CONTROLLER_BROKER_NEED_TO_BE_REGISTERED.
    ControllerResult<protocol::ElectMasterResponseHeader> handle_elect_master(
        const protocol::ElectMasterRequestHeader& req, const BrokerLiveness& liveness) const;
    // CONTROLLER_ALTER_SYNC_STATE_SET (1001), rejections in Java's order: unknown set (2013),
    // same set (2013), wrong master (2002), masterEpoch (2000), syncStateSetEpoch (2001), unknown
    // replica (2003), dead replica (2006), set without the master (2013). Event AlterSyncStateSet.
    ControllerResult<protocol::AlterSyncStateSetResponseHeader> handle_alter_sync_state_set(
        const protocol::AlterSyncStateSetRequestHeader& req, const protocol::SyncStateSet& body,
        const BrokerLiveness& liveness) const;
    // CONTROLLER_GET_REPLICA_INFO (1004): master id/address/epoch, body SyncStateSet;
    // CONTROLLER_BROKER_METADATA_NOT_EXIST for an unknown set.
    ControllerResult<protocol::GetReplicaInfoResponseHeader> handle_get_replica_info(
        const protocol::GetReplicaInfoRequestHeader& req) const;
    // CONTROLLER_GET_SYNC_STATE_DATA (1006): body BrokerReplicasInfo for the known names.
    ControllerResult<NoHeader> handle_get_sync_state_data(const std::vector<std::string>& names,
                                                          const BrokerLiveness& liveness) const;
    // CLEAN_BROKER_DATA (1011): CONTROLLER_INVALID_CLEAN_BROKER_METADATA when a named broker (or,
    // with no ids, the master) is alive and isCleanLivingBroker is false, when the id list does
    // not parse, or when the set is unknown. Event CleanBrokerData.
    ControllerResult<NoHeader> handle_clean_broker_data(
        const protocol::CleanBrokerDataRequestHeader& req, const BrokerLiveness& liveness) const;

    // Java scanNeedReelectBrokerSets: sets whose master is not alive while another replica is.
    std::vector<std::string> scan_need_reelect_broker_sets(const BrokerLiveness& liveness) const;

    // Applies one committed event. Deterministic; never consults liveness. Returns
    // kFailedPrecondition (state unchanged) for an event that no longer applies: stale epochs,
    // unknown broker set or replica, an id another broker's event took first. Every replica makes
    // the same decision; the driver then answers the request that produced the event with an
    // error instead of the prepared response.
    Status apply(const Event& event);

    const BrokerSetState* find(std::string_view broker_name) const;
    const std::map<std::string, BrokerSetState, std::less<>>& broker_sets() const { return sets_; }
    // COMET_CHECKs the class invariants (called by tests and the simulator after every step).
    void check_invariants() const;

    // Whole-state snapshot (docs/formats/controller-events.md): magic, version, CRC32, sets in
    // name order. decode_snapshot() errors: kCorruption (magic, CRC, truncation, broken
    // invariant), kUnsupported (version).
    std::string encode_snapshot() const;
    static Result<ReplicasInfoManager> decode_snapshot(std::string_view bytes,
                                                       ReplicasInfoConfig config = {});

private:
    Status apply_one(const AlterSyncStateSetEvent& e);
    Status apply_one(const ApplyBrokerIdEvent& e);
    Status apply_one(const ElectMasterEvent& e);
    Status apply_one(const CleanBrokerDataEvent& e);
    Status apply_one(const UpdateBrokerAddressEvent& e);
    static Status validate(const BrokerSetState& s);

    ReplicasInfoConfig config_;
    std::map<std::string, BrokerSetState, std::less<>> sets_;
};

}  // namespace comet::controller
