#include "raft/peer_list.h"

#include <charconv>
#include <set>

namespace comet::raft {

Result<std::vector<PeerAddr>> parse_peer_list(std::string_view key, std::string_view text) {
    std::vector<PeerAddr> peers;
    std::set<std::string> ids;
    std::set<std::string> addrs;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t semi = text.find(';', pos);
        if (semi == std::string_view::npos) {
            semi = text.size();
        }
        const std::string_view item = text.substr(pos, semi - pos);
        pos = semi + 1;
        if (item.empty()) {
            continue;
        }
        const size_t dash = item.find('-');
        const size_t colon = item.rfind(':');
        if (dash == std::string_view::npos || dash == 0 || colon == std::string_view::npos ||
            colon < dash + 2 || colon + 1 >= item.size()) {
            return Status::error(Errc::kInvalidArgument, "{}: '{}' is not <id>-<host>:<port>",
                                 key, item);
        }
        PeerAddr p;
        p.id = std::string(item.substr(0, dash));
        p.host = std::string(item.substr(dash + 1, colon - dash - 1));
        int port = 0;
        const char* b = item.data() + colon + 1;
        const char* e = item.data() + item.size();
        auto [ptr, ec] = std::from_chars(b, e, port);
        if (ec != std::errc() || ptr != e || port <= 0 || port > 65535) {
            return Status::error(Errc::kInvalidArgument, "{}: bad port in '{}'", key, item);
        }
        p.port = static_cast<uint16_t>(port);
        p.node = NodeId(static_cast<int32_t>(peers.size() + 1));
        if (!ids.insert(p.id).second) {
            return Status::error(Errc::kInvalidArgument, "{}: duplicate id {}", key, p.id);
        }
        if (!addrs.insert(p.addr()).second) {
            return Status::error(Errc::kInvalidArgument, "{}: duplicate address {}", key,
                                 p.addr());
        }
        peers.push_back(std::move(p));
    }
    if (peers.empty()) {
        return Status::error(Errc::kInvalidArgument, "{} lists no peer", key);
    }
    return peers;
}

const PeerAddr* find_peer(const std::vector<PeerAddr>& peers, std::string_view id) {
    for (const PeerAddr& p : peers) {
        if (p.id == id) {
            return &p;
        }
    }
    return nullptr;
}

}  // namespace comet::raft
