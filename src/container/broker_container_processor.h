#pragma once
// BrokerContainerProcessor: the requests the container's own port answers (RocketMQ 5
// BrokerContainerProcessor):
//   ADD_BROKER (902)        header configPath: start the broker of that file (a path on the
//                           container's host). SUCCESS, or SYSTEM_ERROR with the reason.
//   REMOVE_BROKER (903)     header brokerClusterName, brokerName, brokerId: stop that broker
//                           gracefully. SUCCESS, BROKER_NOT_EXIST, or SYSTEM_ERROR.
//   GET_BROKER_CONFIG (26)  the container's own settings as `key=value` lines; each broker
//                           answers GET_BROKER_CONFIG for itself on its own port.
// Every other code: REQUEST_CODE_NOT_SUPPORTED naming the code (UPDATE_BROKER_CONFIG of the
// container's own settings is not supported: restart the container to change them).
// Runs on the container's one-thread admin executor, so requests are handled one at a time.

#include "container/broker_container.h"
#include "net/processor.h"

namespace comet::container {

class BrokerContainerProcessor final : public net::RequestProcessor {
public:
    // `container` must outlive the processor's server.
    explicit BrokerContainerProcessor(BrokerContainer& container) : container_(container) {}

    void process(const net::ConnectionPtr& conn, protocol::RemotingCommand request,
                 net::Responder respond) override;

private:
    protocol::RemotingCommand add_broker(const net::ConnectionPtr& conn,
                                         const protocol::RemotingCommand& req);
    protocol::RemotingCommand remove_broker(const net::ConnectionPtr& conn,
                                            const protocol::RemotingCommand& req);
    protocol::RemotingCommand get_broker_config(const protocol::RemotingCommand& req);

    BrokerContainer& container_;
    const int64_t start_millis_ = SystemClock::instance().wall_millis();
};

}  // namespace comet::container
