#pragma once
// Shared by the CommitLog's files only (commit_log.cc, commit_log_append.cc,
// commit_log_commit.cc, commit_log_recovery.cc, commit_log_replica.cc); not part of the store's
// API. The thread-locals are inline variables: one per thread for the whole CommitLog, whichever
// file touches them, and (non-PIC static library) accessed as directly as file-local ones.

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "store/commit_log.h"
#include "store/put_message_status.h"

namespace comet::store::commit_log_internal {

inline PutMessageResult failed(PutMessageStatus status, std::string remark) {
    PutMessageResult r;
    r.status = status;
    r.append.status = AppendMessageStatus::kUnknownError;
    r.remark = std::move(remark);
    return r;
}

// "topic-queueId" built into a thread-local buffer (no allocation once warm). Always inlined,
// as when it was file-local: the put path builds one key per put.
[[gnu::always_inline]] inline std::string_view tls_queue_key(std::string_view topic,
                                                             int32_t queue_id) {
    thread_local std::string key;
    key.assign(topic);
    key.push_back('-');
    char digits[16];
    auto r = std::to_chars(digits, digits + sizeof(digits), queue_id);
    key.append(digits, r.ptr);
    return key;
}

// Set on the commit thread and while a put commits inline: a completion that puts must neither
// wait for ring space (only this thread frees it) nor take commit_round_mu_ again.
inline thread_local bool tls_in_commit = false;

// An open put batch on this thread (CommitLog::begin_put_batch) and the log whose puts it
// deferred (one log per batch: a put to another log takes the ordinary path).
inline thread_local bool tls_batch_open = false;
inline thread_local CommitLog* tls_batch_log = nullptr;

}  // namespace comet::store::commit_log_internal
