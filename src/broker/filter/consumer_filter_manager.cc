#include "broker/filter/consumer_filter_manager.h"

#include <spdlog/spdlog.h>

#include <set>

#include "filter/selector_parser.h"

namespace comet::broker {

Result<std::shared_ptr<const filter::Expression>> compile_filter_expression(
    std::string_view expression_type, std::string_view expression) {
    if (expression_type != kExpressionTypeSql92) {
        return Status::error(Errc::kUnsupported, "expression type {} is not supported",
                             expression_type);
    }
    return filter::compile_selector(expression);
}

void ConsumerFilterManager::register_group(const std::string& group,
                                           const std::vector<SubscriptionData>& subs) {
    // Compile outside mu_ what the table does not have yet (new text or type).
    std::map<std::string, Result<std::shared_ptr<const filter::Expression>>> compiled;
    {
        MutexLock l(mu_);
        for (const auto& s : subs) {
            if (is_tag_type(s.expression_type) || s.sub_string.empty()) {
                continue;
            }
            auto it = table_.find(Key(s.topic, group));
            if (it == table_.end() || (s.sub_version > it->second.client_version &&
                                       (it->second.expression != s.sub_string ||
                                        it->second.expression_type != s.expression_type))) {
                compiled.emplace(s.topic, Status::error(Errc::kInternal, "not compiled"));
            }
        }
    }
    for (auto& [topic, result] : compiled) {
        for (const auto& s : subs) {
            if (s.topic == topic) {
                result = compile_filter_expression(s.expression_type, s.sub_string);
            }
        }
    }
    MutexLock l(mu_);
    std::set<std::string> topics;
    for (const auto& s : subs) {
        topics.insert(s.topic);
        if (is_tag_type(s.expression_type) || s.sub_string.empty()) {
            continue;
        }
        const Key key(s.topic, group);
        auto it = table_.find(key);
        const bool same_text = it != table_.end() && it->second.expression == s.sub_string &&
                               it->second.expression_type == s.expression_type;
        if (it != table_.end() && s.sub_version <= it->second.client_version) {
            if (s.sub_version == it->second.client_version && it->second.dead_since) {
                it->second.dead_since.reset();  // Java reAlive
                it->second.dead_time_ms = 0;
            }
            continue;
        }
        if (same_text) {
            it->second.client_version = s.sub_version;
            it->second.dead_since.reset();
            it->second.dead_time_ms = 0;
            continue;
        }
        auto c = compiled.find(s.topic);
        if (c == compiled.end()) {
            continue;  // changed meanwhile by another heartbeat; the next one settles it
        }
        if (!c->second.is_ok()) {
            spdlog::warn("consumer filter of group {} on topic {} does not compile ({}): {}", group,
                         s.topic, s.sub_string, c->second.status().message());
            if (it != table_.end()) {
                table_.erase(it);  // Java: the old one goes, the client reports the error
            }
            continue;
        }
        Entry e;
        e.expression = s.sub_string;
        e.expression_type = s.expression_type;
        e.client_version = s.sub_version;
        e.compiled = c->second.value();
        e.born_time_ms = clock_.wall_millis();
        spdlog::info("consumer filter registered: group {} topic {} version {}: {}", group, s.topic,
                     s.sub_version, s.sub_string);
        table_[key] = std::move(e);
    }
    // Java: filters of topics the group no longer subscribes are made dead.
    for (auto& [key, e] : table_) {
        if (key.second == group && topics.count(key.first) == 0 && !e.dead_since) {
            e.dead_since = clock_.now();
            e.dead_time_ms = clock_.wall_millis();
        }
    }
}

void ConsumerFilterManager::unregister_group(const std::string& group) {
    MutexLock l(mu_);
    for (auto& [key, e] : table_) {
        if (key.second == group && !e.dead_since) {
            e.dead_since = clock_.now();
            e.dead_time_ms = clock_.wall_millis();
        }
    }
}

std::optional<ConsumerFilterLookup> ConsumerFilterManager::get(const std::string& topic,
                                                               const std::string& group) const {
    MutexLock l(mu_);
    auto it = table_.find(Key(topic, group));
    if (it == table_.end()) {
        return std::nullopt;
    }
    return ConsumerFilterLookup{it->second.compiled, it->second.client_version};
}

std::optional<ConsumerFilterInfo> ConsumerFilterManager::describe(const std::string& topic,
                                                                  const std::string& group) const {
    MutexLock l(mu_);
    auto it = table_.find(Key(topic, group));
    if (it == table_.end()) {
        return std::nullopt;
    }
    const Entry& e = it->second;
    return ConsumerFilterInfo{e.expression, e.expression_type, e.client_version, e.born_time_ms,
                              e.dead_time_ms};
}

Result<std::shared_ptr<const filter::Expression>> ConsumerFilterManager::compile(
    std::string_view expression_type, std::string_view expression) {
    const std::string key = std::string(expression_type) + '\n' + std::string(expression);
    {
        MutexLock l(mu_);
        auto it = cache_.find(key);
        if (it != cache_.end()) {
            return it->second;
        }
    }
    auto r = compile_filter_expression(expression_type, expression);
    if (r.is_ok()) {
        MutexLock l(mu_);
        if (cache_.size() >= kMaxCachedCompiles) {
            cache_.clear();  // bounded; the live set is refilled by the next pulls
        }
        cache_.emplace(key, r.value());
    }
    return r;
}

size_t ConsumerFilterManager::clean_expired() {
    MutexLock l(mu_);
    const TimePoint now = clock_.now();
    size_t removed = 0;
    for (auto it = table_.begin(); it != table_.end();) {
        if (it->second.dead_since && now - *it->second.dead_since >= clean_after_) {
            spdlog::info(
                "consumer filter of group {} on topic {} removed: dead since {} s",
                it->first.second, it->first.first,
                std::chrono::duration_cast<std::chrono::seconds>(now - *it->second.dead_since)
                    .count());
            it = table_.erase(it);
            ++removed;
        } else {
            ++it;
        }
    }
    return removed;
}

size_t ConsumerFilterManager::size() const {
    MutexLock l(mu_);
    return table_.size();
}

}  // namespace comet::broker
