// Controller mode end to end with real processes on 127.0.0.1 (docs/controller.md): three
// mqcontroller processes and three mqbroker replicas of one group with no fixed role. The
// brokers get their ids from the controller, one is elected master, the others follow it with
// the AutoSwitch HA protocol and join the SyncStateSet; a put is acknowledged once every member
// holds it. The master's kill -9 makes an in-sync replica master with a higher epoch and loses
// no acknowledged message; the old master rejoins as a slave, cut to the consistent point.
// Every wait is a bounded hang guard (harness.h), never a verdict.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "controller_group.h"
#include "harness.h"
#include "protocol/message_decoder.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

using namespace std::chrono_literals;
namespace RC = protocol::ResponseCode;

constexpr const char* kBrokerName = "broker-c";
constexpr const char* kTopic = "CtlTopic";
constexpr int kQueues = 2;

struct Replica {
    std::string name;
    uint16_t port = 0;
    std::map<std::string, std::string> config;
    std::unique_ptr<Process> process;
};

class ControllerModeIt : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::make_unique<TempDir>("comet_it_ctlmode");
        ns_port_ = free_port();
        auto ns = start_namesrv(*dir_, ns_port_);
        ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
        ns_ = std::move(ns).value();
        ASSERT_TRUE(ns_->wait_for_port(ns_port_, guard(10000ms)).is_ok()) << ns_->log_tail();
        controllers_ = std::make_unique<ControllerGroup>(
            *dir_, std::map<std::string, std::string>{{"scanNotActiveBrokerInterval", "200"},
                                                      {"scanInactiveMasterInterval", "200"},
                                                      {"masterLeaseMills", "1000"},
                                                      {"masterLeaseDriftMills", "200"}});
        ASSERT_TRUE(controllers_->start_all().is_ok()) << controllers_->logs();
        client_.start();
        for (int i = 0; i < 3; ++i) {
            Replica r;
            r.name = "ctl-broker-" + std::to_string(i);
            r.port = free_port();
            r.config = {{"brokerName", kBrokerName},
                        {"brokerId", "-1"},
                        {"brokerRole", "SLAVE"},
                        {"haListenPort", std::to_string(free_port())},
                        {"enableControllerMode", "true"},
                        {"controllerAddr", controllers_->addrs()},
                        {"allAckInSyncStateSet", "true"},
                        {"brokerHeartbeatInterval", "200"},
                        {"controllerHeartBeatTimeoutMills", "1500"},
                        {"syncBrokerMetadataPeriod", "500"},
                        {"checkSyncStateSetPeriod", "500"},
                        {"haMaxTimeSlaveNotCatchup", "3000"},
                        {"haSendHeartbeatInterval", "200"},
                        {"haHousekeepingInterval", "3000"},
                        {"slaveTimeout", "3000"},
                        {"mappedFileSizeCommitLog", std::to_string(1 << 20)}};
            replicas_.push_back(std::move(r));
        }
    }
    void TearDown() override {
        client_.shutdown();
        replicas_.clear();
        controllers_.reset();
        ns_.reset();
    }

    Status start_replica(size_t i) {
        Replica& r = replicas_[i];
        COMET_ASSIGN_OR_RETURN(r.process,
                               start_broker(*dir_, r.port, addr(ns_port_), r.config, r.name));
        return r.process->wait_for_port(r.port, guard(20000ms));
    }
    void kill_replica(size_t i) {
        replicas_[i].process->sigkill();
        (void)replicas_[i].process->wait_exit(guard(10000ms));
    }
    bool running(size_t i) {
        return replicas_[i].process != nullptr && replicas_[i].process->running();
    }
    std::map<std::string, std::string> info(size_t i) {
        auto r = runtime_info(client_, replicas_[i].port);
        return r.is_ok() ? *r : std::map<std::string, std::string>{};
    }
    std::string logs() {
        std::string out = controllers_->logs();
        for (const Replica& r : replicas_) {
            if (r.process) {
                out += "---- " + r.process->log_path() + "\n" + r.process->log_tail(4000);
            }
        }
        return out;
    }
    // The one running replica that says it is the controller's master with every running
    // replica in its SyncStateSet (-1 until then). Two masters at once fail the test.
    int master_with_full_set(size_t members) {
        int found = -1;
        for (size_t i = 0; i < replicas_.size(); ++i) {
            if (!running(i)) {
                continue;
            }
            auto m = info(i);
            if (m["controllerMaster"] != "true") {
                continue;
            }
            if (found >= 0) {
                ADD_FAILURE() << "two masters: " << found << " and " << i;
            }
            const std::string& set = m["syncStateSet"];
            if (static_cast<size_t>(std::count(set.begin(), set.end(), ',')) + 1 == members) {
                found = static_cast<int>(i);
            }
        }
        return found;
    }
    int wait_master(size_t members) {
        int m = -1;
        eventually(
            [&] {
                m = master_with_full_set(members);
                return m >= 0;
            },
            guard(20000ms));
        return m;
    }
    void create_topic_everywhere() {
        for (size_t i = 0; i < replicas_.size(); ++i) {
            if (!running(i)) {
                continue;
            }
            auto r = call(client_, replicas_[i].port, create_topic_request(kTopic, kQueues));
            ASSERT_TRUE(r.is_ok()) << r.status().to_string();
            ASSERT_EQ(r->code, RC::kSuccess) << r->remark.value_or("");
        }
    }
    std::set<std::string> read_all(size_t i) {
        std::set<std::string> out;
        for (int q = 0; q < kQueues; ++q) {
            int64_t offset = 0;
            for (int round = 0; round < 1000; ++round) {
                auto r = call(client_, replicas_[i].port,
                              pull_message_request("CtlReader", kTopic, q, offset, 32));
                if (!r.is_ok() || r->code != RC::kSuccess) {
                    break;
                }
                auto msgs = protocol::decode_messages(r->body);
                if (!msgs.is_ok() || msgs->empty()) {
                    break;
                }
                for (auto& m : *msgs) {
                    offset = m.queue_offset + 1;
                    out.insert(m.body);
                }
            }
        }
        return out;
    }

    std::unique_ptr<TempDir> dir_;
    uint16_t ns_port_ = 0;
    std::unique_ptr<Process> ns_;
    std::unique_ptr<ControllerGroup> controllers_;
    std::vector<Replica> replicas_;
    net::RemotingClient client_;
};

TEST_F(ControllerModeIt, AMasterIsElectedReplicasJoinAndItsKillLosesNoAcknowledgedMessage) {
    for (size_t i = 0; i < 3; ++i) {
        ASSERT_TRUE(start_replica(i).is_ok()) << logs();
    }
    const int first = wait_master(3);
    ASSERT_GE(first, 0) << logs();
    // Ids 1..3 from the controller, in the identity file of each store.
    std::set<std::string> ids;
    for (size_t i = 0; i < 3; ++i) {
        ids.insert(info(i)["controllerBrokerId"]);
        std::ifstream f(dir_->sub(replicas_[i].name + "/store/brokerIdentity"));
        std::string text((std::istreambuf_iterator<char>(f)), {});
        EXPECT_EQ(text.rfind("DefaultCluster#broker-c#", 0), 0u) << text;
    }
    EXPECT_EQ(ids, (std::set<std::string>{"1", "2", "3"}));
    create_topic_everywhere();

    std::set<std::string> acked;
    for (int i = 0; i < 40; ++i) {
        const std::string body = "before-" + std::to_string(i);
        auto r = call(client_, replicas_[static_cast<size_t>(first)].port,
                      send_message_request(kTopic, body, i % kQueues));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_EQ(r->code, RC::kSuccess) << r->remark.value_or("") << logs();
        acked.insert(body);
    }
    // A slave refuses sends: only the elected master writes.
    const size_t slave = static_cast<size_t>((first + 1) % 3);
    auto refused = call(client_, replicas_[slave].port, send_message_request(kTopic, "x", 0));
    ASSERT_TRUE(refused.is_ok());
    EXPECT_EQ(refused->code, RC::kServiceNotAvailable);
    // Every member holds every acknowledged message (allAckInSyncStateSet) and serves it once
    // confirmed.
    for (size_t i = 0; i < 3; ++i) {
        std::set<std::string> got;
        EXPECT_TRUE(eventually(
            [&] {
                got = read_all(i);
                return got == acked;
            },
            guard(10000ms)))
            << "replica " << i << " serves " << got.size() << " of " << acked.size();
    }
    const std::string first_epoch = info(static_cast<size_t>(first))["masterEpoch"];
    // GET_BROKER_EPOCH_CACHE: one epoch, from 0 to the master's end.
    auto cache = call(client_, replicas_[static_cast<size_t>(first)].port,
                      request(protocol::RequestCode::kGetBrokerEpochCache));
    ASSERT_TRUE(cache.is_ok()) << cache.status().to_string();
    ASSERT_EQ(cache->code, RC::kSuccess) << cache->remark.value_or("");
    const std::string max = info(static_cast<size_t>(first))["commitLogMaxOffset"];
    EXPECT_NE(cache->body.find("\"epochList\":[{\"endOffset\":" + max + ",\"epoch\":" +
                               first_epoch + ",\"startOffset\":0}]"),
              std::string::npos)
        << cache->body << " (max " << max << ")";
    auto out = run_command(*dir_, {binary_path("mqadmin"), "getBrokerEpoch", "-n", addr(ns_port_),
                                   "-b", kBrokerName});
    EXPECT_EQ(out.exit_code, 0) << out.err;
    EXPECT_NE(out.out.find("#Epoch: EpochEntry{epoch=" + first_epoch + ", startOffset=0, endOffset=" +
                           max + "}"),
              std::string::npos)
        << out.out;

    // kill -9 the master: an in-sync replica becomes master at a higher epoch.
    kill_replica(static_cast<size_t>(first));
    const int second = wait_master(2);
    ASSERT_GE(second, 0) << logs();
    ASSERT_NE(second, first);
    EXPECT_GT(std::stoi(info(static_cast<size_t>(second))["masterEpoch"]), std::stoi(first_epoch));
    EXPECT_EQ(read_all(static_cast<size_t>(second)), acked);
    for (int i = 0; i < 20; ++i) {
        const std::string body = "after-" + std::to_string(i);
        auto r = call(client_, replicas_[static_cast<size_t>(second)].port,
                      send_message_request(kTopic, body, i % kQueues));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_EQ(r->code, RC::kSuccess) << r->remark.value_or("") << logs();
        acked.insert(body);
    }

    // The old master restarts: it rejoins as a slave of the new master, with the same id, and
    // ends with the same messages and epochs.
    ASSERT_TRUE(start_replica(static_cast<size_t>(first)).is_ok()) << logs();
    ASSERT_EQ(wait_master(3), second) << logs();
    auto old = info(static_cast<size_t>(first));
    EXPECT_EQ(old["controllerMaster"], "false");
    std::set<std::string> got;
    EXPECT_TRUE(eventually(
        [&] {
            got = read_all(static_cast<size_t>(first));
            return got == acked;
        },
        guard(10000ms)))
        << got.size() << " of " << acked.size();
    EXPECT_TRUE(eventually(
        [&] {
            return info(static_cast<size_t>(first))["epochEntries"] ==
                   info(static_cast<size_t>(second))["epochEntries"];
        },
        guard(10000ms)))
        << old["epochEntries"] << " vs " << info(static_cast<size_t>(second))["epochEntries"];
}

TEST_F(ControllerModeIt, AHungSlaveLeavesTheSyncStateSetSoSendsGoOnAndRejoinsWhenItResumes) {
    for (size_t i = 0; i < 3; ++i) {
        ASSERT_TRUE(start_replica(i).is_ok()) << logs();
    }
    const int master = wait_master(3);
    ASSERT_GE(master, 0) << logs();
    create_topic_everywhere();
    const size_t hung = static_cast<size_t>((master + 1) % 3);
    ASSERT_TRUE(replicas_[hung].process->sigstop_and_wait().is_ok());

    // allAckInSyncStateSet: while the hung slave is a member a put cannot be acknowledged and
    // answers FLUSH_SLAVE_TIMEOUT after slaveTimeout, never hangs; once the master drops it
    // (haMaxTimeSlaveNotCatchup), puts are acknowledged by the two left.
    std::set<std::string> acked;
    std::set<int32_t> codes;
    int n = 0;
    const bool recovered = eventually(
        [&] {
            const std::string body = "while-hung-" + std::to_string(n);
            auto r = call(client_, replicas_[static_cast<size_t>(master)].port,
                          send_message_request(kTopic, body, n % kQueues), 10000ms);
            ++n;
            if (!r.is_ok()) {
                ADD_FAILURE() << "send " << n << ": " << r.status().to_string();
                return false;
            }
            codes.insert(r->code);
            if (r->code == RC::kSuccess) {
                acked.insert(body);
                return true;
            }
            EXPECT_EQ(r->code, RC::kFlushSlaveTimeout) << r->remark.value_or("");
            return false;
        },
        guard(30000ms));
    ASSERT_TRUE(recovered) << logs();
    EXPECT_EQ(master_with_full_set(2), master);
    for (int i = 0; i < 10; ++i) {
        const std::string body = "after-shrink-" + std::to_string(i);
        auto r = call(client_, replicas_[static_cast<size_t>(master)].port,
                      send_message_request(kTopic, body, i % kQueues));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_EQ(r->code, RC::kSuccess) << r->remark.value_or("");
        acked.insert(body);
    }

    // Resumed, it catches up and rejoins; it then holds every acknowledged message.
    replicas_[hung].process->sigcont();
    ASSERT_EQ(wait_master(3), master) << logs();
    std::set<std::string> got;
    EXPECT_TRUE(eventually(
        [&] {
            got = read_all(hung);
            return std::includes(got.begin(), got.end(), acked.begin(), acked.end());
        },
        guard(10000ms)))
        << got.size() << " of " << acked.size();
}

TEST_F(ControllerModeIt, MinInSyncReplicasRefusesSendsUntilTheSetIsLargeEnough) {
    for (Replica& r : replicas_) {
        r.config["minInSyncReplicas"] = "2";
    }
    ASSERT_TRUE(start_replica(0).is_ok()) << logs();
    ASSERT_EQ(wait_master(1), 0) << logs();
    auto t = call(client_, replicas_[0].port, create_topic_request(kTopic, kQueues));
    ASSERT_TRUE(t.is_ok() && t->code == RC::kSuccess);
    // IN_SYNC_REPLICAS_NOT_ENOUGH before anything is written: RocketMQ's SYSTEM_ERROR answer.
    auto refused = call(client_, replicas_[0].port, send_message_request(kTopic, "alone", 0));
    ASSERT_TRUE(refused.is_ok()) << refused.status().to_string();
    EXPECT_EQ(refused->code, RC::kSystemError);
    EXPECT_EQ(refused->remark.value_or(""), "in-sync replicas not enough");
    EXPECT_EQ(read_all(0), std::set<std::string>{});

    ASSERT_TRUE(start_replica(1).is_ok()) << logs();
    ASSERT_EQ(wait_master(2), 0) << logs();
    auto ok = call(client_, replicas_[0].port, send_message_request(kTopic, "pair", 0));
    ASSERT_TRUE(ok.is_ok()) << ok.status().to_string();
    EXPECT_EQ(ok->code, RC::kSuccess) << ok->remark.value_or("");
}

TEST(ControllerModeConfig, ABrokerWithoutControllersExitsTwoNamingTheKey) {
    TempDir dir("comet_it_ctlmode_cfg");
    const std::string conf = dir.sub("broker.conf");
    {
        std::ofstream out(conf);
        out << "brokerName=b\nlistenPort=0\nenableControllerMode=true\nstorePathRootDir="
            << dir.sub("store") << "\n";
    }
    auto r = run_command(dir, {binary_path("mqbroker"), "-c", conf});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("controllerAddr is not set"), std::string::npos)
        << r.out << r.err;
}

}  // namespace
}  // namespace comet::it
