#include "metrics/registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "base/check.h"

namespace comet::metrics {
namespace {

constexpr char kKeySeparator = '\x1f';

std::atomic<uint64_t> g_next_family_id{1};

bool name_char(char c, bool first, bool colon_ok) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
        return true;
    }
    if (colon_ok && c == ':') {
        return true;
    }
    return !first && c >= '0' && c <= '9';
}

void escape_into(std::string* out, std::string_view s, bool quote) {
    for (const char c : s) {
        if (c == '\\') {
            *out += "\\\\";
        } else if (c == '\n') {
            *out += "\\n";
        } else if (quote && c == '"') {
            *out += "\\\"";
        } else {
            *out += c;
        }
    }
}

void write_labels(std::string* out, const Labels& const_labels, const Labels& labels) {
    if (const_labels.empty() && labels.empty()) {
        return;
    }
    *out += '{';
    bool first = true;
    for (const Labels* set : {&const_labels, &labels}) {
        for (const auto& [k, v] : *set) {
            if (!first) {
                *out += ',';
            }
            first = false;
            *out += k;
            *out += "=\"";
            escape_into(out, v, true);
            *out += '"';
        }
    }
    *out += '}';
}

}  // namespace

std::string_view type_name(Type t) {
    switch (t) {
        case Type::kCounter: return "counter";
        case Type::kGauge: return "gauge";
        case Type::kHistogram: return "histogram";
    }
    return "untyped";
}

bool valid_metric_name(std::string_view name) {
    if (name.empty()) {
        return false;
    }
    for (size_t i = 0; i < name.size(); ++i) {
        if (!name_char(name[i], i == 0, true)) {
            return false;
        }
    }
    return true;
}

bool valid_label_name(std::string_view name) {
    if (name.empty() || name.substr(0, 2) == "__") {
        return false;
    }
    for (size_t i = 0; i < name.size(); ++i) {
        if (!name_char(name[i], i == 0, false)) {
            return false;
        }
    }
    return true;
}

std::string format_value(double v) {
    if (std::isnan(v)) {
        return "NaN";
    }
    if (std::isinf(v)) {
        return v > 0 ? "+Inf" : "-Inf";
    }
    if (v == std::floor(v) && std::fabs(v) < 9.007199254740992e15) {
        return fmt::format("{}", static_cast<int64_t>(v));
    }
    return fmt::format("{}", v);  // shortest round-trip form
}

// ---- Histogram ----

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      buckets_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {
    for (size_t i = 0; i < bounds_.size(); ++i) {
        COMET_CHECK(std::isfinite(bounds_[i]), "histogram bound {} is not finite", i);
        COMET_CHECK(i == 0 || bounds_[i - 1] < bounds_[i], "histogram bounds not ascending at {}",
                    i);
    }
}

void Histogram::observe(double v) {
    size_t i = 0;
    while (i < bounds_.size() && v > bounds_[i]) {
        ++i;
    }
    buckets_[i].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(v, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
    Snapshot s;
    s.bounds = bounds_;
    s.cumulative.resize(bounds_.size() + 1);
    uint64_t running = 0;
    for (size_t i = 0; i <= bounds_.size(); ++i) {
        running += buckets_[i].load(std::memory_order_relaxed);
        s.cumulative[i] = running;
    }
    // Read concurrently with observe(): report the bucket total as the count so that the +Inf
    // bucket and _count always agree (the exposition format requires it).
    s.count = running;
    s.sum = sum_.load(std::memory_order_relaxed);
    return s;
}

std::vector<double> rpc_latency_ms_bounds() { return {1, 3, 5, 10, 100, 1000, 3000}; }

std::vector<double> message_size_bounds() {
    return {1024, 4096, 512 * 1024, 1024 * 1024, 2 * 1024 * 1024, 4 * 1024 * 1024};
}

std::vector<double> latency_seconds_bounds() {
    return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
            0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5, 5, 10};
}

// ---- families ----

FamilyBase::FamilyBase(std::string name, std::string help, Type type,
                       std::vector<std::string> label_names)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)),
      id_(g_next_family_id.fetch_add(1, std::memory_order_relaxed)) {
    COMET_CHECK(valid_metric_name(name_), "bad metric name '{}'", name_);
    for (const auto& l : label_names_) {
        COMET_CHECK(valid_label_name(l) && !(type_ == Type::kHistogram && l == "le"),
                    "bad label name '{}' on {}", l, name_);
    }
}

void FamilyBase::join_key(std::string* out, std::initializer_list<std::string_view> values) {
    out->clear();
    bool first = true;
    for (const auto v : values) {
        if (!first) {
            out->push_back(kKeySeparator);
        }
        first = false;
        out->append(v);
    }
}

Labels FamilyBase::labels_of(const std::string& key) const {
    Labels out;
    out.reserve(label_names_.size());
    size_t pos = 0;
    for (size_t i = 0; i < label_names_.size(); ++i) {
        const size_t end = i + 1 == label_names_.size() ? key.size() : key.find(kKeySeparator, pos);
        out.emplace_back(label_names_[i], key.substr(pos, end - pos));
        pos = end + 1;
    }
    return out;
}

template <typename M>
M* Family<M>::with_key(const std::string& key) {
    MutexLock lock(mu_);
    auto it = children_.find(key);
    if (it == children_.end()) {
        it = children_.emplace(key, factory_()).first;
    }
    return it->second.get();
}

template <typename M>
M* Family<M>::with(std::initializer_list<std::string_view> values) {
    COMET_CHECK(values.size() == label_names_.size(), "{}: {} label values for {} names", name_,
                values.size(), label_names_.size());
    std::string key;
    join_key(&key, values);
    return with_key(key);
}

template <typename M>
M* Family<M>::cached(std::initializer_list<std::string_view> values) {
    COMET_CHECK(values.size() == label_names_.size(), "{}: {} label values for {} names", name_,
                values.size(), label_names_.size());
    // One cache per thread and child type, keyed by family id then by the joined label values.
    // The key buffer keeps its capacity, so a hit allocates nothing.
    struct Cache {
        std::string key;
        std::unordered_map<uint64_t, std::unordered_map<std::string, M*>> by_family;
    };
    thread_local Cache cache;
    join_key(&cache.key, values);
    auto& children = cache.by_family[id_];
    if (const auto it = children.find(cache.key); it != children.end()) {
        return it->second;
    }
    M* child = with_key(cache.key);
    children.emplace(cache.key, child);
    return child;
}

namespace {

void add_samples(const Counter& c, Labels labels, std::vector<Sample>* out) {
    out->push_back(Sample{"", std::move(labels), static_cast<double>(c.value())});
}

void add_samples(const Gauge& g, Labels labels, std::vector<Sample>* out) {
    out->push_back(Sample{"", std::move(labels), g.value()});
}

void add_samples(const Histogram& h, const Labels& labels, std::vector<Sample>* out) {
    const Histogram::Snapshot s = h.snapshot();
    for (size_t i = 0; i <= s.bounds.size(); ++i) {
        Labels l = labels;
        l.emplace_back("le", i < s.bounds.size() ? format_value(s.bounds[i]) : "+Inf");
        out->push_back(Sample{"_bucket", std::move(l), static_cast<double>(s.cumulative[i])});
    }
    out->push_back(Sample{"_sum", labels, s.sum});
    out->push_back(Sample{"_count", labels, static_cast<double>(s.count)});
}

}  // namespace

template <typename M>
FamilySnapshot Family<M>::snapshot() const {
    FamilySnapshot out{name_, help_, type_, {}};
    MutexLock lock(mu_);
    for (const auto& [key, child] : children_) {
        add_samples(*child, labels_of(key), &out.samples);
    }
    return out;
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

// ---- Registry ----

Registry::Registry(Labels const_labels) : const_labels_(std::move(const_labels)) {
    for (const auto& [k, v] : const_labels_) {
        COMET_CHECK(valid_label_name(k), "bad const label name '{}'", k);
    }
}

void Registry::check_new_name(const std::string& name) const {
    COMET_CHECK(families_.count(name) == 0, "metric {} registered twice", name);
}

CounterFamily& Registry::counter(std::string name, std::string help,
                                 std::vector<std::string> label_names) {
    MutexLock lock(mu_);
    check_new_name(name);
    auto f = std::make_unique<CounterFamily>(name, std::move(help), Type::kCounter,
                                             std::move(label_names),
                                             [] { return std::make_unique<Counter>(); });
    auto* raw = f.get();
    families_.emplace(std::move(name), std::move(f));
    return *raw;
}

GaugeFamily& Registry::gauge(std::string name, std::string help,
                             std::vector<std::string> label_names) {
    MutexLock lock(mu_);
    check_new_name(name);
    auto f = std::make_unique<GaugeFamily>(name, std::move(help), Type::kGauge,
                                           std::move(label_names),
                                           [] { return std::make_unique<Gauge>(); });
    auto* raw = f.get();
    families_.emplace(std::move(name), std::move(f));
    return *raw;
}

HistogramFamily& Registry::histogram(std::string name, std::string help,
                                     std::vector<std::string> label_names,
                                     std::vector<double> bounds) {
    MutexLock lock(mu_);
    check_new_name(name);
    auto f = std::make_unique<HistogramFamily>(
        name, std::move(help), Type::kHistogram, std::move(label_names),
        [bounds = std::move(bounds)] { return std::make_unique<Histogram>(bounds); });
    auto* raw = f.get();
    families_.emplace(std::move(name), std::move(f));
    return *raw;
}

void Registry::add_collector(Collector collector) {
    MutexLock lock(mu_);
    collectors_.push_back(std::move(collector));
}

std::vector<FamilySnapshot> Registry::collect() const {
    std::vector<FamilySnapshot> out;
    std::vector<Collector> collectors;
    {
        MutexLock lock(mu_);
        for (const auto& [name, family] : families_) {
            out.push_back(family->snapshot());
        }
        collectors = collectors_;
    }
    // Collectors run without the registry lock: they call into other components.
    for (const auto& c : collectors) {
        c(&out);
    }
    std::stable_sort(out.begin(), out.end(), [](const FamilySnapshot& a, const FamilySnapshot& b) {
        return a.name < b.name;
    });
    for (size_t i = 1; i < out.size(); ++i) {
        COMET_CHECK(out[i - 1].name != out[i].name, "metric family {} appears twice",
                    out[i].name);
    }
    return out;
}

std::string Registry::render() const { return write_text(collect(), const_labels_); }

std::string write_text(const std::vector<FamilySnapshot>& families, const Labels& const_labels) {
    std::string out;
    for (const auto& f : families) {
        out += "# HELP ";
        out += f.name;
        out += ' ';
        escape_into(&out, f.help, false);
        out += "\n# TYPE ";
        out += f.name;
        out += ' ';
        out += type_name(f.type);
        out += '\n';
        for (const auto& s : f.samples) {
            out += f.name;
            out += s.suffix;
            write_labels(&out, const_labels, s.labels);
            out += ' ';
            out += format_value(s.value);
            out += '\n';
        }
    }
    return out;
}

}  // namespace comet::metrics
