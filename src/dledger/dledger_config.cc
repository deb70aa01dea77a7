#include "dledger/dledger_config.h"

#include <charconv>
#include <set>

#include "base/check.h"

namespace comet::dledger {

const DLedgerPeer& DLedgerConfig::self() const {
    const DLedgerPeer* p = find(self_id);
    COMET_CHECK(p != nullptr, "dLegerSelfId {} not among the peers", self_id);
    return *p;
}

const DLedgerPeer* DLedgerConfig::find(const std::string& id) const {
    for (const DLedgerPeer& p : peers) {
        if (p.id == id) {
            return &p;
        }
    }
    return nullptr;
}

const DLedgerPeer* DLedgerConfig::find(raft::NodeId node) const {
    for (const DLedgerPeer& p : peers) {
        if (p.node == node) {
            return &p;
        }
    }
    return nullptr;
}

Result<DLedgerConfig> parse_dledger_config(const std::string& group, const std::string& peers,
                                           const std::string& self_id,
                                           const std::string& preferred_leader_id,
                                           std::vector<std::string>* warnings) {
    DLedgerConfig c;
    c.group = group;
    c.self_id = self_id;
    c.preferred_leader_id = preferred_leader_id;
    if (peers.empty()) {
        return Status::error(Errc::kInvalidArgument,
                             "dLegerPeers is empty (enableDLegerCommitLog=true needs the group, "
                             "e.g. n0-127.0.0.1:40911;n1-127.0.0.1:40912;n2-127.0.0.1:40913)");
    }
    std::set<std::string> ids;
    std::set<std::string> addrs;
    size_t pos = 0;
    while (pos <= peers.size()) {
        size_t semi = peers.find(';', pos);
        if (semi == std::string::npos) {
            semi = peers.size();
        }
        const std::string item = peers.substr(pos, semi - pos);
        pos = semi + 1;
        if (item.empty()) {
            continue;
        }
        const size_t dash = item.find('-');
        const size_t colon = item.rfind(':');
        if (dash == std::string::npos || dash == 0 || colon == std::string::npos ||
            colon < dash + 2 || colon + 1 >= item.size()) {
            return Status::error(Errc::kInvalidArgument,
                                 "dLegerPeers: '{}' is not <id>-<host>:<port>", item);
        }
        DLedgerPeer p;
        p.id = item.substr(0, dash);
        p.host = item.substr(dash + 1, colon - dash - 1);
        int port = 0;
        const char* b = item.data() + colon + 1;
        const char* e = item.data() + item.size();
        auto [ptr, ec] = std::from_chars(b, e, port);
        if (ec != std::errc() || ptr != e || port <= 0 || port > 65535) {
            return Status::error(Errc::kInvalidArgument, "dLegerPeers: bad port in '{}'", item);
        }
        p.port = static_cast<uint16_t>(port);
        p.node = raft::NodeId(static_cast<int32_t>(c.peers.size() + 1));
        size_t digits = p.id.size();
        while (digits > 0 && p.id[digits - 1] >= '0' && p.id[digits - 1] <= '9') {
            --digits;
        }
        p.follower_broker_id = static_cast<int64_t>(c.peers.size() + 1);
        if (digits < p.id.size() && p.id.size() - digits <= 9) {
            p.follower_broker_id = std::stoll(p.id.substr(digits)) + 1;
        }
        if (!ids.insert(p.id).second) {
            return Status::error(Errc::kInvalidArgument, "dLegerPeers: duplicate id {}", p.id);
        }
        if (!addrs.insert(p.addr()).second) {
            return Status::error(Errc::kInvalidArgument, "dLegerPeers: duplicate address {}",
                                 p.addr());
        }
        c.peers.push_back(std::move(p));
    }
    if (c.peers.empty()) {
        return Status::error(Errc::kInvalidArgument, "dLegerPeers lists no peer");
    }
    std::set<int64_t> broker_ids;
    for (const DLedgerPeer& p : c.peers) {
        if (!broker_ids.insert(p.follower_broker_id).second) {
            return Status::error(Errc::kInvalidArgument,
                                 "dLegerPeers: ids {} give the same follower brokerId {}", p.id,
                                 p.follower_broker_id);
        }
    }
    if (self_id.empty()) {
        return Status::error(Errc::kInvalidArgument, "dLegerSelfId is not set (one of the ids in "
                                                     "dLegerPeers)");
    }
    if (c.find(self_id) == nullptr) {
        return Status::error(Errc::kInvalidArgument, "dLegerSelfId {} is not among dLegerPeers {}",
                             self_id, peers);
    }
    if (!preferred_leader_id.empty() && c.find(preferred_leader_id) == nullptr) {
        return Status::error(Errc::kInvalidArgument,
                             "preferredLeaderId {} is not among dLegerPeers {}",
                             preferred_leader_id, peers);
    }
    if (c.peers.size() % 2 == 0 && warnings != nullptr) {
        warnings->push_back(
            "dLegerPeers lists " + std::to_string(c.peers.size()) +
            " peers: an even group tolerates no more failures than one peer fewer");
    }
    return c;
}

}  // namespace comet::dledger
