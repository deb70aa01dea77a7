#include <gtest/gtest.h>

#include "base/clock.h"
#include "broker/client/consumer_manager.h"
#include "broker/client/rebalance_lock_manager.h"
#include "broker/client/subscription_data.h"
#include "broker/longpolling/pull_request_hold_service.h"

namespace comet::broker {
namespace {

using namespace std::chrono_literals;

TEST(SubscriptionData, JavaStringHash) {
    EXPECT_EQ(java_string_hash(""), 0);
    EXPECT_EQ(java_string_hash("TagA"), 2598919);
    EXPECT_EQ(java_string_hash("hello world"), 1794106052);
    // Non-ASCII: "é" is one UTF-16 unit 0xE9; "😀" is a surrogate pair.
    EXPECT_EQ(java_string_hash("\xC3\xA9"), 0xE9);
    EXPECT_EQ(java_string_hash("\xF0\x9F\x98\x80"), 0xD83D * 31 + 0xDE00);
}

TEST(SubscriptionData, BuildAndMatch) {
    auto all = build_subscription("T", "*", "TAG");
    ASSERT_TRUE(all.is_ok());
    EXPECT_TRUE(all->matches_all());
    EXPECT_TRUE(tag_code_matches(*all, 12345));
    auto s = build_subscription("T", " TagA || TagB ", "");
    ASSERT_TRUE(s.is_ok());
    EXPECT_EQ(s->tags_set, (std::set<std::string>{"TagA", "TagB"}));
    EXPECT_TRUE(tag_code_matches(*s, java_string_hash("TagA")));
    EXPECT_FALSE(tag_code_matches(*s, java_string_hash("TagC")));
    EXPECT_TRUE(tag_matches(*s, "TagB"));
    EXPECT_FALSE(tag_matches(*s, "TagC"));
    EXPECT_FALSE(build_subscription("T", "a > 1", "SQL92").is_ok());
    // A SQL92 subscription passes every ConsumeQueue unit (its filter reads the record), so a
    // held pull is woken by any arrival.
    SubscriptionData sql;
    sql.sub_string = "a > 1";
    sql.expression_type = "SQL92";
    EXPECT_TRUE(tag_code_matches(sql, java_string_hash("TagC")));
    EXPECT_FALSE(build_subscription("T", "||", "TAG").is_ok());
}

class RecordingListener : public ConsumerIdsChangeListener {
public:
    void handle(ConsumerGroupEvent event, const std::string& group,
                const std::vector<ClientChannelInfo>& channels) override {
        events.push_back({event, group, channels.size()});
    }
    struct E {
        ConsumerGroupEvent event;
        std::string group;
        size_t channels;
    };
    std::vector<E> events;
};

ClientChannelInfo chan(uint64_t id, std::string client) {
    ClientChannelInfo c;
    c.channel = ChannelId(id);
    c.client_id = std::move(client);
    return c;
}

TEST(ConsumerManager, RegisterNotifyExpire) {
    ManualClock clock;
    RecordingListener listener;
    ConsumerManager m(clock, 120s, &listener);
    auto sub = build_subscription("T", "*", "TAG").value();
    EXPECT_TRUE(m.register_consumer("G", chan(1, "c1"), "CONSUME_PASSIVELY", "CLUSTERING",
                                    "CONSUME_FROM_LAST_OFFSET", {sub}, true));
    // Same heartbeat again: no change.
    EXPECT_FALSE(m.register_consumer("G", chan(1, "c1"), "CONSUME_PASSIVELY", "CLUSTERING",
                                     "CONSUME_FROM_LAST_OFFSET", {sub}, true));
    clock.advance(60s);
    EXPECT_TRUE(m.register_consumer("G", chan(2, "c2"), "CONSUME_PASSIVELY", "CLUSTERING",
                                    "CONSUME_FROM_LAST_OFFSET", {sub}, true));
    EXPECT_EQ(m.group("G")->client_ids(), (std::vector<std::string>{"c1", "c2"}));
    ASSERT_TRUE(m.find_subscription("G", "T").has_value());
    EXPECT_EQ(m.groups_subscribing("T"), (std::vector<std::string>{"G"}));

    size_t changes = 0;
    for (const auto& e : listener.events) {
        changes += e.event == ConsumerGroupEvent::kChange ? 1 : 0;
    }
    EXPECT_EQ(changes, 2u);

    // c1 last beat 61 s+60 s ago -> expires; c2 stays.
    clock.advance(61s);
    EXPECT_EQ(m.scan_not_active_channels(), 1u);
    EXPECT_EQ(m.group("G")->client_ids(), (std::vector<std::string>{"c2"}));
    EXPECT_EQ(listener.events.back().event, ConsumerGroupEvent::kChange);
    EXPECT_EQ(listener.events.back().channels, 1u);

    m.on_channel_closed(ChannelId(2));
    EXPECT_FALSE(m.group("G").has_value());
    EXPECT_EQ(listener.events.back().event, ConsumerGroupEvent::kUnregister);
}

TEST(ProducerManager, RegisterAndExpire) {
    ManualClock clock;
    ProducerManager m(clock, 120s);
    m.register_producer("PG", chan(1, "p1"));
    m.register_producer("PG", chan(2, "p2"));
    EXPECT_EQ(m.channels("PG").size(), 2u);
    clock.advance(100s);
    m.register_producer("PG", chan(2, "p2"));
    clock.advance(30s);
    EXPECT_EQ(m.scan_not_active_channels(), 1u);
    EXPECT_EQ(m.channels("PG").size(), 1u);
    m.unregister_producer("PG", ChannelId(2));
    EXPECT_EQ(m.group_count(), 0u);
}

TEST(RebalanceLockManager, LockRenewExpire) {
    ManualClock clock;
    RebalanceLockManager m(clock, 60s);
    const MessageQueueId q0{"T", "b", 0};
    const MessageQueueId q1{"T", "b", 1};
    EXPECT_EQ(m.try_lock_batch("G", {q0, q1}, "c1").size(), 2u);
    EXPECT_TRUE(m.try_lock_batch("G", {q0, q1}, "c2").empty());
    clock.advance(30s);
    EXPECT_EQ(m.try_lock_batch("G", {q0}, "c1").size(), 1u);  // renew q0 only
    clock.advance(31s);
    // q1 expired (61 s), q0 renewed 31 s ago.
    EXPECT_EQ(m.try_lock_batch("G", {q0, q1}, "c2"), (std::set<MessageQueueId>{q1}));
    EXPECT_TRUE(m.is_locked("G", q0, "c1"));
    m.unlock_batch("G", {q0}, "c2");  // not c2's lock: ignored
    EXPECT_TRUE(m.is_locked("G", q0, "c1"));
    m.unlock_batch("G", {q0}, "c1");
    EXPECT_FALSE(m.is_locked("G", q0, "c1"));
    EXPECT_TRUE(m.group_has_live_locks("G"));
    clock.advance(61s);
    EXPECT_FALSE(m.group_has_live_locks("G"));
}

TEST(PullRequestHoldService, WakesOnArrivalDeadlineAndFilter) {
    ManualClock clock;
    int64_t max = 5;
    PullRequestHoldService s(
        clock, [&](const std::string&, int32_t) { return max; }, 5s);
    int woke_a = 0;
    int woke_b = 0;
    int woke_c = 0;
    s.suspend({"T", 0, 5, clock.now() + 15s, std::nullopt, [&] { ++woke_a; }});
    s.suspend({"T", 0, 5, clock.now() + 15s, build_subscription("T", "TagX", "TAG").value(),
               [&] { ++woke_b; }});
    s.suspend({"T", 1, 0, clock.now() + 15s, std::nullopt, [&] { ++woke_c; }});
    EXPECT_EQ(s.held_count(), 3u);

    // Arrival on queue 0 with a tag that only the first request accepts.
    max = 6;
    s.notify_message_arriving("T", 0, 6, java_string_hash("TagY"));
    EXPECT_EQ(woke_a, 1);
    EXPECT_EQ(woke_b, 0);
    // The lock-free count the store reads to decide whether an append must wake dispatch.
    EXPECT_EQ(s.held_counter()->load(), 2);
    // An arrival that does not pass the offset wakes nobody.
    s.notify_message_arriving("T", 1, 0, std::nullopt);
    EXPECT_EQ(woke_c, 0);
    // Periodic check before the deadline: queue 1 still empty; queue 0 has max 6 > 5 but the
    // tag is unknown there, so the periodic check (no tag) wakes the filtered request too.
    max = 0;
    s.check_all();
    EXPECT_EQ(woke_c, 0);
    clock.advance(16s);
    s.check_all();
    EXPECT_EQ(woke_b, 1);
    EXPECT_EQ(woke_c, 1);
    EXPECT_EQ(s.held_count(), 0u);
    EXPECT_EQ(woke_a, 1);
}

TEST(PullRequestHoldService, ShutdownDropsAndJoins) {
    ManualClock clock;
    PullRequestHoldService s(
        clock, [](const std::string&, int32_t) { return int64_t{0}; }, 1ms);
    s.start();
    s.suspend({"T", 0, 0, clock.now() + 15s, std::nullopt, [] {}});
    s.shutdown();
    EXPECT_EQ(s.held_count(), 0u);
}

}  // namespace
}  // namespace comet::broker
