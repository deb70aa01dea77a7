#pragma once
// DelayLevels: RocketMQ's messageDelayLevel table ("1s 5s 10s 30s 1m ... 2h"), level n (1-based)
// -> delay in ms. SCHEDULE_TOPIC_XXXX queue id = level - 1. Pure value type; thread-safe to share
// once built.

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "protocol/message_ext.h"

namespace comet::broker {

class DelayLevels {
public:
    // Units s, m, h, d (as ScheduleMessageService.parseDelayLevel). Errors: kInvalidArgument
    // naming the bad item.
    static Result<DelayLevels> parse(std::string_view spec);

    int32_t max_level() const { return static_cast<int32_t>(millis_.size()); }
    // Requires 1 <= level <= max_level().
    int64_t delay_millis(int32_t level) const;
    // Clamps a requested level into [1, max_level()] (levels above the max use the max).
    int32_t clamp(int32_t level) const;

private:
    std::vector<int64_t> millis_;
};

// Rewrites a message with DELAY=n>0 to SCHEDULE_TOPIC_XXXX queue n-1 with REAL_TOPIC/REAL_QID
// (Java HookUtils.handleScheduleMessage). No-op for transaction prepared/rollback messages and
// when DELAY is absent or <= 0. Levels above the max are clamped.
void apply_schedule_topic(const DelayLevels& levels, protocol::MessageExt* msg);

}  // namespace comet::broker
