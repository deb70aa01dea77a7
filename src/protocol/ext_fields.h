#pragma once
// ExtFields: a remoting header's extFields, kept sorted by key in one vector. The order is the
// one the JSON encoder writes (fastjson sorts keys); a lookup is a binary search. Compared with
// a node-based map, a header of N fields costs one allocation instead of N (plus the values
// too long for the small-string buffer): headers are built and dropped for every request.
// The interface is the subset of std::map's the code base uses. References and iterators are
// invalidated by any insertion or erasure (unlike std::map's).

#include <algorithm>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <span>
#include <utility>
#include <vector>

#include "base/check.h"

namespace comet::protocol {

class ExtFields {
public:
    using value_type = std::pair<std::string, std::string>;
    using container_type = std::vector<value_type>;
    using iterator = container_type::iterator;
    using const_iterator = container_type::const_iterator;

    ExtFields() = default;
    // As std::map: a key given twice keeps its first value.
    ExtFields(std::initializer_list<value_type> init) {
        v_.reserve(init.size());
        for (const auto& kv : init) {
            emplace(kv.first, kv.second);
        }
    }

    // From any map of string pairs (a std::map built by a caller, for instance).
    template <typename Map>
        requires(!std::is_same_v<std::remove_cvref_t<Map>, ExtFields> &&
                 requires(const Map& m) {
                     std::string(m.begin()->first);
                     std::string(m.begin()->second);
                 })
    ExtFields(const Map& m) {  // NOLINT(google-explicit-constructor): drop-in for std::map
        for (const auto& [k, v] : m) {
            emplace(std::string(k), std::string(v));
        }
    }

    iterator begin() { return v_.begin(); }
    iterator end() { return v_.end(); }
    const_iterator begin() const { return v_.begin(); }
    const_iterator end() const { return v_.end(); }
    bool empty() const { return v_.empty(); }
    size_t size() const { return v_.size(); }
    void clear() { v_.clear(); }
    void reserve(size_t n) { v_.reserve(n); }

    iterator find(std::string_view key) {
        auto it = lower_bound(key);
        return it != v_.end() && it->first == key ? it : v_.end();
    }
    const_iterator find(std::string_view key) const {
        auto it = lower_bound(key);
        return it != v_.end() && it->first == key ? it : v_.end();
    }
    size_t count(std::string_view key) const { return find(key) != v_.end() ? 1 : 0; }
    bool contains(std::string_view key) const { return find(key) != v_.end(); }

    // Inserts an empty value when the key is absent.
    std::string& operator[](std::string key) {
        auto it = lower_bound(key);
        if (it == v_.end() || it->first != key) {
            it = v_.emplace(it, std::move(key), std::string());
        }
        return it->second;
    }
    std::string& at(std::string_view key) {
        auto it = find(key);
        if (it == v_.end()) {
            throw std::out_of_range("ExtFields::at: no key " + std::string(key));
        }
        return it->second;
    }
    const std::string& at(std::string_view key) const {
        auto it = find(key);
        if (it == v_.end()) {
            throw std::out_of_range("ExtFields::at: no key " + std::string(key));
        }
        return it->second;
    }

    // Inserts when absent; never overwrites (std::map::emplace).
    std::pair<iterator, bool> emplace(std::string key, std::string value) {
        auto it = lower_bound(key);
        if (it != v_.end() && it->first == key) {
            return {it, false};
        }
        return {v_.emplace(it, std::move(key), std::move(value)), true};
    }
    std::pair<iterator, bool> insert_or_assign(std::string key, std::string value) {
        auto it = lower_bound(key);
        if (it != v_.end() && it->first == key) {
            it->second = std::move(value);
            return {it, false};
        }
        return {v_.emplace(it, std::move(key), std::move(value)), true};
    }

    // Replaces the content with `fields`, which must be in key order without duplicates. The
    // entries' strings are assigned in place, so a header rebuilt in the same object allocates
    // nothing once their capacity suffices (the send response, issue 16).
    void assign_sorted(std::span<const std::pair<std::string_view, std::string_view>> fields) {
        v_.resize(fields.size());
        size_t i = 0;
        for (const auto& [k, v] : fields) {
            COMET_CHECK(i == 0 || v_[i - 1].first < k,
                        "ExtFields::assign_sorted: key {} out of order", k);
            // A reused table (a response per send) mostly holds the same keys already.
            if (std::string_view(v_[i].first) != k) {
                v_[i].first.assign(k);
            }
            set_text(v_[i].second, v);
            ++i;
        }
    }
    void assign_sorted(
        std::initializer_list<std::pair<std::string_view, std::string_view>> fields) {
        assign_sorted(std::span(fields.begin(), fields.size()));
    }

    size_t erase(std::string_view key) {
        auto it = find(key);
        if (it == v_.end()) {
            return 0;
        }
        v_.erase(it);
        return 1;
    }
    iterator erase(const_iterator it) { return v_.erase(it); }

    bool operator==(const ExtFields&) const = default;

private:
    // dst = src without std::string::assign's general path when the text fits (issue 16).
    static void set_text(std::string& dst, std::string_view src) {
        const std::less<const char*> before;
        const bool aliases = !src.empty() && !before(src.data(), dst.data()) &&
                             before(src.data(), dst.data() + dst.capacity());
        if (aliases || src.size() > dst.capacity()) {
            dst.assign(src);
            return;
        }
        dst.resize(src.size());
        if (!src.empty()) {
            std::memcpy(dst.data(), src.data(), src.size());
        }
    }
    iterator lower_bound(std::string_view key) {
        return std::lower_bound(v_.begin(), v_.end(), key,
                                [](const value_type& e, std::string_view k) { return e.first < k; });
    }
    const_iterator lower_bound(std::string_view key) const {
        return std::lower_bound(v_.begin(), v_.end(), key,
                                [](const value_type& e, std::string_view k) { return e.first < k; });
    }

    container_type v_;
};

}  // namespace comet::protocol
