#include "broker/controller/master_lease.h"

#include <charconv>
#include <optional>

#include <fmt/format.h>

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

void MasterLease::on_answer(TimePoint sent_at, const protocol::RemotingCommand& answer) {
    if (answer.code != protocol::ResponseCode::kSuccess) {
        return;
    }
    const std::optional<int64_t> lease = ext_int(answer, kLeaseField);
    if (!lease.has_value() || *lease <= 0) {
        int expected = static_cast<int>(State::kUnknown);
        state_.compare_exchange_strong(expected, static_cast<int>(State::kNotGranted),
                                       std::memory_order_acq_rel);
        return;
    }
    auto leader = answer.ext_fields.find(kLeaderField);
    if (leader == answer.ext_fields.end() || leader->second != "true") {
        return;  // a follower's answer renews nothing
    }
    lease_ms_.store(*lease, std::memory_order_relaxed);
    const int64_t sent = to_ns(sent_at);
    int64_t cur = last_sent_ns_.load(std::memory_order_relaxed);
    while (cur < sent &&
           !last_sent_ns_.compare_exchange_weak(cur, sent, std::memory_order_acq_rel)) {
    }
    state_.store(static_cast<int>(State::kGranted), std::memory_order_release);
}

bool MasterLease::may_acknowledge(TimePoint now) const {
    switch (state()) {
        case State::kNotGranted:
            return true;
        case State::kUnknown:
            return false;
        case State::kGranted:
        default: {
            const int64_t sent = last_sent_ns_.load(std::memory_order_acquire);
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
    const int64_t ago_ms =
        (to_ns(now) - last_sent_ns_.load(std::memory_order_acquire)) / 1'000'000;
    return fmt::format("master lease expired: the newest heartbeat a controller leader answered "
                       "was sent {} ms ago (lease {} ms); this broker no longer acknowledges "
                       "writes, another master may be elected",
                       ago_ms, lease_ms());
}

}  // namespace comet::broker
