// Process-level replication tests (issue 6, "Tests" 1-5): a real mqnamesrv and a broker group
// (master brokerId 0 + slaves, brokerRole SLAVE) on 127.0.0.1 with ephemeral ports. Faults are
// real: SIGKILL, SIGSTOP/SIGCONT, and a FaultProxy throttling a master→slave HA link. What each
// test proves and how to run one alone: docs/testing-replication.md.
// Every wait is bounded; the harness SIGCONTs and SIGKILLs every process on teardown.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "fault_proxy.h"
#include "harness.h"
#include "protocol/json_body.h"
#include "protocol/message_decoder.h"
#include "protocol/message_ext.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

namespace RC = protocol::ResponseCode;
namespace Req = protocol::RequestCode;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Send-response ext fields added by the broker (docs/replication.md, "Durability").
constexpr const char* kReplicasExt = "replicas";
constexpr const char* kDegradedExt = "degraded";

// Short HA timers so faults are detected within seconds (defaults: 5 s heartbeat, 20 s
// housekeeping). The heartbeat must stay well below housekeeping on both sides, or an idle
// link is dropped.
std::map<std::string, std::string> fast_ha(int housekeeping_ms = 2000) {
    return {{"haSendHeartbeatInterval", "300"},
            {"haHousekeepingInterval", std::to_string(housekeeping_ms)},
            {"flushDiskType", "ASYNC_FLUSH"}};
}

struct Sent {
    std::string body;
    int queue = 0;
    int64_t queue_offset = -1;
    std::string msg_id;
};

double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

std::string ext(const protocol::RemotingCommand& r, const std::string& key) {
    auto it = r.ext_fields.find(key);
    return it == r.ext_fields.end() ? std::string() : it->second;
}

int ext_int(const protocol::RemotingCommand& r, const std::string& key, int missing = -1) {
    const std::string v = ext(r, key);
    return v.empty() ? missing : std::stoi(v);
}

std::string body_for(const std::string& tag, int i, size_t size) {
    std::string b = tag + "-" + std::to_string(i) + "-";
    while (b.size() < size) {
        b.push_back(static_cast<char>('a' + (b.size() * 7 + static_cast<size_t>(i)) % 26));
    }
    return b;
}

std::string read_file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

class ReplicationIt : public ::testing::Test {
protected:
    void SetUp() override {
        ns_port_ = free_port();
        auto ns = start_namesrv(
            dir_, ns_port_,
            {{"brokerChannelExpiredTime", "4000"}, {"scanNotActiveBrokerInterval", "500"}});
        ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
        ns_ = std::move(ns).value();
        ASSERT_TRUE(ns_->wait_for_port(ns_port_, 10s).is_ok()) << ns_->log_tail();
        client_.start();
    }

    void TearDown() override {
        if (HasFailure() && group_ != nullptr) {
            for (BrokerNode* n : group_->nodes()) {
                if (n->process != nullptr) {
                    std::cerr << "---- log tail of " << n->name << " ----\n"
                              << n->process->log_tail(3000) << "\n";
                }
            }
        }
        client_.shutdown();
        group_.reset();
    }

    void start_group(BrokerGroupOptions o) {
        for (const auto& [k, v] : fast_ha()) {
            o.common_config.emplace(k, v);  // a test's own value wins
        }
        // These tests read slaves directly to check what they hold. RocketMQ 5 slaves serve
        // found messages whatever slaveReadEnable says; Comet's slaves only with it (see
        // SlaveServesFoundMessagesByDefault), so it is on unless a test says otherwise.
        o.common_config.emplace("slaveReadEnable", "true");
        auto g = BrokerGroup::start(dir_, addr(ns_port_), std::move(o));
        ASSERT_TRUE(g.is_ok()) << g.status().to_string();
        group_ = std::move(g).value();
    }

    BrokerNode& master() { return group_->master(); }
    BrokerNode& slave(size_t i) { return group_->slave(i); }

    // `mqadmin explainDurability -t topic`: its output, and an expectation that it ran.
    std::string explain_durability(const std::string& topic) {
        CommandResult r = run_command(dir_, {binary_path("mqadmin"), "explainDurability", "-t",
                                             topic, "-n", addr(ns_port_)});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.out;
    }
    // Each of `parts` appears in `text`.
    static void expect_contains(const std::string& text, const std::vector<std::string>& parts) {
        for (const std::string& p : parts) {
            EXPECT_NE(text.find(p), std::string::npos) << "no '" << p << "' in\n" << text;
        }
    }

    // Creates the topic on every running node (a slave's metadata sync may lag; creating it
    // on the slave directly keeps these tests about the CommitLog copy).
    void create_topic(const std::string& topic, int queues) {
        for (BrokerNode* n : group_->nodes()) {
            if (n->process == nullptr || !n->process->running()) {
                continue;
            }
            auto r = call(client_, n->port, create_topic_request(topic, queues));
            ASSERT_TRUE(r.is_ok()) << n->name << ": " << r.status().to_string();
            ASSERT_EQ(r.value().code, RC::kSuccess)
                << n->name << ": " << r.value().remark.value_or("");
        }
    }

    Result<protocol::RemotingCommand> send(BrokerNode& n, const std::string& topic,
                                           const std::string& body, int queue) {
        return call(client_, n.port, send_message_request(topic, body, queue), 10s);
    }

    // Sends to the master every 100 ms while its slaves are silent, until one answer is
    // SLAVE_NOT_AVAILABLE or `limit` since `since`; every answer must be FLUSH_SLAVE_TIMEOUT or
    // SLAVE_NOT_AVAILABLE (never SUCCESS). Bodies are tag + 1, 2, ... Returns the codes seen and
    // the number of sends (each stored on the master: both codes mean stored).
    struct HungSends {
        std::set<int> codes;
        int sends = 0;
    };
    HungSends send_until_slave_not_available(const std::string& topic, const std::string& tag,
                                             Clock::time_point since, milliseconds limit) {
        HungSends out;
        std::set<int>& codes = out.codes;
        while (codes.count(RC::kSlaveNotAvailable) == 0 && ms_since(since) < limit.count()) {
            auto r = send(master(), topic, tag + std::to_string(++out.sends), 0);
            EXPECT_TRUE(r.is_ok()) << r.status().to_string();
            if (!r.is_ok()) {
                break;
            }
            codes.insert(r.value().code);
            EXPECT_TRUE(r.value().code == RC::kFlushSlaveTimeout ||
                        r.value().code == RC::kSlaveNotAvailable)
                << "code " << r.value().code << " " << r.value().remark.value_or("");
            std::this_thread::sleep_for(100ms);
        }
        return out;
    }

    std::map<std::string, std::string> info(BrokerNode& n) {
        auto r = runtime_info(client_, n.port);
        return r.is_ok() ? std::move(r).value() : std::map<std::string, std::string>{};
    }

    int64_t info_int(BrokerNode& n, const std::string& key) {
        const auto t = info(n);
        auto it = t.find(key);
        if (it == t.end() || it->second.empty()) {
            return -1;
        }
        return std::stoll(it->second);
    }

    // Per connected slave (by brokerId): the master's view {addr, slaveAckOffset, diff, inSync}.
    std::map<int64_t, std::map<std::string, std::string>> slave_views(BrokerNode& m) {
        std::map<int64_t, std::map<std::string, std::string>> out;
        for (const auto& [k, v] : info(m)) {
            if (k.rfind("haConnectionInfo.", 0) != 0) {
                continue;
            }
            auto doc = protocol::parse_json_body(v);
            if (!doc.is_ok() || !doc.value().IsObject()) {
                continue;
            }
            std::map<std::string, std::string> view;
            int64_t id = -1;
            (void)protocol::read_int64(doc.value(), "brokerId", &id);
            for (auto it = doc.value().MemberBegin(); it != doc.value().MemberEnd(); ++it) {
                const auto& val = it->value;
                std::string s;
                if (val.IsString()) {
                    s = val.GetString();
                } else if (val.IsBool()) {
                    s = val.GetBool() ? "true" : "false";
                } else if (val.IsInt64()) {
                    s = std::to_string(val.GetInt64());
                }
                view[it->name.GetString()] = s;
            }
            out[id] = view;
        }
        return out;
    }

    bool wait_slaves_connected(size_t n, milliseconds timeout = 20s) {
        return eventually([&] { return info_int(master(), "haConnectionCount") >= int64_t(n); },
                          timeout);
    }

    // With enableSlaveActingMaster the quorum decision uses the alive replica count the master
    // polls from the name server (syncBrokerMemberGroupPeriod, 1 s); until it saw the whole
    // group, inSync = min(alive, ...) is lower and needAckNums would be too.
    bool wait_alive_replicas(int64_t n, milliseconds timeout = 15s) {
        return eventually([&] { return info_int(master(), "aliveReplicaNums") == n; }, timeout);
    }

    // The slave's CommitLog reached the master's end (and its ConsumeQueues are built).
    bool wait_caught_up(BrokerNode& s, milliseconds timeout = 20s) {
        return eventually(
            [&] {
                const int64_t m = info_int(master(), "commitLogMaxOffset");
                const auto t = info(s);
                auto max_it = t.find("commitLogMaxOffset");
                auto disp_it = t.find("dispatchedOffset");
                return m > 0 && max_it != t.end() && disp_it != t.end() &&
                       std::stoll(max_it->second) == m && std::stoll(disp_it->second) >= m;
            },
            timeout);
    }

    // Sends `count` messages round-robin over `queues`, asserting each is SUCCESS with at least
    // `min_replicas` in the durability field. Returns what was acknowledged.
    std::vector<Sent> send_acked(const std::string& topic, const std::string& tag, int count,
                                 int queues, size_t size, int min_replicas) {
        std::vector<Sent> acked;
        for (int i = 0; i < count; ++i) {
            Sent s;
            s.body = body_for(tag, i, size);
            s.queue = i % queues;
            auto r = send(master(), topic, s.body, s.queue);
            EXPECT_TRUE(r.is_ok()) << "send " << i << ": " << r.status().to_string();
            if (!r.is_ok()) {
                break;
            }
            const auto& resp = r.value();
            EXPECT_EQ(resp.code, RC::kSuccess)
                << "send " << i << ": code " << resp.code << " " << resp.remark.value_or("");
            if (resp.code != RC::kSuccess) {
                break;
            }
            EXPECT_GE(ext_int(resp, kReplicasExt), min_replicas) << "send " << i;
            EXPECT_EQ(ext(resp, kDegradedExt), "") << "send " << i;
            EXPECT_EQ(ext_int(resp, "queueId"), s.queue);
            s.queue_offset = std::stoll(ext(resp, "queueOffset"));
            s.msg_id = ext(resp, "msgId");
            acked.push_back(std::move(s));
        }
        return acked;
    }

    // Pulls queue `queue` of `topic` from node `n` from offset 0 until `want` messages came back
    // or `timeout` passed (a slave may still be dispatching what it received).
    std::vector<protocol::MessageExt> pull_queue(BrokerNode& n, const std::string& topic, int queue,
                                                 size_t want, milliseconds timeout = 15s) {
        std::vector<protocol::MessageExt> got;
        int64_t next = 0;
        const auto deadline = Clock::now() + timeout;
        while (got.size() < want && Clock::now() < deadline) {
            auto r =
                call(client_, n.port, pull_message_request("RepCG", topic, queue, next, 32), 5s);
            if (!r.is_ok()) {
                std::this_thread::sleep_for(100ms);
                continue;
            }
            const auto& resp = r.value();
            if (resp.code == RC::kSuccess) {
                auto msgs = protocol::decode_messages(resp.body);
                EXPECT_TRUE(msgs.is_ok()) << msgs.status().to_string();
                if (!msgs.is_ok()) {
                    break;
                }
                for (auto& m : msgs.value()) {
                    got.push_back(std::move(m));
                }
                next = std::stoll(ext(resp, "nextBeginOffset"));
            } else {
                last_pull_error_ =
                    n.name + ": code " + std::to_string(resp.code) + " " + resp.remark.value_or("");
                std::this_thread::sleep_for(100ms);
            }
        }
        return got;
    }

    // (queue, queueOffset) → message, every queue pulled from `n`.
    std::map<std::pair<int, int64_t>, protocol::MessageExt> pull_all(
        BrokerNode& n, const std::string& topic, const std::vector<Sent>& expect, int queues,
        milliseconds timeout = 15s) {
        std::map<int, size_t> want;
        for (const Sent& s : expect) {
            want[s.queue] = std::max<size_t>(want[s.queue], size_t(s.queue_offset + 1));
        }
        std::map<std::pair<int, int64_t>, protocol::MessageExt> out;
        for (int q = 0; q < queues; ++q) {
            for (auto& m : pull_queue(n, topic, q, want[q], timeout)) {
                out[{m.queue_id, m.queue_offset}] = std::move(m);
            }
        }
        return out;
    }

    std::string last_pull_error_;  // the last non-SUCCESS pull answer, for failure messages
    TempDir dir_{"comet_repl"};
    uint16_t ns_port_ = 0;
    std::unique_ptr<Process> ns_;
    std::unique_ptr<BrokerGroup> group_;
    net::RemotingClient client_;
};

BrokerGroupOptions three_replicas_isr2() {
    BrokerGroupOptions o;
    o.slaves = 2;
    o.master_config = {
        {"brokerRole", "SYNC_MASTER"}, {"totalReplicas", "3"}, {"inSyncReplicas", "2"}};
    return o;
}

// Issue 6, test 1: every acknowledged send is on the master and at least one slave; after
// kill -9 of the master, every acknowledged message can be pulled from a slave.
TEST_F(ReplicationIt, QuorumAckedMessagesSurviveMasterKill) {
    start_group(three_replicas_isr2());
    ASSERT_TRUE(wait_slaves_connected(2)) << master().process->log_tail();
    const std::string topic = "RepKillMaster";
    create_topic(topic, 4);

    const std::vector<Sent> acked = send_acked(topic, "kill", 200, 4, 300, 2);
    ASSERT_EQ(acked.size(), 200u);

    const std::string ack_topic = "RepAckedAt";
    create_topic(ack_topic, 1);
    // At ack time a slave held it: after an ack, the master's view of some slave's ack offset
    // is past the message's CommitLog offset (the last 16 hex digits of its offset msgId).
    for (int i = 0; i < 20; ++i) {
        auto r = send(master(), ack_topic, body_for("acked-at", i, 300), 0);
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_EQ(r.value().code, RC::kSuccess);
        const std::string id = ext(r.value(), "msgId");
        ASSERT_EQ(id.size(), 32u) << id;
        const int64_t offset = static_cast<int64_t>(std::stoull(id.substr(16), nullptr, 16));
        int64_t best_ack = -1;
        for (auto& [broker_id, view] : slave_views(master())) {
            best_ack = std::max<int64_t>(best_ack, std::stoll(view["slaveAckOffset"]));
        }
        EXPECT_GT(best_ack, offset) << "send " << i << " acked before any slave held it";
    }

    // On the master: all of them, bodies and queue offsets as acknowledged.
    const auto on_master = pull_all(master(), topic, acked, 4, 5s);
    for (const Sent& s : acked) {
        auto it = on_master.find({s.queue, s.queue_offset});
        ASSERT_NE(it, on_master.end()) << "master lacks " << s.body;
        EXPECT_EQ(it->second.body, s.body);
    }

    master().process->sigkill();
    ASSERT_TRUE(master().process->wait_exit(10s).is_ok());

    // Slaves received prefixes of the master's CommitLog; every acked message is on one of
    // them (the quorum ack came from some slave), with the same body at the same offset.
    std::vector<std::map<std::pair<int, int64_t>, protocol::MessageExt>> on_slave;
    for (size_t i = 0; i < 2; ++i) {
        on_slave.push_back(pull_all(slave(i), topic, acked, 4, 8s));
    }
    size_t on_both = 0;
    size_t lost = 0;
    std::string first_lost;
    for (const Sent& s : acked) {
        int holders = 0;
        for (auto& held : on_slave) {
            auto it = held.find({s.queue, s.queue_offset});
            if (it != held.end()) {
                EXPECT_EQ(it->second.body, s.body)
                    << "queue " << s.queue << " offset " << s.queue_offset;
                EXPECT_EQ(it->second.msg_id, s.msg_id);
                ++holders;
            }
        }
        if (holders == 0 && lost++ == 0) {
            first_lost =
                "queue " + std::to_string(s.queue) + " offset " + std::to_string(s.queue_offset);
        }
        on_both += holders == 2 ? 1 : 0;
    }
    EXPECT_EQ(lost, 0u) << "acked messages lost with the master, first at " << first_lost
                        << "; last pull answer: " << last_pull_error_;
    // Nothing more recent than what was acked was invented by a slave.
    for (auto& held : on_slave) {
        EXPECT_LE(held.size(), acked.size());
    }
    std::cout << "[ info     ] acked=" << acked.size() << " on both slaves=" << on_both << "\n";
}

// Pull semantics the durability tests rely on, with the default slaveReadEnable=false:
// RocketMQ 5 (DefaultPullMessageResultHandler) lets a slave answer a pull whose messages it
// FOUND with SUCCESS and the messages (suggesting brokerId 0); only other statuses become
// PULL_RETRY_IMMEDIATELY while the master is the group's minimum. So after kill -9 of the
// master a plain consumer still reads every replicated message from the slave.
// (This test first failed: Comet's slave answered PULL_RETRY_IMMEDIATELY with remark "FOUND" and
// no messages even when it found them; the pull processor now follows the rule above.)
TEST_F(ReplicationIt, SlaveServesFoundMessagesByDefault) {
    BrokerGroupOptions o;
    o.slaves = 1;
    o.master_config = {
        {"brokerRole", "SYNC_MASTER"}, {"totalReplicas", "2"}, {"inSyncReplicas", "2"}};
    o.common_config = fast_ha();
    o.common_config["slaveReadEnable"] = "false";
    start_group(o);
    ASSERT_TRUE(wait_slaves_connected(1));
    const std::string topic = "RepSlaveRead";
    create_topic(topic, 1);
    const std::vector<Sent> acked = send_acked(topic, "sr", 10, 1, 100, 2);
    ASSERT_EQ(acked.size(), 10u);
    ASSERT_TRUE(wait_caught_up(slave(0)));

    auto r = call(client_, slave(0).port, pull_message_request("RepCG", topic, 0, 0, 32));
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r.value().code, RC::kSuccess)
        << "slave answered " << r.value().code << " " << r.value().remark.value_or("");
    EXPECT_EQ(ext(r.value(), "suggestWhichBrokerId"), "0");
    if (r.value().code == RC::kSuccess) {
        auto msgs = protocol::decode_messages(r.value().body);
        ASSERT_TRUE(msgs.is_ok());
        ASSERT_EQ(msgs.value().size(), acked.size());
        for (size_t i = 0; i < acked.size(); ++i) {
            EXPECT_EQ(msgs.value()[i].body, acked[i].body);
        }
    }
    // Past the end: nothing found → PULL_RETRY_IMMEDIATELY back to the master (RocketMQ 5).
    auto past = call(client_, slave(0).port, pull_message_request("RepCG", topic, 0, 10, 32));
    ASSERT_TRUE(past.is_ok());
    EXPECT_EQ(past.value().code, RC::kPullRetryImmediately);

    // With the master gone, the slave's answer must carry the messages.
    master().process->sigkill();
    ASSERT_TRUE(master().process->wait_exit(10s).is_ok());
    const auto held = pull_all(slave(0), topic, acked, 1, 8s);
    EXPECT_EQ(held.size(), acked.size()) << "last pull answer: " << last_pull_error_;
}

// Issue 6, test 2 (first half): one hung slave of two → sends keep succeeding through the
// other without waiting for the hung one; after SIGCONT it reconnects and catches up.
TEST_F(ReplicationIt, OneHungSlaveDoesNotDelaySends) {
    start_group(three_replicas_isr2());
    ASSERT_TRUE(wait_slaves_connected(2));
    const std::string topic = "RepOneHung";
    create_topic(topic, 2);
    ASSERT_EQ(send_acked(topic, "warm", 5, 2, 200, 2).size(), 5u);

    ASSERT_TRUE(slave(0).process->sigstop_and_wait().is_ok());
    const int64_t timeouts_before = info_int(master(), "slaveTimeoutTotal");
    double worst_ms = 0;
    for (int i = 0; i < 40; ++i) {
        const auto t = Clock::now();
        auto r = send(master(), topic, body_for("hung1", i, 200), i % 2);
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_EQ(r.value().code, RC::kSuccess)
            << "send " << i << " code " << r.value().code << " " << r.value().remark.value_or("");
        EXPECT_GE(ext_int(r.value(), kReplicasExt), 2);
        worst_ms = std::max(worst_ms, ms_since(t));
        std::this_thread::sleep_for(50ms);  // spans the housekeeping drop of the hung slave
    }
    // A send that waited for the hung slave would have ended in FLUSH_SLAVE_TIMEOUT (checked
    // above) and counted a slave timeout.
    EXPECT_EQ(info_int(master(), "slaveTimeoutTotal"), timeouts_before);
    std::cout << "[ info     ] slowest send with one slave hung: " << worst_ms << " ms\n";
    // The master dropped the silent slave (haHousekeepingInterval 2000 ms).
    EXPECT_TRUE(eventually([&] { return info_int(master(), "haConnectionCount") == 1; }, 6s));

    slave(0).process->sigcont();
    EXPECT_TRUE(wait_slaves_connected(2, 20s)) << slave(0).process->log_tail();
    EXPECT_TRUE(wait_caught_up(slave(0)));
    EXPECT_TRUE(eventually([&] { return info_int(master(), "inSyncReplicaNums") == 3; }, 10s));
}

// Issue 6, test 2: both slaves hung, no acting master → FLUSH_SLAVE_TIMEOUT (message stored on
// the master only), then SLAVE_NOT_AVAILABLE once housekeeping dropped both; never success.
// After SIGCONT the slaves catch up and quorum writes resume.
TEST_F(ReplicationIt, BothSlavesHungFailWithoutDowngrade) {
    BrokerGroupOptions o = three_replicas_isr2();
    o.master_config["slaveTimeout"] = "1500";
    o.common_config = fast_ha(4000);
    start_group(o);
    ASSERT_TRUE(wait_slaves_connected(2));
    const std::string topic = "RepBothHung";
    create_topic(topic, 1);
    ASSERT_EQ(send_acked(topic, "warm", 3, 1, 100, 2).size(), 3u);

    ASSERT_TRUE(slave(0).process->sigstop_and_wait().is_ok());
    ASSERT_TRUE(slave(1).process->sigstop_and_wait().is_ok());
    const auto stopped = Clock::now();
    auto t = Clock::now();
    auto first = send(master(), topic, "while-both-hung-0", 0);
    ASSERT_TRUE(first.is_ok()) << first.status().to_string();
    EXPECT_EQ(first.value().code, RC::kFlushSlaveTimeout)
        << first.value().code << " " << first.value().remark.value_or("");
    EXPECT_GE(ms_since(t), 1400.0);
    EXPECT_EQ(ext_int(first.value(), kReplicasExt), 1);  // stored on the master alone

    // Until housekeeping (4 s) dropped both silent slaves; bounded in time for a broken build.
    const HungSends hung =
        send_until_slave_not_available(topic, "while-both-hung-", stopped, 60000ms);
    const std::set<int>& codes = hung.codes;
    const int sends = 1 + hung.sends;  // with while-both-hung-0
    // Housekeeping (4 s) dropped both silent slaves: no slave connected → fast failure.
    EXPECT_TRUE(codes.count(RC::kSlaveNotAvailable) == 1) << "never SLAVE_NOT_AVAILABLE";
    EXPECT_EQ(info_int(master(), "haConnectionCount"), 0);
    EXPECT_GE(info_int(master(), "slaveTimeoutTotal"), 1);

    slave(0).process->sigcont();
    slave(1).process->sigcont();
    ASSERT_TRUE(wait_slaves_connected(2, 20s));
    EXPECT_TRUE(wait_caught_up(slave(0)));
    EXPECT_TRUE(wait_caught_up(slave(1)));
    EXPECT_TRUE(eventually([&] { return info_int(master(), "inSyncReplicaNums") == 3; }, 10s));
    EXPECT_EQ(send_acked(topic, "after", 10, 1, 100, 2).size(), 10u);
    // The messages stored during the hang (FLUSH_SLAVE_TIMEOUT = stored) reached the slaves.
    auto msgs = pull_queue(slave(1), topic, 0, 3 + size_t(sends) + 10, 10s);
    EXPECT_EQ(msgs.size(), 3 + size_t(sends) + 10);
}

// Issue 6, test 2 with enableSlaveActingMaster (no auto downgrade): once both slaves fall more
// than haMaxGapNotInSync behind, sends are refused at once with IN_SYNC_REPLICAS_NOT_ENOUGH
// before anything is written.
TEST_F(ReplicationIt, ActingMasterRefusesWhenSlavesFallBehind) {
    BrokerGroupOptions o = three_replicas_isr2();
    o.master_config["slaveTimeout"] = "1500";
    o.master_config["enableSlaveActingMaster"] = "true";
    o.master_config["haMaxGapNotInSync"] = "65536";
    o.common_config = fast_ha(30000);  // keep the hung links open: the gap decides here
    start_group(o);
    ASSERT_TRUE(wait_slaves_connected(2));
    ASSERT_TRUE(wait_alive_replicas(3))
        << "aliveReplicaNums " << info_int(master(), "aliveReplicaNums");
    const std::string topic = "RepGap";
    create_topic(topic, 1);
    ASSERT_EQ(send_acked(topic, "warm", 3, 1, 100, 2).size(), 3u);

    ASSERT_TRUE(slave(0).process->sigstop_and_wait().is_ok());
    ASSERT_TRUE(slave(1).process->sigstop_and_wait().is_ok());
    // In sync by gap at first: the put waits and times out, but is stored (100 KiB > gap).
    auto first = send(master(), topic, body_for("big", 0, 100 * 1024), 0);
    ASSERT_TRUE(first.is_ok()) << first.status().to_string();
    EXPECT_EQ(first.value().code, RC::kFlushSlaveTimeout)
        << first.value().code << " " << first.value().remark.value_or("");
    const int64_t end = info_int(master(), "commitLogMaxOffset");

    const int64_t timeouts_before = info_int(master(), "slaveTimeoutTotal");
    auto second = send(master(), topic, "refused", 0);
    ASSERT_TRUE(second.is_ok()) << second.status().to_string();
    // Refused before the put: no replica wait, so no slave timeout was counted for it.
    EXPECT_EQ(info_int(master(), "slaveTimeoutTotal"), timeouts_before);
    EXPECT_EQ(second.value().code, RC::kSystemError);
    EXPECT_EQ(second.value().remark.value_or(""), "in-sync replicas not enough");
    EXPECT_EQ(info_int(master(), "commitLogMaxOffset"), end) << "a refused put was written";
    EXPECT_EQ(info_int(master(), "inSyncReplicaNums"), 1);
    EXPECT_GE(info_int(master(), "inSyncReplicasNotEnoughTotal"), 1);

    slave(0).process->sigcont();
    slave(1).process->sigcont();
    EXPECT_TRUE(eventually([&] { return info_int(master(), "inSyncReplicaNums") == 3; }, 20s));
    EXPECT_EQ(send_acked(topic, "after", 5, 1, 100, 2).size(), 5u);
}

// Issue 6, test 2 with enableAutoInSyncReplicas=true, minInSyncReplicas=1: with both slaves
// hung, sends succeed on the master alone (degraded) within the detection time; after SIGCONT
// the group returns to quorum writes.
TEST_F(ReplicationIt, AutoDowngradeWritesOnMasterAloneThenRecovers) {
    BrokerGroupOptions o = three_replicas_isr2();
    o.master_config["slaveTimeout"] = "1500";
    o.master_config["enableSlaveActingMaster"] = "true";
    o.master_config["enableAutoInSyncReplicas"] = "true";
    o.master_config["minInSyncReplicas"] = "1";
    start_group(o);  // haHousekeepingInterval 2000 ms
    ASSERT_TRUE(wait_slaves_connected(2));
    ASSERT_TRUE(wait_alive_replicas(3))
        << "aliveReplicaNums " << info_int(master(), "aliveReplicaNums");
    const std::string topic = "RepDowngrade";
    create_topic(topic, 1);
    ASSERT_EQ(send_acked(topic, "warm", 3, 1, 100, 2).size(), 3u);
    EXPECT_EQ(info_int(master(), "needAckNums"), 2);

    ASSERT_TRUE(slave(0).process->sigstop_and_wait().is_ok());
    ASSERT_TRUE(slave(1).process->sigstop_and_wait().is_ok());
    const auto stopped = Clock::now();
    bool ok = false;
    double ok_after_ms = 0;
    protocol::RemotingCommand ok_resp;
    int i = 0;
    while (!ok && ms_since(stopped) < 60000) {
        auto r = send(master(), topic, "downgrade-" + std::to_string(i++), 0);
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        if (r.value().code == RC::kSuccess) {
            ok = true;
            ok_after_ms = ms_since(stopped);
            ok_resp = r.value();
        } else {
            EXPECT_EQ(r.value().code, RC::kFlushSlaveTimeout) << r.value().remark.value_or("");
        }
    }
    ASSERT_TRUE(ok) << "no success on the master alone within 60 s";
    // How long detection took is a benchmark figure (printed below), not an assertion.
    std::cout << "[ info     ] first degraded success " << ok_after_ms << " ms after SIGSTOP\n";
    EXPECT_EQ(ext_int(ok_resp, kReplicasExt), 1);
    EXPECT_EQ(ext(ok_resp, kDegradedExt), "true");
    EXPECT_EQ(info_int(master(), "needAckNums"), 1);
    EXPECT_GE(info_int(master(), "degradedAckTotal"), 1);
    // More sends keep succeeding while the slaves are still hung, none waiting for a slave.
    const int64_t timeouts_degraded = info_int(master(), "slaveTimeoutTotal");
    for (int k = 0; k < 10; ++k) {
        auto r = send(master(), topic, "degraded-" + std::to_string(k), 0);
        ASSERT_TRUE(r.is_ok());
        EXPECT_EQ(r.value().code, RC::kSuccess);
        EXPECT_EQ(ext(r.value(), kDegradedExt), "true");
    }
    EXPECT_EQ(info_int(master(), "slaveTimeoutTotal"), timeouts_degraded);
    expect_contains(explain_durability(topic),
                    {"now: needAckNums=1 DEGRADED from inSyncReplicas=2",
                     "never below minInSyncReplicas=1"});

    slave(0).process->sigcont();
    slave(1).process->sigcont();
    ASSERT_TRUE(wait_slaves_connected(2, 20s));
    EXPECT_TRUE(wait_caught_up(slave(0)));
    EXPECT_TRUE(wait_caught_up(slave(1)));
    EXPECT_TRUE(eventually([&] { return info_int(master(), "inSyncReplicaNums") == 3; }, 10s));
    EXPECT_EQ(info_int(master(), "needAckNums"), 2);
    EXPECT_EQ(send_acked(topic, "quorum-again", 5, 1, 100, 2).size(), 5u);
}

// Issue 6, test 3: a slave whose link is throttled falls more than haMaxGapNotInSync behind,
// leaves the in-sync count (runtime info and mqadmin brokerStatus), and rejoins after the
// throttle is lifted and it caught up.
TEST_F(ReplicationIt, LaggingSlaveLeavesAndRejoinsInSyncCount) {
    BrokerGroupOptions o = three_replicas_isr2();
    o.master_config["haMaxGapNotInSync"] = std::to_string(256 * 1024);
    o.proxy_ha_links = true;
    start_group(o);
    ASSERT_TRUE(wait_slaves_connected(2));
    ASSERT_GT(slave(0).ha_proxy->stats().accepted, 0u);
    const std::string topic = "RepLag";
    create_topic(topic, 2);
    ASSERT_EQ(send_acked(topic, "warm", 4, 2, 100, 2).size(), 4u);
    EXPECT_TRUE(eventually([&] { return info_int(master(), "inSyncReplicaNums") == 3; }, 10s));

    slave(0).ha_proxy->set_rate(ProxyDirection::kDownstream, 32 * 1024);
    // 1 MiB in 16 KiB messages: the other slave acks them; the throttled one lags.
    ASSERT_EQ(send_acked(topic, "lag", 64, 2, 16 * 1024, 2).size(), 64u);
    ASSERT_TRUE(eventually([&] { return info_int(master(), "inSyncReplicaNums") == 2; }, 10s));
    auto views = slave_views(master());
    ASSERT_EQ(views.count(1), 1u);
    EXPECT_EQ(views[1]["inSync"], "false");
    EXPECT_GE(std::stoll(views[1]["diff"]), 256 * 1024);
    EXPECT_EQ(views[2]["inSync"], "true");
    EXPECT_EQ(info_int(master(), "inSyncSlaveNums"), 1);

    const std::vector<std::string> status_cmd = {
        binary_path("mqadmin"), "brokerStatus", "-b", master().address(), "-n", addr(ns_port_)};
    CommandResult lagging = run_command(dir_, status_cmd);
    ASSERT_EQ(lagging.exit_code, 0) << lagging.err;
    const size_t lag_key = lagging.out.find("inSyncReplicaNums");
    ASSERT_NE(lag_key, std::string::npos) << lagging.out;
    EXPECT_EQ(lagging.out.substr(lagging.out.find(':', lag_key), 4), ": 2\n") << lagging.out;
    EXPECT_NE(lagging.out.find("\"inSync\":false"), std::string::npos) << lagging.out;

    slave(0).ha_proxy->heal();
    EXPECT_TRUE(eventually([&] { return info_int(master(), "inSyncReplicaNums") == 3; }, 20s));
    EXPECT_TRUE(wait_caught_up(slave(0)));
    views = slave_views(master());
    EXPECT_EQ(views[1]["inSync"], "true");
    CommandResult rejoined = run_command(dir_, status_cmd);
    ASSERT_EQ(rejoined.exit_code, 0) << rejoined.err;
    const size_t key = rejoined.out.find("inSyncReplicaNums");
    ASSERT_NE(key, std::string::npos) << rejoined.out;
    EXPECT_EQ(rejoined.out.substr(rejoined.out.find(':', key), 4), ": 3\n") << rejoined.out;
    EXPECT_EQ(rejoined.out.find("\"inSync\":false"), std::string::npos) << rejoined.out;

    // The start-up line states the contract; explainDurability states it with the live state.
    EXPECT_NE(master().process->log().find("DURABILITY: a send is acknowledged once 2 of 3 "
                                           "replicas hold it"),
              std::string::npos);
    slave(0).ha_proxy->set_rate(ProxyDirection::kDownstream, 32 * 1024);
    ASSERT_EQ(send_acked(topic, "lag-again", 64, 2, 16 * 1024, 2).size(), 64u);
    ASSERT_TRUE(eventually([&] { return info_int(master(), "inSyncReplicaNums") == 2; }, 10s));
    expect_contains(explain_durability(topic),
                    {"contract: a send is acknowledged once 2 of 3 replicas hold it",
                     "now: needAckNums=2 (alive replicas", "in-sync replicas 2, master counted)",
                     "(brokerId 1): NOT in sync", "(brokerId 2): in sync"});
    slave(0).ha_proxy->heal();
}

// A partitioned HA link (the proxy closes the slave's connection and refuses new ones) costs
// the producers nothing while the other slave acks; once the link heals the slave reconnects
// on its own and catches up with everything written meanwhile.
TEST_F(ReplicationIt, PartitionedSlaveLinkHealsAndCatchesUp) {
    BrokerGroupOptions o = three_replicas_isr2();
    o.proxy_ha_links = true;
    start_group(o);
    ASSERT_TRUE(wait_slaves_connected(2));
    const std::string topic = "RepPartition";
    create_topic(topic, 2);
    std::vector<Sent> acked = send_acked(topic, "before", 6, 2, 200, 2);
    ASSERT_EQ(acked.size(), 6u);

    FaultProxy& link = *slave(0).ha_proxy;
    const uint64_t accepted_before = link.stats().accepted;
    link.set_refuse(true);
    link.drop();
    ASSERT_TRUE(eventually([&] { return info_int(master(), "haConnectionCount") == 1; }, 5s));
    EXPECT_TRUE(eventually([&] { return info(slave(0))["haClientConnected"] == "false"; }, 5s));
    for (const Sent& s : send_acked(topic, "cut", 40, 2, 200, 2)) {
        acked.push_back(s);
    }
    ASSERT_EQ(acked.size(), 46u);
    EXPECT_EQ(info_int(master(), "inSyncReplicaNums"), 2);

    link.resume();  // accept again; the slave retries on its own
    ASSERT_TRUE(wait_slaves_connected(2, 20s)) << slave(0).process->log_tail();
    EXPECT_GT(link.stats().accepted, accepted_before);
    EXPECT_TRUE(wait_caught_up(slave(0)));
    EXPECT_TRUE(eventually([&] { return info_int(master(), "inSyncReplicaNums") == 3; }, 10s));
    const auto held = pull_all(slave(0), topic, acked, 2, 10s);
    ASSERT_EQ(held.size(), acked.size()) << "last pull answer: " << last_pull_error_;
    for (const Sent& s : acked) {
        EXPECT_EQ(held.at({s.queue, s.queue_offset}).body, s.body);
    }
}

// A broker.conf written for RocketMQ 4.x (brokerRole=SYNC_MASTER, no quorum key) keeps 4.9.8's
// meaning: every send waits for a slave (CommitLog#submitReplicaRequest). A hung slave turns
// sends into FLUSH_SLAVE_TIMEOUT (stored on the master only), a slave the master dropped into
// SLAVE_NOT_AVAILABLE at once; never SEND_OK on the master's copy alone. RocketMQ 5's defaults
// (totalReplicas=inSyncReplicas=1) would acknowledge them all without the slave.
TEST_F(ReplicationIt, SyncMasterWithoutQuorumKeysWaitsForOneSlaveAs498) {
    BrokerGroupOptions o;
    o.slaves = 1;
    o.master_config = {{"brokerRole", "SYNC_MASTER"}, {"slaveTimeout", "1500"}};
    o.common_config = fast_ha(4000);
    start_group(o);
    ASSERT_TRUE(wait_slaves_connected(1));
    EXPECT_TRUE(master()
                    .process->wait_for_log("quorum rules: RocketMQ 4.9.8 (no quorum key set)", 5s)
                    .is_ok())
        << "the start-up DURABILITY line does not name the rules";
    const std::string topic = "Rep498";
    create_topic(topic, 1);
    EXPECT_EQ(info_int(master(), "needAckNums"), 2);
    expect_contains(explain_durability(topic),
                    {"rules:    RocketMQ 4.9.8 (no quorum key set)",
                     "contract: a send is acknowledged once", "and one slave"});
    // With the slave up, a send is acknowledged once the slave holds it.
    ASSERT_EQ(send_acked(topic, "with-slave", 3, 1, 100, 2).size(), 3u);

    ASSERT_TRUE(slave(0).process->sigstop_and_wait().is_ok());
    const auto stopped = Clock::now();
    auto first = send(master(), topic, "while-hung-0", 0);
    ASSERT_TRUE(first.is_ok()) << first.status().to_string();
    EXPECT_EQ(first.value().code, RC::kFlushSlaveTimeout)
        << first.value().code << " " << first.value().remark.value_or("");
    EXPECT_EQ(ext_int(first.value(), kReplicasExt), 1);  // stored on the master alone
    // Until housekeeping (4 s) dropped the silent slave; bounded in time for a broken build.
    const std::set<int> codes =
        send_until_slave_not_available(topic, "while-hung-", stopped, 30000ms).codes;
    EXPECT_EQ(codes.count(RC::kSuccess), 0u) << "acknowledged without the slave";
    EXPECT_EQ(codes.count(RC::kSlaveNotAvailable), 1u) << "never SLAVE_NOT_AVAILABLE";
    EXPECT_EQ(info_int(master(), "haConnectionCount"), 0);
    EXPECT_GE(info_int(master(), "slaveTimeoutTotal"), 1);
    EXPECT_GE(info_int(master(), "slaveNotAvailableTotal"), 1);

    slave(0).process->sigcont();
    ASSERT_TRUE(wait_slaves_connected(1, 20s));
    EXPECT_TRUE(wait_caught_up(slave(0)));
    EXPECT_EQ(send_acked(topic, "after", 3, 1, 100, 2).size(), 3u);
}

// The same two replicas with inSyncReplicas=1 written in the file: RocketMQ 5's rules, as the
// file asks (loudly warned at start): the master alone is enough and a hung slave delays nothing.
TEST_F(ReplicationIt, SyncMasterWithInSyncReplicasOneSetKeepsRocketMq5Rules) {
    BrokerGroupOptions o;
    o.slaves = 1;
    o.master_config = {{"brokerRole", "SYNC_MASTER"}, {"inSyncReplicas", "1"}};
    start_group(o);
    ASSERT_TRUE(wait_slaves_connected(1));
    EXPECT_TRUE(master().process->wait_for_log("inSyncReplicas=1", 5s).is_ok())
        << "no start-up warning about SYNC_MASTER with inSyncReplicas=1";
    EXPECT_NE(master().process->log().find("quorum rules: RocketMQ 5 (a quorum key is set)"),
              std::string::npos);
    const std::string topic = "RepAsync";
    create_topic(topic, 1);
    EXPECT_EQ(info_int(master(), "needAckNums"), 1);
    expect_contains(explain_durability(topic), {"rules:    RocketMQ 5 (a quorum key is set)"});

    ASSERT_TRUE(slave(0).process->sigstop_and_wait().is_ok());
    std::vector<Sent> acked;
    for (int i = 0; i < 20; ++i) {
        Sent s{body_for("async", i, 500), 0, -1, ""};
        auto r = send(master(), topic, s.body, 0);
        ASSERT_TRUE(r.is_ok());
        ASSERT_EQ(r.value().code, RC::kSuccess) << r.value().remark.value_or("");
        EXPECT_EQ(ext_int(r.value(), kReplicasExt), 1);  // answered before any slave held it
        s.queue_offset = std::stoll(ext(r.value(), "queueOffset"));
        acked.push_back(s);
    }
    // Answered without any replica wait: no slave timeout was counted.
    EXPECT_EQ(info_int(master(), "slaveTimeoutTotal"), 0);

    slave(0).process->sigcont();
    EXPECT_TRUE(wait_caught_up(slave(0)));
    const auto held = pull_all(slave(0), topic, acked, 1, 10s);
    ASSERT_EQ(held.size(), acked.size());
    for (const Sent& s : acked) {
        EXPECT_EQ(held.at({0, s.queue_offset}).body, s.body);
    }
}

// Issue 6, test 5: a slave restarted with an empty store copies the whole CommitLog (several
// files) byte for byte and serves the same messages at the same offsets.
TEST_F(ReplicationIt, EmptySlaveCopiesWholeCommitLog) {
    BrokerGroupOptions o;
    o.slaves = 1;
    o.master_config = {
        {"brokerRole", "SYNC_MASTER"}, {"totalReplicas", "2"}, {"inSyncReplicas", "2"}};
    o.common_config = fast_ha();
    o.common_config["mappedFileSizeCommitLog"] = std::to_string(1024 * 1024);
    start_group(o);
    ASSERT_TRUE(wait_slaves_connected(1));
    const std::string topic = "RepEmptySlave";
    create_topic(topic, 2);
    // ~2.6 MiB: three 1 MiB CommitLog files.
    std::vector<Sent> acked = send_acked(topic, "full", 320, 2, 8 * 1024, 2);
    ASSERT_EQ(acked.size(), 320u);
    ASSERT_TRUE(wait_caught_up(slave(0)));

    group_->kill_node(slave(0));
    ASSERT_TRUE(group_->start_node(slave(0), /*wipe_store=*/true).is_ok())
        << slave(0).process->log_tail();
    create_topic(topic, 2);  // the wiped store lost its topic config too
    ASSERT_TRUE(wait_caught_up(slave(0), 30s)) << slave(0).process->log_tail();

    const int64_t max = info_int(master(), "commitLogMaxOffset");
    namespace fs = std::filesystem;
    const fs::path mdir = dir_.sub(master().name + "/store/commitlog");
    const fs::path sdir = dir_.sub(slave(0).name + "/store/commitlog");
    int64_t compared = 0;
    for (int64_t base = 0; base < max; base += 1024 * 1024) {
        char name[32];
        std::snprintf(name, sizeof(name), "%020lld", static_cast<long long>(base));
        const std::string m = read_file_bytes((mdir / name).string());
        const std::string s = read_file_bytes((sdir / name).string());
        const size_t n = static_cast<size_t>(std::min<int64_t>(max - base, 1024 * 1024));
        ASSERT_GE(m.size(), n) << name;
        ASSERT_GE(s.size(), n) << "slave lacks CommitLog file " << name;
        EXPECT_TRUE(m.compare(0, n, s, 0, n) == 0) << "CommitLog file " << name << " differs";
        compared += static_cast<int64_t>(n);
    }
    EXPECT_EQ(compared, max);
    EXPECT_GE(max, 2 * 1024 * 1024);

    const auto held = pull_all(slave(0), topic, acked, 2, 10s);
    ASSERT_EQ(held.size(), acked.size());
    for (const Sent& s : acked) {
        const auto& m = held.at({s.queue, s.queue_offset});
        EXPECT_EQ(m.body, s.body);
        EXPECT_EQ(m.msg_id, s.msg_id);
    }
    // The restarted slave keeps counting for the quorum.
    EXPECT_EQ(send_acked(topic, "after", 5, 2, 100, 2).size(), 5u);
}

// A slave's CommitLog is the master's, byte for byte: a SEND_REPLY_MESSAGE_V2 sent to a slave
// (its reply is stored after the push, even when the push fails) must not append there, or the
// slave's log would hold bytes at offsets where the master writes other messages.
TEST_F(ReplicationIt, ReplyMessageSentToASlaveIsNotStoredThere) {
    BrokerGroupOptions o;
    o.slaves = 1;
    o.master_config = {
        {"brokerRole", "SYNC_MASTER"}, {"totalReplicas", "2"}, {"inSyncReplicas", "2"}};
    start_group(o);
    ASSERT_TRUE(wait_slaves_connected(1));
    const std::string topic = "RepReplyOnSlave";
    create_topic(topic, 1);
    ASSERT_EQ(send_acked(topic, "before", 3, 1, 64, 2).size(), 3u);
    ASSERT_TRUE(wait_caught_up(slave(0)));
    const int64_t slave_end = info_int(slave(0), "commitLogMaxOffset");

    auto reply = call(client_, slave(0).port,
                      reply_message_request(topic, "reply on a slave",
                                            {{"CORRELATION_ID", "corr-slave"},
                                             {"REPLY_TO_CLIENT", "127.0.0.1@nobody"}}));
    ASSERT_TRUE(reply.is_ok()) << reply.status().to_string();
    // The requester is not connected to the slave: the push fails, the store is still tried.
    EXPECT_EQ(reply.value().code, RC::kSystemError) << reply.value().remark.value_or("");
    EXPECT_EQ(reply.value().remark.value_or(""),
              "push reply message fail, channel of <127.0.0.1@nobody> not found.");
    EXPECT_EQ(info_int(slave(0), "commitLogMaxOffset"), slave_end)
        << "the slave appended a reply of its own";

    // The copy stays the master's: more sends replicate and the slave serves them all.
    const std::vector<Sent> after = send_acked(topic, "after", 3, 1, 64, 2);
    ASSERT_EQ(after.size(), 3u);
    ASSERT_TRUE(wait_caught_up(slave(0)));
    auto r = call(client_, slave(0).port, pull_message_request("RepCG", topic, 0, 3, 32));
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    ASSERT_EQ(r.value().code, RC::kSuccess) << r.value().remark.value_or("");
    auto msgs = protocol::decode_messages(r.value().body);
    ASSERT_TRUE(msgs.is_ok());
    ASSERT_EQ(msgs.value().size(), after.size());
    for (size_t i = 0; i < after.size(); ++i) {
        EXPECT_EQ(msgs.value()[i].body, after[i].body);
    }
}

}  // namespace
}  // namespace comet::it
