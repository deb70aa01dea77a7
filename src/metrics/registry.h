#pragma once
// Metrics registry: counters, gauges and histograms with labels, rendered in the Prometheus text
// exposition format (version 0.0.4; docs/metrics.md). Pure: no sockets, no threads.
//
// Owner: one Registry per server process component (BrokerMetrics, the name server, the
// controller); the HTTP endpoint renders it.
// Threads: Counter/Gauge/Histogram updates from any thread, lock-free (relaxed atomics).
// Family::with() locks the family and may allocate (first use of a label set); the hot path
// calls Family::cached() instead, which after the first call for a label set on a thread takes
// no lock and allocates nothing. render() / collect() from any thread; collectors run on the
// rendering thread and must not block for long.
// Invariants: family names are unique in a registry; every child of a family has exactly the
// family's label names; children are never removed, so pointers returned by with()/cached()
// stay valid for the registry's lifetime.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/mutex.h"

namespace comet::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

enum class Type { kCounter, kGauge, kHistogram };
std::string_view type_name(Type t);

// One exposition line: <family name><suffix>{labels} value.
struct Sample {
    std::string suffix;  // "", "_bucket", "_sum", "_count"
    Labels labels;
    double value = 0;
};

// A family as rendered: what collectors produce and what the text writer consumes.
struct FamilySnapshot {
    std::string name;
    std::string help;
    Type type = Type::kGauge;
    std::vector<Sample> samples;
};

// Monotonic count (messages, bytes, requests).
class Counter {
public:
    void inc(uint64_t n = 1) { v_.fetch_add(n, std::memory_order_relaxed); }
    uint64_t value() const { return v_.load(std::memory_order_relaxed); }

private:
    std::atomic<uint64_t> v_{0};
};

// A value that goes up and down (set by the owner, or computed by a collector).
class Gauge {
public:
    void set(double v) { v_.store(v, std::memory_order_relaxed); }
    void add(double d) { v_.fetch_add(d, std::memory_order_relaxed); }
    double value() const { return v_.load(std::memory_order_relaxed); }

private:
    std::atomic<double> v_{0};
};

// Fixed upper bounds (ascending, +Inf implied). observe() is a bucket search over a few bounds
// and two relaxed atomic adds (the count is the buckets' total, read by snapshot()).
class Histogram {
public:
    // Requires: bounds strictly ascending and finite.
    explicit Histogram(std::vector<double> bounds);
    void observe(double v);

    struct Snapshot {
        std::vector<double> bounds;
        std::vector<uint64_t> cumulative;  // per bound, then +Inf (== count)
        uint64_t count = 0;
        double sum = 0;
    };
    Snapshot snapshot() const;

private:
    const std::vector<double> bounds_;
    std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // bounds_.size() + 1 (the +Inf bucket)
    std::atomic<double> sum_{0};
};

// Bucket bounds that RocketMQ 5 uses (BrokerMetricsManager / RemotingMetricsManager views).
std::vector<double> rpc_latency_ms_bounds();   // 1 3 5 10 100 1000 3000 ms
std::vector<double> message_size_bounds();     // 1 KiB 4 KiB 512 KiB 1 MiB 2 MiB 4 MiB
std::vector<double> latency_seconds_bounds();  // 100 µs .. 10 s, for comet_* histograms

class FamilyBase {
public:
    FamilyBase(std::string name, std::string help, Type type, std::vector<std::string> label_names);
    virtual ~FamilyBase() = default;
    const std::string& name() const { return name_; }
    virtual FamilySnapshot snapshot() const = 0;

protected:
    // Joins label values into one map key ('\x1f' between values).
    static void join_key(std::string* out, std::initializer_list<std::string_view> values);
    Labels labels_of(const std::string& key) const;

    const std::string name_;
    const std::string help_;
    const Type type_;
    const std::vector<std::string> label_names_;
    const uint64_t id_;  // process-unique, never reused: keys the per-thread caches
};

// A metric with one child per label value set. M is Counter, Gauge or Histogram.
template <typename M>
class Family final : public FamilyBase {
public:
    using Factory = std::function<std::unique_ptr<M>()>;
    Family(std::string name, std::string help, Type type, std::vector<std::string> label_names,
           Factory factory)
        : FamilyBase(std::move(name), std::move(help), type, std::move(label_names)),
          factory_(std::move(factory)) {}

    // The child for these label values (in label-name order), created on first use. Locks.
    // Requires: values.size() == number of label names.
    M* with(std::initializer_list<std::string_view> values);
    // Same child, through a per-thread cache: no lock and no allocation once this thread has
    // seen the label set. For the hot path.
    M* cached(std::initializer_list<std::string_view> values);

    FamilySnapshot snapshot() const override;

private:
    M* with_key(const std::string& key);

    Factory factory_;
    mutable Mutex mu_;
    std::map<std::string, std::unique_ptr<M>, std::less<>> children_ GUARDED_BY(mu_);
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

class Registry {
public:
    // `const_labels` go on every sample (RocketMQ's cluster / node_type / node_id), first.
    explicit Registry(Labels const_labels = {});
    Registry(const Registry&) = delete;
    Registry& operator=(const Registry&) = delete;

    // Requires: name unique in this registry and a valid metric name; label names valid.
    CounterFamily& counter(std::string name, std::string help,
                           std::vector<std::string> label_names = {});
    GaugeFamily& gauge(std::string name, std::string help,
                       std::vector<std::string> label_names = {});
    HistogramFamily& histogram(std::string name, std::string help,
                               std::vector<std::string> label_names, std::vector<double> bounds);

    // Adds families computed at scrape time (disk usage, consumer lag, replica state). The
    // collector appends complete families; their names must not clash with registered ones.
    using Collector = std::function<void(std::vector<FamilySnapshot>*)>;
    void add_collector(Collector collector);

    // Every family (registered and collected), sorted by name.
    std::vector<FamilySnapshot> collect() const;
    // collect() in the text exposition format, with the const labels on every sample.
    std::string render() const;

private:
    void check_new_name(const std::string& name) const REQUIRES(mu_);

    const Labels const_labels_;
    mutable Mutex mu_;
    std::map<std::string, std::unique_ptr<FamilyBase>> families_ GUARDED_BY(mu_);
    std::vector<Collector> collectors_ GUARDED_BY(mu_);
};

// Text exposition format 0.0.4: "# HELP", "# TYPE", then one line per sample, families in the
// given order. `const_labels` are put first on every sample. Label values and help text are
// escaped (backslash, double quote in values, newline).
std::string write_text(const std::vector<FamilySnapshot>& families,
                       const Labels& const_labels = {});
// The Content-Type of write_text's output.
inline constexpr std::string_view kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

bool valid_metric_name(std::string_view name);
bool valid_label_name(std::string_view name);
// Number formatting of the exposition format: integers without exponent, +Inf, -Inf, NaN.
std::string format_value(double v);

}  // namespace comet::metrics
