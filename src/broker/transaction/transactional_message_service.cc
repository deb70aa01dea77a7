#include "broker/transaction/transactional_message_service.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <future>

#include "base/log_tag.h"
#include "broker/context/broker_response.h"
#include "protocol/message_decoder.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::broker {

namespace P = protocol::property;
namespace RC = protocol::ResponseCode;
namespace SF = protocol::sysflag;

namespace {
// Java TransactionalMessageServiceImpl.MAX_PROCESS_TIME_LIMIT: one queue's scan stops after this.
constexpr int64_t kMaxProcessMillis = 60000;
// Ops read per scan; any further ones are read by the next round.
constexpr int64_t kMaxOpsPerRound = 100000;

// Moves the op that resolved the half at `half_queue_offset` from `removed` to `done`; false
// when no op of this scan names that half.
bool take_resolved(OpScan* scan, int64_t half_queue_offset) {
    auto it = scan->removed.find(half_queue_offset);
    if (it == scan->removed.end()) {
        return false;
    }
    scan->done.insert(it->second);
    scan->removed.erase(it);
    return true;
}
}  // namespace

TransactionalMessageService::TransactionalMessageService(Deps deps) : d_(std::move(deps)) {}

TransactionalMessageService::~TransactionalMessageService() { shutdown(); }

void TransactionalMessageService::ensure_topics() {
    if (topics_ready_.load()) {
        return;
    }
    bool created = false;
    for (std::string_view t : {kTransHalfTopic, kTransOpHalfTopic}) {
        auto r = d_.topics->create_in_send_back(std::string(t), 1, kPermRead | kPermWrite, 0);
        created = created || r.created;
    }
    if (created && d_.on_topics_changed) {
        d_.on_topics_changed();
    }
    topics_ready_.store(true);
}

store::PutMessageResult TransactionalMessageService::put_sync(protocol::MessageExt msg) {
    std::promise<store::PutMessageResult> p;
    auto f = p.get_future();
    d_.store->put_message(msg, [&p](store::PutMessageResult r) { p.set_value(std::move(r)); });
    return f.get();
}

bool TransactionalMessageService::write_op(const protocol::MessageExt& half) {
    protocol::MessageExt op = make_op_message(half.queue_offset, d_.clock->wall_millis());
    op.queue_id = half.queue_id;
    op.store_host = d_.store->store_host();
    op.born_host = op.store_host;
    const store::PutMessageResult r = put_sync(std::move(op));
    if (!d_.store->put_acknowledged(r.status)) {
        spdlog::error(
            "transaction: op message for half at queue offset {} (CommitLog {}) not "
            "stored: {} {}",
            half.queue_offset, half.commit_log_offset, store::put_message_status_name(r.status),
            r.remark);
        return false;
    }
    return true;
}

TransactionalMessageService::EndResult TransactionalMessageService::end_transaction(
    const protocol::EndTransactionRequestHeader& h) {
    auto half = d_.store->look_message_by_offset(h.commit_log_offset);
    if (!half || half->topic != kTransHalfTopic) {
        return {RC::kSystemError, "Find prepared transaction message failed"};
    }
    // Java EndTransactionProcessor#checkPrepareMessage.
    const std::string* pgroup = half->property(P::kProducerGroup);
    if (pgroup == nullptr || *pgroup != h.producer_group) {
        spdlog::warn("transaction: END_TRANSACTION of group {} names the half at {} of group {}",
                     h.producer_group, h.commit_log_offset, pgroup ? *pgroup : "(none)");
        return {RC::kSystemError, "The producer group wrong"};
    }
    if (half->queue_offset != h.tran_state_table_offset) {
        spdlog::warn(
            "transaction: END_TRANSACTION tranStateTableOffset {} but the half at {} has "
            "queue offset {}",
            h.tran_state_table_offset, h.commit_log_offset, half->queue_offset);
        return {RC::kSystemError, "The transaction state table offset wrong"};
    }
    if (half->commit_log_offset != h.commit_log_offset) {
        return {RC::kSystemError, "The commit log offset wrong"};
    }
    if (h.commit_or_rollback == SF::kTransactionCommitType) {
        auto final_msg = end_message_transaction(*half);
        if (!final_msg.is_ok()) {
            spdlog::error("transaction: commit of half at {}: {}", h.commit_log_offset,
                          final_msg.status().message());
            return {RC::kSystemError, final_msg.status().message()};
        }
        final_msg->store_host = d_.store->store_host();
        // 4.9.8 CommitLog#asyncPutMessage schedules a COMMIT_TYPE message with a DELAY level,
        // re-encoding its properties from the map endMessageTransaction cleared of REAL_TOPIC,
        // REAL_QID and TRAN_MSG (REAL_TOPIC / REAL_QID then name the commit's topic and queue).
        if (const std::string* delay = final_msg->property(P::kDelayTimeLevel);
            delay != nullptr && d_.delay_levels.max_level() > 0 && std::atoi(delay->c_str()) > 0) {
            final_msg->erase_property(P::kRealTopic);
            final_msg->erase_property(P::kRealQueueId);
            final_msg->erase_property(P::kTransactionPrepared);
            apply_schedule_topic(d_.delay_levels, &*final_msg);
        }
        const store::PutMessageResult r = put_sync(std::move(final_msg).value());
        if (!d_.store->put_acknowledged(r.status)) {
            const PutResponse pr = map_put_status(r);
            spdlog::warn("transaction: commit of half at {} not stored: {}", h.commit_log_offset,
                         store::put_message_status_name(r.status));
            return {pr.code, pr.remark};
        }
        // Java deletes the prepare message only after the final message is stored: a failed
        // op write leaves the half for the check service (the producer may then commit again).
        (void)write_op(*half);
        return {RC::kSuccess, std::nullopt};
    }
    if (!write_op(*half)) {
        return {RC::kSystemError, "rollback: op message not stored"};
    }
    return {RC::kSuccess, std::nullopt};
}

protocol::MessageExt TransactionalMessageService::stored_again(const protocol::MessageExt& half,
                                                               std::string_view topic,
                                                               int32_t queue_id) const {
    protocol::MessageExt copy;
    copy.topic = std::string(topic);
    copy.queue_id = queue_id;
    copy.body = half.body;
    copy.flag = half.flag;
    copy.sys_flag = half.sys_flag;
    copy.born_timestamp = half.born_timestamp;
    copy.born_host = half.born_host;
    copy.store_host = d_.store->store_host();
    copy.reconsume_times = half.reconsume_times;
    copy.properties = half.properties;
    return copy;
}

protocol::MessageExt TransactionalMessageService::renewed_half(const protocol::MessageExt& half,
                                                               int32_t queue_id) const {
    // Java renewHalfMessageInner: the same message for the half topic's queue, with one more
    // check counted.
    protocol::MessageExt copy = stored_again(half, kTransHalfTopic, queue_id);
    copy.set_property(kTransactionCheckTimes, std::to_string(check_times(half) + 1));
    return copy;
}

bool TransactionalMessageService::recheck(const protocol::MessageExt& half, int32_t queue_id) {
    // Java putBackHalfMsgQueue + renewHalfMessageInner: the half moves to the queue's tail with
    // one more check; the check names the new copy.
    protocol::MessageExt copy = renewed_half(half, queue_id);
    copy.set_property(P::kWaitStoreMsgOk, "false");
    protocol::MessageExt sent = copy;
    const store::PutMessageResult r = put_sync(std::move(copy));
    if (!d_.store->put_acknowledged(r.status)) {
        spdlog::warn("transaction: re-append of half at {} failed ({}), retrying next round",
                     half.commit_log_offset, store::put_message_status_name(r.status));
        return false;
    }
    const std::string uniq = half.property(P::kUniqClientMessageIdKeyIdx) != nullptr
                                 ? *half.property(P::kUniqClientMessageIdKeyIdx)
                                 : std::string();
    protocol::CheckTransactionStateRequestHeader ch;
    ch.commit_log_offset = r.append.wrote_offset.value();
    ch.tran_state_table_offset = r.append.logics_offset.value();
    ch.offset_msg_id = r.append.msg_id;
    ch.msg_id = uniq;
    ch.transaction_id = uniq;
    // Java sendCheckMessage: the body is the message as encoded by MessageDecoder.encode, on its
    // real topic and queue, storeSize 0.
    const std::string* real_topic = sent.property(P::kRealTopic);
    const std::string* real_qid = sent.property(P::kRealQueueId);
    sent.topic = real_topic != nullptr ? *real_topic : sent.topic;
    sent.queue_id = real_qid != nullptr ? std::atoi(real_qid->c_str()) : 0;
    sent.queue_offset = r.append.logics_offset.value();
    sent.commit_log_offset = r.append.wrote_offset.value();
    sent.store_timestamp = r.append.store_timestamp;
    sent.store_size = 0;
    protocol::RemotingCommand req =
        protocol::RemotingCommand::request(protocol::RequestCode::kCheckTransactionState);
    req.language = protocol::LanguageCode::kJava;
    req.flag |= protocol::kFlagOneway;
    ch.to_ext(req);
    if (Status st = protocol::encode_message(sent, &req.body); !st.is_ok()) {
        spdlog::error("transaction: cannot encode the check body of half at {}: {}",
                      ch.commit_log_offset, st.message());
        return true;
    }
    const std::string* pgroup = half.property(P::kProducerGroup);
    const std::string group = pgroup != nullptr ? *pgroup : std::string();
    if (d_.send_check && d_.send_check(group, std::move(req))) {
        checks_sent_.fetch_add(1, std::memory_order_relaxed);
    } else {
        spdlog::warn("Check transaction failed, channel is null. groupId={} (half at {}, check {})",
                     group, ch.commit_log_offset, check_times(half) + 1);
    }
    return true;
}

bool TransactionalMessageService::renew_immune(const protocol::MessageExt& half, int32_t queue_id) {
    // Java putImmunityMsgBackToHalfQueue + renewImmunityHalfMessageInner: the half goes to the
    // queue's tail as it is (with the check count needDiscard raised), naming the original's
    // queue offset; no check is sent.
    protocol::MessageExt copy = renewed_half(half, queue_id);
    if (half.property(kTranPreparedQueueOffset) == nullptr) {
        copy.set_property(kTranPreparedQueueOffset, std::to_string(half.queue_offset));
    }
    const store::PutMessageResult r = put_sync(std::move(copy));
    if (!d_.store->put_acknowledged(r.status)) {
        spdlog::warn("transaction: re-append of immune half at {} failed ({}), retrying next round",
                     half.commit_log_offset, store::put_message_status_name(r.status));
        return false;
    }
    renewed_.fetch_add(1, std::memory_order_relaxed);
    return true;
}

bool TransactionalMessageService::discard(const protocol::MessageExt& half) {
    spdlog::error(
        "transaction: half message {} (queue offset {}, CommitLog {}, real topic {}, "
        "group {}) has been checked too many times ({}), so discard it by moving it "
        "to system topic {}",
        half.unique_id(), half.queue_offset, half.commit_log_offset,
        half.property(P::kRealTopic) ? *half.property(P::kRealTopic) : "",
        half.property(P::kProducerGroup) ? *half.property(P::kProducerGroup) : "",
        check_times(half), kTransCheckMaxTimeTopic);
    auto created = d_.topics->create_in_send_back(std::string(kTransCheckMaxTimeTopic), 1,
                                                  kPermRead | kPermWrite, 0);
    if (created.created && d_.on_topics_changed) {
        d_.on_topics_changed();
    }
    protocol::MessageExt out = stored_again(half, kTransCheckMaxTimeTopic, 0);
    out.set_property(P::kWaitStoreMsgOk, "false");
    const store::PutMessageResult r = put_sync(std::move(out));
    if (!d_.store->put_acknowledged(r.status)) {
        spdlog::error("transaction: put of discarded half at {} to {} failed: {}",
                      half.commit_log_offset, kTransCheckMaxTimeTopic,
                      store::put_message_status_name(r.status));
        return false;
    }
    discarded_.fetch_add(1, std::memory_order_relaxed);
    return true;
}

int64_t TransactionalMessageService::check() {
    if (d_.is_master && !d_.is_master()) {
        return 0;
    }
    const std::shared_ptr<const BrokerConfig> cfg = d_.config->snapshot();
    CheckPolicy policy;
    policy.transaction_timeout_ms = cfg->transaction_time_out;
    policy.transaction_check_max = cfg->transaction_check_max;
    // Java needSkip: the store's fileReservedTime (hours).
    policy.file_reserved_ms = d_.file_reserved_hours * 3600 * 1000;
    auto half_cfg = d_.topics->select(std::string(kTransHalfTopic));
    if (!half_cfg) {
        return 0;  // no half was ever stored
    }
    int64_t sent = 0;
    for (int32_t q = 0; q < std::max(1, half_cfg->read_queue_nums); ++q) {
        sent += check_queue(q, policy);
    }
    return sent;
}

int64_t TransactionalMessageService::scan_offset(const std::string& group, const std::string& topic,
                                                 int32_t q) {
    const int64_t offset = d_.offsets->query_offset(group, topic, q);
    // No offset yet: the queue's first message (a queue that does not exist yet starts at 0).
    if (offset < 0) {
        return std::max<int64_t>(0, d_.store->min_offset_in_queue(topic, q));
    }
    return offset;
}

OpScan TransactionalMessageService::read_ops(int32_t q, int64_t op_offset, int64_t half_offset) {
    const std::string op_topic(kTransOpHalfTopic);
    std::vector<OpEntry> ops;
    const int64_t op_max =
        std::min(d_.store->max_offset_in_queue(op_topic, q), op_offset + kMaxOpsPerRound);
    for (int64_t o = op_offset; o < op_max; ++o) {
        auto unit = d_.store->consume_queue_unit(op_topic, q, o);
        if (!unit) {
            break;
        }
        OpEntry e;
        e.op_queue_offset = o;
        if (auto msg = d_.store->look_message_by_offset(unit->physical_offset)) {
            e.half_queue_offset = parse_op_body(msg->body);
        }
        if (!e.half_queue_offset) {
            spdlog::warn("transaction: op message at op queue offset {} unreadable, skipped", o);
        }
        ops.push_back(e);
    }
    return scan_ops(ops, half_offset);
}

std::optional<protocol::MessageExt> TransactionalMessageService::read_half(
    const std::string& half_topic, int32_t q, int64_t offset) {
    auto unit = d_.store->consume_queue_unit(half_topic, q, offset);
    std::optional<protocol::MessageExt> half;
    if (unit) {
        half = d_.store->look_message_by_offset(unit->physical_offset);
    }
    if (!half) {
        spdlog::warn("transaction: half at queue offset {} unreadable, skipped", offset);
    }
    return half;
}

bool TransactionalMessageService::settle_half(const protocol::MessageExt& half, HalfAction action,
                                              int32_t q, int64_t offset, OpScan* scan,
                                              int64_t* sent) {
    switch (action) {
        case HalfAction::kNotYet:
            return true;
        case HalfAction::kImmune:
            return settle_immune(half, q, offset, scan);
        case HalfAction::kDiscard:
        case HalfAction::kSkip:
            return !discard(half);
        case HalfAction::kCheck: {
            const bool stop = !recheck(half, q);
            *sent += stop ? 0 : 1;
            return stop;
        }
    }
    return false;
}

bool TransactionalMessageService::settle_immune(const protocol::MessageExt& half, int32_t q,
                                                int64_t offset, OpScan* scan) {
    // Java checkPrepareQueueOffset: a renewed copy whose original was resolved is done; any
    // other immune half is renewed. The scan goes on past it.
    const std::string* orig = half.property(kTranPreparedQueueOffset);
    if (orig == nullptr) {
        return !renew_immune(half, q);
    }
    const auto orig_offset = parse_op_body(*orig);
    if (!orig_offset) {
        // Java would re-read ops for this offset until its 60 s limit; Comet leaves it for the
        // next round.
        spdlog::warn("transaction: half at queue offset {} has a bad {} '{}'", offset,
                     kTranPreparedQueueOffset, *orig);
        return true;
    }
    if (take_resolved(scan, *orig_offset)) {
        return false;
    }
    return !renew_immune(half, q);
}

int64_t TransactionalMessageService::check_queue(int32_t q, const CheckPolicy& policy) {
    const std::string half_topic(kTransHalfTopic);
    const std::string op_topic(kTransOpHalfTopic);
    const std::string group(kTransSysGroup);
    const int64_t half_offset = scan_offset(group, half_topic, q);
    const int64_t start = d_.clock->wall_millis();  // Java startTime
    const int64_t op_offset = scan_offset(group, op_topic, q);
    OpScan scan = read_ops(q, op_offset, half_offset);

    const int64_t half_max = d_.store->max_offset_in_queue(half_topic, q);
    int64_t sent = 0;
    int64_t i = half_offset;
    while (i < half_max && d_.clock->wall_millis() - start < kMaxProcessMillis) {
        if (take_resolved(&scan, i)) {
            ++i;
            continue;
        }
        std::optional<protocol::MessageExt> half = read_half(half_topic, q, i);
        if (!half) {
            ++i;
            continue;
        }
        const HalfAction action = decide_half(*half, d_.clock->wall_millis(), policy);
        // Java: stored since this round began (a copy this round appended): next round.
        if (action != HalfAction::kDiscard && action != HalfAction::kSkip &&
            half->store_timestamp >= start) {
            break;
        }
        if (settle_half(*half, action, q, i, &scan, &sent)) {
            break;
        }
        ++i;
    }
    if (i != half_offset) {
        d_.offsets->commit_offset(group, half_topic, q, i);
    }
    const int64_t new_op = next_op_offset(op_offset, scan.done);
    if (new_op != op_offset) {
        d_.offsets->commit_offset(group, op_topic, q, new_op);
    }
    return sent;
}

void TransactionalMessageService::start() {
    MutexLock l(mu_);
    if (thread_.joinable()) {
        return;
    }
    stopping_ = false;
    thread_ = tagged_thread([this] { run(); });
}

void TransactionalMessageService::shutdown() {
    {
        MutexLock l(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
}

void TransactionalMessageService::run() {
    pthread_setname_np(pthread_self(), "TransactionCheck");
    while (true) {
        const int64_t interval =
            std::max<int64_t>(10, d_.config->snapshot()->transaction_check_interval);
        {
            MutexLock l(mu_);
            if (stopping_) {
                return;
            }
            std::unique_lock<Mutex> ul(mu_, std::adopt_lock);
            cv_.wait_for(ul, std::chrono::milliseconds(interval));
            ul.release();
            if (stopping_) {
                return;
            }
        }
        const int64_t n = check();
        if (n > 0) {
            spdlog::info("transaction: sent {} check(s) ({} in all, {} halves discarded)", n,
                         checks_sent_.load(), discarded_.load());
        }
    }
}

}  // namespace comet::broker
