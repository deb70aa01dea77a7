// BrokerMetrics' hot-path counters: per-topic children through the per-thread cache, put results
// by status, pull counters.
#include "broker/stats/broker_metrics.h"

#include <gtest/gtest.h>

#include <thread>

namespace comet::broker {
namespace {

using store::PutMessageStatus;

TEST(BrokerMetrics, PutCountsPerTopicAndStatus) {
    BrokerMetrics m("C", "broker-a", 0);
    const auto* in = m.topic_in("T1", BrokerMetrics::MessageType::kNormal);
    EXPECT_EQ(in, m.topic_in("T1", BrokerMetrics::MessageType::kNormal));
    EXPECT_NE(in, m.topic_in("T1", BrokerMetrics::MessageType::kDelay));
    m.on_put(in, PutMessageStatus::kPutOk, 1, 100, std::chrono::microseconds(10));
    m.on_put(in, PutMessageStatus::kPutOk, 3, 300, std::chrono::microseconds(10));  // a batch
    m.on_put(in, PutMessageStatus::kFlushSlaveTimeout, 1, 50, std::chrono::microseconds(10));
    m.on_put(in, PutMessageStatus::kInSyncReplicasNotEnough, 1, 50, std::chrono::microseconds(10));
    const std::string text = m.registry().render();
    const std::string labels =
        "{cluster=\"C\",node_type=\"broker\",node_id=\"broker-a\",broker_id=\"0\",topic=\"T1\","
        "message_type=\"Normal\",is_system=\"false\"}";
    // FLUSH_SLAVE_TIMEOUT stores the message; IN_SYNC_REPLICAS_NOT_ENOUGH does not.
    EXPECT_NE(text.find("rocketmq_messages_in_total" + labels + " 5\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("rocketmq_throughput_in_total" + labels + " 450\n"), std::string::npos);
    EXPECT_NE(text.find("status=\"IN_SYNC_REPLICAS_NOT_ENOUGH\"} 1\n"), std::string::npos);
    EXPECT_NE(text.find("status=\"FLUSH_SLAVE_TIMEOUT\"} 1\n"), std::string::npos);
    EXPECT_NE(text.find("status=\"PUT_OK\"} 2\n"), std::string::npos);
    EXPECT_NE(text.find("comet_put_latency_seconds_count{cluster=\"C\",node_type=\"broker\","
                        "node_id=\"broker-a\",broker_id=\"0\"} 4\n"),
              std::string::npos);
}

TEST(BrokerMetrics, TopicCountersAreSharedAcrossThreads) {
    BrokerMetrics m("C", "b", 1);
    constexpr int kThreads = 4;
    constexpr int kPuts = 2000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&m] {
            for (int i = 0; i < kPuts; ++i) {
                m.on_put(m.topic_in("Shared", BrokerMetrics::MessageType::kNormal),
                         PutMessageStatus::kPutOk, 1, 10, std::chrono::nanoseconds(1));
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    EXPECT_NE(m.registry().render().find("topic=\"Shared\",message_type=\"Normal\",is_system="
                                         "\"false\"} " +
                                         std::to_string(kThreads * kPuts) + "\n"),
              std::string::npos);
}

TEST(BrokerMetrics, PullCountsAndSystemTopics) {
    BrokerMetrics m("C", "b", 0);
    m.on_pull_found("%RETRY%G", "G", 2, 64);
    m.on_pull_found("%RETRY%G", "G", 1, 32);
    const std::string text = m.registry().render();
    EXPECT_NE(text.find("topic=\"%RETRY%G\",consumer_group=\"G\",is_retry=\"true\",is_system="
                        "\"false\"} 3\n"),
              std::string::npos)
        << text;
    EXPECT_TRUE(is_system_topic_name("RMQ_SYS_TRACE_TOPIC"));
    EXPECT_TRUE(is_system_topic_name("SCHEDULE_TOPIC_XXXX"));
    EXPECT_TRUE(is_system_topic_name("TBW102"));
    EXPECT_FALSE(is_system_topic_name("%DLQ%G"));
    EXPECT_FALSE(is_system_topic_name("Orders"));
}

// The totals BrokerStatsManager is fed from: per topic over message types, per topic@group, with
// sends and pulls as the increment counts.
TEST(BrokerMetrics, StatTotalsForBrokerStats) {
    BrokerMetrics m("C", "broker-a", 0);
    const auto* normal = m.topic_in("T", BrokerMetrics::MessageType::kNormal);
    const auto* delay = m.topic_in("T", BrokerMetrics::MessageType::kDelay);
    m.on_put(normal, PutMessageStatus::kPutOk, 3, 30, std::chrono::microseconds(1));
    m.on_put(delay, PutMessageStatus::kPutOk, 1, 10, std::chrono::microseconds(1));
    m.on_put(normal, PutMessageStatus::kServiceNotAvailable, 1, 10, std::chrono::microseconds(1));
    m.on_pull_found("T", "G", 2, 64);
    m.on_pull_found("T", "G", 1, 32);
    const auto t = m.stat_totals();
    EXPECT_EQ(t.topic_put_nums.at("T"), std::make_pair(int64_t{4}, int64_t{2}));
    EXPECT_EQ(t.topic_put_size.at("T"), std::make_pair(int64_t{40}, int64_t{2}));
    EXPECT_EQ(t.group_get_nums.at("T@G"), std::make_pair(int64_t{3}, int64_t{2}));
    EXPECT_EQ(t.group_get_size.at("T@G"), std::make_pair(int64_t{96}, int64_t{2}));
}

}  // namespace
}  // namespace comet::broker
