#include "broker/controller/master_lease.h"

#include <fmt/format.h>

#include <charconv>
#include <optional>

#include "protocol/response_code.h"

namespace comet::broker {

namespace {

int64_t to_ns(TimePoint t) { return t.time_since_epoch().count(); }

std::optional<int64_t> ext_int(const protocol::RemotingCommand& c, const char* key) {
    auto it = c.ext_fields.find(key);
    if (it == c.ext_fields.end()) {
        return std::nullopt;
    }
    int64_t v = 0;
    const char* b = it->second.data();
    const char* e = b + it->second.size();
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || p != e) {
        return std::nullopt;
    }
    return v;
}

}  // namespace

void MasterLease::on_role(int64_t my_id, int32_t master_epoch, bool master) {
    my_id_.store(my_id, std::memory_order_relaxed);
    epoch_.store(master_epoch, std::memory_order_relaxed);
    // A grant of an earlier epoch says nothing about this one.
    last_sent_ns_.store(INT64_MIN, std::memory_order_relaxed);
    master_.store(master, std::memory_order_release);
}

// The answer names a masterEpoch above ours, or another master (or none) at the epoch we lead.
// Epochs come from committed controller state, so any controller's answer may say so; an older
// epoch is a lagging follower's view and says nothing.
bool MasterLease::superseded(const protocol::RemotingCommand& answer) const {
    const std::optional<int64_t> epoch = ext_int(answer, kMasterEpochField);
    const std::optional<int64_t> master = ext_int(answer, kMasterIdField);
    if (!epoch.has_value() || !master.has_value()) {
        return false;
    }
    const int32_t mine = epoch_.load(std::memory_order_relaxed);
    if (*epoch > mine) {
        return true;
    }
    return *epoch == mine && master_.load(std::memory_order_acquire) &&
           *master != my_id_.load(std::memory_order_relaxed);
}

void MasterLease::renew(TimePoint sent_at, int64_t lease_ms) {
    lease_ms_.store(lease_ms, std::memory_order_relaxed);
    const int64_t sent = to_ns(sent_at);
    int64_t cur = last_sent_ns_.load(std::memory_order_relaxed);
    while (cur < sent &&
           !last_sent_ns_.compare_exchange_weak(cur, sent, std::memory_order_acq_rel)) {
    }
    state_.store(static_cast<int>(State::kGranted), std::memory_order_release);
}

MasterLease::Effect MasterLease::on_answer(TimePoint sent_at,
                                           const protocol::RemotingCommand& answer) {
    if (answer.code != protocol::ResponseCode::kSuccess) {
        return Effect::kNone;
    }
    const std::optional<int64_t> lease = ext_int(answer, kLeaseField);
    if (!lease.has_value() || *lease <= 0) {
        int expected = static_cast<int>(State::kUnknown);
        state_.compare_exchange_strong(expected, static_cast<int>(State::kNotGranted),
                                       std::memory_order_acq_rel);
        return Effect::kNone;
    }
    if (superseded(answer)) {
        // Stop acknowledging now; the role change follows from the replica info.
        master_.store(false, std::memory_order_release);
        return Effect::kSuperseded;
    }
    auto field_is_true = [&](const char* key) {
        auto it = answer.ext_fields.find(key);
        return it != answer.ext_fields.end() && it->second == "true";
    };
    // A follower's answer, or one that granted nothing, renews nothing. The grant must be for
    // this broker as the master of the epoch it leads: an answer to a heartbeat of an earlier
    // role cannot renew the current one.
    if (!field_is_true(kLeaderField) || !field_is_true(kGrantedField) ||
        !master_.load(std::memory_order_acquire) ||
        ext_int(answer, kMasterIdField) != std::optional<int64_t>(my_id_.load()) ||
        ext_int(answer, kMasterEpochField) != std::optional<int64_t>(epoch_.load())) {
        return Effect::kNone;
    }
    renew(sent_at, *lease);
    return Effect::kRenewed;
}

bool MasterLease::may_acknowledge(TimePoint now) const {
    switch (state()) {
        case State::kNotGranted:
            return true;
        case State::kUnknown:
            return false;
        case State::kGranted:
        default: {
            if (!master_.load(std::memory_order_acquire)) {
                return false;
            }
            const int64_t sent = last_sent_ns_.load(std::memory_order_acquire);
            if (sent == INT64_MIN) {
                return false;  // no grant for this epoch yet (and now - INT64_MIN overflows)
            }
            const int64_t lease_ns = lease_ms_.load(std::memory_order_relaxed) * 1'000'000;
            return to_ns(now) - sent <= lease_ns;
        }
    }
}

std::string MasterLease::refusal(TimePoint now) const {
    if (may_acknowledge(now)) {
        return {};
    }
    if (state() == State::kUnknown) {
        return "master lease not yet granted: no controller leader has answered this broker's "
               "heartbeat, so it may not acknowledge writes yet";
    }
    if (!master_.load(std::memory_order_acquire)) {
        return fmt::format(
            "master lease revoked: the controller names another master or a newer "
            "master epoch than {}; this broker no longer acknowledges writes",
            epoch_.load(std::memory_order_relaxed));
    }
    if (last_sent_ns_.load(std::memory_order_acquire) == INT64_MIN) {
        return fmt::format(
            "master lease not yet granted for master epoch {}: no controller "
            "leader has granted this broker's heartbeat since it became master",
            epoch_.load(std::memory_order_relaxed));
    }
    const int64_t ago_ms = (to_ns(now) - last_sent_ns_.load(std::memory_order_acquire)) / 1'000'000;
    return fmt::format(
        "master lease expired: the newest heartbeat a controller leader answered "
        "was sent {} ms ago (lease {} ms); this broker no longer acknowledges "
        "writes, another master may be elected",
        ago_ms, lease_ms());
}

}  // namespace comet::broker
