#pragma once
// ControllerLink: the broker's calls to the controller group of controller mode (RocketMQ 5
// BrokerOuterAPI's controller half). `controllerAddr` lists every controller; requests that
// change or read the replica state go to the leader, which the link finds with
// CONTROLLER_GET_METADATA_INFO and remembers until an answer says otherwise
// (CONTROLLER_NOT_LEADER, a transport error): then it looks again and retries once.
// Heartbeats go to every controller (liveness is member-local on the controller side) as
// requests: the leader's answer renews the master lease (master_lease.h).
// Threads: blocking calls, from one thread (the ReplicasManager's); not on an I/O thread.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "net/remoting_client.h"
#include "protocol/remoting_command.h"

namespace comet::broker {

class ControllerLink {
public:
    ControllerLink(std::vector<std::string> controllers, Duration timeout, Clock& clock);
    ~ControllerLink();

    void start();
    void shutdown();

    // Sends to the leader (finding it first when unknown) and returns its answer, whatever
    // its code, except CONTROLLER_NOT_LEADER, which makes the link look again and retry once.
    // Errors: no controller answers, or none knows a leader (kUnavailable).
    Result<protocol::RemotingCommand> call_leader(const protocol::RemotingCommand& req);
    // To every controller, each answer (not errors: those are logged at debug level) handed to
    // `on_answer` on the link's I/O thread. `timeout` bounds each call.
    using AnswerFn = std::function<void(const protocol::RemotingCommand&)>;
    void send_to_all(const protocol::RemotingCommand& req, Duration timeout, AnswerFn on_answer);
    // The leader address last found ("" when none).
    std::string leader() const { return leader_; }

private:
    Result<std::string> find_leader();

    const std::vector<std::string> controllers_;
    const Duration timeout_;
    std::unique_ptr<net::RemotingClient> client_;
    std::string leader_;
};

}  // namespace comet::broker
