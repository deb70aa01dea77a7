#pragma once
// ConsumerManager: live consumers per group (Java ConsumerManager + ConsumerGroupInfo), fed by
// HEART_BEAT, UNREGISTER_CLIENT and connection close; expires channels silent for
// channelExpiredTimeout. Membership changes are reported to a ConsumerIdsChangeListener
// (which sends NOTIFY_CONSUMER_IDS_CHANGED), always after mu_ is released.
// Thread-safety: any thread; mu_ guards the groups.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "broker/client/client_channel.h"
#include "broker/client/subscription_data.h"

namespace comet::broker {

enum class ConsumerGroupEvent { kChange, kUnregister, kRegister };

// Receives membership changes. `channels` = the group's channels after the change.
class ConsumerIdsChangeListener {
public:
    virtual ~ConsumerIdsChangeListener() = default;
    virtual void handle(ConsumerGroupEvent event, const std::string& group,
                        const std::vector<ClientChannelInfo>& channels) = 0;
};

struct ConsumerGroupInfo {
    std::string group_name;
    std::string consume_type = "CONSUME_PASSIVELY";
    std::string message_model = "CLUSTERING";
    std::string consume_from_where = "CONSUME_FROM_LAST_OFFSET";
    std::map<ChannelId, ClientChannelInfo> channels;
    std::map<std::string, SubscriptionData> subscriptions;  // topic -> data
    TimePoint last_update{};

    std::vector<std::string> client_ids() const;
};

class ConsumerManager {
public:
    // `listener` may be null; it must outlive this object.
    ConsumerManager(Clock& clock, Duration channel_expired_timeout,
                    ConsumerIdsChangeListener* listener);

    // Registers or refreshes a consumer. Returns true when the group's membership changed (a
    // new channel) or its subscriptions changed. Notifies the listener on membership change
    // when `notify` is set.
    bool register_consumer(const std::string& group, const ClientChannelInfo& channel,
                           const std::string& consume_type, const std::string& message_model,
                           const std::string& consume_from_where,
                           const std::vector<SubscriptionData>& subscriptions, bool notify);
    void unregister_consumer(const std::string& group, ChannelId channel, bool notify);
    // A connection closed: removes it from every group (notifying each).
    void on_channel_closed(ChannelId channel);
    // Removes channels whose last heartbeat is older than the timeout; returns how many.
    size_t scan_not_active_channels();

    std::optional<ConsumerGroupInfo> group(const std::string& group) const;
    std::optional<SubscriptionData> find_subscription(const std::string& group,
                                                      const std::string& topic) const;
    std::vector<std::string> groups() const;
    // Groups with a subscription to `topic`.
    std::vector<std::string> groups_subscribing(const std::string& topic) const;

private:
    struct Notice {
        ConsumerGroupEvent event;
        std::string group;
        std::vector<ClientChannelInfo> channels;
    };
    void remove_channel_locked(const std::string& group, ChannelId ch, std::vector<Notice>* out)
        REQUIRES(mu_);
    void deliver(const std::vector<Notice>& notices);

    Clock& clock_;
    const Duration expiry_;
    ConsumerIdsChangeListener* const listener_;
    mutable Mutex mu_;
    std::map<std::string, ConsumerGroupInfo> groups_ GUARDED_BY(mu_);
};

// ProducerManager: live producers per group (HEART_BEAT producerDataSet), expiring like
// consumers. Thread-safety: any thread; mu_ guards the table.
class ProducerManager {
public:
    ProducerManager(Clock& clock, Duration channel_expired_timeout);

    void register_producer(const std::string& group, const ClientChannelInfo& channel);
    void unregister_producer(const std::string& group, ChannelId channel);
    void on_channel_closed(ChannelId channel);
    size_t scan_not_active_channels();
    std::vector<ClientChannelInfo> channels(const std::string& group) const;
    // The channel of a producer by its clientId, in any group (Java findChannel; request-reply).
    std::optional<ClientChannelInfo> find_by_client_id(const std::string& client_id) const;
    size_t group_count() const;

private:
    Clock& clock_;
    const Duration expiry_;
    mutable Mutex mu_;
    std::map<std::string, std::map<ChannelId, ClientChannelInfo>> groups_ GUARDED_BY(mu_);
};

}  // namespace comet::broker
