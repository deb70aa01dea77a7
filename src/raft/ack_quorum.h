#pragma once
// Ack counting shared by the Raft commit rule and the HA GroupTransfer: given what each replica
// has acknowledged (a log index, a CommitLog offset), the highest position that at least k of
// them have reached. QuorumPolicy (ha) or the voter count (raft) decides k. Pure function.

#include <cstddef>
#include <cstdint>
#include <span>

namespace comet::raft {

// The k-th highest value of `acked` (k = 1 is the maximum): the largest v such that at least k
// values are >= v. Requires 1 <= k <= acked.size(). O(n) time, no allocation for n <= 16.
int64_t kth_highest(std::span<const int64_t> acked, size_t k);

// Majority size for `voters` voters (2 of 3, 3 of 5). Requires voters >= 1.
constexpr size_t majority(size_t voters) { return voters / 2 + 1; }

}  // namespace comet::raft
