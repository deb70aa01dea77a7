// Integration tests of mqadmin's operation commands (apps/mqadmin/ops_commands.cc): one real
// mqnamesrv + mqbroker on 127.0.0.1 for the suite; each command runs as a subprocess (bounded
// by run_command's timeout), its output is checked and its effect read back over the wire.

#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "harness.h"
#include "net/processor.h"
#include "net/thread_pool_executor.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using namespace std::chrono_literals;

std::vector<std::string> words_of(const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    std::string w;
    while (in >> w) {
        out.push_back(w);
    }
    return out;
}

// The value of a "Key:   value" line, or "" when absent.
std::string field(const std::string& text, const std::string& key) {
    for (const auto& line : lines_of(text)) {
        if (line.rfind(key + ":", 0) == 0) {
            size_t p = line.find_first_not_of(' ', key.size() + 1);
            return p == std::string::npos ? "" : line.substr(p);
        }
    }
    return "";
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

size_t count_of(const std::string& text, const std::string& part) {
    size_t n = 0;
    for (size_t p = text.find(part); p != std::string::npos; p = text.find(part, p + 1)) {
        ++n;
    }
    return n;
}

class MqadminOpsIt : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir("comet_mqadmin_ops_it");
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
        ASSERT_TRUE(eventually(
            [] {
                CommandResult r = admin({"clusterList"});
                return r.exit_code == 0 && contains(r.out, "broker-a");
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

    static CommandResult admin(std::vector<std::string> args) {
        args.insert(args.begin(), binary_path("mqadmin"));
        args.push_back("-n");
        args.push_back(addr(ns_port_));
        return run_command(*dir_, args);
    }
    static std::string broker() { return addr(broker_port_); }

    static void create_topic(const std::string& topic, int queues) {
        CommandResult r = admin({"updateTopic", "-b", broker(), "-t", topic, "-r",
                                 std::to_string(queues), "-w", std::to_string(queues)});
        ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
        ASSERT_TRUE(eventually(
            [&] {
                return admin({"topicRoute", "-t", topic}).exit_code == 0;
            },
            10s));
    }

    // The broker's subscription group table (GET_ALL_SUBSCRIPTIONGROUP_CONFIG body).
    static std::string group_table() {
        net::RemotingClient client;
        client.start();
        auto r = call(client, broker_port_, request(Req::kGetAllSubscriptionGroupConfig));
        return r.is_ok() && r->code == RC::kSuccess ? r->body : std::string("<error>");
    }

    // GET_KV_CONFIG from the name server: the value, or "<none>" when absent.
    static std::string kv(const std::string& ns, const std::string& key) {
        net::RemotingClient client;
        client.start();
        auto r =
            call(client, ns_port_, request(Req::kGetKvConfig, {{"namespace", ns}, {"key", key}}));
        if (!r.is_ok()) {
            return "<error>";
        }
        if (r->code != RC::kSuccess || r->ext("value") == nullptr) {
            return "<none>";
        }
        return *r->ext("value");
    }

    static inline TempDir* dir_ = nullptr;
    static inline Process* ns_ = nullptr;
    static inline Process* broker_ = nullptr;
    static inline uint16_t ns_port_ = 0;
    static inline uint16_t broker_port_ = 0;
};

TEST_F(MqadminOpsIt, HelpListsTheOperationCommands) {
    CommandResult r = run_command(*dir_, {binary_path("mqadmin"), "help"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const char* cmd :
         {"deleteSubGroup", "updateTopicPerm", "topicClusterList", "queryMsgByUniqueKey",
          "printMsg", "getNamesrvConfig", "updateNamesrvConfig", "updateKvConfig", "deleteKvConfig",
          "updateOrderConf"}) {
        EXPECT_TRUE(contains(r.out, std::string("   ") + cmd + " ")) << cmd;
    }
    CommandResult h = run_command(*dir_, {binary_path("mqadmin"), "help", "updateTopicPerm"});
    ASSERT_EQ(h.exit_code, 0) << h.err;
    for (const char* flag :
         {" -b,--brokerAddr", " -c,--clusterName", " -t,--topic", " -p,--perm"}) {
        EXPECT_TRUE(contains(h.out, flag)) << flag << "\n" << h.out;
    }
}

TEST_F(MqadminOpsIt, DeleteSubGroupFromBrokerAndCluster) {
    const std::string group = "OpsGroupToDelete";
    CommandResult c = admin({"updateSubGroup", "-b", broker(), "-g", group});
    ASSERT_EQ(c.exit_code, 0) << c.err;
    ASSERT_TRUE(contains(group_table(), "\"" + group + "\""));

    CommandResult d = admin({"deleteSubGroup", "-b", broker(), "-g", group});
    ASSERT_EQ(d.exit_code, 0) << d.err;
    EXPECT_EQ(d.out, "delete subscription group [" + group + "] from broker [" + broker() +
                         "] success.\n");
    EXPECT_FALSE(contains(group_table(), "\"" + group + "\""));

    ASSERT_EQ(admin({"updateSubGroup", "-b", broker(), "-g", group}).exit_code, 0);
    CommandResult dc = admin({"deleteSubGroup", "-c", "DefaultCluster", "-g", group});
    ASSERT_EQ(dc.exit_code, 0) << dc.err;
    EXPECT_TRUE(contains(dc.out, "delete subscription group [" + group + "] from broker [" +
                                     broker() + "] in cluster [DefaultCluster] success."))
        << dc.out;
    EXPECT_FALSE(contains(group_table(), "\"" + group + "\""));

    CommandResult neither = admin({"deleteSubGroup", "-g", group});
    EXPECT_EQ(neither.exit_code, 1);
    EXPECT_TRUE(contains(neither.err, "-b brokerAddr or -c clusterName")) << neither.err;
}

TEST_F(MqadminOpsIt, UpdateTopicPermChangesTheRoute) {
    const std::string topic = "OpsPermTopic";
    create_topic(topic, 2);
    CommandResult same = admin({"updateTopicPerm", "-b", broker(), "-t", topic, "-p", "6"});
    ASSERT_EQ(same.exit_code, 0) << same.err;
    EXPECT_EQ(same.out, "new perm equals to the old one!\n");

    CommandResult r = admin({"updateTopicPerm", "-b", broker(), "-t", topic, "-p", "4"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "update topic perm from 6 to 4 in " + broker() + " success.\n"))
        << r.out;
    EXPECT_TRUE(contains(
        r.out, "TopicConfig [topicName=" + topic + ", readQueueNums=2, writeQueueNums=2, perm=R--"))
        << r.out;
    // The broker re-registers; the name server's route then shows perm 4.
    EXPECT_TRUE(eventually(
        [&] {
            CommandResult l = admin({"topicRoute", "-t", topic, "-l"});
            for (const auto& line : lines_of(l.out)) {
                auto w = words_of(line);
                if (w.size() >= 2 && w[1] == "broker-a") {
                    return w.back() == "4";
                }
            }
            return false;
        },
        10s));

    CommandResult c = admin({"updateTopicPerm", "-c", "DefaultCluster", "-t", topic, "-p", "6"});
    ASSERT_EQ(c.exit_code, 0) << c.err;
    EXPECT_EQ(c.out, "update topic perm from 4 to 6 in " + broker() + " success.\n");

    CommandResult bad = admin({"updateTopicPerm", "-b", broker(), "-t", topic, "-p", "7"});
    EXPECT_EQ(bad.exit_code, 1);
}

TEST_F(MqadminOpsIt, TopicClusterList) {
    const std::string topic = "OpsClusterTopic";
    create_topic(topic, 1);
    CommandResult r = admin({"topicClusterList", "-t", topic});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "DefaultCluster\n");
    CommandResult none = admin({"topicClusterList", "-t", "OpsNoSuchTopic"});
    EXPECT_EQ(none.exit_code, 1);
    EXPECT_TRUE(contains(none.err, "TOPIC_NOT_EXIST")) << none.err;
}

TEST_F(MqadminOpsIt, NamesrvConfigGetAndUpdate) {
    CommandResult g = admin({"getNamesrvConfig"});
    ASSERT_EQ(g.exit_code, 0) << g.err;
    EXPECT_EQ(g.out.rfind("============" + addr(ns_port_) + "============\n", 0), 0u) << g.out;
    EXPECT_TRUE(contains(g.out, "listenPort")) << g.out;

    CommandResult u = admin({"updateNamesrvConfig", "-k", "orderMessageEnable", "-v", "true"});
    ASSERT_EQ(u.exit_code, 0) << u.err;
    EXPECT_EQ(u.out, "update name server config success![" + addr(ns_port_) +
                         "]\norderMessageEnable : true\n");
    CommandResult g2 = admin({"getNamesrvConfig"});
    ASSERT_EQ(g2.exit_code, 0) << g2.err;
    bool found = false;
    for (const auto& line : lines_of(g2.out)) {
        auto w = words_of(line);
        if (w.size() == 3 && w[0] == "orderMessageEnable") {
            EXPECT_EQ(w[1], "=");
            EXPECT_EQ(w[2], "true");
            found = true;
        }
    }
    EXPECT_TRUE(found) << g2.out;

    CommandResult bad = admin({"updateNamesrvConfig", "-k", "bad=key", "-v", "1"});
    EXPECT_EQ(bad.exit_code, 1) << bad.out;
}

TEST_F(MqadminOpsIt, KvConfigAndOrderConf) {
    CommandResult u = admin({"updateKvConfig", "-s", "OpsNs", "-k", "k1", "-v", "v1"});
    ASSERT_EQ(u.exit_code, 0) << u.err;
    EXPECT_EQ(u.out, "create or update kv config to namespace success.\n");
    EXPECT_EQ(kv("OpsNs", "k1"), "v1");
    CommandResult d = admin({"deleteKvConfig", "-s", "OpsNs", "-k", "k1"});
    ASSERT_EQ(d.exit_code, 0) << d.err;
    EXPECT_EQ(d.out, "delete kv config from namespace success.\n");
    EXPECT_EQ(kv("OpsNs", "k1"), "<none>");

    const std::string topic = "OpsOrderTopic";
    CommandResult put = admin({"updateOrderConf", "-t", topic, "-m", "put", "-v", "broker-a:4"});
    ASSERT_EQ(put.exit_code, 0) << put.err;
    EXPECT_EQ(put.out, "update orderConf success. topic=[" + topic + "], orderConf=[broker-a:4]\n");
    EXPECT_EQ(kv("ORDER_TOPIC_CONFIG", topic), "broker-a:4");
    CommandResult get = admin({"updateOrderConf", "-t", topic, "-m", "get"});
    ASSERT_EQ(get.exit_code, 0) << get.err;
    EXPECT_EQ(get.out, "get orderConf success. topic=[" + topic + "], orderConf=[broker-a:4] \n");
    CommandResult del = admin({"updateOrderConf", "-t", topic, "-m", "delete"});
    ASSERT_EQ(del.exit_code, 0) << del.err;
    EXPECT_EQ(del.out, "delete orderConf success. topic=[" + topic + "]\n");
    EXPECT_EQ(kv("ORDER_TOPIC_CONFIG", topic), "<none>");

    CommandResult empty = admin({"updateOrderConf", "-t", topic, "-m", "put"});
    EXPECT_EQ(empty.exit_code, 1);
    EXPECT_TRUE(contains(empty.err, "please set orderConf with option -v.")) << empty.err;
    CommandResult method = admin({"updateOrderConf", "-t", topic, "-m", "list"});
    EXPECT_EQ(method.exit_code, 1);
}

TEST_F(MqadminOpsIt, QueryMsgByUniqueKeyAndPrintMsg) {
    const std::string topic = "OpsMessages";
    create_topic(topic, 1);
    std::vector<std::string> ids;
    for (int i = 0; i < 3; ++i) {
        CommandResult s = admin({"sendMessage", "-t", topic, "-p", "body-" + std::to_string(i),
                                 "-c", i == 1 ? "TagB" : "TagA", "-k", "key-" + std::to_string(i),
                                 "-b", "broker-a", "-i", "0"});
        ASSERT_EQ(s.exit_code, 0) << s.err;
        // "#Broker Name ..." header, then: broker-a 0 SEND_OK <msgId> <offsetMsgId>.
        bool got = false;
        for (const auto& line : lines_of(s.out)) {
            auto w = words_of(line);
            if (w.size() == 5 && w[2] == "SEND_OK") {
                ids.push_back(w[3]);
                got = true;
            }
        }
        ASSERT_TRUE(got) << s.out;
    }

    CommandResult q;
    ASSERT_TRUE(eventually(
        [&] {
            q = admin({"queryMsgByUniqueKey", "-i", ids[1], "-t", topic});
            return q.exit_code == 0;
        },
        10s))
        << q.err;
    EXPECT_EQ(field(q.out, "Topic"), topic) << q.out;
    EXPECT_EQ(field(q.out, "Tags"), "[TagB]");
    EXPECT_EQ(field(q.out, "Keys"), "[key-1]");
    EXPECT_EQ(field(q.out, "Queue ID"), "0");
    EXPECT_EQ(field(q.out, "Queue Offset"), "1");
    const std::string body_path = field(q.out, "Message Body Path");
    EXPECT_EQ(body_path, "/tmp/rocketmq/msgbodys/" + ids[1]);
    {
        std::ifstream in(body_path, std::ios::binary);
        std::ostringstream ss;
        ss << in.rdbuf();
        EXPECT_EQ(ss.str(), "body-1");
    }
    EXPECT_TRUE(contains(q.out, "WARN: No Consumer")) << q.out;

    CommandResult missing =
        admin({"queryMsgByUniqueKey", "-i", "0A0000000000000000000000000000FF", "-t", topic});
    EXPECT_EQ(missing.exit_code, 1);
    // -g/-d: the broker hands the message to that client; its answer is printed.
    net::RemotingClient consumer;
    auto exec = std::make_shared<net::ThreadPoolExecutor>("it_direct_cb", 1);
    consumer.register_processor(
        Req::kConsumeMessageDirectly,
        net::make_processor(
            [](const net::ConnectionPtr&, protocol::RemotingCommand req, net::Responder responder) {
                auto resp = protocol::RemotingCommand::response_to(req, RC::kSuccess);
                resp.body = R"({"autoCommit":true,"consumeResult":"CR_SUCCESS","order":false,)"
                            R"("remark":"got )" +
                            std::to_string(req.body.size()) + R"( bytes","spentTimeMills":3})";
                responder(std::move(resp));
            }),
        exec);
    consumer.start();
    const std::string hb =
        R"({"clientID":"127.0.0.1@direct","consumerDataSet":[{"consumeFromWhere":)"
        R"("CONSUME_FROM_FIRST_OFFSET","consumeType":"CONSUME_PASSIVELY","groupName":"GDirect",)"
        R"("messageModel":"CLUSTERING","subscriptionDataSet":[{"classFilterMode":false,)"
        R"("codeSet":[],"expressionType":"TAG","subString":"*","subVersion":1,"tagsSet":[],)"
        R"("topic":")" +
        topic + R"("}],"unitMode":false}],"producerDataSet":[]})";
    auto hb_resp = call(consumer, broker_port_, request(Req::kHeartBeat, {}, hb));
    ASSERT_TRUE(hb_resp.is_ok() && hb_resp->code == RC::kSuccess);
    CommandResult direct = admin({"queryMsgByUniqueKey", "-i", ids[1], "-t", topic, "-g", "GDirect",
                                  "-d", "127.0.0.1@direct"});
    ASSERT_EQ(direct.exit_code, 0) << direct.err;
    EXPECT_EQ(direct.out.rfind("ConsumeMessageDirectlyResult [order=false, autoCommit=true, "
                               "consumeResult=CR_SUCCESS, remark=got ",
                               0),
              0u)
        << direct.out;
    EXPECT_TRUE(contains(direct.out, " bytes, spentTimeMills=3]\n")) << direct.out;
    CommandResult offline =
        admin({"queryMsgByUniqueKey", "-i", ids[1], "-t", topic, "-g", "GDirect", "-d", "nobody"});
    EXPECT_EQ(offline.exit_code, 1);
    EXPECT_TRUE(contains(offline.err, "not online")) << offline.err;
    consumer.shutdown();

    // Dispatch to the ConsumeQueue is asynchronous: wait until all three are visible.
    CommandResult p;
    ASSERT_TRUE(eventually(
        [&] {
            p = admin({"printMsg", "-t", topic});
            return p.exit_code == 0 && count_of(p.out, "MSGID: ") == 3;
        },
        10s))
        << p.out << p.err;
    EXPECT_TRUE(contains(p.out, "minOffset=0, maxOffset=3, MessageQueue [topic=" + topic +
                                    ", brokerName=broker-a, queueId=0]"))
        << p.out;
    EXPECT_EQ(count_of(p.out, "MSGID: "), 3u) << p.out;
    for (int i = 0; i < 3; ++i) {
        EXPECT_TRUE(contains(p.out, "MSGID: " + ids[static_cast<size_t>(i)] + " MessageExt ["))
            << p.out;
        EXPECT_TRUE(contains(p.out, " BODY: body-" + std::to_string(i) + "\n")) << p.out;
    }
    EXPECT_TRUE(contains(p.out, "--------------------------------------------------------\n"));

    CommandResult tagged = admin({"printMsg", "-t", topic, "-s", "TagB", "-d", "false"});
    ASSERT_EQ(tagged.exit_code, 0) << tagged.err;
    EXPECT_EQ(count_of(tagged.out, "MSGID: "), 1u) << tagged.out;
    EXPECT_TRUE(contains(tagged.out, "MSGID: " + ids[1] + " ")) << tagged.out;
    EXPECT_TRUE(contains(tagged.out, "BODY: NOT PRINT BODY")) << tagged.out;

    // Begin times before every message, in milliseconds and as yyyy-MM-dd#HH:mm:ss:SSS.
    for (const char* begin : {"1", "2000-01-01#00:00:00:000"}) {
        CommandResult from = admin({"printMsg", "-t", topic, "-b", begin});
        ASSERT_EQ(from.exit_code, 0) << from.err;
        EXPECT_EQ(count_of(from.out, "MSGID: "), 3u) << begin << "\n" << from.out;
    }
    CommandResult bad_time = admin({"printMsg", "-t", topic, "-b", "yesterday"});
    EXPECT_EQ(bad_time.exit_code, 1);
}

TEST_F(MqadminOpsIt, PrintMsgByQueueCountsTags) {
    const std::string topic = "OpsQueueTopic";
    create_topic(topic, 2);
    for (const char* tag : {"TagA", "TagB", "TagA"}) {
        CommandResult s = admin({"sendMessage", "-t", topic, "-p", std::string("b-") + tag, "-c",
                                 tag, "-b", "broker-a", "-i", "1"});
        ASSERT_EQ(s.exit_code, 0) << s.err;
    }
    CommandResult r;
    ASSERT_TRUE(eventually(
        [&] {
            r = admin({"printMsgByQueue", "-t", topic, "-a", "broker-a", "-i", "1", "-p", "true",
                       "-d", "true", "-f", "true"});
            return r.exit_code == 0 && count_of(r.out, "MSGID: ") == 3;
        },
        10s))
        << r.out << r.err;
    EXPECT_TRUE(contains(r.out, " BODY: b-TagB\n")) << r.out;
    const auto lines = lines_of(r.out);
    ASSERT_GE(lines.size(), 5u) << r.out;
    EXPECT_EQ(words_of(lines[3]), (std::vector<std::string>{"Tag:", "TagA", "Count:", "2"}));
    EXPECT_EQ(words_of(lines[4]), (std::vector<std::string>{"Tag:", "TagB", "Count:", "1"}));

    // Defaults print nothing but the (off) tag counts; the other queue is empty.
    CommandResult quiet = admin({"printMsgByQueue", "-t", topic, "-a", "broker-a", "-i", "1"});
    ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
    EXPECT_EQ(quiet.out, "");
    CommandResult other =
        admin({"printMsgByQueue", "-t", topic, "-a", "broker-a", "-i", "0", "-p", "true"});
    ASSERT_EQ(other.exit_code, 0) << other.err;
    EXPECT_EQ(count_of(other.out, "MSGID: "), 0u) << other.out;
}

TEST_F(MqadminOpsIt, SendMsgStatusAndCheckMsgSendRT) {
    CommandResult s = admin({"sendMsgStatus", "-b", "broker-a", "-c", "3", "-s", "30"});
    ASSERT_EQ(s.exit_code, 0) << s.err;
    const auto lines = lines_of(s.out);
    ASSERT_EQ(lines.size(), 3u) << s.out;
    for (const auto& line : lines) {
        EXPECT_EQ(line.rfind("rt:", 0), 0u) << line;
        EXPECT_TRUE(contains(line, "ms, SendResult=SendResult [sendStatus=SEND_OK, msgId="))
            << line;
        EXPECT_TRUE(
            contains(line, "messageQueue=MessageQueue [topic=broker-a, brokerName=broker-a"))
            << line;
    }

    const std::string topic = "OpsRtTopic";
    create_topic(topic, 2);
    CommandResult rt = admin({"checkMsgSendRT", "-t", topic, "-a", "4", "-s", "16"});
    ASSERT_EQ(rt.exit_code, 0) << rt.err;
    const auto rows = lines_of(rt.out);
    ASSERT_EQ(rows.size(), 6u) << rt.out;
    EXPECT_EQ(words_of(rows[0]),
              (std::vector<std::string>{"#Broker", "Name", "#QID", "#Send", "Result", "#RT"}));
    for (size_t i = 1; i <= 4; ++i) {
        auto w = words_of(rows[i]);
        ASSERT_EQ(w.size(), 4u) << rows[i];
        EXPECT_EQ(w[0], "broker-a");
        EXPECT_EQ(w[1], std::to_string((i - 1) % 2));
        EXPECT_EQ(w[2], "true");
    }
    EXPECT_EQ(rows[5].rfind("Avg RT: ", 0), 0u) << rows[5];
    // The four messages landed two per queue.
    EXPECT_TRUE(eventually(
        [&] {
            CommandResult st = admin({"topicStatus", "-t", topic});
            size_t twos = 0;
            for (const auto& line : lines_of(st.out)) {
                auto w = words_of(line);
                if (w.size() >= 4 && w[0] == "broker-a" && w[3] == "2") {
                    ++twos;
                }
            }
            return twos == 2;
        },
        10s));

    CommandResult one = admin({"checkMsgSendRT", "-t", topic, "-a", "1", "-s", "16"});
    EXPECT_EQ(one.exit_code, 1);
}

TEST_F(MqadminOpsIt, ClusterRTMeasuresUntilStopped) {
    // Like RocketMQ's, clusterRT repeats every -i seconds until it is stopped.
    CommandResult r = run_command(*dir_,
                                  {binary_path("mqadmin"), "clusterRT", "-a", "3", "-s", "16", "-i",
                                   "1", "-n", addr(ns_port_)},
                                  8000ms);
    EXPECT_EQ(r.exit_code, 128 + SIGKILL) << r.err;
    const auto lines = lines_of(r.out);
    ASSERT_GE(lines.size(), 2u) << r.out << r.err;
    EXPECT_EQ(words_of(lines[0]), (std::vector<std::string>{"#Cluster", "Name", "#Broker", "Name",
                                                            "#RT", "#successCount", "#failCount"}));
    auto w = words_of(lines[1]);
    ASSERT_EQ(w.size(), 5u) << lines[1];
    EXPECT_EQ(w[0], "DefaultCluster");
    EXPECT_EQ(w[1], "broker-a");
    EXPECT_EQ(w[3], "3");
    EXPECT_EQ(w[4], "0");

    CommandResult tlog = run_command(*dir_,
                                     {binary_path("mqadmin"), "clusterRT", "-a", "2", "-p", "true",
                                      "-m", "roomA", "-c", "DefaultCluster", "-n", addr(ns_port_)},
                                     8000ms);
    ASSERT_FALSE(lines_of(tlog.out).empty()) << tlog.err;
    EXPECT_TRUE(contains(lines_of(tlog.out)[0], "|roomA|DefaultCluster|broker-a|")) << tlog.out;
}

TEST_F(MqadminOpsIt, AllocateMQAveragely) {
    const std::string topic = "OpsAllocTopic";
    create_topic(topic, 4);
    CommandResult r = admin({"allocateMQ", "-t", topic, "-i", "10.0.0.1,10.0.0.2,10.0.0.3"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto q = [&](int id) {
        return "{\"brokerName\":\"broker-a\",\"queueId\":" + std::to_string(id) + ",\"topic\":\"" +
               topic + "\"}";
    };
    EXPECT_EQ(r.out, "{\"result\":{\"10.0.0.1\":[" + q(0) + "," + q(1) + "],\"10.0.0.2\":[" + q(2) +
                         "],\"10.0.0.3\":[" + q(3) + "]}}\n");
}

// A broker of its own (restarted without its topic config): cleanUnusedTopic drops the
// ConsumeQueues of topics the broker no longer has a config for.
TEST(MqadminOpsCleanIt, CleanUnusedTopicDropsQueuesWithoutConfig) {
    TempDir dir("comet_mqadmin_clean_it");
    const uint16_t ns_port = free_port();
    const uint16_t broker_port = free_port();
    auto ns = start_namesrv(dir, ns_port);
    ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
    ASSERT_TRUE((*ns)->wait_for_port(ns_port, 10s).is_ok());
    auto mq = [&](std::vector<std::string> args) {
        args.insert(args.begin(), binary_path("mqadmin"));
        args.push_back("-n");
        args.push_back(addr(ns_port));
        return run_command(dir, args);
    };
    auto max_offset = [&]() -> int64_t {
        net::RemotingClient client;
        client.start();
        auto r = call(client, broker_port,
                      request(Req::kGetMaxOffset, {{"topic", "OpsUnused"}, {"queueId", "0"}}));
        if (!r.is_ok() || r->code != RC::kSuccess || r->ext("offset") == nullptr) {
            return -1;
        }
        return std::stoll(*r->ext("offset"));
    };
    auto b = start_broker(dir, broker_port, addr(ns_port));
    ASSERT_TRUE(b.is_ok()) << b.status().to_string();
    ASSERT_TRUE((*b)->wait_for_port(broker_port, 20s).is_ok()) << (*b)->log_tail();
    ASSERT_TRUE(eventually([&] { return contains(mq({"clusterList"}).out, "broker-a"); }, 15s));
    ASSERT_EQ(mq({"updateTopic", "-b", addr(broker_port), "-t", "OpsUnused", "-r", "1", "-w", "1"})
                  .exit_code,
              0);
    ASSERT_TRUE(eventually(
        [&] {
            return mq({"topicRoute", "-t", "OpsUnused"}).exit_code == 0;
        },
        10s));
    ASSERT_EQ(mq({"sendMessage", "-t", "OpsUnused", "-p", "x"}).exit_code, 0);
    ASSERT_TRUE(eventually([&] { return max_offset() == 1; }, 10s));

    // Nothing unused yet: the queue stays.
    CommandResult first = mq({"cleanUnusedTopic", "-b", addr(broker_port)});
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_EQ(first.out, "success\n");
    EXPECT_EQ(max_offset(), 1);

    // Restart without the topic config: the ConsumeQueue is still there, unused.
    (*b)->sigterm();
    ASSERT_TRUE((*b)->wait_exit(20s).is_ok());
    for (const char* f : {"topics.json", "topics.json.bak"}) {
        std::remove(dir.sub("broker-a/store/config/" + std::string(f)).c_str());
    }
    auto b2 = start_broker(dir, broker_port, addr(ns_port));
    ASSERT_TRUE(b2.is_ok()) << b2.status().to_string();
    ASSERT_TRUE((*b2)->wait_for_port(broker_port, 20s).is_ok()) << (*b2)->log_tail();
    ASSERT_TRUE(eventually([&] { return max_offset() == 1; }, 10s)) << (*b2)->log_tail();

    CommandResult c = mq({"cleanUnusedTopic", "-c", "DefaultCluster"});
    ASSERT_EQ(c.exit_code, 0) << c.err;
    EXPECT_EQ(c.out, "success\n");
    EXPECT_EQ(max_offset(), 0);
}

}  // namespace
}  // namespace comet::it
