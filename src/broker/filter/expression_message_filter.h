#pragma once
// ExpressionMessageFilter: the store::MessageFilter of a pull whose subscription is SQL92 (Java
// ExpressionMessageFilter, and ExpressionForRetryMessageFilter when filterSupportRetry is on;
// no bloom filter, so every ConsumeQueue unit passes and the CommitLog record decides).
// A record matches when the compiled selector is TRUE for its properties.
//
// Owner: the pull that built it, on one thread; it reads the shared immutable expression and,
// for retry topics, looks the real topic's filter up in the ConsumerFilterManager.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "broker/filter/consumer_filter_manager.h"
#include "filter/expression.h"
#include "store/get_message_result.h"

namespace comet::broker {

// The properties string (reference §5.3) of a stored record (§5.1); nullopt when the record
// is too short for its own lengths.
std::optional<std::string_view> stored_record_properties(std::string_view record);

// A message's properties as the selector sees them (Java MessageEvaluationContext over
// MessageDecoder.decodeProperties): looked up in the stored string without copying; a later
// duplicate key wins, and an empty value is absent, as Java's string2messageProperties reads.
class PropertiesContext final : public filter::EvaluationContext {
public:
    explicit PropertiesContext(std::string_view properties) : properties_(properties) {}
    std::optional<std::string_view> get(std::string_view name) const override;

private:
    std::string_view properties_;
};

class ExpressionMessageFilter final : public store::MessageFilter {
public:
    // `expression`: the subscription's selector (SQL92). For a retry topic with
    // filterSupportRetry, `retry_filters` is set and `retry_group` names the group: each
    // record is then judged by the group's filter on its RETRY_TOPIC (no filter: it matches).
    ExpressionMessageFilter(std::shared_ptr<const filter::Expression> expression,
                            const ConsumerFilterManager* retry_filters = nullptr,
                            std::string retry_group = "")
        : expression_(std::move(expression)),
          retry_filters_(retry_filters),
          retry_group_(std::move(retry_group)) {}

    bool is_matched_by_consume_queue(std::optional<int64_t>) const override { return true; }
    bool is_matched_by_commit_log(std::string_view record) const override;

private:
    std::shared_ptr<const filter::Expression> expression_;
    const ConsumerFilterManager* retry_filters_;
    std::string retry_group_;
};

}  // namespace comet::broker
