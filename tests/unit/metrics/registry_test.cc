// Registry, families, the per-thread cache and the text exposition writer.
#include "metrics/registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>
#include <vector>

namespace comet::metrics {
namespace {

TEST(Registry, CounterWithLabelsRendersHelpTypeAndSamples) {
    Registry reg({{"cluster", "c1"}, {"node_type", "broker"}});
    auto& in = reg.counter("rocketmq_messages_in_total", "Messages put.", {"topic"});
    in.with({"TopicA"})->inc(3);
    in.with({"TopicB"})->inc();
    in.with({"TopicA"})->inc(2);
    EXPECT_EQ(reg.render(),
              "# HELP rocketmq_messages_in_total Messages put.\n"
              "# TYPE rocketmq_messages_in_total counter\n"
              "rocketmq_messages_in_total{cluster=\"c1\",node_type=\"broker\",topic=\"TopicA\"} 5\n"
              "rocketmq_messages_in_total{cluster=\"c1\",node_type=\"broker\",topic=\"TopicB\"} 1\n");
}

TEST(Registry, FamiliesAreSortedAndUnlabelledHaveNoBraces) {
    Registry reg;
    reg.gauge("zeta", "Z.").with({})->set(1.5);
    reg.counter("alpha_total", "A.").with({})->inc(7);
    EXPECT_EQ(reg.render(),
              "# HELP alpha_total A.\n# TYPE alpha_total counter\nalpha_total 7\n"
              "# HELP zeta Z.\n# TYPE zeta gauge\nzeta 1.5\n");
}

TEST(Registry, HistogramBucketsAreCumulativeWithInfSumAndCount) {
    Registry reg;
    auto& h = reg.histogram("rpc_latency", "Latency.", {"code"}, {1, 5, 10});
    auto* child = h.with({"10"});
    for (const double v : {0.5, 1.0, 3.0, 7.0, 50.0}) {
        child->observe(v);
    }
    EXPECT_EQ(reg.render(),
              "# HELP rpc_latency Latency.\n# TYPE rpc_latency histogram\n"
              "rpc_latency_bucket{code=\"10\",le=\"1\"} 2\n"
              "rpc_latency_bucket{code=\"10\",le=\"5\"} 3\n"
              "rpc_latency_bucket{code=\"10\",le=\"10\"} 4\n"
              "rpc_latency_bucket{code=\"10\",le=\"+Inf\"} 5\n"
              "rpc_latency_sum{code=\"10\"} 61.5\n"
              "rpc_latency_count{code=\"10\"} 5\n");
}

TEST(Registry, LabelValuesAndHelpAreEscaped) {
    Registry reg;
    reg.gauge("g", "line1\nback\\slash \"q\"", {"v"}).with({"a\"b\\c\nd"})->set(2);
    EXPECT_EQ(reg.render(),
              "# HELP g line1\\nback\\\\slash \"q\"\n# TYPE g gauge\n"
              "g{v=\"a\\\"b\\\\c\\nd\"} 2\n");
}

TEST(Registry, CollectorsAddScrapeTimeFamiliesInNameOrder) {
    Registry reg;
    reg.counter("b_total", "B.").with({})->inc();
    int calls = 0;
    reg.add_collector([&calls](std::vector<FamilySnapshot>* out) {
        ++calls;
        out->push_back(FamilySnapshot{"a_lag", "Lag.", Type::kGauge,
                                      {Sample{"", {{"group", "g1"}}, 42}}});
        out->push_back(FamilySnapshot{"c_up", "Up.", Type::kGauge, {Sample{"", {}, 1}}});
    });
    const auto families = reg.collect();
    ASSERT_EQ(families.size(), 3u);
    EXPECT_EQ(families[0].name, "a_lag");
    EXPECT_EQ(families[1].name, "b_total");
    EXPECT_EQ(families[2].name, "c_up");
    EXPECT_NE(reg.render().find("a_lag{group=\"g1\"} 42\n"), std::string::npos);
    EXPECT_EQ(calls, 2);
}

TEST(Registry, CachedReturnsTheSameChildAsWithOnEveryThread) {
    Registry reg;
    auto& f = reg.counter("x_total", "X.", {"topic", "consumer_group"});
    Counter* a = f.cached({"T", "G"});
    EXPECT_EQ(a, f.with({"T", "G"}));
    EXPECT_EQ(a, f.cached({"T", "G"}));
    EXPECT_NE(a, f.cached({"T", "G2"}));
    // Values that would collide if simply concatenated stay apart.
    EXPECT_NE(f.cached({"TG", ""}), f.cached({"T", "G"}));
    constexpr int kThreads = 4;
    constexpr int kPerThread = 10000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&f] {
            for (int i = 0; i < kPerThread; ++i) {
                f.cached({"T", "G"})->inc();
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    EXPECT_EQ(a->value(), static_cast<uint64_t>(kThreads * kPerThread));
}

TEST(Registry, CachedOfTwoRegistriesDoNotMix) {
    Registry r1;
    Registry r2;
    auto& f1 = r1.counter("same_total", "S.", {"t"});
    auto& f2 = r2.counter("same_total", "S.", {"t"});
    f1.cached({"a"})->inc(1);
    f2.cached({"a"})->inc(5);
    EXPECT_EQ(f1.with({"a"})->value(), 1u);
    EXPECT_EQ(f2.with({"a"})->value(), 5u);
}

TEST(Registry, GaugeAddAndSet) {
    Gauge g;
    g.add(2.5);
    g.add(-1);
    EXPECT_DOUBLE_EQ(g.value(), 1.5);
    g.set(-3);
    EXPECT_DOUBLE_EQ(g.value(), -3);
}

TEST(Format, Values) {
    EXPECT_EQ(format_value(0), "0");
    EXPECT_EQ(format_value(123456789012), "123456789012");
    EXPECT_EQ(format_value(-4), "-4");
    EXPECT_EQ(format_value(0.25), "0.25");
    EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
    EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
    EXPECT_EQ(format_value(std::nan("")), "NaN");
}

TEST(Format, Names) {
    EXPECT_TRUE(valid_metric_name("rocketmq_rpc_latency"));
    EXPECT_TRUE(valid_metric_name("a:b_c1"));
    EXPECT_FALSE(valid_metric_name("1abc"));
    EXPECT_FALSE(valid_metric_name("a-b"));
    EXPECT_FALSE(valid_metric_name(""));
    EXPECT_TRUE(valid_label_name("consumer_group"));
    EXPECT_FALSE(valid_label_name("__reserved"));
    EXPECT_FALSE(valid_label_name("a:b"));
}

TEST(Bounds, RocketMqBucketsAreAscending) {
    for (const auto& b : {rpc_latency_ms_bounds(), message_size_bounds(), latency_seconds_bounds()}) {
        Histogram h(b);  // checks ascending and finite
        h.observe(1e12);
        EXPECT_EQ(h.snapshot().cumulative.back(), 1u);
        EXPECT_EQ(h.snapshot().cumulative[b.size() - 1], 0u);
    }
}

TEST(RegistryDeath, DuplicateNameAborts) {
    Registry reg;
    reg.counter("dup_total", "D.");
    EXPECT_DEATH(reg.gauge("dup_total", "D."), "registered twice");
}

}  // namespace
}  // namespace comet::metrics
