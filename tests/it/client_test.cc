// Integration tests of the C++ client (src/client) against real mqnamesrv + mqbroker processes
// on 127.0.0.1 with ephemeral ports. One cluster serves the whole suite; every test uses its
// own topic and group. Every wait is bounded.

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>

#include "client/admin_client.h"
#include "client/producer.h"
#include "client/pull_consumer.h"
#include "client/push_consumer.h"
#include "harness.h"

namespace comet::it {
namespace {

using namespace std::chrono_literals;
using namespace comet::client;

constexpr const char* kFastDelayLevels = "1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s";

class ClientIt : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir("comet_it_client");
        ns_port_ = free_port();
        broker_port_ = free_port();
        auto ns = start_namesrv(*dir_, ns_port_);
        ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
        ns_ = std::move(ns).value().release();
        ASSERT_TRUE(ns_->wait_for_port(ns_port_, 10s).is_ok()) << ns_->log_tail();
        auto b = start_broker(*dir_, broker_port_, addr(ns_port_),
                              {{"messageDelayLevel", kFastDelayLevels}});
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

    // Creates `topic` on the broker and waits until the name server routes it.
    void create_topic(AdminClient& admin, const std::string& topic, int queues) {
        TopicCreateOptions o;
        o.read_queue_nums = queues;
        o.write_queue_nums = queues;
        ASSERT_TRUE(admin.create_topic(addr(broker_port_), topic, o).is_ok());
        ASSERT_TRUE(eventually([&] { return admin.topic_route(topic).is_ok(); }, 10s));
    }

    void create_topic(const std::string& topic, int queues) {
        AdminClient admin(client_config());
        ASSERT_TRUE(admin.start().is_ok());
        create_topic(admin, topic, queues);
    }

    static ProducerConfig producer_config() {
        ProducerConfig c;
        c.client = client_config();
        return c;
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
        c.client.persist_consumer_offset_interval = 500ms;
        return c;
    }

    static inline TempDir* dir_ = nullptr;
    static inline Process* ns_ = nullptr;
    static inline Process* broker_ = nullptr;
    static inline uint16_t ns_port_ = 0;
    static inline uint16_t broker_port_ = 0;
};

TEST_F(ClientIt, SyncAsyncOnewayAndBatchSendsArePulledBack) {
    create_topic("CliSend", 4);
    DefaultMqProducer producer(producer_config());
    ASSERT_TRUE(producer.start().is_ok());

    std::set<std::string> want;
    std::map<std::string, std::string> uniq_by_body;
    for (int i = 0; i < 10; ++i) {
        const std::string body = "sync-" + std::to_string(i);
        auto r = producer.send(Message("CliSend", body, "TagS", "key" + std::to_string(i)));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        EXPECT_EQ(r->status, SendStatus::kSendOk);
        EXPECT_EQ(r->msg_id.size(), 32u);
        EXPECT_EQ(r->offset_msg_id.size(), 32u);
        EXPECT_EQ(r->message_queue.topic, "CliSend");
        uniq_by_body[body] = r->msg_id;
        want.insert(body);
    }
    std::mutex mu;
    std::condition_variable cv;
    int async_done = 0;
    int async_ok = 0;
    for (int i = 0; i < 10; ++i) {
        const std::string body = "async-" + std::to_string(i);
        want.insert(body);
        producer.send_async(Message("CliSend", body), [&](Result<SendResult> r) {
            std::lock_guard<std::mutex> lock(mu);
            ++async_done;
            async_ok += r.is_ok() ? 1 : 0;
            cv.notify_all();
        });
    }
    {
        std::unique_lock<std::mutex> lock(mu);
        ASSERT_TRUE(cv.wait_for(lock, 10s, [&] { return async_done == 10; }));
        EXPECT_EQ(async_ok, 10);
    }
    for (int i = 0; i < 5; ++i) {
        const std::string body = "oneway-" + std::to_string(i);
        want.insert(body);
        ASSERT_TRUE(producer.send_oneway(Message("CliSend", body)).is_ok());
    }
    std::vector<Message> batch;
    for (int i = 0; i < 10; ++i) {
        const std::string body = "batch-" + std::to_string(i);
        want.insert(body);
        batch.emplace_back("CliSend", body);
    }
    auto br = producer.send_batch(std::move(batch));
    ASSERT_TRUE(br.is_ok()) << br.status().to_string();
    EXPECT_EQ(std::count(br->msg_id.begin(), br->msg_id.end(), ','), 9);

    PullConsumerConfig cc;
    cc.client = client_config();
    cc.group = "CliPullGroup";
    DefaultMqPullConsumer consumer(cc);
    ASSERT_TRUE(consumer.start().is_ok());
    auto mqs = consumer.fetch_subscribe_message_queues("CliSend");
    ASSERT_TRUE(mqs.is_ok()) << mqs.status().to_string();
    ASSERT_EQ(mqs->size(), 4u);
    std::set<std::string> got;
    std::map<MessageQueue, int64_t> next;
    ASSERT_TRUE(eventually(
        [&] {
            for (const auto& mq : *mqs) {
                auto r = consumer.pull(mq, "*", next[mq], 32);
                if (!r.is_ok()) {
                    continue;
                }
                for (const auto& m : r->messages) {
                    got.insert(m.body);
                    auto it = uniq_by_body.find(m.body);
                    if (it != uniq_by_body.end()) {
                        EXPECT_EQ(m.unique_id(), it->second);
                        EXPECT_EQ(m.tags(), "TagS");
                    }
                }
                next[mq] = r->next_begin_offset;
            }
            return got.size() >= want.size();
        },
        10s));
    EXPECT_EQ(got, want);
    // Tag filtering on the client side as well as on the broker.
    size_t tagged = 0;
    for (const auto& mq : *mqs) {
        auto r = consumer.pull(mq, "TagS", 0, 64);
        ASSERT_TRUE(r.is_ok());
        tagged += r->messages.size();
    }
    EXPECT_EQ(tagged, 10u);
    // Offsets round-trip through the broker.
    ASSERT_TRUE(consumer.update_consume_offset((*mqs)[0], next[(*mqs)[0]]).is_ok());
    auto stored = consumer.fetch_consume_offset((*mqs)[0]);
    ASSERT_TRUE(stored.is_ok()) << stored.status().to_string();
    EXPECT_EQ(*stored, next[(*mqs)[0]]);
    auto mx = consumer.max_offset((*mqs)[0]);
    ASSERT_TRUE(mx.is_ok());
    EXPECT_EQ(*mx, next[(*mqs)[0]]);
}

TEST_F(ClientIt, PushConsumerReceivesEverythingInQueueOrder) {
    create_topic("CliPush", 4);
    DefaultMqProducer producer(producer_config());
    ASSERT_TRUE(producer.start().is_ok());
    constexpr int kCount = 200;
    for (int i = 0; i < kCount; ++i) {
        ASSERT_TRUE(producer.send(Message("CliPush", std::to_string(i))).is_ok());
    }
    DefaultMqPushConsumer consumer(push_config("CliPushGroup"));
    consumer.subscribe("CliPush", "*");
    std::mutex mu;
    std::map<int32_t, std::vector<int64_t>> offsets;
    std::set<std::string> bodies;
    consumer.register_listener([&](const std::vector<MessageExt>& msgs, const MessageQueue& mq) {
        std::lock_guard<std::mutex> lock(mu);
        for (const auto& m : msgs) {
            EXPECT_EQ(m.queue_id, mq.queue_id);
            offsets[m.queue_id].push_back(m.queue_offset);
            bodies.insert(m.body);
        }
        return ConsumeStatus::kConsumeSuccess;
    });
    ASSERT_TRUE(consumer.start().is_ok());
    EXPECT_TRUE(eventually(
        [&] {
            std::lock_guard<std::mutex> lock(mu);
            return bodies.size() == kCount;
        },
        20s));
    consumer.shutdown();
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(bodies.size(), static_cast<size_t>(kCount));
    for (const auto& [q, offs] : offsets) {
        for (size_t i = 1; i < offs.size(); ++i) {
            EXPECT_LT(offs[i - 1], offs[i]) << "queue " << q;
        }
    }
    // The committed progress reached the broker.
    AdminClient admin(client_config());
    ASSERT_TRUE(admin.start().is_ok());
    auto stats = admin.consume_stats("CliPushGroup", std::string("CliPush"));
    ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
    int64_t consumed = 0;
    for (const auto& [mq, w] : stats->offset_table) {
        EXPECT_EQ(w.consumer_offset, w.broker_offset) << mq.queue_id;
        consumed += w.consumer_offset;
    }
    EXPECT_EQ(consumed, kCount);
}

// Pulled bodies are decoded on the consume thread: messages of other tags are dropped there,
// and the committed offset still moves past them (up to the queue's end).
TEST_F(ClientIt, PushConsumerWithATagFilterCommitsPastFilteredMessages) {
    create_topic("CliTag", 2);
    DefaultMqProducer producer(producer_config());
    ASSERT_TRUE(producer.start().is_ok());
    constexpr int kCount = 60;
    for (int i = 0; i < kCount; ++i) {
        Message m("CliTag", std::to_string(i));
        m.set_tags(i % 3 == 0 ? "TagA" : "TagB");
        ASSERT_TRUE(producer.send(std::move(m)).is_ok());
    }
    DefaultMqPushConsumer consumer(push_config("CliTagGroup"));
    consumer.subscribe("CliTag", "TagA");
    std::mutex mu;
    std::set<std::string> bodies;
    int wrong_tag = 0;
    consumer.register_listener([&](const std::vector<MessageExt>& msgs, const MessageQueue&) {
        std::lock_guard<std::mutex> lock(mu);
        for (const auto& m : msgs) {
            wrong_tag += m.tags() == "TagA" ? 0 : 1;
            bodies.insert(m.body);
        }
        return ConsumeStatus::kConsumeSuccess;
    });
    ASSERT_TRUE(consumer.start().is_ok());
    EXPECT_TRUE(eventually(
        [&] {
            std::lock_guard<std::mutex> lock(mu);
            return bodies.size() == kCount / 3;
        },
        20s));
    AdminClient admin(client_config());
    ASSERT_TRUE(admin.start().is_ok());
    EXPECT_TRUE(eventually(
        [&] {
            auto stats = admin.consume_stats("CliTagGroup", std::string("CliTag"));
            if (!stats.is_ok()) {
                return false;
            }
            int64_t consumed = 0;
            for (const auto& [mq, w] : stats->offset_table) {
                if (w.consumer_offset != w.broker_offset) {
                    return false;
                }
                consumed += w.consumer_offset;
            }
            return consumed == kCount;
        },
        20s));
    consumer.shutdown();
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(bodies.size(), static_cast<size_t>(kCount / 3));
    EXPECT_EQ(wrong_tag, 0);
}

TEST_F(ClientIt, TwoPushConsumersSplitTheQueues) {
    create_topic("CliSplit", 4);
    std::atomic<int> received{0};
    auto listener = [&](const std::vector<MessageExt>& msgs, const MessageQueue&) {
        received += static_cast<int>(msgs.size());
        return ConsumeStatus::kConsumeSuccess;
    };
    DefaultMqPushConsumer a(push_config("CliSplitGroup"));
    DefaultMqPushConsumer b(push_config("CliSplitGroup"));
    for (auto* c : {&a, &b}) {
        c->subscribe("CliSplit", "*");
        c->register_listener(listener);
        ASSERT_TRUE(c->start().is_ok());
    }
    auto topic_queues = [](DefaultMqPushConsumer& c) {
        std::set<MessageQueue> out;
        for (const auto& mq : c.assigned_queues()) {
            if (mq.topic == "CliSplit") {
                out.insert(mq);
            }
        }
        return out;
    };
    ASSERT_TRUE(eventually(
        [&] {
            auto qa = topic_queues(a);
            auto qb = topic_queues(b);
            std::set<MessageQueue> all = qa;
            all.insert(qb.begin(), qb.end());
            return qa.size() == 2 && qb.size() == 2 && all.size() == 4;
        },
        15s))
        << topic_queues(a).size() << " / " << topic_queues(b).size();
    DefaultMqProducer producer(producer_config());
    ASSERT_TRUE(producer.start().is_ok());
    for (int i = 0; i < 40; ++i) {
        ASSERT_TRUE(producer.send(Message("CliSplit", std::to_string(i))).is_ok());
    }
    EXPECT_TRUE(eventually([&] { return received.load() >= 40; }, 15s)) << received.load();
    // When one leaves, the other takes every queue.
    b.shutdown();
    EXPECT_TRUE(eventually([&] { return topic_queues(a).size() == 4; }, 15s));
}

TEST_F(ClientIt, FailedMessagesComeBackThroughTheRetryTopic) {
    create_topic("CliRetry", 1);
    DefaultMqProducer producer(producer_config());
    ASSERT_TRUE(producer.start().is_ok());
    std::set<std::string> ids;
    for (int i = 0; i < 3; ++i) {
        auto r = producer.send(Message("CliRetry", "r" + std::to_string(i)));
        ASSERT_TRUE(r.is_ok());
        ids.insert(r->msg_id);
    }
    DefaultMqPushConsumer consumer(push_config("CliRetryGroup"));
    consumer.subscribe("CliRetry", "*");
    std::mutex mu;
    std::map<std::string, int> seen;
    std::set<std::string> redelivered;
    consumer.register_listener([&](const std::vector<MessageExt>& msgs, const MessageQueue&) {
        std::lock_guard<std::mutex> lock(mu);
        for (const auto& m : msgs) {
            if (seen[m.unique_id()]++ == 0) {
                return ConsumeStatus::kReconsumeLater;
            }
            EXPECT_EQ(m.topic, "CliRetry");  // the original topic, not %RETRY%
            EXPECT_GE(m.reconsume_times, 1);
            redelivered.insert(m.unique_id());
        }
        return ConsumeStatus::kConsumeSuccess;
    });
    ASSERT_TRUE(consumer.start().is_ok());
    EXPECT_TRUE(eventually(
        [&] {
            std::lock_guard<std::mutex> lock(mu);
            return redelivered == ids;
        },
        30s));
}

TEST_F(ClientIt, OrderlyConsumerLocksQueuesAndKeepsOrder) {
    create_topic("CliOrder", 2);
    DefaultMqProducer producer(producer_config());
    ASSERT_TRUE(producer.start().is_ok());
    for (int i = 0; i < 40; ++i) {
        ASSERT_TRUE(
            producer.send_to_queue(Message("CliOrder", std::to_string(i)),
                                   MessageQueue{"CliOrder", "broker-a", i % 2})
                .is_ok());
    }
    DefaultMqPushConsumer consumer(push_config("CliOrderGroup"));
    consumer.subscribe("CliOrder", "*");
    std::mutex mu;
    std::map<int32_t, std::vector<int>> order;
    int suspended = 0;
    consumer.register_listener_orderly([&](const std::vector<MessageExt>& msgs,
                                           const MessageQueue& mq) {
        std::lock_guard<std::mutex> lock(mu);
        for (const auto& m : msgs) {
            if (m.body == "10" && suspended++ == 0) {
                return ConsumeOrderlyStatus::kSuspendCurrentQueueAMoment;
            }
            order[mq.queue_id].push_back(std::stoi(m.body));
        }
        return ConsumeOrderlyStatus::kSuccess;
    });
    ASSERT_TRUE(consumer.start().is_ok());
    EXPECT_TRUE(eventually(
        [&] {
            std::lock_guard<std::mutex> lock(mu);
            return order[0].size() + order[1].size() >= 40;
        },
        20s));
    std::lock_guard<std::mutex> lock(mu);
    for (int q = 0; q < 2; ++q) {
        ASSERT_EQ(order[q].size(), 20u) << q;
        for (size_t i = 0; i < order[q].size(); ++i) {
            EXPECT_EQ(order[q][i], static_cast<int>(i * 2) + q);  // the suspended one is not skipped
        }
    }
}

TEST_F(ClientIt, AdminClientQueries) {
    AdminClient admin(client_config());
    ASSERT_TRUE(admin.start().is_ok());
    create_topic(admin, "CliAdmin", 2);
    auto cluster = admin.cluster_info();
    ASSERT_TRUE(cluster.is_ok()) << cluster.status().to_string();
    ASSERT_EQ(cluster->broker_addr_table.count("broker-a"), 1u);
    EXPECT_EQ(cluster->broker_addr_table["broker-a"].broker_addrs[0], addr(broker_port_));
    auto topics = admin.topic_list();
    ASSERT_TRUE(topics.is_ok());
    EXPECT_NE(std::find(topics->begin(), topics->end(), "CliAdmin"), topics->end());
    auto cfg = admin.broker_config(addr(broker_port_));
    ASSERT_TRUE(cfg.is_ok()) << cfg.status().to_string();
    EXPECT_EQ((*cfg)["brokerName"], "broker-a");
    auto rt = admin.broker_runtime_info(addr(broker_port_));
    ASSERT_TRUE(rt.is_ok()) << rt.status().to_string();
    EXPECT_FALSE(rt->empty());

    DefaultMqProducer producer(producer_config());
    ASSERT_TRUE(producer.start().is_ok());
    auto sent = producer.send(Message("CliAdmin", "admin-body", "T", "findme"));
    ASSERT_TRUE(sent.is_ok());
    auto by_id = admin.query_msg_by_id(sent->offset_msg_id);
    ASSERT_TRUE(by_id.is_ok()) << by_id.status().to_string();
    EXPECT_EQ(by_id->body, "admin-body");
    // The consume queue is dispatched asynchronously after the put.
    EXPECT_TRUE(eventually(
        [&] {
            auto by_offset = admin.query_msg_by_offset(sent->message_queue, sent->queue_offset);
            return by_offset.is_ok() && by_offset->unique_id() == sent->msg_id;
        },
        5s));
    const int64_t now = SystemClock::instance().wall_millis();
    EXPECT_TRUE(eventually(
        [&] {
            auto by_key = admin.query_msg_by_key("CliAdmin", "findme", 32, now - 60000,
                                                 now + 60000);
            return by_key.is_ok() && by_key->size() == 1 && (*by_key)[0].body == "admin-body";
        },
        5s));
    auto stats = admin.topic_stats("CliAdmin");
    ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
    EXPECT_EQ(stats->offset_table.size(), 2u);

    protocol::SubscriptionGroupConfig group;
    group.group_name = "CliAdminGroup";
    group.retry_max_times = 3;
    EXPECT_TRUE(admin.update_subscription_group(addr(broker_port_), group).is_ok());
    EXPECT_TRUE(admin.update_broker_config(addr(broker_port_), {{"flushIntervalCommitLog", "600"}})
                    .is_ok());
    auto cfg2 = admin.broker_config(addr(broker_port_));
    ASSERT_TRUE(cfg2.is_ok());
    EXPECT_EQ((*cfg2)["flushIntervalCommitLog"], "600");

    auto missing = admin.topic_route("NoSuchTopicAtAll");
    EXPECT_EQ(missing.status().code(), Errc::kNotFound);
    EXPECT_FALSE(admin.query_msg_by_id("nothex").is_ok());
    ASSERT_TRUE(admin.delete_topic(cluster->broker_addr_table["broker-a"].cluster, "CliAdmin")
                    .is_ok());
    EXPECT_TRUE(eventually([&] { return !admin.topic_route("CliAdmin").is_ok(); }, 5s));
}

TEST_F(ClientIt, SendsRetryOnAnotherBrokerAndAvoidTheDeadOne) {
    const uint16_t port_b = free_port();
    auto b = start_broker(*dir_, port_b, addr(ns_port_), {}, "broker-b");
    ASSERT_TRUE(b.is_ok()) << b.status().to_string();
    ASSERT_TRUE((*b)->wait_for_port(port_b, 20s).is_ok()) << (*b)->log_tail();
    AdminClient admin(client_config());
    ASSERT_TRUE(admin.start().is_ok());
    TopicCreateOptions o;
    o.read_queue_nums = 2;
    o.write_queue_nums = 2;
    ASSERT_TRUE(admin.create_topic(addr(broker_port_), "CliFail", o).is_ok());
    ASSERT_TRUE(admin.create_topic(addr(port_b), "CliFail", o).is_ok());
    ASSERT_TRUE(eventually(
        [&] {
            auto r = admin.topic_route("CliFail");
            return r.is_ok() && r->broker_datas.size() == 2;
        },
        10s));
    DefaultMqProducer producer(producer_config());
    ASSERT_TRUE(producer.start().is_ok());
    std::set<std::string> used;
    for (int i = 0; i < 8; ++i) {
        auto r = producer.send(Message("CliFail", "before"));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        used.insert(r->message_queue.broker_name);
    }
    EXPECT_EQ(used, (std::set<std::string>{"broker-a", "broker-b"}));  // round robin over both

    (*b)->sigkill();  // connection refused from now on; the name server still routes it
    ASSERT_TRUE((*b)->wait_exit(10s).is_ok());
    for (int i = 0; i < 20; ++i) {
        auto r = producer.send(Message("CliFail", "after"));
        ASSERT_TRUE(r.is_ok()) << i << ": " << r.status().to_string();
        EXPECT_EQ(r->message_queue.broker_name, "broker-a");
    }
    EXPECT_FALSE(producer.faults().is_available("broker-b"));
    EXPECT_TRUE(producer.faults().is_available("broker-a"));
}

}  // namespace
}  // namespace comet::it
