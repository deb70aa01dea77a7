#pragma once
// ConsumeQueue unit codec and the Java hash codes that the store writes into its files.
// Layout (docs/formats/consumequeue.md, reference §5.8), 20 bytes big-endian:
//   0  int64 CommitLog physical offset
//   8  int32 message size (TOTALSIZE)
//   12 int64 tagsCode (Java String.hashCode of TAGS; delivery time for SCHEDULE_TOPIC_XXXX)
// Pure functions: no I/O, callable from any thread.

#include <cstdint>
#include <string_view>

#include "base/bytes.h"
#include "store/put_message_status.h"

namespace comet::store {

inline constexpr int32_t kCqStoreUnitSize = 20;

struct CqUnit {
    PhysicalOffset phy_offset{0};
    int32_t size = 0;
    int64_t tags_code = 0;

    // RocketMQ treats a unit as valid when offset >= 0 and size > 0 (ConsumeQueue#recover).
    // A zeroed unit (never written) and the blank pre-fill (0, INT32_MAX, 0) are both skipped
    // by readers: the first is the end of data, the second has phy 0 and a huge size.
    bool is_valid() const { return phy_offset.value() >= 0 && size > 0; }
    bool is_blank_fill() const { return phy_offset.value() == 0 && size == INT32_MAX; }
};

inline void encode_cq_unit(const CqUnit& u, uint8_t* out) {
    put_be64(out, static_cast<uint64_t>(u.phy_offset.value()));
    put_be32(out + 8, static_cast<uint32_t>(u.size));
    put_be64(out + 12, static_cast<uint64_t>(u.tags_code));
}

inline CqUnit decode_cq_unit(const uint8_t* p) {
    CqUnit u;
    u.phy_offset = PhysicalOffset(static_cast<int64_t>(get_be64(p)));
    u.size = static_cast<int32_t>(get_be32(p + 8));
    u.tags_code = static_cast<int64_t>(get_be64(p + 12));
    return u;
}

// Java String#hashCode of the string whose UTF-8 bytes are `utf8` (hash over UTF-16 code units,
// int32 wrap-around). Malformed UTF-8 bytes count as U+FFFD, as Java's decoder replaces them.
int32_t java_string_hash_code(std::string_view utf8);

// ConsumeQueue tagsCode for a TAGS property (MessageExtBrokerInner#tagsString2tagsCode):
// empty -> 0, otherwise the hash code sign-extended to 64 bits.
inline int64_t tags_string_to_tags_code(std::string_view tags) {
    return tags.empty() ? 0 : static_cast<int64_t>(java_string_hash_code(tags));
}

}  // namespace comet::store
