#pragma once
// ChangeHistory: the role and membership changes mqdashboard observed between two polls, kept
// in memory, newest last, at most `capacity` of them (the oldest are dropped). Only what the
// polls saw is recorded: a master that failed and came back between two polls leaves no trace.
// Owner: DashboardService. Threads: not thread-safe; the service calls it under its lock.

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "dashboard/snapshot.h"

namespace comet::dashboard {

struct ChangeEvent {
    int64_t at_ms = 0;
    std::string cluster;
    std::string broker_name;
    std::string addr;  // the member; for kind "master" the new master (may be empty)
    int64_t broker_id = -1;
    // joined, left, down, up, role, dledger, registered, unregistered, master.
    std::string kind;
    std::string from;
    std::string to;
};

// The changes from `prev` to `next`, stamped with next.taken_at_ms, in a stable order (group by
// group, member by member).
std::vector<ChangeEvent> diff_snapshots(const ClusterSnapshot& prev, const ClusterSnapshot& next);

class ChangeHistory {
public:
    explicit ChangeHistory(size_t capacity = 200) : capacity_(capacity) {}

    // Records the changes from the previous observed snapshot to `next`. The first snapshot
    // only sets the baseline.
    void observe(const ClusterSnapshot& next);
    const std::deque<ChangeEvent>& events() const { return events_; }
    // Events dropped because the history was full.
    uint64_t dropped() const { return dropped_; }

private:
    size_t capacity_;
    bool have_prev_ = false;
    ClusterSnapshot prev_;
    std::deque<ChangeEvent> events_;
    uint64_t dropped_ = 0;
};

}  // namespace comet::dashboard
