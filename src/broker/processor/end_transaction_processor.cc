#include <spdlog/spdlog.h>

#include "broker/processor/broker_processors.h"
#include "broker/replication/replication_service.h"
#include "broker/transaction/transactional_message_service.h"
#include "protocol/response_code.h"
#include "protocol/send_headers.h"

namespace comet::broker {

namespace RC = protocol::ResponseCode;
namespace SF = protocol::sysflag;

void EndTransactionProcessor::process(const RequestContext& rc, protocol::RemotingCommand req,
                                      const Reply& reply) {
    const bool oneway = req.is_oneway();
    auto answer = [&](int32_t code, std::optional<std::string> remark) {
        if (!oneway) {
            reply_code(reply, req, code, std::move(remark));
        }
    };
    auto header_r = protocol::EndTransactionRequestHeader::from_ext(req);
    if (!header_r.is_ok()) {
        spdlog::warn("END_TRANSACTION from {}: {}", rc.remote_address,
                     header_r.status().message());
        answer(RC::kSystemError, header_r.status().message());
        return;
    }
    const protocol::EndTransactionRequestHeader h = std::move(header_r).value();
    if (ctx_.replication != nullptr && ctx_.replication->is_slave()) {
        // 4.9.8: SLAVE_NOT_AVAILABLE, no remark.
        spdlog::warn("Message store is slave mode, so end transaction is forbidden. ({} from {})",
                     h.msg_id, rc.remote_address);
        answer(RC::kSlaveNotAvailable, std::nullopt);
        return;
    }
    const bool from_check = h.from_transaction_check.value_or(false);
    switch (h.commit_or_rollback) {
        case SF::kTransactionNotType:
            // Java returns no response for UNKNOWN: the half stays for the check service.
            spdlog::debug("END_TRANSACTION {}: producer group {} answered UNKNOWN{}", h.msg_id,
                          h.producer_group, from_check ? " to a check" : "");
            return;
        case SF::kTransactionCommitType:
        case SF::kTransactionRollbackType:
            if (from_check) {
                spdlog::warn("END_TRANSACTION {}: check answered {} by producer group {} "
                             "(CommitLog {})",
                             h.msg_id,
                             h.commit_or_rollback == SF::kTransactionCommitType ? "COMMIT"
                                                                                : "ROLLBACK",
                             h.producer_group, h.commit_log_offset);
            }
            break;
        default:
            return;  // Java: any other value is ignored, no response
    }
    if (ctx_.transactions == nullptr) {
        answer(RC::kRequestCodeNotSupported, "transactional messages are not enabled");
        return;
    }
    const TransactionalMessageService::EndResult r = ctx_.transactions->end_transaction(h);
    if (r.code != RC::kSuccess) {
        spdlog::warn("END_TRANSACTION {} ({} of half at {}, group {}) failed: {} {}", h.msg_id,
                     h.commit_or_rollback == SF::kTransactionCommitType ? "commit" : "rollback",
                     h.commit_log_offset, h.producer_group, r.code, r.remark.value_or(""));
    }
    answer(r.code, r.remark);
}

}  // namespace comet::broker
