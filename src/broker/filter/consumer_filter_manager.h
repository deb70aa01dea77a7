#pragma once
// ConsumerFilterManager: the compiled SQL92 filter of each (topic, consumer group), registered
// from heartbeats (Java ConsumerFilterManager, RocketMQ 4.9.8, without the bloom filter that
// enableCalcFilterBitMap adds and without consumerFilter.json: heartbeats rebuild the table
// after a restart). Also compiles the expressions that pulls carry in their header, through a
// bounded cache keyed by the text (Java SelectorParser's parse cache).
//
// Owner: BrokerController. Threads: register_group / unregister_group from the heartbeat and
// connection-close paths, get / compile from pull threads; mu_ guards both tables. Compiled
// expressions are immutable and shared (shared_ptr), so they are evaluated outside mu_.
// Invariant: every entry holds a compiled expression (a failed compile removes the entry).

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "broker/client/subscription_data.h"
#include "filter/expression.h"

namespace comet::broker {

inline constexpr std::string_view kExpressionTypeSql92 = "SQL92";

// Java FilterFactory.get(type).compile(expression): SQL92 only. Errors: kInvalidArgument with
// the parser's message (position included), kUnsupported for another type.
Result<std::shared_ptr<const filter::Expression>> compile_filter_expression(
    std::string_view expression_type, std::string_view expression);

// What a pull needs of a registered filter (Java ConsumerFilterData).
struct ConsumerFilterLookup {
    std::shared_ptr<const filter::Expression> compiled;
    int64_t client_version = 0;  // the subscription's subVersion
};

// Java ConsumerFilterData as QUERY_CONSUME_QUEUE shows it (without the compiled expression).
struct ConsumerFilterInfo {
    std::string expression;
    std::string expression_type;
    int64_t client_version = 0;
    int64_t born_time_ms = 0;  // wall clock of the registration
    int64_t dead_time_ms = 0;  // 0 while alive
};

class ConsumerFilterManager {
public:
    // `clean_after`: how long a filter stays after its consumers left (filterDataCleanTimeSpan).
    ConsumerFilterManager(Clock& clock, Duration clean_after)
        : clock_(clock), clean_after_(clean_after) {}

    // Java register(group, subList): compiles each non-TAG subscription of a heartbeat whose
    // version is newer (or whose text changed), keeps equal ones, and marks the group's filters
    // for topics it no longer subscribes as dead. A subscription that does not compile removes
    // the group's filter for that topic (its pulls then get FILTER_DATA_NOT_EXIST).
    void register_group(const std::string& group, const std::vector<SubscriptionData>& subs);
    // Java unRegister(group): the group has no consumer left; its filters are marked dead and
    // dropped by clean_expired() once `clean_after` has passed.
    void unregister_group(const std::string& group);
    // The live or dead filter of `group` on `topic`.
    std::optional<ConsumerFilterLookup> get(const std::string& topic,
                                            const std::string& group) const;
    // The registered filter of `group` on `topic`, for display.
    std::optional<ConsumerFilterInfo> describe(const std::string& topic,
                                               const std::string& group) const;
    // Compiles a pull header's expression, reusing an earlier compile of the same text.
    Result<std::shared_ptr<const filter::Expression>> compile(std::string_view expression_type,
                                                              std::string_view expression);
    // Removes filters dead for longer than `clean_after`; returns how many.
    size_t clean_expired();
    size_t size() const;

private:
    struct Entry {
        std::string expression;
        std::string expression_type;
        int64_t client_version = 0;
        std::shared_ptr<const filter::Expression> compiled;
        std::optional<TimePoint> dead_since;
        int64_t born_time_ms = 0;
        int64_t dead_time_ms = 0;
    };
    using Key = std::pair<std::string, std::string>;  // (topic, group)
    static constexpr size_t kMaxCachedCompiles = 256;

    Clock& clock_;
    const Duration clean_after_;
    mutable Mutex mu_;
    std::map<Key, Entry> table_ GUARDED_BY(mu_);
    std::map<std::string, std::shared_ptr<const filter::Expression>, std::less<>> cache_
        GUARDED_BY(mu_);
};

}  // namespace comet::broker
