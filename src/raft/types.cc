#include "raft/types.h"

#include <fmt/format.h>

#include <cstring>

namespace comet::raft {

SharedBytes SharedBytes::copy_of(std::string_view bytes) {
    if (bytes.empty()) {
        return {};
    }
    auto buffer = std::shared_ptr<uint8_t[]>(new uint8_t[bytes.size()]);
    std::memcpy(buffer.get(), bytes.data(), bytes.size());
    const uint8_t* data = buffer.get();
    return {std::shared_ptr<const void>(buffer, data), data, bytes.size()};
}

std::string_view message_type_name(MessageType t) {
    switch (t) {
        case MessageType::kPreVote:
            return "PreVote";
        case MessageType::kPreVoteResponse:
            return "PreVoteResp";
        case MessageType::kVote:
            return "Vote";
        case MessageType::kVoteResponse:
            return "VoteResp";
        case MessageType::kAppend:
            return "Append";
        case MessageType::kAppendResponse:
            return "AppendResp";
        case MessageType::kHeartbeat:
            return "Heartbeat";
        case MessageType::kHeartbeatResponse:
            return "HeartbeatResp";
        case MessageType::kTimeoutNow:
            return "TimeoutNow";
        case MessageType::kInstallSnapshot:
            return "InstallSnapshot";
        case MessageType::kInstallSnapshotResponse:
            return "InstallSnapshotResp";
    }
    return "Unknown";
}

std::string describe(const Message& m) {
    std::string out = fmt::format("{} {}->{} t{} idx={} lt={} c={}", message_type_name(m.type),
                                  m.from, m.to, m.term, m.index, m.log_term, m.commit);
    if (!m.entries.empty()) {
        out += fmt::format(" n={}[{}..{}]", m.entries.size(), m.entries.front().index,
                           m.entries.back().index);
    }
    if (m.reject) {
        out += fmt::format(" REJECT hint={} ct={}", m.reject_hint, m.conflict_term);
    }
    if (m.type == MessageType::kInstallSnapshot ||
        m.type == MessageType::kInstallSnapshotResponse) {
        out += fmt::format(" snap@{}+{}/{}{}", m.snapshot_offset, m.data.size(), m.snapshot_size,
                           m.snapshot_done ? " done" : "");
    }
    if (m.transfer) {
        out += " transfer";
    }
    return out;
}

}  // namespace comet::raft
