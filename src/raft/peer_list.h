#pragma once
// The peer list of a Raft group as RocketMQ writes it (dLegerPeers, controllerDLegerPeers):
// "n0-127.0.0.1:40911;n1-127.0.0.1:40912;n2-127.0.0.1:40913". Split on ';' (empty items are
// skipped), id = the text before the first '-', address = the rest, port after the last ':'.
// A peer's NodeId is its position in the list + 1, so every member that reads the same list
// numbers the group the same way.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "raft/types.h"

namespace comet::raft {

struct PeerAddr {
    std::string id;  // "n0"
    NodeId node;     // position + 1
    std::string host;
    uint16_t port = 0;
    std::string addr() const { return host + ":" + std::to_string(port); }
};

// Errors (kInvalidArgument, naming `key`): empty list, an item that is not <id>-<host>:<port>,
// a bad port, a duplicate id or address.
Result<std::vector<PeerAddr>> parse_peer_list(std::string_view key, std::string_view text);

// The peer with that id, or nullptr.
const PeerAddr* find_peer(const std::vector<PeerAddr>& peers, std::string_view id);

}  // namespace comet::raft
