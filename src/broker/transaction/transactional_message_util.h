#pragma once
// Pure helpers of the transactional message path (Java TransactionalMessageUtil,
// TransactionalMessageBridge#parseHalfMessageInner, EndTransactionProcessor#endMessageTransaction
// and the decisions of TransactionalMessageServiceImpl#check). No store, no sockets, no clock:
// callers pass `now`. See docs/transactions.md.
//
// State of a transaction lives in two system topics (RocketMQ's layout):
//   RMQ_SYS_TRANS_HALF_TOPIC queue 0     the half (prepared) messages, REAL_TOPIC / REAL_QID kept
//                                        in properties, sysFlag reset to NOT_TYPE
//   RMQ_SYS_TRANS_OP_HALF_TOPIC queue 0  one op message per resolved half: body = the half's
//                                        queue offset in decimal, tag "d"
// and in the consumer offsets of group CID_SYS_RMQ_TRANS on both queues (how far the check
// service has scanned).

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "broker/metadata/topic_config.h"
#include "protocol/message_ext.h"

namespace comet::broker {

inline constexpr std::string_view kTransSysGroup = "CID_SYS_RMQ_TRANS";
inline constexpr std::string_view kTransOpRemoveTag = "d";  // TransactionalMessageUtil.REMOVETAG
inline constexpr std::string_view kTransactionCheckTimes = "TRANSACTION_CHECK_TIMES";
inline constexpr std::string_view kCheckImmunityTimeInSeconds = "CHECK_IMMUNITY_TIME_IN_SECONDS";
// MessageConst.PROPERTY_TRANSACTION_PREPARED_QUEUE_OFFSET: on a half re-appended during its
// immunity, the queue offset of the original half (the one END_TRANSACTION names).
inline constexpr std::string_view kTranPreparedQueueOffset = "TRAN_PREPARED_QUEUE_OFFSET";

// True when the send carries TRAN_MSG=true (Java Boolean.parseBoolean: any case).
bool is_transaction_prepared(const protocol::MessageExt& msg);

// Rewrites a prepared message into its half form in place: REAL_TOPIC / REAL_QID set from
// topic / queue_id, sysFlag transaction bits cleared, topic = RMQ_SYS_TRANS_HALF_TOPIC, queue 0.
void to_half_message(protocol::MessageExt* msg);

// The message END_TRANSACTION(COMMIT) stores: the half's body, flags and properties on
// REAL_TOPIC / REAL_QID, sysFlag COMMIT_TYPE, preparedTransactionOffset = the half's CommitLog
// offset. The properties stay exactly the half's (REAL_TOPIC, REAL_QID, TRAN_MSG,
// TRANSACTION_CHECK_TIMES included): 4.9.8's endMessageTransaction writes the half's property
// string and clears REAL_TOPIC / REAL_QID / TRAN_MSG only from a map the store does not encode.
// Errors (kInvalidArgument): the half lacks REAL_TOPIC or REAL_QID.
Result<protocol::MessageExt> end_message_transaction(const protocol::MessageExt& half);

// The op message that marks the half at `half_queue_offset` resolved (store host / born host
// left to the caller).
protocol::MessageExt make_op_message(int64_t half_queue_offset, int64_t now_ms);
// The half queue offset an op message names; nullopt when the body is not a decimal number.
std::optional<int64_t> parse_op_body(std::string_view body);

// Ops read from the op queue, split by the half consume offset (Java fillOpRemoveMap):
// `removed`: half queue offset -> op queue offset, for halves at or after `half_offset`;
// `done`: op queue offsets whose half is already behind `half_offset`.
struct OpScan {
    std::map<int64_t, int64_t> removed;
    std::set<int64_t> done;
};
struct OpEntry {
    int64_t op_queue_offset = 0;
    std::optional<int64_t> half_queue_offset;  // nullopt: unreadable op (counted as done)
};
OpScan scan_ops(const std::vector<OpEntry>& ops, int64_t half_offset);
// The new op consume offset: `op_offset` advanced over every offset in `done` that follows it
// without a gap (Java calculateOpOffset).
int64_t next_op_offset(int64_t op_offset, const std::set<int64_t>& done);

// What the check service does with an unresolved half (Java check(), needDiscard, needSkip).
enum class HalfAction {
    kNotYet,   // younger than transactionTimeOut: stop the scan here, look again next round
    kImmune,   // inside its CHECK_IMMUNITY_TIME_IN_SECONDS: re-append it (renew) or, when its
               // original was resolved, drop it; the scan goes on either way
    kCheck,    // re-append with TRANSACTION_CHECK_TIMES+1, send CHECK_TRANSACTION_STATE
    kDiscard,  // checked transactionCheckMax times: move to TRANS_CHECK_MAX_TIME_TOPIC
    kSkip,     // older than the file reservation time: move to TRANS_CHECK_MAX_TIME_TOPIC
};
struct CheckPolicy {
    int64_t transaction_timeout_ms = 6000;  // transactionTimeOut
    int32_t transaction_check_max = 15;     // transactionCheckMax
    int64_t file_reserved_ms = 72LL * 3600 * 1000;  // the store's fileReservedTime
};
HalfAction decide_half(const protocol::MessageExt& half, int64_t now_ms, const CheckPolicy& p);
// Java getImmunityTime: CHECK_IMMUNITY_TIME_IN_SECONDS in ms; transactionTimeOut when the
// property is absent, not a number or -1.
int64_t immunity_ms(const protocol::MessageExt& half, int64_t transaction_timeout_ms);
// Checks done so far (TRANSACTION_CHECK_TIMES; 0 when absent or unreadable).
int32_t check_times(const protocol::MessageExt& half);

}  // namespace comet::broker
