#pragma once
// The broker's request processors (Java SendMessageProcessor, PullMessageProcessor,
// ClientManageProcessor, ConsumerManageProcessor, QueryMessageProcessor,
// AdminBrokerProcessor). Each is stateless apart from its BrokerContext& and may be called
// concurrently from its executor's threads. Responses follow reference §4 (codes and remarks).

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/inline_function.h"
#include "broker/context/broker_context.h"
#include "broker/context/broker_response.h"
#include "protocol/message_ext.h"
#include "protocol/remoting_command.h"
#include "protocol/send_headers.h"
#include "store/put_message_status.h"

namespace comet::broker {

// A request refused by one of a processor's checks: the code and remark of the answer. Checks
// return std::optional<Refusal> (nullopt: passed), so that a processor reads as its list of
// checks; nothing is allocated when a check passes.
struct Refusal {
    int32_t code = 0;
    std::string remark;
};
inline void reply_refusal(const Reply& reply, const protocol::RemotingCommand& req,
                          Refusal refusal) {
    reply_code(reply, req, refusal.code, std::move(refusal.remark));
}

// How a send is answered, held inline by the send's completion (issue 16): an inline send
// answers straight through its Responder, a send on the executor through its Reply. The
// response is passed by reference and may be a per-thread command that is reused (its
// strings keep their capacity); a Reply gets it moved.
using SendReply = InlineFunction<void(protocol::RemotingCommand&), 32>;
SendReply send_reply_of(Reply reply);

class SendMessageProcessor {
public:
    explicit SendMessageProcessor(BrokerContext& ctx) : ctx_(ctx) {}
    // SEND_MESSAGE, SEND_MESSAGE_V2, SEND_BATCH_MESSAGE, CONSUMER_SEND_MSG_BACK.
    void process(const RequestContext& rc, protocol::RemotingCommand req, const Reply& reply);
    // Run to completion (docs/decisions/019-run-to-completion.md), called on the I/O thread
    // that read `req`: handles a send whose topic exists and is not a retry topic, and returns
    // true; the reply goes out now (refusals) or from the store / flush / HA completion. Never
    // blocks (the store put may wait for ring space, bounded by one chunk write). Returns false
    // with `req` untouched when the send needs a step that may block (creating a topic writes
    // topics.json; retry / DLQ handling; CONSUMER_SEND_MSG_BACK reads the log and may call
    // another broker): the caller then runs process() on the SendMessage executor.
    // `reply` is moved into the completion when the send runs here (not copied); it is left
    // untouched when false is returned. `rc` is read only before this returns, and so is the
    // body, which may be borrowed from the connection's read buffer (req.body_view()): a
    // caller that keeps `req` after false is returned calls req.own_body() first.
    bool try_send_inline(const RequestContext& rc, protocol::RemotingCommand& req,
                         SendReply& reply);
    bool try_send_inline(const RequestContext& rc, protocol::RemotingCommand& req, Reply&& reply);

private:
    void send(const RequestContext& rc, protocol::RemotingCommand req, const Reply& reply);
    // `topic_cfg`: the topic's config when the caller already looked it up.
    void send_decoded(const RequestContext& rc, const protocol::SendMessageRequestHeader& header,
                      std::optional<TopicConfig> topic_cfg, protocol::RemotingCommand req,
                      SendReply reply);
    void send_back(const RequestContext& rc, protocol::RemotingCommand req, const Reply& reply);
    BrokerContext& ctx_;
};

class PullMessageProcessor {
public:
    explicit PullMessageProcessor(BrokerContext& ctx) : ctx_(ctx) {}
    void process(const RequestContext& rc, protocol::RemotingCommand req, const Reply& reply) {
        process_request(rc, std::move(req), reply, true);
    }
    // `allow_suspend` false for the re-execution of a held request.
    void process_request(const RequestContext& rc, protocol::RemotingCommand req,
                         const Reply& reply, bool allow_suspend);

private:
    // Parks a pull that found nothing (`held`, whose wake-up re-executes it on the pull
    // executor without committing or suspending again).
    void suspend(const RequestContext& rc, const protocol::RemotingCommand& req, const Reply& reply,
                 HeldPullRequest held);
    BrokerContext& ctx_;
};

// HEART_BEAT, UNREGISTER_CLIENT, CHECK_CLIENT_CONFIG.
class ClientManageProcessor {
public:
    explicit ClientManageProcessor(BrokerContext& ctx) : ctx_(ctx) {}
    void process(const RequestContext& rc, protocol::RemotingCommand req, const Reply& reply);

private:
    void check_client_config(const protocol::RemotingCommand& req, const Reply& reply);
    void heart_beat(const RequestContext& rc, const protocol::RemotingCommand& req,
                    const Reply& reply);
    BrokerContext& ctx_;
};

// GET_CONSUMER_LIST_BY_GROUP, QUERY_CONSUMER_OFFSET, UPDATE_CONSUMER_OFFSET.
class ConsumerManageProcessor {
public:
    explicit ConsumerManageProcessor(BrokerContext& ctx) : ctx_(ctx) {}
    void process(const RequestContext& rc, protocol::RemotingCommand req, const Reply& reply);
    // The codes of its table (what BrokerController routes to it).
    static std::vector<int32_t> handled_codes();

private:
    // Answers one request code; handler_for() is the table of them.
    using Handler = void (ConsumerManageProcessor::*)(const protocol::RemotingCommand& req,
                                                      const Reply& reply);
    struct Route {
        int32_t code;
        Handler handler;
    };
    // The table: one row per request code this processor answers.
    static std::span<const Route> routes();
    // The handler of `code`; null when this processor does not handle it.
    static Handler handler_for(int32_t code);
    void consumer_list_by_group(const protocol::RemotingCommand& req, const Reply& reply);
    void query_consumer_offset(const protocol::RemotingCommand& req, const Reply& reply);
    void update_consumer_offset(const protocol::RemotingCommand& req, const Reply& reply);
    BrokerContext& ctx_;
};

// QUERY_MESSAGE, VIEW_MESSAGE_BY_ID.
class QueryMessageProcessor {
public:
    explicit QueryMessageProcessor(BrokerContext& ctx) : ctx_(ctx) {}
    void process(const RequestContext& rc, protocol::RemotingCommand req, const Reply& reply);

private:
    BrokerContext& ctx_;
};

// END_TRANSACTION (Java EndTransactionProcessor): commit or roll back a half message
// (TransactionalMessageService). Oneway from clients: the answer is only sent to a two-way
// request. Runs on the SendMessage executor (it waits for the store).
class EndTransactionProcessor {
public:
    explicit EndTransactionProcessor(BrokerContext& ctx) : ctx_(ctx) {}
    void process(const RequestContext& rc, protocol::RemotingCommand req, const Reply& reply);

private:
    BrokerContext& ctx_;
};

// Offsets by queue, locks, topic / group / config administration, stats.
class AdminBrokerProcessor {
public:
    explicit AdminBrokerProcessor(BrokerContext& ctx) : ctx_(ctx) {}
    void process(const RequestContext& rc, protocol::RemotingCommand req, const Reply& reply);
    // The codes of its table (what BrokerController routes to it).
    static std::vector<int32_t> handled_codes();

private:
    // Answers one request code; handler_for() is the table of them.
    using Handler = void (AdminBrokerProcessor::*)(const RequestContext& rc,
                                                   const protocol::RemotingCommand& req,
                                                   const Reply& reply);
    struct Route {
        int32_t code;
        Handler handler;
    };
    // The table: one row per request code this processor answers.
    static std::span<const Route> routes();
    // The handler of `code`; null when this processor does not handle it.
    static Handler handler_for(int32_t code);

    // Offsets and times of a queue in the store.
    void max_offset(const RequestContext& rc, const protocol::RemotingCommand& req,
                    const Reply& reply);
    void min_offset(const RequestContext& rc, const protocol::RemotingCommand& req,
                    const Reply& reply);
    void search_offset_by_time(const RequestContext& rc, const protocol::RemotingCommand& req,
                               const Reply& reply);
    void earliest_msg_store_time(const RequestContext& rc, const protocol::RemotingCommand& req,
                                 const Reply& reply);
    void query_consume_queue(const RequestContext& rc, const protocol::RemotingCommand& req,
                             const Reply& reply);
    // Orderly-consumption locks.
    void lock_batch_mq(const RequestContext& rc, const protocol::RemotingCommand& req,
                       const Reply& reply);
    void unlock_batch_mq(const RequestContext& rc, const protocol::RemotingCommand& req,
                         const Reply& reply);
    void lock_batch(const protocol::RemotingCommand& req, const Reply& reply, bool lock);
    // Topics.
    void create_topic(const RequestContext& rc, const protocol::RemotingCommand& req,
                      const Reply& reply);
    void delete_topic(const RequestContext& rc, const protocol::RemotingCommand& req,
                      const Reply& reply);
    void clean_unused_topic(const RequestContext& rc, const protocol::RemotingCommand& req,
                            const Reply& reply);
    void clean_expired_consume_queue(const RequestContext& rc, const protocol::RemotingCommand& req,
                                     const Reply& reply);
    void all_topic_config(const RequestContext& rc, const protocol::RemotingCommand& req,
                          const Reply& reply);
    // Subscription groups and offsets.
    void update_subscription_group(const RequestContext& rc, const protocol::RemotingCommand& req,
                                   const Reply& reply);
    void delete_subscription_group(const RequestContext& rc, const protocol::RemotingCommand& req,
                                   const Reply& reply);
    void all_subscription_groups(const RequestContext& rc, const protocol::RemotingCommand& req,
                                 const Reply& reply);
    void all_consumer_offsets(const RequestContext& rc, const protocol::RemotingCommand& req,
                              const Reply& reply);
    void all_delay_offsets(const RequestContext& rc, const protocol::RemotingCommand& req,
                           const Reply& reply);
    // Runtime information and statistics.
    void runtime_info(const RequestContext& rc, const protocol::RemotingCommand& req,
                      const Reply& reply);
    void add_store_runtime_info(std::map<std::string, std::string>* table) const;
    void topic_stats(const RequestContext& rc, const protocol::RemotingCommand& req,
                     const Reply& reply);
    void consume_stats(const RequestContext& rc, const protocol::RemotingCommand& req,
                       const Reply& reply);
    void view_stats(const RequestContext& rc, const protocol::RemotingCommand& req,
                    const Reply& reply);
    // Broker configuration.
    void broker_config(const RequestContext& rc, const protocol::RemotingCommand& req,
                       const Reply& reply);
    void update_broker_config(const RequestContext& rc, const protocol::RemotingCommand& req,
                              const Reply& reply);
    BrokerContext& ctx_;
};

}  // namespace comet::broker
