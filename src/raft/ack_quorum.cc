#include "raft/ack_quorum.h"

#include <algorithm>
#include <array>
#include <functional>
#include <vector>

#include "base/check.h"

namespace comet::raft {

int64_t kth_highest(std::span<const int64_t> acked, size_t k) {
    COMET_CHECK(k >= 1 && k <= acked.size(), "kth_highest: k={} with {} values", k, acked.size());
    auto select = [k](auto first, auto last) {
        auto nth = first + static_cast<std::ptrdiff_t>(k - 1);
        std::nth_element(first, nth, last, std::greater<int64_t>());
        return *nth;
    };
    if (acked.size() <= 16) {
        std::array<int64_t, 16> buf{};
        std::copy(acked.begin(), acked.end(), buf.begin());
        return select(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(acked.size()));
    }
    std::vector<int64_t> buf(acked.begin(), acked.end());
    return select(buf.begin(), buf.end());
}

}  // namespace comet::raft
