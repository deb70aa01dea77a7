// Integration tests of the C++ push consumer's answers to broker-initiated admin requests
// (RESET_CONSUMER_CLIENT_OFFSET, GET_CONSUMER_STATUS_FROM_CLIENT, GET_CONSUMER_RUNNING_INFO,
// CONSUME_MESSAGE_DIRECTLY), driven through a real mqbroker the way mqadmin drives them
// (INVOKE_BROKER_TO_RESET_OFFSET, INVOKE_BROKER_TO_GET_CONSUMER_STATUS, 307 and 309 forwarded).
// One mqnamesrv + mqbroker serve the suite; every test has its own topic and group.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "base/clock.h"
#include "client/admin_client.h"
#include "client/consumer_api.h"
#include "client/producer.h"
#include "client/push_consumer.h"
#include "harness.h"
#include "protocol/admin_bodies.h"
#include "protocol/json_body.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

using namespace std::chrono_literals;
using namespace comet::client;
namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;

class ClientAdminIt : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir("comet_it_client_admin");
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
    }
    static void TearDownTestSuite() {
        delete broker_;
        delete ns_;
        delete dir_;
        broker_ = nullptr;
        ns_ = nullptr;
        dir_ = nullptr;
    }

    static ClientConfig client_config() {
        ClientConfig c;
        c.namesrv_addr = addr(ns_port_);
        return c;
    }

    void create_topic(AdminClient& admin, const std::string& topic, int queues) {
        TopicCreateOptions o;
        o.read_queue_nums = queues;
        o.write_queue_nums = queues;
        ASSERT_TRUE(admin.create_topic(addr(broker_port_), topic, o).is_ok());
        ASSERT_TRUE(eventually([&] { return admin.topic_route(topic).is_ok(); }, 10s));
    }

    static PushConsumerConfig push_config(const std::string& group) {
        PushConsumerConfig c;
        c.client = client_config();
        c.group = group;
        c.consume_from_where = ConsumeFromWhere::kFirstOffset;
        c.rebalance_interval = 1s;
        c.broker_suspend_max = 2s;
        c.pull_timeout_when_suspend = 5s;
        c.pull_delay_on_error = 200ms;
        c.suspend_current_queue_time = 200ms;
        c.client.persist_consumer_offset_interval = 300ms;
        return c;
    }

    // The broker's committed offset of `group` on queue `q` of `topic` (-1 when none).
    static int64_t committed(AdminClient& admin, const std::string& group, const std::string& topic,
                             int32_t q) {
        MessageQueue mq;
        mq.topic = topic;
        mq.broker_name = broker_name();
        mq.queue_id = q;
        auto r = query_consumer_offset(admin.instance(), group, mq);
        return r.is_ok() ? *r : -1;
    }

    static std::string broker_name() { return "broker-a"; }

    static inline TempDir* dir_ = nullptr;
    static inline Process* ns_ = nullptr;
    static inline Process* broker_ = nullptr;
    static inline uint16_t ns_port_ = 0;
    static inline uint16_t broker_port_ = 0;
};

// Counts deliveries per body; while `hold` is set, a delivery blocks until it is cleared.
struct Recorder {
    std::mutex mu;
    std::condition_variable cv;
    std::map<std::string, int> seen;
    int delivered = 0;
    bool hold = false;
    int held = 0;

    ConsumeStatus on(const std::vector<MessageExt>& msgs) {
        std::unique_lock<std::mutex> lock(mu);
        for (const auto& m : msgs) {
            ++seen[m.body];
            ++delivered;
        }
        if (hold) {
            ++held;
            cv.notify_all();
            cv.wait_for(lock, 30s, [&] { return !hold; });
        }
        cv.notify_all();
        return ConsumeStatus::kConsumeSuccess;
    }
    int count(const std::string& body) {
        std::lock_guard<std::mutex> lock(mu);
        auto it = seen.find(body);
        return it == seen.end() ? 0 : it->second;
    }
    void set_hold(bool h) {
        std::lock_guard<std::mutex> lock(mu);
        hold = h;
        cv.notify_all();
    }
    int held_count() {
        std::lock_guard<std::mutex> lock(mu);
        return held;
    }
};

protocol::RemotingCommand reset_request(const std::string& topic, const std::string& group,
                                        int64_t timestamp, protocol::LanguageCode lang) {
    auto req = protocol::RemotingCommand::request(Req::kInvokeBrokerToResetOffset);
    req.language = lang;
    req.set_ext("topic", topic);
    req.set_ext("group", group);
    req.set_ext("timestamp", std::to_string(timestamp));
    req.set_ext("isForce", "true");
    return req;
}

TEST_F(ClientAdminIt, ResetOffsetByTimeReplaysFromTheResetPointWithoutWriteBack) {
    const std::string topic = "CliAdmReset";
    const std::string group = "CliAdmResetGroup";
    AdminClient admin(client_config());
    ASSERT_TRUE(admin.start().is_ok());
    create_topic(admin, topic, 2);
    ProducerConfig pc;
    pc.client = client_config();
    DefaultMqProducer producer(pc);
    ASSERT_TRUE(producer.start().is_ok());
    const int64_t before = SystemClock::instance().wall_millis() - 1;
    for (int i = 0; i < 10; ++i) {
        auto r = producer.send(Message(topic, "r-" + std::to_string(i)));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    }

    Recorder rec;
    DefaultMqPushConsumer consumer(push_config(group));
    consumer.subscribe(topic, "*");
    consumer.register_listener(
        [&](const std::vector<MessageExt>& msgs, const MessageQueue&) { return rec.on(msgs); });
    ASSERT_TRUE(consumer.start().is_ok());
    auto all_seen = [&](int times) {
        for (int i = 0; i < 10; ++i) {
            if (rec.count("r-" + std::to_string(i)) < times) {
                return false;
            }
        }
        return true;
    };
    ASSERT_TRUE(eventually([&] { return all_seen(1); }, 30s));
    ASSERT_TRUE(eventually(
        [&] { return committed(admin, group, topic, 0) + committed(admin, group, topic, 1) == 10; },
        20s));
    const int64_t old0 = committed(admin, group, topic, 0);
    const int64_t old1 = committed(admin, group, topic, 1);
    ASSERT_GT(old0, 0);
    ASSERT_GT(old1, 0);

    // Reset to before the first message (mqadmin resetOffsetByTime, Java body form) while
    // deliveries are held: the consumer gets the first messages again and the broker's
    // committed offsets are the reset ones, not the old ones written back.
    rec.set_hold(true);
    auto resp = admin.instance().invoke(
        addr(broker_port_), reset_request(topic, group, before, protocol::LanguageCode::kJava));
    ASSERT_TRUE(resp.is_ok()) << resp.status().to_string();
    ASSERT_EQ(resp->code, RC::kSuccess) << resp->remark.value_or("");
    ASSERT_TRUE(eventually([&] { return rec.held_count() >= 2; }, 20s));
    EXPECT_EQ(committed(admin, group, topic, 0), 0);
    EXPECT_EQ(committed(admin, group, topic, 1), 0);
    // The consumer's offset commits (every 300 ms) keep the reset point while nothing new is
    // consumed; sampled over a bounded number of polls.
    for (int i = 0; i < 10; ++i) {
        std::this_thread::sleep_for(100ms);
        ASSERT_EQ(committed(admin, group, topic, 0), 0) << "poll " << i;
        ASSERT_EQ(committed(admin, group, topic, 1), 0) << "poll " << i;
    }
    rec.set_hold(false);
    ASSERT_TRUE(eventually([&] { return all_seen(2); }, 30s));
    EXPECT_TRUE(eventually(
        [&] {
            return committed(admin, group, topic, 0) == old0 &&
                   committed(admin, group, topic, 1) == old1;
        },
        20s));

    // The same through a C++ admin request (the broker sends the list form of the body).
    auto resp2 = admin.instance().invoke(
        addr(broker_port_), reset_request(topic, group, before, protocol::LanguageCode::kCpp));
    ASSERT_TRUE(resp2.is_ok()) << resp2.status().to_string();
    ASSERT_EQ(resp2->code, RC::kSuccess) << resp2->remark.value_or("");
    EXPECT_TRUE(eventually([&] { return all_seen(3); }, 30s));
    consumer.shutdown();
}

// Runs Comet's mqadmin with `args` (no shell metacharacters in them); exit code and stdout.
std::pair<int, std::string> run_mqadmin(const TempDir& dir, const std::vector<std::string>& args) {
    static int counter = 0;
    const std::string out_path = dir.sub("mqadmin-" + std::to_string(++counter) + ".out");
    std::string cmd = "env -u NAMESRV_ADDR '" + binary_path("mqadmin") + "'";
    for (const auto& a : args) {
        cmd += " '" + a + "'";
    }
    cmd += " > '" + out_path + "' 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream in(out_path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, ss.str()};
}

TEST_F(ClientAdminIt, MqadminResetOffsetByTimeReplaysToALivePushConsumer) {
    const std::string topic = "CliAdmMqadminReset";
    const std::string group = "CliAdmMqadminResetGroup";
    AdminClient admin(client_config());
    ASSERT_TRUE(admin.start().is_ok());
    create_topic(admin, topic, 2);
    ProducerConfig pc;
    pc.client = client_config();
    DefaultMqProducer producer(pc);
    ASSERT_TRUE(producer.start().is_ok());
    const int64_t before = SystemClock::instance().wall_millis() - 1;
    for (int i = 0; i < 6; ++i) {
        ASSERT_TRUE(producer.send(Message(topic, "m-" + std::to_string(i))).is_ok());
    }
    Recorder rec;
    DefaultMqPushConsumer consumer(push_config(group));
    consumer.subscribe(topic, "*");
    consumer.register_listener(
        [&](const std::vector<MessageExt>& msgs, const MessageQueue&) { return rec.on(msgs); });
    ASSERT_TRUE(consumer.start().is_ok());
    auto all_seen = [&](int times) {
        for (int i = 0; i < 6; ++i) {
            if (rec.count("m-" + std::to_string(i)) < times) {
                return false;
            }
        }
        return true;
    };
    ASSERT_TRUE(eventually([&] { return all_seen(1); }, 30s));
    ASSERT_TRUE(eventually(
        [&] { return committed(admin, group, topic, 0) + committed(admin, group, topic, 1) == 6; },
        20s));

    auto [rc, out] = run_mqadmin(*dir_, {"resetOffsetByTime", "-g", group, "-t", topic, "-s",
                                         std::to_string(before), "-n", addr(ns_port_)});
    ASSERT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("rollback consumer offset by specified group[" + group + "]"),
              std::string::npos)
        << out;
    EXPECT_TRUE(eventually([&] { return all_seen(2); }, 30s));
    EXPECT_TRUE(eventually(
        [&] { return committed(admin, group, topic, 0) + committed(admin, group, topic, 1) == 6; },
        20s));
    consumer.shutdown();
}

TEST_F(ClientAdminIt, ConsumerStatusRunningInfoAndConsumeMessageDirectly) {
    const std::string topic = "CliAdmInfo";
    const std::string group = "CliAdmInfoGroup";
    AdminClient admin(client_config());
    ASSERT_TRUE(admin.start().is_ok());
    create_topic(admin, topic, 2);
    ProducerConfig pc;
    pc.client = client_config();
    DefaultMqProducer producer(pc);
    ASSERT_TRUE(producer.start().is_ok());
    auto sent = producer.send(Message(topic, "direct-me", "TagD"));
    ASSERT_TRUE(sent.is_ok()) << sent.status().to_string();

    Recorder rec;
    DefaultMqPushConsumer consumer(push_config(group));
    consumer.subscribe(topic, "*");
    consumer.register_listener(
        [&](const std::vector<MessageExt>& msgs, const MessageQueue&) { return rec.on(msgs); });
    ASSERT_TRUE(consumer.start().is_ok());
    ASSERT_TRUE(eventually([&] { return rec.count("direct-me") >= 1; }, 30s));
    ASSERT_TRUE(eventually(
        [&] {
            int n = 0;
            for (const auto& mq : consumer.assigned_queues()) {
                n += mq.topic == topic ? 1 : 0;
            }
            return n == 2;
        },
        20s));
    const std::string client_id = consumer.instance().client_id();

    // consumerStatus: INVOKE_BROKER_TO_GET_CONSUMER_STATUS -> GET_CONSUMER_STATUS_FROM_CLIENT.
    {
        auto req = protocol::RemotingCommand::request(Req::kInvokeBrokerToGetConsumerStatus);
        req.set_ext("topic", topic);
        req.set_ext("group", group);
        auto resp = admin.instance().invoke(addr(broker_port_), std::move(req));
        ASSERT_TRUE(resp.is_ok()) << resp.status().to_string();
        ASSERT_EQ(resp->code, RC::kSuccess) << resp->remark.value_or("");
        auto doc = protocol::parse_json_body(resp->body);
        ASSERT_TRUE(doc.is_ok()) << resp->body;
        const auto* table = protocol::find_member(*doc, "consumerTable");
        ASSERT_NE(table, nullptr) << resp->body;
        const auto* mine = protocol::find_member(*table, client_id.c_str());
        ASSERT_NE(mine, nullptr) << resp->body;
        std::set<int32_t> qids;
        for (const auto& m : mine->GetObject()) {
            auto mq = protocol::MessageQueue::decode(
                std::string_view(m.name.GetString(), m.name.GetStringLength()));
            ASSERT_TRUE(mq.is_ok()) << resp->body;
            EXPECT_EQ(mq->topic, topic);
            qids.insert(mq->queue_id);
        }
        EXPECT_EQ(qids, (std::set<int32_t>{0, 1})) << resp->body;
    }

    // consumerRunningInfo: GET_CONSUMER_RUNNING_INFO forwarded to the client.
    {
        auto req = protocol::RemotingCommand::request(Req::kGetConsumerRunningInfo);
        req.set_ext("consumerGroup", group);
        req.set_ext("clientId", client_id);
        req.set_ext("jstackEnable", "false");
        auto resp = admin.instance().invoke(addr(broker_port_), std::move(req));
        ASSERT_TRUE(resp.is_ok()) << resp.status().to_string();
        ASSERT_EQ(resp->code, RC::kSuccess) << resp->remark.value_or("");
        auto doc = protocol::parse_json_body(resp->body);
        ASSERT_TRUE(doc.is_ok()) << resp->body;
        const auto* props = protocol::find_member(*doc, "properties");
        ASSERT_NE(props, nullptr) << resp->body;
        std::string consume_type;
        std::string orderly;
        ASSERT_TRUE(protocol::read_string(*props, "PROP_CONSUME_TYPE", &consume_type).is_ok());
        ASSERT_TRUE(protocol::read_string(*props, "PROP_CONSUMEORDERLY", &orderly).is_ok());
        EXPECT_EQ(consume_type, "CONSUME_PASSIVELY");
        EXPECT_EQ(orderly, "false");
        EXPECT_NE(protocol::find_member(*props, "PROP_CLIENT_VERSION"), nullptr);
        EXPECT_NE(protocol::find_member(*props, "PROP_THREADPOOL_CORE_SIZE"), nullptr);
        EXPECT_NE(protocol::find_member(*props, "PROP_CONSUMER_START_TIMESTAMP"), nullptr);
        const auto* subs = protocol::find_member(*doc, "subscriptionSet");
        ASSERT_NE(subs, nullptr);
        std::set<std::string> topics;
        for (const auto& s : subs->GetArray()) {
            auto sd = protocol::SubscriptionData::from_json(s);
            ASSERT_TRUE(sd.is_ok());
            topics.insert(sd->topic);
        }
        EXPECT_EQ(topics.count(topic), 1u) << resp->body;
        EXPECT_EQ(topics.count("%RETRY%" + group), 1u) << resp->body;
        const auto* mqs = protocol::find_member(*doc, "mqTable");
        ASSERT_NE(mqs, nullptr);
        int topic_queues = 0;
        for (const auto& m : mqs->GetObject()) {
            auto mq = protocol::MessageQueue::decode(
                std::string_view(m.name.GetString(), m.name.GetStringLength()));
            ASSERT_TRUE(mq.is_ok()) << resp->body;
            if (mq->topic == topic) {
                ++topic_queues;
                EXPECT_NE(protocol::find_member(m.value, "commitOffset"), nullptr);
            }
        }
        EXPECT_EQ(topic_queues, 2) << resp->body;
    }

    // consumeMessage: CONSUME_MESSAGE_DIRECTLY runs the listener on the stored message.
    {
        const int before = rec.count("direct-me");
        auto req = protocol::RemotingCommand::request(Req::kConsumeMessageDirectly);
        req.set_ext("consumerGroup", group);
        req.set_ext("clientId", client_id);
        req.set_ext("msgId", sent->offset_msg_id);
        auto resp = admin.instance().invoke(addr(broker_port_), std::move(req));
        ASSERT_TRUE(resp.is_ok()) << resp.status().to_string();
        ASSERT_EQ(resp->code, RC::kSuccess) << resp->remark.value_or("");
        auto doc = protocol::parse_json_body(resp->body);
        ASSERT_TRUE(doc.is_ok()) << resp->body;
        std::string result;
        bool order = true;
        bool auto_commit = false;
        ASSERT_TRUE(protocol::read_string(*doc, "consumeResult", &result).is_ok());
        ASSERT_TRUE(protocol::read_bool(*doc, "order", &order).is_ok());
        ASSERT_TRUE(protocol::read_bool(*doc, "autoCommit", &auto_commit).is_ok());
        EXPECT_EQ(result, "CR_SUCCESS") << resp->body;
        EXPECT_FALSE(order);
        EXPECT_TRUE(auto_commit);
        EXPECT_NE(protocol::find_member(*doc, "spentTimeMills"), nullptr);
        EXPECT_EQ(rec.count("direct-me"), before + 1);
    }
    consumer.shutdown();
}

}  // namespace
}  // namespace comet::it
