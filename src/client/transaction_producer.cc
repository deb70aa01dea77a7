#include "client/transaction_producer.h"

#include <spdlog/spdlog.h>

#include "protocol/message_decoder.h"
#include "protocol/message_id.h"
#include "protocol/request_code.h"
#include "protocol/send_headers.h"

namespace comet::client {

namespace P = protocol::property;
namespace SF = protocol::sysflag;
namespace Req = protocol::RequestCode;

std::string_view local_transaction_state_name(LocalTransactionState s) {
    switch (s) {
        case LocalTransactionState::kCommitMessage: return "COMMIT_MESSAGE";
        case LocalTransactionState::kRollbackMessage: return "ROLLBACK_MESSAGE";
        case LocalTransactionState::kUnknown: return "UNKNOW";
    }
    return "UNKNOW";
}

int32_t TransactionMqProducer::commit_or_rollback(LocalTransactionState s) {
    switch (s) {
        case LocalTransactionState::kCommitMessage: return SF::kTransactionCommitType;
        case LocalTransactionState::kRollbackMessage: return SF::kTransactionRollbackType;
        case LocalTransactionState::kUnknown: return SF::kTransactionNotType;
    }
    return SF::kTransactionNotType;
}

TransactionMqProducer::TransactionMqProducer(ProducerConfig config, TransactionListener* listener,
                                             Clock* clock)
    : group_(config.group), listener_(listener), producer_(std::move(config), clock) {}

TransactionMqProducer::~TransactionMqProducer() { shutdown(); }

Status TransactionMqProducer::start() {
    if (listener_ == nullptr) {
        return Status::error(Errc::kInvalidArgument, "TransactionListener is null");
    }
    producer_.instance().register_request_handler(
        Req::kCheckTransactionState,
        [this](const net::ConnectionPtr& conn, protocol::RemotingCommand req) {
            on_check(conn, std::move(req));
        });
    return producer_.start();
}

void TransactionMqProducer::shutdown() { producer_.shutdown(); }

Result<TransactionSendResult> TransactionMqProducer::send_message_in_transaction(Message msg,
                                                                                 void* arg) {
    if (listener_ == nullptr) {
        return Status::error(Errc::kInvalidArgument, "TransactionListener is null");
    }
    // Java: a delay level is cleared; the half carries TRAN_MSG and PGROUP.
    msg.properties.erase(P::kDelayTimeLevel);
    msg.properties.set(P::kTransactionPrepared, "true");
    msg.properties.set(P::kProducerGroup, group_);
    COMET_ASSIGN_OR_RETURN(SendResult sent, producer_.send(msg));

    TransactionSendResult out;
    out.send_result = sent;
    out.transaction_id = sent.msg_id;
    if (sent.status == SendStatus::kSendOk) {
        if (msg.uniq_id().empty()) {
            msg.properties.set(P::kUniqClientMessageIdKeyIdx, sent.msg_id);
        }
        out.local_transaction_state = listener_->execute_local_transaction(msg, arg);
    } else {
        // FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE: Java rolls back.
        out.local_transaction_state = LocalTransactionState::kRollbackMessage;
    }

    // Java endTransaction: the half's CommitLog offset comes from its offset msg id.
    auto id = protocol::decode_offset_msg_id(sent.offset_msg_id);
    auto addr = producer_.instance().find_broker_master(sent.message_queue.broker_name);
    if (!id.is_ok() || !addr) {
        spdlog::warn("transaction {}: cannot end it ({}); the broker will check back",
                     out.transaction_id,
                     !id.is_ok() ? id.status().message() : "no broker address");
        return out;
    }
    protocol::EndTransactionRequestHeader h;
    h.producer_group = group_;
    h.tran_state_table_offset = sent.queue_offset;
    h.commit_log_offset = id->physical_offset;
    h.commit_or_rollback = commit_or_rollback(out.local_transaction_state);
    h.from_transaction_check = false;
    h.msg_id = sent.msg_id;
    h.transaction_id = out.transaction_id;
    auto req = protocol::RemotingCommand::request(Req::kEndTransaction);
    h.to_ext(req);
    if (Status st = producer_.instance().remoting().invoke_oneway(*addr, std::move(req),
                                                                  std::chrono::seconds(3));
        !st.is_ok()) {
        spdlog::warn("transaction {}: END_TRANSACTION to {} failed: {}; the broker will check "
                     "back",
                     out.transaction_id, *addr, st.message());
    }
    return out;
}

void TransactionMqProducer::on_check(const net::ConnectionPtr& conn,
                                     protocol::RemotingCommand req) {
    auto header = protocol::CheckTransactionStateRequestHeader::from_ext(req);
    if (!header.is_ok()) {
        spdlog::warn("CHECK_TRANSACTION_STATE from {}: {}", conn->remote_address(),
                     header.status().message());
        return;
    }
    auto msg = protocol::decode_message(req.body);
    if (!msg.is_ok()) {
        spdlog::warn("CHECK_TRANSACTION_STATE from {}: bad message body: {}",
                     conn->remote_address(), msg.status().message());
        return;
    }
    const std::string* pgroup = msg->property(P::kProducerGroup);
    if (pgroup != nullptr && *pgroup != group_) {
        spdlog::warn("CHECK_TRANSACTION_STATE from {} for group {}, this producer is {}",
                     conn->remote_address(), *pgroup, group_);
        return;
    }
    LocalTransactionState state = LocalTransactionState::kUnknown;
    try {
        state = listener_->check_local_transaction(*msg);
    } catch (const std::exception& e) {
        spdlog::warn("check_local_transaction threw: {}", e.what());
    }
    protocol::EndTransactionRequestHeader h;
    h.producer_group = group_;
    h.tran_state_table_offset = header->tran_state_table_offset;
    h.commit_log_offset = header->commit_log_offset;
    h.commit_or_rollback = commit_or_rollback(state);
    h.from_transaction_check = true;
    h.msg_id = msg->unique_id();
    h.transaction_id = header->transaction_id;
    auto end = protocol::RemotingCommand::request(Req::kEndTransaction);
    h.to_ext(end);
    conn->invoke_oneway(std::move(end));
}

}  // namespace comet::client
