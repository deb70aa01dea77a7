#include "broker/controller/master_lease.h"

#include <gtest/gtest.h>

#include "protocol/response_code.h"

namespace comet::broker {
namespace {

using namespace std::chrono_literals;
using protocol::RemotingCommand;

RemotingCommand answer(int32_t code, std::optional<int64_t> lease_ms, std::optional<bool> leader) {
    RemotingCommand c = RemotingCommand::response_to(RemotingCommand::request(904), code);
    if (lease_ms) {
        c.set_ext(MasterLease::kLeaseField, std::to_string(*lease_ms));
    }
    if (leader) {
        c.set_ext(MasterLease::kLeaderField, *leader ? "true" : "false");
    }
    return c;
}

TEST(MasterLease, RefusesUntilALeaderAnswered) {
    MasterLease lease;
    const TimePoint t0(1s);
    EXPECT_EQ(lease.state(), MasterLease::State::kUnknown);
    EXPECT_FALSE(lease.may_acknowledge(t0));
    EXPECT_NE(lease.refusal(t0).find("not yet granted"), std::string::npos);
    // A follower's answer tells the lease length but renews nothing.
    lease.on_answer(t0, answer(protocol::ResponseCode::kSuccess, 800, false));
    EXPECT_FALSE(lease.may_acknowledge(t0));
    lease.on_answer(t0, answer(protocol::ResponseCode::kSuccess, 800, true));
    EXPECT_EQ(lease.state(), MasterLease::State::kGranted);
    EXPECT_TRUE(lease.may_acknowledge(t0 + 800ms));
    EXPECT_TRUE(lease.refusal(t0 + 800ms).empty());
}

TEST(MasterLease, RunsFromTheSendTimeOfTheNewestAnsweredHeartbeat) {
    MasterLease lease;
    const TimePoint t0(10s);
    lease.on_answer(t0, answer(protocol::ResponseCode::kSuccess, 800, true));
    EXPECT_TRUE(lease.may_acknowledge(t0 + 800ms));
    EXPECT_FALSE(lease.may_acknowledge(t0 + 801ms));
    EXPECT_NE(lease.refusal(t0 + 900ms).find("master lease expired"), std::string::npos);
    // An answer to an older heartbeat arriving late never moves the lease back.
    lease.on_answer(t0 + 500ms, answer(protocol::ResponseCode::kSuccess, 800, true));
    lease.on_answer(t0 + 100ms, answer(protocol::ResponseCode::kSuccess, 800, true));
    EXPECT_TRUE(lease.may_acknowledge(t0 + 1300ms));
    EXPECT_FALSE(lease.may_acknowledge(t0 + 1301ms));
    // Errors and non-leaders renew nothing.
    lease.on_answer(t0 + 2s, answer(protocol::ResponseCode::kSystemError, 800, true));
    lease.on_answer(t0 + 2s, answer(protocol::ResponseCode::kSuccess, 800, false));
    EXPECT_FALSE(lease.may_acknowledge(t0 + 2s));
}

TEST(MasterLease, AControllerWithoutLeasesEnforcesNothing) {
    MasterLease lease;
    // RocketMQ's controller answers a heartbeat with SUCCESS and no lease fields.
    lease.on_answer(TimePoint(1s), answer(protocol::ResponseCode::kSuccess, std::nullopt,
                                          std::nullopt));
    EXPECT_EQ(lease.state(), MasterLease::State::kNotGranted);
    EXPECT_TRUE(lease.may_acknowledge(TimePoint(1h)));
    // A lease of 0 (Comet's controller with masterLeaseMills=0) means the same.
    MasterLease zero;
    zero.on_answer(TimePoint(1s), answer(protocol::ResponseCode::kSuccess, 0, true));
    EXPECT_TRUE(zero.may_acknowledge(TimePoint(1h)));
}

TEST(MasterLease, OnceGrantedAnAnswerWithoutLeaseDoesNotSwitchItOff) {
    MasterLease lease;
    const TimePoint t0(1s);
    lease.on_answer(t0, answer(protocol::ResponseCode::kSuccess, 800, true));
    lease.on_answer(t0 + 100ms,
                    answer(protocol::ResponseCode::kSuccess, std::nullopt, std::nullopt));
    EXPECT_EQ(lease.state(), MasterLease::State::kGranted);
    EXPECT_FALSE(lease.may_acknowledge(t0 + 2s));
}

}  // namespace
}  // namespace comet::broker
