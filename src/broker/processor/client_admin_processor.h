#pragma once
// ClientAdminProcessor: the admin requests about a broker's clients and their consume offsets
// that RocketMQ 4.9.8's mqadmin sends (Java AdminBrokerProcessor + Broker2Client):
// GET_CONSUMER_CONNECTION_LIST (203), GET_PRODUCER_CONNECTION_LIST (204, producer_connection.cc),
// INVOKE_BROKER_TO_RESET_OFFSET (222), INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223),
// QUERY_TOPIC_CONSUME_BY_WHO (300), QUERY_CONSUME_TIME_SPAN (303), CLONE_GROUP_OFFSET (314),
// GET_BROKER_CONSUME_STATS (317), and GET_CONSUMER_RUNNING_INFO (307) / CONSUME_MESSAGE_DIRECTLY
// (309) forwarded to a consumer. Bodies are 4.9.8's JSON (fastjson field order, MessageQueue
// map keys as JSON objects).
// Threads: runs on the AdminBroker executor; requests to clients (RESET_CONSUMER_CLIENT_OFFSET,
// GET_CONSUMER_STATUS_FROM_CLIENT) go out on the clients' connections, and 223 answers from the
// last client's response callback (an I/O thread), never blocking a thread while it waits.

#include "broker/context/broker_context.h"

namespace comet::broker {

// Client versions (MQVersion ordinals) from which a client takes RESET_CONSUMER_CLIENT_OFFSET
// and GET_CONSUMER_STATUS_FROM_CLIENT (V3_0_7_SNAPSHOT).
inline constexpr int32_t kVersionClientAdmin = 28;
// ... and from which it answers forwarded 307 / 309 (V3_1_8_SNAPSHOT).
inline constexpr int32_t kVersionCallConsumer = 62;

class ClientAdminProcessor {
public:
    explicit ClientAdminProcessor(BrokerContext& ctx) : ctx_(ctx) {}
    void process(const RequestContext& rc, protocol::RemotingCommand req, const Reply& reply);
    // The request codes process() handles.
    static std::vector<int32_t> handled_codes();

private:
    void consumer_connection_list(const protocol::RemotingCommand& req, const Reply& reply);
    void reset_offset(const protocol::RemotingCommand& req, const Reply& reply);
    void consumer_status(const protocol::RemotingCommand& req, const Reply& reply);
    void topic_consume_by_who(const protocol::RemotingCommand& req, const Reply& reply);
    void consume_time_span(const protocol::RemotingCommand& req, const Reply& reply);
    void clone_group_offset(const protocol::RemotingCommand& req, const Reply& reply);
    void broker_consume_stats(const protocol::RemotingCommand& req, const Reply& reply);
    // GET_CONSUMER_RUNNING_INFO (307) / CONSUME_MESSAGE_DIRECTLY (309): forwarded to the
    // consumer (group, clientId), whose answer is relayed (Java callConsumer, 10 s).
    void call_consumer(protocol::RemotingCommand req, const Reply& reply);
    BrokerContext& ctx_;
};

// GET_PRODUCER_CONNECTION_LIST (Java AdminBrokerProcessor#getProducerConnectionList) from the
// producer table fed by heartbeats: {"connectionSet":[Connection...]}, or SYSTEM_ERROR "the
// producer group[g] not exist". In producer_connection.cc.
protocol::RemotingCommand producer_connection_list(BrokerContext& ctx,
                                                   const protocol::RemotingCommand& req);

// One Connection object of 4.9.8's ConsumerConnection / ProducerConnection bodies:
// {"clientAddr":..,"clientId":..,"language":"JAVA","version":N}.
std::string connection_json(const ClientChannelInfo& info, const std::string& client_addr);

}  // namespace comet::broker
