#pragma once
// EscapeBridge: puts a message on the master of ANOTHER broker group (RocketMQ 5 EscapeBridge
// #putMessageToRemoteBroker). Used by a slave acting as master (enableSlaveActingMaster and
// enableRemoteEscape) for CONSUMER_SEND_MSG_BACK: its own group has no master, so the retry/DLQ
// message goes to a queue of the topic whose broker is a brokerId-0 master of a different
// brokerName, sent there with SEND_MESSAGE_V2 (synchronously, bounded by the network's timeout).
// The message keeps its properties (DELAY, RETRY_TOPIC, ORIGIN_MESSAGE_ID): the remote master
// schedules and stores it as any send.
// Owner: BrokerController. Threads: escape() from any thread (blocks on the route lookup and the
// send); the only state is an atomic round-robin counter. The network seam makes it testable.

#include <atomic>
#include <functional>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "protocol/message_ext.h"
#include "protocol/remoting_command.h"
#include "protocol/route_bodies.h"

namespace comet::net {
class RemotingClient;
}

namespace comet::broker {

struct EscapeTarget {
    std::string broker_name;
    std::string addr;  // the master's ip:port
    int32_t queue_id = 0;
    bool operator==(const EscapeTarget&) const = default;
};

// Pure: the `pick`-th (modulo) writable queue in `route` whose broker is not `own_broker_name`
// and has a master (brokerId 0) address. kNotFound (naming the topic) when there is none.
Result<EscapeTarget> pick_escape_target(const protocol::TopicRouteData& route,
                                        const std::string& topic,
                                        const std::string& own_broker_name, uint32_t pick);

class EscapeBridge {
public:
    struct Network {
        // GET_ROUTEINFO_BY_TOPIC from the name servers.
        std::function<Result<protocol::TopicRouteData>(const std::string& topic)> route;
        // One request to a broker; the response (any code) or a transport error.
        std::function<Result<protocol::RemotingCommand>(const std::string& addr,
                                                        protocol::RemotingCommand req)>
            send;
    };

    // The network over a RemotingClient: the route from each name server in turn (first
    // success wins), the send to the chosen master; each call bounded by `timeout`.
    static Network remote_network(net::RemotingClient* client,
                                  std::function<std::vector<std::string>()> namesrvs,
                                  Duration timeout);

    EscapeBridge(std::string own_broker_name, Network net);

    // The SEND_MESSAGE_V2 request for `msg` to `target` (producer group: the PGROUP property,
    // else "InnerProducerGroup", as RocketMQ).
    static protocol::RemotingCommand build_request(const protocol::MessageExt& msg,
                                                   const EscapeTarget& target);

    // Sends msg (its topic, properties, body, flags, reconsume times) to another group's master.
    // Ok = the remote broker's response (SUCCESS or its error code/remark); error Status = no
    // route, no other master (kNotFound) or transport failure.
    Result<protocol::RemotingCommand> escape(const protocol::MessageExt& msg);

private:
    const std::string own_broker_name_;
    Network net_;
    std::atomic<uint32_t> next_{0};
};

}  // namespace comet::broker
