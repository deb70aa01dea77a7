// ConsumerFilterManager (Java ConsumerFilterManager's register rules: versions, recompiles,
// dead filters) and ExpressionMessageFilter over stored records.
#include "broker/filter/consumer_filter_manager.h"

#include <gtest/gtest.h>

#include "base/clock.h"
#include "broker/filter/expression_message_filter.h"
#include "protocol/message_decoder.h"

namespace comet::broker {
namespace {

using namespace std::chrono_literals;

SubscriptionData sql_sub(const std::string& topic, const std::string& expr, int64_t version) {
    SubscriptionData s;
    s.topic = topic;
    s.sub_string = expr;
    s.expression_type = "SQL92";
    s.sub_version = version;
    return s;
}

TEST(ConsumerFilterManager, RegistersByVersionAndDropsWhatDoesNotCompile) {
    ManualClock clock;
    ConsumerFilterManager m(clock, 1h);
    SubscriptionData tag;
    tag.topic = "Tags";
    m.register_group("G", {sql_sub("T", "a = 1", 10), tag});
    EXPECT_EQ(m.size(), 1u);  // TAG subscriptions have no filter
    auto f = m.get("T", "G");
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->client_version, 10);
    EXPECT_EQ(f->compiled->text(), "a = 1");
    const filter::Expression* first = f->compiled.get();

    // An older or equal version changes nothing, even with another text.
    m.register_group("G", {sql_sub("T", "a = 2", 9)});
    EXPECT_EQ(m.get("T", "G")->compiled->text(), "a = 1");
    // A newer version with the same text keeps the compiled expression, bumps the version.
    m.register_group("G", {sql_sub("T", "a = 1", 11)});
    EXPECT_EQ(m.get("T", "G")->client_version, 11);
    EXPECT_EQ(m.get("T", "G")->compiled.get(), first);
    // A newer version with another text recompiles.
    m.register_group("G", {sql_sub("T", "a = 3", 12)});
    EXPECT_EQ(m.get("T", "G")->compiled->text(), "a = 3");
    // A newer one that does not compile removes the filter.
    m.register_group("G", {sql_sub("T", "a = ", 13)});
    EXPECT_FALSE(m.get("T", "G").has_value());
    m.register_group("G", {sql_sub("T", "a > 1", 14)});
    EXPECT_TRUE(m.get("T", "G").has_value());
    EXPECT_FALSE(m.get("T", "Other").has_value());
    EXPECT_FALSE(m.get("U", "G").has_value());
}

// describe(): what QUERY_CONSUME_QUEUE shows of a filter (ConsumerFilterData's fields).
TEST(ConsumerFilterManager, DescribeShowsBornAndDeadTimes) {
    ManualClock clock(1'700'000'000'000);
    ConsumerFilterManager m(clock, 1h);
    EXPECT_FALSE(m.describe("T", "G").has_value());
    m.register_group("G", {sql_sub("T", "a = 1", 7)});
    auto d = m.describe("T", "G");
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->expression, "a = 1");
    EXPECT_EQ(d->expression_type, "SQL92");
    EXPECT_EQ(d->client_version, 7);
    EXPECT_EQ(d->born_time_ms, 1'700'000'000'000);
    EXPECT_EQ(d->dead_time_ms, 0);
    clock.advance(5s);
    m.unregister_group("G");
    EXPECT_EQ(m.describe("T", "G")->dead_time_ms, 1'700'000'005'000);
    m.register_group("G", {sql_sub("T", "a = 1", 7)});  // alive again
    EXPECT_EQ(m.describe("T", "G")->dead_time_ms, 0);
}

TEST(ConsumerFilterManager, DeadFiltersAreCleanedAfterTheSpan) {
    ManualClock clock;
    ConsumerFilterManager m(clock, 1h);
    m.register_group("G", {sql_sub("T", "a = 1", 1), sql_sub("U", "b = 1", 1)});
    m.register_group("H", {sql_sub("T", "c = 1", 1)});
    // G stops subscribing U: its filter there is dead (still served), then cleaned.
    m.register_group("G", {sql_sub("T", "a = 1", 1)});
    EXPECT_TRUE(m.get("U", "G").has_value());
    clock.advance(30min);
    m.unregister_group("H");  // the group's consumers are gone
    EXPECT_EQ(m.clean_expired(), 0u);
    clock.advance(30min);
    EXPECT_EQ(m.clean_expired(), 1u);  // G on U
    EXPECT_FALSE(m.get("U", "G").has_value());
    // H comes back with the same version before its span ends: alive again.
    m.register_group("H", {sql_sub("T", "c = 1", 1)});
    clock.advance(2h);
    EXPECT_EQ(m.clean_expired(), 0u);
    EXPECT_TRUE(m.get("T", "H").has_value());
    EXPECT_TRUE(m.get("T", "G").has_value());
}

TEST(ConsumerFilterManager, CompileCachesAndRefusesOtherTypes) {
    ManualClock clock;
    ConsumerFilterManager m(clock, 1h);
    auto a = m.compile("SQL92", "x IN ('1')");
    auto b = m.compile("SQL92", "x IN ('1')");
    ASSERT_TRUE(a.is_ok());
    ASSERT_TRUE(b.is_ok());
    EXPECT_EQ(a->get(), b->get());
    auto bad = m.compile("SQL92", "x IN ()");
    ASSERT_FALSE(bad.is_ok());
    EXPECT_EQ(bad.status().message(),
              "Invalid MessageSelector: expected a string literal in the IN list but found ')' at "
              "line 1, column 7");
    auto other = m.compile("CLASS", "x");
    ASSERT_FALSE(other.is_ok());
    EXPECT_EQ(other.status().code(), Errc::kUnsupported);
}

std::string record(const std::string& topic, const std::string& props) {
    protocol::MessageExt msg;
    msg.topic = topic;
    msg.body = "body";
    msg.stored_properties = props;
    std::string rec;
    EXPECT_TRUE(protocol::encode_message(msg, &rec).is_ok());
    return rec;
}

TEST(ExpressionMessageFilter, ReadsTheRecordsProperties) {
    const std::string rec = record("T",
                                   "a\x01"
                                   "5\x02"
                                   "TAGS\x01"
                                   "x\x02"
                                   "a\x01"
                                   "7");
    auto props = stored_record_properties(rec);
    ASSERT_TRUE(props.has_value());
    EXPECT_EQ(*props,
              "a\x01"
              "5\x02"
              "TAGS\x01"
              "x\x02"
              "a\x01"
              "7");
    EXPECT_FALSE(stored_record_properties(std::string_view(rec).substr(0, 30)).has_value());
    const PropertiesContext ctx(*props);
    EXPECT_EQ(ctx.get("a"), "7");  // the later duplicate wins, as in Java's map
    EXPECT_EQ(ctx.get("TAGS"), "x");
    EXPECT_EQ(ctx.get("b"), std::nullopt);

    auto expr = compile_filter_expression("SQL92", "a = 7 AND TAGS = 'x'");
    ASSERT_TRUE(expr.is_ok());
    ExpressionMessageFilter f(expr.value());
    EXPECT_TRUE(f.is_matched_by_consume_queue(12345));
    EXPECT_TRUE(f.is_matched_by_commit_log(rec));
    EXPECT_FALSE(f.is_matched_by_commit_log(record("T",
                                                   "a\x01"
                                                   "5")));
    EXPECT_FALSE(f.is_matched_by_commit_log(record("T", "")));
    // A long topic (magic v2: two-byte topic length).
    EXPECT_TRUE(f.is_matched_by_commit_log(record(std::string(200, 't'),
                                                  "a\x01"
                                                  "7\x02TAGS\x01x")));
}

TEST(ExpressionMessageFilter, RetryMessagesUseTheirTopicsFilter) {
    ManualClock clock;
    ConsumerFilterManager m(clock, 1h);
    m.register_group("G", {sql_sub("T", "a > 1", 1)});
    ExpressionMessageFilter f(nullptr, &m, "G");
    EXPECT_TRUE(f.is_matched_by_commit_log(record("%RETRY%G",
                                                  "a\x01"
                                                  "2\x02RETRY_TOPIC\x01T")));
    EXPECT_FALSE(f.is_matched_by_commit_log(record("%RETRY%G",
                                                   "a\x01"
                                                   "1\x02RETRY_TOPIC\x01T")));
    // No filter for the original topic, or no RETRY_TOPIC: delivered.
    EXPECT_TRUE(f.is_matched_by_commit_log(record("%RETRY%G",
                                                  "a\x01"
                                                  "1\x02RETRY_TOPIC\x01U")));
    EXPECT_TRUE(f.is_matched_by_commit_log(record("%RETRY%G",
                                                  "a\x01"
                                                  "1")));
}

}  // namespace
}  // namespace comet::broker
