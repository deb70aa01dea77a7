#include "broker/metadata/delay_levels.h"

#include <charconv>
#include <string>

#include "broker/metadata/topic_config.h"

namespace comet::broker {

Result<DelayLevels> DelayLevels::parse(std::string_view spec) {
    DelayLevels out;
    size_t i = 0;
    while (i < spec.size()) {
        while (i < spec.size() && spec[i] == ' ') {
            ++i;
        }
        if (i >= spec.size()) {
            break;
        }
        size_t j = i;
        while (j < spec.size() && spec[j] != ' ') {
            ++j;
        }
        const std::string_view item = spec.substr(i, j - i);
        i = j;
        const char unit = item.back();
        int64_t mult = 0;
        switch (unit) {
            case 's': mult = 1000; break;
            case 'm': mult = 60 * 1000; break;
            case 'h': mult = 60 * 60 * 1000; break;
            case 'd': mult = 24 * 60 * 60 * 1000; break;
            default:
                return Status::error(Errc::kInvalidArgument,
                                     "messageDelayLevel item '{}' has no unit s/m/h/d", item);
        }
        int64_t n = 0;
        const std::string_view num = item.substr(0, item.size() - 1);
        const auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
        if (ec != std::errc() || p != num.data() + num.size() || n < 0) {
            return Status::error(Errc::kInvalidArgument, "messageDelayLevel item '{}' is not a number",
                                 item);
        }
        out.millis_.push_back(n * mult);
    }
    if (out.millis_.empty()) {
        return Status::error(Errc::kInvalidArgument, "messageDelayLevel '{}' has no levels", spec);
    }
    return out;
}

int64_t DelayLevels::delay_millis(int32_t level) const {
    COMET_CHECK(level >= 1 && level <= max_level(), "delay level {} outside [1, {}]", level,
                max_level());
    return millis_[static_cast<size_t>(level - 1)];
}

int32_t DelayLevels::clamp(int32_t level) const {
    if (level < 1) {
        return 1;
    }
    return level > max_level() ? max_level() : level;
}

void apply_schedule_topic(const DelayLevels& levels, protocol::MessageExt* msg) {
    const int32_t tran = protocol::sysflag::transaction_value(msg->sys_flag);
    if (tran != protocol::sysflag::kTransactionNotType &&
        tran != protocol::sysflag::kTransactionCommitType) {
        return;
    }
    const std::string* d = msg->property(protocol::property::kDelayTimeLevel);
    if (d == nullptr) {
        return;
    }
    int32_t level = 0;
    try {
        level = std::stoi(*d);
    } catch (...) {
        return;
    }
    if (level <= 0 || msg->topic == kScheduleTopic) {
        return;
    }
    level = levels.clamp(level);
    msg->set_property(protocol::property::kDelayTimeLevel, std::to_string(level));
    msg->set_property(protocol::property::kRealTopic, msg->topic);
    msg->set_property(protocol::property::kRealQueueId, std::to_string(msg->queue_id));
    msg->topic.assign(kScheduleTopic);
    msg->queue_id = level - 1;
}

}  // namespace comet::broker
