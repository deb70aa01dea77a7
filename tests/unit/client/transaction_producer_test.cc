// TransactionMqProducer's pure parts: the END_TRANSACTION commitOrRollback value of each local
// state (Java EndTransactionRequestHeader: 8 commit, 12 rollback, 0 unknown) and Java's names.
// The send / check paths run against real processes in it_transaction.

#include "client/transaction_producer.h"

#include <gtest/gtest.h>

namespace comet::client {
namespace {

TEST(TransactionMqProducer, CommitOrRollbackValues) {
    EXPECT_EQ(TransactionMqProducer::commit_or_rollback(LocalTransactionState::kCommitMessage), 8);
    EXPECT_EQ(TransactionMqProducer::commit_or_rollback(LocalTransactionState::kRollbackMessage),
              12);
    EXPECT_EQ(TransactionMqProducer::commit_or_rollback(LocalTransactionState::kUnknown), 0);
    EXPECT_EQ(local_transaction_state_name(LocalTransactionState::kCommitMessage),
              "COMMIT_MESSAGE");
    EXPECT_EQ(local_transaction_state_name(LocalTransactionState::kRollbackMessage),
              "ROLLBACK_MESSAGE");
    EXPECT_EQ(local_transaction_state_name(LocalTransactionState::kUnknown), "UNKNOW");
}

TEST(TransactionMqProducer, StartWithoutListenerFails) {
    ProducerConfig pc;
    pc.client.namesrv_addr = "127.0.0.1:1";
    TransactionMqProducer p(pc, nullptr);
    EXPECT_FALSE(p.start().is_ok());
    auto r = p.send_message_in_transaction(Message("T", "b"));
    EXPECT_FALSE(r.is_ok());
}

}  // namespace
}  // namespace comet::client
