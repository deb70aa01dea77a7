#pragma once
// TransactionMqProducer: RocketMQ transactional messages (Java TransactionMQProducer +
// DefaultMQProducerImpl#sendMessageInTransaction / #endTransaction / #checkTransactionState).
// send_message_in_transaction() sends the message as a half (TRAN_MSG=true, PGROUP=group,
// sysFlag TRANSACTION_PREPARED_TYPE), runs the listener's local transaction, then sends
// END_TRANSACTION (one-way) with its outcome. The broker asks about halves left UNKNOWN with
// CHECK_TRANSACTION_STATE on this producer's connection; check_local_transaction() answers and
// END_TRANSACTION (fromTransactionCheck=true) goes back on that connection. See
// docs/transactions.md and docs/client.md.
//
// Owner: the application; the listener must outlive the producer. Threads:
// send_message_in_transaction is thread-safe and runs execute_local_transaction on the caller's
// thread; check_local_transaction runs on the client's "client_req" thread (one at a time).
// Differences from Java: no check thread pool settings (one thread).

#include <memory>
#include <string>

#include "base/status.h"
#include "client/producer.h"

namespace comet::client {

// Java LocalTransactionState.
enum class LocalTransactionState { kCommitMessage, kRollbackMessage, kUnknown };
std::string_view local_transaction_state_name(LocalTransactionState s);

// Java TransactionListener. `arg` is the pointer given to send_message_in_transaction.
class TransactionListener {
public:
    virtual ~TransactionListener() = default;
    virtual LocalTransactionState execute_local_transaction(const Message& msg, void* arg) = 0;
    // The broker asks about a half left UNKNOWN; `msg` is the half on its real topic/queue
    // (UNIQ_KEY is its msg id; TRANSACTION_CHECK_TIMES counts the checks).
    virtual LocalTransactionState check_local_transaction(const MessageExt& msg) = 0;
};

struct TransactionSendResult {
    SendResult send_result;
    LocalTransactionState local_transaction_state = LocalTransactionState::kUnknown;
    std::string transaction_id;  // UNIQ_KEY of the half
};

class TransactionMqProducer {
public:
    TransactionMqProducer(ProducerConfig config, TransactionListener* listener,
                          Clock* clock = &SystemClock::instance());
    ~TransactionMqProducer();

    Status start();
    void shutdown();

    // Sends `msg` as a half, runs the local transaction, ends it. Errors: those of
    // DefaultMqProducer::send (the half was not stored: the local transaction did not run),
    // kInvalidArgument (no listener, delay level set is cleared as in Java). A failed
    // END_TRANSACTION is only logged (the broker's check-back resolves the half), as in Java.
    Result<TransactionSendResult> send_message_in_transaction(Message msg, void* arg = nullptr);

    DefaultMqProducer& producer() { return producer_; }

    // END_TRANSACTION's commitOrRollback value for a state (8, 12, 0).
    static int32_t commit_or_rollback(LocalTransactionState s);

private:
    void on_check(const net::ConnectionPtr& conn, protocol::RemotingCommand req);

    const std::string group_;
    TransactionListener* const listener_;
    DefaultMqProducer producer_;
};

}  // namespace comet::client
