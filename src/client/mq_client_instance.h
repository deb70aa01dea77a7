#pragma once
// MqClientInstance: the per-client plumbing behind a producer, consumer or admin client (Java
// MQClientInstance + MQClientAPIImpl): one RemotingClient, the name server list, the topic route
// cache (refreshed every poll_name_server_interval and on demand), the broker address table,
// heartbeats to every master, and the background Scheduler.
//
// Owner: exactly one DefaultMqProducer / DefaultMqPushConsumer / DefaultMqPullConsumer /
// AdminClient. Threads: every method is thread-safe. Lock: mu_ guards the route and broker
// tables and the heartbeat sources; it is a leaf (never held across an RPC or a callback).

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "client/client_config.h"
#include "client/client_types.h"
#include "client/scheduler.h"
#include "net/remoting_client.h"
#include "protocol/heartbeat_body.h"
#include "protocol/route_bodies.h"

namespace comet::client {

// Java FindBrokerResult.
struct FindBrokerResult {
    std::string addr;
    bool slave = false;
    bool operator==(const FindBrokerResult&) const = default;
};

// Java MQClientInstance#findBrokerAddressInSubscribe over one group's addresses: `broker_id`
// itself; else, for a slave id, the next id; else (unless `only_this_broker`) the smallest id
// present (the master when alive, else the first slave). nullopt when nothing fits.
std::optional<FindBrokerResult> find_broker_address_in_subscribe(
    const std::map<int64_t, std::string>& addrs, int64_t broker_id, bool only_this_broker);

class MqClientInstance {
public:
    explicit MqClientInstance(ClientConfig config);
    ~MqClientInstance();
    MqClientInstance(const MqClientInstance&) = delete;
    MqClientInstance& operator=(const MqClientInstance&) = delete;

    // Server-initiated request handler (before start()).
    void register_processor(int32_t code,
                            std::function<protocol::RemotingCommand(protocol::RemotingCommand)> fn);
    // Server-initiated one-way request handler that needs the connection it came on (e.g.
    // CHECK_TRANSACTION_STATE, answered by END_TRANSACTION on that connection). Runs on its
    // own executor thread; no response is sent. Before start().
    void register_request_handler(
        int32_t code,
        std::function<void(const net::ConnectionPtr&, protocol::RemotingCommand)> fn);
    // Starts the transport, the scheduler, and the periodic route refresh and heartbeat.
    Status start();
    void shutdown();

    const std::string& client_id() const { return client_id_; }
    const ClientConfig& config() const { return config_; }
    net::RemotingClient& remoting() { return *remoting_; }
    Scheduler& scheduler() { return scheduler_; }

    // Heartbeat content comes from these sources (producer group / consumer data).
    void set_producer_group(std::string group);
    void set_consumer_data_source(std::function<std::vector<protocol::ConsumerData>()> fn);

    // GET_ROUTEINFO_BY_TOPIC from the name servers (tries each). kNotFound for TOPIC_NOT_EXIST.
    Result<protocol::TopicRouteData> fetch_route(const std::string& topic);
    // Cached route, fetching it when absent (or when `force`).
    Result<protocol::TopicRouteData> route(const std::string& topic, bool force = false);
    std::optional<protocol::TopicRouteData> cached_route(const std::string& topic) const;
    // Refreshes every cached topic (what the 30 s timer does).
    void refresh_all_routes();

    // Master address of a broker name from cached routes; nullopt when unknown.
    std::optional<std::string> find_broker_master(const std::string& broker_name) const;
    // Every known master address.
    std::vector<std::string> all_master_addrs() const;
    // Every known broker address (masters and slaves).
    std::vector<std::string> all_broker_addrs() const;
    // findBrokerAddressInSubscribe on the cached addresses of `broker_name`.
    std::optional<FindBrokerResult> find_broker_address_in_subscribe(
        const std::string& broker_name, int64_t broker_id, bool only_this_broker) const;
    // PullAPIWrapper's pullFromWhichNodeTable: the broker a queue's next pull goes to (the last
    // suggestWhichBrokerId; 0 = master by default).
    void update_pull_from_which_node(const MessageQueue& mq, int64_t broker_id);
    int64_t recalculate_pull_from_which_node(const MessageQueue& mq) const;

    // Sends HEART_BEAT now (blocking, bounded by rpc_timeout each): to every master, and to the
    // slaves too when there is consumer data (they serve pulls; Java sendHeartbeatToAllBroker).
    void send_heartbeat_to_all();

    // Sync RPC to one address; transport errors come back as Status.
    Result<protocol::RemotingCommand> invoke(const std::string& addr,
                                             protocol::RemotingCommand req);
    // Sync RPC to the name servers, first one that answers.
    Result<protocol::RemotingCommand> invoke_namesrv(protocol::RemotingCommand req);

    const std::vector<std::string>& namesrv_addrs() const { return namesrv_addrs_; }

private:
    void update_route_locked(const std::string& topic, const protocol::TopicRouteData& route)
        REQUIRES(mu_);

    const ClientConfig config_;
    const std::vector<std::string> namesrv_addrs_;
    std::string client_id_;
    std::unique_ptr<net::RemotingClient> remoting_;
    Scheduler scheduler_;
    std::atomic<size_t> namesrv_index_{0};
    std::atomic<bool> started_{false};

    mutable Mutex mu_;
    std::map<std::string, protocol::TopicRouteData> routes_ GUARDED_BY(mu_);
    // brokerName -> brokerId -> address
    std::map<std::string, std::map<int64_t, std::string>> broker_addrs_ GUARDED_BY(mu_);
    std::string producer_group_ GUARDED_BY(mu_);
    std::function<std::vector<protocol::ConsumerData>()> consumer_source_ GUARDED_BY(mu_);
    std::map<MessageQueue, int64_t> pull_from_which_node_ GUARDED_BY(mu_);
};

// Builds an error Status from a non-success response: "<what>: <CODE_NAME> (<code>) <remark>".
Status response_error(std::string_view what, const protocol::RemotingCommand& resp);

}  // namespace comet::client
