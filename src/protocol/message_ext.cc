#include "protocol/message_ext.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>

namespace comet::protocol {

MessageProperties::MessageProperties(const MessageProperties& other)
    : entries_(other.entries_.begin(),
               other.entries_.begin() + static_cast<std::ptrdiff_t>(other.size_)),
      size_(other.size_) {}

MessageProperties& MessageProperties::operator=(const MessageProperties& other) {
    if (this != &other) {
        // Into this object's strings, in order (keys are unique in `other`).
        for (size_t i = 0; i < other.size_; ++i) {
            if (i < entries_.size()) {
                entries_[i].first.assign(other.entries_[i].first);
                entries_[i].second.assign(other.entries_[i].second);
            } else {
                entries_.push_back(other.entries_[i]);
            }
        }
        size_ = other.size_;
    }
    return *this;
}

MessageProperties::MessageProperties(MessageProperties&& other) noexcept
    : entries_(std::move(other.entries_)), size_(other.size_) {
    other.entries_.clear();
    other.size_ = 0;
}

MessageProperties& MessageProperties::operator=(MessageProperties&& other) noexcept {
    if (this != &other) {
        entries_ = std::move(other.entries_);
        size_ = other.size_;
        other.entries_.clear();
        other.size_ = 0;
    }
    return *this;
}

const std::string* MessageProperties::get(std::string_view key) const {
    for (size_t i = 0; i < size_; ++i) {
        if (entries_[i].first == key) {
            return &entries_[i].second;
        }
    }
    return nullptr;
}

void MessageProperties::set(std::string_view key, std::string_view value) {
    for (size_t i = 0; i < size_; ++i) {
        if (entries_[i].first == key) {
            entries_[i].second.assign(value);
            return;
        }
    }
    if (size_ < entries_.size()) {
        entries_[size_].first.assign(key);
        entries_[size_].second.assign(value);
    } else {
        entries_.emplace_back(std::string(key), std::string(value));
    }
    ++size_;
}

bool MessageProperties::erase(std::string_view key) {
    for (size_t i = 0; i < size_; ++i) {
        if (entries_[i].first == key) {
            // The erased entry becomes the first spare; the ones after it move up in order.
            // Rotation swaps strings: no allocation, no capacity lost.
            std::rotate(entries_.begin() + static_cast<std::ptrdiff_t>(i),
                        entries_.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                        entries_.begin() + static_cast<std::ptrdiff_t>(size_));
            --size_;
            return true;
        }
    }
    return false;
}

bool MessageProperties::operator==(const MessageProperties& other) const {
    const auto a = entries();
    const auto b = other.entries();
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

void MessageProperties::assign_from_string(std::string_view s) {
    clear();
    // Room for the entries and the two the broker adds (CLUSTER and a retry's or delay's
    // bookkeeping): one allocation for a fresh object, none for a reused one.
    const size_t want = static_cast<size_t>(std::count(s.begin(), s.end(), kPropertySeparator)) + 3;
    if (entries_.capacity() < want) {
        entries_.reserve(want);
    }
    size_t start = 0;
    while (start < s.size()) {
        size_t end = s.find(kPropertySeparator, start);
        if (end == std::string_view::npos) {
            end = s.size();
        }
        std::string_view item = s.substr(start, end - start);
        size_t sep = item.find(kNameValueSeparator);
        if (sep != std::string_view::npos && sep > 0 && sep + 1 < item.size()) {
            set(item.substr(0, sep), item.substr(sep + 1));
        }
        start = end + 1;
    }
}

void message_properties_to_string(const MessageProperties& props, std::string* out) {
    out->clear();
    size_t n = 0;
    for (const auto& [k, v] : props.entries()) {
        n += k.size() + v.size() + 2;
    }
    out->reserve(n);
    for (const auto& [k, v] : props.entries()) {
        out->append(k);
        out->push_back(kNameValueSeparator);
        out->append(v);
        out->push_back(kPropertySeparator);
    }
    if (!out->empty()) {
        out->pop_back();  // 4.9.x drops the last separator (seen in the captured CommitLog)
    }
}

std::string message_properties_to_string(const MessageProperties& props) {
    std::string out;
    message_properties_to_string(props, &out);
    return out;
}

MessageProperties string_to_message_properties(std::string_view s) {
    MessageProperties props;
    props.assign_from_string(s);
    return props;
}

void MessageExt::clear() {
    // Field by field, the strings and properties keeping their buffers (assigning a default
    // message over this one cost ~750 instructions per send, issue 16). A field added to
    // MessageExt changes its size and stops the build here until it is reset below and
    // swapped in swap(MessageExt&, MessageExt&) too.
    static_assert(sizeof(MessageExt) == 296 || sizeof(void*) != 8,
                  "MessageExt changed: reset the new field in MessageExt::clear()");
    topic.clear();
    flag = 0;
    properties.clear();
    stored_properties.reset();
    body.clear();
    store_size = 0;
    body_crc = 0;
    queue_id = 0;
    queue_offset = 0;
    commit_log_offset = 0;
    sys_flag = 0;
    born_timestamp = 0;
    born_host = HostAddress{};
    store_timestamp = 0;
    store_host = HostAddress{};
    reconsume_times = 0;
    prepared_transaction_offset = 0;
    msg_id.clear();
}

void swap(MessageExt& a, MessageExt& b) noexcept {
    // Every member, as clear() resets every member (its size check guards both).
    using std::swap;
    swap(a.topic, b.topic);
    swap(a.flag, b.flag);
    swap(a.properties, b.properties);
    swap(a.stored_properties, b.stored_properties);
    swap(a.body, b.body);
    swap(a.store_size, b.store_size);
    swap(a.body_crc, b.body_crc);
    swap(a.queue_id, b.queue_id);
    swap(a.queue_offset, b.queue_offset);
    swap(a.commit_log_offset, b.commit_log_offset);
    swap(a.sys_flag, b.sys_flag);
    swap(a.born_timestamp, b.born_timestamp);
    swap(a.born_host, b.born_host);
    swap(a.store_timestamp, b.store_timestamp);
    swap(a.store_host, b.store_host);
    swap(a.reconsume_times, b.reconsume_times);
    swap(a.prepared_transaction_offset, b.prepared_transaction_offset);
    swap(a.msg_id, b.msg_id);
}

HostAddress HostAddress::ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, int32_t port) {
    HostAddress h;
    h.ip[0] = a;
    h.ip[1] = b;
    h.ip[2] = c;
    h.ip[3] = d;
    h.port = port;
    return h;
}

std::string HostAddress::to_string() const {
    char buf[INET6_ADDRSTRLEN] = {};
    if (v6) {
        ::inet_ntop(AF_INET6, ip.data(), buf, sizeof(buf));
        return fmt::format("[{}]:{}", buf, port);
    }
    ::inet_ntop(AF_INET, ip.data(), buf, sizeof(buf));
    return fmt::format("{}:{}", buf, port);
}

Result<HostAddress> parse_host_address(std::string_view text) {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon + 1 >= text.size()) {
        return Status::error(Errc::kInvalidArgument, "host address '{}' has no port", text);
    }
    std::string_view host = text.substr(0, colon);
    std::string_view port_s = text.substr(colon + 1);
    int port = 0;
    auto [p, ec] = std::from_chars(port_s.data(), port_s.data() + port_s.size(), port);
    if (ec != std::errc() || p != port_s.data() + port_s.size() || port < 0 || port > 65535) {
        return Status::error(Errc::kInvalidArgument, "host address '{}' has a bad port", text);
    }
    HostAddress h;
    h.port = port;
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        std::string h6(host.substr(1, host.size() - 2));
        if (::inet_pton(AF_INET6, h6.c_str(), h.ip.data()) != 1) {
            return Status::error(Errc::kInvalidArgument, "bad IPv6 address in '{}'", text);
        }
        h.v6 = true;
        return h;
    }
    std::string h4(host);
    if (::inet_pton(AF_INET, h4.c_str(), h.ip.data()) != 1) {
        return Status::error(Errc::kInvalidArgument, "bad IPv4 address in '{}'", text);
    }
    return h;
}

void MessageExt::set_property(std::string_view key, std::string_view value) {
    properties.set(key, value);
    stored_properties.reset();
}

bool MessageExt::erase_property(std::string_view key) {
    stored_properties.reset();
    return properties.erase(key);
}

std::string MessageExt::properties_string() const {
    return stored_properties ? *stored_properties : message_properties_to_string(properties);
}

std::string MessageExt::tags() const {
    const std::string* v = properties.get(property::kTags);
    return v != nullptr ? *v : std::string();
}

std::string MessageExt::keys() const {
    const std::string* v = properties.get(property::kKeys);
    return v != nullptr ? *v : std::string();
}

std::string MessageExt::unique_id() const {
    const std::string* v = properties.get(property::kUniqClientMessageIdKeyIdx);
    return v != nullptr ? *v : msg_id;
}

bool MessageExt::wait_store_msg_ok() const {
    const std::string* v = properties.get(property::kWaitStoreMsgOk);
    if (v == nullptr) {
        return true;
    }
    // Java Boolean.parseBoolean: only "true" in any case is true.
    return v->size() == 4 && (((*v)[0] | 0x20) == 't') && (((*v)[1] | 0x20) == 'r') &&
           (((*v)[2] | 0x20) == 'u') && (((*v)[3] | 0x20) == 'e');
}

}  // namespace comet::protocol
