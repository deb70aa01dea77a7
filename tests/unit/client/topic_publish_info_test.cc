#include "client/topic_publish_info.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace comet::client {
namespace {

using std::chrono::milliseconds;

protocol::TopicRouteData route_of(std::vector<std::tuple<std::string, int, int, bool>> brokers) {
    protocol::TopicRouteData r;
    for (const auto& [name, queues, perm, master] : brokers) {
        protocol::QueueData qd;
        qd.broker_name = name;
        qd.read_queue_nums = queues;
        qd.write_queue_nums = queues;
        qd.perm = perm;
        r.queue_datas.push_back(qd);
        protocol::BrokerData bd;
        bd.cluster = "c";
        bd.broker_name = name;
        bd.broker_addrs[master ? 0 : 1] = "127.0.0.1:1";
        r.broker_datas.push_back(bd);
    }
    return r;
}

TEST(TopicPublishInfo, WritableQueuesOfBrokersWithAMaster) {
    auto route = route_of({{"b", 2, 6, true}, {"a", 3, 6, true}, {"ro", 4, 4, true},
                           {"slaveonly", 4, 6, false}});
    auto info = TopicPublishInfo::from_route("T", route);
    ASSERT_EQ(info->queues().size(), 5u);
    EXPECT_EQ(info->queues()[0], (MessageQueue{"T", "a", 0}));
    EXPECT_EQ(info->queues()[3], (MessageQueue{"T", "b", 0}));
    auto sub = TopicPublishInfo::subscribe_queues("T", route);
    EXPECT_EQ(sub.size(), 2u + 3u + 4u + 4u);  // readable, including read-only and slave-only
}

TEST(TopicPublishInfo, RoundRobinCoversEveryQueue) {
    auto info = TopicPublishInfo::from_route("T", route_of({{"a", 2, 6, true}, {"b", 2, 6, true}}));
    std::map<MessageQueue, int> seen;
    for (int i = 0; i < 40; ++i) {
        seen[info->select("", nullptr)]++;
    }
    ASSERT_EQ(seen.size(), 4u);
    for (const auto& [mq, n] : seen) {
        EXPECT_EQ(n, 10);
    }
}

TEST(TopicPublishInfo, RetryAvoidsTheBrokerThatJustFailed) {
    auto info = TopicPublishInfo::from_route("T", route_of({{"a", 4, 6, true}, {"b", 4, 6, true}}));
    for (int i = 0; i < 20; ++i) {
        EXPECT_EQ(info->select("a", nullptr).broker_name, "b");
    }
    // With one broker only, the failed one is still used.
    auto single = TopicPublishInfo::from_route("T", route_of({{"a", 2, 6, true}}));
    EXPECT_EQ(single->select("a", nullptr).broker_name, "a");
}

TEST(TopicPublishInfo, FaultedBrokerIsSkippedUntilItsPenaltyEnds) {
    ManualClock clock;
    LatencyFaultTolerance faults(&clock);
    auto info = TopicPublishInfo::from_route("T", route_of({{"a", 4, 6, true}, {"b", 4, 6, true}}));
    faults.update_fault_item("a", milliseconds(2000), milliseconds(120000));
    for (int i = 0; i < 20; ++i) {
        EXPECT_EQ(info->select("", &faults).broker_name, "b");
    }
    clock.advance(milliseconds(120000));
    std::set<std::string> brokers;
    for (int i = 0; i < 20; ++i) {
        brokers.insert(info->select("", &faults).broker_name);
    }
    EXPECT_EQ(brokers, (std::set<std::string>{"a", "b"}));
}

TEST(TopicPublishInfo, AllBrokersFaultedPicksTheLeastBad) {
    ManualClock clock;
    LatencyFaultTolerance faults(&clock);
    auto info = TopicPublishInfo::from_route("T", route_of({{"a", 2, 6, true}, {"b", 2, 6, true}}));
    faults.update_fault_item("a", milliseconds(15000), milliseconds(600000));
    faults.update_fault_item("b", milliseconds(1000), milliseconds(60000));
    for (int i = 0; i < 10; ++i) {
        EXPECT_EQ(info->select("", &faults).broker_name, "b");
    }
}

std::vector<MessageQueue> queues(int n) {
    std::vector<MessageQueue> v;
    for (int i = 0; i < n; ++i) {
        v.push_back(MessageQueue{"T", "b", i});
    }
    return v;
}

TEST(AllocateAveragely, SharesAreContiguousDisjointAndCoverEverything) {
    for (int n = 0; n <= 9; ++n) {
        for (int c = 1; c <= 5; ++c) {
            std::vector<std::string> cids;
            for (int i = 0; i < c; ++i) {
                cids.push_back("c" + std::to_string(i));
            }
            std::map<MessageQueue, int> owners;
            size_t max_share = 0;
            size_t min_share = 1000;
            for (const auto& cid : cids) {
                auto mine = allocate_averagely(cid, queues(n), cids);
                max_share = std::max(max_share, mine.size());
                min_share = std::min(min_share, mine.size());
                for (const auto& mq : mine) {
                    owners[mq]++;
                }
            }
            EXPECT_EQ(owners.size(), static_cast<size_t>(n)) << n << "/" << c;
            for (const auto& [mq, k] : owners) {
                EXPECT_EQ(k, 1);
            }
            EXPECT_LE(max_share - min_share, 1u) << n << "/" << c;
        }
    }
}

TEST(AllocateAveragely, MatchesJavaExample) {
    std::vector<std::string> cids = {"c0", "c1", "c2"};
    auto q = queues(8);
    // 8 queues over 3 consumers: 3, 3, 2 in order.
    EXPECT_EQ(allocate_averagely("c0", q, cids), (std::vector<MessageQueue>{q[0], q[1], q[2]}));
    EXPECT_EQ(allocate_averagely("c1", q, cids), (std::vector<MessageQueue>{q[3], q[4], q[5]}));
    EXPECT_EQ(allocate_averagely("c2", q, cids), (std::vector<MessageQueue>{q[6], q[7]}));
    EXPECT_TRUE(allocate_averagely("stranger", q, cids).empty());
}

}  // namespace
}  // namespace comet::client
