// DLedger mode and CommitLog retention with real processes on 127.0.0.1 (decision 040): a
// follower held down (SIGSTOP) while the group writes through several CommitLog segments and
// retention deletes every expired one (fileReservedTime=0, every hour a deleteWhen hour) comes
// back and catches up; the leader keeps acknowledging throughout, because its retention keeps
// what the follower still needs. Every wait is a bounded hang guard (harness.h), never a verdict.
#include <gtest/gtest.h>

#include <set>

#include "harness.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

using namespace std::chrono_literals;
namespace RC = protocol::ResponseCode;

constexpr const char* kTopic = "DlRetTopic";
constexpr int kQueues = 2;
constexpr int kPeers = 3;
constexpr int64_t kSegment = 64 * 1024;

std::string all_hours() {
    std::string s;
    for (int h = 0; h < 24; ++h) {
        s += (h > 0 ? ";" : "") + fmt::format("{:02d}", h);
    }
    return s;
}

int64_t num(const std::map<std::string, std::string>& m, const char* key) {
    const auto it = m.find(key);
    return it == m.end() || it->second.empty() ? -1 : std::stoll(it->second);
}

class DLedgerStorageIt : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::make_unique<TempDir>("comet_it_dledger_storage");
        ns_port_ = free_port();
        auto ns = start_namesrv(*dir_, ns_port_);
        ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
        ns_ = std::move(ns).value();
        ASSERT_TRUE(ns_->wait_for_port(ns_port_, 10s).is_ok()) << ns_->log_tail();
        client_.start();
        std::string peers;
        for (int i = 0; i < kPeers; ++i) {
            ports_[i] = free_port();
            dledger_ports_[i] = free_port();
            peers += fmt::format("{}n{}-127.0.0.1:{}", i > 0 ? ";" : "", i, dledger_ports_[i]);
        }
        for (int i = 0; i < kPeers; ++i) {
            std::map<std::string, std::string> cfg = {
                {"brokerName", "broker-r"},
                {"enableDLegerCommitLog", "true"},
                {"dLegerGroup", "RetGroup"},
                {"dLegerPeers", peers},
                {"dLegerSelfId", "n" + std::to_string(i)},
                // Retention as small as it goes: 64 KiB segments, expired at once, every hour
                // a deletion hour, checked every 100 ms.
                {"mappedFileSizeCommitLog", std::to_string(kSegment)},
                {"fileReservedTime", "0"},
                {"deleteWhen", all_hours()},
                {"cleanResourceInterval", "100"}};
            auto p =
                start_broker(*dir_, ports_[i], addr(ns_port_), cfg, "ret-n" + std::to_string(i));
            ASSERT_TRUE(p.is_ok()) << p.status().to_string();
            procs_[i] = std::move(p).value();
        }
        for (int i = 0; i < kPeers; ++i) {
            ASSERT_TRUE(procs_[i]->wait_for_port(ports_[i], 20s).is_ok()) << procs_[i]->log_tail();
        }
    }
    void TearDown() override {
        client_.shutdown();
        for (auto& p : procs_) {
            p.reset();
        }
        ns_.reset();
    }

    std::map<std::string, std::string> info(int i) {
        auto r = runtime_info(client_, ports_[i]);
        return r.is_ok() ? *r : std::map<std::string, std::string>{};
    }
    int wait_leader() {
        int leader = -1;
        eventually(
            [&] {
                for (int i = 0; i < kPeers; ++i) {
                    auto m = info(i);
                    if (m["dledgerRole"] == "Leader" && m["dledgerWritable"] == "true") {
                        leader = i;
                        return true;
                    }
                }
                return false;
            },
            15s);
        return leader;
    }
    Result<protocol::RemotingCommand> send(int peer, const std::string& body, int queue) {
        return call(client_, ports_[peer], send_message_request(kTopic, body, queue), 5000ms);
    }

    std::unique_ptr<TempDir> dir_;
    uint16_t ns_port_ = 0;
    std::unique_ptr<Process> ns_;
    net::RemotingClient client_;
    uint16_t ports_[kPeers] = {};
    uint16_t dledger_ports_[kPeers] = {};
    std::unique_ptr<Process> procs_[kPeers];
};

TEST_F(DLedgerStorageIt, FollowerHeldDownPastRetentionCatchesUpAndTheLeaderKeepsServing) {
    const int leader = wait_leader();
    ASSERT_GE(leader, 0) << "no writable leader";
    for (int i = 0; i < kPeers; ++i) {
        auto r = call(client_, ports_[i], create_topic_request(kTopic, kQueues));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_EQ(r->code, RC::kSuccess) << r->remark.value_or("");
    }
    const int held = (leader + 1) % kPeers;
    const int live = (leader + 2) % kPeers;
    const std::string body(1024, 'r');
    ASSERT_TRUE(procs_[held]->sigstop_and_wait().is_ok());
    const int64_t held_end = num(info(leader), "commitLogMaxOffset");
    // About eight segments while the follower is stopped.
    int sent = 0;
    for (; sent < 8 * kSegment / 1100; ++sent) {
        auto r = send(leader, body + std::to_string(sent), sent % kQueues);
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_EQ(r->code, RC::kSuccess) << sent << ": " << r->remark.value_or("");
    }
    // Retention ran: the live follower deleted its old segments.
    ASSERT_TRUE(eventually([&] { return num(info(live), "commitLogMinOffset") > 0; }, 10s))
        << "retention never deleted a segment on the live follower";
    // The leader kept what the stopped follower needs.
    auto li = info(leader);
    EXPECT_LE(num(li, "commitLogMinOffset"), held_end)
        << "the leader deleted what the held follower needs";

    procs_[held]->sigcont();
    // The leader keeps acknowledging while the follower catches up.
    for (int k = 0; k < 40; ++k, ++sent) {
        auto r = send(leader, body + std::to_string(sent), sent % kQueues);
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_EQ(r->code, RC::kSuccess) << "after resume, " << k << ": " << r->remark.value_or("");
    }
    const int64_t end = num(info(leader), "commitLogMaxOffset");
    EXPECT_TRUE(eventually(
        [&] {
            auto h = info(held);
            return num(h, "commitLogMaxOffset") == end && num(h, "dledgerCommittedOffset") == end;
        },
        20s))
        << "the held follower did not catch up to " << end << ": " << procs_[held]->log_tail();
    li = info(leader);
    EXPECT_EQ(li["dledgerRole"], "Leader");
    EXPECT_EQ(li["dledgerStorageFailed"], "0");
    EXPECT_EQ(li["dledgerFollowersBehindLog"], "0");
    // Once the follower holds everything, the leader's retention goes on.
    EXPECT_TRUE(
        eventually([&] { return num(info(leader), "commitLogMinOffset") > held_end; }, 10s));
}

}  // namespace
}  // namespace comet::it
