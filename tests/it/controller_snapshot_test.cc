// Controller snapshots and log compaction with real mqcontroller processes (docs/controller.md,
// "Snapshots and log compaction"): with controllerSnapshotEveryEntries=5, many broker sets
// register and elect masters so that every member snapshots several times; a follower stopped
// (SIGSTOP) while the others compact past its log catches up by InstallSnapshot and then leads
// with the same state; kill -9 of the whole group and a restart give the same state again.
// Every wait is a bounded hang guard (harness.h), never a verdict.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include "controller_group.h"
#include "harness.h"
#include "protocol/ha_bodies.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

using namespace std::chrono_literals;
namespace RC = protocol::ResponseCode;
namespace Req = protocol::RequestCode;
using protocol::RemotingCommand;

constexpr const char* kCluster = "ClusterS";
constexpr int kSets = 12;            // registered while all three run or one is stopped
constexpr int kAllSets = kSets + 1;  // plus one registered after the catch-up

std::string set_name(int s) { return "broker-s" + std::to_string(s); }
std::string broker_addr(int s, int64_t id) {
    return "127.0.0.1:" + std::to_string(31000 + s * 10 + static_cast<int>(id));
}

bool ok(const Result<RemotingCommand>& r) { return r.is_ok() && r->code == RC::kSuccess; }

// One broker's start-up against the leader (GET_NEXT_BROKER_ID, APPLY_BROKER_ID, REGISTER,
// heartbeat), then ELECT_MASTER for itself. Returns false on any refusal.
bool join_and_elect(net::RemotingClient& client, uint16_t leader, int s) {
    const std::string name = set_name(s);
    auto next = call(client, leader,
                     request(Req::kControllerGetNextBrokerId,
                             {{"clusterName", kCluster}, {"brokerName", name}}));
    if (!ok(next)) {
        return false;
    }
    const int64_t id = std::stoll(*next->ext("nextBrokerId"));
    const std::string a = broker_addr(s, id);
    if (!ok(call(client, leader,
                 request(Req::kControllerApplyBrokerId,
                         {{"clusterName", kCluster},
                          {"brokerName", name},
                          {"appliedBrokerId", std::to_string(id)},
                          {"registerCheckCode", a + ";1700000000000"}})))) {
        return false;
    }
    if (!ok(call(client, leader,
                 request(Req::kControllerRegisterBroker, {{"clusterName", kCluster},
                                                          {"brokerName", name},
                                                          {"brokerId", std::to_string(id)},
                                                          {"brokerAddress", a}})))) {
        return false;
    }
    if (!call(client, leader,
              request(Req::kBrokerHeartbeat, {{"clusterName", kCluster},
                                              {"brokerName", name},
                                              {"brokerAddr", a},
                                              {"brokerId", std::to_string(id)},
                                              {"epoch", "0"},
                                              {"maxOffset", "0"},
                                              {"heartbeatTimeoutMills", "600000"}}))
             .is_ok()) {
        return false;
    }
    auto elected = call(client, leader,
                        request(Req::kControllerElectMaster, {{"clusterName", kCluster},
                                                              {"brokerName", name},
                                                              {"brokerId", std::to_string(id)},
                                                              {"designateElect", "false"}}));
    // The first broker becomes master; later ones find the master elected already.
    return elected.is_ok() &&
           (elected->code == RC::kSuccess || elected->code == RC::kControllerMasterStillExist);
}

// Master, epoch and SyncStateSet of every set, as GET_REPLICA_INFO answers them; "" entries
// for sets the member does not know or when it does not answer.
std::map<std::string, std::string> replica_infos(net::RemotingClient& client, uint16_t port) {
    std::map<std::string, std::string> out;
    for (int s = 0; s < kAllSets; ++s) {
        auto r = call(client, port,
                      request(Req::kControllerGetReplicaInfo, {{"brokerName", set_name(s)}}));
        std::string v;
        if (r.is_ok()) {
            v = std::to_string(r->code);
            for (const char* k : {"masterBrokerId", "masterEpoch", "syncStateSetEpoch"}) {
                const std::string* e = r->ext(k);
                v += std::string(" ") + k + "=" + (e != nullptr ? *e : "-");
            }
            if (auto body = protocol::SyncStateSet::decode(r->body); body.is_ok()) {
                v += " set=";
                for (int64_t id : body->sync_state_set) {
                    v += std::to_string(id) + ",";
                }
            }
        }
        out[set_name(s)] = v;
    }
    return out;
}

std::string read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Everything controller i logged (stdout/stderr and its log directory).
std::string all_logs(ControllerGroup& g, const TempDir& dir, int i) {
    std::string out = g.process(i) != nullptr ? read_all(g.process(i)->log_path()) : "";
    std::error_code ec;
    for (const auto& f : std::filesystem::recursive_directory_iterator(
             dir.sub("ctl-n" + std::to_string(i) + "/logs"), ec)) {
        if (f.is_regular_file()) {
            out += read_all(f.path().string());
        }
    }
    return out;
}

size_t count(const std::string& hay, const std::string& needle) {
    size_t n = 0;
    for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) {
        ++n;
    }
    return n;
}

TEST(ControllerSnapshotIt, AStoppedFollowerCatchesUpByInstallSnapshotAndRestartsKeepTheState) {
    TempDir dir("comet_ctl_snap");
    ControllerGroup g(dir, {{"controllerSnapshotEveryEntries", "5"}});
    ASSERT_TRUE(g.start_all().is_ok()) << g.logs();
    net::RemotingClient client;
    client.start();
    auto leader = wait_leader(client, g);
    ASSERT_TRUE(leader.has_value()) << g.logs();
    const uint16_t lp = g.port(*leader);
    for (int s = 0; s < kSets / 2; ++s) {
        ASSERT_TRUE(join_and_elect(client, lp, s)) << set_name(s) << g.logs();
    }

    // Stop a follower; the other two go on (a majority) and compact past its log.
    const int stopped = (*leader + 1) % 3;
    const int other = (*leader + 2) % 3;
    ASSERT_TRUE(g.process(stopped)->sigstop_and_wait().is_ok());
    for (int s = kSets / 2; s < kSets; ++s) {
        ASSERT_TRUE(join_and_elect(client, lp, s)) << set_name(s) << g.logs();
        // A second broker joins half of the sets.
        if (s % 2 == 0) {
            ASSERT_TRUE(join_and_elect(client, lp, s)) << set_name(s) << g.logs();
        }
    }
    EXPECT_GE(count(all_logs(g, dir, *leader), "compacted the log up to"), 5U);

    // Back: the leader no longer has the entries it needs, so it sends the snapshot.
    g.process(stopped)->sigcont();
    ASSERT_TRUE(eventually(
        [&] { return all_logs(g, dir, stopped).find("installed snapshot") != std::string::npos; },
        guard(15000ms)))
        << all_logs(g, dir, stopped).substr(0, 20000);
    EXPECT_NE(all_logs(g, dir, *leader).find("sending snapshot"), std::string::npos);
    // Stop the third member: one more registration commits only with the caught-up member's
    // durable ack, so it then holds every committed entry.
    ASSERT_TRUE(g.process(other)->sigstop_and_wait().is_ok());
    ASSERT_TRUE(join_and_elect(client, lp, kSets)) << g.logs();
    const auto want = replica_infos(client, lp);
    for (const auto& [name, v] : want) {
        EXPECT_EQ(v.rfind("0 masterBrokerId=1 masterEpoch=1", 0), 0U) << name << ": " << v;
    }

    // Make it the leader and ask it: kill -9 both others, bring back the old leader with its
    // store and the third member with an empty one, so that only the stopped member can win
    // (its log is the most up to date) and it answers exactly what the old leader answered.
    // (A test shortcut: outside tests a voter must never lose its hard state, or it may vote
    // twice in one term.)
    g.kill(*leader);
    g.kill(other);
    std::filesystem::remove_all(g.store(other));
    ASSERT_TRUE(g.start(other).is_ok()) << g.logs();
    auto second = wait_leader(client, g, {stopped, other});
    ASSERT_TRUE(second.has_value()) << g.logs();
    EXPECT_EQ(*second, stopped);
    EXPECT_EQ(replica_infos(client, g.port(*second)), want);
    ASSERT_TRUE(g.start(*leader).is_ok()) << g.logs();
    // The wiped member is caught up by InstallSnapshot too (the stopped one compacted as well).
    ASSERT_TRUE(eventually(
        [&] { return all_logs(g, dir, other).find("installed snapshot") != std::string::npos; },
        guard(15000ms)))
        << g.logs();

    // kill -9 every member and restart all: snapshot + the rest of the log give the same state.
    for (int i = 0; i < 3; ++i) {
        g.kill(i);
    }
    for (int i = 0; i < 3; ++i) {
        EXPECT_TRUE(std::filesystem::exists(g.store(i) + "/raft/snapshot")) << i;
    }
    ASSERT_TRUE(g.start_all().is_ok()) << g.logs();
    auto third = wait_leader(client, g);
    ASSERT_TRUE(third.has_value()) << g.logs();
    EXPECT_EQ(replica_infos(client, g.port(*third)), want);
    EXPECT_NE(all_logs(g, dir, *third).find("state restored from the snapshot"), std::string::npos);
    auto out = run_command(
        dir, {binary_path("mqadmin"), "getSyncStateSet", "-a", g.addrs(), "-b", set_name(kSets)});
    EXPECT_EQ(out.exit_code, 0) << out.err;
    EXPECT_NE(out.out.find("#MasterBrokerId\t1"), std::string::npos) << out.out;
    client.shutdown();
}

}  // namespace
}  // namespace comet::it
