// Integration tests of the mqadmin tool: one real mqnamesrv + mqbroker on 127.0.0.1 (ephemeral
// ports) for the whole suite; every mqadmin command runs as a subprocess and its output is
// parsed. Each subprocess run is bounded (killed after 30 s); so is every polling loop.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "harness.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

extern char** environ;

namespace comet::it {
namespace {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using namespace std::chrono_literals;

struct RunResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

std::string read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Runs mqadmin with `args`, stdout/stderr to files under `dir`; `env` entries are added to the
// environment (NAMESRV_ADDR is removed first so only what a test passes counts).
RunResult run_mqadmin(const TempDir& dir, const std::vector<std::string>& args,
                      const std::vector<std::string>& env = {}) {
    static int counter = 0;
    const std::string stem = dir.sub("mqadmin-" + std::to_string(++counter));
    const std::string out_path = stem + ".out";
    const std::string err_path = stem + ".err";
    const std::string bin = binary_path("mqadmin");

    std::vector<std::string> argv_s{bin};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    std::vector<std::string> env_s;
    for (char** e = environ; *e != nullptr; ++e) {
        if (std::string_view(*e).rfind("NAMESRV_ADDR=", 0) != 0) {
            env_s.emplace_back(*e);
        }
    }
    env_s.insert(env_s.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (auto& e : env_s) {
        envp.push_back(e.data());
    }
    envp.push_back(nullptr);

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid = -1;
    RunResult r;
    const int rc = posix_spawn(&pid, bin.c_str(), &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        r.err = "posix_spawn failed: " + std::string(strerror(rc));
        return r;
    }
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    int status = 0;
    while (true) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            break;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            r.err = "mqadmin timed out\n";
            break;
        }
        std::this_thread::sleep_for(10ms);
    }
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_all(out_path);
    r.err += read_all(err_path);
    return r;
}

std::vector<std::string> words_of(const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    std::string w;
    while (in >> w) {
        out.push_back(w);
    }
    return out;
}

// The value of a "Key:   value" line of printMsg output, or "" when absent.
std::string field(const std::string& text, const std::string& key) {
    for (const auto& line : lines_of(text)) {
        if (line.rfind(key + ":", 0) == 0) {
            size_t p = line.find_first_not_of(' ', key.size() + 1);
            return p == std::string::npos ? "" : line.substr(p);
        }
    }
    return "";
}

// Data rows (not starting with '#') of a table whose header line starts with `header_start`.
std::vector<std::vector<std::string>> table_rows(const std::string& text,
                                                 const std::string& header_start) {
    std::vector<std::vector<std::string>> rows;
    bool in_table = false;
    for (const auto& line : lines_of(text)) {
        if (line.rfind(header_start, 0) == 0) {
            in_table = true;
            continue;
        }
        if (!in_table) {
            continue;
        }
        if (line.empty()) {
            break;
        }
        rows.push_back(words_of(line));
    }
    return rows;
}

class MqadminIt : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir("comet_mqadmin_it");
        ns_port_ = free_port();
        broker_port_ = free_port();
        auto ns = start_namesrv(*dir_, ns_port_);
        ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
        ns_ = std::move(ns).value().release();
        ASSERT_TRUE(ns_->wait_for_port(ns_port_, 10s).is_ok()) << ns_->log_tail();
        auto b = start_broker(*dir_, broker_port_, addr(ns_port_));
        ASSERT_TRUE(b.is_ok()) << b.status().to_string();
        broker_ = std::move(b).value().release();
        ASSERT_TRUE(broker_->wait_for_port(broker_port_, 20s).is_ok()) << broker_->log_tail();
        // Wait until the broker registered with the name server.
        ASSERT_TRUE(eventually(
            [] {
                RunResult r = run_mqadmin(*dir_, {"clusterList", "-n", addr(ns_port_)});
                return r.exit_code == 0 && r.out.find("broker-a") != std::string::npos;
            },
            15s));
    }
    static void TearDownTestSuite() {
        delete broker_;
        delete ns_;
        delete dir_;
        broker_ = nullptr;
        ns_ = nullptr;
        dir_ = nullptr;
    }

    void SetUp() override { ASSERT_NE(broker_, nullptr) << "cluster did not start"; }

    static RunResult admin(std::vector<std::string> args) {
        args.push_back("-n");
        args.push_back(addr(ns_port_));
        return run_mqadmin(*dir_, args);
    }
    static std::string ns() { return addr(ns_port_); }
    static std::string broker() { return addr(broker_port_); }

    // updateTopic on the cluster; waits until the name server lists it.
    static void create_topic(const std::string& topic, int queues) {
        RunResult r = admin({"updateTopic", "-c", "DefaultCluster", "-t", topic, "-r",
                             std::to_string(queues), "-w", std::to_string(queues)});
        ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
        EXPECT_NE(r.out.find("create topic to " + broker() + " success."), std::string::npos)
            << r.out;
        ASSERT_TRUE(eventually(
            [&] {
                RunResult l = admin({"topicList"});
                for (const auto& line : lines_of(l.out)) {
                    if (line == topic) {
                        return true;
                    }
                }
                return false;
            },
            10s));
    }

    static inline TempDir* dir_ = nullptr;
    static inline Process* ns_ = nullptr;
    static inline Process* broker_ = nullptr;
    static inline uint16_t ns_port_ = 0;
    static inline uint16_t broker_port_ = 0;
};

TEST_F(MqadminIt, HelpListsCommandsAndFlags) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{}, std::vector<std::string>{"help"}}) {
        RunResult r = run_mqadmin(*dir_, args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        for (const char* cmd :
             {"updateTopic", "deleteTopic", "topicList", "topicRoute", "topicStatus", "clusterList",
              "brokerStatus", "getBrokerConfig", "updateBrokerConfig", "updateSubGroup",
              "consumerProgress", "queryMsgById", "queryMsgByKey", "queryMsgByOffset",
              "sendMessage", "consumeMessage"}) {
            EXPECT_NE(r.out.find(std::string("   ") + cmd + " "), std::string::npos) << cmd;
        }
    }
    RunResult h = run_mqadmin(*dir_, {"help", "updateTopic"});
    ASSERT_EQ(h.exit_code, 0) << h.err;
    EXPECT_EQ(h.out.rfind("usage: mqadmin updateTopic", 0), 0u) << h.out;
    for (const char* flag : {" -r,--readQueueNums", " -w,--writeQueueNums", " -p,--perm",
                             " -t,--topic", " -n,--namesrvAddr", " -c,--clusterName"}) {
        EXPECT_NE(h.out.find(flag), std::string::npos) << flag << "\n" << h.out;
    }
}

TEST_F(MqadminIt, ErrorsExitNonZeroWithAClearMessage) {
    RunResult unknown = run_mqadmin(*dir_, {"noSuchCommand"});
    EXPECT_NE(unknown.exit_code, 0);
    EXPECT_NE(unknown.err.find("the command 'noSuchCommand' does not exist"), std::string::npos)
        << unknown.err;

    RunResult missing = admin({"topicRoute"});
    EXPECT_NE(missing.exit_code, 0);
    EXPECT_NE(missing.err.find("missing required option: -t"), std::string::npos) << missing.err;

    RunResult bad_flag = admin({"topicList", "-z"});
    EXPECT_NE(bad_flag.exit_code, 0);
    EXPECT_NE(bad_flag.err.find("unknown option -z"), std::string::npos) << bad_flag.err;

    RunResult no_ns = run_mqadmin(*dir_, {"topicList"});
    EXPECT_NE(no_ns.exit_code, 0);
    EXPECT_NE(no_ns.err.find("NAMESRV_ADDR"), std::string::npos) << no_ns.err;

    // Nothing listens on this port.
    const std::string dead = addr(free_port());
    RunResult unreachable = run_mqadmin(*dir_, {"topicList", "-n", dead});
    EXPECT_EQ(unreachable.exit_code, 1);
    EXPECT_NE(unreachable.err.find("ERROR: topicList command failed"), std::string::npos)
        << unreachable.err;
    EXPECT_NE(unreachable.err.find("UNAVAILABLE"), std::string::npos) << unreachable.err;

    // A broker-side refusal carries the RocketMQ code name and remark.
    RunResult no_topic = admin({"topicRoute", "-t", "NoSuchTopicHere"});
    EXPECT_EQ(no_topic.exit_code, 1);
    EXPECT_NE(no_topic.err.find("TOPIC_NOT_EXIST"), std::string::npos) << no_topic.err;
}

TEST_F(MqadminIt, NamesrvAddressFromEnvironment) {
    RunResult r = run_mqadmin(*dir_, {"clusterList"}, {"NAMESRV_ADDR=" + ns()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("broker-a"), std::string::npos) << r.out;
}

TEST_F(MqadminIt, ClusterListAndBrokerStatus) {
    RunResult r = admin({"clusterList"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(r.out.rfind("#Cluster Name", 0), 0u) << r.out;
    for (const char* col : {"#Broker Name", "#BID", "#Addr", "#Version", "#InTPS(LOAD)",
                            "#OutTPS(LOAD)", "#PCWait(ms)", "#Hour", "#SPACE"}) {
        EXPECT_NE(r.out.find(col), std::string::npos) << col;
    }
    auto rows = table_rows(r.out, "#Cluster Name");
    ASSERT_EQ(rows.size(), 1u) << r.out;
    ASSERT_GE(rows[0].size(), 5u);
    EXPECT_EQ(rows[0][0], "DefaultCluster");
    EXPECT_EQ(rows[0][1], "broker-a");
    EXPECT_EQ(rows[0][2], "0");
    EXPECT_EQ(rows[0][3], broker());

    RunResult s = admin({"brokerStatus", "-b", broker()});
    ASSERT_EQ(s.exit_code, 0) << s.err;
    std::map<std::string, std::string> kv;
    for (const auto& line : lines_of(s.out)) {
        size_t colon = line.find(": ");
        ASSERT_NE(colon, std::string::npos) << line;
        auto w = words_of(line.substr(0, colon));
        ASSERT_EQ(w.size(), 1u) << line;
        kv[w[0]] = line.substr(colon + 2);
    }
    EXPECT_TRUE(kv.count("brokerVersionDesc")) << s.out;
    EXPECT_TRUE(kv.count("putTps")) << s.out;

    RunResult sc = admin({"brokerStatus", "-c", "DefaultCluster"});
    ASSERT_EQ(sc.exit_code, 0) << sc.err;
    EXPECT_EQ(sc.out.rfind(broker(), 0), 0u) << sc.out;
}

TEST_F(MqadminIt, BrokerConfigRoundTrip) {
    auto read_value = [&](const std::string& key) {
        RunResult r = admin({"getBrokerConfig", "-b", broker()});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(r.out.rfind("============" + broker() + "============", 0), 0u) << r.out;
        for (const auto& line : lines_of(r.out)) {
            size_t eq = line.find('=');
            if (eq != std::string::npos && eq > 0 &&
                words_of(line.substr(0, eq)) == std::vector<std::string>{key}) {
                size_t p = line.find_first_not_of(' ', eq + 1);
                return p == std::string::npos ? std::string() : line.substr(p);
            }
        }
        return std::string("<absent>");
    };
    EXPECT_EQ(read_value("brokerName"), "broker-a");
    const std::string before = read_value("defaultTopicQueueNums");
    ASSERT_NE(before, "<absent>");
    const std::string next = before == "5" ? "6" : "5";
    RunResult u =
        admin({"updateBrokerConfig", "-b", broker(), "-k", "defaultTopicQueueNums", "-v", next});
    ASSERT_EQ(u.exit_code, 0) << u.err;
    EXPECT_NE(u.out.find("update broker config success, " + broker()), std::string::npos);
    EXPECT_EQ(read_value("defaultTopicQueueNums"), next);

    RunResult bad = admin({"updateBrokerConfig", "-c", "DefaultCluster", "-k",
                           "defaultTopicQueueNums", "-v", "not-a-number"});
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_NE(bad.err.find("SYSTEM_ERROR"), std::string::npos) << bad.err;
    EXPECT_EQ(read_value("defaultTopicQueueNums"), next);

    // A key that defines the durability contract is read only at start-up: a runtime change is
    // refused, so getBrokerConfig and explainDurability never describe a contract not in force.
    const std::string isr = read_value("inSyncReplicas");
    RunResult quorum =
        admin({"updateBrokerConfig", "-b", broker(), "-k", "inSyncReplicas", "-v", "2"});
    EXPECT_EQ(quorum.exit_code, 1);
    EXPECT_NE(quorum.err.find("inSyncReplicas is read only at start-up"), std::string::npos)
        << quorum.err;
    EXPECT_EQ(read_value("inSyncReplicas"), isr);
    RunResult same =
        admin({"updateBrokerConfig", "-b", broker(), "-k", "brokerName", "-v", "broker-a"});
    EXPECT_EQ(same.exit_code, 0) << same.err;

    RunResult neither = admin({"getBrokerConfig"});
    EXPECT_NE(neither.exit_code, 0);
    EXPECT_NE(neither.err.find("-b brokerAddr or -c clusterName"), std::string::npos)
        << neither.err;
}

TEST_F(MqadminIt, TopicLifecycle) {
    const std::string topic = "MqadminTopicLifecycle";
    create_topic(topic, 3);

    RunResult route = admin({"topicRoute", "-t", topic, "-l"});
    ASSERT_EQ(route.exit_code, 0) << route.err;
    auto rows = table_rows(route.out, "#ClusterName");
    ASSERT_EQ(rows.size(), 1u) << route.out;
    ASSERT_EQ(rows[0].size(), 6u) << route.out;
    EXPECT_EQ(rows[0][0], "DefaultCluster");
    EXPECT_EQ(rows[0][1], "broker-a");
    EXPECT_EQ(rows[0][3], "3");
    EXPECT_EQ(rows[0][4], "3");
    EXPECT_EQ(rows[0][5], "6");

    RunResult json = admin({"topicRoute", "-t", topic});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    EXPECT_NE(json.out.find("\"readQueueNums\": 3"), std::string::npos) << json.out;
    EXPECT_NE(json.out.find("\"writeQueueNums\": 3"), std::string::npos) << json.out;
    EXPECT_NE(json.out.find("\"brokerName\": \"broker-a\""), std::string::npos) << json.out;

    RunResult status = admin({"topicStatus", "-t", topic});
    ASSERT_EQ(status.exit_code, 0) << status.err;
    auto srows = table_rows(status.out, "#Broker Name");
    ASSERT_EQ(srows.size(), 3u) << status.out;
    for (size_t i = 0; i < srows.size(); ++i) {
        EXPECT_EQ(srows[i][1], std::to_string(i));
        EXPECT_EQ(srows[i][3], "0");  // max offset of an empty queue
    }

    RunResult del = admin({"deleteTopic", "-t", topic, "-c", "DefaultCluster"});
    ASSERT_EQ(del.exit_code, 0) << del.err;
    EXPECT_NE(del.out.find("delete topic [" + topic + "] from NameServer success."),
              std::string::npos);
    RunResult list = admin({"topicList"});
    ASSERT_EQ(list.exit_code, 0) << list.err;
    for (const auto& line : lines_of(list.out)) {
        EXPECT_NE(line, topic);
    }
    RunResult gone = admin({"topicRoute", "-t", topic});
    EXPECT_EQ(gone.exit_code, 1);
}

TEST_F(MqadminIt, SendThenQueryAndConsume) {
    const std::string topic = "MqadminMessages";
    create_topic(topic, 2);
    const std::string body = "hello from mqadmin sendMessage";
    RunResult send = admin({"sendMessage", "-t", topic, "-p", body, "-k", "key-42", "-c", "TagA",
                            "-b", "broker-a", "-i", "1"});
    ASSERT_EQ(send.exit_code, 0) << send.err;
    auto rows = table_rows(send.out, "#Broker Name");
    ASSERT_EQ(rows.size(), 1u) << send.out;
    ASSERT_EQ(rows[0].size(), 5u) << send.out;
    EXPECT_EQ(rows[0][0], "broker-a");
    EXPECT_EQ(rows[0][1], "1");
    EXPECT_EQ(rows[0][2], "SEND_OK");
    const std::string msg_id = rows[0][3];
    const std::string offset_id = rows[0][4];

    RunResult by_id = admin({"queryMsgById", "-i", offset_id});
    ASSERT_EQ(by_id.exit_code, 0) << by_id.err;
    EXPECT_EQ(field(by_id.out, "Message Body"), body) << by_id.out;
    EXPECT_EQ(field(by_id.out, "Topic"), topic);
    EXPECT_EQ(field(by_id.out, "Tags"), "[TagA]");
    EXPECT_EQ(field(by_id.out, "Keys"), "[key-42]");
    EXPECT_EQ(field(by_id.out, "Queue ID"), "1");
    EXPECT_EQ(field(by_id.out, "MsgId"), msg_id);

    RunResult by_uniq = admin({"queryMsgById", "-i", msg_id, "-t", topic});
    ASSERT_EQ(by_uniq.exit_code, 0) << by_uniq.err;
    EXPECT_EQ(field(by_uniq.out, "Message Body"), body) << by_uniq.out;

    RunResult by_key = admin({"queryMsgByKey", "-t", topic, "-k", "key-42"});
    ASSERT_EQ(by_key.exit_code, 0) << by_key.err;
    auto krows = table_rows(by_key.out, "#Message ID");
    ASSERT_EQ(krows.size(), 1u) << by_key.out;
    EXPECT_EQ(krows[0][0], msg_id);
    EXPECT_EQ(krows[0][1], "1");
    EXPECT_EQ(krows[0][2], "0");
    EXPECT_NE(by_key.out.find(body), std::string::npos);

    RunResult no_key = admin({"queryMsgByKey", "-t", topic, "-k", "no-such-key"});
    EXPECT_EQ(no_key.exit_code, 1);

    RunResult by_offset =
        admin({"queryMsgByOffset", "-t", topic, "-b", "broker-a", "-i", "1", "-o", "0"});
    ASSERT_EQ(by_offset.exit_code, 0) << by_offset.err;
    EXPECT_EQ(field(by_offset.out, "Message Body"), body) << by_offset.out;
    EXPECT_EQ(field(by_offset.out, "OffsetID"), offset_id);

    RunResult status = admin({"topicStatus", "-t", topic});
    ASSERT_EQ(status.exit_code, 0) << status.err;
    auto srows = table_rows(status.out, "#Broker Name");
    ASSERT_EQ(srows.size(), 2u) << status.out;
    EXPECT_EQ(srows[0][3], "0");
    EXPECT_EQ(srows[1][1], "1");
    EXPECT_EQ(srows[1][3], "1") << status.out;  // max offset after one message

    RunResult consume = admin({"consumeMessage", "-t", topic});
    ASSERT_EQ(consume.exit_code, 0) << consume.err;
    EXPECT_NE(consume.out.find("MSGID: " + msg_id), std::string::npos) << consume.out;
    EXPECT_NE(consume.out.find("BODY: " + body), std::string::npos) << consume.out;
    EXPECT_NE(consume.out.find("Consumed 1 message(s)"), std::string::npos) << consume.out;

    RunResult other_queue = admin({"consumeMessage", "-t", topic, "-i", "0"});
    ASSERT_EQ(other_queue.exit_code, 0) << other_queue.err;
    EXPECT_NE(other_queue.out.find("Consumed 0 message(s)"), std::string::npos);

    // A multi-line body stays on its row, escaped; -i/-o pick the queue and start offset.
    for (const char* b : {"first", "line1\nline2"}) {
        RunResult s = admin({"sendMessage", "-t", topic, "-p", b, "-b", "broker-a", "-i", "0"});
        ASSERT_EQ(s.exit_code, 0) << s.err;
    }
    RunResult from1 = admin({"consumeMessage", "-t", topic, "-i", "0", "-o", "1"});
    ASSERT_EQ(from1.exit_code, 0) << from1.err;
    EXPECT_NE(from1.out.find("QueueOffset: 1 BODY: line1\\nline2\n"), std::string::npos)
        << from1.out;
    EXPECT_EQ(from1.out.find("BODY: first"), std::string::npos) << from1.out;
    EXPECT_NE(from1.out.find("Consumed 1 message(s)"), std::string::npos) << from1.out;
}

TEST_F(MqadminIt, SubGroupAndConsumerProgress) {
    const std::string topic = "MqadminProgress";
    const std::string group = "mqadmin_progress_group";
    create_topic(topic, 1);
    RunResult sg = admin({"updateSubGroup", "-c", "DefaultCluster", "-g", group, "-r", "3"});
    ASSERT_EQ(sg.exit_code, 0) << sg.err;
    EXPECT_NE(sg.out.find("create subscription group to " + broker() + " success."),
              std::string::npos)
        << sg.out;
    EXPECT_NE(sg.out.find("retryMaxTimes=3"), std::string::npos) << sg.out;

    for (int i = 0; i < 3; ++i) {
        RunResult s = admin({"sendMessage", "-t", topic, "-p", "m" + std::to_string(i)});
        ASSERT_EQ(s.exit_code, 0) << s.err;
    }
    // The group commits offset 1 on queue 0 (as a consumer would).
    net::RemotingClient client;
    client.start();
    auto resp = call(
        client, broker_port_,
        request(
            Req::kUpdateConsumerOffset,
            {{"consumerGroup", group}, {"topic", topic}, {"queueId", "0"}, {"commitOffset", "1"}}));
    ASSERT_TRUE(resp.is_ok()) << resp.status().to_string();
    ASSERT_EQ(resp->code, RC::kSuccess);
    client.shutdown();

    RunResult p = admin({"consumerProgress", "-g", group, "-t", topic});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    auto rows = table_rows(p.out, "#Topic");
    ASSERT_EQ(rows.size(), 1u) << p.out;
    ASSERT_GE(rows[0].size(), 6u);
    EXPECT_EQ(rows[0][0], topic);
    EXPECT_EQ(rows[0][1], "broker-a");
    EXPECT_EQ(rows[0][2], "0");
    EXPECT_EQ(rows[0][3], "3");  // broker offset
    EXPECT_EQ(rows[0][4], "1");  // consumer offset
    EXPECT_EQ(rows[0][5], "2");  // diff
    EXPECT_NE(p.out.find("Diff Total: 2"), std::string::npos) << p.out;

    RunResult bad = admin({"updateSubGroup", "-b", broker(), "-g", group, "-s", "maybe"});
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_NE(bad.err.find("true or false"), std::string::npos) << bad.err;
}

// RocketMQ 4.9.8's wipeWritePerm / addWritePerm (name servers) and the client / offset commands
// (consumerConnection, producerConnection, brokerConsumeStats, resetOffsetByTime with and without
// a consumer online, cloneGroupOffset). A raw client plays the consumer and producer.
TEST_F(MqadminIt, ClientAndWritePermCommands) {
    const std::string topic = "MqadminClients";
    create_topic(topic, 1);

    // Write permission on the name server's route.
    RunResult wipe = admin({"wipeWritePerm", "-b", "broker-a"});
    ASSERT_EQ(wipe.exit_code, 0) << wipe.err;
    EXPECT_NE(
        wipe.out.find("wipe write perm of broker[broker-a] in name server[" + ns() + "] OK, "),
        std::string::npos)
        << wipe.out;
    auto route_perm = [&] {
        RunResult r = admin({"topicRoute", "-t", topic, "-l"});
        auto rows = table_rows(r.out, "#ClusterName");
        return rows.empty() ? std::string("?") : rows[0].back();
    };
    EXPECT_EQ(route_perm(), "4") << admin({"topicRoute", "-t", topic, "-l"}).out;
    RunResult add = admin({"addWritePerm", "-b", "broker-a"});
    ASSERT_EQ(add.exit_code, 0) << add.err;
    EXPECT_NE(add.out.find("add write perm of broker[broker-a] in name server[" + ns() + "] OK, "),
              std::string::npos)
        << add.out;
    EXPECT_EQ(route_perm(), "6");

    // A consumer (group mqadmin_cg) and a producer (group mqadmin_pg) on one connection.
    net::RemotingClient client;
    client.start();
    const std::string hb =
        R"({"clientID":"127.0.0.1@9","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET",)"
        R"("consumeType":"CONSUME_PASSIVELY","groupName":"mqadmin_cg","messageModel":"CLUSTERING",)"
        R"("subscriptionDataSet":[{"classFilterMode":false,"codeSet":[],"expressionType":"TAG",)"
        R"("subString":"*","subVersion":1,"tagsSet":[],"topic":")" +
        topic + R"("}],"unitMode":false}],"producerDataSet":[{"groupName":"mqadmin_pg"}]})";
    auto hb_resp = call(client, broker_port_, request(Req::kHeartBeat, {}, hb));
    ASSERT_TRUE(hb_resp.is_ok() && hb_resp->code == RC::kSuccess);
    auto commit = [&](const std::string& group, int64_t offset) {
        auto r =
            call(client, broker_port_,
                 request(Req::kUpdateConsumerOffset, {{"consumerGroup", group},
                                                      {"topic", topic},
                                                      {"queueId", "0"},
                                                      {"commitOffset", std::to_string(offset)}}));
        ASSERT_TRUE(r.is_ok() && r->code == RC::kSuccess);
    };
    auto offset_of = [&](const std::string& group) -> int64_t {
        auto r = call(client, broker_port_,
                      request(Req::kQueryConsumerOffset,
                              {{"consumerGroup", group}, {"topic", topic}, {"queueId", "0"}}));
        return r.is_ok() && r->code == RC::kSuccess && r->ext("offset") != nullptr
                   ? std::stoll(*r->ext("offset"))
                   : -100;
    };
    for (int i = 0; i < 2; ++i) {
        RunResult s = admin({"sendMessage", "-t", topic, "-p", "m" + std::to_string(i)});
        ASSERT_EQ(s.exit_code, 0) << s.err;
    }
    commit("mqadmin_cg", 2);
    commit("mqadmin_off", 2);

    // consumerConnection finds the group through its retry topic's route (registered soon).
    RunResult cc;
    ASSERT_TRUE(eventually(
        [&] {
            cc = admin({"consumerConnection", "-g", "mqadmin_cg"});
            return cc.exit_code == 0;
        },
        10s))
        << cc.err;
    auto conns = table_rows(cc.out, "#ClientId");
    ASSERT_EQ(conns.size(), 1u) << cc.out;
    EXPECT_EQ(conns[0][0], "127.0.0.1@9");
    EXPECT_EQ(conns[0][1].rfind("127.0.0.1:", 0), 0u);
    EXPECT_NE(cc.out.find(topic), std::string::npos);
    EXPECT_NE(cc.out.find("ConsumeType: CONSUME_PASSIVELY"), std::string::npos) << cc.out;
    EXPECT_NE(cc.out.find("ConsumeFromWhere: CONSUME_FROM_LAST_OFFSET"), std::string::npos);
    RunResult cc_b = admin({"consumerConnection", "-g", "nobody_group", "-b", broker()});
    EXPECT_EQ(cc_b.exit_code, 1);
    EXPECT_NE(cc_b.err.find("CONSUMER_NOT_ONLINE"), std::string::npos) << cc_b.err;

    RunResult pc = admin({"producerConnection", "-g", "mqadmin_pg", "-t", topic});
    ASSERT_EQ(pc.exit_code, 0) << pc.err;
    EXPECT_EQ(pc.out.rfind("0001  127.0.0.1@9", 0), 0u) << pc.out;

    RunResult bcs = admin({"brokerConsumeStats", "-b", broker()});
    ASSERT_EQ(bcs.exit_code, 0) << bcs.err;
    bool found = false;
    for (const auto& row : table_rows(bcs.out, "#Topic")) {
        if (row.size() >= 7 && row[0] == topic && row[1] == "mqadmin_cg") {
            found = true;
            EXPECT_EQ(row[4], "2");  // broker offset
            EXPECT_EQ(row[5], "2");  // consumer offset
        }
    }
    EXPECT_TRUE(found) << bcs.out;
    EXPECT_NE(bcs.out.find("Diff Total: "), std::string::npos);

    // Consumer online: the broker resets (and notifies the client).
    RunResult reset = admin({"resetOffsetByTime", "-g", "mqadmin_cg", "-t", topic, "-s", "0"});
    ASSERT_EQ(reset.exit_code, 0) << reset.err;
    auto reset_rows = table_rows(reset.out, "#brokerName");
    ASSERT_EQ(reset_rows.size(), 1u) << reset.out;
    EXPECT_EQ(reset_rows[0], (std::vector<std::string>{"broker-a", "0", "0"}));
    EXPECT_EQ(offset_of("mqadmin_cg"), 0);
    // No consumer online: the old way (SEARCH_OFFSET_BY_TIMESTAMP + UPDATE_CONSUMER_OFFSET).
    RunResult old = admin({"resetOffsetByTime", "-g", "mqadmin_off", "-t", topic, "-s", "0"});
    ASSERT_EQ(old.exit_code, 0) << old.err;
    EXPECT_NE(old.out.find("rollback consumer offset by specified consumerGroup[mqadmin_off]"),
              std::string::npos)
        << old.out;
    auto old_rows = table_rows(old.out, "#brokerName");
    ASSERT_EQ(old_rows.size(), 1u) << old.out;
    EXPECT_EQ(old_rows[0], (std::vector<std::string>{"broker-a", "0", "2", "2", "0", "0"}));
    EXPECT_EQ(offset_of("mqadmin_off"), 0);
    // skipAccumulatedMessage: the same reset to the max offset, the table only.
    RunResult skip = admin({"skipAccumulatedMessage", "-g", "mqadmin_off", "-t", topic});
    ASSERT_EQ(skip.exit_code, 0) << skip.err;
    EXPECT_EQ(skip.out.find("rollback consumer offset"), std::string::npos) << skip.out;
    auto skip_rows = table_rows(skip.out, "#brokerName");
    ASSERT_EQ(skip_rows.size(), 1u) << skip.out;
    EXPECT_EQ(skip_rows[0], (std::vector<std::string>{"broker-a", "0", "2", "0", "2", "2"}));
    EXPECT_EQ(offset_of("mqadmin_off"), 2);

    commit("mqadmin_cg", 1);
    RunResult clone = admin(
        {"cloneGroupOffset", "-s", "mqadmin_cg", "-d", "mqadmin_clone", "-t", topic, "-o", "true"});
    ASSERT_EQ(clone.exit_code, 0) << clone.err;
    EXPECT_NE(clone.out.find("clone group offset success. srcGroup[mqadmin_cg], "
                             "destGroup=[mqadmin_clone], topic[" +
                             topic + "]"),
              std::string::npos)
        << clone.out;
    EXPECT_EQ(offset_of("mqadmin_clone"), 1);
    client.shutdown();

    RunResult help = run_mqadmin(*dir_, {"help"});
    for (const char* cmd : {"wipeWritePerm", "addWritePerm", "consumerConnection",
                            "producerConnection", "brokerConsumeStats", "resetOffsetByTime",
                            "skipAccumulatedMessage", "cloneGroupOffset"}) {
        EXPECT_NE(help.out.find(std::string("   ") + cmd + " "), std::string::npos) << cmd;
    }
}

}  // namespace
}  // namespace comet::it
