#include "client/mq_client_instance.h"

#include <unistd.h>

#include <chrono>

#include "base/logging.h"
#include "net/thread_pool_executor.h"
#include "protocol/namesrv_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::client {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;

std::vector<std::string> split_namesrv_addr(const std::string& addrs) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : addrs + ";") {
        if (c == ';' || c == ',') {
            if (!cur.empty()) {
                out.push_back(cur);
            }
            cur.clear();
        } else if (c != ' ') {
            cur.push_back(c);
        }
    }
    return out;
}

Status response_error(std::string_view what, const protocol::RemotingCommand& resp) {
    const Errc errc = resp.code == RC::kTopicNotExist || resp.code == RC::kQueryNotFound
                          ? Errc::kNotFound
                          : Errc::kUnavailable;
    return Status::error(errc, "{}: {} ({}) {}", what, protocol::response_code_name(resp.code),
                         resp.code, resp.remark.value_or(""));
}

MqClientInstance::MqClientInstance(ClientConfig config)
    : config_(std::move(config)), namesrv_addrs_(split_namesrv_addr(config_.namesrv_addr)) {
    std::string instance = config_.instance_name;
    if (instance.empty()) {
        instance = fmt::format("{}#{}", ::getpid(),
                               std::chrono::steady_clock::now().time_since_epoch().count());
    }
    client_id_ = config_.client_ip + "@" + instance;
    net::RemotingClientConfig rc;
    rc.name = "client";
    rc.io_threads = config_.io_threads;
    remoting_ = std::make_unique<net::RemotingClient>(rc);
}

MqClientInstance::~MqClientInstance() { shutdown(); }

void MqClientInstance::register_processor(
    int32_t code, std::function<protocol::RemotingCommand(protocol::RemotingCommand)> fn) {
    auto executor = std::make_shared<net::ThreadPoolExecutor>("client_cb", 1, 1000);
    remoting_->register_processor(
        code,
        net::make_processor([fn = std::move(fn)](const net::ConnectionPtr&,
                                                 protocol::RemotingCommand req,
                                                 net::Responder respond) {
            protocol::RemotingCommand resp = fn(req);
            if (!respond.is_oneway()) {
                respond(std::move(resp));
            }
        }),
        executor);
}

void MqClientInstance::register_request_handler(
    int32_t code, std::function<void(const net::ConnectionPtr&, protocol::RemotingCommand)> fn) {
    auto executor = std::make_shared<net::ThreadPoolExecutor>("client_req", 1, 2000);
    remoting_->register_processor(
        code,
        net::make_processor([fn = std::move(fn)](const net::ConnectionPtr& conn,
                                                 protocol::RemotingCommand req,
                                                 net::Responder) { fn(conn, std::move(req)); }),
        executor);
}

Status MqClientInstance::start() {
    if (namesrv_addrs_.empty()) {
        return Status::error(Errc::kInvalidArgument, "no name server address given");
    }
    if (started_.exchange(true)) {
        return Status::ok();
    }
    remoting_->start();
    scheduler_.start();
    scheduler_.schedule_every(std::chrono::milliseconds(10), config_.poll_name_server_interval,
                              [this] { refresh_all_routes(); });
    scheduler_.schedule_every(std::chrono::milliseconds(1000), config_.heartbeat_broker_interval,
                              [this] { send_heartbeat_to_all(); });
    return Status::ok();
}

void MqClientInstance::shutdown() {
    scheduler_.shutdown();
    remoting_->shutdown();
}

void MqClientInstance::set_producer_group(std::string group) {
    MutexLock lock(mu_);
    producer_group_ = std::move(group);
}

void MqClientInstance::set_consumer_data_source(
    std::function<std::vector<protocol::ConsumerData>()> fn) {
    MutexLock lock(mu_);
    consumer_source_ = std::move(fn);
}

Result<protocol::RemotingCommand> MqClientInstance::invoke(const std::string& addr,
                                                           protocol::RemotingCommand req) {
    return remoting_->invoke_sync(addr, std::move(req), config_.rpc_timeout);
}

Result<protocol::RemotingCommand> MqClientInstance::invoke_namesrv(protocol::RemotingCommand req) {
    Status last = Status::error(Errc::kUnavailable, "no name server");
    const size_t n = namesrv_addrs_.size();
    const size_t start = namesrv_index_.fetch_add(1);
    for (size_t i = 0; i < n; ++i) {
        auto r = invoke(namesrv_addrs_[(start + i) % n], req);
        if (r.is_ok()) {
            return r;
        }
        last = r.status();
    }
    return last;
}

Result<protocol::TopicRouteData> MqClientInstance::fetch_route(const std::string& topic) {
    protocol::GetRouteInfoRequestHeader h;
    h.topic = topic;
    auto req = protocol::RemotingCommand::request(Req::kGetRouteinfoByTopic);
    h.to_ext(req);
    COMET_ASSIGN_OR_RETURN(auto resp, invoke_namesrv(std::move(req)));
    if (resp.code != RC::kSuccess) {
        return response_error(fmt::format("route of topic {}", topic), resp);
    }
    COMET_ASSIGN_OR_RETURN(auto route, protocol::TopicRouteData::decode(resp.body));
    MutexLock lock(mu_);
    update_route_locked(topic, route);
    return route;
}

void MqClientInstance::update_route_locked(const std::string& topic,
                                           const protocol::TopicRouteData& route) {
    routes_[topic] = route;
    for (const auto& bd : route.broker_datas) {
        broker_addrs_[bd.broker_name] = bd.broker_addrs;
    }
}

Result<protocol::TopicRouteData> MqClientInstance::route(const std::string& topic, bool force) {
    if (!force) {
        MutexLock lock(mu_);
        auto it = routes_.find(topic);
        if (it != routes_.end()) {
            return it->second;
        }
    }
    return fetch_route(topic);
}

std::optional<protocol::TopicRouteData> MqClientInstance::cached_route(
    const std::string& topic) const {
    MutexLock lock(mu_);
    auto it = routes_.find(topic);
    if (it == routes_.end()) {
        return std::nullopt;
    }
    return it->second;
}

void MqClientInstance::refresh_all_routes() {
    std::vector<std::string> topics;
    {
        MutexLock lock(mu_);
        for (const auto& [t, r] : routes_) {
            topics.push_back(t);
        }
    }
    for (const auto& t : topics) {
        auto r = fetch_route(t);
        if (!r.is_ok() && r.status().code() != Errc::kNotFound) {
            spdlog::debug("route refresh of {} failed: {}", t, r.status().to_string());
        }
    }
}

std::optional<std::string> MqClientInstance::find_broker_master(
    const std::string& broker_name) const {
    MutexLock lock(mu_);
    auto it = broker_addrs_.find(broker_name);
    if (it == broker_addrs_.end()) {
        return std::nullopt;
    }
    auto m = it->second.find(0);
    if (m == it->second.end()) {
        return std::nullopt;
    }
    return m->second;
}

std::optional<FindBrokerResult> find_broker_address_in_subscribe(
    const std::map<int64_t, std::string>& addrs, int64_t broker_id, bool only_this_broker) {
    if (addrs.empty()) {
        return std::nullopt;
    }
    if (auto it = addrs.find(broker_id); it != addrs.end()) {
        return FindBrokerResult{it->second, broker_id != 0};
    }
    if (broker_id != 0) {
        if (auto it = addrs.find(broker_id + 1); it != addrs.end()) {
            return FindBrokerResult{it->second, true};
        }
    }
    if (only_this_broker) {
        return std::nullopt;
    }
    return FindBrokerResult{addrs.begin()->second, addrs.begin()->first != 0};
}

std::optional<FindBrokerResult> MqClientInstance::find_broker_address_in_subscribe(
    const std::string& broker_name, int64_t broker_id, bool only_this_broker) const {
    MutexLock lock(mu_);
    auto it = broker_addrs_.find(broker_name);
    if (it == broker_addrs_.end()) {
        return std::nullopt;
    }
    return client::find_broker_address_in_subscribe(it->second, broker_id, only_this_broker);
}

void MqClientInstance::update_pull_from_which_node(const MessageQueue& mq, int64_t broker_id) {
    MutexLock lock(mu_);
    pull_from_which_node_[mq] = broker_id;
}

int64_t MqClientInstance::recalculate_pull_from_which_node(const MessageQueue& mq) const {
    MutexLock lock(mu_);
    auto it = pull_from_which_node_.find(mq);
    return it == pull_from_which_node_.end() ? 0 : it->second;
}

std::vector<std::string> MqClientInstance::all_broker_addrs() const {
    MutexLock lock(mu_);
    std::vector<std::string> out;
    for (const auto& [name, addrs] : broker_addrs_) {
        for (const auto& [id, addr] : addrs) {
            out.push_back(addr);
        }
    }
    return out;
}

std::vector<std::string> MqClientInstance::all_master_addrs() const {
    MutexLock lock(mu_);
    std::vector<std::string> out;
    for (const auto& [name, addrs] : broker_addrs_) {
        auto m = addrs.find(0);
        if (m != addrs.end()) {
            out.push_back(m->second);
        }
    }
    return out;
}

void MqClientInstance::send_heartbeat_to_all() {
    protocol::HeartbeatData hb;
    hb.client_id = client_id_;
    std::function<std::vector<protocol::ConsumerData>()> source;
    {
        MutexLock lock(mu_);
        if (!producer_group_.empty()) {
            hb.producer_data_set.push_back(protocol::ProducerData{producer_group_});
        }
        source = consumer_source_;
    }
    if (source) {
        hb.consumer_data_set = source();
    }
    if (hb.producer_data_set.empty() && hb.consumer_data_set.empty()) {
        return;
    }
    const std::string body = hb.encode();
    const bool to_slaves_too = !hb.consumer_data_set.empty();
    for (const auto& addr : to_slaves_too ? all_broker_addrs() : all_master_addrs()) {
        auto req = protocol::RemotingCommand::request(Req::kHeartBeat);
        req.body = body;
        auto r = invoke(addr, std::move(req));
        if (!r.is_ok() || r->code != RC::kSuccess) {
            spdlog::warn("heartbeat to {} failed: {}", addr,
                         r.is_ok() ? r->remark.value_or("") : r.status().to_string());
        }
    }
}

}  // namespace comet::client
