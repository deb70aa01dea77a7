#include "dledger/dledger_config.h"

#include <set>

#include "base/check.h"
#include "raft/peer_list.h"

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
    COMET_ASSIGN_OR_RETURN(auto parsed, raft::parse_peer_list("dLegerPeers", peers));
    for (raft::PeerAddr& a : parsed) {
        DLedgerPeer p;
        p.id = std::move(a.id);
        p.node = a.node;
        p.host = std::move(a.host);
        p.port = a.port;
        size_t digits = p.id.size();
        while (digits > 0 && p.id[digits - 1] >= '0' && p.id[digits - 1] <= '9') {
            --digits;
        }
        p.follower_broker_id = static_cast<int64_t>(c.peers.size() + 1);
        if (digits < p.id.size() && p.id.size() - digits <= 9) {
            p.follower_broker_id = std::stoll(p.id.substr(digits)) + 1;
        }
        c.peers.push_back(std::move(p));
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
