// mqdashboard against real processes: a name server, a SYNC_MASTER with two slaves, and the
// dashboard on an ephemeral port. Checks the JSON endpoints, then loads the page in headless
// Chromium (the DOM after the page's script has polled), stops one slave with SIGSTOP to see it
// marked DOWN, then kills the other and sees it kept as DOWN after it unregisters. A second
// case kills the leader of a 3-peer DLedger group and finds the change in the history.
// Screenshots of the page are left under <build>/test-artifacts/ (paths printed).
// Chromium is required: without it the tests fail (scripts/install-deps.sh installs it).

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <rapidjson/document.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "harness.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

namespace RC = protocol::ResponseCode;
namespace Req = protocol::RequestCode;
using namespace std::chrono_literals;

// The first executable `name` on $PATH, or "".
std::string find_on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
    std::string d;
    while (std::getline(dirs, d, ':')) {
        const std::string p = (d.empty() ? "." : d) + "/" + name;
        if (::access(p.c_str(), X_OK) == 0) {
            return p;
        }
    }
    return "";
}

// GET http://127.0.0.1:port/path over HTTP/1.0: the body, or "" on any failure.
std::string http_get(uint16_t port, const std::string& path) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return "";
    }
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string out;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
        const std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
        if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
            char buf[8192];
            for (int i = 0; i < 100000; ++i) {
                const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
                if (n <= 0) {
                    break;
                }
                out.append(buf, static_cast<size_t>(n));
            }
        }
    }
    ::close(fd);
    const size_t body = out.find("\r\n\r\n");
    if (out.rfind("HTTP/1.1 200", 0) != 0 || body == std::string::npos) {
        return "";
    }
    return out.substr(body + 4);
}

// The <tr> of the member at `addr` in a DOM dump ("" when absent).
std::string member_row(const std::string& dom, const std::string& addr) {
    const size_t at = dom.find("<tr data-addr=\"" + addr + "\"");
    if (at == std::string::npos) {
        return "";
    }
    const size_t end = dom.find("</tr>", at);
    return dom.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

class DashboardIt : public ::testing::Test {
protected:
    void SetUp() override {
        chromium_ = find_on_path("chromium");
        ns_port_ = free_port();
        auto ns = start_namesrv(dir_, ns_port_);
        ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
        ns_ = std::move(ns).value();
        ASSERT_TRUE(ns_->wait_for_port(ns_port_, 10s).is_ok()) << ns_->log_tail();
        client_.start();
    }

    // A SYNC_MASTER (needAckNums 2 of 3) and two slaves with short HA timers.
    void start_master_slave_group() {
        BrokerGroupOptions o;
        o.common_config = {{"haSendHeartbeatInterval", "300"},
                           {"haHousekeepingInterval", "2000"},
                           {"flushDiskType", "ASYNC_FLUSH"}};
        o.master_config = {
            {"brokerRole", "SYNC_MASTER"}, {"totalReplicas", "3"}, {"inSyncReplicas", "2"}};
        auto g = BrokerGroup::start(dir_, addr(ns_port_), std::move(o));
        ASSERT_TRUE(g.is_ok()) << g.status().to_string();
        group_ = std::move(g).value();
    }

    // mqdashboard on an ephemeral port (-c file, as the harness starts every server), polling
    // every 500 ms; url_ and http_port_ from the line it prints once bound.
    void start_dashboard() {
        ProcessOptions d;
        d.name = "mqdashboard";
        d.binary = binary_path("mqdashboard");
        d.config = {{"namesrvAddr", addr(ns_port_)},
                    {"listenHost", "127.0.0.1"},
                    {"port", "0"},
                    {"pollInterval", "500"},
                    {"rpcTimeout", "1000"}};
        auto p = Process::start(d, dir_.path());
        ASSERT_TRUE(p.is_ok()) << p.status().to_string();
        dashboard_ = std::move(p).value();
        ASSERT_TRUE(dashboard_->wait_for_log("mqdashboard: serving http://127.0.0.1:", 10s).is_ok())
            << dashboard_->log_tail();
        const std::string log = dashboard_->log();
        const size_t at = log.find("http://127.0.0.1:") + std::strlen("http://127.0.0.1:");
        http_port_ = static_cast<uint16_t>(std::stoi(log.substr(at)));
        url_ = "http://127.0.0.1:" + std::to_string(http_port_) + "/";
    }

    void TearDown() override {
        if (HasFailure() && dashboard_ != nullptr) {
            std::cerr << "---- mqdashboard log ----\n" << dashboard_->log_tail(3000) << "\n";
        }
        dashboard_.reset();
        client_.shutdown();
        group_.reset();
        peers_.clear();
    }

    rapidjson::Document get_json(const std::string& path) {
        rapidjson::Document d;
        const std::string body = http_get(http_port_, path);
        d.Parse(body.c_str());
        if (d.HasParseError() || !d.IsObject()) {
            d.SetObject();
        }
        return d;
    }

    // The members of every group in /api/cluster, by address.
    std::map<std::string, std::map<std::string, std::string>> members() {
        std::map<std::string, std::map<std::string, std::string>> out;
        const auto d = get_json("/api/cluster");
        if (!d.HasMember("clusters")) {
            return out;
        }
        for (const auto& c : d["clusters"].GetArray()) {
            for (const auto& g : c["groups"].GetArray()) {
                for (const auto& m : g["members"].GetArray()) {
                    out[m["addr"].GetString()] = {
                        {"state", m["state"].GetString()},
                        {"role", m["role"].GetString()},
                        {"version", m["version"].GetString()},
                        {"connected", m["connectedToMaster"].GetBool() ? "true" : "false"},
                        {"registered", m["registered"].GetBool() ? "true" : "false"},
                        {"inSync", m["inSync"].IsBool() && m["inSync"].GetBool() ? "true" : ""},
                        {"group", g["brokerName"].GetString()},
                        {"mode", g["mode"].GetString()},
                        {"dledgerRole", m["dledgerRole"].GetString()},
                        {"inSyncSet", std::to_string(g["inSyncSet"].Size())}};
                }
            }
        }
        return out;
    }

    // Whether /api/history holds an event of `kind` for member `addr` whose `to` is `to`.
    bool has_event(const std::string& addr, const std::string& kind, const std::string& to) {
        const auto h = get_json("/api/history");
        if (!h.HasMember("events")) {
            return false;
        }
        for (const auto& e : h["events"].GetArray()) {
            if (addr == e["addr"].GetString() && kind == e["kind"].GetString() &&
                to == e["to"].GetString()) {
                return true;
            }
        }
        return false;
    }

    // The DOM after the page's script ran for a few seconds of virtual time.
    std::string dump_dom() {
        CommandResult r =
            run_command(dir_,
                        {chromium_, "--headless", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--user-data-dir=" + dir_.sub("chromium"),
                         "--virtual-time-budget=4000", "--dump-dom", url_},
                        60s);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.out;
    }

    // Saves the page as <build>/test-artifacts/<file> (a PNG, checked) and prints the path.
    void screenshot(const std::string& file) {
        const std::string shots = std::string(COMET_BINARY_DIR) + "/test-artifacts";
        std::filesystem::create_directories(shots);
        const std::string png = shots + "/" + file;
        std::filesystem::remove(png);
        CommandResult shot = run_command(
            dir_,
            {chromium_, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--hide-scrollbars", "--user-data-dir=" + dir_.sub("chromium"),
             "--virtual-time-budget=4000", "--window-size=1400,1400", "--screenshot=" + png, url_},
            60s);
        EXPECT_EQ(shot.exit_code, 0) << shot.err;
        std::ifstream in(png, std::ios::binary);
        std::string magic(8, '\0');
        in.read(magic.data(), 8);
        EXPECT_EQ(magic, std::string("\x89PNG\r\n\x1a\n", 8)) << "no screenshot at " << png;
        std::cout << "dashboard screenshot: " << png << std::endl;
    }

    TempDir dir_{"comet_it_dashboard"};
    uint16_t ns_port_ = 0;
    uint16_t http_port_ = 0;
    std::string url_;
    std::string chromium_;
    std::unique_ptr<Process> ns_;
    std::unique_ptr<BrokerGroup> group_;
    std::unique_ptr<Process> dashboard_;
    std::vector<std::unique_ptr<Process>> peers_;  // DLedger peers
    net::RemotingClient client_;
};

TEST_F(DashboardIt, ShowsTheGroupLiveAndMarksAStoppedSlaveDown) {
    ASSERT_FALSE(chromium_.empty())
        << "chromium is not on PATH: install it (scripts/install-deps.sh) to run this test";
    ASSERT_NO_FATAL_FAILURE(start_master_slave_group());
    ASSERT_NO_FATAL_FAILURE(start_dashboard());
    const std::string master = group_->master().address();
    const std::string slave1 = group_->slave(0).address();
    const std::string slave2 = group_->slave(1).address();

    // A topic with messages and a consumer group with a committed offset on the master.
    auto created = call(client_, group_->master().port, create_topic_request("DashTopic", 2));
    ASSERT_TRUE(created.is_ok()) << created.status().to_string();
    ASSERT_EQ(created->code, RC::kSuccess) << created->remark.value_or("");
    // Both slaves connected first, so SYNC_MASTER sends (needAckNums 2) are acknowledged.
    ASSERT_TRUE(eventually(
        [&] {
            auto m = members();
            return m.size() == 3 && m[slave1]["connected"] == "true" &&
                   m[slave2]["connected"] == "true";
        },
        guard(30s)))
        << http_get(http_port_, "/api/cluster");
    for (int i = 0; i < 3; ++i) {
        auto r = call(client_, group_->master().port,
                      send_message_request("DashTopic", "m" + std::to_string(i), 0), 10s);
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_EQ(r->code, RC::kSuccess) << r->remark.value_or("");
    }
    auto upd = call(client_, group_->master().port,
                    request(Req::kUpdateConsumerOffset, {{"consumerGroup", "DashGroup"},
                                                         {"topic", "DashTopic"},
                                                         {"queueId", "0"},
                                                         {"commitOffset", "1"}}));
    ASSERT_TRUE(upd.is_ok());
    ASSERT_EQ(upd->code, RC::kSuccess);

    // JSON: three members with their roles, all up; both slaves in the in-sync set.
    ASSERT_TRUE(eventually(
        [&] {
            auto m = members();
            return m[master]["state"] == "UP" && m[slave1]["state"] == "UP" &&
                   m[slave2]["state"] == "UP" && m[slave1]["inSync"] == "true" &&
                   m[slave2]["inSync"] == "true";
        },
        guard(30s)))
        << http_get(http_port_, "/api/cluster");
    {
        auto m = members();
        EXPECT_EQ(m[master]["role"], "MASTER");
        EXPECT_EQ(m[slave1]["role"], "SLAVE");
        EXPECT_EQ(m[slave2]["role"], "SLAVE");
        EXPECT_EQ(m[master]["version"], "V4_9_8");
        EXPECT_EQ(m[master]["group"], "broker-a");
        EXPECT_EQ(m[master]["inSyncSet"], "3");
    }
    // Topics: DashTopic's queues (3 messages in queue 0) and its durability contract.
    ASSERT_TRUE(eventually(
        [&] {
            const auto t = get_json("/api/topics");
            if (!t.HasMember("topics")) {
                return false;
            }
            for (const auto& x : t["topics"].GetArray()) {
                if (std::string(x["name"].GetString()) != "DashTopic") {
                    continue;
                }
                bool three = false;
                for (const auto& q : x["queues"].GetArray()) {
                    three = three || (q["queueId"].GetInt() == 0 && q["maxOffset"].GetInt64() == 3);
                }
                return three && x["durability"].Size() == 1 &&
                       std::string(x["durability"][0]["contract"].GetString()).size() > 10 &&
                       !x["system"].GetBool();
            }
            return false;
        },
        guard(30s)))
        << http_get(http_port_, "/api/topics");
    // Consumer groups: DashGroup's lag on queue 0 is 3 - 1.
    ASSERT_TRUE(eventually(
        [&] {
            const auto g = get_json("/api/groups");
            if (!g.HasMember("groups")) {
                return false;
            }
            for (const auto& x : g["groups"].GetArray()) {
                if (std::string(x["group"].GetString()) == "DashGroup") {
                    for (const auto& q : x["queues"].GetArray()) {
                        if (q["queueId"].GetInt() == 0 &&
                            std::string(q["topic"].GetString()) == "DashTopic") {
                            return q["lag"].GetInt64() == 2;
                        }
                    }
                }
            }
            return false;
        },
        guard(30s)))
        << http_get(http_port_, "/api/groups");
    EXPECT_NE(http_get(http_port_, "/").find("Comet dashboard"), std::string::npos);

    // The page in a real browser: the three members and their roles, all UP. (Retried: on a
    // loaded machine the virtual time budget can run out before the first poll is drawn.)
    std::string dom;
    ASSERT_TRUE(eventually(
        [&] {
            dom = dump_dom();
            for (const std::string& a : {master, slave1, slave2}) {
                if (member_row(dom, a).find("class=\"member up\"") == std::string::npos) {
                    return false;
                }
            }
            return true;
        },
        guard(60s)))
        << dom;
    EXPECT_NE(dom.find("<title>Comet dashboard</title>"), std::string::npos);
    for (const auto& [a, role] : std::map<std::string, std::string>{
             {master, "MASTER"}, {slave1, "SLAVE"}, {slave2, "SLAVE"}}) {
        const std::string row = member_row(dom, a);
        EXPECT_NE(row.find("class=\"member up\""), std::string::npos) << a << "\n" << dom;
        EXPECT_NE(row.find("data-role=\"" + role + "\""), std::string::npos) << row;
        EXPECT_NE(row.find(">UP<"), std::string::npos) << row;
    }
    EXPECT_NE(dom.find("data-topic=\"DashTopic\""), std::string::npos);
    EXPECT_NE(dom.find("data-group=\"DashGroup\""), std::string::npos);

    // Slave 2 hangs: the dashboard marks it DOWN (JSON, then the DOM) and records the change.
    ASSERT_TRUE(group_->slave(1).process->sigstop_and_wait().is_ok());
    ASSERT_TRUE(eventually([&] { return members()[slave2]["state"] == "DOWN"; }, guard(30s)))
        << http_get(http_port_, "/api/cluster");
    EXPECT_EQ(members()[slave1]["state"], "UP");
    EXPECT_TRUE(has_event(slave2, "down", "DOWN")) << http_get(http_port_, "/api/history");
    std::string row;
    ASSERT_TRUE(eventually(
        [&] {
            dom = dump_dom();
            row = member_row(dom, slave2);
            return row.find("class=\"member down\"") != std::string::npos;
        },
        guard(60s)))
        << dom;
    EXPECT_NE(row.find(">DOWN<"), std::string::npos) << row;
    EXPECT_NE(member_row(dom, slave1).find("class=\"member up\""), std::string::npos);
    EXPECT_NE(dom.find("class=\"change kind-down\""), std::string::npos);

    // A screenshot of that state, kept as a test artefact.
    screenshot("dashboard.png");

    // Slave 1 is killed: the name server drops it when its connection closes, the dashboard
    // keeps it on the page as DOWN and unregistered, and records both changes.
    group_->kill_node(group_->slave(0));
    ASSERT_TRUE(eventually(
        [&] {
            auto m = members();
            return m[slave1]["state"] == "DOWN" && m[slave1]["registered"] == "false";
        },
        guard(30s)))
        << http_get(http_port_, "/api/cluster");
    EXPECT_EQ(members()[slave1]["version"], "V4_9_8");  // as it last answered
    EXPECT_TRUE(has_event(slave1, "down", "DOWN")) << http_get(http_port_, "/api/history");
    EXPECT_TRUE(has_event(slave1, "unregistered", "unregistered"))
        << http_get(http_port_, "/api/history");
}

// A 3-peer DLedger group: the page shows the leader as MASTER (DLedger leader) and the
// followers; when the leader is killed, the history records the new leader's role change and
// the group's new master, and the old leader stays listed as DOWN.
TEST_F(DashboardIt, DLedgerRolesAndFailoverHistory) {
    ASSERT_FALSE(chromium_.empty())
        << "chromium is not on PATH: install it (scripts/install-deps.sh) to run this test";
    std::vector<uint16_t> ports;
    std::string peer_list;
    for (int i = 0; i < 3; ++i) {
        ports.push_back(free_port());
        peer_list += (i > 0 ? ";" : "") + std::string("n") + std::to_string(i) +
                     "-127.0.0.1:" + std::to_string(free_port());
    }
    for (int i = 0; i < 3; ++i) {
        auto p = start_broker(dir_, ports[static_cast<size_t>(i)], addr(ns_port_),
                              {{"brokerName", "broker-d"},
                               {"enableDLegerCommitLog", "true"},
                               {"dLegerGroup", "DashGroup"},
                               {"dLegerPeers", peer_list},
                               {"dLegerSelfId", "n" + std::to_string(i)}},
                              "dl-n" + std::to_string(i));
        ASSERT_TRUE(p.is_ok()) << p.status().to_string();
        peers_.push_back(std::move(p).value());
        ASSERT_TRUE(peers_.back()->wait_for_port(ports[static_cast<size_t>(i)], 20s).is_ok())
            << peers_.back()->log_tail();
    }
    ASSERT_NO_FATAL_FAILURE(start_dashboard());

    // One leader registered as master, two followers as slaves.
    std::string leader;
    ASSERT_TRUE(eventually(
        [&] {
            auto m = members();
            int leaders = 0;
            int followers = 0;
            for (const auto& [a, v] : m) {
                if (v.at("state") != "UP" || v.at("mode") != "dledger") {
                    return false;
                }
                if (v.at("dledgerRole") == "Leader" && v.at("role") == "MASTER") {
                    ++leaders;
                    leader = a;
                } else if (v.at("dledgerRole") == "Follower" && v.at("role") == "SLAVE") {
                    ++followers;
                }
            }
            return m.size() == 3 && leaders == 1 && followers == 2;
        },
        guard(60s)))
        << http_get(http_port_, "/api/cluster");

    // Kill the leader: another peer leads, the history says so.
    size_t leader_index = 0;
    for (size_t i = 0; i < ports.size(); ++i) {
        if (addr(ports[i]) == leader) {
            leader_index = i;
        }
    }
    peers_[leader_index]->sigkill();
    std::string next;
    ASSERT_TRUE(eventually(
        [&] {
            auto m = members();
            for (const auto& [a, v] : m) {
                if (a != leader && v.at("state") == "UP" && v.at("dledgerRole") == "Leader" &&
                    v.at("role") == "MASTER") {
                    next = a;
                }
            }
            return !next.empty() && m[leader]["state"] == "DOWN";
        },
        guard(60s)))
        << http_get(http_port_, "/api/cluster");
    // The poll that first sees the new leader may see it before it registers as brokerId 0,
    // or as a Candidate first: only the end states are checked.
    ASSERT_TRUE(eventually(
        [&] {
            return has_event(next, "master", next) && has_event(next, "role", "MASTER") &&
                   has_event(next, "dledger", "Leader");
        },
        guard(30s)))
        << http_get(http_port_, "/api/history");

    // The page: the new leader's row, the old one DOWN, the role change in the history list.
    std::string dom;
    ASSERT_TRUE(eventually(
        [&] {
            dom = dump_dom();
            return member_row(dom, next).find("DLedger leader") != std::string::npos &&
                   member_row(dom, leader).find("class=\"member down\"") != std::string::npos &&
                   dom.find("class=\"change kind-role\"") != std::string::npos;
        },
        guard(60s)))
        << dom;
    screenshot("dashboard-dledger.png");
}

}  // namespace
}  // namespace comet::it
