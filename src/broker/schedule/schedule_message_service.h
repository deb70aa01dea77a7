#pragma once
// ScheduleMessageService: delivers delayed messages (Java ScheduleMessageService). Messages with
// DELAY=n are stored in SCHEDULE_TOPIC_XXXX queue n-1 (see apply_schedule_topic); the
// ConsumeQueue tagsCode of each unit is its delivery time (ms). For each level this service keeps
// the next queue offset to deliver and, once a unit is due, re-puts the message to REAL_TOPIC /
// REAL_QID without DELAY. Progress is persisted in <storeRoot>/config/delayOffset.json
// ({"offsetTable":{"<level>":<offset>}}), so deliveries resume after a restart (a message
// re-put just before a crash may be delivered again: at-least-once, as in RocketMQ).
// The store given is BrokerController's ReplicatedStorePort in DLedger and controller modes, so
// a level's offset moves past a message only once its delivery is committed.
// Threads: deliver_due() from the "ScheduleMessage" thread (or a test); encode()/offset() from
// any thread. mu_ guards the offset table; it is never held across a store call.

#include <condition_variable>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"
#include "broker/context/message_store_port.h"
#include "broker/metadata/config_file.h"
#include "broker/metadata/delay_levels.h"

namespace comet::broker {

class ScheduleMessageService {
public:
    ScheduleMessageService(Clock& clock, MessageStorePort& store, DelayLevels levels,
                           std::string path);
    ~ScheduleMessageService();

    Status load();
    Status persist();
    // Re-puts every due message; returns how many. A failed put stops that level until the next
    // call (the message is retried, never skipped).
    int64_t deliver_due();
    int64_t offset(int32_t level) const;
    // The offset table: each level that has one (loaded or delivered from) and its next offset.
    std::map<int32_t, int64_t> offsets() const;
    std::string encode(bool pretty) const;

    // Acting master (enableSlaveActingMaster + enableRemoteEscape on a slave): due messages go
    // through `deliver` (EscapeBridge: another group's master) instead of the local store, and
    // only while `active()` is true; otherwise nothing is delivered and progress stays put.
    // Set before start(); read-only afterwards.
    using RemoteDeliver = std::function<Status(const protocol::MessageExt&)>;
    void set_remote_delivery(std::function<bool()> active, RemoteDeliver deliver) {
        remote_active_ = std::move(active);
        remote_deliver_ = std::move(deliver);
    }

    // Starts the delivery thread, polling every `tick`, persisting every `persist_every`.
    void start(Duration tick, Duration persist_every);
    void shutdown();

private:
    void run(Duration tick, Duration persist_every);
    // Delivers the due messages of one level from its offset on and records the new offset
    // (under mu_, taken only for that); returns how many. Stops at the first message not due
    // yet or whose delivery failed.
    int64_t deliver_level(const std::string& topic, int32_t level);
    // What one window of a level did: the offset to go on from, deliveries, and whether the
    // level is done for this round (a message not due, a failed delivery, or the queue's end).
    struct Window {
        int64_t next = 0;
        int64_t delivered = 0;
        bool stopped = false;
    };
    // Puts the due messages at queue offsets [from, max) of `level`, up to kDeliverWindow (1 as
    // acting master) at once, waits for every put, and moves on over the leading PUT_OK (and
    // unreadable, skipped) ones only.
    Window deliver_window(const std::string& topic, int32_t level, int64_t from, int64_t max);
    static constexpr size_t kDeliverWindow = 32;
    // Whether a unit whose delivery time (tagsCode) is `deliver_at` is due now.
    bool is_due(int32_t level, int64_t deliver_at) const;
    // The message at `physical_offset` as it goes to its real topic; nullopt (logged) when it
    // cannot be read or lacks REAL_TOPIC / REAL_QID: it is skipped.
    std::optional<protocol::MessageExt> read_due_message(int32_t level, int64_t physical_offset,
                                                         int64_t queue_offset);
    // Acting master: `out` through the remote delivery; PUT_OK, or nullopt (logged) on failure.
    std::optional<store::PutMessageStatus> deliver_remote(int32_t level, int64_t physical_offset,
                                                          const protocol::MessageExt& out);

    Clock& clock_;
    MessageStorePort& store_;
    const DelayLevels levels_;
    ConfigFile file_;
    mutable Mutex mu_;
    std::map<int32_t, int64_t> offsets_ GUARDED_BY(mu_);
    bool stopping_ GUARDED_BY(mu_) = false;
    std::condition_variable_any cv_;
    std::thread thread_;
    std::function<bool()> remote_active_;
    RemoteDeliver remote_deliver_;
};

}  // namespace comet::broker
