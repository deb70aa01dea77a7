#include "controller/replicas_info_manager.h"

#include <gtest/gtest.h>

#include "controller/controller_codes.h"
#include "controller/replicas_bodies.h"
#include "controller_test_util.h"

namespace comet::controller {
namespace {

using testing::addr_of;
using testing::alter_req;
using testing::apply_all;
using testing::apply_req;
using testing::check_code_of;
using testing::elect_req;
using testing::FakeLiveness;
using testing::kBroker;
using testing::kCluster;
using testing::setup_set;
using testing::sss;

const BrokerSetState& state(const ReplicasInfoManager& m) {
    const BrokerSetState* s = m.find(kBroker);
    EXPECT_NE(s, nullptr);
    return *s;
}

// ---- GET_NEXT_BROKER_ID (1012) ----

TEST(GetNextBrokerId, UnknownSetStartsAtOne) {
    ReplicasInfoManager m;
    protocol::GetNextBrokerIdRequestHeader req;
    req.cluster_name = kCluster;
    req.broker_name = kBroker;
    auto r = m.handle_get_next_broker_id(req);
    EXPECT_EQ(r.code, code::kSuccess);
    EXPECT_EQ(r.header.next_broker_id, 1);
    EXPECT_EQ(r.header.broker_name, kBroker);
    EXPECT_TRUE(r.events.empty());
}

TEST(GetNextBrokerId, FollowsHighestAppliedId) {
    ReplicasInfoManager m;
    setup_set(m, 2, false);
    protocol::GetNextBrokerIdRequestHeader req;
    req.broker_name = kBroker;
    EXPECT_EQ(m.handle_get_next_broker_id(req).header.next_broker_id, 3);
    // An out-of-order id moves next past it (Java would hand out 4, then 5 which is taken).
    auto r = m.handle_apply_broker_id(apply_req(5));
    ASSERT_EQ(r.code, code::kSuccess);
    apply_all(m, r);
    EXPECT_EQ(m.handle_get_next_broker_id(req).header.next_broker_id, 6);
}

// ---- APPLY_BROKER_ID (1013) ----

TEST(ApplyBrokerId, NewSetAcceptsOnlyTheFirstId) {
    ReplicasInfoManager m;
    auto bad = m.handle_apply_broker_id(apply_req(2));
    EXPECT_EQ(bad.code, code::kBrokerIdInvalid);
    EXPECT_TRUE(bad.events.empty());
    auto ok = m.handle_apply_broker_id(apply_req(1));
    EXPECT_EQ(ok.code, code::kSuccess);
    ASSERT_EQ(ok.events.size(), 1u);
    const auto& e = std::get<ApplyBrokerIdEvent>(ok.events[0]);
    EXPECT_EQ(e.broker_address, addr_of(1));  // taken from "<addr>;<millis>"
    EXPECT_EQ(e.register_check_code, check_code_of(1));
    apply_all(m, ok);
    EXPECT_EQ(state(m).cluster_name, kCluster);
    EXPECT_EQ(state(m).replicas.at(BrokerId(1)).address, addr_of(1));
}

TEST(ApplyBrokerId, RetryWithSameCheckCodeIsIdempotent) {
    ReplicasInfoManager m;
    setup_set(m, 2, false);
    const std::string before = m.encode_snapshot();
    auto r = m.handle_apply_broker_id(apply_req(2));
    EXPECT_EQ(r.code, code::kSuccess);
    apply_all(m, r);
    EXPECT_EQ(m.encode_snapshot(), before);
}

TEST(ApplyBrokerId, IdOwnedByAnotherBrokerIsInvalid) {
    ReplicasInfoManager m;
    setup_set(m, 2, false);
    auto req = apply_req(2);
    req.register_check_code = "10.0.0.9:10911;1700000000001";
    auto r = m.handle_apply_broker_id(req);
    EXPECT_EQ(r.code, code::kBrokerIdInvalid);
    EXPECT_TRUE(r.events.empty());
}

TEST(ApplyBrokerId, RaceForTheSameIdHasOneWinner) {
    ReplicasInfoManager m;
    setup_set(m, 1, false);
    auto a = m.handle_apply_broker_id(apply_req(2));
    auto other = apply_req(2);
    other.register_check_code = "10.0.0.9:10911;1700000000001";
    auto b = m.handle_apply_broker_id(other);  // validated before a's event applied
    ASSERT_EQ(a.code, code::kSuccess);
    ASSERT_EQ(b.code, code::kSuccess);
    apply_all(m, a);
    EXPECT_EQ(m.apply(b.events[0]).code(), Errc::kFailedPrecondition);
    EXPECT_EQ(state(m).replicas.at(BrokerId(2)).register_check_code, check_code_of(2));
}

TEST(ApplyBrokerId, ZeroOrMissingFields) {
    ReplicasInfoManager m;
    setup_set(m, 1, false);
    EXPECT_EQ(m.handle_apply_broker_id(apply_req(0)).code, code::kBrokerIdInvalid);
    auto req = apply_req(2);
    req.register_check_code.reset();
    EXPECT_EQ(m.handle_apply_broker_id(req).code, code::kInvalidRequest);
}

// ---- REGISTER_BROKER (1003) ----

protocol::RegisterBrokerToControllerRequestHeader register_req(int64_t id) {
    protocol::RegisterBrokerToControllerRequestHeader h;
    h.cluster_name = kCluster;
    h.broker_name = kBroker;
    h.broker_id = id;
    h.broker_address = addr_of(id);
    return h;
}

TEST(RegisterBroker, UnknownSetOrIdNeedsRegistration) {
    ReplicasInfoManager m;
    FakeLiveness live;
    EXPECT_EQ(m.handle_register_broker(register_req(1), live).code,
              code::kBrokerNeedToBeRegistered);
    setup_set(m, 1, false);
    EXPECT_EQ(m.handle_register_broker(register_req(2), live).code,
              code::kBrokerNeedToBeRegistered);
    auto req = register_req(1);
    req.broker_id.reset();
    EXPECT_EQ(m.handle_register_broker(req, live).code, code::kBrokerNeedToBeRegistered);
}

TEST(RegisterBroker, MasterFieldsOnlyWhenMasterAlive) {
    ReplicasInfoManager m;
    setup_set(m, 2);
    FakeLiveness live;
    auto dead = m.handle_register_broker(register_req(2), live);
    EXPECT_EQ(dead.code, code::kSuccess);
    EXPECT_FALSE(dead.header.master_broker_id.has_value());
    EXPECT_FALSE(dead.header.master_address.has_value());
    EXPECT_EQ(dead.header.cluster_name, kCluster);
    auto body = protocol::SyncStateSet::decode(dead.body);
    ASSERT_TRUE(body.is_ok());
    EXPECT_EQ(body->sync_state_set, (std::set<int64_t>{1}));
    EXPECT_EQ(body->sync_state_set_epoch, 1);

    live.alive = {1};
    auto alive = m.handle_register_broker(register_req(2), live);
    EXPECT_EQ(alive.header.master_broker_id, 1);
    EXPECT_EQ(alive.header.master_address, addr_of(1));
    EXPECT_EQ(alive.header.master_epoch, 1);
    EXPECT_EQ(alive.header.sync_state_set_epoch, 1);
    EXPECT_TRUE(alive.events.empty());  // address unchanged
}

TEST(RegisterBroker, ChangedAddressIsUpdated) {
    ReplicasInfoManager m;
    setup_set(m, 2);
    FakeLiveness live;
    auto req = register_req(2);
    req.broker_address = "10.1.1.1:10911";
    auto r = m.handle_register_broker(req, live);
    EXPECT_EQ(r.code, code::kSuccess);
    ASSERT_EQ(r.events.size(), 1u);
    EXPECT_TRUE(std::holds_alternative<UpdateBrokerAddressEvent>(r.events[0]));
    apply_all(m, r);
    EXPECT_EQ(state(m).replicas.at(BrokerId(2)).address, "10.1.1.1:10911");
    // The check code is kept.
    EXPECT_EQ(state(m).replicas.at(BrokerId(2)).register_check_code, check_code_of(2));
}

// ---- ELECT_MASTER (1002) ----

TEST(ElectMaster, UnknownSetNeedsRegistration) {
    ReplicasInfoManager m;
    FakeLiveness live;
    EXPECT_EQ(m.handle_elect_master(elect_req(1), live).code, code::kBrokerNeedToBeRegistered);
}

TEST(ElectMaster, FirstElectionPicksTheRequester) {
    ReplicasInfoManager m;
    setup_set(m, 3, false);
    FakeLiveness live;  // liveness is not consulted the first time (Java)
    auto r = m.handle_elect_master(elect_req(3), live);
    EXPECT_EQ(r.code, code::kSuccess);
    EXPECT_EQ(r.header.master_broker_id, 3);
    EXPECT_EQ(r.header.master_address, addr_of(3));
    EXPECT_EQ(r.header.master_epoch, 1);
    EXPECT_EQ(r.header.sync_state_set_epoch, 1);
    auto body = protocol::ElectMasterResponseBody::decode(r.body);
    ASSERT_TRUE(body.is_ok()) << body.status().to_string();
    EXPECT_EQ(body->sync_state_set, (std::set<int64_t>{3}));
    ASSERT_TRUE(body->broker_member_group.has_value());
    EXPECT_EQ(body->broker_member_group->broker_addrs.size(), 3u);
    apply_all(m, r);
    EXPECT_EQ(state(m).master, BrokerId(3));
    EXPECT_EQ(state(m).master_epoch, MasterEpoch(1));
    EXPECT_EQ(state(m).sync_state_set, (std::set<BrokerId>{BrokerId(3)}));
}

TEST(ElectMaster, FirstElectionByUnregisteredIdIsRejected) {
    ReplicasInfoManager m;
    setup_set(m, 1, false);
    FakeLiveness live;
    EXPECT_EQ(m.handle_elect_master(elect_req(7), live).code, code::kBrokerNeedToBeRegistered);
}

TEST(ElectMaster, AliveOldMasterIsKept) {
    ReplicasInfoManager m;
    setup_set(m, 2);
    FakeLiveness live;
    live.alive = {1, 2};
    auto r = m.handle_elect_master(elect_req(2), live);
    EXPECT_EQ(r.code, code::kMasterStillExist);
    EXPECT_EQ(r.header.master_broker_id, 1);
    EXPECT_EQ(r.header.master_epoch, 1);
    EXPECT_EQ(r.header.sync_state_set_epoch, 1);
    EXPECT_TRUE(r.events.empty());
}

// Master 1, SyncStateSet {1,2} at master epoch 1 / sse 2.
void setup_two_in_sync(ReplicasInfoManager& m, int n = 3) {
    setup_set(m, n);
    FakeLiveness live;
    live.alive = {1, 2};
    auto r = m.handle_alter_sync_state_set(alter_req(1, 1), sss({1, 2}, 1), live);
    ASSERT_EQ(r.code, code::kSuccess) << r.remark;
    apply_all(m, r);
}

TEST(ElectMaster, DeadMasterReplacedFromSyncStateSet) {
    ReplicasInfoManager m;
    setup_two_in_sync(m);
    FakeLiveness live;
    live.alive = {2, 3};  // 3 is alive but not in sync
    auto r = m.handle_elect_master(elect_req(kControllerTriggeredBrokerId), live);
    EXPECT_EQ(r.code, code::kSuccess) << r.remark;
    EXPECT_EQ(r.header.master_broker_id, 2);
    EXPECT_EQ(r.header.master_epoch, 2);
    EXPECT_EQ(r.header.sync_state_set_epoch, 3);
    apply_all(m, r);
    EXPECT_EQ(state(m).master, BrokerId(2));
    EXPECT_EQ(state(m).master_epoch, MasterEpoch(2));
    EXPECT_EQ(state(m).sync_state_set_epoch, SyncStateSetEpoch(3));
    EXPECT_EQ(state(m).sync_state_set, (std::set<BrokerId>{BrokerId(2)}));
}

TEST(ElectMaster, ControllerTriggeredWithoutCandidateClearsMaster) {
    ReplicasInfoManager m;
    setup_two_in_sync(m);
    FakeLiveness live;
    live.alive = {3};
    auto r = m.handle_elect_master(elect_req(kControllerTriggeredBrokerId), live);
    EXPECT_EQ(r.code, code::kMasterNotAvailable);
    ASSERT_EQ(r.events.size(), 1u);
    EXPECT_FALSE(std::get<ElectMasterEvent>(r.events[0]).new_master_elected);
    apply_all(m, r);
    EXPECT_FALSE(state(m).master.has_value());
    EXPECT_EQ(state(m).master_epoch, MasterEpoch(2));  // Java bumps it even without a master
    EXPECT_EQ(state(m).sync_state_set, (std::set<BrokerId>{BrokerId(1), BrokerId(2)}));
    EXPECT_EQ(state(m).sync_state_set_epoch, SyncStateSetEpoch(2));
    // Later, 2 comes back and is elected from the kept SyncStateSet.
    live.alive = {2, 3};
    auto again = m.handle_elect_master(elect_req(kControllerTriggeredBrokerId), live);
    EXPECT_EQ(again.code, code::kSuccess);
    EXPECT_EQ(again.header.master_broker_id, 2);
}

TEST(ElectMaster, BrokerRequestedWithoutCandidateFails) {
    ReplicasInfoManager m;
    setup_two_in_sync(m);
    FakeLiveness live;
    live.alive = {3};
    auto r = m.handle_elect_master(elect_req(3), live);
    EXPECT_EQ(r.code, code::kElectMasterFailed);
    EXPECT_TRUE(r.events.empty());
}

// An admin's designated switch waits for the old master's lease like any other election: the
// old master would otherwise acknowledge writes on its own log until it heard of the switch.
TEST(ElectMaster, DesignatedCandidateReplacesALiveMasterOnlyOnceItsLeaseRanOut) {
    ReplicasInfoManager m;
    setup_two_in_sync(m);
    FakeLiveness live;
    live.alive = {1, 2};  // 1 alive: its lease still runs
    auto held = m.handle_elect_master(elect_req(2, true), live);
    EXPECT_EQ(held.code, code::kMasterStillExist) << held.remark;
    EXPECT_EQ(held.header.master_broker_id, 1);
    EXPECT_TRUE(held.events.empty());
    live.alive = {2};  // the lease ran out (the driver stopped granting it)
    auto r = m.handle_elect_master(elect_req(2, true), live);
    EXPECT_EQ(r.code, code::kSuccess) << r.remark;
    EXPECT_EQ(r.header.master_broker_id, 2);
}

TEST(ElectMaster, DesignatedNonCandidateFails) {
    ReplicasInfoManager m;
    setup_two_in_sync(m);
    FakeLiveness live;
    live.alive = {1, 2, 3};
    auto r = m.handle_elect_master(elect_req(3, true), live);  // 3 is not in sync
    EXPECT_EQ(r.code, code::kElectMasterFailed);
    EXPECT_TRUE(r.events.empty());
}

TEST(ElectMaster, UncleanElectionOnlyWhenEnabled) {
    for (bool unclean : {false, true}) {
        ReplicasInfoManager m(ReplicasInfoConfig{unclean});
        setup_two_in_sync(m);
        FakeLiveness live;
        live.alive = {3};
        auto r = m.handle_elect_master(elect_req(kControllerTriggeredBrokerId), live);
        if (unclean) {
            EXPECT_EQ(r.code, code::kSuccess);
            EXPECT_EQ(r.header.master_broker_id, 3);
        } else {
            EXPECT_EQ(r.code, code::kMasterNotAvailable);
        }
    }
}

TEST(ElectMaster, RunningLeaseBlocksReplacementAndClearing) {
    ReplicasInfoManager m;
    setup_two_in_sync(m);
    FakeLiveness live;
    live.alive = {2};
    live.lease_running = {1};  // heartbeat timed out, but the lease may still run
    auto r = m.handle_elect_master(elect_req(kControllerTriggeredBrokerId), live);
    EXPECT_EQ(r.code, code::kMasterStillExist);
    EXPECT_EQ(r.header.master_broker_id, 1);
    EXPECT_TRUE(r.events.empty());
    live.alive = {};
    auto none = m.handle_elect_master(elect_req(kControllerTriggeredBrokerId), live);
    EXPECT_EQ(none.code, code::kMasterStillExist);
    EXPECT_TRUE(none.events.empty());
    live.lease_running = {};
    live.alive = {2};
    EXPECT_EQ(m.handle_elect_master(elect_req(kControllerTriggeredBrokerId), live).code,
              code::kSuccess);
}

TEST(ElectMaster, DesignateWithoutBrokerIdIsNotAHandover) {
    ReplicasInfoManager m;
    setup_two_in_sync(m);
    FakeLiveness live;
    live.alive = {2};
    live.lease_running = {1};
    auto r = m.handle_elect_master(elect_req(kControllerTriggeredBrokerId, true), live);
    EXPECT_EQ(r.code, code::kMasterStillExist);  // the lease still applies
    EXPECT_TRUE(r.events.empty());
}

TEST(ElectMaster, StaleElectEventIsIgnoredOnApply) {
    ReplicasInfoManager m;
    setup_two_in_sync(m);
    FakeLiveness live;
    live.alive = {2};
    auto r = m.handle_elect_master(elect_req(kControllerTriggeredBrokerId), live);
    ASSERT_EQ(r.code, code::kSuccess);
    apply_all(m, r);
    const std::string after = m.encode_snapshot();
    // Applying the same decision twice (a duplicated proposal) changes nothing.
    Status st = m.apply(r.events[0]);
    EXPECT_EQ(st.code(), Errc::kFailedPrecondition);
    EXPECT_EQ(m.encode_snapshot(), after);
}

// ---- ALTER_SYNC_STATE_SET (1001) ----

struct AlterCase {
    const char* name;
    std::string broker;
    int64_t master;
    int32_t master_epoch;
    std::set<int64_t> ids;
    int32_t sse;
    std::set<int64_t> alive;
    int32_t want;
};

TEST(AlterSyncStateSet, EveryRejectionInJavaOrder) {
    // State: replicas 1..3, master 1, master epoch 1, SyncStateSet {1,2}, sse 2.
    const std::vector<AlterCase> cases = {
        {"unknown set", "broker-x", 1, 1, {1}, 2, {1, 2, 3}, code::kAlterSyncStateSetFailed},
        {"same set", kBroker, 1, 1, {1, 2}, 2, {1, 2, 3}, code::kAlterSyncStateSetFailed},
        {"wrong master", kBroker, 2, 1, {1}, 2, {1, 2, 3}, code::kInvalidMaster},
        {"old master epoch", kBroker, 1, 0, {1}, 2, {1, 2, 3}, code::kFencedMasterEpoch},
        {"old sse", kBroker, 1, 1, {1}, 1, {1, 2, 3}, code::kFencedSyncStateSetEpoch},
        {"unknown replica", kBroker, 1, 1, {1, 9}, 2, {1, 2, 3, 9}, code::kInvalidReplicas},
        {"dead replica", kBroker, 1, 1, {1, 2, 3}, 2, {1, 2}, code::kBrokerNotAlive},
        {"without master", kBroker, 1, 1, {2, 3}, 2, {1, 2, 3}, code::kAlterSyncStateSetFailed},
        {"shrink ok", kBroker, 1, 1, {1}, 2, {1}, code::kSuccess},
        {"expand ok", kBroker, 1, 1, {1, 2, 3}, 2, {1, 2, 3}, code::kSuccess},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        ReplicasInfoManager m;
        setup_two_in_sync(m);
        FakeLiveness live;
        live.alive = c.alive;
        auto r = m.handle_alter_sync_state_set(alter_req(c.master, c.master_epoch, c.broker),
                                               sss(c.ids, c.sse), live);
        EXPECT_EQ(r.code, c.want) << r.remark;
        if (c.want != code::kSuccess) {
            EXPECT_TRUE(r.events.empty());
            EXPECT_FALSE(r.remark.empty());
            continue;
        }
        EXPECT_EQ(r.header.new_sync_state_set_epoch, 3);
        auto body = protocol::SyncStateSet::decode(r.body);
        ASSERT_TRUE(body.is_ok());
        EXPECT_EQ(body->sync_state_set, c.ids);
        EXPECT_EQ(body->sync_state_set_epoch, 3);
        apply_all(m, r);
        EXPECT_EQ(state(m).sync_state_set_epoch, SyncStateSetEpoch(3));
        EXPECT_EQ(state(m).sync_state_set.size(), c.ids.size());
        EXPECT_EQ(state(m).master_epoch, MasterEpoch(1));
    }
}

TEST(AlterSyncStateSet, NoMasterIsInvalidMaster) {
    ReplicasInfoManager m;
    setup_set(m, 2, false);
    FakeLiveness live;
    live.alive = {1, 2};
    auto r = m.handle_alter_sync_state_set(alter_req(1, 0), sss({1}, 0), live);
    EXPECT_EQ(r.code, code::kInvalidMaster);
}

TEST(AlterSyncStateSet, StaleEventIsIgnored) {
    ReplicasInfoManager m;
    setup_two_in_sync(m);
    FakeLiveness live;
    live.alive = {1, 2, 3};
    // Two requests validated against the same state: the second one's event must not apply.
    auto a = m.handle_alter_sync_state_set(alter_req(1, 1), sss({1}, 2), live);
    auto b = m.handle_alter_sync_state_set(alter_req(1, 1), sss({1, 2, 3}, 2), live);
    ASSERT_EQ(a.code, code::kSuccess);
    ASSERT_EQ(b.code, code::kSuccess);
    apply_all(m, a);
    EXPECT_EQ(m.apply(b.events[0]).code(), Errc::kFailedPrecondition);
    EXPECT_EQ(state(m).sync_state_set, (std::set<BrokerId>{BrokerId(1)}));
    m.check_invariants();
}

// ---- GET_REPLICA_INFO (1004) ----

TEST(GetReplicaInfo, UnknownAndKnown) {
    ReplicasInfoManager m;
    protocol::GetReplicaInfoRequestHeader req;
    req.broker_name = kBroker;
    EXPECT_EQ(m.handle_get_replica_info(req).code, code::kBrokerMetadataNotExist);
    setup_two_in_sync(m);
    auto r = m.handle_get_replica_info(req);
    EXPECT_EQ(r.code, code::kSuccess);
    EXPECT_EQ(r.header.master_broker_id, 1);
    EXPECT_EQ(r.header.master_address, addr_of(1));
    EXPECT_EQ(r.header.master_epoch, 1);
    EXPECT_EQ(r.body, R"({"syncStateSet":[1,2],"syncStateSetEpoch":2})");
}

// ---- GET_SYNC_STATE_DATA (1006) ----

TEST(GetSyncStateData, ReportsInAndOutOfSyncReplicas) {
    ReplicasInfoManager m;
    setup_two_in_sync(m);
    FakeLiveness live;
    live.alive = {1, 3};
    auto r = m.handle_get_sync_state_data({kBroker, "unknown"}, live);
    EXPECT_EQ(r.code, code::kSuccess);
    auto body = BrokerReplicasInfo::decode(r.body);
    ASSERT_TRUE(body.is_ok()) << body.status().to_string() << " " << r.body;
    ASSERT_EQ(body->replicas_info_table.size(), 1u);
    const ReplicasInfo& info = body->replicas_info_table.at(kBroker);
    EXPECT_EQ(info.master_broker_id, 1);
    EXPECT_EQ(info.master_epoch, 1);
    EXPECT_EQ(info.sync_state_set_epoch, 2);
    ASSERT_EQ(info.in_sync_replicas.size(), 2u);
    EXPECT_TRUE(info.in_sync_replicas[0].alive);
    EXPECT_FALSE(info.in_sync_replicas[1].alive);
    ASSERT_EQ(info.not_in_sync_replicas.size(), 1u);
    EXPECT_EQ(info.not_in_sync_replicas[0].broker_id, 3);
    EXPECT_TRUE(info.not_in_sync_replicas[0].alive);
    EXPECT_EQ(info.not_in_sync_replicas[0].broker_address, addr_of(3));
}

TEST(GetSyncStateData, BodyRoundTripsWithoutMaster) {
    BrokerReplicasInfo b;
    b.replicas_info_table["x"].not_in_sync_replicas.push_back({"x", 4, "h:1", false});
    auto back = BrokerReplicasInfo::decode(b.encode());
    ASSERT_TRUE(back.is_ok());
    EXPECT_EQ(*back, b);
    EXPECT_EQ(b.encode().find("masterBrokerId"), std::string::npos);
}

// ---- CLEAN_BROKER_DATA (1011) ----

protocol::CleanBrokerDataRequestHeader clean_req(std::optional<std::string> ids,
                                                 bool living = false) {
    protocol::CleanBrokerDataRequestHeader h;
    h.cluster_name = kCluster;
    h.broker_name = kBroker;
    h.broker_controller_ids_to_clean = std::move(ids);
    h.is_clean_living_broker = living;
    return h;
}

TEST(CleanBrokerData, Rejections) {
    ReplicasInfoManager m;
    FakeLiveness live;
    EXPECT_EQ(m.handle_clean_broker_data(clean_req("1"), live).code,
              code::kInvalidCleanBrokerMetadata);  // unknown set
    setup_two_in_sync(m);
    EXPECT_EQ(m.handle_clean_broker_data(clean_req(std::nullopt), live).code,
              code::kInvalidCleanBrokerMetadata);  // master exists, whole set
    EXPECT_EQ(m.handle_clean_broker_data(clean_req("1;x"), live).code,
              code::kInvalidCleanBrokerMetadata);  // bad format
    live.alive = {3};
    EXPECT_EQ(m.handle_clean_broker_data(clean_req("2;3"), live).code,
              code::kInvalidCleanBrokerMetadata);  // 3 alive
}

TEST(CleanBrokerData, RemovesIdsAndSets) {
    ReplicasInfoManager m;
    setup_two_in_sync(m);
    FakeLiveness live;
    live.alive = {1};
    auto r = m.handle_clean_broker_data(clean_req("2;3"), live);
    EXPECT_EQ(r.code, code::kSuccess) << r.remark;
    apply_all(m, r);
    EXPECT_EQ(state(m).replicas.size(), 1u);
    EXPECT_EQ(state(m).sync_state_set, (std::set<BrokerId>{BrokerId(1)}));
    // Cleaning the living master with isCleanLivingBroker also clears the master.
    auto living = m.handle_clean_broker_data(clean_req("1", true), live);
    EXPECT_EQ(living.code, code::kSuccess);
    apply_all(m, living);
    EXPECT_EQ(m.find(kBroker), nullptr);  // last replica gone: set gone
}

TEST(CleanBrokerData, WholeSetWhenLiving) {
    ReplicasInfoManager m;
    setup_two_in_sync(m);
    FakeLiveness live;
    auto r = m.handle_clean_broker_data(clean_req("", true), live);
    EXPECT_EQ(r.code, code::kSuccess);
    apply_all(m, r);
    EXPECT_TRUE(m.broker_sets().empty());
}

TEST(CleanBrokerData, CleaningMasterIdKeepsInvariants) {
    ReplicasInfoManager m;
    setup_two_in_sync(m);
    FakeLiveness live;
    auto r = m.handle_clean_broker_data(clean_req("1"), live);
    ASSERT_EQ(r.code, code::kSuccess);
    apply_all(m, r);
    EXPECT_FALSE(state(m).master.has_value());
    EXPECT_EQ(state(m).sync_state_set, (std::set<BrokerId>{BrokerId(2)}));
}

// ---- scanNeedReelectBrokerSets ----

TEST(ScanNeedReelect, DeadMasterWithLiveReplica) {
    ReplicasInfoManager m;
    setup_two_in_sync(m);
    FakeLiveness live;
    live.alive = {1, 2};
    EXPECT_TRUE(m.scan_need_reelect_broker_sets(live).empty());
    live.alive = {2};
    EXPECT_EQ(m.scan_need_reelect_broker_sets(live), std::vector<std::string>{kBroker});
    live.alive = {};
    EXPECT_TRUE(m.scan_need_reelect_broker_sets(live).empty());
}

}  // namespace
}  // namespace comet::controller
