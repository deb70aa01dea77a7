// DLedger mode with real processes on 127.0.0.1 (docs/dledger.md): a 3-peer group elects one
// leader, which alone accepts writes and acknowledges them once a majority has them; followers
// refuse sends and serve committed data; the leader's kill -9 loses no acknowledged message;
// a partitioned leader stops acknowledging and, healed, loses its unreplicated tail from
// every file; WAIT=false sends, send-backs and delayed deliveries wait for the commit too.
// Every wait is a bounded hang guard (harness.h), never a verdict.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "client/producer.h"
#include "client/pull_consumer.h"
#include "harness.h"
#include "protocol/message_decoder.h"
#include "protocol/request_code.h"
#include "protocol/route_bodies.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

using namespace std::chrono_literals;
namespace RC = protocol::ResponseCode;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kBrokerName = "broker-d";
constexpr const char* kTopic = "DlTopic";
constexpr int kQueues = 4;

struct Peer {
    std::string id;    // "n0"
    std::string name;  // process / store dir name
    uint16_t port = 0;
    uint16_t dledger_port = 0;
    std::map<std::string, std::string> config;
    std::unique_ptr<Process> process;
    std::string address() const { return addr(port); }
};

// A DLedger group of N peers. With `proxied`, every directed link i -> j goes through its own
// FaultProxy (peer i's dLegerPeers lists peer j at the proxy's address), so a test can cut a
// peer off while it keeps running.
class DLedgerGroup {
public:
    // Peer i's process and store directory is <name_prefix><i> (a test that switches modes
    // reuses the stores of a master-slave group).
    DLedgerGroup(const TempDir& dir, std::string namesrv, int n, bool proxied,
                 std::map<std::string, std::string> extra = {},
                 const std::string& name_prefix = "dl-n")
        : dir_(dir), namesrv_(std::move(namesrv)) {
        for (int i = 0; i < n; ++i) {
            Peer p;
            p.id = "n" + std::to_string(i);
            p.name = name_prefix + std::to_string(i);
            p.port = free_port();
            p.dledger_port = free_port();
            peers_.push_back(std::move(p));
        }
        links_.resize(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) {
            links_[static_cast<size_t>(i)].resize(static_cast<size_t>(n));
            if (!proxied) {
                continue;
            }
            for (int j = 0; j < n; ++j) {
                if (i != j) {
                    auto proxy = FaultProxy::start("127.0.0.1", peers_[static_cast<size_t>(j)].dledger_port);
                    EXPECT_TRUE(proxy.is_ok()) << proxy.status().to_string();
                    links_[static_cast<size_t>(i)][static_cast<size_t>(j)] = std::move(proxy).value();
                }
            }
        }
        for (int i = 0; i < n; ++i) {
            std::string list;
            for (int j = 0; j < n; ++j) {
                const auto& link = links_[static_cast<size_t>(i)][static_cast<size_t>(j)];
                const uint16_t port =
                    link != nullptr ? link->port() : peers_[static_cast<size_t>(j)].dledger_port;
                list += (j > 0 ? ";" : "") + peers_[static_cast<size_t>(j)].id + "-127.0.0.1:" +
                        std::to_string(port);
            }
            Peer& p = peers_[static_cast<size_t>(i)];
            p.config = {{"brokerName", kBrokerName},
                        {"enableDLegerCommitLog", "true"},
                        {"dLegerGroup", "DlGroup"},
                        {"dLegerPeers", list},
                        {"dLegerSelfId", p.id},
                        // Small segments: a run spans several, so entries cross segment ends.
                        {"mappedFileSizeCommitLog", std::to_string(1 << 20)}};
            for (const auto& [k, v] : extra) {
                p.config[k] = v;
            }
        }
    }

    Status start_all() {
        for (size_t i = 0; i < peers_.size(); ++i) {
            COMET_RETURN_IF_ERROR(start_peer(i));
        }
        return Status::ok();
    }
    Status start_peer(size_t i) {
        Peer& p = peers_[i];
        auto proc = start_broker(dir_, p.port, namesrv_, p.config, p.name);
        if (!proc.is_ok()) {
            return proc.status();
        }
        p.process = std::move(proc).value();
        return p.process->wait_for_port(p.port, 20s);
    }
    // SIGTERM and wait: a clean shutdown (no abort marker).
    Status stop_peer(size_t i) {
        peers_[i].process->sigterm();
        auto code = peers_[i].process->wait_exit(20s);
        if (!code.is_ok()) {
            return code.status();
        }
        return *code == 0 ? Status::ok()
                          : Status::error(Errc::kInternal, "{} exited {}", peers_[i].name, *code);
    }
    void kill_peer(size_t i) {
        if (peers_[i].process != nullptr) {
            peers_[i].process->sigkill();
            (void)peers_[i].process->wait_exit(10s);
        }
    }
    bool running(size_t i) { return peers_[i].process != nullptr && peers_[i].process->running(); }
    Peer& peer(size_t i) { return peers_[i]; }
    size_t size() const { return peers_.size(); }

    // The index of the one running peer that says it is the writable leader, or -1.
    int writable_leader(net::RemotingClient& client) {
        int found = -1;
        for (size_t i = 0; i < peers_.size(); ++i) {
            if (!running(i)) {
                continue;
            }
            auto info = runtime_info(client, peers_[i].port);
            if (info.is_ok() && (*info)["dledgerRole"] == "Leader" &&
                (*info)["dledgerWritable"] == "true") {
                if (found >= 0) {
                    ADD_FAILURE() << "two writable leaders: " << peers_[static_cast<size_t>(found)].id
                                  << " and " << peers_[i].id;
                }
                found = static_cast<int>(i);
            }
        }
        return found;
    }
    int wait_leader(net::RemotingClient& client, int not_this = -1) {
        int leader = -1;
        eventually(
            [&] {
                leader = writable_leader(client);
                return leader >= 0 && leader != not_this;
            },
            10s);
        return leader != not_this ? leader : -1;
    }

    // Cuts (or restores) every link to and from peer i.
    void isolate(size_t i, bool cut) {
        for (size_t j = 0; j < peers_.size(); ++j) {
            for (FaultProxy* link : {links_[i][j].get(), links_[j][i].get()}) {
                if (link == nullptr) {
                    continue;
                }
                link->set_refuse(cut);
                if (cut) {
                    link->drop();
                } else {
                    link->heal();
                }
            }
        }
    }

private:
    const TempDir& dir_;
    std::string namesrv_;
    std::vector<Peer> peers_;
    std::vector<std::vector<std::unique_ptr<FaultProxy>>> links_;
};

class DLedgerIt : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::make_unique<TempDir>("comet_it_dledger");
        ns_port_ = free_port();
        auto ns = start_namesrv(*dir_, ns_port_);
        ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
        ns_ = std::move(ns).value();
        ASSERT_TRUE(ns_->wait_for_port(ns_port_, 10s).is_ok()) << ns_->log_tail();
        client_.start();
    }
    void TearDown() override {
        client_.shutdown();
        group_.reset();
        ns_.reset();
    }

    void start_group(bool proxied, std::map<std::string, std::string> extra = {}) {
        group_ = std::make_unique<DLedgerGroup>(*dir_, addr(ns_port_), 3, proxied, std::move(extra));
        ASSERT_TRUE(group_->start_all().is_ok());
    }
    // Topics live in each peer's own config files (RocketMQ: synced from the master every 10 s),
    // so the test creates its topic on every peer.
    void create_topic_everywhere() {
        for (size_t i = 0; i < group_->size(); ++i) {
            auto r = call(client_, group_->peer(i).port, create_topic_request(kTopic, kQueues));
            ASSERT_TRUE(r.is_ok()) << r.status().to_string();
            ASSERT_EQ(r->code, RC::kSuccess) << r->remark.value_or("");
        }
    }
    Result<protocol::RemotingCommand> send(size_t peer, const std::string& body, int queue,
                                           milliseconds timeout = 5000ms) {
        return call(client_, group_->peer(peer).port, send_message_request(kTopic, body, queue),
                    timeout);
    }
    // Every message of the topic as peer `i` serves it (pulls from offset 0 of each queue).
    std::vector<protocol::MessageExt> read_all(size_t i) { return read_all_at(group_->peer(i).port); }
    std::vector<protocol::MessageExt> read_all_at(uint16_t port) {
        std::vector<protocol::MessageExt> out;
        for (int q = 0; q < kQueues; ++q) {
            int64_t offset = 0;
            for (int round = 0; round < 10000; ++round) {
                auto r = call(client_, port,
                              pull_message_request("DlReader", kTopic, q, offset, 32));
                if (!r.is_ok() || r->code != RC::kSuccess) {
                    break;
                }
                auto msgs = protocol::decode_messages(r->body);
                EXPECT_TRUE(msgs.is_ok());
                if (!msgs.is_ok() || msgs->empty()) {
                    break;
                }
                for (auto& m : *msgs) {
                    offset = m.queue_offset + 1;
                    out.push_back(std::move(m));
                }
            }
        }
        return out;
    }
    std::map<std::string, std::string> info(size_t i) {
        auto r = runtime_info(client_, group_->peer(i).port);
        EXPECT_TRUE(r.is_ok()) << r.status().to_string();
        return r.is_ok() ? *r : std::map<std::string, std::string>{};
    }
    // Waits until every running peer has the same CommitLog end and commits all of it.
    bool converged() {
        return eventually(
            [&] {
                std::set<std::string> ends;
                for (size_t i = 0; i < group_->size(); ++i) {
                    if (!group_->running(i)) {
                        continue;
                    }
                    auto m = info(i);
                    if (m["commitLogMaxOffset"] != m["dledgerCommittedOffset"] ||
                        m["dispatchBehindBytes"] != "0") {
                        return false;
                    }
                    ends.insert(m["commitLogMaxOffset"]);
                }
                return ends.size() == 1;
            },
            20s);
    }

    std::unique_ptr<TempDir> dir_;
    uint16_t ns_port_ = 0;
    std::unique_ptr<Process> ns_;
    net::RemotingClient client_;
    std::unique_ptr<DLedgerGroup> group_;
};

TEST_F(DLedgerIt, LeaderCommitsOnMajorityAndFollowersRefuseSendsButServeCommittedData) {
    start_group(false);
    const int leader = group_->wait_leader(client_);
    ASSERT_GE(leader, 0) << "no writable leader";
    create_topic_everywhere();

    std::set<std::string> sent;
    for (int i = 0; i < 60; ++i) {
        const std::string body = "m-" + std::to_string(i);
        auto r = send(static_cast<size_t>(leader), body, i % kQueues);
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_EQ(r->code, RC::kSuccess) << r->remark.value_or("");
        EXPECT_EQ(r->ext_fields["queueOffset"], std::to_string(i / kQueues));
        sent.insert(body);
    }
    const size_t follower = static_cast<size_t>((leader + 1) % 3);
    auto refused = send(follower, "to-follower", 0);
    ASSERT_TRUE(refused.is_ok()) << refused.status().to_string();
    EXPECT_EQ(refused->code, RC::kServiceNotAvailable);
    EXPECT_NE(refused->remark.value_or("").find("not the writable leader"), std::string::npos)
        << refused->remark.value_or("");

    ASSERT_TRUE(converged());
    // The leader knows each follower's match; every peer serves the same committed messages.
    auto leader_info = info(static_cast<size_t>(leader));
    EXPECT_EQ(leader_info["dledgerPutsCommitted"], "60");
    EXPECT_EQ(leader_info["dledgerTerm"], info(follower)["dledgerTerm"]);
    const std::string peer_match = leader_info["dledgerPeerMatch"];
    EXPECT_EQ(std::count(peer_match.begin(), peer_match.end(), ';'), 2) << peer_match;
    for (size_t i = 0; i < 3; ++i) {
        std::set<std::string> got;
        for (const auto& m : read_all(i)) {
            got.insert(m.body);
        }
        EXPECT_EQ(got, sent) << "peer " << group_->peer(i).id;
    }
    EXPECT_EQ(info(follower)["dledgerLeaderId"], group_->peer(static_cast<size_t>(leader)).id);
    // The name server lists the leader as brokerId 0 and each follower under RocketMQ's follower
    // id (the digits of its peer id + 1).
    std::map<int64_t, std::string> want;
    for (size_t i = 0; i < 3; ++i) {
        want[static_cast<int>(i) == leader ? 0 : static_cast<int64_t>(i) + 1] =
            group_->peer(i).address();
    }
    std::map<int64_t, std::string> registered;
    EXPECT_TRUE(eventually(
        [&] {
            auto r = call(client_, ns_port_,
                          request(protocol::RequestCode::kGetBrokerClusterInfo));
            if (!r.is_ok() || r->code != RC::kSuccess) {
                return false;
            }
            auto ci = protocol::ClusterInfo::decode(r->body);
            if (!ci.is_ok() || ci->broker_addr_table.count(kBrokerName) == 0) {
                return false;
            }
            registered = ci->broker_addr_table.at(kBrokerName).broker_addrs;
            return registered == want;
        },
        10s))
        << "registered ids: " << registered.size();
}

TEST_F(DLedgerIt, KillingTheLeaderTenTimesLosesNoAcknowledgedMessage) {
    start_group(false);
    ASSERT_GE(group_->wait_leader(client_), 0);
    create_topic_everywhere();

    client::ProducerConfig pc;
    pc.client.namesrv_addr = addr(ns_port_);
    pc.group = "DlProducer";
    // No client retry: a retried send whose first attempt a new leader committed would be stored
    // twice, and the test checks that each acknowledged send is stored exactly once.
    pc.retry_times_when_send_failed = 0;
    pc.send_timeout = 3s;
    client::DefaultMqProducer producer(pc);
    ASSERT_TRUE(producer.start().is_ok());

    struct Ack {
        int32_t queue;
        int64_t offset;
    };
    std::mutex mu;
    std::map<std::string, Ack> acked;
    std::vector<SteadyClock::time_point> ack_times;
    int64_t not_acked = 0;
    std::atomic<bool> stop{false};
    std::thread sender([&] {
        for (int64_t i = 0; !stop.load() && i < 1'000'000; ++i) {
            const std::string key = "k" + std::to_string(i);
            auto r = producer.send(client::Message(kTopic, "body-" + key, "", key));
            std::lock_guard<std::mutex> l(mu);
            if (r.is_ok() && r->status == client::SendStatus::kSendOk) {
                acked[key] = Ack{r->message_queue.queue_id, r->queue_offset};
                ack_times.push_back(SteadyClock::now());
            } else {
                ++not_acked;
                std::this_thread::sleep_for(5ms);
            }
        }
    });
    // An ASSERT below returns early: stop and join the sender first (a joinable std::thread
    // destroyed would terminate the binary and leave the group's processes running).
    struct JoinOnExit {
        std::atomic<bool>& flag;
        std::thread& worker;
        ~JoinOnExit() {
            flag.store(true);
            if (worker.joinable()) {
                worker.join();
            }
        }
    } join_sender{stop, sender};
    auto acked_count = [&] {
        std::lock_guard<std::mutex> l(mu);
        return acked.size();
    };

    std::mt19937 rng(std::random_device{}());
    std::vector<double> gaps_ms;
    for (int round = 0; round < 10; ++round) {
        const size_t base = acked_count();
        const size_t want = base + 20 + rng() % 180;
        ASSERT_TRUE(eventually([&] { return acked_count() >= want; }, 30s))
            << "round " << round << ": sends stalled at " << acked_count();
        const int leader = group_->writable_leader(client_);
        ASSERT_GE(leader, 0) << "round " << round;
        const auto killed_at = SteadyClock::now();
        group_->kill_peer(static_cast<size_t>(leader));
        const int next = group_->wait_leader(client_, leader);
        ASSERT_GE(next, 0) << "round " << round << ": no new leader";
        const size_t at_kill = acked_count();
        ASSERT_TRUE(eventually([&] { return acked_count() > at_kill; }, 30s))
            << "round " << round << ": no send succeeded after the kill";
        {
            std::lock_guard<std::mutex> l(mu);
            // The write gap: the longest pause between two acks ending within 10 s of the
            // kill (acks are a few ms apart otherwise; one may still come from the dying leader).
            double gap = 0;
            for (size_t k = 1; k < ack_times.size(); ++k) {
                if (ack_times[k] > killed_at && ack_times[k] < killed_at + 10s) {
                    gap = std::max(gap, std::chrono::duration<double, std::milli>(
                                            ack_times[k] - ack_times[k - 1])
                                            .count());
                }
            }
            gaps_ms.push_back(gap);
        }
        ASSERT_TRUE(group_->start_peer(static_cast<size_t>(leader)).is_ok()) << "round " << round;
    }
    stop.store(true);
    sender.join();
    std::string gaps;
    for (double g : gaps_ms) {
        gaps += std::to_string(static_cast<int>(g)) + " ";
    }
    std::printf("write gaps around each leader kill (ms): %s; acked %zu, not acked %lld\n",
                gaps.c_str(), acked.size(), static_cast<long long>(not_acked));

    ASSERT_TRUE(converged());
    const int leader = group_->wait_leader(client_);
    ASSERT_GE(leader, 0);
    std::map<std::string, int> seen;
    std::map<int32_t, std::set<int64_t>> offsets;
    for (const auto& m : read_all(static_cast<size_t>(leader))) {
        const std::string* k = m.properties.get(protocol::property::kKeys);
        const std::string key = k != nullptr ? *k : "";
        ++seen[key];
        EXPECT_TRUE(offsets[m.queue_id].insert(m.queue_offset).second)
            << "queue " << m.queue_id << " offset " << m.queue_offset << " used twice";
        auto it = acked.find(key);
        if (it != acked.end()) {
            EXPECT_EQ(it->second.queue, m.queue_id) << key;
            EXPECT_EQ(it->second.offset, m.queue_offset) << key;
        }
    }
    for (const auto& [key, ack] : acked) {
        EXPECT_EQ(seen[key], 1) << "acknowledged " << key << " stored " << seen[key] << " times";
    }
    for (const auto& [queue, offs] : offsets) {
        ASSERT_FALSE(offs.empty());
        EXPECT_EQ(*offs.begin(), 0) << "queue " << queue;
        EXPECT_EQ(*offs.rbegin(), static_cast<int64_t>(offs.size()) - 1) << "queue " << queue
                                                                         << " has holes";
    }
}

TEST_F(DLedgerIt, PartitionedLeaderStopsAcknowledgingAndLosesItsTailAfterHealing) {
    start_group(true);
    const int old_leader = group_->wait_leader(client_);
    ASSERT_GE(old_leader, 0);
    const auto old = static_cast<size_t>(old_leader);
    create_topic_everywhere();
    std::set<std::string> acked;
    for (int i = 0; i < 20; ++i) {
        const std::string body = "before-" + std::to_string(i);
        auto r = send(old, body, i % kQueues);
        ASSERT_TRUE(r.is_ok() && r->code == RC::kSuccess);
        acked.insert(body);
    }

    group_->isolate(old, true);
    // Sends to the cut-off leader: none is acknowledged. The first ones are written and
    // proposed there (their outcome is unknown to the client), later ones refused outright.
    std::set<int32_t> codes;
    for (int i = 0; i < 10; ++i) {
        auto r = send(old, "cut-" + std::to_string(i), i % kQueues, 10000ms);
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        EXPECT_NE(r->code, RC::kSuccess) << "cut-" << i << " acknowledged by a partitioned leader";
        codes.insert(r->code);
    }
    EXPECT_TRUE(codes.count(RC::kFlushSlaveTimeout) + codes.count(RC::kServiceNotAvailable) ==
                codes.size());
    // It stepped down by itself (check-quorum) while still running.
    EXPECT_TRUE(eventually([&] { return info(old)["dledgerRole"] != "Leader"; }, 10s));
    const int next = group_->wait_leader(client_, old_leader);
    ASSERT_GE(next, 0);
    for (int i = 0; i < 20; ++i) {
        const std::string body = "after-" + std::to_string(i);
        auto r = send(static_cast<size_t>(next), body, i % kQueues);
        ASSERT_TRUE(r.is_ok() && r->code == RC::kSuccess) << r->remark.value_or("");
        acked.insert(body);
    }
    group_->isolate(old, false);
    ASSERT_TRUE(converged());
    auto healed = info(old);
    std::string code_list;
    for (int32_t c : codes) {
        code_list += std::to_string(c) + " ";
    }
    std::printf("cut-off leader answered codes %s; truncated %s bytes after healing\n",
                code_list.c_str(), healed["dledgerTruncatedBytes"].c_str());
    EXPECT_EQ(healed["dledgerLeaderId"], group_->peer(static_cast<size_t>(next)).id);
    if (codes.count(RC::kFlushSlaveTimeout) > 0) {
        // Some cut-off sends were written there: that tail is cut from its CommitLog.
        EXPECT_GT(std::stoll(healed["dledgerTruncatedBytes"]), 0);
    }
    for (size_t i = 0; i < 3; ++i) {
        std::set<std::string> got;
        for (const auto& m : read_all(i)) {
            EXPECT_EQ(m.body.rfind("cut-", 0), std::string::npos)
                << "peer " << group_->peer(i).id << " serves unacknowledged " << m.body;
            got.insert(m.body);
        }
        EXPECT_EQ(got, acked) << "peer " << group_->peer(i).id;
    }
}

// A leader cut off from its followers stays leader for 3 to 6 s with these timeouts
// (check-quorum looks back one minimum election timeout), so the writes below reach it while
// it still believes it leads. Delay level 1 is due after 1 s.
std::map<std::string, std::string> slow_elections() {
    return {{"dLegerElectionTimeoutMinMs", "3000"},
            {"dLegerElectionTimeoutMaxMs", "4000"},
            {"messageDelayLevel", "1s 2s 3s"}};
}

// CONSUMER_SEND_MSG_BACK of the message at `offset` for `group`: delay level -1 sends it
// straight to the group's DLQ.
protocol::RemotingCommand send_back_request(int64_t offset, const std::string& group,
                                            int delay_level) {
    return request(protocol::RequestCode::kConsumerSendMsgBack,
                   {{"offset", std::to_string(offset)},
                    {"group", group},
                    {"delayLevel", std::to_string(delay_level)},
                    {"originTopic", kTopic},
                    {"maxReconsumeTimes", "16"}});
}

// The bodies of every message of `topic` (queues 0..queues-1) as the peer at `port` serves it.
std::set<std::string> bodies_at(net::RemotingClient& client, uint16_t port,
                                const std::string& topic, int queues) {
    std::set<std::string> out;
    for (int q = 0; q < queues; ++q) {
        int64_t offset = 0;
        for (int round = 0; round < 1000; ++round) {
            auto r = call(client, port, pull_message_request("DlReader", topic, q, offset, 32));
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

// Delay level `level`'s offset in GET_ALL_DELAY_OFFSET's table ({"offsetTable":{"1":N}}); 0
// when the level has none, -1 when the request failed.
int64_t delay_offset(net::RemotingClient& client, uint16_t port, int level) {
    auto r = call(client, port, request(protocol::RequestCode::kGetAllDelayOffset));
    if (!r.is_ok() || r->code != RC::kSuccess) {
        return -1;
    }
    const std::string key = "\"" + std::to_string(level) + "\":";
    const size_t at = r->body.find(key);
    return at == std::string::npos ? 0 : std::atoll(r->body.c_str() + at + key.size());
}

TEST_F(DLedgerIt, WaitFalseSendsAndSendBacksToACutOffLeaderAreAnsweredOnlyOnceCommitted) {
    start_group(true, slow_elections());
    const int leader = group_->wait_leader(client_);
    ASSERT_GE(leader, 0);
    const auto old = static_cast<size_t>(leader);
    create_topic_everywhere();
    const std::string dlq = "%DLQ%DlBackGroup";
    for (size_t i = 0; i < group_->size(); ++i) {
        auto r = call(client_, group_->peer(i).port, create_topic_request(dlq, 1));
        ASSERT_TRUE(r.is_ok() && r->code == RC::kSuccess);
    }
    auto first = send(old, "consumed-and-failed", 0);
    ASSERT_TRUE(first.is_ok() && first->code == RC::kSuccess);
    ASSERT_TRUE(converged());
    int64_t first_offset = -1;
    for (const auto& m : read_all(old)) {
        first_offset =
            m.queue_id == 0 && m.body == "consumed-and-failed" ? m.commit_log_offset : first_offset;
    }
    ASSERT_GE(first_offset, 0);

    group_->isolate(old, true);
    // At once, while the cut-off peer still leads: two WAIT=false sends and a send-back, each
    // on its own thread so that all of them reach it before it steps down.
    const uint16_t port = group_->peer(old).port;
    std::vector<Result<protocol::RemotingCommand>> answers(3, Status::error(Errc::kInternal, "-"));
    {
        std::vector<std::thread> callers;
        for (int i = 0; i < 2; ++i) {
            callers.emplace_back([&, i] {
                answers[static_cast<size_t>(i)] =
                    call(client_, port,
                         send_message_request(kTopic, "nowait-" + std::to_string(i), i + 1,
                                              {{"WAIT", "false"}}),
                         15000ms);
            });
        }
        callers.emplace_back([&] {
            answers[2] =
                call(client_, port, send_back_request(first_offset, "DlBackGroup", -1), 15000ms);
        });
        for (auto& t : callers) {
            t.join();
        }
    }
    std::set<std::string> acked = {"consumed-and-failed"};
    bool send_back_acked = false;
    for (size_t i = 0; i < answers.size(); ++i) {
        ASSERT_TRUE(answers[i].is_ok()) << i << ": " << answers[i].status().to_string();
        const int32_t code = answers[i]->code;
        // Nothing can commit while the leader is cut off: an acknowledgement here is a lie.
        EXPECT_NE(code, RC::kSuccess) << "answer " << i << " acknowledged by a cut-off leader";
        if (i < 2) {
            EXPECT_TRUE(code == RC::kSuccess || code == RC::kFlushSlaveTimeout ||
                        code == RC::kServiceNotAvailable)
                << i << ": " << code << " " << answers[i]->remark.value_or("");
            if (code == RC::kSuccess) {
                acked.insert("nowait-" + std::to_string(i));
            }
        } else {
            // RocketMQ answers a send-back that is not PUT_OK with SYSTEM_ERROR.
            EXPECT_TRUE(code == RC::kSuccess || code == RC::kSystemError ||
                        code == RC::kServiceNotAvailable)
                << code << " " << answers[i]->remark.value_or("");
            send_back_acked = code == RC::kSuccess;
        }
    }

    std::printf("cut-off leader answered: WAIT=false sends %d %d, send-back %d (%s)\n",
                answers[0]->code, answers[1]->code, answers[2]->code,
                answers[2]->remark.value_or("").c_str());
    // It steps down by itself (check-quorum); until then it may still call itself leader
    // beside the new one, in an older term.
    EXPECT_TRUE(eventually([&] { return info(old)["dledgerRole"] != "Leader"; }, 15s));
    const int next = group_->wait_leader(client_, leader);
    ASSERT_GE(next, 0);
    group_->isolate(old, false);
    ASSERT_TRUE(converged());
    // Whatever was acknowledged is in every peer's view after the heal.
    for (size_t i = 0; i < group_->size(); ++i) {
        const std::set<std::string> got = bodies_at(client_, group_->peer(i).port, kTopic, kQueues);
        for (const std::string& body : acked) {
            EXPECT_EQ(got.count(body), 1u)
                << "acknowledged " << body << " lost on peer " << group_->peer(i).id;
        }
        if (send_back_acked) {
            EXPECT_EQ(bodies_at(client_, group_->peer(i).port, dlq, 1).count("consumed-and-failed"),
                      1u)
                << "acknowledged send-back lost on peer " << group_->peer(i).id;
        }
    }
}

TEST_F(DLedgerIt, ADelayedDeliveryOnACutOffLeaderDoesNotAdvanceItsScheduleOffset) {
    start_group(true, slow_elections());
    const int leader = group_->wait_leader(client_);
    ASSERT_GE(leader, 0);
    const auto old = static_cast<size_t>(leader);
    create_topic_everywhere();
    const int64_t end_before = std::atoll(info(old)["commitLogMaxOffset"].c_str());
    // Committed (WAIT=true is answered once a majority has it), due 1 s later.
    auto r = call(client_, group_->peer(old).port,
                  send_message_request(kTopic, "delayed", 0, {{"DELAY", "1"}}));
    ASSERT_TRUE(r.is_ok() && r->code == RC::kSuccess) << (r.is_ok() ? r->remark.value_or("") : "");
    group_->isolate(old, true);
    const int64_t end_isolated = std::atoll(info(old)["commitLogMaxOffset"].c_str());
    ASSERT_GT(end_isolated, end_before);
    // The due delivery is written on the cut-off leader (its CommitLog grows) but never
    // committed there: its schedule offset must stay where it was.
    EXPECT_TRUE(eventually(
        [&] { return std::atoll(info(old)["commitLogMaxOffset"].c_str()) > end_isolated; }, 10s))
        << "the cut-off leader never tried the delivery";
    EXPECT_TRUE(eventually([&] { return info(old)["dledgerRole"] != "Leader"; }, 15s));
    EXPECT_EQ(delay_offset(client_, group_->peer(old).port, 1), 0)
        << "the schedule offset advanced past a delivery no majority holds";

    const int next = group_->wait_leader(client_, leader);
    ASSERT_GE(next, 0);
    group_->isolate(old, false);
    // The new leader delivers it; after the heal every peer serves it.
    EXPECT_TRUE(eventually(
        [&] {
            for (size_t i = 0; i < group_->size(); ++i) {
                if (bodies_at(client_, group_->peer(i).port, kTopic, kQueues).count("delayed") ==
                    0) {
                    return false;
                }
            }
            return true;
        },
        20s));
}

// A short soak: a producer (half its messages delayed, every other one WAIT=false) and a
// consumer that fails half of what it reads (send-backs: retries through the schedule service)
// run while the leader is killed -9 or cut off, six times. Each thread talks to the peer that
// last answered SUCCESS and moves on at any other answer. Every acknowledged message, delayed
// delivery and retry must be delivered, on every peer.
TEST_F(DLedgerIt, KillsAndPartitionsLoseNoAcknowledgedMessageDelayedDeliveryOrRetry) {
    start_group(true, {{"messageDelayLevel", "1s 2s 3s"}});
    ASSERT_GE(group_->wait_leader(client_), 0);
    create_topic_everywhere();
    const std::string retry_topic = "%RETRY%DlSoak";
    for (size_t i = 0; i < group_->size(); ++i) {
        auto r = call(client_, group_->peer(i).port, create_topic_request(retry_topic, 1));
        ASSERT_TRUE(r.is_ok() && r->code == RC::kSuccess);
    }
    std::mutex mu;
    std::set<std::string> want_topic;  // acknowledged sends, plain and delayed
    std::set<std::string> want_retry;  // originals of acknowledged send-backs
    std::atomic<int64_t> failed{0};
    std::atomic<bool> stop{false};
    std::vector<uint16_t> ports;
    for (size_t i = 0; i < group_->size(); ++i) {
        ports.push_back(group_->peer(i).port);
    }
    std::thread producer([&] {
        size_t cur = 0;
        for (int n = 0; !stop.load() && n < 100000; ++n) {
            const std::string body = "p-" + std::to_string(n);
            std::map<std::string, std::string> props;
            if (n % 2 == 0) {
                props["DELAY"] = n % 4 == 0 ? "1" : "2";
            }
            if (n % 3 == 0) {
                props["WAIT"] = "false";
            }
            auto r = call(client_, ports[cur],
                          send_message_request(kTopic, body, n % kQueues, props), 8000ms);
            if (r.is_ok() && r->code == RC::kSuccess) {
                std::lock_guard<std::mutex> l(mu);
                want_topic.insert(body);
            } else {
                failed.fetch_add(1);
                cur = (cur + 1) % ports.size();
                std::this_thread::sleep_for(20ms);
            }
        }
    });
    std::thread consumer([&] {
        size_t cur = 0;
        std::set<std::string> done;
        for (int pass = 0; !stop.load() && pass < 100000; ++pass) {
            std::this_thread::sleep_for(100ms);
            for (const auto& m : read_all_at(ports[cur])) {
                if ((m.body.back() - '0') % 2 == 1 || done.count(m.body) > 0) {
                    continue;  // consumed fine, or already sent back
                }
                auto r = call(client_, ports[cur],
                              send_back_request(m.commit_log_offset, "DlSoak", 1), 8000ms);
                if (!r.is_ok() || r->code != RC::kSuccess) {
                    failed.fetch_add(1);
                    cur = (cur + 1) % ports.size();
                    break;
                }
                done.insert(m.body);
                std::lock_guard<std::mutex> l(mu);
                want_retry.insert(m.body);
            }
        }
    });
    struct JoinOnExit {
        std::atomic<bool>& flag;
        std::thread& a;
        std::thread& b;
        ~JoinOnExit() {
            flag.store(true);
            for (std::thread* t : {&a, &b}) {
                if (t->joinable()) {
                    t->join();
                }
            }
        }
    } join_workers{stop, producer, consumer};
    for (int round = 0; round < 6; ++round) {
        std::this_thread::sleep_for(1000ms);
        const int leader = group_->wait_leader(client_);
        ASSERT_GE(leader, 0) << "round " << round;
        const auto l = static_cast<size_t>(leader);
        if (round % 2 == 0) {
            group_->kill_peer(l);
            ASSERT_GE(group_->wait_leader(client_, leader), 0) << "round " << round;
            ASSERT_TRUE(group_->start_peer(l).is_ok()) << "round " << round;
        } else {
            group_->isolate(l, true);
            EXPECT_TRUE(eventually([&] { return info(l)["dledgerRole"] != "Leader"; }, 10s));
            ASSERT_GE(group_->wait_leader(client_, leader), 0) << "round " << round;
            group_->isolate(l, false);
        }
    }
    std::this_thread::sleep_for(1000ms);
    stop.store(true);
    producer.join();
    consumer.join();
    std::printf("soak: %zu sends and %zu send-backs acknowledged, %lld failed attempts\n",
                want_topic.size(), want_retry.size(), static_cast<long long>(failed.load()));
    ASSERT_TRUE(converged());
    for (size_t i = 0; i < group_->size(); ++i) {
        std::set<std::string> topic_got;
        std::set<std::string> retry_got;
        // Delayed ones are due within 2 s; a new leader starts its deliveries within a round.
        eventually(
            [&] {
                topic_got = bodies_at(client_, ports[i], kTopic, kQueues);
                retry_got = bodies_at(client_, ports[i], retry_topic, 1);
                return std::includes(topic_got.begin(), topic_got.end(), want_topic.begin(),
                                     want_topic.end()) &&
                       std::includes(retry_got.begin(), retry_got.end(), want_retry.begin(),
                                     want_retry.end());
            },
            20s);
        for (const std::string& b : want_topic) {
            EXPECT_EQ(topic_got.count(b), 1u)
                << "acknowledged " << b << " never delivered on " << group_->peer(i).id;
        }
        for (const std::string& b : want_retry) {
            EXPECT_EQ(retry_got.count(b), 1u)
                << "acknowledged retry of " << b << " never delivered on " << group_->peer(i).id;
        }
    }
}
TEST_F(DLedgerIt, AFollowerDownForManySegmentsOrWithACorruptTailCatchesUpFromTheLeader) {
    start_group(false);
    const int leader_i = group_->wait_leader(client_);
    ASSERT_GE(leader_i, 0);
    const auto leader = static_cast<size_t>(leader_i);
    const size_t lagging = (leader + 1) % 3;
    create_topic_everywhere();
    group_->kill_peer(lagging);

    // About 5 MiB while it is down: five 1 MiB CommitLog segments.
    std::set<std::string> acked;
    const std::string pad(1000, 'p');
    std::mutex mu;
    std::condition_variable cv;
    int done = 0;
    int ok = 0;
    constexpr int kCount = 5000;
    for (int i = 0; i < kCount; ++i) {
        const std::string body = "far-" + std::to_string(i) + "-" + pad;
        acked.insert(body);
        client_.invoke_async(addr(group_->peer(leader).port),
                             send_message_request(kTopic, body, i % kQueues), guard(30000ms),
                             [&](Result<protocol::RemotingCommand> r) {
                                 std::lock_guard<std::mutex> l(mu);
                                 ++done;
                                 ok += r.is_ok() && r->code == RC::kSuccess ? 1 : 0;
                                 cv.notify_all();
                             });
        if (i % 256 == 255) {  // bounded in flight
            std::unique_lock<std::mutex> l(mu);
            ASSERT_TRUE(cv.wait_for(l, guard(30000ms), [&] { return done == i + 1; }));
        }
    }
    {
        std::unique_lock<std::mutex> l(mu);
        ASSERT_TRUE(cv.wait_for(l, guard(30000ms), [&] { return done == kCount; }));
        ASSERT_EQ(ok, kCount);
    }
    const auto restart_at = SteadyClock::now();
    ASSERT_TRUE(group_->start_peer(lagging).is_ok());
    ASSERT_TRUE(converged());
    std::printf("a follower %s bytes behind caught up in %.0f ms\n",
                info(leader)["commitLogMaxOffset"].c_str(),
                std::chrono::duration<double, std::milli>(SteadyClock::now() - restart_at).count());
    std::set<std::string> got;
    for (const auto& m : read_all(lagging)) {
        got.insert(m.body);
    }
    EXPECT_EQ(got, acked);

    // Now a corrupt tail: flip bytes near the end of its last segment while it is down. Its
    // recovery cuts the CommitLog there (CRC), the entries past the cut go, and it fetches them
    // again from the leader.
    group_->kill_peer(lagging);
    const std::string cl_dir = dir_->sub(group_->peer(lagging).name + "/store/commitlog");
    const int64_t end = std::stoll(info(leader)["commitLogMaxOffset"]);
    const int64_t at = end - 3000;
    const int64_t seg_start = at / (1 << 20) * (1 << 20);
    char name[32];
    std::snprintf(name, sizeof name, "%020lld", static_cast<long long>(seg_start));
    const std::string last = cl_dir + "/" + name;
    ASSERT_TRUE(std::filesystem::exists(last)) << last;
    {
        FILE* f = std::fopen(last.c_str(), "r+b");
        ASSERT_NE(f, nullptr);
        std::fseek(f, static_cast<long>(at - seg_start), SEEK_SET);
        std::fwrite("CORRUPTCORRUPT", 1, 14, f);
        std::fclose(f);
    }
    ASSERT_TRUE(group_->start_peer(lagging).is_ok());
    ASSERT_TRUE(converged()) << group_->peer(lagging).process->log_tail(6000);
    got.clear();
    for (const auto& m : read_all(lagging)) {
        got.insert(m.body);
    }
    EXPECT_EQ(got, acked);
    EXPECT_EQ(group_->writable_leader(client_), leader_i);
}

TEST_F(DLedgerIt, AGroupSwitchesFromMasterSlaveToDLedgerAndBackKeepingEveryMessage) {
    const std::string segment = std::to_string(16 * 1024 * 1024);  // BrokerGroup's size
    std::set<std::string> sent;
    auto send_to = [&](uint16_t port, const std::string& prefix, int n) {
        for (int i = 0; i < n; ++i) {
            const std::string body = prefix + std::to_string(i);
            auto r = call(client_, port, send_message_request(kTopic, body, i % kQueues));
            ASSERT_TRUE(r.is_ok()) << r.status().to_string();
            ASSERT_EQ(r->code, RC::kSuccess) << r->remark.value_or("");
            sent.insert(body);
        }
    };
    // The bodies `port` serves once it serves all of `sent` (bounded): an acknowledged send is
    // dispatched to its ConsumeQueue asynchronously, so a pull right after the ack may not see
    // it yet.
    auto bodies_at = [&](uint16_t port) {
        std::set<std::string> got;
        eventually(
            [&] {
                got.clear();
                for (const auto& m : read_all_at(port)) {
                    got.insert(m.body);
                }
                return got == sent;
            },
            10s);
        return got;
    };
    // 1. Master-slave: 1 master + 2 slaves, in sync.
    {
        BrokerGroupOptions o;
        o.broker_name = kBrokerName;
        o.slaves = 2;
        auto ms = BrokerGroup::start(*dir_, addr(ns_port_), o);
        ASSERT_TRUE(ms.is_ok()) << ms.status().to_string();
        for (BrokerNode* n : (*ms)->nodes()) {
            auto r = call(client_, n->port, create_topic_request(kTopic, kQueues));
            ASSERT_TRUE(r.is_ok() && r->code == RC::kSuccess);
        }
        send_to((*ms)->master().port, "ms-", 40);
        auto master_info = runtime_info(client_, (*ms)->master().port);
        ASSERT_TRUE(master_info.is_ok());
        const std::string end = (*master_info)["commitLogMaxOffset"];
        for (size_t i = 0; i < 2; ++i) {
            ASSERT_TRUE(eventually(
                [&] {
                    auto m = runtime_info(client_, (*ms)->slave(i).port);
                    return m.is_ok() && (*m)["commitLogMaxOffset"] == end;
                },
                20s))
                << "slave " << i << " did not catch up";
        }
        for (BrokerNode* n : (*ms)->nodes()) {
            n->process->sigterm();
            auto code = n->process->wait_exit(20s);
            ASSERT_TRUE(code.is_ok() && *code == 0);
        }
    }
    // 2. The same stores as a DLedger group: the old messages stay readable, new ones commit.
    group_ = std::make_unique<DLedgerGroup>(*dir_, addr(ns_port_), 3, false,
                                            std::map<std::string, std::string>{
                                                {"mappedFileSizeCommitLog", segment}},
                                            std::string(kBrokerName) + "-");
    ASSERT_TRUE(group_->start_all().is_ok());
    const int leader = group_->wait_leader(client_);
    ASSERT_GE(leader, 0);
    EXPECT_EQ(bodies_at(group_->peer(static_cast<size_t>(leader)).port), sent);
    send_to(group_->peer(static_cast<size_t>(leader)).port, "dl-", 40);
    ASSERT_TRUE(converged());
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(bodies_at(group_->peer(i).port), sent) << "peer " << i;
    }
    for (size_t i = 0; i < 3; ++i) {
        ASSERT_TRUE(group_->stop_peer(i).is_ok());
    }
    group_.reset();
    // 3. Back to master-slave: every message of both eras is there, and sends work.
    BrokerGroupOptions o;
    o.broker_name = kBrokerName;
    o.slaves = 2;
    auto ms = BrokerGroup::start(*dir_, addr(ns_port_), o);
    ASSERT_TRUE(ms.is_ok()) << ms.status().to_string();
    EXPECT_EQ(bodies_at((*ms)->master().port), sent);
    send_to((*ms)->master().port, "back-", 10);
    EXPECT_EQ(bodies_at((*ms)->master().port), sent);
    bool retired = false;
    for (const auto& e : std::filesystem::directory_iterator(dir_->sub(std::string(kBrokerName) + "-0/store"))) {
        retired = retired || e.path().filename().string().rfind("dledger.retired-", 0) == 0;
        EXPECT_NE(e.path().filename().string(), "dledger");
    }
    EXPECT_TRUE(retired);
}

TEST_F(DLedgerIt, MqadminShowsTheGroupAndTransfersLeadership) {
    start_group(false);
    const int leader = group_->wait_leader(client_);
    ASSERT_GE(leader, 0);
    create_topic_everywhere();
    // Every peer registered (the leader as master); then the table lists all three.
    ASSERT_TRUE(eventually(
        [&] {
            auto r = run_command(*dir_, {binary_path("mqadmin"), "dledgerStatus", "-n",
                                         addr(ns_port_), "-b", kBrokerName});
            return r.exit_code == 0 && r.out.find("n0 ") != std::string::npos &&
                   r.out.find("n1 ") != std::string::npos && r.out.find("n2 ") != std::string::npos;
        },
        20s));
    auto status = run_command(*dir_, {binary_path("mqadmin"), "dledgerStatus", "-n",
                                      addr(ns_port_), "-b", kBrokerName});
    ASSERT_EQ(status.exit_code, 0) << status.err;
    size_t leaders = 0;
    for (size_t pos = status.out.find(" Leader "); pos != std::string::npos;
         pos = status.out.find(" Leader ", pos + 1)) {
        ++leaders;
    }
    EXPECT_EQ(leaders, 1u) << status.out;
    EXPECT_NE(status.out.find("#LagBytes"), std::string::npos);

    const size_t target = (static_cast<size_t>(leader) + 2) % 3;
    auto moved = run_command(*dir_, {binary_path("mqadmin"), "transferLeader", "-n", addr(ns_port_),
                                     "-b", kBrokerName, "-p", group_->peer(target).id});
    ASSERT_EQ(moved.exit_code, 0) << moved.out << moved.err;
    EXPECT_NE(moved.out.find("moved from"), std::string::npos) << moved.out;
    EXPECT_EQ(group_->wait_leader(client_, leader), static_cast<int>(target));
    auto r = send(target, "after-transfer", 0);
    ASSERT_TRUE(r.is_ok());
    EXPECT_EQ(r->code, RC::kSuccess) << r->remark.value_or("");
    // An unknown peer is refused with a reason.
    auto bad = run_command(*dir_, {binary_path("mqadmin"), "transferLeader", "-n", addr(ns_port_),
                                   "-b", kBrokerName, "-p", "n9"});
    EXPECT_NE(bad.exit_code, 0);
    EXPECT_NE(bad.err.find("n9"), std::string::npos) << bad.err;
}

// Consumer offsets are not Raft entries: followers copy the master's table (SlaveSynchronize).
// A leader that stops cleanly holds the newest offsets; when it rejoins as a follower, its first
// sync must not overwrite them with the interim leader's older copy, or the group hands out
// those older offsets again (redelivery; ali-ons restart.test.js). It hands them over first.
TEST_F(DLedgerIt, ALeaderThatStopsAndRejoinsHandsItsNewerConsumerOffsetsToTheNewLeader) {
    start_group(false, {{"slaveSynchronizePeriod", "1000"}});
    const int leader = group_->wait_leader(client_);
    ASSERT_GE(leader, 0);
    create_topic_everywhere();
    for (int i = 0; i < 40; ++i) {
        auto r = send(static_cast<size_t>(leader), "o-" + std::to_string(i), i % kQueues);
        ASSERT_TRUE(r.is_ok() && r->code == RC::kSuccess);
    }
    constexpr const char* kGroup = "DlOffsetGroup";
    auto commit = [&](size_t peer, int32_t queue, int64_t offset) {
        auto r = call(client_, group_->peer(peer).port,
                      request(protocol::RequestCode::kUpdateConsumerOffset,
                              {{"consumerGroup", kGroup},
                               {"topic", kTopic},
                               {"queueId", std::to_string(queue)},
                               {"commitOffset", std::to_string(offset)}}));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_EQ(r->code, RC::kSuccess) << r->remark.value_or("");
    };
    auto committed = [&](size_t peer, int32_t queue) -> int64_t {
        auto r = call(client_, group_->peer(peer).port,
                      request(protocol::RequestCode::kQueryConsumerOffset,
                              {{"consumerGroup", kGroup},
                               {"topic", kTopic},
                               {"queueId", std::to_string(queue)}}));
        if (!r.is_ok() || r->code != RC::kSuccess) {
            return -1;
        }
        return std::stoll(r->ext_fields["offset"]);
    };
    const size_t old_leader = static_cast<size_t>(leader);
    for (int q = 0; q < kQueues; ++q) {
        commit(old_leader, q, 2);
    }
    // Both followers copied the early offsets...
    ASSERT_TRUE(eventually(
        [&] {
            for (size_t i = 0; i < 3; ++i) {
                if (i != old_leader && committed(i, kQueues - 1) != 2) {
                    return false;
                }
            }
            return true;
        },
        15s));
    // ...and the leader commits newer ones and stops at once, before the next copy.
    for (int q = 0; q < kQueues; ++q) {
        commit(old_leader, q, 9);
    }
    ASSERT_TRUE(group_->stop_peer(old_leader).is_ok());
    const int next = group_->wait_leader(client_, leader);
    ASSERT_GE(next, 0);
    ASSERT_TRUE(group_->start_peer(old_leader).is_ok());

    // Once the old leader is back, the group's master has its newer offsets, and so does it.
    EXPECT_TRUE(eventually(
        [&] {
            for (int q = 0; q < kQueues; ++q) {
                if (committed(static_cast<size_t>(next), q) != 9) {
                    return false;
                }
            }
            return true;
        },
        20s))
        << "queue 0 on the new leader: " << committed(static_cast<size_t>(next), 0);
    // A few sync rounds later nothing went back anywhere.
    std::this_thread::sleep_for(2500ms);
    for (size_t i = 0; i < 3; ++i) {
        for (int q = 0; q < kQueues; ++q) {
            EXPECT_EQ(committed(i, q), 9) << "peer " << group_->peer(i).id << " queue " << q;
        }
    }
    const auto mark = std::filesystem::path(dir_->path()) / group_->peer(old_leader).name /
                      "store" / "config" / "dledgerLeaderOffsets";
    EXPECT_FALSE(std::filesystem::exists(mark)) << "the hand-over mark stays after the hand-over";
    if (HasFailure()) {
        for (size_t i = 0; i < 3; ++i) {
            std::printf("---- %s (%s)\n", group_->peer(i).id.c_str(),
                        group_->peer(i).process->log_path().c_str());
            std::fflush(stdout);
            (void)std::system(("grep -E 'offset|master|registering' " +
                               group_->peer(i).process->log_path() + " | tail -40")
                                  .c_str());
        }
    }
}

TEST_F(DLedgerIt, ContradictoryDLedgerConfigExitsTwoNamingTheKey) {
    struct Case {
        std::map<std::string, std::string> config;
        std::string key;
    };
    const std::vector<Case> cases = {
        {{{"dLegerPeers", "n0-127.0.0.1:40001;n1-127.0.0.1:40002"}, {"dLegerSelfId", "n7"}},
         "dLegerSelfId"},
        {{{"dLegerPeers", "n0-127.0.0.1:40001;n0-127.0.0.1:40002"}, {"dLegerSelfId", "n0"}},
         "dLegerPeers"},
        {{{"dLegerPeers", "n0-127.0.0.1:40001;n1-127.0.0.1:40001"}, {"dLegerSelfId", "n0"}},
         "dLegerPeers"},
        {{{"dLegerPeers", "n0-127.0.0.1:40001"}, {"dLegerSelfId", "n0"},
          {"haMasterAddress", "127.0.0.1:10912"}},
         "haMasterAddress"},
        {{{"dLegerPeers", "n0-127.0.0.1:40001"}, {"dLegerSelfId", "n0"}, {"totalReplicas", "3"}},
         "totalReplicas"},
        {{{"dLegerPeers", "n0-localhost"}, {"dLegerSelfId", "n0"}}, "dLegerPeers"},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        std::map<std::string, std::string> cfg = cases[i].config;
        cfg["enableDLegerCommitLog"] = "true";
        auto p = start_broker(*dir_, free_port(), addr(ns_port_), cfg, "bad-" + std::to_string(i));
        ASSERT_TRUE(p.is_ok());
        auto code = (*p)->wait_exit(10s);
        ASSERT_TRUE(code.is_ok()) << "case " << i << " did not exit";
        EXPECT_EQ(*code, 2) << "case " << i << ": " << (*p)->log_tail();
        EXPECT_NE((*p)->log().find(cases[i].key), std::string::npos)
            << "case " << i << ": " << (*p)->log_tail();
    }
}

}  // namespace
}  // namespace comet::it
