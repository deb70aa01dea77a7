// Dev mode (`mqbrokercontainer --dev`, the default of `make run`; docs/container.md "Dev mode")
// with real processes on 127.0.0.1: one process runs a name server and a 3-peer DLedger group;
// a client sends and consumes through it; SIGTERM stops it cleanly and a restart on the same
// directory keeps the data; removing the leader from the container makes the two peers left
// elect a new leader while sends go on, and no acknowledged message is lost.
//
// Ports: dev mode derives every port from one base (the DLedger peers must know each other's
// ports, so none is ephemeral). The test claims the whole range with free_port_range(), as
// free_port() claims its ports, so parallel test processes never collide with it. Every wait is
// a bounded hang guard.

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "client/admin_client.h"
#include "client/producer.h"
#include "client/pull_consumer.h"
#include "client_helpers.h"
#include "harness.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

using namespace std::chrono_literals;
using namespace comet::client;
namespace RC = protocol::ResponseCode;

constexpr const char* kBrokerName = "broker-dev";
constexpr const char* kReady = "Comet dev mode is ready";
constexpr int kQueues = 4;

class DevModeIt : public ::testing::Test {
protected:
    void SetUp() override {
        // Dev mode's ports span [base, base + 32] (src/container/dev_cluster.h).
        base_ = free_port_range(32);
        ASSERT_NE(base_, 0) << "no free port range for dev mode";
        dev_dir_ = dir_.sub("dev");
    }

    uint16_t ns_port() const { return static_cast<uint16_t>(base_); }
    uint16_t container_port() const { return static_cast<uint16_t>(base_ + 1); }
    uint16_t peer_port(size_t i) const { return static_cast<uint16_t>(base_ + 10 * (i + 1)); }
    std::string store(size_t i) const { return dev_dir_ + "/broker-dev-n" + std::to_string(i); }
    std::string peer_file(size_t i) const {
        return dev_dir_ + "/broker-n" + std::to_string(i) + ".properties";
    }

    // Starts `mqbrokercontainer --dev` and waits for its banner.
    std::unique_ptr<Process> start_dev(const std::string& name) {
        ProcessOptions o;
        o.name = name;
        o.binary = binary_path("mqbrokercontainer");
        o.pass_config = false;
        o.args = {"--dev", "--dev-dir", dev_dir_, "--dev-port", std::to_string(base_)};
        auto p = Process::start(o, dir_.path());
        EXPECT_TRUE(p.is_ok()) << p.status().to_string();
        if (!p.is_ok()) {
            return nullptr;
        }
        Status ready = (*p)->wait_for_log(kReady, guard(30s));
        EXPECT_TRUE(ready.is_ok()) << ready.to_string() << (*p)->log_tail();
        return std::move(p).value();
    }

    // SIGTERM: exit status 0, the stop lines printed, no abort marker in any store.
    void stop_dev(Process& p) {
        p.sigterm();
        auto code = p.wait_exit(guard(30s));
        ASSERT_TRUE(code.is_ok()) << code.status().to_string() << p.log_tail();
        EXPECT_EQ(*code, 0) << p.log_tail();
        EXPECT_NE(p.log().find("Comet dev mode: stopped; data kept in " + dev_dir_),
                  std::string::npos)
            << p.log_tail();
        for (size_t i = 0; i < 3; ++i) {
            EXPECT_TRUE(std::filesystem::is_directory(store(i))) << store(i);
            EXPECT_FALSE(std::filesystem::exists(store(i) + "/abort")) << store(i);
        }
    }

    ClientConfig client_config() const {
        ClientConfig c;
        c.namesrv_addr = addr(ns_port());
        return c;
    }

    // brokerId -> address of the dev group as the name server lists it.
    std::map<int64_t, std::string> members() {
        AdminClient admin(client_config());
        if (!admin.start().is_ok()) {
            return {};
        }
        auto info = admin.cluster_info();
        admin.shutdown();
        if (!info.is_ok()) {
            return {};
        }
        auto it = info->broker_addr_table.find(kBrokerName);
        return it == info->broker_addr_table.end() ? std::map<int64_t, std::string>{}
                                                   : it->second.broker_addrs;
    }
    // The peer registered as brokerId 0, or -1.
    int leader() {
        auto m = members();
        auto it = m.find(0);
        for (size_t i = 0; it != m.end() && i < 3; ++i) {
            if (it->second == addr(peer_port(i))) {
                return static_cast<int>(i);
            }
        }
        return -1;
    }

    // Topics live in each peer's own tables (followers copy the leader's every 10 s), so the
    // test creates its topic on every peer, as tests/it/dledger_test.cc does.
    void create_topic_everywhere(const std::string& topic) {
        net::RemotingClient client{net::RemotingClientConfig{}};
        client.start();
        for (size_t i = 0; i < 3; ++i) {
            auto r = call(client, peer_port(i), create_topic_request(topic, kQueues));
            ASSERT_TRUE(r.is_ok()) << r.status().to_string();
            ASSERT_EQ(r->code, RC::kSuccess) << r->remark.value_or("");
        }
        client.shutdown();
    }

    // Every message body of `topic`, pulled from offset 0 until `want` are all there (bounded).
    std::set<std::string> pull_all(const std::string& topic, const std::string& group,
                                   const std::set<std::string>& want) {
        return pull_bodies(client_config(), group, topic, want, guard(15s));
    }

    CommandResult mqadmin(const std::vector<std::string>& args) {
        std::vector<std::string> argv{binary_path("mqadmin")};
        argv.insert(argv.end(), args.begin(), args.end());
        return run_command(dir_, argv, guard(30s));
    }

    TempDir dir_{"comet_it_devmode"};
    int base_ = 0;
    std::string dev_dir_;
};

// One process: banner, three brokers with one master in clusterList, send and consume, a clean
// stop, and the messages still there after a restart on the same directory.
TEST_F(DevModeIt, OneProcessServesStopsCleanlyAndKeepsItsDataAcrossARestart) {
    auto dev = start_dev("dev");
    ASSERT_NE(dev, nullptr);
    const std::string out = dev->log();
    EXPECT_NE(out.find("export NAMESRV_ADDR=127.0.0.1:" + std::to_string(base_)), std::string::npos)
        << out;
    EXPECT_NE(out.find("a majority (2 of 3 peers, the leader counted) has it on disk"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("127.0.0.1:" + std::to_string(base_ + 1)), std::string::npos) << out;
    // The generated files are there for the user to read.
    for (size_t i = 0; i < 3; ++i) {
        std::ifstream in(peer_file(i));
        std::stringstream text;
        text << in.rdbuf();
        EXPECT_NE(text.str().find("dLegerSelfId=n" + std::to_string(i) + "\n"), std::string::npos)
            << peer_file(i) << ": " << text.str();
        EXPECT_NE(text.str().find("storePathRootDir=" + store(i) + "\n"), std::string::npos);
    }

    // clusterList: the three peers of broker-dev, exactly one of them master (BID 0).
    std::string listing;
    ASSERT_TRUE(eventually(
        [&] {
            auto r = mqadmin({"clusterList", "-n", addr(ns_port())});
            listing = r.out;
            int peers = 0;
            int masters = 0;
            for (const std::string& line : lines_of(r.out)) {
                std::istringstream cols(line);
                std::string cluster, name, bid;
                cols >> cluster >> name >> bid;
                if (name == kBrokerName) {
                    ++peers;
                    masters += bid == "0" ? 1 : 0;
                }
            }
            return r.exit_code == 0 && peers == 3 && masters == 1;
        },
        guard(15s)))
        << listing;

    // A second dev process on the same directory is refused before it binds anything (it would
    // share the stores).
    auto second = run_command(dir_,
                              {binary_path("mqbrokercontainer"), "--dev", "--dev-dir", dev_dir_,
                               "--dev-port", std::to_string(base_)},
                              guard(20s));
    EXPECT_EQ(second.exit_code, 1) << second.out << second.err;
    EXPECT_NE(second.err.find("is in use by another dev mode process"), std::string::npos)
        << second.err;

    create_topic_everywhere("DevTopic");
    ProducerConfig pc;
    pc.client = client_config();
    DefaultMqProducer producer(pc);
    ASSERT_TRUE(producer.start().is_ok());
    std::set<std::string> sent;
    for (int i = 0; i < 100; ++i) {
        const std::string body = "dev-" + std::to_string(i);
        auto r = producer.send(Message("DevTopic", body));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_EQ(r->status, SendStatus::kSendOk);
        EXPECT_EQ(r->message_queue.broker_name, kBrokerName);
        sent.insert(body);
    }
    producer.shutdown();
    EXPECT_EQ(pull_all("DevTopic", "DevReader1", sent), sent);

    stop_dev(*dev);
    dev.reset();

    auto again = start_dev("dev-again");
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(pull_all("DevTopic", "DevReader2", sent), sent);
    stop_dev(*again);
}

// The leader leaves the group through the container's REMOVE_BROKER (mqadmin removeBroker)
// while a producer sends: the two peers left in the process elect a new leader, sends go on,
// and every acknowledged message is read back. The removed peer, added again, rejoins.
TEST_F(DevModeIt, RemovingTheLeaderLetsTheOtherTwoPeersTakeOverWithoutLosingAcks) {
    auto dev = start_dev("dev");
    ASSERT_NE(dev, nullptr);
    create_topic_everywhere("DevFailover");
    int old_leader = -1;
    ASSERT_TRUE(eventually([&] { return (old_leader = leader()) >= 0; }, guard(10s)));

    ProducerConfig pc;
    pc.client = client_config();
    DefaultMqProducer producer(pc);
    ASSERT_TRUE(producer.start().is_ok());
    std::mutex mu;
    std::set<std::string> acked;  // guarded by mu
    std::atomic<int> ok{0};
    std::atomic<bool> stop{false};
    std::thread sender([&] {
        for (int i = 0; i < 100000 && !stop.load(); ++i) {
            const std::string body = "fo-" + std::to_string(i);
            auto r = producer.send(Message("DevFailover", body));
            if (r.is_ok() && r->status == SendStatus::kSendOk) {
                std::lock_guard<std::mutex> lock(mu);
                acked.insert(body);
                ok.fetch_add(1);
            }
        }
    });
    EXPECT_TRUE(eventually([&] { return ok.load() >= 50; }, guard(10s)));

    const std::string identity =
        std::string("DefaultCluster:") + kBrokerName + ":" + std::to_string(old_leader + 1);
    auto removed = mqadmin({"removeBroker", "-c", addr(container_port()), "-b", identity});
    EXPECT_EQ(removed.exit_code, 0) << removed.out << removed.err;
    const int before = ok.load();
    int new_leader = -1;
    EXPECT_TRUE(eventually(
        [&] {
            new_leader = leader();
            return new_leader >= 0 && new_leader != old_leader && members().size() == 2;
        },
        guard(10s)))
        << "leader " << new_leader;
    const std::string changed = "Comet dev mode: the leader is now n" + std::to_string(new_leader) +
                                " (" + addr(peer_port(static_cast<size_t>(new_leader))) + ")";
    EXPECT_TRUE(dev->wait_for_log(changed, guard(10s)).is_ok()) << dev->log_tail();
    // Sends continue on the new leader.
    EXPECT_TRUE(eventually([&] { return ok.load() >= before + 50; }, guard(15s)))
        << ok.load() << " acknowledged, " << before << " before the removal";
    stop.store(true);
    sender.join();
    producer.shutdown();
    std::set<std::string> want;
    {
        std::lock_guard<std::mutex> lock(mu);
        want = acked;
    }
    const std::set<std::string> got = pull_all("DevFailover", "DevFailoverReader", want);
    std::vector<std::string> lost;
    std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(lost));
    EXPECT_TRUE(lost.empty()) << lost.size() << " acknowledged messages lost, e.g. "
                              << (lost.empty() ? "" : lost.front());
    EXPECT_FALSE(std::filesystem::exists(store(static_cast<size_t>(old_leader)) + "/abort"));

    // The removed peer's generated file brings it back; it rejoins as a follower.
    auto added = mqadmin({"addBroker", "-c", addr(container_port()), "-b",
                          peer_file(static_cast<size_t>(old_leader))});
    EXPECT_EQ(added.exit_code, 0) << added.out << added.err;
    EXPECT_TRUE(eventually([&] { return members().size() == 3 && leader() >= 0; }, guard(10s)));
    stop_dev(*dev);
}

// Arguments dev mode refuses: exit 2 naming the problem, nothing started.
TEST_F(DevModeIt, BadDevArgumentsExit2) {
    auto mixed = run_command(
        dir_, {binary_path("mqbrokercontainer"), "--dev", "--dev-dir", dev_dir_, "-c", "x.conf"},
        guard(10s));
    EXPECT_EQ(mixed.exit_code, 2);
    EXPECT_NE(mixed.err.find("dev mode takes only"), std::string::npos) << mixed.err;
    auto port =
        run_command(dir_, {binary_path("mqbrokercontainer"), "--dev-port", "65530"}, guard(10s));
    EXPECT_EQ(port.exit_code, 2);
    EXPECT_NE(port.err.find("--dev-port"), std::string::npos) << port.err;
    EXPECT_FALSE(std::filesystem::exists(dev_dir_));
}

}  // namespace
}  // namespace comet::it
