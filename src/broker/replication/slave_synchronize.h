#pragma once
// SlaveSynchronize: a slave copies its master's metadata (RocketMQ SlaveSynchronize#syncAll):
// topic configs (GET_ALL_TOPIC_CONFIG), consumer offsets (GET_ALL_CONSUMER_OFFSET), delay
// offsets (GET_ALL_DELAY_OFFSET) and subscription groups (GET_ALL_SUBSCRIPTIONGROUP_CONFIG).
// Rules (as RocketMQ):
// - topics and subscription groups: replaced (table and DataVersion) and persisted only when the
//   master's DataVersion differs from the local one;
// - consumer offsets: the master's entries overwrite the local ones (Java putAll: a topic@group
//   only the slave knows is kept), then persisted;
// - delay offsets: the master's text is written to delayOffset.json and reloaded.
// The RPC goes through an injected Invoke, so tests need no sockets.
// Threads: sync_all() from one thread at a time (the broker's group-sync thread); master_addr
// is guarded by mu_ (leaf; never held during an RPC).

#include <functional>
#include <string>

#include "base/mutex.h"
#include "base/status.h"
#include "protocol/remoting_command.h"

namespace comet::broker {

class TopicConfigManager;
class ConsumerOffsetManager;
class SubscriptionGroupManager;
class ScheduleMessageService;

class SlaveSynchronize {
public:
    using Invoke = std::function<Result<protocol::RemotingCommand>(const std::string& addr,
                                                                   protocol::RemotingCommand)>;
    struct Tables {
        TopicConfigManager* topics = nullptr;
        ConsumerOffsetManager* offsets = nullptr;
        SubscriptionGroupManager* groups = nullptr;
        ScheduleMessageService* schedule = nullptr;  // may be null: delay offsets skipped
        std::string delay_offset_path;               // <storeRoot>/config/delayOffset.json
    };
    struct Stats {
        int64_t rounds = 0;    // sync_all calls that had a master
        int64_t failures = 0;  // tables that failed
        int64_t topic_replacements = 0;
        int64_t group_replacements = 0;
        std::string last_error;
    };

    SlaveSynchronize(Tables tables, Invoke invoke);

    // Returns true when the address changed ("" = no master: syncing stops).
    bool set_master_addr(const std::string& addr);
    std::string master_addr() const;

    // Syncs every table from the current master; returns the first failure (every table is
    // attempted). OK and nothing done without a master.
    Status sync_all();
    Status sync_topic_config(const std::string& master);
    Status sync_consumer_offset(const std::string& master);
    Status sync_delay_offset(const std::string& master);
    Status sync_subscription_group_config(const std::string& master);

    // The reverse direction, for a master coming back while slaves acted for it (RocketMQ 5
    // BrokerPreOnlineService): every consumer offset `peer` holds above the local one is taken.
    // Returns how many queue offsets moved forward.
    Result<int64_t> take_higher_offsets_from(const std::string& peer);
    // The other way round, for a DLedger peer that was the leader and rejoins as a follower:
    // every local consumer offset above the master's (or unknown to it) is committed on the
    // master with UPDATE_CONSUMER_OFFSET, before the next sync_consumer_offset() overwrites the
    // local table with the master's. Returns how many offsets were handed over; stops at the
    // first refused one.
    Result<int64_t> push_higher_offsets_to(const std::string& master);

    Stats stats() const;

private:
    Result<protocol::RemotingCommand> call(const std::string& master, int32_t code);

    const Tables tables_;
    const Invoke invoke_;
    mutable Mutex mu_;
    std::string master_addr_ GUARDED_BY(mu_);
    Stats stats_ GUARDED_BY(mu_);
};

}  // namespace comet::broker
