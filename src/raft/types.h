#pragma once
// Value types shared by the Raft core, its log storage and its drivers: ids, entries, hard state
// and the peer messages of the protocol (Raft paper §5, thesis §3-§4, §9.6 pre-vote).
// All types are plain values; none of them does I/O.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/strong_id.h"

namespace comet::raft {

using Term = StrongId<int64_t, struct TermTag>;          // Raft term; 0 = before any election
using LogIndex = StrongId<int64_t, struct LogIndexTag>;  // 1-based log position; 0 = empty log
using NodeId = StrongId<int32_t, struct NodeIdTag>;      // voter id; 0 = nobody

inline constexpr NodeId kNoNode{0};

// SharedBytes: an immutable byte range plus a reference that keeps its backing memory alive.
// Lets a LogStorage hand out views into memory it owns (a mapped CommitLog segment, a vector)
// without copying; the view stays valid as long as any copy of it exists.
class SharedBytes {
public:
    SharedBytes() = default;
    SharedBytes(std::shared_ptr<const void> owner, const uint8_t* data, size_t size)
        : owner_(std::move(owner)), data_(data), size_(size) {}

    // Copies `bytes` into a new heap buffer owned by the result.
    static SharedBytes copy_of(std::string_view bytes);

    const uint8_t* data() const { return data_; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    std::string_view view() const { return {reinterpret_cast<const char*>(data_), size_}; }
    const std::shared_ptr<const void>& owner() const { return owner_; }
    // Bytes [offset, offset + n) of this view, sharing its owner. Requires: offset + n <= size().
    SharedBytes slice(size_t offset, size_t n) const { return {owner_, data_ + offset, n}; }

private:
    std::shared_ptr<const void> owner_;
    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
};

enum class EntryType : uint8_t {
    kNormal = 0,  // application payload (DLedger mode: a contiguous range of CommitLog records)
    kNoOp = 1,    // appended by a new leader to commit earlier terms (§5.4.2, §8); empty payload
    // Reserved for membership change (thesis §4): kConfig = 2.
};

struct Entry {
    Term term;
    LogIndex index;
    EntryType type = EntryType::kNormal;
    SharedBytes payload;
};

// What must be durable before the node may vote or acknowledge (Figure 2 "persistent state").
// `commit` is stored opportunistically: losing it only delays re-applying, never safety.
struct HardState {
    Term term;
    NodeId voted_for = kNoNode;
    LogIndex commit;
    bool operator==(const HardState&) const = default;
};

enum class MessageType : uint8_t {
    kPreVote,            // index/log_term = candidate's last entry; term = candidate term + 1
    kPreVoteResponse,    // reject = denied; term = requested term when granted
    kVote,               // RequestVote; transfer = campaign started by TimeoutNow
    kVoteResponse,       // reject = denied
    kAppend,             // AppendEntries: index/log_term = prevLogIndex/prevLogTerm
    kAppendResponse,     // success: index = last matching index; reject: index = rejected prev,
                         // reject_hint = first index of conflict_term (or follower last + 1)
    kHeartbeat,          // commit = min(follower match, leader commit)
    kHeartbeatResponse,  //
    kTimeoutNow,         // leadership transfer: start an election now, skipping pre-vote
    // InstallSnapshot (§7): one chunk of the leader's snapshot, for a follower whose next index
    // is at or below the leader's snapshot. index/log_term = the snapshot's last included
    // index/term; snapshot_offset = where `data` starts; snapshot_size = total bytes;
    // snapshot_done = last chunk. commit = leader commit.
    kInstallSnapshot,
    // Answer to one chunk. reject = the chunk did not follow what the follower holds (resend
    // from snapshot_offset). Accepted: snapshot_offset = bytes held so far; snapshot_done = the
    // snapshot is installed (or already covered), and then commit = what the follower now
    // durably holds matching the leader (its new match index). index = the snapshot's index.
    kInstallSnapshotResponse,
};

std::string_view message_type_name(MessageType t);

// One protocol message. Fields not listed for a type are zero. Entries own (share) their bytes.
struct Message {
    MessageType type = MessageType::kHeartbeat;
    NodeId from;
    NodeId to;
    Term term;
    LogIndex index;
    Term log_term;
    LogIndex commit;
    std::vector<Entry> entries;
    bool reject = false;
    LogIndex reject_hint;
    Term conflict_term;
    bool transfer = false;
    // AppendResponse reject: the follower's log lost entries it had acknowledged (storage
    // corruption found at recovery), so the leader must lower its match (reject_hint = the
    // follower's last index + 1) instead of taking the rejection as stale.
    bool regressed = false;
    // InstallSnapshot / InstallSnapshotResponse only (see MessageType).
    int64_t snapshot_offset = 0;
    int64_t snapshot_size = 0;
    bool snapshot_done = false;
    SharedBytes data;
};

// A state machine snapshot (Raft §7): the driver's encoded state after applying every entry up
// to `index` (whose term is `term`). Opaque to the core; `data` is shared, never copied.
struct Snapshot {
    LogIndex index;  // last included index; 0 = no snapshot
    Term term;       // its term
    SharedBytes data;
};

// One line, for traces: "Append 1->2 t3 idx=5 lt=2 n=3 c=4".
std::string describe(const Message& m);

}  // namespace comet::raft
