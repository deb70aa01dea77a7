// ChangeHistory / diff_snapshots: role and membership changes between two polls.

#include "dashboard/change_history.h"

#include <gtest/gtest.h>

namespace comet::dashboard {
namespace {

MemberView mv(int64_t id, const std::string& addr, const std::string& role, bool up = true) {
    MemberView m;
    m.broker_id = id;
    m.addr = addr;
    m.role = role;
    m.up = up;
    return m;
}

ClusterSnapshot snap(int64_t at, std::vector<MemberView> members, std::string master) {
    ClusterSnapshot s;
    s.taken_at_ms = at;
    GroupView g;
    g.cluster = "C";
    g.broker_name = "broker-a";
    g.members = std::move(members);
    g.master_addr = std::move(master);
    s.groups.push_back(std::move(g));
    return s;
}

std::vector<std::string> kinds(const std::vector<ChangeEvent>& events) {
    std::vector<std::string> out;
    for (const ChangeEvent& e : events) {
        out.push_back(e.kind + ":" + e.addr + ":" + e.from + ">" + e.to);
    }
    return out;
}

TEST(ChangeHistory, NoChangeNoEvent) {
    const auto a = snap(1, {mv(0, "m", "MASTER"), mv(1, "s", "SLAVE")}, "m");
    EXPECT_TRUE(diff_snapshots(a, a).empty());
}

TEST(ChangeHistory, DownUpJoinedLeft) {
    const auto a = snap(1, {mv(0, "m", "MASTER"), mv(1, "s1", "SLAVE")}, "m");
    const auto b =
        snap(2, {mv(0, "m", "MASTER"), mv(1, "s1", "SLAVE", false), mv(2, "s2", "SLAVE")}, "m");
    const auto e = diff_snapshots(a, b);
    EXPECT_EQ(kinds(e), (std::vector<std::string>{"down:s1:UP>DOWN", "joined:s2:>SLAVE"}));
    EXPECT_EQ(e[0].at_ms, 2);
    EXPECT_EQ(e[0].broker_name, "broker-a");
    EXPECT_EQ(e[0].broker_id, 1);
    const auto c = snap(3, {mv(0, "m", "MASTER"), mv(1, "s1", "SLAVE")}, "m");
    EXPECT_EQ(kinds(diff_snapshots(b, c)),
              (std::vector<std::string>{"up:s1:DOWN>UP", "left:s2:SLAVE>"}));
}

TEST(ChangeHistory, FailoverShowsRolesAndMaster) {
    const auto a = snap(1, {mv(0, "m", "MASTER"), mv(1, "s1", "SLAVE")}, "m");
    const auto b = snap(2, {mv(0, "m", "MASTER", false), mv(1, "s1", "MASTER")}, "s1");
    const auto e = diff_snapshots(a, b);
    EXPECT_EQ(kinds(e), (std::vector<std::string>{"down:m:UP>DOWN", "role:s1:SLAVE>MASTER",
                                                  "master:s1:m>s1"}));
    EXPECT_EQ(e[2].broker_id, 1);  // the new master's
    const auto c = snap(3, {mv(0, "m", "MASTER", false), mv(1, "s1", "MASTER", false)}, "");
    EXPECT_EQ(kinds(diff_snapshots(b, c)),
              (std::vector<std::string>{"down:s1:UP>DOWN", "master::s1>none"}));
}

TEST(ChangeHistory, DLedgerRoleAndRegistration) {
    auto leader = mv(0, "a", "MASTER");
    leader.dledger_role = "Leader";
    auto follower = mv(1, "b", "SLAVE");
    follower.dledger_role = "Follower";
    const auto x = snap(1, {leader, follower}, "a");
    auto candidate = follower;
    candidate.dledger_role = "Candidate";
    candidate.registered = false;
    const auto y = snap(2, {leader, candidate}, "a");
    EXPECT_EQ(kinds(diff_snapshots(x, y)),
              (std::vector<std::string>{"unregistered:b:registered>unregistered",
                                        "dledger:b:Follower>Candidate"}));
}

TEST(ChangeHistory, FirstSnapshotIsTheBaselineAndHistoryIsBounded) {
    ChangeHistory h(3);
    h.observe(snap(1, {mv(0, "m", "MASTER"), mv(1, "s", "SLAVE")}, "m"));
    EXPECT_TRUE(h.events().empty());
    for (int i = 0; i < 4; ++i) {
        const bool up = i % 2 == 1;
        h.observe(snap(2 + i, {mv(0, "m", "MASTER"), mv(1, "s", "SLAVE", up)}, "m"));
    }
    ASSERT_EQ(h.events().size(), 3u);
    EXPECT_EQ(h.dropped(), 1u);
    EXPECT_EQ(h.events().front().at_ms, 3);  // the oldest kept
    EXPECT_EQ(h.events().back().at_ms, 5);
    EXPECT_EQ(h.events().back().kind, "up");
}

}  // namespace
}  // namespace comet::dashboard
