// The controller inside the name server (enableControllerInNamesrv=true, docs/controller.md)
// with real processes on 127.0.0.1: three mqnamesrv form the controller group, three brokers in
// controller mode use them both as name servers and as controllers, and elections go on after
// the kill -9 of the name server that leads the group. Bad embedded configs exit 2 naming the
// key. Every wait is a bounded hang guard (harness.h), never a verdict.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "controller_group.h"
#include "harness.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

using namespace std::chrono_literals;
namespace RC = protocol::ResponseCode;
namespace Req = protocol::RequestCode;

constexpr const char* kBrokerName = "broker-e";
constexpr const char* kTopic = "EmbeddedCtlTopic";

struct Replica {
    std::string name;
    uint16_t port = 0;
    std::unique_ptr<Process> process;
};

// The one running replica that is the controller's master with `members` in its SyncStateSet
// (-1 until then); two masters at once fail the test.
int master_with_set(net::RemotingClient& client, std::vector<Replica>& rs, size_t members) {
    int found = -1;
    for (size_t i = 0; i < rs.size(); ++i) {
        if (!rs[i].process || !rs[i].process->running()) {
            continue;
        }
        auto m = runtime_info(client, rs[i].port);
        if (!m.is_ok() || (*m)["controllerMaster"] != "true") {
            continue;
        }
        if (found >= 0) {
            ADD_FAILURE() << "two masters: " << found << " and " << i;
        }
        const std::string& set = (*m)["syncStateSet"];
        if (static_cast<size_t>(std::count(set.begin(), set.end(), ',')) + 1 == members) {
            found = static_cast<int>(i);
        }
    }
    return found;
}

int wait_master(net::RemotingClient& client, std::vector<Replica>& rs, size_t members) {
    int m = -1;
    eventually(
        [&] {
            m = master_with_set(client, rs, members);
            return m >= 0;
        },
        guard(20000ms));
    return m;
}

std::string all_logs(ControllerGroup& g, const std::vector<Replica>& rs) {
    std::string out = g.logs();
    for (const Replica& r : rs) {
        if (r.process) {
            out += "---- " + r.process->log_path() + "\n" + r.process->log_tail(3000);
        }
    }
    return out;
}

TEST(NamesrvControllerIt, ThreeNameServersAreTheControllerGroupAndElectionsSurviveItsLeader) {
    TempDir dir("comet_it_nsctl");
    ControllerGroup g(dir,
                      {{"scanNotActiveBrokerInterval", "200"},
                       {"scanInactiveMasterInterval", "200"},
                       {"masterLeaseMills", "1000"},
                       {"masterLeaseDriftMills", "200"}},
                      ControllerHost::kNamesrv);
    ASSERT_TRUE(g.start_all().is_ok()) << g.logs();
    net::RemotingClient client;
    client.start();
    const auto leader = wait_leader(client, g);
    ASSERT_TRUE(leader.has_value()) << g.logs();
    auto md = run_command(dir, {binary_path("mqadmin"), "getControllerMetaData", "-a", g.addrs()});
    EXPECT_EQ(md.exit_code, 0) << md.err;
    EXPECT_NE(md.out.find("#ControllerLeaderAddress\t" + addr(g.port(*leader))), std::string::npos)
        << md.out;
    // As in RocketMQ, the controller answers on its peer port only; listenPort is the name
    // server's (whose BROKER_HEARTBEAT is the name server's own).
    auto on_ns = call(client, g.namesrv_port(0), request(Req::kControllerGetMetadataInfo));
    ASSERT_TRUE(on_ns.is_ok()) << on_ns.status().to_string();
    EXPECT_EQ(on_ns->code, RC::kRequestCodeNotSupported);

    std::vector<Replica> rs(3);
    for (size_t i = 0; i < rs.size(); ++i) {
        rs[i].name = "nsctl-broker-" + std::to_string(i);
        rs[i].port = free_port();
        auto p = start_broker(dir, rs[i].port, g.namesrv_addrs(),
                              {{"brokerName", kBrokerName},
                               {"brokerId", "-1"},
                               {"brokerRole", "SLAVE"},
                               {"haListenPort", std::to_string(free_port())},
                               {"enableControllerMode", "true"},
                               {"controllerAddr", g.addrs()},
                               {"allAckInSyncStateSet", "true"},
                               {"brokerHeartbeatInterval", "200"},
                               {"controllerHeartBeatTimeoutMills", "1500"},
                               {"syncBrokerMetadataPeriod", "500"},
                               {"checkSyncStateSetPeriod", "500"},
                               {"haSendHeartbeatInterval", "200"},
                               {"slaveTimeout", "3000"},
                               {"mappedFileSizeCommitLog", std::to_string(1 << 20)}},
                              rs[i].name);
        ASSERT_TRUE(p.is_ok()) << p.status().to_string();
        rs[i].process = std::move(p).value();
        ASSERT_TRUE(rs[i].process->wait_for_port(rs[i].port, guard(20000ms)).is_ok())
            << all_logs(g, rs);
    }
    const int first = wait_master(client, rs, 3);
    ASSERT_GE(first, 0) << all_logs(g, rs);
    auto epoch = [&](int i) {
        auto m = runtime_info(client, rs[static_cast<size_t>(i)].port);
        return m.is_ok() ? std::stoi((*m)["masterEpoch"]) : -1;
    };
    const int first_epoch = epoch(first);
    for (const Replica& r : rs) {
        auto c = call(client, r.port, create_topic_request(kTopic, 2));
        ASSERT_TRUE(c.is_ok() && c->code == RC::kSuccess) << all_logs(g, rs);
    }
    auto send = [&](int master, const std::string& body) {
        auto r = call(client, rs[static_cast<size_t>(master)].port,
                      send_message_request(kTopic, body, 0));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_EQ(r->code, RC::kSuccess) << r->remark.value_or("") << all_logs(g, rs);
    };
    for (int i = 0; i < 10; ++i) {
        send(first, "before-" + std::to_string(i));
    }
    // The same processes are the name servers: the master registered its topic there.
    EXPECT_TRUE(eventually(
        [&] {
            auto r = call(client, g.namesrv_port(0),
                          request(Req::kGetRouteinfoByTopic, {{"topic", kTopic}}), 1000ms);
            return r.is_ok() && r->code == RC::kSuccess &&
                   r->body.find(addr(rs[static_cast<size_t>(first)].port)) != std::string::npos;
        },
        guard(10000ms)));

    // kill -9 the name server that leads the controller group: the other two elect a leader.
    g.kill(*leader);
    std::set<int> left = {0, 1, 2};
    left.erase(*leader);
    const auto second_leader = wait_leader(client, g, left);
    ASSERT_TRUE(second_leader.has_value()) << all_logs(g, rs);
    ASSERT_NE(*second_leader, *leader);
    // ... and it elects: the master broker's kill -9 makes an in-sync replica master.
    rs[static_cast<size_t>(first)].process->sigkill();
    (void)rs[static_cast<size_t>(first)].process->wait_exit(guard(10000ms));
    const int second = wait_master(client, rs, 2);
    ASSERT_GE(second, 0) << all_logs(g, rs);
    EXPECT_NE(second, first);
    EXPECT_GT(epoch(second), first_epoch);
    for (int i = 0; i < 10; ++i) {
        send(second, "after-" + std::to_string(i));
    }
    // The killed name server comes back from its log and rejoins the group.
    ASSERT_TRUE(g.start(*leader).is_ok()) << g.logs();
    EXPECT_TRUE(wait_leader(client, g).has_value()) << g.logs();
    // SIGTERM: the controller stops first, then the name server; exit 0.
    Process& p = *g.process(*second_leader);
    p.sigterm();
    auto code = p.wait_exit(guard(10000ms));
    ASSERT_TRUE(code.is_ok()) << p.log_tail();
    EXPECT_EQ(*code, 0) << p.log_tail();
    const std::string log = p.log();
    const size_t ctl_down = log.find("embedded controller shut down");
    ASSERT_NE(ctl_down, std::string::npos) << p.log_tail();
    EXPECT_NE(log.find("name server shut down", ctl_down), std::string::npos) << p.log_tail();
    client.shutdown();
}

TEST(NamesrvControllerIt, AnEmbeddedControllerConfigThatCannotWorkExitsTwoNamingTheKey) {
    TempDir dir("comet_it_nsctl");
    const std::string conf = dir.sub("namesrv-bad.conf");
    const std::string ns_port = std::to_string(free_port());
    const std::string peers =
        "n0-127.0.0.1:" + std::to_string(free_port()) + ";n1-127.0.0.1:1;n2-127.0.0.1:2";
    struct Case {
        std::map<std::string, std::string> config;
        std::string expect;
    };
    const std::vector<Case> cases = {
        {{{"controllerDLegerGroup", "g"},
          {"controllerDLegerPeers", peers},
          {"controllerDLegerSelfId", "n9"}},
         "controllerDLegerSelfId n9 is not among controllerDLegerPeers"},
        {{{"controllerDLegerGroup", "g"}, {"controllerDLegerSelfId", "n0"}},
         "controllerDLegerPeers is empty"},
        {{{"controllerDLegerPeers", peers}, {"controllerDLegerSelfId", "n0"}},
         "controllerDLegerGroup is not set"},
        {{{"controllerDLegerGroup", "g"},
          {"controllerDLegerPeers", "n0-127.0.0.1:" + ns_port},
          {"controllerDLegerSelfId", "n0"}},
         "which is listenPort"},
    };
    for (const Case& c : cases) {
        {
            std::ofstream out(conf, std::ios::trunc);
            out << "enableControllerInNamesrv=true\nlistenHost=127.0.0.1\nlistenPort=" << ns_port
                << "\nkvConfigPath=" << dir.sub("kv.json") << "\nlogDir=" << dir.sub("logs")
                << "\n";
            for (const auto& [k, v] : c.config) {
                out << k << "=" << v << "\n";
            }
        }
        auto r = run_command(dir, {binary_path("mqnamesrv"), "-c", conf});
        EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
        EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(conf), std::string::npos) << r.err;
    }
}

TEST(NamesrvControllerIt, WithoutTheKeyControllerKeysAreIgnoredAndNoControllerListens) {
    TempDir dir("comet_it_nsctl");
    const uint16_t ns_port = free_port();
    const uint16_t peer_port = free_port();
    auto ns = start_namesrv(dir, ns_port,
                            {{"controllerDLegerGroup", "g"},
                             {"controllerDLegerPeers", "n0-127.0.0.1:" + std::to_string(peer_port)},
                             {"controllerDLegerSelfId", "n0"}});
    ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
    ASSERT_TRUE((*ns)->wait_for_port(ns_port, guard(10000ms)).is_ok()) << (*ns)->log_tail();
    EXPECT_TRUE(
        (*ns)->wait_for_log("controller key 'controllerDLegerPeers' at", guard(5000ms)).is_ok())
        << (*ns)->log_tail();
    net::RemotingClient client;
    client.start();
    auto r = call(client, peer_port, request(Req::kControllerGetMetadataInfo), 1000ms);
    EXPECT_FALSE(r.is_ok());
    client.shutdown();
}

}  // namespace
}  // namespace comet::it
