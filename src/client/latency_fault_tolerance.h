#pragma once
// Broker fault avoidance for the producer (Java LatencyFaultToleranceImpl + MQFaultStrategy).
// After each send the producer reports the broker's latency; a slow or failed broker is marked
// unavailable for a while (the longer the latency, the longer the penalty) and queue selection
// skips it until the penalty ends. Pure logic over an injected Clock.
//
// Owner: DefaultMqProducer. Threads: any; mu_ guards the table (leaf lock).

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"

namespace comet::client {

using std::chrono::milliseconds;

class LatencyFaultTolerance {
public:
    explicit LatencyFaultTolerance(Clock* clock) : clock_(clock) {}

    // The broker stays unavailable for `not_available` from now.
    void update_fault_item(const std::string& broker, milliseconds current_latency,
                           milliseconds not_available);
    bool is_available(const std::string& broker) const;
    void remove(const std::string& broker);
    // Of the brokers with a fault item, the one that looks least bad (available first, then
    // lowest latency, then earliest end of penalty); nullopt when there is none.
    std::optional<std::string> pick_one_at_least() const;
    size_t size() const;

    // MQFaultStrategy's latency -> penalty table: latencyMax {50,100,550,1000,2000,3000,15000}
    // maps to notAvailableDuration {0,0,30s,60s,120s,180s,600s}.
    static milliseconds not_available_duration(milliseconds latency);

private:
    struct FaultItem {
        milliseconds latency{0};
        TimePoint start_time;  // available again from this time
    };
    Clock* const clock_;
    mutable Mutex mu_;
    std::map<std::string, FaultItem> items_ GUARDED_BY(mu_);
};

}  // namespace comet::client
