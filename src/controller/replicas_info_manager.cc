#include "controller/replicas_info_manager.h"

#include <fmt/format.h>

#include <charconv>

#include "base/crc32.h"
#include "controller/codec_util.h"
#include "controller/controller_codes.h"
#include "controller/elect_policy.h"
#include "controller/replicas_bodies.h"

namespace comet::controller {
namespace {

constexpr uint32_t kSnapshotMagic = 0x434D5353;  // "CMSS"
constexpr uint8_t kSnapshotVersion = 1;

std::optional<std::string> address_of(const BrokerSetState& s, std::optional<BrokerId> id) {
    if (!id) {
        return std::nullopt;
    }
    auto it = s.replicas.find(*id);
    if (it == s.replicas.end()) {
        return std::nullopt;
    }
    return it->second.address;
}

std::set<int64_t> raw_ids(const std::set<BrokerId>& ids) {
    std::set<int64_t> out;
    for (BrokerId id : ids) {
        out.insert(id.value());
    }
    return out;
}

std::string sync_state_set_body(const BrokerSetState& s) {
    protocol::SyncStateSet body;
    body.sync_state_set = raw_ids(s.sync_state_set);
    body.sync_state_set_epoch = s.sync_state_set_epoch.value();
    return body.encode();
}

// What elect_master() decides from: the set's SyncStateSet (every replica with
// enableElectUncleanMaster), its old master and the designated requester, if any.
ElectInput elect_input(const BrokerSetState& s, bool unclean, std::optional<BrokerId> designated) {
    ElectInput in;
    in.cluster_name = s.cluster_name;
    in.broker_name = s.broker_name;
    in.sync_state_set = s.sync_state_set;
    if (unclean) {
        std::set<BrokerId> all;
        for (const auto& [id, entry] : s.replicas) {
            all.insert(id);
        }
        in.all_replicas = std::move(all);
    }
    in.old_master = s.master;
    in.designated = designated;
    return in;
}

// CONTROLLER_MASTER_STILL_EXIST: the old master is kept; the answer describes it.
void fill_master_still_exists(const BrokerSetState& s, std::string remark,
                              ControllerResult<protocol::ElectMasterResponseHeader>* r) {
    r->header.master_broker_id = s.master->value();
    r->header.master_address = address_of(s, s.master);
    r->header.master_epoch = s.master_epoch.value();
    r->header.sync_state_set_epoch = s.sync_state_set_epoch.value();
    protocol::ElectMasterResponseBody body;
    body.sync_state_set = raw_ids(s.sync_state_set);
    r->body = body.encode();
    r->fail(code::kMasterStillExist, std::move(remark));
}

// SUCCESS: the answer names the new master with the epochs it will have, and the event.
void fill_master_elected(const BrokerSetState& s, BrokerId new_master,
                         ControllerResult<protocol::ElectMasterResponseHeader>* r) {
    r->header.master_broker_id = new_master.value();
    r->header.master_address = address_of(s, new_master);
    r->header.master_epoch = (s.master_epoch + 1).value();
    r->header.sync_state_set_epoch = (s.sync_state_set_epoch + 1).value();
    protocol::ElectMasterResponseBody body;
    body.sync_state_set = {new_master.value()};
    protocol::BrokerMemberGroup group;
    group.cluster = s.cluster_name;
    group.broker_name = s.broker_name;
    for (const auto& [id, entry] : s.replicas) {
        group.broker_addrs[id.value()] = entry.address;
    }
    body.broker_member_group = std::move(group);
    r->body = body.encode();
    r->events.push_back(
        ElectMasterEvent{s.broker_name, true, new_master, s.master_epoch, s.sync_state_set_epoch});
}

std::string id_text(std::optional<BrokerId> id) {
    return id ? std::to_string(id->value()) : std::string("null");
}

bool is_blank(const std::optional<std::string>& s) {
    return !s || s->find_first_not_of(" \t\r\n") == std::string::npos;
}

// "1;2;3" -> ids (Java: split(";") then Long.valueOf; a trailing ';' is tolerated).
std::optional<std::set<BrokerId>> parse_id_list(std::string_view text) {
    std::set<BrokerId> out;
    while (!text.empty()) {
        size_t end = text.find(';');
        std::string_view part = text.substr(0, end);
        int64_t v = 0;
        auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
        if (part.empty() || ec != std::errc() || p != part.data() + part.size()) {
            return std::nullopt;
        }
        out.insert(BrokerId(v));
        if (end == std::string_view::npos) {
            break;
        }
        text.remove_prefix(end + 1);
    }
    return out;
}

Status stale(std::string_view what, std::string_view broker_name) {
    return Status::error(Errc::kFailedPrecondition, "controller apply {} {}: ignored, {}",
                         broker_name, what, "state moved on");
}

}  // namespace

const BrokerSetState* ReplicasInfoManager::find(std::string_view broker_name) const {
    auto it = sets_.find(broker_name);
    return it == sets_.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------------------------------------
// Request handlers (read-only).

ControllerResult<protocol::GetNextBrokerIdResponseHeader>
ReplicasInfoManager::handle_get_next_broker_id(
    const protocol::GetNextBrokerIdRequestHeader& req) const {
    ControllerResult<protocol::GetNextBrokerIdResponseHeader> r;
    r.header.cluster_name = req.cluster_name;
    r.header.broker_name = req.broker_name;
    const BrokerSetState* s = find(req.broker_name.value_or(""));
    r.header.next_broker_id = (s == nullptr ? kFirstBrokerId : s->next_assign_broker_id).value();
    return r;
}

ControllerResult<protocol::ApplyBrokerIdResponseHeader> ReplicasInfoManager::handle_apply_broker_id(
    const protocol::ApplyBrokerIdRequestHeader& req) const {
    ControllerResult<protocol::ApplyBrokerIdResponseHeader> r;
    r.header.cluster_name = req.cluster_name;
    r.header.broker_name = req.broker_name;
    if (!req.broker_name || !req.applied_broker_id || !req.register_check_code) {
        r.fail(code::kInvalidRequest,
               "APPLY_BROKER_ID needs brokerName, appliedBrokerId and registerCheckCode");
        return r;
    }
    const std::string& name = *req.broker_name;
    const BrokerId id(*req.applied_broker_id);
    const std::string& check = *req.register_check_code;
    ApplyBrokerIdEvent event{req.cluster_name.value_or(""), name, check.substr(0, check.find(';')),
                             id, check};
    const BrokerSetState* s = find(name);
    if (s == nullptr) {
        if (id == kFirstBrokerId) {
            r.events.push_back(std::move(event));
        } else {
            r.fail(code::kBrokerIdInvalid,
                   fmt::format("Broker-set: {} hasn't been registered in controller, but broker "
                               "try to apply brokerId: {}",
                               name, id));
        }
        return r;
    }
    auto it = s->replicas.find(id);
    if (id >= kFirstBrokerId &&
        (it == s->replicas.end() || it->second.register_check_code == check)) {
        r.events.push_back(std::move(event));
        return r;
    }
    r.fail(code::kBrokerIdInvalid,
           fmt::format("Fail to apply brokerId: {} in broker-set: {}", id, name));
    return r;
}

ControllerResult<protocol::RegisterBrokerToControllerResponseHeader>
ReplicasInfoManager::handle_register_broker(
    const protocol::RegisterBrokerToControllerRequestHeader& req,
    const BrokerLiveness& liveness) const {
    ControllerResult<protocol::RegisterBrokerToControllerResponseHeader> r;
    r.header.cluster_name = req.cluster_name;
    r.header.broker_name = req.broker_name;
    const std::string name = req.broker_name.value_or("");
    const BrokerSetState* s = find(name);
    if (s == nullptr) {
        r.fail(code::kBrokerNeedToBeRegistered,
               fmt::format("Broker-set: {} hasn't been registered in controller", name));
        return r;
    }
    if (!req.broker_id || s->replicas.count(BrokerId(*req.broker_id)) == 0) {
        r.fail(code::kBrokerNeedToBeRegistered,
               fmt::format("BrokerId: {} hasn't been registered in broker-set: {}",
                           req.broker_id ? std::to_string(*req.broker_id) : "null", name));
        return r;
    }
    if (!req.broker_address) {
        r.fail(code::kInvalidRequest, "REGISTER_BROKER needs brokerAddress");
        return r;
    }
    const BrokerId id(*req.broker_id);
    const std::string cluster = req.cluster_name.value_or(s->cluster_name);
    if (s->master && liveness.is_alive(cluster, name, *s->master)) {
        r.header.master_broker_id = s->master->value();
        r.header.master_address = address_of(*s, s->master);
        r.header.master_epoch = s->master_epoch.value();
        r.header.sync_state_set_epoch = s->sync_state_set_epoch.value();
    }
    r.body = sync_state_set_body(*s);
    if (*req.broker_address != s->replicas.at(id).address) {
        r.events.push_back(UpdateBrokerAddressEvent{cluster, name, *req.broker_address, id});
    }
    return r;
}

ControllerResult<protocol::ElectMasterResponseHeader> ReplicasInfoManager::handle_elect_master(
    const protocol::ElectMasterRequestHeader& req, const BrokerLiveness& liveness) const {
    ControllerResult<protocol::ElectMasterResponseHeader> r;
    const BrokerSetState* s = find(req.broker_name);
    if (s == nullptr) {
        r.fail(code::kBrokerNeedToBeRegistered, "Broker hasn't been registered");
        return r;
    }
    const bool controller_triggered = req.broker_id == kControllerTriggeredBrokerId;
    const bool designated = req.designate_elect && !controller_triggered;
    const std::optional<BrokerId> old_master = s->master;
    std::optional<BrokerId> new_master;
    if (s->master_epoch == MasterEpoch(0) && !controller_triggered) {
        // First election of this set: the requester wins (Java isFirstTimeForElect).
        if (s->replicas.count(BrokerId(req.broker_id)) == 0) {
            r.fail(code::kBrokerNeedToBeRegistered,
                   fmt::format("BrokerId: {} hasn't been registered in broker-set: {}",
                               req.broker_id, req.broker_name));
            return r;
        }
        new_master = BrokerId(req.broker_id);
    }
    if (!new_master) {
        const std::optional<BrokerId> wanted =
            designated ? std::optional<BrokerId>(BrokerId(req.broker_id)) : std::nullopt;
        new_master =
            elect_master(elect_input(*s, config_.enable_elect_unclean_master, wanted), liveness);
    }

    if (new_master && new_master == old_master) {
        fill_master_still_exists(*s,
                                 fmt::format("The old master {} is still alive, not need to elect "
                                             "new master for broker {}",
                                             old_master->value(), s->broker_name),
                                 &r);
        return r;
    }
    // Comet master lease (broker_live_info.h): neither replace nor clear a master whose lease may
    // still run. An admin's designated switch is no exception (Java lets it through at once):
    // the old master would learn of it only from its next heartbeat answer or metadata poll,
    // and would acknowledge writes on its own log until then. The driver holds the old master's
    // lease back and retries until it has run out (ControllerServer::handle_elect_master). A
    // designated election that elects nobody changes nothing and fails below.
    const bool changes = new_master.has_value() || !designated;
    if (old_master && changes &&
        !liveness.lease_expired(s->cluster_name, s->broker_name, *old_master)) {
        fill_master_still_exists(*s,
                                 fmt::format("The master lease of {} in broker {} has not expired "
                                             "yet",
                                             old_master->value(), s->broker_name),
                                 &r);
        return r;
    }
    if (new_master) {
        fill_master_elected(*s, *new_master, &r);
    } else if (controller_triggered) {
        r.events.push_back(ElectMasterEvent{s->broker_name, false, BrokerId(0), s->master_epoch,
                                            s->sync_state_set_epoch});
        r.fail(code::kMasterNotAvailable,
               "Old master has down and failed to elect a new broker master");
    } else {
        r.fail(code::kElectMasterFailed, "Failed to elect a new master");
    }
    return r;
}

ControllerResult<protocol::AlterSyncStateSetResponseHeader>
ReplicasInfoManager::handle_alter_sync_state_set(
    const protocol::AlterSyncStateSetRequestHeader& req, const protocol::SyncStateSet& body,
    const BrokerLiveness& liveness) const {
    ControllerResult<protocol::AlterSyncStateSetResponseHeader> r;
    const BrokerSetState* s = find(req.broker_name.value_or(""));
    if (s == nullptr) {
        r.fail(code::kAlterSyncStateSetFailed, "Broker metadata is not existed");
        return r;
    }
    std::set<BrokerId> new_set;
    for (int64_t id : body.sync_state_set) {
        new_set.insert(BrokerId(id));
    }
    if (new_set == s->sync_state_set) {
        r.fail(code::kAlterSyncStateSetFailed,
               "The newSyncStateSet is equal with oldSyncStateSet, no needed to update "
               "syncStateSet");
        return r;
    }
    if (!s->master || !req.master_broker_id || BrokerId(*req.master_broker_id) != *s->master) {
        r.fail(code::kInvalidMaster,
               fmt::format("Rejecting alter syncStateSet request because the current leader "
                           "is:{{{}}}, not {{{}}}",
                           id_text(s->master),
                           req.master_broker_id ? std::to_string(*req.master_broker_id) : "null"));
        return r;
    }
    if (!req.master_epoch || MasterEpoch(*req.master_epoch) != s->master_epoch) {
        r.fail(code::kFencedMasterEpoch,
               fmt::format("Rejecting alter syncStateSet request because the current master "
                           "epoch is:{{{}}}, not {{{}}}",
                           s->master_epoch,
                           req.master_epoch ? std::to_string(*req.master_epoch) : "null"));
        return r;
    }
    if (SyncStateSetEpoch(body.sync_state_set_epoch) != s->sync_state_set_epoch) {
        r.fail(code::kFencedSyncStateSetEpoch,
               fmt::format("Rejecting alter syncStateSet request because the current "
                           "syncStateSet epoch is:{{{}}}, not {{{}}}",
                           s->sync_state_set_epoch, body.sync_state_set_epoch));
        return r;
    }
    for (BrokerId id : new_set) {
        if (s->replicas.count(id) == 0) {
            r.fail(code::kInvalidReplicas,
                   fmt::format("Rejecting alter syncStateSet request because the replicas {{{}}} "
                               "don't exist",
                               id));
            return r;
        }
        if (!liveness.is_alive(s->cluster_name, s->broker_name, id)) {
            r.fail(code::kBrokerNotAlive,
                   fmt::format("Rejecting alter syncStateSet request because the replicas {{{}}} "
                               "don't alive",
                               id));
            return r;
        }
    }
    if (new_set.count(*s->master) == 0) {
        r.fail(code::kAlterSyncStateSetFailed,
               fmt::format("Rejecting alter syncStateSet request because the newSyncStateSet "
                           "don't contains origin leader {{{}}}",
                           s->master->value()));
        return r;
    }
    const SyncStateSetEpoch next = s->sync_state_set_epoch + 1;
    r.header.new_sync_state_set_epoch = next.value();
    protocol::SyncStateSet out;
    out.sync_state_set = body.sync_state_set;
    out.sync_state_set_epoch = next.value();
    r.body = out.encode();
    r.events.push_back(
        AlterSyncStateSetEvent{s->broker_name, std::move(new_set), s->sync_state_set_epoch});
    return r;
}

ControllerResult<protocol::GetReplicaInfoResponseHeader>
ReplicasInfoManager::handle_get_replica_info(
    const protocol::GetReplicaInfoRequestHeader& req) const {
    ControllerResult<protocol::GetReplicaInfoResponseHeader> r;
    const BrokerSetState* s = find(req.broker_name.value_or(""));
    if (s == nullptr) {
        r.fail(code::kBrokerMetadataNotExist, "Broker metadata is not existed");
        return r;
    }
    if (s->master) {
        r.header.master_broker_id = s->master->value();
    }
    r.header.master_address = address_of(*s, s->master);
    r.header.master_epoch = s->master_epoch.value();
    r.body = sync_state_set_body(*s);
    return r;
}

ControllerResult<NoHeader> ReplicasInfoManager::handle_get_sync_state_data(
    const std::vector<std::string>& names, const BrokerLiveness& liveness) const {
    ControllerResult<NoHeader> r;
    BrokerReplicasInfo info;
    for (const std::string& name : names) {
        const BrokerSetState* s = find(name);
        if (s == nullptr) {
            continue;
        }
        ReplicasInfo ri;
        if (s->master) {
            ri.master_broker_id = s->master->value();
        }
        ri.master_address = address_of(*s, s->master);
        ri.master_epoch = s->master_epoch.value();
        ri.sync_state_set_epoch = s->sync_state_set_epoch.value();
        for (const auto& [id, entry] : s->replicas) {
            ReplicaIdentity replica{name, id.value(), entry.address,
                                    liveness.is_alive(s->cluster_name, name, id)};
            (s->sync_state_set.count(id) != 0 ? ri.in_sync_replicas : ri.not_in_sync_replicas)
                .push_back(std::move(replica));
        }
        info.replicas_info_table[name] = std::move(ri);
    }
    r.body = info.encode();
    return r;
}

ControllerResult<NoHeader> ReplicasInfoManager::handle_clean_broker_data(
    const protocol::CleanBrokerDataRequestHeader& req, const BrokerLiveness& liveness) const {
    ControllerResult<NoHeader> r;
    const std::string& name = req.broker_name;
    const BrokerSetState* s = find(name);
    const std::string cluster = req.cluster_name.value_or(s != nullptr ? s->cluster_name : "");
    std::set<BrokerId> ids;
    if (!req.is_clean_living_broker.value_or(false)) {
        if (is_blank(req.broker_controller_ids_to_clean) && s != nullptr && s->master) {
            r.fail(code::kInvalidCleanBrokerMetadata,
                   fmt::format("Broker {} is still alive, clean up failure", name));
            return r;
        }
    }
    if (!is_blank(req.broker_controller_ids_to_clean)) {
        auto parsed = parse_id_list(*req.broker_controller_ids_to_clean);
        if (!parsed) {
            r.fail(code::kInvalidCleanBrokerMetadata,
                   fmt::format("Please set the option <brokerControllerIdsToClean> according to "
                               "the format, got: {}",
                               *req.broker_controller_ids_to_clean));
            return r;
        }
        ids = std::move(*parsed);
        if (!req.is_clean_living_broker.value_or(false)) {
            for (BrokerId id : ids) {
                if (liveness.is_alive(cluster, name, id)) {
                    r.fail(
                        code::kInvalidCleanBrokerMetadata,
                        fmt::format("Broker [{},  {}] is still alive, clean up failure", name, id));
                    return r;
                }
            }
        }
    }
    if (s == nullptr) {
        r.fail(code::kInvalidCleanBrokerMetadata,
               fmt::format("Broker {} is not existed,clean broker data failure.", name));
        return r;
    }
    r.events.push_back(CleanBrokerDataEvent{name, std::move(ids)});
    return r;
}

std::vector<std::string> ReplicasInfoManager::scan_need_reelect_broker_sets(
    const BrokerLiveness& liveness) const {
    std::vector<std::string> out;
    for (const auto& [name, s] : sets_) {
        if (!s.master || liveness.is_alive(s.cluster_name, name, *s.master)) {
            continue;
        }
        for (const auto& [id, entry] : s.replicas) {
            if (liveness.is_alive(s.cluster_name, name, id)) {
                out.push_back(name);
                break;
            }
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// apply (deterministic).

Status ReplicasInfoManager::apply(const Event& event) {
    return std::visit([this](const auto& e) { return apply_one(e); }, event);
}

Status ReplicasInfoManager::apply_one(const AlterSyncStateSetEvent& e) {
    auto it = sets_.find(e.broker_name);
    if (it == sets_.end()) {
        return stale("AlterSyncStateSet: unknown broker set", e.broker_name);
    }
    BrokerSetState& s = it->second;
    if (s.sync_state_set_epoch != e.expected_epoch) {
        return stale(fmt::format("AlterSyncStateSet: syncStateSetEpoch {} != expected {}",
                                 s.sync_state_set_epoch, e.expected_epoch),
                     e.broker_name);
    }
    for (BrokerId id : e.new_sync_state_set) {
        if (s.replicas.count(id) == 0) {
            return stale(fmt::format("AlterSyncStateSet: replica {} gone", id), e.broker_name);
        }
    }
    if (s.master && e.new_sync_state_set.count(*s.master) == 0) {
        return stale("AlterSyncStateSet: set lacks the master", e.broker_name);
    }
    s.sync_state_set = e.new_sync_state_set;
    s.sync_state_set_epoch += 1;
    return Status::ok();
}

Status ReplicasInfoManager::apply_one(const ApplyBrokerIdEvent& e) {
    if (e.broker_id < kFirstBrokerId) {
        return stale(fmt::format("ApplyBrokerId: invalid id {}", e.broker_id), e.broker_name);
    }
    auto [it, inserted] = sets_.try_emplace(e.broker_name);
    BrokerSetState& s = it->second;
    if (inserted) {
        s.cluster_name = e.cluster_name;
        s.broker_name = e.broker_name;
    }
    auto r = s.replicas.find(e.broker_id);
    if (r == s.replicas.end()) {
        s.replicas[e.broker_id] = ReplicaEntry{e.broker_address, e.register_check_code};
        s.next_assign_broker_id = std::max(s.next_assign_broker_id, e.broker_id + 1);
        return Status::ok();
    }
    // Same check code: an idempotent retry. Another one: two brokers raced for the id and the
    // other's event committed first; this requester must be told it failed.
    if (r->second.register_check_code != e.register_check_code) {
        return stale(fmt::format("ApplyBrokerId: id {} taken by another broker", e.broker_id),
                     e.broker_name);
    }
    return Status::ok();
}

Status ReplicasInfoManager::apply_one(const ElectMasterEvent& e) {
    auto it = sets_.find(e.broker_name);
    if (it == sets_.end()) {
        return stale("ElectMaster: unknown broker set", e.broker_name);
    }
    BrokerSetState& s = it->second;
    if (s.master_epoch != e.expected_master_epoch ||
        s.sync_state_set_epoch != e.expected_sync_state_set_epoch) {
        return stale(fmt::format("ElectMaster: epochs {}/{} != expected {}/{}", s.master_epoch,
                                 s.sync_state_set_epoch, e.expected_master_epoch,
                                 e.expected_sync_state_set_epoch),
                     e.broker_name);
    }
    if (e.new_master_elected) {
        if (s.replicas.count(e.new_master) == 0) {
            return stale(fmt::format("ElectMaster: replica {} gone", e.new_master), e.broker_name);
        }
        s.master = e.new_master;
        s.master_epoch += 1;
        s.sync_state_set = {e.new_master};
        s.sync_state_set_epoch += 1;
    } else {
        // Old master gone, nobody to replace it: clear it, keep the SyncStateSet (Java).
        s.master.reset();
        s.master_epoch += 1;
    }
    return Status::ok();
}

Status ReplicasInfoManager::apply_one(const CleanBrokerDataEvent& e) {
    if (e.ids_to_clean.empty()) {
        sets_.erase(e.broker_name);
        return Status::ok();
    }
    auto it = sets_.find(e.broker_name);
    if (it == sets_.end()) {
        return stale("CleanBrokerData: unknown broker set", e.broker_name);
    }
    BrokerSetState& s = it->second;
    for (BrokerId id : e.ids_to_clean) {
        s.replicas.erase(id);
        s.sync_state_set.erase(id);
        // Differs from Java, which keeps a cleaned master's id: keep "master is a replica".
        if (s.master == id) {
            s.master.reset();
        }
    }
    // Differs from Java (which drops its two tables separately): the set goes when its last
    // replica goes, never while replicas remain.
    if (s.replicas.empty()) {
        sets_.erase(it);
    }
    return Status::ok();
}

Status ReplicasInfoManager::apply_one(const UpdateBrokerAddressEvent& e) {
    auto it = sets_.find(e.broker_name);
    if (it == sets_.end()) {
        return stale("UpdateBrokerAddress: unknown broker set", e.broker_name);
    }
    auto r = it->second.replicas.find(e.broker_id);
    if (r == it->second.replicas.end()) {
        return stale(fmt::format("UpdateBrokerAddress: unknown id {}", e.broker_id), e.broker_name);
    }
    r->second.address = e.broker_address;
    return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Invariants and snapshot.

Status ReplicasInfoManager::validate(const BrokerSetState& s) {
    auto bad = [&](std::string what) {
        return Status(Errc::kCorruption,
                      fmt::format("broker set {}: invariant broken: {}", s.broker_name, what));
    };
    if (s.next_assign_broker_id < kFirstBrokerId) {
        return bad("next id < 1");
    }
    for (const auto& [id, entry] : s.replicas) {
        if (id < kFirstBrokerId || id >= s.next_assign_broker_id) {
            return bad(fmt::format("id {} outside [1, {})", id, s.next_assign_broker_id));
        }
    }
    for (BrokerId id : s.sync_state_set) {
        if (s.replicas.count(id) == 0) {
            return bad(fmt::format("SyncStateSet member {} is not a replica", id));
        }
    }
    if (s.master && s.sync_state_set.count(*s.master) == 0) {
        return bad(fmt::format("master {} not in SyncStateSet", *s.master));
    }
    if (s.master_epoch < MasterEpoch(0) || s.sync_state_set_epoch < SyncStateSetEpoch(0)) {
        return bad("negative epoch");
    }
    return Status::ok();
}

void ReplicasInfoManager::check_invariants() const {
    for (const auto& [name, s] : sets_) {
        COMET_CHECK(name == s.broker_name, "broker set key {} != name {}", name, s.broker_name);
        Status st = validate(s);
        COMET_CHECK(st.is_ok(), "{}", st.message());
    }
}

std::string ReplicasInfoManager::encode_snapshot() const {
    std::string payload;
    ByteWriter w(&payload);
    w.be32(static_cast<uint32_t>(sets_.size()));
    for (const auto& [name, s] : sets_) {
        detail::put_string(w, s.cluster_name);
        detail::put_string(w, s.broker_name);
        w.be64(static_cast<uint64_t>(s.next_assign_broker_id.value()));
        w.u8(s.master ? 1 : 0);
        w.be64(static_cast<uint64_t>(s.master ? s.master->value() : 0));
        w.be32(static_cast<uint32_t>(s.master_epoch.value()));
        w.be32(static_cast<uint32_t>(s.sync_state_set_epoch.value()));
        w.be32(static_cast<uint32_t>(s.replicas.size()));
        for (const auto& [id, entry] : s.replicas) {
            w.be64(static_cast<uint64_t>(id.value()));
            detail::put_string(w, entry.address);
            detail::put_string(w, entry.register_check_code);
        }
        w.be32(static_cast<uint32_t>(s.sync_state_set.size()));
        for (BrokerId id : s.sync_state_set) {
            w.be64(static_cast<uint64_t>(id.value()));
        }
    }
    std::string out;
    ByteWriter h(&out);
    h.be32(kSnapshotMagic);
    h.u8(kSnapshotVersion);
    h.be32(crc32(payload));
    out += payload;
    return out;
}

Result<ReplicasInfoManager> ReplicasInfoManager::decode_snapshot(std::string_view bytes,
                                                                 ReplicasInfoConfig config) {
    auto corrupt = [](std::string_view what) {
        return Status(Errc::kCorruption, fmt::format("controller snapshot: {}", what));
    };
    ByteReader r(bytes);
    uint32_t magic = 0;
    uint8_t version = 0;
    uint32_t crc = 0;
    if (!r.be32(&magic) || !r.u8(&version) || !r.be32(&crc)) {
        return corrupt("shorter than its 9-byte header");
    }
    if (magic != kSnapshotMagic) {
        return corrupt(fmt::format("bad magic {:#x}", magic));
    }
    if (version != kSnapshotVersion) {
        return Status::error(Errc::kUnsupported, "controller snapshot: version {} (expected {})",
                             version, kSnapshotVersion);
    }
    if (crc32(bytes.substr(r.position())) != crc) {
        return corrupt("CRC mismatch");
    }
    ReplicasInfoManager m(config);
    uint32_t n_sets = 0;
    // A set takes at least 2 strings + 8 + 1 + 8 + 4 + 4 + 4 + 4 = 41 bytes.
    if (!detail::get_count(r, 41, &n_sets)) {
        return corrupt("bad set count");
    }
    for (uint32_t i = 0; i < n_sets; ++i) {
        BrokerSetState s;
        int64_t next = 0;
        uint8_t has_master = 0;
        int64_t master = 0;
        int32_t me = 0;
        int32_t sse = 0;
        uint32_t n_replicas = 0;
        if (!detail::get_string(r, &s.cluster_name) || !detail::get_string(r, &s.broker_name) ||
            !detail::get_i64(r, &next) || !r.u8(&has_master) || has_master > 1 ||
            !detail::get_i64(r, &master) || !detail::get_i32(r, &me) || !detail::get_i32(r, &sse) ||
            !detail::get_count(r, 16, &n_replicas)) {
            return corrupt(fmt::format("set {} header truncated or malformed", i));
        }
        s.next_assign_broker_id = BrokerId(next);
        if (has_master == 1) {
            s.master = BrokerId(master);
        }
        s.master_epoch = MasterEpoch(me);
        s.sync_state_set_epoch = SyncStateSetEpoch(sse);
        for (uint32_t k = 0; k < n_replicas; ++k) {
            int64_t id = 0;
            ReplicaEntry entry;
            if (!detail::get_i64(r, &id) || !detail::get_string(r, &entry.address) ||
                !detail::get_string(r, &entry.register_check_code) ||
                (!s.replicas.empty() && BrokerId(id) <= s.replicas.rbegin()->first)) {
                return corrupt(fmt::format("set {} replica {} malformed or out of order", i, k));
            }
            s.replicas.emplace(BrokerId(id), std::move(entry));
        }
        uint32_t n_sync = 0;
        if (!detail::get_count(r, 8, &n_sync)) {
            return corrupt(fmt::format("set {} SyncStateSet count malformed", i));
        }
        for (uint32_t k = 0; k < n_sync; ++k) {
            int64_t id = 0;
            if (!detail::get_i64(r, &id) ||
                (!s.sync_state_set.empty() && BrokerId(id) <= *s.sync_state_set.rbegin())) {
                return corrupt(fmt::format("set {} SyncStateSet member {} malformed", i, k));
            }
            s.sync_state_set.insert(BrokerId(id));
        }
        COMET_RETURN_IF_ERROR(validate(s));
        if (!m.sets_.empty() && s.broker_name <= m.sets_.rbegin()->first) {
            return corrupt(fmt::format("broker set {} out of name order", i));
        }
        std::string name = s.broker_name;
        m.sets_.emplace(std::move(name), std::move(s));
    }
    if (r.remaining() != 0) {
        return corrupt(fmt::format("{} trailing bytes", r.remaining()));
    }
    return m;
}

}  // namespace comet::controller
