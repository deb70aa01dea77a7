// SQL92 message filters end to end: real mqnamesrv + mqbroker processes (enablePropertyFilter
// on), messages with properties, C++ pull and push consumers with SQL92 selectors. The pull
// consumer posts its expression with every pull; the push consumer's is registered by its
// heartbeats (Java's default). A broker with the default config still refuses SQL92. Every wait
// is bounded.

#include <gtest/gtest.h>

#include <mutex>
#include <set>

#include "client/admin_client.h"
#include "client/producer.h"
#include "client/pull_consumer.h"
#include "client/push_consumer.h"
#include "harness.h"
#include "net/remoting_client.h"
#include "protocol/message_decoder.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

using namespace std::chrono_literals;
using namespace comet::client;

class FilterIt : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir("comet_it_filter");
        ns_port_ = free_port();
        broker_port_ = free_port();
        auto ns = start_namesrv(*dir_, ns_port_);
        ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
        ns_ = std::move(ns).value().release();
        ASSERT_TRUE(ns_->wait_for_port(ns_port_, 10s).is_ok()) << ns_->log_tail();
        auto b =
            start_broker(*dir_, broker_port_, addr(ns_port_), {{"enablePropertyFilter", "true"}});
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

    static void create_topic(const std::string& broker_addr, const std::string& topic, int queues) {
        AdminClient admin(client_config());
        ASSERT_TRUE(admin.start().is_ok());
        TopicCreateOptions o;
        o.read_queue_nums = queues;
        o.write_queue_nums = queues;
        ASSERT_TRUE(admin.create_topic(broker_addr, topic, o).is_ok());
        ASSERT_TRUE(eventually([&] { return admin.topic_route(topic).is_ok(); }, 10s));
    }

    // Message i (0..11) of `topic`: body "m<i>", property i, color red (i%3 == 0), blue
    // (i%3 == 1) or none (i%3 == 2), tag TagA (even) or TagB (odd).
    static void send_twelve(const std::string& topic) {
        ProducerConfig pc;
        pc.client = client_config();
        pc.group = "FltProducer";
        DefaultMqProducer producer(pc);
        ASSERT_TRUE(producer.start().is_ok());
        for (int i = 0; i < 12; ++i) {
            Message m(topic, "m" + std::to_string(i), i % 2 == 0 ? "TagA" : "TagB");
            m.properties.set("i", std::to_string(i));
            if (i % 3 == 0) {
                m.properties.set("color", "red");
            } else if (i % 3 == 1) {
                m.properties.set("color", "blue");
            }
            auto r = producer.send(m);
            ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        }
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
        c.client.persist_consumer_offset_interval = 500ms;
        return c;
    }

    static inline TempDir* dir_ = nullptr;
    static inline Process* ns_ = nullptr;
    static inline Process* broker_ = nullptr;
    static inline uint16_t ns_port_ = 0;
    static inline uint16_t broker_port_ = 0;
};

struct Pulled {
    std::set<std::string> bodies;
    int64_t next_offset = 0;
    int pulls_without_match = 0;
};

// A send is acknowledged once it is in the CommitLog; the ConsumeQueue entry follows
// asynchronously. Waits until `mq` holds all twelve messages.
void wait_for_twelve(DefaultMqPullConsumer& consumer, const MessageQueue& mq) {
    ASSERT_TRUE(eventually(
        [&] {
            auto max = consumer.max_offset(mq);
            return max.is_ok() && *max >= 12;
        },
        20s))
        << "queue " << mq.topic << ":" << mq.queue_id << " never reached offset 12";
}

// Pulls queue `mq` from offset 0 to its end with `selector` (bounded: 20 pulls).
Pulled pull_all(DefaultMqPullConsumer& consumer, const MessageQueue& mq,
                const MessageSelector& selector) {
    Pulled out;
    for (int n = 0; n < 20 && out.next_offset < 12; ++n) {
        auto r = consumer.pull(mq, selector, out.next_offset, 4);
        EXPECT_TRUE(r.is_ok()) << selector.expression << ": " << r.status().to_string();
        if (!r.is_ok()) {
            break;
        }
        EXPECT_TRUE(r->status == PullStatus::kFound || r->status == PullStatus::kNoMatchedMsg)
            << selector.expression << ": " << pull_status_name(r->status);
        if (r->status == PullStatus::kNoMatchedMsg) {
            ++out.pulls_without_match;
        }
        for (const auto& m : r->messages) {
            out.bodies.insert(m.body);
        }
        EXPECT_GT(r->next_begin_offset, out.next_offset) << selector.expression;
        out.next_offset = r->next_begin_offset;
    }
    return out;
}

TEST_F(FilterIt, PullConsumerGetsExactlyTheMatchingMessages) {
    create_topic(addr(broker_port_), "FltPull", 1);
    send_twelve("FltPull");
    PullConsumerConfig cfg;
    cfg.client = client_config();
    cfg.group = "FltPullGroup";
    DefaultMqPullConsumer consumer(cfg);
    ASSERT_TRUE(consumer.start().is_ok());
    const MessageQueue mq{"FltPull", "broker-a", 0};
    wait_for_twelve(consumer, mq);

    struct Case {
        const char* sql;
        std::set<std::string> bodies;
    };
    const Case cases[] = {
        {"i >= 3 AND i < 7", {"m3", "m4", "m5", "m6"}},
        {"color IS NULL", {"m2", "m5", "m8", "m11"}},
        {"color IS NOT NULL AND i > 8", {"m9", "m10"}},
        {"color = 'red' OR color = 'blue'", {"m0", "m1", "m3", "m4", "m6", "m7", "m9", "m10"}},
        {"i BETWEEN 2 AND 4", {"m2", "m3", "m4"}},
        {"i NOT BETWEEN 2 AND 9", {"m0", "m1", "m10", "m11"}},
        {"color IN ('red') AND TAGS = 'TagA'", {"m0", "m6"}},
        {"i NOT IN ('1', '2', '3') AND i < 5", {"m0", "m4"}},
        {"NOT (color = 'blue')", {"m0", "m3", "m6", "m9"}},  // no color: NULL, not a match
        {"color <> 'red'", {"m1", "m4", "m7", "m10"}},
        {"TAGS = 'TagB' AND (i = 1 OR i = 11)", {"m1", "m11"}},
        {"i > 100", {}},
    };
    for (const auto& c : cases) {
        const Pulled p = pull_all(consumer, mq, MessageSelector::by_sql(c.sql));
        EXPECT_EQ(p.bodies, c.bodies) << c.sql;
        EXPECT_EQ(p.next_offset, 12) << c.sql;  // skipped messages are passed, as for tags
    }
    // Nothing matches: the pull says so and still moves past the messages it read.
    const Pulled none = pull_all(consumer, mq, MessageSelector::by_sql("i > 100"));
    EXPECT_GE(none.pulls_without_match, 1);

    // A selector that does not compile is refused with the parser's position.
    auto bad = consumer.pull(mq, MessageSelector::by_sql("i >"), 0, 4);
    ASSERT_FALSE(bad.is_ok());
    EXPECT_NE(bad.status().message().find("SUBSCRIPTION_PARSE_FAILED"), std::string::npos)
        << bad.status().message();
    EXPECT_NE(bad.status().message().find("line 1, column 4"), std::string::npos)
        << bad.status().message();
}

TEST_F(FilterIt, PushConsumerGetsOnlyMatchingMessagesThroughItsHeartbeat) {
    create_topic(addr(broker_port_), "FltPush", 1);
    send_twelve("FltPush");
    {  // a last message that matches: once it is consumed, the queue has been read to its end
        ProducerConfig pc;
        pc.client = client_config();
        pc.group = "FltProducer";
        DefaultMqProducer producer(pc);
        ASSERT_TRUE(producer.start().is_ok());
        Message last("FltPush", "last");
        last.properties.set("i", "100");
        last.properties.set("color", "green");
        ASSERT_TRUE(producer.send(last).is_ok());
    }
    DefaultMqPushConsumer consumer(push_config("FltPushGroup"));
    consumer.subscribe("FltPush", MessageSelector::by_sql("i > 5 AND color IS NOT NULL"));
    std::mutex mu;
    std::multiset<std::string> got;
    consumer.register_listener([&](const std::vector<MessageExt>& msgs, const MessageQueue&) {
        std::lock_guard<std::mutex> lock(mu);
        for (const auto& m : msgs) {
            got.insert(m.body);
        }
        return ConsumeStatus::kConsumeSuccess;
    });
    ASSERT_TRUE(consumer.start().is_ok());
    EXPECT_TRUE(eventually(
        [&] {
            std::lock_guard<std::mutex> lock(mu);
            return got.count("last") == 1;
        },
        20s));
    consumer.shutdown();
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(got, (std::multiset<std::string>{"m6", "m7", "m9", "m10", "last"}));
}

TEST_F(FilterIt, PushConsumerWithABadSelectorFailsToStart) {
    create_topic(addr(broker_port_), "FltBad", 1);
    DefaultMqPushConsumer consumer(push_config("FltBadGroup"));
    consumer.subscribe("FltBad", MessageSelector::by_sql("color = 'red' AND"));
    consumer.register_listener([](const std::vector<MessageExt>&, const MessageQueue&) {
        return ConsumeStatus::kConsumeSuccess;
    });
    const Status st = consumer.start();
    ASSERT_FALSE(st.is_ok());
    EXPECT_EQ(st.code(), Errc::kFailedPrecondition);
    EXPECT_NE(st.message().find("SUBSCRIPTION_PARSE_FAILED"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("unexpected end of selector at line 1, column 18"),
              std::string::npos)
        << st.message();
}

// A slave serves filtered pulls the same way (the pull carries its SQL92 expression).
TEST_F(FilterIt, SlaveFiltersPullsTheSameWay) {
    BrokerGroupOptions o;
    o.broker_name = "broker-s";
    o.slaves = 1;
    o.common_config = {{"enablePropertyFilter", "true"}};
    auto g = BrokerGroup::start(*dir_, addr(ns_port_), o);
    ASSERT_TRUE(g.is_ok()) << g.status().to_string();
    BrokerGroup& group = **g;
    create_topic(group.master().address(), "FltSlave", 1);
    create_topic(group.slave(0).address(), "FltSlave", 1);  // no wait for the metadata sync
    send_twelve("FltSlave");

    net::RemotingClient client;
    client.start();
    auto pull = [&](const std::string& sql) {
        auto req = pull_message_request("FltSlaveGroup", "FltSlave", 0, 0, 32);
        req.ext_fields["subscription"] = sql;
        req.ext_fields["expressionType"] = "SQL92";
        return call(client, group.slave(0).port, std::move(req));
    };
    auto bodies = [](const protocol::RemotingCommand& r) {
        std::set<std::string> out;
        auto msgs = protocol::decode_messages(r.body);
        EXPECT_TRUE(msgs.is_ok());
        for (const auto& m : msgs.value()) {
            out.insert(m.body);
        }
        return out;
    };
    // The slave has all twelve once a pull of everything ends at offset 12.
    ASSERT_TRUE(eventually(
        [&] {
            auto r = pull("i >= 0");
            return r.is_ok() && r->code == protocol::ResponseCode::kSuccess &&
                   r->ext_fields["nextBeginOffset"] == "12";
        },
        20s));
    auto r = pull("color = 'blue' AND i BETWEEN 4 AND 10");
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    ASSERT_EQ(r->code, protocol::ResponseCode::kSuccess) << r->remark.value_or("");
    EXPECT_EQ(bodies(*r), (std::set<std::string>{"m4", "m7", "m10"}));
    EXPECT_EQ(r->ext_fields["nextBeginOffset"], "12");
    r = pull("i = ");
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->code, protocol::ResponseCode::kSubscriptionParseFailed);
    client.shutdown();
}

// enablePropertyFilter=false (RocketMQ's default): SQL92 is refused at CHECK_CLIENT_CONFIG and
// at every pull, never served unfiltered.
TEST_F(FilterIt, DefaultBrokerStillRefusesSql92) {
    const uint16_t port = free_port();
    auto b = start_broker(*dir_, port, addr(ns_port_), {}, "broker-nofilter");
    ASSERT_TRUE(b.is_ok()) << b.status().to_string();
    ASSERT_TRUE((*b)->wait_for_port(port, 20s).is_ok()) << (*b)->log_tail();
    create_topic(addr(port), "FltOff", 1);
    send_twelve("FltOff");
    const std::string remark = "The broker does not support consumer to filter message by SQL92";

    PullConsumerConfig cfg;
    cfg.client = client_config();
    cfg.group = "FltOffPullGroup";
    DefaultMqPullConsumer puller(cfg);
    ASSERT_TRUE(puller.start().is_ok());
    wait_for_twelve(puller, MessageQueue{"FltOff", "broker-nofilter", 0});
    auto r = puller.pull(MessageQueue{"FltOff", "broker-nofilter", 0},
                         MessageSelector::by_sql("i > 5"), 0, 4);
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("SYSTEM_ERROR"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(remark), std::string::npos) << r.status().message();
    // Tags still work there.
    auto tags = puller.pull(MessageQueue{"FltOff", "broker-nofilter", 0},
                            MessageSelector::by_tag("TagA"), 0, 32);
    ASSERT_TRUE(tags.is_ok()) << tags.status().to_string();
    EXPECT_EQ(tags->messages.size(), 6u);

    DefaultMqPushConsumer consumer(push_config("FltOffPushGroup"));
    consumer.subscribe("FltOff", MessageSelector::by_sql("i > 5"));
    consumer.register_listener([](const std::vector<MessageExt>&, const MessageQueue&) {
        return ConsumeStatus::kConsumeSuccess;
    });
    const Status st = consumer.start();
    ASSERT_FALSE(st.is_ok());
    EXPECT_NE(st.message().find("SYSTEM_ERROR"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(remark), std::string::npos) << st.message();
}

}  // namespace
}  // namespace comet::it
