#include "broker/controller/master_lease.h"

#include <gtest/gtest.h>

#include "protocol/response_code.h"

namespace comet::broker {
namespace {

using namespace std::chrono_literals;
using protocol::RemotingCommand;

constexpr int64_t kMe = 1;
constexpr int32_t kEpoch = 3;

// A heartbeat answer of Comet's controller: lease length, leader flag, grant, and the master it
// names (id, epoch); each part may be left out.
struct Answer {
    int32_t code = protocol::ResponseCode::kSuccess;
    std::optional<int64_t> lease_ms = 800;
    std::optional<bool> leader = true;
    std::optional<bool> granted = true;
    std::optional<int64_t> master = kMe;
    std::optional<int32_t> epoch = kEpoch;

    RemotingCommand build() const {
        RemotingCommand c = RemotingCommand::response_to(RemotingCommand::request(904), code);
        if (lease_ms) {
            c.set_ext(MasterLease::kLeaseField, std::to_string(*lease_ms));
        }
        if (leader) {
            c.set_ext(MasterLease::kLeaderField, *leader ? "true" : "false");
        }
        if (granted) {
            c.set_ext(MasterLease::kGrantedField, *granted ? "true" : "false");
        }
        if (master) {
            c.set_ext(MasterLease::kMasterIdField, std::to_string(*master));
        }
        if (epoch) {
            c.set_ext(MasterLease::kMasterEpochField, std::to_string(*epoch));
        }
        return c;
    }
};

RemotingCommand granted() { return Answer{}.build(); }

void make_master(MasterLease& lease) { lease.on_role(kMe, kEpoch, true); }

TEST(MasterLease, RefusesUntilALeaderGranted) {
    MasterLease lease;
    lease.on_role(kMe, kEpoch, true);
    const TimePoint t0(1s);
    EXPECT_EQ(lease.state(), MasterLease::State::kUnknown);
    EXPECT_FALSE(lease.may_acknowledge(t0));
    EXPECT_NE(lease.refusal(t0).find("not yet granted"), std::string::npos);
    // A follower's answer tells the lease length but renews nothing; nor does a leader's that
    // granted nothing.
    Answer follower;
    follower.leader = false;
    EXPECT_EQ(lease.on_answer(t0, follower.build()), MasterLease::Effect::kNone);
    Answer refused;
    refused.granted = false;
    EXPECT_EQ(lease.on_answer(t0, refused.build()), MasterLease::Effect::kNone);
    EXPECT_FALSE(lease.may_acknowledge(t0));
    EXPECT_EQ(lease.on_answer(t0, granted()), MasterLease::Effect::kRenewed);
    EXPECT_EQ(lease.state(), MasterLease::State::kGranted);
    EXPECT_TRUE(lease.may_acknowledge(t0 + 800ms));
    EXPECT_TRUE(lease.refusal(t0 + 800ms).empty());
}

TEST(MasterLease, RunsFromTheSendTimeOfTheNewestGrantedHeartbeat) {
    MasterLease lease;
    lease.on_role(kMe, kEpoch, true);
    const TimePoint t0(10s);
    lease.on_answer(t0, granted());
    EXPECT_TRUE(lease.may_acknowledge(t0 + 800ms));
    EXPECT_FALSE(lease.may_acknowledge(t0 + 801ms));
    EXPECT_NE(lease.refusal(t0 + 900ms).find("master lease expired"), std::string::npos);
    // An answer to an older heartbeat arriving late never moves the lease back.
    lease.on_answer(t0 + 500ms, granted());
    lease.on_answer(t0 + 100ms, granted());
    EXPECT_TRUE(lease.may_acknowledge(t0 + 1300ms));
    EXPECT_FALSE(lease.may_acknowledge(t0 + 1301ms));
    // Errors and non-leaders renew nothing.
    Answer error;
    error.code = protocol::ResponseCode::kSystemError;
    lease.on_answer(t0 + 2s, error.build());
    Answer follower;
    follower.leader = false;
    lease.on_answer(t0 + 2s, follower.build());
    EXPECT_FALSE(lease.may_acknowledge(t0 + 2s));
}

// A grant must be for this broker as the master of the epoch it leads: an answer computed for
// another role (an earlier epoch, another id) renews nothing.
TEST(MasterLease, AGrantForAnotherRoleRenewsNothing) {
    MasterLease lease;
    lease.on_role(kMe, kEpoch, true);
    Answer older;
    older.epoch = kEpoch - 1;
    EXPECT_EQ(lease.on_answer(TimePoint(1s), older.build()), MasterLease::Effect::kNone);
    Answer no_master_fields;
    no_master_fields.master.reset();
    no_master_fields.epoch.reset();
    EXPECT_EQ(lease.on_answer(TimePoint(1s), no_master_fields.build()), MasterLease::Effect::kNone);
    EXPECT_FALSE(lease.may_acknowledge(TimePoint(1s)));
    // A slave is never renewed, whatever the answer says.
    MasterLease slave;
    slave.on_role(2, kEpoch, false);
    EXPECT_EQ(slave.on_answer(TimePoint(1s), granted()), MasterLease::Effect::kNone);
    EXPECT_FALSE(slave.may_acknowledge(TimePoint(1s)));
}

// The window this closes: the master was replaced while cut off from the controllers, and the
// first answer that gets through names the new master at a newer epoch. The lease is revoked at
// once (not at its end), and later grants of the old epoch cannot bring it back.
TEST(MasterLease, AnAnswerNamingANewerEpochRevokesTheLeaseAtOnce) {
    MasterLease lease;
    lease.on_role(kMe, kEpoch, true);
    const TimePoint t0(5s);
    lease.on_answer(t0, granted());
    ASSERT_TRUE(lease.may_acknowledge(t0 + 100ms));
    Answer replaced;
    replaced.granted = false;
    replaced.master = 2;
    replaced.epoch = kEpoch + 1;
    EXPECT_EQ(lease.on_answer(t0 + 100ms, replaced.build()), MasterLease::Effect::kSuperseded);
    EXPECT_FALSE(lease.may_acknowledge(t0 + 100ms));
    EXPECT_NE(lease.refusal(t0 + 100ms).find("revoked"), std::string::npos);
    // A deposed controller leader may still grant the old epoch: nothing comes back.
    EXPECT_EQ(lease.on_answer(t0 + 200ms, granted()), MasterLease::Effect::kNone);
    EXPECT_FALSE(lease.may_acknowledge(t0 + 200ms));
    // A follower naming the newer epoch says the same (epochs are committed state).
    MasterLease other;
    make_master(other);
    other.on_answer(t0, granted());
    Answer follower = replaced;
    follower.leader = false;
    EXPECT_EQ(other.on_answer(t0, follower.build()), MasterLease::Effect::kSuperseded);
    EXPECT_FALSE(other.may_acknowledge(t0));
    // A lagging follower naming an older epoch says nothing.
    MasterLease third;
    make_master(third);
    third.on_answer(t0, granted());
    Answer lagging;
    lagging.leader = false;
    lagging.master = 2;
    lagging.epoch = kEpoch - 1;
    EXPECT_EQ(third.on_answer(t0, lagging.build()), MasterLease::Effect::kNone);
    EXPECT_TRUE(third.may_acknowledge(t0));
}

// Another master, or none (the admin cleaned this master's data), at the epoch this broker
// leads also revokes the lease.
TEST(MasterLease, AnotherMasterAtOurEpochRevokesTheLease) {
    for (int64_t named : {int64_t{2}, int64_t{-1}}) {
        MasterLease lease;
        make_master(lease);
        lease.on_answer(TimePoint(1s), granted());
        Answer a;
        a.granted = false;
        a.master = named;
        EXPECT_EQ(lease.on_answer(TimePoint(1s), a.build()), MasterLease::Effect::kSuperseded);
        EXPECT_FALSE(lease.may_acknowledge(TimePoint(1s)));
    }
}

// After the role change the new epoch starts without a lease, and only its own grant counts.
TEST(MasterLease, ANewMasterEpochNeedsItsOwnGrant) {
    MasterLease lease;
    make_master(lease);
    lease.on_answer(TimePoint(1s), granted());
    lease.on_role(kMe, kEpoch + 2, true);
    EXPECT_FALSE(lease.may_acknowledge(TimePoint(1s)));
    EXPECT_NE(lease.refusal(TimePoint(1s)).find("not yet granted"), std::string::npos);
    EXPECT_EQ(lease.on_answer(TimePoint(1s), granted()), MasterLease::Effect::kNone);
    Answer now;
    now.epoch = kEpoch + 2;
    EXPECT_EQ(lease.on_answer(TimePoint(2s), now.build()), MasterLease::Effect::kRenewed);
    EXPECT_TRUE(lease.may_acknowledge(TimePoint(2s)));
    // Stepping down ends it at once.
    lease.on_role(kMe, kEpoch + 3, false);
    EXPECT_FALSE(lease.may_acknowledge(TimePoint(2s)));
}

TEST(MasterLease, AControllerWithoutLeasesEnforcesNothing) {
    MasterLease lease;
    make_master(lease);
    // RocketMQ's controller answers a heartbeat with SUCCESS and no lease fields.
    Answer rocketmq{protocol::ResponseCode::kSuccess,
                    std::nullopt,
                    std::nullopt,
                    std::nullopt,
                    std::nullopt,
                    std::nullopt};
    EXPECT_EQ(lease.on_answer(TimePoint(1s), rocketmq.build()), MasterLease::Effect::kNone);
    EXPECT_EQ(lease.state(), MasterLease::State::kNotGranted);
    EXPECT_TRUE(lease.may_acknowledge(TimePoint(1h)));
    // A lease of 0 (Comet's controller with masterLeaseMills=0) means the same.
    MasterLease zero;
    make_master(zero);
    Answer off;
    off.lease_ms = 0;
    zero.on_answer(TimePoint(1s), off.build());
    EXPECT_TRUE(zero.may_acknowledge(TimePoint(1h)));
}

TEST(MasterLease, OnceGrantedAnAnswerWithoutLeaseDoesNotSwitchItOff) {
    MasterLease lease;
    make_master(lease);
    const TimePoint t0(1s);
    lease.on_answer(t0, granted());
    Answer rocketmq{protocol::ResponseCode::kSuccess,
                    std::nullopt,
                    std::nullopt,
                    std::nullopt,
                    std::nullopt,
                    std::nullopt};
    lease.on_answer(t0 + 100ms, rocketmq.build());
    EXPECT_EQ(lease.state(), MasterLease::State::kGranted);
    EXPECT_FALSE(lease.may_acknowledge(t0 + 2s));
}

}  // namespace
}  // namespace comet::broker
