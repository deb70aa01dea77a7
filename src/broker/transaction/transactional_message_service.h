#pragma once
// TransactionalMessageService: RocketMQ 4.9.8's transactional messages on the broker (Java
// TransactionalMessageServiceImpl + TransactionalMessageBridge + EndTransactionProcessor's
// store steps + TransactionalMessageCheckService + DefaultTransactionalMessageCheckListener).
//  - halves live in RMQ_SYS_TRANS_HALF_TOPIC queue 0 (to_half_message; the send path stores them)
//  - END_TRANSACTION commits (re-puts the half on its real topic/queue) or rolls back, and in
//    both cases appends an op message to RMQ_SYS_TRANS_OP_HALF_TOPIC (body = half queue offset)
//  - the check thread scans unresolved halves every transactionCheckInterval: a half older than
//    transactionTimeOut (or its CHECK_IMMUNITY_TIME_IN_SECONDS) is re-appended with
//    TRANSACTION_CHECK_TIMES+1 and CHECK_TRANSACTION_STATE goes to a live producer of its group;
//    after transactionCheckMax checks it moves to TRANS_CHECK_MAX_TIME_TOPIC.
// Scan progress is the consumer offset of group CID_SYS_RMQ_TRANS on both system queues, so
// everything survives a restart and replicates like any message. See docs/transactions.md.
// Owner: BrokerController. Threads: end_transaction() on the SendMessage executor; check() on
// the "TransactionCheck" thread (or a test). mu_ guards only the thread's stop flag; no lock
// is held across a store call or the network.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"
#include "broker/context/broker_context.h"
#include "broker/transaction/transactional_message_util.h"
#include "protocol/remoting_command.h"
#include "protocol/send_headers.h"

namespace comet::broker {

class TransactionalMessageService {
public:
    // Sends a CHECK_TRANSACTION_STATE request to a live producer connection of `group`; false
    // when the group has none.
    using SendCheck = std::function<bool(const std::string& group, protocol::RemotingCommand)>;
    struct Deps {
        BrokerConfigHolder* config = nullptr;
        Clock* clock = nullptr;
        // In DLedger and controller modes the ReplicatedStorePort: a commit, rollback, op or
        // renewed half counts as done only once put_acknowledged (a majority commit in DLedger
        // mode), so a leader change cannot cut a write whose half was already marked resolved.
        MessageStorePort* store = nullptr;
        TopicConfigManager* topics = nullptr;
        ConsumerOffsetManager* offsets = nullptr;
        SendCheck send_check;
        std::function<bool()> is_master;          // the check runs only on a master
        std::function<void()> on_topics_changed;  // a system topic was created
        int64_t file_reserved_hours = 72;         // the store's fileReservedTime (discard age)
        // messageDelayLevel: a committed message with a DELAY property goes to
        // SCHEDULE_TOPIC_XXXX as 4.9.8's CommitLog puts it. No levels (tests): not scheduled.
        DelayLevels delay_levels;
    };
    explicit TransactionalMessageService(Deps deps);
    ~TransactionalMessageService();

    // Creates RMQ_SYS_TRANS_HALF_TOPIC and RMQ_SYS_TRANS_OP_HALF_TOPIC (1 queue each) when
    // absent. May write topics.json: never on an I/O thread.
    void ensure_topics();

    struct EndResult {
        int32_t code = 0;
        std::optional<std::string> remark;
    };
    // END_TRANSACTION's commit or rollback (commit_or_rollback 8 / 12); blocks on the store.
    // Errors as 4.9.8: SYSTEM_ERROR "Find prepared transaction message failed", "The producer
    // group wrong", "The transaction state table offset wrong", "The commit log offset wrong".
    EndResult end_transaction(const protocol::EndTransactionRequestHeader& h);

    // One scan of the half queue(s); returns how many checks were sent.
    int64_t check();

    // Starts the check thread (every transactionCheckInterval, read live from the config).
    void start();
    void shutdown();

private:
    store::PutMessageResult put_sync(protocol::MessageExt msg);
    bool write_op(const protocol::MessageExt& half);
    // The half, copied for the half topic's queue `queue_id` with one more check counted.
    // The half's message to be stored again in `topic` / `queue_id` by this broker (body, flags,
    // born time and host, reconsume times and properties kept).
    protocol::MessageExt stored_again(const protocol::MessageExt& half, std::string_view topic,
                                      int32_t queue_id) const;
    protocol::MessageExt renewed_half(const protocol::MessageExt& half, int32_t queue_id) const;
    // Re-appends the half with one more check and sends CHECK_TRANSACTION_STATE; false when
    // the re-append failed (the scan stops there and retries next round).
    bool recheck(const protocol::MessageExt& half, int32_t queue_id);
    // Re-appends a half inside its CHECK_IMMUNITY_TIME_IN_SECONDS (one more check counted,
    // TRAN_PREPARED_QUEUE_OFFSET naming the original); no check is sent. False when the put
    // failed.
    bool renew_immune(const protocol::MessageExt& half, int32_t queue_id);
    // Moves the half to TRANS_CHECK_MAX_TIME_TOPIC; false when the put failed.
    bool discard(const protocol::MessageExt& half);
    // One scan of half queue `queue_id`: from CID_SYS_RMQ_TRANS's offset, skipping halves an op
    // resolved, settling each due one, until a half that is not due, a failed put or
    // kMaxProcessMillis; then both offsets move on. Returns the checks sent.
    int64_t check_queue(int32_t queue_id, const CheckPolicy& policy);
    // `group`'s (CID_SYS_RMQ_TRANS) consume offset on `topic`'s queue, or the queue's first
    // message.
    int64_t scan_offset(const std::string& group, const std::string& topic, int32_t queue_id);
    // The ops from `op_offset` on (at most kMaxOpsPerRound; Java fillOpRemoveMap), split by the
    // half consume offset.
    OpScan read_ops(int32_t queue_id, int64_t op_offset, int64_t half_offset);
    // The half at `offset` of the half queue; nullopt (logged) when unreadable.
    std::optional<protocol::MessageExt> read_half(const std::string& half_topic, int32_t queue_id,
                                                  int64_t offset);
    // Carries out `action` on the half at `offset`; true when the scan stops there (not due
    // yet, or a put failed). A sent check is counted in `sent`.
    bool settle_half(const protocol::MessageExt& half, HalfAction action, int32_t queue_id,
                     int64_t offset, OpScan* scan, int64_t* sent);
    // kImmune: a renewed copy whose original an op resolved is done, any other is renewed;
    // true when the scan stops there.
    bool settle_immune(const protocol::MessageExt& half, int32_t queue_id, int64_t offset,
                       OpScan* scan);
    void run();

    Deps d_;
    std::atomic<bool> topics_ready_{false};
    std::atomic<int64_t> checks_sent_{0};
    std::atomic<int64_t> discarded_{0};
    std::atomic<int64_t> renewed_{0};
    Mutex mu_;
    bool stopping_ GUARDED_BY(mu_) = false;
    std::condition_variable_any cv_;
    std::thread thread_;
};

}  // namespace comet::broker
