#include "broker/replication/acting_master_service.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/log_tag.h"
#include "protocol/namesrv_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"
#include "protocol/route_bodies.h"

namespace comet::broker {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;

Result<std::unique_ptr<ActingMasterService>> ActingMasterService::create(Deps deps) {
    COMET_CHECK(deps.config != nullptr && deps.clock != nullptr && deps.client != nullptr,
                "ActingMasterService needs config, clock and client");
    COMET_ASSIGN_OR_RETURN(auto settings, MemberGroupSettings::from(deps.config->get()));
    return std::unique_ptr<ActingMasterService>(new ActingMasterService(std::move(deps), settings));
}

ActingMasterService::ActingMasterService(Deps deps, MemberGroupSettings settings)
    : deps_(std::move(deps)),
      settings_(settings),
      start_config_(deps_.config->get()),
      tracker_(start_config_.broker_id, start_config_.broker_addr(),
               settings.enable_slave_acting_master),
      sync_(deps_.tables, [this](const std::string& addr, protocol::RemotingCommand req) {
          return invoke(addr, std::move(req));
      }) {}

ActingMasterService::~ActingMasterService() { shutdown(); }

Result<protocol::RemotingCommand> ActingMasterService::invoke(const std::string& addr,
                                                              protocol::RemotingCommand req) {
    return deps_.client->invoke_sync(addr, std::move(req), deps_.rpc_timeout);
}

void ActingMasterService::set_master_listener(
    std::function<void(const std::string&, const std::string&)> fn) {
    COMET_CHECK(!started_, "set_master_listener after start()");
    master_listener_ = std::move(fn);
}

void ActingMasterService::start() {
    if (started_) {
        return;
    }
    {
        MutexLock l(mu_);
        stopping_ = false;
    }
    started_ = true;
    thread_ = tagged_thread([this] { loop(); });
}

void ActingMasterService::shutdown() {
    {
        MutexLock l(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
}

void ActingMasterService::wake() {
    {
        MutexLock l(mu_);
        sync_now_ = true;
    }
    cv_.notify_all();
}

void ActingMasterService::push_offsets_before_next_sync(std::function<void()> done) {
    {
        MutexLock l(mu_);
        push_offsets_ = true;
        push_done_ = std::move(done);
    }
    wake();
}

void ActingMasterService::on_register_result(const std::string& master_addr,
                                             const std::string& ha_addr) {
    if (start_config_.is_master() || start_config_.enable_controller_mode) {
        return;
    }
    {
        MutexLock l(mu_);
        registered_master_ = master_addr;
        registered_ha_ = ha_addr;
    }
    // While acting master the name server knows no master; keep the state the group minimum
    // gave us. Otherwise follow the register result (RocketMQ sets it on every registration).
    if (tracker_.is_acting_master() && master_addr.empty()) {
        return;
    }
    if (sync_.set_master_addr(master_addr)) {
        if (master_listener_) {
            master_listener_(master_addr, ha_addr);
        }
        wake();
    }
}

void ActingMasterService::follow_controller_master(const std::string& master_addr) {
    if (sync_.set_master_addr(master_addr) && !master_addr.empty()) {
        wake();  // the first copy now, not a slaveSynchronizePeriod later
    }
}

protocol::RemotingCommand ActingMasterService::handle_notify(const protocol::RemotingCommand& req) {
    auto h = MinBrokerIdChangeHeader::from_ext(req);
    if (!h.is_ok()) {
        return protocol::RemotingCommand::response_to(req, RC::kSystemError, h.status().message());
    }
    if (auto change = tracker_.on_min_broker_id_change(*h)) {
        apply(*change);
    }
    return protocol::RemotingCommand::response_to(req, RC::kSuccess);
}

void ActingMasterService::apply(const MinBrokerChange& change) {
    // BrokerController#onMinBrokerChange. changeSpecialServiceStatus: the acting master flag is
    // read by the processors through is_acting_master().
    if (change.master_offline || (change.acting_master && change.min_broker_id != 0)) {
        if (sync_.set_master_addr("") && master_listener_) {
            master_listener_("", "");
        }
    }
    if (change.master_online) {
        std::string ha = change.master_ha_addr;
        if (ha.empty()) {
            MutexLock l(mu_);
            if (registered_master_ == change.min_broker_addr) {
                ha = registered_ha_;
            }
        }
        if (sync_.set_master_addr(change.min_broker_addr) && master_listener_) {
            master_listener_(change.min_broker_addr, ha);
        }
        wake();
    }
}

Status ActingMasterService::sync_member_group() {
    const BrokerConfig cfg = deps_.config->get();
    Status last = Status::error(Errc::kUnavailable, "no name server configured");
    for (const std::string& ns : cfg.namesrv_list()) {
        protocol::GetBrokerMemberGroupRequestHeader h;
        h.cluster_name = cfg.broker_cluster_name;
        h.broker_name = cfg.broker_name;
        auto req = protocol::RemotingCommand::request(Req::kGetBrokerMemberGroup);
        req.language = protocol::LanguageCode::kJava;
        h.to_ext(req);
        auto resp = invoke(ns, std::move(req));
        if (!resp.is_ok()) {
            last = resp.status();
            continue;
        }
        if (resp->code != RC::kSuccess) {
            last = Status::error(Errc::kUnavailable, "GET_BROKER_MEMBER_GROUP from {}: {} {}", ns,
                                 resp->code, resp->remark.value_or(""));
            continue;
        }
        auto body = protocol::GetBrokerMemberGroupResponseBody::decode(resp->body);
        if (!body.is_ok()) {
            last = body.status();
            continue;
        }
        if (auto change = tracker_.on_member_group(body->broker_member_group.broker_addrs)) {
            apply(*change);
        }
        return Status::ok();
    }
    return last;
}

Status ActingMasterService::take_offsets_from_slaves() {
    Status first;
    for (const auto& [id, addr] : tracker_.members()) {
        if (id == start_config_.broker_id || addr == start_config_.broker_addr()) {
            continue;
        }
        auto moved = sync_.take_higher_offsets_from(addr);
        if (!moved.is_ok() && first.is_ok()) {
            first = moved.status();
        }
    }
    return first;
}

std::map<std::string, std::string> ActingMasterService::runtime_info() const {
    std::map<std::string, std::string> out;
    out["aliveReplicaNumInGroup"] = std::to_string(tracker_.alive_replica_num());
    out["minBrokerIdInGroup"] = std::to_string(tracker_.min_broker_id());
    out["isActingMaster"] = tracker_.is_acting_master() ? "true" : "false";
    if (!start_config_.is_master()) {
        const SlaveSynchronize::Stats st = sync_.stats();
        out["slaveSyncMasterAddr"] = sync_.master_addr();
        out["slaveSyncRounds"] = std::to_string(st.rounds);
        out["slaveSyncFailures"] = std::to_string(st.failures);
    }
    return out;
}

bool ActingMasterService::push_offsets_first() {
    std::function<void()> done;
    {
        MutexLock l(mu_);
        if (!push_offsets_) {
            return true;
        }
    }
    const std::string master = sync_.master_addr();
    if (master.empty()) {
        return true;  // nothing to overwrite the offsets with either
    }
    if (master == start_config_.broker_addr()) {
        return false;  // the name server still lists this peer as the master: wait for the next
    }
    auto pushed = sync_.push_higher_offsets_to(master);
    if (!pushed.is_ok()) {
        spdlog::warn("handing consumer offsets to master {}: {} (retried next round)", master,
                     pushed.status().message());
        return false;  // no overwrite before the hand-over worked
    }
    {
        MutexLock l(mu_);
        push_offsets_ = false;
        done = std::move(push_done_);
        push_done_ = nullptr;
    }
    if (done) {
        done();
    }
    return true;
}

void ActingMasterService::loop() {
    pthread_setname_np(pthread_self(), "BrokerGroupSync");
    Clock& clock = *deps_.clock;
    const Duration group_period =
        std::chrono::milliseconds(settings_.sync_broker_member_group_period);
    const Duration sync_period = std::chrono::milliseconds(settings_.slave_sync_period);
    const bool slave = !start_config_.is_master();
    const bool polls = settings_.enable_slave_acting_master;
    TimePoint next_group = clock.now();
    TimePoint next_sync = clock.now();
    // A returning master takes the offsets its slaves accepted (a few attempts, then gives up).
    int offset_attempts = (!slave && polls) ? 5 : 0;
    while (true) {
        bool sync_now = false;
        {
            MutexLock l(mu_);
            TimePoint wake_at = TimePoint::max();
            if (polls) {
                wake_at = std::min(wake_at, next_group);
            }
            if (slave) {
                wake_at = std::min(wake_at, next_sync);
            }
            const TimePoint now = clock.now();
            if (!stopping_ && !sync_now_ && wake_at > now) {
                std::unique_lock<Mutex> ul(mu_, std::adopt_lock);
                cv_.wait_for(ul, std::min<Duration>(wake_at - now, std::chrono::seconds(1)));
                ul.release();
            }
            if (stopping_) {
                return;
            }
            sync_now = sync_now_;
            sync_now_ = false;
        }
        const TimePoint now = clock.now();
        if (polls && now >= next_group) {
            if (Status st = sync_member_group(); !st.is_ok()) {
                spdlog::warn("sync broker member group failed: {}", st.message());
            } else if (offset_attempts > 0 && tracker_.members().size() > 0) {
                --offset_attempts;
                if (take_offsets_from_slaves().is_ok()) {
                    offset_attempts = 0;
                }
            }
            next_group = now + group_period;
        }
        if (slave && (sync_now || now >= next_sync)) {
            if (!tracker_.is_acting_master() && push_offsets_first()) {
                (void)sync_.sync_all();  // failures are logged and counted inside
            }
            next_sync = now + sync_period;
        }
    }
}

}  // namespace comet::broker
