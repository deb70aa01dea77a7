#include "broker/delay_levels.h"

#include <charconv>

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

}  // namespace comet::broker
