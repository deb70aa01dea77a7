// Controller mode's controller group with real mqcontroller processes on 127.0.0.1
// (docs/controller.md): three controllers elect one Raft leader, which alone answers the
// controller RPCs (the others answer CONTROLLER_NOT_LEADER); broker ids, registrations,
// elections and SyncStateSets survive the leader's kill -9 and a restart of the whole group;
// a master whose heartbeats stop is replaced by an in-sync replica, never by one outside the
// SyncStateSet, and the new master is told with NOTIFY_BROKER_ROLE_CHANGED. The "brokers" here
// are the test itself speaking the wire protocol, so each RPC's answer is checked exactly.
// Every wait is a bounded hang guard (harness.h), never a verdict.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "controller_group.h"
#include "harness.h"
#include "net/remoting_server.h"
#include "protocol/ha_bodies.h"
#include "protocol/ha_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

using namespace std::chrono_literals;
namespace RC = protocol::ResponseCode;
namespace Req = protocol::RequestCode;
using protocol::RemotingCommand;

constexpr const char* kCluster = "ClusterC";
constexpr const char* kBroker = "broker-c";

RemotingCommand heartbeat(int64_t id, const std::string& broker_addr, int64_t timeout_ms,
                          int32_t epoch = 0, int64_t max_offset = 0) {
    return request(Req::kBrokerHeartbeat,
                   {{"clusterName", kCluster},
                    {"brokerName", kBroker},
                    {"brokerAddr", broker_addr},
                    {"brokerId", std::to_string(id)},
                    {"epoch", std::to_string(epoch)},
                    {"maxOffset", std::to_string(max_offset)},
                    {"heartbeatTimeoutMills", std::to_string(timeout_ms)}});
}

// A broker's start-up against the leader: GET_NEXT_BROKER_ID, APPLY_BROKER_ID, REGISTER.
// Returns the id it got.
int64_t join(net::RemotingClient& client, uint16_t leader, const std::string& broker_addr) {
    auto next = call(client, leader,
                     request(Req::kControllerGetNextBrokerId,
                             {{"clusterName", kCluster}, {"brokerName", kBroker}}));
    EXPECT_TRUE(next.is_ok() && next->code == RC::kSuccess)
        << (next.is_ok() ? next->remark.value_or("") : next.status().message());
    if (!next.is_ok()) {
        return -1;
    }
    const int64_t id = std::stoll(*next->ext("nextBrokerId"));
    auto applied = call(client, leader,
                        request(Req::kControllerApplyBrokerId,
                                {{"clusterName", kCluster},
                                 {"brokerName", kBroker},
                                 {"appliedBrokerId", std::to_string(id)},
                                 {"registerCheckCode", broker_addr + ";1700000000000"}}));
    EXPECT_TRUE(applied.is_ok() && applied->code == RC::kSuccess)
        << (applied.is_ok() ? applied->remark.value_or("") : applied.status().message());
    auto reg = call(client, leader,
                    request(Req::kControllerRegisterBroker,
                            {{"clusterName", kCluster},
                             {"brokerName", kBroker},
                             {"brokerId", std::to_string(id)},
                             {"brokerAddress", broker_addr}}));
    EXPECT_TRUE(reg.is_ok() && reg->code == RC::kSuccess)
        << (reg.is_ok() ? reg->remark.value_or("") : reg.status().message());
    return id;
}

// ELECT_MASTER for `id` (designateElect=false), as a broker asks for itself at start-up.
Result<RemotingCommand> elect(net::RemotingClient& client, uint16_t leader, int64_t id) {
    return call(client, leader,
                request(Req::kControllerElectMaster, {{"clusterName", kCluster},
                                                      {"brokerName", kBroker},
                                                      {"brokerId", std::to_string(id)},
                                                      {"designateElect", "false"}}));
}

// ALTER_SYNC_STATE_SET from master `master` of `master_epoch`, proposing `set` at `set_epoch`.
Result<RemotingCommand> alter(net::RemotingClient& client, uint16_t leader, int64_t master,
                                int32_t master_epoch, std::set<int64_t> set, int32_t set_epoch) {
    protocol::SyncStateSet body;
    body.sync_state_set = std::move(set);
    body.sync_state_set_epoch = set_epoch;
    return call(client, leader,
                request(Req::kControllerAlterSyncStateSet,
                        {{"brokerName", kBroker},
                         {"masterBrokerId", std::to_string(master)},
                         {"masterEpoch", std::to_string(master_epoch)}},
                        body.encode()));
}

struct ReplicaInfo {
    int32_t code = -1;
    int64_t master = -1;
    int32_t epoch = -1;
    std::set<int64_t> sync_state_set;
};

ReplicaInfo replica_info(net::RemotingClient& client, uint16_t port) {
    ReplicaInfo out;
    auto r = call(client, port, request(Req::kControllerGetReplicaInfo, {{"brokerName", kBroker}}));
    if (!r.is_ok()) {
        return out;
    }
    out.code = r->code;
    if (const std::string* m = r->ext("masterBrokerId")) {
        out.master = std::stoll(*m);
    }
    if (const std::string* e = r->ext("masterEpoch")) {
        out.epoch = std::stoi(*e);
    }
    if (auto body = protocol::SyncStateSet::decode(r->body); body.is_ok()) {
        out.sync_state_set = body->sync_state_set;
    }
    return out;
}

TEST(ControllerIt, OneLeaderAnswersTheOthersRefuseWithNotLeader) {
    TempDir dir("comet_ctl");
    ControllerGroup g(dir);
    ASSERT_TRUE(g.start_all().is_ok()) << g.logs();
    net::RemotingClient client;
    client.start();
    auto leader = wait_leader(client, g);
    ASSERT_TRUE(leader.has_value()) << g.logs();
    for (int i = 0; i < 3; ++i) {
        auto r = call(client, g.port(i),
                      request(Req::kControllerGetNextBrokerId,
                              {{"clusterName", kCluster}, {"brokerName", kBroker}}));
        ASSERT_TRUE(r.is_ok()) << r.status().message();
        if (i == *leader) {
            EXPECT_EQ(r->code, RC::kSuccess);
            EXPECT_EQ(*r->ext("nextBrokerId"), "1");
        } else {
            EXPECT_EQ(r->code, RC::kControllerNotLeader);
            EXPECT_EQ(r->remark.value_or(""), "The controller is not in leader state");
        }
    }
    // A heartbeat without brokerId is refused by every member (liveness is local to each).
    auto bad = call(client, g.port(0),
                    request(Req::kBrokerHeartbeat, {{"clusterName", kCluster},
                                                    {"brokerName", kBroker},
                                                    {"brokerAddr", "127.0.0.1:1"}}));
    ASSERT_TRUE(bad.is_ok());
    EXPECT_EQ(bad->code, RC::kControllerInvalidRequest);
    client.shutdown();
}

TEST(ControllerIt, BrokerIdsMastersAndSyncStateSetsSurviveLeaderKillAndGroupRestart) {
    TempDir dir("comet_ctl");
    ControllerGroup g(dir);
    ASSERT_TRUE(g.start_all().is_ok()) << g.logs();
    net::RemotingClient client;
    client.start();
    auto leader = wait_leader(client, g);
    ASSERT_TRUE(leader.has_value()) << g.logs();
    const uint16_t lp = g.port(*leader);
    const std::string a1 = "127.0.0.1:30911";
    const std::string a2 = "127.0.0.1:30921";

    EXPECT_EQ(join(client, lp, a1), 1);
    ASSERT_TRUE(call(client, lp, heartbeat(1, a1, 10000)).is_ok());
    auto elected = elect(client, lp, 1);
    ASSERT_TRUE(elected.is_ok());
    ASSERT_EQ(elected->code, RC::kSuccess) << elected->remark.value_or("");
    EXPECT_EQ(*elected->ext("masterBrokerId"), "1");
    EXPECT_EQ(*elected->ext("masterEpoch"), "1");

    EXPECT_EQ(join(client, lp, a2), 2);
    // Id 2 is taken now: another broker claiming it is refused.
    auto taken = call(client, lp,
                      request(Req::kControllerApplyBrokerId,
                              {{"clusterName", kCluster},
                               {"brokerName", kBroker},
                               {"appliedBrokerId", "2"},
                               {"registerCheckCode", "127.0.0.1:30931;1700000000001"}}));
    ASSERT_TRUE(taken.is_ok());
    EXPECT_EQ(taken->code, RC::kControllerBrokerIdInvalid);
    ASSERT_TRUE(call(client, lp, heartbeat(2, a2, 10000)).is_ok());
    // The master adds broker 2 to the SyncStateSet.
    auto altered = alter(client, lp, 1, 1, {1, 2}, 1);
    ASSERT_TRUE(altered.is_ok());
    ASSERT_EQ(altered->code, RC::kSuccess) << altered->remark.value_or("");
    EXPECT_EQ(*altered->ext("newSyncStateSetEpoch"), "2");
    // The same set again is refused (2013, Java's first check); another set with a stale
    // master epoch is fenced.
    auto same = alter(client, lp, 1, 1, {1, 2}, 1);
    ASSERT_TRUE(same.is_ok());
    EXPECT_EQ(same->code, RC::kControllerAlterSyncStateSetFailed);
    auto stale = alter(client, lp, 1, 0, {1}, 2);
    ASSERT_TRUE(stale.is_ok());
    EXPECT_EQ(stale->code, RC::kControllerFencedMasterEpoch);

    // kill -9 the leader: another member leads with the same state.
    g.kill(*leader);
    std::set<int> rest = {0, 1, 2};
    rest.erase(*leader);
    auto second = wait_leader(client, g, rest);
    ASSERT_TRUE(second.has_value()) << g.logs();
    ReplicaInfo ri = replica_info(client, g.port(*second));
    EXPECT_EQ(ri.code, RC::kSuccess);
    EXPECT_EQ(ri.master, 1);
    EXPECT_EQ(ri.epoch, 1);
    EXPECT_EQ(ri.sync_state_set, (std::set<int64_t>{1, 2}));
    auto next = call(client, g.port(*second),
                     request(Req::kControllerGetNextBrokerId,
                             {{"clusterName", kCluster}, {"brokerName", kBroker}}));
    ASSERT_TRUE(next.is_ok());
    EXPECT_EQ(*next->ext("nextBrokerId"), "3");

    // The whole group killed and restarted: the log on disk is the state.
    for (int i : rest) {
        g.kill(i);
    }
    ASSERT_TRUE(g.start_all().is_ok()) << g.logs();
    auto third = wait_leader(client, g);
    ASSERT_TRUE(third.has_value()) << g.logs();
    ri = replica_info(client, g.port(*third));
    EXPECT_EQ(ri.code, RC::kSuccess);
    EXPECT_EQ(ri.master, 1);
    EXPECT_EQ(ri.epoch, 1);
    EXPECT_EQ(ri.sync_state_set, (std::set<int64_t>{1, 2}));

    // mqadmin reads the same through the leader.
    auto out = run_command(dir, {binary_path("mqadmin"), "getSyncStateSet", "-a", g.addrs(), "-b",
                                 kBroker});
    EXPECT_EQ(out.exit_code, 0) << out.err;
    EXPECT_NE(out.out.find("#MasterBrokerId\t1"), std::string::npos) << out.out;
    EXPECT_NE(out.out.find("#SyncStateSetNums\t2"), std::string::npos) << out.out;
    auto md = run_command(dir, {binary_path("mqadmin"), "getControllerMetaData", "-a",
                                addr(g.port(0))});
    EXPECT_EQ(md.exit_code, 0) << md.err;
    EXPECT_NE(md.out.find("#ControllerLeaderAddress\t" + addr(g.port(*third))), std::string::npos)
        << md.out;
    client.shutdown();
}

TEST(ControllerIt, AMasterThatStopsHeartbeatingIsReplacedByAnInSyncReplicaWhichIsNotified) {
    TempDir dir("comet_ctl");
    ControllerGroup g(dir, {{"scanNotActiveBrokerInterval", "100"},
                            {"scanInactiveMasterInterval", "100"},
                            {"masterLeaseMills", "300"},
                            {"masterLeaseDriftMills", "100"}});
    ASSERT_TRUE(g.start_all().is_ok()) << g.logs();
    net::RemotingClient client;
    client.start();
    auto leader = wait_leader(client, g);
    ASSERT_TRUE(leader.has_value()) << g.logs();
    const uint16_t lp = g.port(*leader);

    // Broker 2 listens for the controller's role-change notice.
    std::mutex mu;
    std::vector<std::map<std::string, std::string>> notices;
    net::RemotingServerConfig sc;
    sc.listen_host = "127.0.0.1";
    net::RemotingServer b2(sc);
    b2.register_inline_processor(
        Req::kNotifyBrokerRoleChanged,
        net::make_processor([&](const net::ConnectionPtr&, RemotingCommand req, net::Responder r) {
            std::lock_guard<std::mutex> l(mu);
            notices.emplace_back(req.ext_fields.begin(), req.ext_fields.end());
            r(RemotingCommand::response_to(req, RC::kSuccess));
        }));
    ASSERT_TRUE(b2.start().is_ok());
    const std::string a1 = "127.0.0.1:30941";
    const std::string a2 = addr(b2.port());
    const std::string a3 = "127.0.0.1:30961";

    EXPECT_EQ(join(client, lp, a1), 1);
    EXPECT_EQ(join(client, lp, a2), 2);
    EXPECT_EQ(join(client, lp, a3), 3);
    auto beat = [&](std::initializer_list<std::pair<int64_t, std::string>> who) {
        for (const auto& [id, a] : who) {
            for (int i = 0; i < 3; ++i) {  // brokers heartbeat every controller
                (void)client.invoke_oneway(addr(g.port(i)), heartbeat(id, a, 600), 1000ms);
            }
        }
    };
    beat({{1, a1}, {2, a2}, {3, a3}});
    auto elected = elect(client, lp, 1);
    ASSERT_TRUE(elected.is_ok());
    ASSERT_EQ(elected->code, RC::kSuccess) << elected->remark.value_or("");
    auto altered = alter(client, lp, 1, 1, {1, 2}, 1);
    ASSERT_TRUE(altered.is_ok());
    ASSERT_EQ(altered->code, RC::kSuccess) << altered->remark.value_or("");

    // Broker 1 (the master) goes silent; 2 (in sync) and 3 (not in sync, higher offset) keep
    // beating. The controller must pick 2.
    ReplicaInfo ri;
    const bool moved = eventually(
        [&] {
            beat({{2, a2}, {3, a3}});
            ri = replica_info(client, lp);
            return ri.master == 2;
        },
        guard(15000ms));
    ASSERT_TRUE(moved) << "master " << ri.master << "\n" << g.logs();
    EXPECT_EQ(ri.epoch, 2);
    EXPECT_EQ(ri.sync_state_set, (std::set<int64_t>{2}));
    // Every live replica hears of every election: first of master 1 (epoch 1), then of 2.
    std::map<std::string, std::string> last;
    const bool notified = eventually(
        [&] {
            beat({{2, a2}, {3, a3}});
            std::lock_guard<std::mutex> l(mu);
            if (notices.empty()) {
                return false;
            }
            last = notices.back();
            return last["masterBrokerId"] == "2";
        },
        guard(5000ms));
    ASSERT_TRUE(notified) << g.logs();
    EXPECT_EQ(last["masterEpoch"], "2");
    EXPECT_EQ(last["masterAddress"], a2);
    {
        std::lock_guard<std::mutex> l(mu);
        EXPECT_EQ(notices.front()["masterBrokerId"], "1");
        EXPECT_EQ(notices.front()["masterEpoch"], "1");
    }

    // Now 2 goes silent too: 3 is alive but outside the SyncStateSet, so without
    // enableElectUncleanMaster nobody is elected: the master is cleared, which (as in
    // RocketMQ's SyncStateInfo.updateMasterInfo) counts as a new master epoch, once: later
    // scans (100 ms apart) leave the masterless set alone.
    const bool cleared = eventually(
        [&] {
            beat({{3, a3}});
            ri = replica_info(client, lp);
            return ri.master == -1;
        },
        guard(15000ms));
    ASSERT_TRUE(cleared) << "master " << ri.master << "\n" << g.logs();
    for (int i = 0; i < 5; ++i) {
        beat({{3, a3}});
        std::this_thread::sleep_for(100ms);
        ri = replica_info(client, lp);
        EXPECT_EQ(ri.master, -1);
        EXPECT_EQ(ri.epoch, 3);
        EXPECT_EQ(ri.sync_state_set, (std::set<int64_t>{2}));
    }
    b2.shutdown();
    client.shutdown();
}

TEST(ControllerIt, AConfigThatCannotWorkExitsTwoNamingTheKey) {
    TempDir dir("comet_ctl");
    const std::string conf = dir.sub("bad.conf");
    struct Case {
        std::map<std::string, std::string> config;
        std::string expect;
    };
    const std::vector<Case> cases = {
        {{{"controllerDLegerGroup", "g"},
          {"controllerDLegerPeers", "n0-127.0.0.1:1;n1-127.0.0.1:2;n2-127.0.0.1:3"},
          {"controllerDLegerSelfId", "n9"}},
         "controllerDLegerSelfId n9 is not among controllerDLegerPeers"},
        {{{"controllerDLegerGroup", "g"},
          {"controllerDLegerPeers", "n0-127.0.0.1:1;n0-127.0.0.1:2"},
          {"controllerDLegerSelfId", "n0"}},
         "controllerDLegerPeers: duplicate id n0"},
        {{{"controllerType", "jRaft"},
          {"controllerDLegerGroup", "g"},
          {"controllerDLegerPeers", "n0-127.0.0.1:1"},
          {"controllerDLegerSelfId", "n0"}},
         "controllerType=jRaft"},
        {{{"controllerDLegerPeers", "n0-127.0.0.1:1"}, {"controllerDLegerSelfId", "n0"}},
         "controllerDLegerGroup is not set"},
    };
    for (const Case& c : cases) {
        {
            std::ofstream out(conf, std::ios::trunc);
            for (const auto& [k, v] : c.config) {
                out << k << "=" << v << "\n";
            }
        }
        auto r = run_command(dir, {binary_path("mqcontroller"), "-c", conf});
        EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
        EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
    }
}

}  // namespace
}  // namespace comet::it
