#pragma once
// BrokerContext: the broker's shared components as the request processors see them, plus the
// per-request context and the reply function. BrokerController owns every component; processors
// hold a BrokerContext& and never outlive the controller.
// Threads: processors run on the net layer's executors; every component here is thread-safe.

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "broker/client/consumer_manager.h"
#include "broker/client/rebalance_lock_manager.h"
#include "broker/context/message_store_port.h"
#include "broker/filter/consumer_filter_manager.h"
#include "broker/longpolling/pull_request_hold_service.h"
#include "broker/metadata/broker_config.h"
#include "broker/metadata/consumer_offset_manager.h"
#include "broker/metadata/delay_levels.h"
#include "broker/metadata/subscription_group_manager.h"
#include "broker/metadata/topic_config_manager.h"
#include "net/connection.h"
#include "protocol/remoting_command.h"

namespace comet::broker {

class BrokerMetrics;
class BrokerStatsManager;
class EscapeBridge;
class ScheduleMessageService;
class ReplicationService;
class TransactionalMessageService;

// The live BrokerConfig (UPDATE_BROKER_CONFIG changes it). Thread-safe. Each version is an
// immutable snapshot: the hot path takes a shared_ptr to the current one (no copy of the 25
// strings per message); an update publishes a new snapshot and never changes an old one.
class BrokerConfigHolder {
public:
    explicit BrokerConfigHolder(BrokerConfig c)
        : config_(std::make_shared<const BrokerConfig>(std::move(c))) {}
    // A copy of the current config (admin paths; the send path uses snapshot()).
    BrokerConfig get() const { return *snapshot(); }
    // The current config, shared; it never changes while held.
    std::shared_ptr<const BrokerConfig> snapshot() const {
        MutexLock l(mu_);
        return config_;
    }
    // Applies properties; on error nothing changes.
    Status update(const std::map<std::string, std::string>& props) {
        MutexLock l(mu_);
        BrokerConfig next = *config_;
        COMET_RETURN_IF_ERROR(next.apply(props));
        COMET_RETURN_IF_ERROR(next.validate());
        config_ = std::make_shared<const BrokerConfig>(std::move(next));
        ++version_;
        changed_ms_ = wall_now_ms();
        return Status::ok();
    }
    int64_t version() const {
        MutexLock l(mu_);
        return version_;
    }
    // Wall ms of the last update, or of the holder's creation (4.9.8 DataVersion#timestamp).
    int64_t changed_ms() const {
        MutexLock l(mu_);
        return changed_ms_;
    }

private:
    mutable Mutex mu_;
    std::shared_ptr<const BrokerConfig> config_ GUARDED_BY(mu_);
    int64_t version_ GUARDED_BY(mu_) = 0;
    int64_t changed_ms_ GUARDED_BY(mu_) = wall_now_ms();

    static int64_t wall_now_ms() {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
    }
};

// Counters for GET_BROKER_RUNTIME_INFO (hot paths bump atomics, never log per message).
struct BrokerStats {
    std::atomic<int64_t> put_messages{0};
    std::atomic<int64_t> put_failures{0};
    std::atomic<int64_t> got_messages{0};
    std::atomic<int64_t> pulls_suspended{0};
    std::atomic<int64_t> start_millis{0};
    // Totals recorded at the last two local midnights (4.9.8 BrokerStats#record).
    std::atomic<int64_t> put_today_morning{0};
    std::atomic<int64_t> get_today_morning{0};
    std::atomic<int64_t> put_yesterday_morning{0};
    std::atomic<int64_t> get_yesterday_morning{0};
};

struct BrokerContext {
    BrokerConfigHolder* config = nullptr;
    Clock* clock = nullptr;
    TopicConfigManager* topics = nullptr;
    SubscriptionGroupManager* groups = nullptr;
    ConsumerOffsetManager* offsets = nullptr;
    ConsumerManager* consumers = nullptr;
    ConsumerFilterManager* filters = nullptr;  // SQL92 filters by (topic, group)
    ProducerManager* producers = nullptr;
    RebalanceLockManager* locks = nullptr;
    PullRequestHoldService* holds = nullptr;
    MessageStorePort* store = nullptr;
    // The store for writes the broker makes on a client's behalf outside the send path (stored
    // replies): the ReplicatedStorePort in DLedger and controller modes (majority commit, lease,
    // slave refusal); null = `store` (master-slave mode, tests). See writes().
    MessageStorePort* broker_writes = nullptr;
    ScheduleMessageService* schedule = nullptr;  // may be null (tests)
    // Half messages, END_TRANSACTION, check-back (docs/transactions.md). Null in processor unit
    // tests: a prepared send is then refused with NO_PERMISSION.
    TransactionalMessageService* transactions = nullptr;
    // Master/slave replication (send-path quorum decision, slave refusal, runtime info). Null
    // in processor unit tests: sends then go straight to the store.
    ReplicationService* replication = nullptr;
    // More GET_BROKER_RUNTIME_INFO keys (member group, slave sync, acting master); may be empty.
    std::function<std::map<std::string, std::string>()> extra_runtime_info;
    DelayLevels delay_levels;
    BrokerStats* stats = nullptr;
    BrokerMetrics* metrics = nullptr;  // null: metrics off (tests)
    // VIEW_BROKER_STATS_DATA's windows (null in processor unit tests: items not found).
    BrokerStatsManager* stats_manager = nullptr;
    // Topic table changed: register with the name servers (one-way, soon).
    std::function<void()> on_topics_changed;
    // The group's smallest live brokerId as this broker last learnt it (ActingMasterService;
    // 0 while the master is alive). Unset = 0.
    std::function<int64_t()> min_broker_id_in_group;
    // Acting master (ActingMasterService::is_acting_master) and the bridge that puts its
    // send-back messages on another group's master (enableRemoteEscape). Unset/null: no escape.
    std::function<bool()> is_acting_master;
    EscapeBridge* escape = nullptr;
    // True while this broker serves as its group's master and so runs the master-only services
    // (delayed delivery, transaction check-back): a master, a slave acting as master, a DLedger
    // leader; false on a slave, a deposed peer, a broker without a role yet. RocketMQ 5's
    // brokerActive (BrokerController#isSpecialServiceRunning). Unset: false.
    std::function<bool()> serves_as_master;
    // The live connection of a client channel (null when closed or unknown; unset in tests):
    // admin requests that talk to clients (RESET_CONSUMER_CLIENT_OFFSET, consumer status).
    std::function<net::ConnectionPtr(ChannelId)> find_channel;
    // Runs `task` on the pull executor (long-polling wake-ups); inline in tests.
    std::function<void(std::function<void()>)> run_on_pull_executor;

    MessageStorePort& writes() const { return broker_writes != nullptr ? *broker_writes : *store; }
};

// Who sent a request.
struct RequestContext {
    ChannelId channel;
    std::string remote_address;  // "ip:port"
    protocol::LanguageCode language = protocol::LanguageCode::kJava;
    int32_t version = 0;
};

// Sends the response (once). `extra_body` follows response.body on the wire, uncopied.
using Reply = std::function<void(protocol::RemotingCommand, std::vector<net::SharedBuffer>)>;

// A processor entry point: handles one request and answers through `reply` now or later.
using ProcessFn =
    std::function<void(const RequestContext&, protocol::RemotingCommand, const Reply&)>;

}  // namespace comet::broker
