#pragma once
// ProgressLog: periodic progress lines for long work (a CommitLog recovery scan, the dispatch
// catch-up at start-up, a slave copying the master's log, truncation): at most one line per
// interval, "<what>: <done> of <total> MiB (<pct>%), <rate> MiB/s, about <eta> s left", so an
// operator watching a slow start-up sees that it moves and when it will end. Short work (done
// before the first interval) prints nothing; finish() prints a closing line only when progress
// lines were printed.
// Thread-safety: one owner thread. The clock is injected (ManualClock in tests).

#include <cstdint>
#include <optional>
#include <string>

#include "base/clock.h"

namespace comet {

class ProgressLog {
public:
    // `total` in bytes, 0 when unknown (no percentage or ETA then). `start` is where `done`
    // starts counting from (e.g. the scan's first offset), so rates use done - start.
    ProgressLog(std::string what, int64_t start, int64_t total, const Clock& clock,
                Duration interval = std::chrono::seconds(2));

    // The line when one is due (it is also logged at info level), else nullopt.
    std::optional<std::string> update(int64_t done);
    // Logs and returns the closing line if any progress line was printed, else nullopt.
    std::optional<std::string> finish(int64_t done);
    // The line for `done` now (no logging): for tools that print it themselves.
    std::string line(int64_t done) const;

private:
    std::string what_;
    int64_t start_;
    int64_t total_;
    const Clock& clock_;
    Duration interval_;
    TimePoint began_;
    TimePoint next_;
    int lines_ = 0;
};

}  // namespace comet
