#include "base/progress_log.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace comet {

ProgressLog::ProgressLog(std::string what, int64_t start, int64_t total, const Clock& clock,
                         Duration interval)
    : what_(std::move(what)),
      start_(start),
      total_(total),
      clock_(clock),
      interval_(interval),
      began_(clock.now()),
      next_(began_ + interval) {}

std::string ProgressLog::line(int64_t done) const {
    constexpr double kMiB = 1024.0 * 1024.0;
    const double secs = std::chrono::duration<double>(clock_.now() - began_).count();
    const double moved = static_cast<double>(done - start_);
    const double rate = secs > 0 ? moved / secs : 0.0;
    if (total_ <= start_) {
        return fmt::format("{}: {:.1f} MiB, {:.1f} MiB/s", what_, moved / kMiB, rate / kMiB);
    }
    const double span = static_cast<double>(total_ - start_);
    const double pct = 100.0 * moved / span;
    std::string out = fmt::format("{}: {:.1f} of {:.1f} MiB ({:.0f}%), {:.1f} MiB/s", what_,
                                  moved / kMiB, span / kMiB, pct, rate / kMiB);
    if (rate > 0 && done < total_) {
        out += fmt::format(", about {:.0f} s left", static_cast<double>(total_ - done) / rate);
    }
    return out;
}

std::optional<std::string> ProgressLog::update(int64_t done) {
    const TimePoint now = clock_.now();
    if (now < next_) {
        return std::nullopt;
    }
    next_ = now + interval_;
    ++lines_;
    std::string l = line(done);
    spdlog::info("{}", l);
    return l;
}

std::optional<std::string> ProgressLog::finish(int64_t done) {
    if (lines_ == 0) {
        return std::nullopt;
    }
    const double secs = std::chrono::duration<double>(clock_.now() - began_).count();
    std::string l = fmt::format("{}: done, {:.1f} MiB in {:.1f} s", what_,
                                static_cast<double>(done - start_) / (1024.0 * 1024.0), secs);
    spdlog::info("{}", l);
    lines_ = 0;
    return l;
}

}  // namespace comet
