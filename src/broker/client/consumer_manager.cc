#include "broker/client/consumer_manager.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace comet::broker {
namespace {
std::vector<ClientChannelInfo> channel_list(const ConsumerGroupInfo& g) {
    std::vector<ClientChannelInfo> out;
    out.reserve(g.channels.size());
    for (const auto& [_, c] : g.channels) {
        out.push_back(c);
    }
    return out;
}
}  // namespace

std::vector<std::string> ConsumerGroupInfo::client_ids() const {
    std::vector<std::string> out;
    for (const auto& [_, c] : channels) {
        out.push_back(c.client_id);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

ConsumerManager::ConsumerManager(Clock& clock, Duration channel_expired_timeout,
                                 ConsumerIdsChangeListener* listener)
    : clock_(clock), expiry_(channel_expired_timeout), listener_(listener) {}

bool ConsumerManager::register_consumer(const std::string& group,
                                        const ClientChannelInfo& channel,
                                        const std::string& consume_type,
                                        const std::string& message_model,
                                        const std::string& consume_from_where,
                                        const std::vector<SubscriptionData>& subscriptions,
                                        bool notify) {
    std::vector<Notice> notices;
    bool changed = false;
    {
        MutexLock l(mu_);
        const TimePoint now = clock_.now();
        auto& g = groups_[group];
        g.group_name = group;
        g.consume_type = consume_type;
        g.message_model = message_model;
        g.consume_from_where = consume_from_where;
        g.last_update = now;
        auto it = g.channels.find(channel.channel);
        bool membership_changed = false;
        if (it == g.channels.end()) {
            ClientChannelInfo c = channel;
            c.last_update = now;
            g.channels.emplace(channel.channel, c);
            membership_changed = true;
            spdlog::info("consumer group {}: new client {} (channel {})", group, channel.client_id,
                         channel.channel.value());
        } else {
            if (it->second.client_id != channel.client_id) {
                it->second.client_id = channel.client_id;
                membership_changed = true;
            }
            it->second.last_update = now;
        }
        // Subscriptions: replace by topic; drop topics no longer subscribed.
        std::map<std::string, SubscriptionData> next;
        for (const auto& s : subscriptions) {
            auto old = g.subscriptions.find(s.topic);
            if (old != g.subscriptions.end() && old->second.sub_version > s.sub_version &&
                old->second.sub_string == s.sub_string) {
                next[s.topic] = old->second;
            } else {
                next[s.topic] = s;
            }
        }
        const bool subs_changed = next != g.subscriptions;
        g.subscriptions = std::move(next);
        changed = membership_changed || subs_changed;
        if (membership_changed && notify) {
            notices.push_back({ConsumerGroupEvent::kChange, group, channel_list(g)});
        }
        if (subs_changed) {
            notices.push_back({ConsumerGroupEvent::kRegister, group, channel_list(g)});
        }
    }
    deliver(notices);
    return changed;
}

void ConsumerManager::remove_channel_locked(const std::string& group, ChannelId ch,
                                            std::vector<Notice>* out) {
    auto it = groups_.find(group);
    if (it == groups_.end()) {
        return;
    }
    auto& g = it->second;
    auto c = g.channels.find(ch);
    if (c == g.channels.end()) {
        return;
    }
    spdlog::info("consumer group {}: client {} (channel {}) removed", group, c->second.client_id,
                 ch.value());
    g.channels.erase(c);
    if (g.channels.empty()) {
        groups_.erase(it);
        out->push_back({ConsumerGroupEvent::kUnregister, group, {}});
    } else {
        out->push_back({ConsumerGroupEvent::kChange, group, channel_list(g)});
    }
}

void ConsumerManager::unregister_consumer(const std::string& group, ChannelId channel,
                                          bool notify) {
    std::vector<Notice> notices;
    {
        MutexLock l(mu_);
        remove_channel_locked(group, channel, &notices);
    }
    if (!notify) {
        notices.erase(std::remove_if(notices.begin(), notices.end(),
                                     [](const Notice& n) {
                                         return n.event == ConsumerGroupEvent::kChange;
                                     }),
                      notices.end());
    }
    deliver(notices);
}

void ConsumerManager::on_channel_closed(ChannelId channel) {
    std::vector<Notice> notices;
    {
        MutexLock l(mu_);
        std::vector<std::string> names;
        for (const auto& [name, g] : groups_) {
            if (g.channels.count(channel) != 0) {
                names.push_back(name);
            }
        }
        for (const auto& n : names) {
            remove_channel_locked(n, channel, &notices);
        }
    }
    deliver(notices);
}

size_t ConsumerManager::scan_not_active_channels() {
    std::vector<Notice> notices;
    size_t removed = 0;
    {
        MutexLock l(mu_);
        const TimePoint now = clock_.now();
        std::vector<std::pair<std::string, ChannelId>> expired;
        for (const auto& [name, g] : groups_) {
            for (const auto& [ch, info] : g.channels) {
                if (now - info.last_update > expiry_) {
                    expired.emplace_back(name, ch);
                }
            }
        }
        for (const auto& [name, ch] : expired) {
            spdlog::warn("consumer group {}: channel {} expired (no heartbeat)", name, ch.value());
            remove_channel_locked(name, ch, &notices);
            ++removed;
        }
    }
    deliver(notices);
    return removed;
}

void ConsumerManager::deliver(const std::vector<Notice>& notices) {
    if (listener_ == nullptr) {
        return;
    }
    for (const auto& n : notices) {
        listener_->handle(n.event, n.group, n.channels);
    }
}

std::optional<ConsumerGroupInfo> ConsumerManager::group(const std::string& group) const {
    MutexLock l(mu_);
    auto it = groups_.find(group);
    if (it == groups_.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::optional<SubscriptionData> ConsumerManager::find_subscription(const std::string& group,
                                                                   const std::string& topic) const {
    MutexLock l(mu_);
    auto it = groups_.find(group);
    if (it == groups_.end()) {
        return std::nullopt;
    }
    auto s = it->second.subscriptions.find(topic);
    if (s == it->second.subscriptions.end()) {
        return std::nullopt;
    }
    return s->second;
}

std::vector<std::string> ConsumerManager::groups() const {
    MutexLock l(mu_);
    std::vector<std::string> out;
    for (const auto& [name, _] : groups_) {
        out.push_back(name);
    }
    return out;
}

std::vector<std::string> ConsumerManager::groups_subscribing(const std::string& topic) const {
    MutexLock l(mu_);
    std::vector<std::string> out;
    for (const auto& [name, g] : groups_) {
        if (g.subscriptions.count(topic) != 0) {
            out.push_back(name);
        }
    }
    return out;
}

ProducerManager::ProducerManager(Clock& clock, Duration channel_expired_timeout)
    : clock_(clock), expiry_(channel_expired_timeout) {}

void ProducerManager::register_producer(const std::string& group,
                                        const ClientChannelInfo& channel) {
    MutexLock l(mu_);
    ClientChannelInfo c = channel;
    c.last_update = clock_.now();
    groups_[group][channel.channel] = c;
}

std::optional<ClientChannelInfo> ProducerManager::find_by_client_id(
    const std::string& client_id) const {
    MutexLock l(mu_);
    for (const auto& [group, chans] : groups_) {
        for (const auto& [id, c] : chans) {
            if (c.client_id == client_id) {
                return c;
            }
        }
    }
    return std::nullopt;
}

void ProducerManager::unregister_producer(const std::string& group, ChannelId channel) {
    MutexLock l(mu_);
    auto it = groups_.find(group);
    if (it == groups_.end()) {
        return;
    }
    it->second.erase(channel);
    if (it->second.empty()) {
        groups_.erase(it);
    }
}

void ProducerManager::on_channel_closed(ChannelId channel) {
    MutexLock l(mu_);
    for (auto it = groups_.begin(); it != groups_.end();) {
        it->second.erase(channel);
        it = it->second.empty() ? groups_.erase(it) : std::next(it);
    }
}

size_t ProducerManager::scan_not_active_channels() {
    MutexLock l(mu_);
    const TimePoint now = clock_.now();
    size_t removed = 0;
    for (auto it = groups_.begin(); it != groups_.end();) {
        for (auto c = it->second.begin(); c != it->second.end();) {
            if (now - c->second.last_update > expiry_) {
                spdlog::warn("producer group {}: channel {} expired", it->first,
                             c->first.value());
                c = it->second.erase(c);
                ++removed;
            } else {
                ++c;
            }
        }
        it = it->second.empty() ? groups_.erase(it) : std::next(it);
    }
    return removed;
}

std::vector<ClientChannelInfo> ProducerManager::channels(const std::string& group) const {
    MutexLock l(mu_);
    std::vector<ClientChannelInfo> out;
    auto it = groups_.find(group);
    if (it != groups_.end()) {
        for (const auto& [_, c] : it->second) {
            out.push_back(c);
        }
    }
    return out;
}

size_t ProducerManager::group_count() const {
    MutexLock l(mu_);
    return groups_.size();
}

}  // namespace comet::broker
