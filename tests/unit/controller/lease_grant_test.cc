#include "controller/lease_grant.h"

#include <gtest/gtest.h>

#include "controller_test_util.h"

namespace comet::controller {
namespace {

using testing::addr_of;
using testing::check_code_of;
using testing::kBroker;
using testing::kCluster;

// A set of three replicas whose master is 1 at epoch 1.
BrokerSetState set_with_master() {
    BrokerSetState s;
    s.cluster_name = kCluster;
    s.broker_name = kBroker;
    for (int64_t id = 1; id <= 3; ++id) {
        s.replicas[BrokerId(id)] = ReplicaEntry{addr_of(id), check_code_of(id)};
    }
    s.master = BrokerId(1);
    s.master_epoch = MasterEpoch(1);
    s.sync_state_set = {BrokerId(1), BrokerId(2), BrokerId(3)};
    return s;
}

TEST(DecideLease, OnlyTheMasterOfTheCurrentEpochIsGranted) {
    const BrokerSetState s = set_with_master();
    const LeaseDecision d = decide_lease(&s, BrokerId(1), 1, true, false);
    EXPECT_TRUE(d.granted());
    EXPECT_EQ(d.master, BrokerId(1));
    EXPECT_EQ(d.master_address, addr_of(1));
    EXPECT_EQ(d.master_epoch, MasterEpoch(1));
    EXPECT_EQ(decide_lease(&s, BrokerId(2), 1, true, false).verdict, LeaseVerdict::kNotMaster);
}

// The case the rule exists for: 1 was master at epoch 1, was cut off, and 2 was elected at
// epoch 2. When 1's heartbeats get through again it still reports epoch 1: it is told about
// 2 and gets no lease.
TEST(DecideLease, ADeposedMasterIsToldWhoTheMasterIsInstead) {
    BrokerSetState s = set_with_master();
    s.master = BrokerId(2);
    s.master_epoch = MasterEpoch(2);
    const LeaseDecision d = decide_lease(&s, BrokerId(1), 1, true, false);
    EXPECT_FALSE(d.granted());
    EXPECT_EQ(d.verdict, LeaseVerdict::kNotMaster);
    EXPECT_EQ(d.master, BrokerId(2));
    EXPECT_EQ(d.master_address, addr_of(2));
    EXPECT_EQ(d.master_epoch, MasterEpoch(2));
    EXPECT_TRUE(decide_lease(&s, BrokerId(2), 2, true, false).granted());
}

// Elected again after someone else led (or after its master was cleared): until it has taken
// the new epoch up it reports an older one and is not the master that epoch's grant is for.
TEST(DecideLease, TheMasterByIdWithAnotherEpochIsNotGranted) {
    BrokerSetState s = set_with_master();
    s.master_epoch = MasterEpoch(3);
    EXPECT_EQ(decide_lease(&s, BrokerId(1), 1, true, false).verdict, LeaseVerdict::kStaleEpoch);
    EXPECT_EQ(decide_lease(&s, BrokerId(1), 4, true, false).verdict, LeaseVerdict::kStaleEpoch);
    EXPECT_EQ(decide_lease(&s, BrokerId(1), std::nullopt, true, false).verdict,
              LeaseVerdict::kStaleEpoch);
    EXPECT_TRUE(decide_lease(&s, BrokerId(1), 3, true, false).granted());
}

TEST(DecideLease, NoMasterNoLease) {
    BrokerSetState s = set_with_master();
    s.master.reset();
    const LeaseDecision d = decide_lease(&s, BrokerId(1), 1, true, false);
    EXPECT_EQ(d.verdict, LeaseVerdict::kNoMaster);
    EXPECT_FALSE(d.master.has_value());
    EXPECT_EQ(d.master_epoch, MasterEpoch(1));
}

// A controller that is not a caught-up leader may hold stale state: it grants nothing, but
// still names the master it knows (the broker takes only a newer epoch from it).
TEST(DecideLease, OnlyAServingLeaderGrants) {
    const BrokerSetState s = set_with_master();
    const LeaseDecision d = decide_lease(&s, BrokerId(1), 1, false, false);
    EXPECT_EQ(d.verdict, LeaseVerdict::kNotServing);
    EXPECT_EQ(d.master, BrokerId(1));
    EXPECT_EQ(decide_lease(nullptr, BrokerId(1), 1, false, false).verdict,
              LeaseVerdict::kNotServing);
    EXPECT_EQ(decide_lease(nullptr, BrokerId(1), 1, true, false).verdict,
              LeaseVerdict::kUnknownSet);
}

// Between an election's validation (the old lease ran out) and its apply, or while a designated
// handover waits for the lease to run out, a renewal would let two masters write.
TEST(DecideLease, NoGrantWhileAnElectionIsUnderWay) {
    const BrokerSetState s = set_with_master();
    EXPECT_EQ(decide_lease(&s, BrokerId(1), 1, true, true).verdict,
              LeaseVerdict::kElectionUnderWay);
}

// The decision with the heartbeat table: the lease mark moves only with a grant, so a deposed
// master's healed heartbeats never push back the election that replaced it.
TEST(DecideLease, RefusedHeartbeatsDoNotHoldBackAReplacement) {
    BrokerHeartbeatManager m(MasterLeaseConfig{Millis(800), Millis(200), Millis(0)});
    BrokerSetState s = set_with_master();
    auto beat = [&](int64_t ms, int64_t id, int32_t epoch) {
        const TimePoint now{Millis(ms)};
        m.on_heartbeat(now, kCluster, kBroker, BrokerId(id), addr_of(id), epoch, 0, 0, std::nullopt,
                       std::nullopt);
        if (decide_lease(&s, BrokerId(id), epoch, true, false).granted()) {
            m.grant_lease(now, kCluster, kBroker, BrokerId(id));
        }
    };
    beat(10000, 1, 1);
    EXPECT_FALSE(m.view(TimePoint(Millis(11000))).lease_expired(kCluster, kBroker, BrokerId(1)));
    s.master = BrokerId(2);  // elected once 1's lease ran out
    s.master_epoch = MasterEpoch(2);
    beat(12000, 1, 1);  // the partition heals
    beat(12000, 2, 2);
    EXPECT_TRUE(m.view(TimePoint(Millis(12000))).lease_expired(kCluster, kBroker, BrokerId(1)));
    EXPECT_FALSE(m.view(TimePoint(Millis(12000))).lease_expired(kCluster, kBroker, BrokerId(2)));
}

TEST(DecideLease, VerdictNames) {
    EXPECT_STREQ(lease_verdict_name(LeaseVerdict::kGranted), "granted");
    EXPECT_STREQ(lease_verdict_name(LeaseVerdict::kNotMaster), "not-master");
}

}  // namespace
}  // namespace comet::controller
