#include "broker/filter/expression_message_filter.h"

#include "base/bytes.h"
#include "protocol/message_decoder.h"
#include "protocol/message_ext.h"

namespace comet::broker {

std::optional<std::string_view> stored_record_properties(std::string_view record) {
    const auto* p = reinterpret_cast<const uint8_t*>(record.data());
    const size_t n = record.size();
    if (n < static_cast<size_t>(protocol::kMsgBornHostPos)) {
        return std::nullopt;
    }
    const auto magic = static_cast<int32_t>(get_be32(p + protocol::kMsgMagicPos));
    const auto sys_flag = static_cast<int32_t>(get_be32(p + protocol::kMsgSysFlagPos));
    size_t pos = static_cast<size_t>(protocol::store_timestamp_position(sys_flag)) + 8;
    pos += (sys_flag & protocol::sysflag::kStoreHostAddressV6) != 0 ? 20 : 8;
    pos += 4 + 8;  // RECONSUMETIMES, PREPAREDTRANSACTIONOFFSET
    if (pos + 4 > n) {
        return std::nullopt;
    }
    pos += 4 + static_cast<size_t>(get_be32(p + pos));  // BODYLEN + body
    size_t topic_len = 0;
    if (magic == protocol::kMessageMagicCodeV2) {
        if (pos + 2 > n) {
            return std::nullopt;
        }
        topic_len = get_be16(p + pos);
        pos += 2;
    } else {
        if (pos + 1 > n) {
            return std::nullopt;
        }
        topic_len = p[pos];
        pos += 1;
    }
    pos += topic_len;
    if (pos + 2 > n) {
        return std::nullopt;
    }
    const size_t props_len = get_be16(p + pos);
    pos += 2;
    if (pos + props_len > n) {
        return std::nullopt;
    }
    return record.substr(pos, props_len);
}

std::optional<std::string_view> PropertiesContext::get(std::string_view name) const {
    std::optional<std::string_view> found;
    size_t start = 0;
    const std::string_view s = properties_;
    while (start < s.size()) {
        size_t end = s.find(protocol::kPropertySeparator, start);
        if (end == std::string_view::npos) {
            end = s.size();
        }
        const std::string_view item = s.substr(start, end - start);
        const size_t sep = item.find(protocol::kNameValueSeparator);
        if (sep != std::string_view::npos && sep > 0 && sep + 1 < item.size() &&
            item.substr(0, sep) == name) {
            found = item.substr(sep + 1);
        }
        start = end + 1;
    }
    return found;
}

bool ExpressionMessageFilter::is_matched_by_commit_log(std::string_view record) const {
    auto props = stored_record_properties(record);
    const PropertiesContext ctx(props.value_or(std::string_view()));
    const filter::Expression* expr = expression_.get();
    std::optional<ConsumerFilterLookup> real;
    if (retry_filters_ != nullptr) {
        auto real_topic = ctx.get(protocol::property::kRetryTopic);
        if (!real_topic) {
            return true;
        }
        real = retry_filters_->get(std::string(*real_topic), retry_group_);
        expr = real ? real->compiled.get() : nullptr;
    }
    if (expr == nullptr) {
        return true;  // no expression: Java lets the message through
    }
    return expr->matches(ctx);
}

}  // namespace comet::broker
