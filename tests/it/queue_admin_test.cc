// Integration tests of mqadmin's queue and consumer inspection commands
// (apps/mqadmin/queue_commands.cc, monitor_command.cc) against real mqnamesrv + mqbroker
// processes on 127.0.0.1: queryCq (QUERY_CONSUME_QUEUE), cleanExpiredCQ
// (CLEAN_EXPIRED_CONSUMEQUEUE), consumerStatus (GET_CONSUMER_RUNNING_INFO through the broker to
// a C++ push consumer) and startMonitoring (a backlog held by a push consumer, empty rounds).
// Each command runs as a subprocess (bounded by run_command's timeout).

#include <gtest/gtest.h>

#include <atomic>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <thread>

#include "client/producer.h"
#include "client/push_consumer.h"
#include "harness.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using namespace std::chrono_literals;

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// The number after `key=` up to the next ',' or '}'.
int64_t field(const std::string& line, const std::string& key) {
    const size_t at = line.find(key + "=");
    if (at == std::string::npos) {
        return -1;
    }
    return std::stoll(line.substr(at + key.size() + 1));
}

class Cluster {
public:
    explicit Cluster(const char* name, std::map<std::string, std::string> broker_extra = {})
        : dir_(name),
          ns_port_(free_port()),
          broker_port_(free_port()),
          extra_(std::move(broker_extra)) {}

    void start_all() {
        auto ns = start_namesrv(dir_, ns_port_);
        ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
        ns_ = std::move(ns).value();
        ASSERT_TRUE(ns_->wait_for_port(ns_port_, 10s).is_ok());
        start_broker_process();
    }
    void start_broker_process() {
        auto b = start_broker(dir_, broker_port_, addr(ns_port_), extra_);
        ASSERT_TRUE(b.is_ok()) << b.status().to_string();
        broker_ = std::move(b).value();
        ASSERT_TRUE(broker_->wait_for_port(broker_port_, 20s).is_ok()) << broker_->log_tail();
    }
    void stop_broker() {
        broker_->sigterm();
        ASSERT_TRUE(broker_->wait_exit(20s).is_ok());
    }

    CommandResult mq(std::vector<std::string> args) {
        args.insert(args.begin(), binary_path("mqadmin"));
        args.push_back("-n");
        args.push_back(addr(ns_port_));
        return run_command(dir_, args);
    }
    // Max offset of topic/queue over the wire; -1 on an error.
    int64_t max_offset(const std::string& topic, int queue) {
        net::RemotingClient client;
        client.start();
        auto r = call(
            client, broker_port_,
            request(Req::kGetMaxOffset, {{"topic", topic}, {"queueId", std::to_string(queue)}}));
        if (!r.is_ok() || r->code != RC::kSuccess || r->ext("offset") == nullptr) {
            return -1;
        }
        return std::stoll(*r->ext("offset"));
    }
    void create_topic(const std::string& topic) {
        ASSERT_EQ(mq({"updateTopic", "-b", broker(), "-t", topic, "-r", "1", "-w", "1"}).exit_code,
                  0);
    }
    void send(const std::string& topic, const std::string& body, const std::string& tag) {
        net::RemotingClient client;
        client.start();
        auto r = call(client, broker_port_, send_message_request(topic, body, 0, {{"TAGS", tag}}));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_EQ(r->code, RC::kSuccess) << r->remark.value_or("");
    }
    std::string broker() const { return addr(broker_port_); }
    std::string namesrv() const { return addr(ns_port_); }
    TempDir& dir() { return dir_; }

private:
    TempDir dir_;
    uint16_t ns_port_;
    uint16_t broker_port_;
    std::map<std::string, std::string> extra_;
    std::unique_ptr<Process> ns_;
    std::unique_ptr<Process> broker_;
};

// A push consumer that rebalances, pulls and commits offsets quickly (tests wait on all three).
client::PushConsumerConfig quick_push_config(const Cluster& c, const std::string& group) {
    client::PushConsumerConfig pc;
    pc.client.namesrv_addr = c.namesrv();
    pc.group = group;
    pc.consume_from_where = client::ConsumeFromWhere::kFirstOffset;
    pc.rebalance_interval = 1s;
    pc.broker_suspend_max = 2s;
    pc.pull_timeout_when_suspend = 5s;
    pc.pull_delay_on_error = 200ms;
    pc.client.persist_consumer_offset_interval = 300ms;
    return pc;
}

// Creates `topic` and waits until the name server routes it.
void create_routed_topic(Cluster& c, const std::string& topic) {
    ASSERT_NO_FATAL_FAILURE(c.create_topic(topic));
    ASSERT_TRUE(eventually([&] { return c.mq({"topicRoute", "-t", topic}).exit_code == 0; }, 10s));
}

// Java "TagA".hashCode(): the tagsCode of the ConsumeQueue unit.
constexpr int64_t kTagAHash = 2598919;

TEST(QueueAdminIt, QueryCqPrintsUnitsBoundsAndErrors) {
    // ConsumeQueue segments of 4 units: an answer stops at the end of its index's segment.
    Cluster c("comet_it_query_cq", {{"mappedFileSizeConsumeQueue", std::to_string(4 * 20)}});
    ASSERT_NO_FATAL_FAILURE(c.start_all());
    ASSERT_TRUE(eventually([&] { return contains(c.mq({"clusterList"}).out, "broker-a"); }, 15s));
    ASSERT_NO_FATAL_FAILURE(c.create_topic("QcTopic"));
    ASSERT_TRUE(eventually(
        [&] {
            return c.mq({"topicRoute", "-t", "QcTopic"}).exit_code == 0;
        },
        10s));
    for (int i = 0; i < 3; ++i) {
        ASSERT_NO_FATAL_FAILURE(c.send("QcTopic", "body-" + std::to_string(i), "TagA"));
    }
    ASSERT_TRUE(eventually([&] { return c.max_offset("QcTopic", 0) == 3; }, 10s));

    // Two units from index 1, broker from the route.
    CommandResult r = c.mq({"queryCq", "-t", "QcTopic", "-q", "0", "-i", "1", "-c", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 9u) << r.out;
    EXPECT_EQ(lines[0], "Queue data: ");
    EXPECT_EQ(lines[1], "max: 3, min: 0");
    EXPECT_EQ(lines[2], "======================================");
    EXPECT_EQ(lines[3], "idx: 1");
    EXPECT_EQ(lines[6], "idx: 2");
    for (size_t at : {4u, 7u}) {
        EXPECT_TRUE(lines[at].starts_with("ConsumeQueueData{physicOffset=")) << lines[at];
        EXPECT_TRUE(
            lines[at].ends_with(", extendDataJson='null', bitMap='null', eval=false, "
                                "msg='null'}"))
            << lines[at];
        EXPECT_EQ(field(lines[at], "tagsCode"), kTagAHash);
        EXPECT_GT(field(lines[at], "physicSize"), 0);
    }
    // The two records follow each other in the CommitLog.
    EXPECT_EQ(field(lines[7], "physicOffset"),
              field(lines[4], "physicOffset") + field(lines[4], "physicSize"));

    // Default count (10) stops at the queue's end; -b given; a group that is not online.
    r = c.mq({"queryCq", "-t", "QcTopic", "-q", "0", "-i", "0", "-b", c.broker(), "-g", "QcGroup"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(
        r.out.starts_with("Filter data: \nQcGroup@QcTopic is not online!\n"
                          "======================================\n"
                          "Queue data: \nmax: 3, min: 0\n"))
        << r.out;
    EXPECT_TRUE(contains(r.out, "idx: 2\n"));
    EXPECT_FALSE(contains(r.out, "idx: 3\n"));

    // Six units: from index 2, only 2 and 3 (the first segment's end), as 4.9.8's getIndexBuffer.
    for (int i = 3; i < 6; ++i) {
        ASSERT_NO_FATAL_FAILURE(c.send("QcTopic", "body-" + std::to_string(i), "TagA"));
    }
    ASSERT_TRUE(eventually([&] { return c.max_offset("QcTopic", 0) == 6; }, 10s));
    r = c.mq({"queryCq", "-t", "QcTopic", "-q", "0", "-i", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "max: 6, min: 0\n")) << r.out;
    EXPECT_TRUE(contains(r.out, "idx: 3\n")) << r.out;
    EXPECT_FALSE(contains(r.out, "idx: 4\n")) << r.out;
    r = c.mq({"queryCq", "-t", "QcTopic", "-q", "0", "-i", "4"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "idx: 5\n")) << r.out;

    // An index past the end and a queue that does not exist.
    r = c.mq({"queryCq", "-t", "QcTopic", "-q", "0", "-i", "6"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(contains(r.err, "Index 6 of 0@QcTopic is not exist!")) << r.err;
    r = c.mq({"queryCq", "-t", "QcTopic", "-q", "5", "-i", "0"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(contains(r.err, "5@QcTopic is not exist!")) << r.err;
    EXPECT_TRUE(contains(r.err, "SYSTEM_ERROR")) << r.err;
}

// A queue whose records left the CommitLog (its first segment deleted while the broker was
// down) is dropped by cleanExpiredCQ; a queue with records still there stays.
TEST(QueueAdminIt, CleanExpiredCqDropsQueuesBelowTheCommitLogMin) {
    Cluster c("comet_it_clean_expired_cq",
              {{"mappedFileSizeCommitLog", std::to_string(64 * 1024)}});
    ASSERT_NO_FATAL_FAILURE(c.start_all());
    ASSERT_TRUE(eventually([&] { return contains(c.mq({"clusterList"}).out, "broker-a"); }, 15s));
    ASSERT_NO_FATAL_FAILURE(c.create_topic("OldTopic"));
    ASSERT_NO_FATAL_FAILURE(c.create_topic("NewTopic"));
    ASSERT_NO_FATAL_FAILURE(c.send("OldTopic", "old", "TagA"));
    ASSERT_TRUE(eventually([&] { return c.max_offset("OldTopic", 0) == 1; }, 10s));
    const std::string big(4000, 'x');
    for (int i = 0; i < 40; ++i) {  // ~160 KB: the CommitLog rolls past its first 64 KB segment
        ASSERT_NO_FATAL_FAILURE(c.send("NewTopic", big, "TagB"));
    }
    ASSERT_TRUE(eventually([&] { return c.max_offset("NewTopic", 0) == 40; }, 10s));

    // Nothing expired yet: both queues stay.
    CommandResult r = c.mq({"cleanExpiredCQ", "-b", c.broker()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "success\n");
    EXPECT_EQ(c.max_offset("OldTopic", 0), 1);

    ASSERT_NO_FATAL_FAILURE(c.stop_broker());
    const auto first =
        std::filesystem::path(c.dir().sub("broker-a/store/commitlog")) / "00000000000000000000";
    ASSERT_TRUE(std::filesystem::exists(first));
    std::filesystem::remove(first);
    ASSERT_NO_FATAL_FAILURE(c.start_broker_process());
    ASSERT_TRUE(eventually([&] { return c.max_offset("NewTopic", 0) == 40; }, 10s));
    // Still there after the restart, its min moved past the unit whose record is gone.
    EXPECT_EQ(c.max_offset("OldTopic", 0), 1);
    r = c.mq({"queryCq", "-t", "OldTopic", "-q", "0", "-i", "0", "-b", c.broker()});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(contains(r.err, "Index 0 of 0@OldTopic is not exist!")) << r.err;

    r = c.mq({"cleanExpiredCQ", "-c", "DefaultCluster"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "success\n");
    r = c.mq({"queryCq", "-t", "OldTopic", "-q", "0", "-i", "0", "-b", c.broker()});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(contains(r.err, "0@OldTopic is not exist!")) << r.err;
    EXPECT_FALSE(std::filesystem::exists(c.dir().sub("broker-a/store/consumequeue/OldTopic/0")));
    EXPECT_EQ(c.max_offset("OldTopic", 0), 0);
    EXPECT_EQ(c.max_offset("NewTopic", 0), 40);
    r = c.mq({"queryCq", "-t", "NewTopic", "-q", "0", "-i", "39", "-b", c.broker()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
}

// consumerStatus against a running C++ push consumer: the running info it answers through the
// broker (GET_CONSUMER_RUNNING_INFO), per client and as the group's table and analysis.
// The RT&TPS row consumerStatus prints for `topic` as numbers: pull RT, pull TPS, consume RT,
// consume OK TPS, consume failed TPS, failed messages in the hour; empty when absent.
std::vector<double> rt_tps_row(const std::string& out, const std::string& topic) {
    const size_t at =
        out.find("\n" + fmt::format("{:<32}  ", topic), out.find("#Consumer RT&TPS#"));
    if (at == std::string::npos) {
        return {};
    }
    std::istringstream row(out.substr(at + 1, out.find('\n', at + 1) - at - 1));
    std::string name;
    row >> name;
    std::vector<double> v;
    for (double x = 0; row >> x;) {
        v.push_back(x);
    }
    return v.size() == 6 ? v : std::vector<double>{};
}

// consumerStatus's RT&TPS table (GET_CONSUMER_RUNNING_INFO through the broker) shows what the
// push consumer measured: the pulls' RT and rate, the listener's RT, the consumed and failed
// rates and the failed messages of the hour (all were 0.00 whatever the traffic).
TEST(QueueAdminIt, ConsumerStatusShowsMeasuredRtAndTps) {
    Cluster c("comet_it_consumer_rt");
    ASSERT_NO_FATAL_FAILURE(c.start_all());
    ASSERT_TRUE(eventually([&] { return contains(c.mq({"clusterList"}).out, "broker-a"); }, 15s));
    ASSERT_NO_FATAL_FAILURE(create_routed_topic(c, "RtTopic"));
    constexpr int kMessages = 20;
    for (int i = 0; i < kMessages; ++i) {
        ASSERT_NO_FATAL_FAILURE(
            c.send("RtTopic", (i % 4 == 0 ? "fail-" : "ok-") + std::to_string(i), "TagA"));
    }
    client::DefaultMqPushConsumer consumer(quick_push_config(c, "RtGroup"));
    consumer.subscribe("RtTopic", "*");
    std::atomic<int> ok{0};
    std::atomic<int> failed{0};
    consumer.register_listener(
        [&](const std::vector<protocol::MessageExt>& msgs, const protocol::MessageQueue& mq) {
            std::this_thread::sleep_for(5ms);  // a listener that takes time
            // The "fail-" messages of the topic ask to be consumed later, once.
            if (mq.topic == "RtTopic" && msgs.front().body.starts_with("fail-")) {
                failed += static_cast<int>(msgs.size());
                return client::ConsumeStatus::kReconsumeLater;
            }
            ok += static_cast<int>(msgs.size());
            return client::ConsumeStatus::kConsumeSuccess;
        });
    ASSERT_TRUE(consumer.start().is_ok());
    ASSERT_TRUE(eventually([&] { return ok.load() >= kMessages - kMessages / 4; }, 30s));
    ASSERT_GE(failed.load(), kMessages / 4);
    const std::string client_id = consumer.instance().client_id();

    CommandResult r;
    std::vector<double> row;
    EXPECT_TRUE(eventually(
        [&] {
            r = c.mq({"consumerStatus", "-g", "RtGroup", "-i", client_id});
            row = rt_tps_row(r.out, "RtTopic");
            // Every figure once a long poll came back (pull RT counts whole ms).
            return r.exit_code == 0 && row.size() == 6 && row[0] > 0 && row[1] > 0 &&
                   row[3] > 0 && row[4] > 0 && row[5] > 0;
        },
        20s))
        << r.out << r.err;
    ASSERT_EQ(row.size(), 6u) << r.out;
    EXPECT_GT(row[0], 0.0) << "pull RT (long polls held up to 2 s)\n" << r.out;
    EXPECT_GT(row[1], 0.0) << "pull TPS\n" << r.out;
    EXPECT_GT(row[2], 0.0) << "consume RT (5 ms a call)\n" << r.out;
    EXPECT_GT(row[3], 0.0) << "consume OK TPS\n" << r.out;
    EXPECT_GT(row[4], 0.0) << "consume failed TPS\n" << r.out;
    // Each "fail-" message once (again only if its send-back failed and it was retried here).
    EXPECT_GE(row[5], kMessages / 4) << "failed messages in the hour\n" << r.out;
    EXPECT_LE(row[5], failed.load()) << r.out;
    // At most every message over a window at least a second long.
    EXPECT_LE(row[1], double{kMessages});
    EXPECT_LE(row[3], double{kMessages});
    consumer.shutdown();
}

TEST(QueueAdminIt, ConsumerStatusShowsAPushConsumersRunningInfo) {
    Cluster c("comet_it_consumer_status");
    ASSERT_NO_FATAL_FAILURE(c.start_all());
    ASSERT_TRUE(eventually([&] { return contains(c.mq({"clusterList"}).out, "broker-a"); }, 15s));
    ASSERT_NO_FATAL_FAILURE(create_routed_topic(c, "CsTopic"));
    for (int i = 0; i < 3; ++i) {
        ASSERT_NO_FATAL_FAILURE(c.send("CsTopic", "m" + std::to_string(i), "TagA"));
    }

    client::PushConsumerConfig pc = quick_push_config(c, "CsGroup");
    client::DefaultMqPushConsumer consumer(pc);
    consumer.subscribe("CsTopic", "TagA || TagB");
    std::atomic<int> consumed{0};
    consumer.register_listener(
        [&](const std::vector<protocol::MessageExt>& msgs, const protocol::MessageQueue&) {
            consumed += static_cast<int>(msgs.size());
            return client::ConsumeStatus::kConsumeSuccess;
        });
    ASSERT_TRUE(consumer.start().is_ok());
    ASSERT_TRUE(eventually([&] { return consumed.load() >= 3; }, 30s));
    const std::string client_id = consumer.instance().client_id();

    // One client: its running info, the offset row showing the 3 consumed messages.
    CommandResult r;
    const std::string offset_row =
        fmt::format("{:<32}  {:<32}  {:<4}  {:<20}", "CsTopic", "broker-a", 0, 3);
    ASSERT_TRUE(eventually(
        [&] {
            r = c.mq({"consumerStatus", "-g", "CsGroup", "-i", client_id});
            return r.exit_code == 0 && contains(r.out, offset_row);
        },
        20s))
        << r.out << r.err;
    EXPECT_TRUE(r.out.starts_with("#Consumer Properties#\n")) << r.out;
    EXPECT_TRUE(
        contains(r.out, fmt::format("{:<40}: {}\n", "PROP_CONSUME_TYPE", "CONSUME_PASSIVELY")));
    EXPECT_TRUE(contains(r.out, fmt::format("{:<40}: {}\n", "consumerGroup", "CsGroup")));
    // Sorted as Java's TreeSet (topic@expression): the retry topic first.
    EXPECT_TRUE(contains(r.out,
                         "\n\n#Consumer Subscription#\n"
                         "001 Topic: " +
                             fmt::format("{:<40}", "%RETRY%CsGroup") +
                             " ClassFilter: false    SubExpression: *\n"
                             "002 Topic: " +
                             fmt::format("{:<40}", "CsTopic") +
                             " ClassFilter: false    SubExpression: TagA || TagB\n"))
        << r.out;
    EXPECT_TRUE(contains(r.out, "\n\n#Consumer MQ Detail#\n"));
    EXPECT_TRUE(contains(r.out, "ProcessQueueInfo [commitOffset=3, "));
    // The queue's times are real (they were 0, printed as 1970, before the client kept them).
    for (const char* t :
         {"lastLockTimestamp=19", "lastPullTimestamp=19", "lastConsumeTimestamp=19"}) {
        EXPECT_FALSE(contains(r.out, t)) << r.out;
    }
    EXPECT_TRUE(contains(r.out, "\n\n#Consumer RT&TPS#\n"));
    EXPECT_TRUE(contains(r.out, fmt::format("\n{:<32}  ", "CsTopic"))) << r.out;

    // The group: one row per client, its running info written to <now>/<clientId> under the
    // working directory, then the analysis.
    const std::string work = c.dir().sub("status_cwd");
    std::filesystem::create_directories(work);
    r = run_command(c.dir(), {"/bin/sh", "-c",
                              "cd '" + work + "' && exec '" + binary_path("mqadmin") +
                                  "' consumerStatus -g CsGroup -n " + c.namesrv()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = lines_of(r.out);
    ASSERT_GE(lines.size(), 2u) << r.out;
    EXPECT_EQ(lines[0], fmt::format("{:<10} {:<40} {:<20} {}", "#Index", "#ClientId", "#Version",
                                    "#ConsumerRunningInfoFile"));
    std::istringstream row(lines[1]);
    std::string index, id, version, path;
    row >> index >> id >> version >> path;
    EXPECT_EQ(index, "1");
    EXPECT_EQ(id, client_id);
    EXPECT_TRUE(path.ends_with("/" + client_id)) << path;
    EXPECT_TRUE(contains(r.out,
                         "\n\nSame subscription in the same group of consumer\n\n"
                         "Rebalance OK\n"))
        << r.out;
    std::ifstream file(std::filesystem::path(work) / path);
    ASSERT_TRUE(file.good()) << path;
    std::stringstream text;
    text << file.rdbuf();
    EXPECT_TRUE(text.str().starts_with("#Consumer Properties#\n"));
    EXPECT_TRUE(contains(text.str(), "SubExpression: TagA || TagB"));

    // The connection list from the broker given with -b: the same single client.
    r = run_command(c.dir(),
                    {"/bin/sh", "-c",
                     "cd '" + work + "' && exec '" + binary_path("mqadmin") +
                         "' consumerStatus -g CsGroup -b " + c.broker() + " -n " + c.namesrv()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, client_id)) << r.out;
    EXPECT_TRUE(contains(r.out, "Rebalance OK\n")) << r.out;

    // queryCq with the online group: its subscription (pretty JSON) and, for a TAG
    // subscription, filter data "null".
    r = c.mq({"queryCq", "-t", "CsTopic", "-q", "0", "-i", "0", "-g", "CsGroup"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out.starts_with("Subscription data: \n{\n")) << r.out;
    EXPECT_TRUE(contains(r.out, "\"subString\": \"TagA || TagB\"")) << r.out;
    EXPECT_TRUE(contains(r.out,
                         "======================================\nFilter data: \nnull\n"
                         "======================================\nQueue data: \nmax: 3, "
                         "min: 0\n"))
        << r.out;

    // A client id the group does not have: the broker's refusal, exit 1.
    r = c.mq({"consumerStatus", "-g", "CsGroup", "-i", "127.0.0.1@nobody"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(contains(r.err, "get consumer running info")) << r.err;
    consumer.shutdown();
}

// queryMsgTraceById end to end: a message sent with Comet's producer, then the trace records a
// 4.9.8 client's AsyncTraceDispatcher writes for it (its format: fields split by 0x01, records
// ended by 0x02, keys = the message id and its keys) sent to RMQ_SYS_TRACE_TOPIC; the command
// finds them through the broker's key index and prints the Pub and Sub rows.
TEST(QueueAdminIt, QueryMsgTraceByIdPrintsPubAndSubRecords) {
    Cluster c("comet_it_msg_trace");
    ASSERT_NO_FATAL_FAILURE(c.start_all());
    ASSERT_TRUE(eventually([&] { return contains(c.mq({"clusterList"}).out, "broker-a"); }, 15s));
    ASSERT_NO_FATAL_FAILURE(c.create_topic("TrTopic"));
    ASSERT_NO_FATAL_FAILURE(c.create_topic("RMQ_SYS_TRACE_TOPIC"));
    for (const char* t : {"TrTopic", "RMQ_SYS_TRACE_TOPIC"}) {
        ASSERT_TRUE(eventually([&] { return c.mq({"topicRoute", "-t", t}).exit_code == 0; }, 10s));
    }
    client::ProducerConfig pc;
    pc.client.namesrv_addr = c.namesrv();
    pc.group = "TrProducer";
    client::DefaultMqProducer producer(pc);
    ASSERT_TRUE(producer.start().is_ok());
    auto sent = producer.send(client::Message("TrTopic", "traced", "TagA", "order-1"));
    ASSERT_TRUE(sent.is_ok()) << sent.status().to_string();
    const std::string id = sent->msg_id;
    const std::string offset_id = sent->offset_msg_id;

    const int64_t t0 = 1'750'000'000'000;  // the records' own times
    auto rec = [](std::vector<std::string> fields) {
        std::string out;
        for (size_t i = 0; i < fields.size(); ++i) {
            out += fields[i];
            out += i + 1 < fields.size() ? '\x01' : '\x02';
        }
        return out;
    };
    // Pub: type, time, region, group, topic, msgId, tags, keys, storeHost, bodyLength, cost,
    // msgType, offsetMsgId, success. SubAfter: type, requestId, msgId, cost, success, keys,
    // contextCode, time, group.
    const std::string body =
        rec({"Pub", std::to_string(t0), "DefaultRegion", "TrProducer", "TrTopic", id, "TagA",
             "order-1", c.broker(), "6", "3", "0", offset_id, "true"}) +
        rec({"SubBefore", std::to_string(t0 + 10), "DefaultRegion", "TrGroupB", "req-1", id, "0",
             "order-1"}) +
        rec({"SubAfter", "req-1", id, "12", "true", "order-1", "0", std::to_string(t0 + 20),
             "TrGroupB"}) +
        rec({"SubAfter", "req-2", id, "7", "false", "order-1", "1", std::to_string(t0 + 30),
             "TrGroupA"}) +
        rec({"SubAfter", "req-3", "OTHER-ID", "1", "true", "", "0", std::to_string(t0),
             "TrGroupA"});
    auto trace = producer.send(client::Message("RMQ_SYS_TRACE_TOPIC", body, "", id + " order-1"));
    ASSERT_TRUE(trace.is_ok()) << trace.status().to_string();

    CommandResult r;
    ASSERT_TRUE(eventually(
        [&] {
            r = c.mq({"queryMsgTraceById", "-i", id});
            return r.exit_code == 0 && contains(r.out, "Pub");
        },
        15s))
        << r.out << r.err;
    const auto row = [](const std::string& a, const std::string& b, const std::string& c2,
                        const std::string& d, const std::string& e, const std::string& f) {
        return fmt::format("{:<10} {:<20} {:<20} {:<20} {:<10} {:<10}", a, b, c2, d, e, f);
    };
    auto at = [&](int64_t ms) {
        const std::time_t s2 = static_cast<std::time_t>(ms / 1000);
        std::tm tm{};
        localtime_r(&s2, &tm);
        return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1,
                           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    };
    const std::vector<std::string> want = {
        row("#Type", "#ProducerGroup", "#ClientHost", "#SendTime", "#CostTimes", "#Status"),
        row("Pub", "TrProducer", "127.0.0.1", at(t0), "3ms", "success"),
        "",
        row("#Type", "#ConsumerGroup", "#ClientHost", "#ConsumerTime", "#CostTimes", "#Status"),
        row("Sub", "TrGroupA", "127.0.0.1", at(t0 + 30), "7ms", "failed"),
        "",
        row("#Type", "#ConsumerGroup", "#ClientHost", "#ConsumerTime", "#CostTimes", "#Status"),
        row("Sub", "TrGroupB", "127.0.0.1", at(t0 + 20), "12ms", "success"),
        "",
    };
    EXPECT_EQ(lines_of(r.out), want) << r.out;

    // An id the trace topic has no message for fails (4.9.8: "no message" from queryMessage);
    // -t reads another topic: the business message itself holds no trace record.
    r = c.mq({"queryMsgTraceById", "-i", offset_id});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(contains(r.err, "no message")) << r.err;
    r = c.mq({"queryMsgTraceById", "-i", id, "-t", "TrTopic"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "");
    producer.shutdown();
}

// ---- startMonitoring ----

constexpr const char* kBeginRound = "[MONITOR] =========================================beginRound";
constexpr const char* kEndRound = "[MONITOR] =========================================endRound";

// consumerProgress's row of queue 0 of `topic` on broker-a.
std::string progress_row(const std::string& topic, int64_t broker_offset, int64_t consumer_offset) {
    return fmt::format("{:<64}  {:<32}  {:<4}  {:<20}  {:<20}  {:<20}", topic, "broker-a", 0,
                       broker_offset, consumer_offset, broker_offset - consumer_offset);
}

// The store time queryMsgByOffset prints for queue 0 of `topic` at `offset` (local time, read
// back to ms); -1 when it prints none.
int64_t store_millis(Cluster& c, const std::string& topic, int64_t offset) {
    const CommandResult r = c.mq({"queryMsgByOffset", "-t", topic, "-b", "broker-a", "-i", "0",
                                  "-o", std::to_string(offset)});
    for (const auto& line : lines_of(r.out)) {
        if (!line.starts_with("Store Timestamp:")) {
            continue;
        }
        std::istringstream in(line.substr(line.find(':') + 1));
        std::tm tm{};
        char comma = 0;
        int64_t ms = -1;
        in >> std::ws >> std::get_time(&tm, "%Y-%m-%d %H:%M:%S") >> comma >> ms;
        if (in.fail() || comma != ',') {
            return -1;
        }
        tm.tm_isdst = -1;
        return static_cast<int64_t>(std::mktime(&tm)) * 1000 + ms;
    }
    return -1;
}

// startMonitoring against a C++ push consumer holding a backlog: 2 messages consumed, then 5
// more held in its listener, so the broker keeps the group's offset at 2 of 7. One round
// reports the backlog (consumerProgress shows the same numbers) and the client's running info.
TEST(QueueAdminIt, StartMonitoringReportsTheBacklogAndTheClients) {
    Cluster c("comet_it_monitor");
    ASSERT_NO_FATAL_FAILURE(c.start_all());
    ASSERT_TRUE(eventually([&] { return contains(c.mq({"clusterList"}).out, "broker-a"); }, 15s));
    ASSERT_NO_FATAL_FAILURE(create_routed_topic(c, "MonTopic"));

    client::PushConsumerConfig pc = quick_push_config(c, "MonGroup");
    client::DefaultMqPushConsumer consumer(pc);
    consumer.subscribe("MonTopic", "*");
    std::atomic<bool> hold{false};
    std::atomic<bool> release{false};
    std::atomic<int> consumed{0};
    std::atomic<int> held{0};
    consumer.register_listener(
        [&](const std::vector<protocol::MessageExt>& msgs, const protocol::MessageQueue&) {
            if (!hold.load()) {
                consumed += static_cast<int>(msgs.size());
                return client::ConsumeStatus::kConsumeSuccess;
            }
            held += static_cast<int>(msgs.size());
            // Bounded: the test releases it before shutting the consumer down.
            for (int i = 0; i < 600 && !release.load(); ++i) {
                std::this_thread::sleep_for(100ms);
            }
            return client::ConsumeStatus::kConsumeSuccess;
        });
    ASSERT_TRUE(consumer.start().is_ok());
    const std::string client_id = consumer.instance().client_id();
    struct Release {
        std::atomic<bool>& flag;
        ~Release() { flag.store(true); }
    } release_on_exit{release};

    for (int i = 0; i < 2; ++i) {
        ASSERT_NO_FATAL_FAILURE(c.send("MonTopic", "done-" + std::to_string(i), "TagA"));
    }
    ASSERT_TRUE(eventually([&] { return consumed.load() == 2; }, 30s));
    // The backlog as the broker reports it: `broker` messages, the group's offset at `group_offset`.
    CommandResult r;
    auto progress_shows = [&](int64_t broker, int64_t group_offset) {
        return eventually(
            [&] {
                r = c.mq({"consumerProgress", "-g", "MonGroup"});
                return contains(r.out, progress_row("MonTopic", broker, group_offset));
            },
            20s);
    };
    ASSERT_TRUE(progress_shows(2, 2)) << r.out << r.err;
    hold = true;
    for (int i = 0; i < 5; ++i) {
        ASSERT_NO_FATAL_FAILURE(c.send("MonTopic", "undone-" + std::to_string(i), "TagA"));
    }
    ASSERT_TRUE(eventually([&] { return held.load() >= 1; }, 30s));
    ASSERT_TRUE(progress_shows(7, 2)) << r.out << r.err;  // the real backlog: 5

    r = c.mq({"startMonitoring", "--rounds", "1", "--delay", "0", "--interval", "100"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = lines_of(r.out);
    ASSERT_GE(lines.size(), 4u) << r.out;
    EXPECT_EQ(lines.front(), kBeginRound) << r.out;
    EXPECT_EQ(lines.back(), kEndRound) << r.out;
    const std::string undone =
        "[MONITOR] reportUndoneMsgs: UndoneMsgs [consumerGroup=MonGroup, topic=MonTopic, "
        "undoneMsgsTotal=5, undoneMsgsSingleMQ=5, undoneMsgsDelayTimeMills=";
    int undone_lines = 0;
    int client_lines = 0;
    for (const auto& line : lines) {
        if (line.starts_with(undone)) {
            ++undone_lines;
            // Store time of message 6 (the last) minus that of message 1 (the last consumed).
            const int64_t last = store_millis(c, "MonTopic", 6);
            const int64_t consumed_at = store_millis(c, "MonTopic", 1);
            ASSERT_GT(last, 0);
            ASSERT_GT(consumed_at, 0);
            EXPECT_EQ(std::stoll(line.substr(undone.size())), last - consumed_at) << line;
            EXPECT_TRUE(line.ends_with("]")) << line;
        }
        if (line.starts_with("[MONITOR] reportConsumerRunningInfo: ConsumerGroup: MonGroup, "
                             "ClientId: " +
                             client_id + ", ")) {
            ++client_lines;
            EXPECT_TRUE(contains(line,
                                 "ConsumeType: CONSUME_PASSIVELY, ConsumeOrderly: false, "
                                 "Subscriptions: [%RETRY%MonGroup@*, MonTopic@*], MQs: "))
                << line;
        }
        // A fresh consumer: nothing for the analyses to notify.
        EXPECT_FALSE(contains(line, "[NOTIFY]")) << line;
    }
    EXPECT_EQ(undone_lines, 1) << r.out;
    EXPECT_EQ(client_lines, 1) << r.out;

    release = true;
    consumer.shutdown();
}

// startMonitoring without consumer groups: empty rounds, exit 0; until stopped (SIGTERM ends it
// with exit 0); bad bounds refused.
TEST(QueueAdminIt, StartMonitoringWithoutGroupsPrintsEmptyRounds) {
    Cluster c("comet_it_monitor_empty");
    ASSERT_NO_FATAL_FAILURE(c.start_all());
    ASSERT_TRUE(eventually([&] { return contains(c.mq({"clusterList"}).out, "broker-a"); }, 15s));

    CommandResult r = c.mq({"startMonitoring", "-r", "1", "-d", "0"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, std::string(kBeginRound) + "\n" + kEndRound + "\n");

    r = c.mq({"startMonitoring", "--rounds", "2", "--delay", "0", "--interval", "50"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, fmt::format("{0}\n{1}\n{0}\n{1}\n", kBeginRound, kEndRound));

    // Listed by `mqadmin help` with RocketMQ's description.
    r = run_command(c.dir(), {binary_path("mqadmin"), "help"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(
        contains(r.out, fmt::format("   {:<25} {}\n", "startMonitoring", "Start Monitoring")))
        << r.out;

    r = c.mq({"startMonitoring", "--rounds", "-1"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(contains(r.err, "--rounds")) << r.err;

    // No --rounds: it runs until SIGTERM.
    ProcessOptions po;
    po.name = "monitor";
    po.binary = binary_path("mqadmin");
    po.pass_config = false;
    po.args = {"startMonitoring", "-n", c.namesrv(), "--delay", "0", "--interval", "100"};
    auto p = Process::start(po, c.dir().path());
    ASSERT_TRUE(p.is_ok()) << p.status().to_string();
    auto& monitor = *p.value();
    ASSERT_TRUE(eventually([&] { return contains(monitor.log(), kEndRound); }, 15s))
        << monitor.log_tail();
    monitor.sigterm();
    auto code = monitor.wait_exit(10s);
    ASSERT_TRUE(code.is_ok()) << code.status().to_string();
    EXPECT_EQ(*code, 0) << monitor.log_tail();
    EXPECT_TRUE(monitor.log().starts_with(kBeginRound)) << monitor.log_tail();
}

}  // namespace
}  // namespace comet::it
