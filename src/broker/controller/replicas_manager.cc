#include "broker/controller/replicas_manager.h"

#include <pthread.h>

#include <utility>

#include "base/log_tag.h"
#include "base/logging.h"
#include "broker/controller/broker_identity.h"
#include "protocol/ha_bodies.h"
#include "protocol/ha_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::broker {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using protocol::RemotingCommand;
using namespace std::chrono_literals;

namespace {

std::string code_text(const RemotingCommand& r) {
    return fmt::format("{} {}", r.code, r.remark.value_or(""));
}

std::string set_text(const std::set<int64_t>& s) { return fmt::format("{}", fmt::join(s, ",")); }

}  // namespace

// The master view of a REGISTER / ELECT / GET_REPLICA_INFO answer (header fields, set body).
ReplicasManager::MasterInfo ReplicasManager::master_info_of(
    const protocol::ControllerMasterInfoHeader& h, std::set<int64_t> sync_state_set) {
    MasterInfo info;
    info.master_id = h.master_broker_id.value_or(-1);
    info.master_addr = h.master_address.value_or("");
    info.master_epoch = h.master_epoch.value_or(0);
    info.sync_state_set_epoch = h.sync_state_set_epoch.value_or(0);
    info.sync_state_set = std::move(sync_state_set);
    return info;
}

ReplicasManager::ReplicasManager(ReplicasManagerConfig config, ControllerLink& link,
                                 ControllerStore& store, RoleHost& host, Clock& clock,
                                 MasterLease& lease)
    : config_(std::move(config)),
      link_(link),
      store_(store),
      host_(host),
      clock_(clock),
      lease_(lease) {}

ReplicasManager::~ReplicasManager() { shutdown(); }

void ReplicasManager::start() {
    thread_ = tagged_thread([this] { run(); });
}

void ReplicasManager::shutdown() {
    {
        MutexLock l(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
}

void ReplicasManager::notify_role_changed(int64_t master_id, std::string master_addr,
                                          int32_t master_epoch, std::set<int64_t> sync_state_set,
                                          int32_t sync_state_set_epoch) {
    {
        MutexLock l(mu_);
        notices_.push_back(MasterInfo{master_id, std::move(master_addr), master_epoch,
                                      std::move(sync_state_set), sync_state_set_epoch});
    }
    cv_.notify_all();
}

void ReplicasManager::request_sync() {
    {
        MutexLock l(mu_);
        sync_requested_ = true;
    }
    cv_.notify_all();
}

ReplicasManager::View ReplicasManager::view() const {
    MutexLock l(mu_);
    return view_;
}

Status ReplicasManager::obtain_identity() {
    const std::string& path = config_.identity_path;
    COMET_ASSIGN_OR_RETURN(auto final_id, load_broker_identity(path, false, config_.cluster_name,
                                                               config_.broker_name));
    if (final_id) {
        my_id_ = final_id->broker_id;
        return Status::ok();
    }
    COMET_ASSIGN_OR_RETURN(
        auto temp_id, load_broker_identity(path, true, config_.cluster_name, config_.broker_name));
    BrokerIdentity id;
    if (temp_id) {
        id = *temp_id;  // killed while applying: the same id and check code again
    } else {
        RemotingCommand req = RemotingCommand::request(Req::kControllerGetNextBrokerId);
        protocol::GetNextBrokerIdRequestHeader h;
        h.cluster_name = config_.cluster_name;
        h.broker_name = config_.broker_name;
        h.to_ext(req);
        COMET_ASSIGN_OR_RETURN(RemotingCommand r, link_.call_leader(req));
        if (r.code != RC::kSuccess) {
            return Status::error(Errc::kUnavailable, "GET_NEXT_BROKER_ID answered {}",
                                 code_text(r));
        }
        COMET_ASSIGN_OR_RETURN(auto rh, protocol::GetNextBrokerIdResponseHeader::from_ext(r));
        if (!rh.next_broker_id || *rh.next_broker_id <= 0) {
            return Status::error(Errc::kCorruption, "GET_NEXT_BROKER_ID without nextBrokerId");
        }
        id.cluster_name = config_.cluster_name;
        id.broker_name = config_.broker_name;
        id.broker_id = *rh.next_broker_id;
        id.register_check_code = config_.broker_addr + ";" + std::to_string(clock_.wall_millis());
        COMET_RETURN_IF_ERROR(save_broker_identity(path, true, id));
    }
    RemotingCommand req = RemotingCommand::request(Req::kControllerApplyBrokerId);
    protocol::ApplyBrokerIdRequestHeader h;
    h.cluster_name = config_.cluster_name;
    h.broker_name = config_.broker_name;
    h.applied_broker_id = id.broker_id;
    h.register_check_code = id.register_check_code;
    h.to_ext(req);
    COMET_ASSIGN_OR_RETURN(RemotingCommand r, link_.call_leader(req));
    if (r.code == RC::kControllerBrokerIdInvalid) {
        // Someone else holds it: start over with a fresh id.
        (void)remove_broker_identity(path);
        return Status::error(Errc::kUnavailable, "broker id {} was taken ({}); asking again",
                             id.broker_id, code_text(r));
    }
    if (r.code != RC::kSuccess) {
        return Status::error(Errc::kUnavailable, "APPLY_BROKER_ID {} answered {}", id.broker_id,
                             code_text(r));
    }
    COMET_RETURN_IF_ERROR(save_broker_identity(path, false, id));
    COMET_RETURN_IF_ERROR(remove_broker_identity(path));
    my_id_ = id.broker_id;
    spdlog::info("controller mode: {}/{} is broker {} (identity in {})", config_.cluster_name,
                 config_.broker_name, my_id_, path);
    return Status::ok();
}

RemotingCommand ReplicasManager::heartbeat_request() const {
    RemotingCommand req = RemotingCommand::request(Req::kBrokerHeartbeat);
    protocol::BrokerHeartbeatRequestHeader h;
    h.cluster_name = config_.cluster_name;
    h.broker_addr = config_.broker_addr;
    h.broker_name = config_.broker_name;
    h.broker_id = my_id_;
    h.epoch = static_cast<int32_t>(store_.last_epoch());
    h.max_offset = store_.max_offset();
    h.confirm_offset = store_.confirm_offset();
    h.heartbeat_timeout_mills =
        std::chrono::duration_cast<std::chrono::milliseconds>(config_.heartbeat_timeout).count();
    h.election_priority = config_.election_priority;
    h.to_ext(req);
    return req;
}

void ReplicasManager::send_heartbeat() {
    const RemotingCommand req = heartbeat_request();
    // The lease runs from the send time (master_lease.h), so a late answer renews no more
    // than a prompt one.
    const TimePoint sent = clock_.now();
    link_.send_to_all(req, config_.send_heartbeat_timeout,
                      [this, sent](const RemotingCommand& answer) {
                          if (lease_.on_answer(sent, answer) == MasterLease::Effect::kSuperseded) {
                              request_sync();
                          }
                      });
}

Status ReplicasManager::register_and_elect() {
    RemotingCommand req = RemotingCommand::request(Req::kControllerRegisterBroker);
    protocol::RegisterBrokerToControllerRequestHeader h;
    h.cluster_name = config_.cluster_name;
    h.broker_name = config_.broker_name;
    h.broker_id = my_id_;
    h.broker_address = config_.broker_addr;
    h.invoke_time = clock_.wall_millis();
    h.to_ext(req);
    COMET_ASSIGN_OR_RETURN(RemotingCommand r, link_.call_leader(req));
    if (r.code != RC::kSuccess) {
        return Status::error(Errc::kUnavailable, "CONTROLLER_REGISTER_BROKER as {} answered {}",
                             my_id_, code_text(r));
    }
    registered_ = true;
    send_heartbeat();
    COMET_ASSIGN_OR_RETURN(auto mh,
                           protocol::RegisterBrokerToControllerResponseHeader::from_ext(r));
    if (mh.master_broker_id && *mh.master_broker_id > 0 && mh.master_address &&
        !mh.master_address->empty()) {
        auto body = protocol::SyncStateSet::decode(r.body);
        apply(master_info_of(mh, body.is_ok() ? body->sync_state_set : std::set<int64_t>{}));
        return Status::ok();
    }
    return elect_self();
}

Status ReplicasManager::elect_self() {
    RemotingCommand req = RemotingCommand::request(Req::kControllerElectMaster);
    protocol::ElectMasterRequestHeader h;
    h.cluster_name = config_.cluster_name;
    h.broker_name = config_.broker_name;
    h.broker_id = my_id_;
    h.designate_elect = false;
    h.invoke_time = clock_.wall_millis();
    h.to_ext(req);
    COMET_ASSIGN_OR_RETURN(RemotingCommand r, link_.call_leader(req));
    if (r.code != RC::kSuccess && r.code != RC::kControllerMasterStillExist) {
        return Status::error(Errc::kUnavailable, "CONTROLLER_ELECT_MASTER for {} answered {}",
                             my_id_, code_text(r));
    }
    COMET_ASSIGN_OR_RETURN(auto mh, protocol::ElectMasterResponseHeader::from_ext(r));
    auto body = protocol::ElectMasterResponseBody::decode(r.body);
    apply(master_info_of(mh, body.is_ok() ? body->sync_state_set : std::set<int64_t>{}));
    return Status::ok();
}

Status ReplicasManager::sync_replica_info() {
    RemotingCommand req = RemotingCommand::request(Req::kControllerGetReplicaInfo);
    protocol::GetReplicaInfoRequestHeader h;
    h.broker_name = config_.broker_name;
    h.to_ext(req);
    COMET_ASSIGN_OR_RETURN(RemotingCommand r, link_.call_leader(req));
    if (r.code != RC::kSuccess) {
        return Status::error(Errc::kUnavailable, "CONTROLLER_GET_REPLICA_INFO answered {}",
                             code_text(r));
    }
    COMET_ASSIGN_OR_RETURN(auto mh, protocol::GetReplicaInfoResponseHeader::from_ext(r));
    auto body = protocol::SyncStateSet::decode(r.body);
    MasterInfo info = master_info_of(mh, body.is_ok() ? body->sync_state_set : std::set<int64_t>{});
    if (body.is_ok()) {
        info.sync_state_set_epoch = body->sync_state_set_epoch;
    }
    apply(info);
    return Status::ok();
}

void ReplicasManager::apply(const MasterInfo& info) {
    auto fenced = [&](const char* why) {
        MutexLock l(mu_);
        ++view_.fenced_notices;
        spdlog::debug("controller mode: ignoring master {} epoch {}: {}", info.master_id,
                      info.master_epoch, why);
    };
    if (have_role_ && info.master_epoch < current_.master_epoch) {
        fenced("older than the epoch in force");
        return;
    }
    if (info.master_id <= 0) {
        // No master: the controller cleared it. A master of an older epoch steps down (it may
        // not write without the controller's backing); others wait for an election.
        if (have_role_ && info.master_epoch > current_.master_epoch &&
            current_.master_id == my_id_) {
            spdlog::warn(
                "controller mode: the controller cleared this master (epoch {} > {}); "
                "stepping down",
                info.master_epoch, current_.master_epoch);
            lease_.on_role(my_id_, info.master_epoch, false);
            if (Status st = host_.become_slave(my_id_, -1, "", info.master_epoch); !st.is_ok()) {
                spdlog::error("controller mode: step down: {}", st.message());
                return;
            }
            current_ = info;
        }
        return;
    }
    if (have_role_ && info.master_epoch == current_.master_epoch) {
        if (info.master_id != current_.master_id) {
            fenced("another master with the same epoch");
            return;
        }
        if (current_.master_id == my_id_ &&
            info.sync_state_set_epoch > current_.sync_state_set_epoch) {
            current_.sync_state_set = info.sync_state_set;
            current_.sync_state_set_epoch = info.sync_state_set_epoch;
            current_.sync_state_set.insert(my_id_);
            store_.set_sync_state_set(current_.sync_state_set);
            host_.sync_state_set_changed(current_.sync_state_set);
        }
        return;
    }
    const bool to_master = info.master_id == my_id_;
    // No acknowledgement under the old role from here on; a new master waits for its grant.
    lease_.on_role(my_id_, info.master_epoch, false);
    spdlog::info("controller mode: {} -> {} (master {} at {}, epoch {}, SyncStateSet {{{}}})",
                 have_role_ ? (current_.master_id == my_id_ ? "master" : "slave") : "no role",
                 to_master ? "master" : "slave", info.master_id, info.master_addr,
                 info.master_epoch, set_text(info.sync_state_set));
    Status st =
        to_master ? host_.become_master(my_id_, info.master_epoch)
                  : host_.become_slave(my_id_, info.master_id, info.master_addr, info.master_epoch);
    if (!st.is_ok()) {
        spdlog::error("controller mode: role change to {} at epoch {} failed: {}",
                      to_master ? "master" : "slave", info.master_epoch, st.message());
        return;  // the next replica-info sync tries again
    }
    current_ = info;
    have_role_ = true;
    lease_.on_role(my_id_, info.master_epoch, to_master);
    if (to_master) {
        // A new epoch starts without a lease: ask for it now (the store reports the new epoch
        // from here on) rather than refuse writes until the next periodic heartbeat.
        const TimePoint sent = clock_.now();
        if (auto answer = link_.call_leader(heartbeat_request()); answer.is_ok()) {
            (void)lease_.on_answer(sent, *answer);
        }
        current_.sync_state_set.insert(my_id_);
        store_.set_sync_state_set(current_.sync_state_set);
        host_.sync_state_set_changed(current_.sync_state_set);
    }
    MutexLock l(mu_);
    ++view_.role_changes;
}

void ReplicasManager::check_sync_state_set(bool shrink) {
    const std::set<int64_t> set = current_.sync_state_set;
    const std::vector<ReplicaProgress> progress = store_.progress();
    auto next = next_sync_state_set(set, my_id_, progress, store_.confirm_offset(),
                                    store_.current_epoch_start(), clock_.now(),
                                    config_.max_not_catchup, shrink);
    if (!next) {
        return;
    }
    // While the change is in flight acks count both sets: a joining member must hold what is
    // acknowledged meanwhile, a leaving one is dropped only once the controller agreed.
    std::set<int64_t> both = set;
    both.insert(next->begin(), next->end());
    store_.set_sync_state_set(both);
    protocol::SyncStateSet body;
    body.sync_state_set = *next;
    body.sync_state_set_epoch = current_.sync_state_set_epoch;
    RemotingCommand req = RemotingCommand::request(Req::kControllerAlterSyncStateSet);
    protocol::AlterSyncStateSetRequestHeader h;
    h.broker_name = config_.broker_name;
    h.master_broker_id = my_id_;
    h.master_epoch = current_.master_epoch;
    h.invoke_time = clock_.wall_millis();
    h.to_ext(req);
    req.body = body.encode();
    auto r = link_.call_leader(req);
    if (r.is_ok() && r->code == RC::kSuccess) {
        auto rh = protocol::AlterSyncStateSetResponseHeader::from_ext(*r);
        current_.sync_state_set = *next;
        if (rh.is_ok()) {
            current_.sync_state_set_epoch = rh->new_sync_state_set_epoch;
        }
        store_.set_sync_state_set(current_.sync_state_set);
        host_.sync_state_set_changed(current_.sync_state_set);
        spdlog::info("controller mode: SyncStateSet {{{}}} -> {{{}}} (epoch {})", set_text(set),
                     set_text(*next), current_.sync_state_set_epoch);
        return;
    }
    store_.set_sync_state_set(set);
    spdlog::warn("controller mode: ALTER_SYNC_STATE_SET to {{{}}} failed: {}", set_text(*next),
                 r.is_ok() ? code_text(*r) : r.status().message());
    if (r.is_ok() && (r->code == RC::kControllerFencedMasterEpoch ||
                      r->code == RC::kControllerFencedSyncStateSetEpoch)) {
        (void)sync_replica_info();
    }
}

void ReplicasManager::run() {
    pthread_setname_np(pthread_self(), "ReplicasManager");
    link_.start();
    TimePoint next_attempt{};
    TimePoint next_heartbeat{};
    TimePoint next_sync{};
    TimePoint next_shrink = clock_.now() + config_.check_sync_state_set_period;
    int64_t failures = 0;
    while (true) {
        std::deque<MasterInfo> notices;
        bool sync_now = false;
        {
            MutexLock l(mu_);
            cv_.wait_for(mu_, 50ms, [&]() REQUIRES(mu_) {
                return stop_ || !notices_.empty() || sync_requested_;
            });
            if (stop_) {
                break;
            }
            notices.swap(notices_);
            sync_now = std::exchange(sync_requested_, false);
        }
        const TimePoint now = clock_.now();
        if (!registered_) {
            if (now < next_attempt) {
                continue;
            }
            Status st = my_id_ == 0 ? obtain_identity() : Status::ok();
            if (st.is_ok()) {
                st = register_and_elect();
            }
            if (!st.is_ok()) {
                // Controllers may still be starting: retry every second, say so now and then.
                if (failures++ % 10 == 0) {
                    spdlog::warn("controller mode: registration with {} failed (retrying): {}",
                                 link_.leader().empty() ? "the controllers" : link_.leader(),
                                 st.message());
                }
                next_attempt = now + 1s;
                if (!registered_) {
                    continue;
                }
            }
            next_heartbeat = now + config_.heartbeat_interval;
            next_sync = now + (have_role_ ? config_.sync_metadata_period : Duration(1s));
        }
        for (const MasterInfo& n : notices) {
            apply(n);
        }
        if (now >= next_heartbeat) {
            send_heartbeat();
            next_heartbeat = now + config_.heartbeat_interval;
        }
        if (now >= next_sync || sync_now) {
            const bool no_master = !have_role_ || current_.master_id <= 0;
            Status st = sync_replica_info();
            if (st.is_ok() && (!have_role_ || current_.master_id <= 0)) {
                st = elect_self();
            }
            if (!st.is_ok() && failures++ % 10 == 0) {
                spdlog::info("controller mode: {}", st.message());
            }
            next_sync = now + (no_master ? Duration(1s) : config_.sync_metadata_period);
        }
        if (have_role_ && current_.master_id == my_id_) {
            const bool shrink = now >= next_shrink;
            check_sync_state_set(shrink);
            if (shrink) {
                next_shrink = now + config_.check_sync_state_set_period;
            }
        }
        MutexLock l(mu_);
        view_.registered = registered_;
        view_.master = have_role_ && current_.master_id == my_id_;
        view_.broker_id = my_id_;
        view_.master_id = current_.master_id;
        view_.master_addr = current_.master_addr;
        view_.master_epoch = current_.master_epoch;
        view_.sync_state_set = current_.sync_state_set;
        view_.sync_state_set_epoch = current_.sync_state_set_epoch;
    }
    link_.shutdown();
}

}  // namespace comet::broker
