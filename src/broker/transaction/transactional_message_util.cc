#include "broker/transaction/transactional_message_util.h"

#include <charconv>

#include "broker/metadata/topic_config.h"

namespace comet::broker {

namespace P = protocol::property;
namespace SF = protocol::sysflag;

namespace {

std::optional<int64_t> parse_i64(std::string_view s) {
    int64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || s.empty()) {
        return std::nullopt;
    }
    return v;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (size_t i = 0; i < a.size(); ++i) {
        const char x = static_cast<char>(a[i] | 0x20);
        if (x != b[i]) {
            return false;
        }
    }
    return true;
}

}  // namespace

bool is_transaction_prepared(const protocol::MessageExt& msg) {
    const std::string* v = msg.property(P::kTransactionPrepared);
    return v != nullptr && iequals(*v, "true");
}

void to_half_message(protocol::MessageExt* msg) {
    msg->set_property(P::kRealTopic, msg->topic);
    msg->set_property(P::kRealQueueId, std::to_string(msg->queue_id));
    msg->sys_flag = SF::reset_transaction_value(msg->sys_flag, SF::kTransactionNotType);
    msg->topic = std::string(kTransHalfTopic);
    msg->queue_id = 0;
}

Result<protocol::MessageExt> end_message_transaction(const protocol::MessageExt& half) {
    const std::string* real_topic = half.property(P::kRealTopic);
    const std::string* real_qid = half.property(P::kRealQueueId);
    if (real_topic == nullptr || real_qid == nullptr) {
        return Status::error(Errc::kInvalidArgument,
                             "half message at {} lacks REAL_TOPIC or REAL_QID",
                             half.commit_log_offset);
    }
    const auto qid = parse_i64(*real_qid);
    if (!qid || *qid < 0 || *qid > INT32_MAX) {
        return Status::error(Errc::kInvalidArgument, "half message at {}: bad REAL_QID '{}'",
                             half.commit_log_offset, *real_qid);
    }
    protocol::MessageExt out;
    out.topic = *real_topic;
    out.queue_id = static_cast<int32_t>(*qid);
    out.body = half.body;
    out.flag = half.flag;
    out.born_timestamp = half.born_timestamp;
    out.born_host = half.born_host;
    out.store_host = half.store_host;
    out.reconsume_times = half.reconsume_times;
    out.sys_flag = SF::reset_transaction_value(half.sys_flag, SF::kTransactionCommitType);
    out.prepared_transaction_offset = half.commit_log_offset;
    out.properties = half.properties;
    return out;
}

protocol::MessageExt make_op_message(int64_t half_queue_offset, int64_t now_ms) {
    protocol::MessageExt op;
    op.topic = std::string(kTransOpHalfTopic);
    op.queue_id = 0;
    op.body = std::to_string(half_queue_offset);
    op.set_property(P::kTags, kTransOpRemoveTag);
    op.set_property(P::kWaitStoreMsgOk, "false");
    op.born_timestamp = now_ms;
    return op;
}

std::optional<int64_t> parse_op_body(std::string_view body) { return parse_i64(body); }

OpScan scan_ops(const std::vector<OpEntry>& ops, int64_t half_offset) {
    OpScan s;
    for (const OpEntry& op : ops) {
        if (!op.half_queue_offset || *op.half_queue_offset < half_offset) {
            s.done.insert(op.op_queue_offset);
        } else {
            s.removed[*op.half_queue_offset] = op.op_queue_offset;
        }
    }
    return s;
}

int64_t next_op_offset(int64_t op_offset, const std::set<int64_t>& done) {
    int64_t next = op_offset;
    for (auto it = done.lower_bound(op_offset); it != done.end() && *it == next; ++it) {
        ++next;
    }
    return next;
}

int32_t check_times(const protocol::MessageExt& half) {
    const std::string* v = half.property(kTransactionCheckTimes);
    if (v == nullptr) {
        return 0;
    }
    const auto n = parse_i64(*v);
    return n && *n >= 0 && *n <= INT32_MAX ? static_cast<int32_t>(*n) : 0;
}

HalfAction decide_half(const protocol::MessageExt& half, int64_t now_ms, const CheckPolicy& p) {
    if (check_times(half) >= p.transaction_check_max) {
        return HalfAction::kDiscard;
    }
    const int64_t age = now_ms - half.born_timestamp;
    if (age > p.file_reserved_ms) {
        return HalfAction::kSkip;
    }
    const int64_t immunity = immunity_ms(half, p.transaction_timeout_ms);
    if (half.property(kCheckImmunityTimeInSeconds) != nullptr) {
        // Java: any age below the immunity (a future born time too) renews the half.
        return age < immunity ? HalfAction::kImmune : HalfAction::kCheck;
    }
    // A born time in the future (clock skew between producer and broker) is checked at once,
    // as in Java (valueOfCurrentMinusBorn <= -1).
    if (age >= 0 && age < immunity) {
        return HalfAction::kNotYet;
    }
    return HalfAction::kCheck;
}

int64_t immunity_ms(const protocol::MessageExt& half, int64_t transaction_timeout_ms) {
    const std::string* s = half.property(kCheckImmunityTimeInSeconds);
    if (s == nullptr) {
        return transaction_timeout_ms;
    }
    const auto secs = parse_i64(*s);
    if (!secs || *secs == -1) {
        return transaction_timeout_ms;
    }
    return *secs * 1000;
}

}  // namespace comet::broker
