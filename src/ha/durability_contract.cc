#include "ha/durability_contract.h"

#include <fmt/format.h>

#include <charconv>

#include "protocol/json_body.h"

namespace comet::ha {
namespace {

std::string master_copy(const DurabilityFacts& f) {
    return f.sync_flush ? "on the master's disk (flushDiskType=SYNC_FLUSH: fsync before the ack)"
                        : "in the master's page cache (flushDiskType=ASYNC_FLUSH: written to "
                          "disk in the background; a power failure of the master machine can "
                          "lose the newest acknowledged messages, a process crash cannot)";
}

std::string bytes(int64_t n) {
    if (n >= 1024 * 1024) {
        return fmt::format("{:.1f} MiB", static_cast<double>(n) / (1024.0 * 1024.0));
    }
    if (n >= 1024) {
        return fmt::format("{:.1f} KiB", static_cast<double>(n) / 1024.0);
    }
    return fmt::format("{} B", n);
}

void add_live_replicas(const DurabilityFacts::Live& live, DurabilityExplanation* e) {
    if (live.replicas.empty()) {
        e->reasons.push_back("no slave is connected now");
    }
    for (const DurabilityFacts::Replica& r : live.replicas) {
        e->reasons.push_back(fmt::format("slave {} (brokerId {}): {}, {} behind", r.addr,
                                         r.broker_id, r.in_sync ? "in sync" : "NOT in sync",
                                         bytes(r.gap_bytes)));
    }
}

// The contract of a SYNC_MASTER under 4.9.8's rules (no quorum key set).
void explain_rocketmq4_wait(const DurabilityFacts& f, DurabilityExplanation* e) {
    const QuorumConfig& q = f.quorum;
    e->contract = fmt::format(
        "a send is acknowledged once the master and one slave hold it: {} and one slave (in the "
        "slave's page cache)",
        master_copy(f));
    e->reasons.push_back(
        "brokerRole=SYNC_MASTER and none of totalReplicas, inSyncReplicas, minInSyncReplicas, "
        "enableAutoInSyncReplicas is set: each send waits for one slave, as in RocketMQ 4.9.8 "
        "(setting any of them selects RocketMQ 5's rules)");
    e->reasons.push_back(fmt::format(
        "no slave connected, or the nearest one haSlaveFallbehindMax={} or more behind: "
        "SLAVE_NOT_AVAILABLE at once; no slave ack within slaveTimeout: FLUSH_SLAVE_TIMEOUT "
        "(either way the message stays stored on the master)",
        bytes(q.ha_slave_fallbehind_max)));
}

// The contract of a SYNC_MASTER under RocketMQ 5's rules with inSyncReplicas > 1.
void explain_rocketmq5_wait(const DurabilityFacts& f, DurabilityExplanation* e) {
    const QuorumConfig& q = f.quorum;
    const std::string keys = fmt::format(
        "totalReplicas={}, inSyncReplicas={}, minInSyncReplicas={}, "
        "enableAutoInSyncReplicas={}, enableSlaveActingMaster={}",
        q.total_replicas, q.in_sync_replicas, q.min_in_sync_replicas,
        q.enable_auto_in_sync_replicas, q.enable_slave_acting_master);
    const int32_t slaves = q.in_sync_replicas - 1;
    e->contract = fmt::format(
        "a send is acknowledged once {} of {} replicas hold it: {} and {} slave{} (in the "
        "slave's page cache)",
        q.in_sync_replicas, q.total_replicas, master_copy(f), slaves, slaves == 1 ? "" : "s");
    e->reasons.push_back(fmt::format("brokerRole=SYNC_MASTER, {}", keys));
    if (q.enable_slave_acting_master && q.enable_auto_in_sync_replicas) {
        e->reasons.push_back(fmt::format(
            "adaptive downgrade: needAckNums falls to the alive in-sync replicas (a slave "
            "is in sync while less than haMaxGapNotInSync={} behind), never below "
            "minInSyncReplicas={}; below that a send fails at once with "
            "IN_SYNC_REPLICAS_NOT_ENOUGH",
            bytes(q.ha_max_gap_not_in_sync), q.min_in_sync_replicas));
    } else if (q.enable_slave_acting_master) {
        e->reasons.push_back(
            fmt::format("enableSlaveActingMaster without enableAutoInSyncReplicas: fewer than "
                        "inSyncReplicas={} alive in-sync replicas fail a send at once with "
                        "IN_SYNC_REPLICAS_NOT_ENOUGH",
                        q.in_sync_replicas));
    } else {
        e->reasons.push_back(
            "no downgrade (enableSlaveActingMaster and enableAutoInSyncReplicas are off): "
            "the ack count is fixed");
    }
    e->reasons.push_back(
        q.slave_not_available_fast_fail
            ? "slaves that do not ack in slaveTimeout: FLUSH_SLAVE_TIMEOUT (the message "
              "stays stored on the master); no slave connected at all: SLAVE_NOT_AVAILABLE "
              "at once"
            : "slaves that do not ack in slaveTimeout: FLUSH_SLAVE_TIMEOUT (the message "
              "stays stored on the master)");
}

void explain_master_slave(const DurabilityFacts& f, DurabilityExplanation* e) {
    const QuorumConfig& q = f.quorum;
    const bool rocketmq4 = q.rules == QuorumRules::kRocketMq4;
    if (q.broker_role == BrokerRole::kSlave || (f.live.has_value() && f.live->is_slave)) {
        e->contract =
            "this broker is a slave: it refuses sends; its master's contract applies "
            "(run explainDurability against the master)";
        e->reasons.push_back("brokerRole=SLAVE");
        return;
    }
    e->quorum_rules = fmt::format("{} ({})", quorum_rules_name(q.rules),
                                  rocketmq4 ? "no quorum key set" : "a quorum key is set");
    const bool waits =
        q.broker_role == BrokerRole::kSyncMaster && (rocketmq4 || q.in_sync_replicas > 1);
    if (waits && rocketmq4) {
        explain_rocketmq4_wait(f, e);
    } else if (!waits) {
        e->contract = fmt::format(
            "a send is acknowledged once it is {}; slaves copy it afterwards (asynchronous "
            "replication): losing the master can lose acknowledged messages no slave has yet",
            master_copy(f));
        e->reasons.push_back(
            q.broker_role == BrokerRole::kAsyncMaster
                ? std::string("brokerRole=ASYNC_MASTER: sends never wait for slaves")
                : fmt::format("brokerRole=SYNC_MASTER with inSyncReplicas={}: the master alone "
                              "is enough (RocketMQ 5 semantics)",
                              q.in_sync_replicas));
    } else {
        explain_rocketmq5_wait(f, e);
    }
    if (f.live.has_value()) {
        const DurabilityFacts::Live& live = *f.live;
        if (waits) {
            e->reasons.push_back(fmt::format(
                "now: needAckNums={}{} (alive replicas {}, in-sync replicas {}, master "
                "counted)",
                live.need_ack_nums,
                live.degraded ? fmt::format(" DEGRADED from inSyncReplicas={}", q.in_sync_replicas)
                              : std::string(),
                live.alive_replicas, live.in_sync_replicas));
            if (live.need_ack_nums > live.in_sync_replicas) {
                e->reasons.push_back(
                    "now: fewer replicas are in sync than a send needs: sends fail or wait "
                    "until slaves catch up");
            }
        }
        add_live_replicas(live, e);
    }
    if (q.broker_role == BrokerRole::kAsyncMaster &&
        (q.in_sync_replicas > 1 || q.min_in_sync_replicas > 1 || q.enable_auto_in_sync_replicas)) {
        e->warnings.push_back(fmt::format(
            "brokerRole=ASYNC_MASTER ignores inSyncReplicas={}, minInSyncReplicas={} and "
            "enableAutoInSyncReplicas={}: an ASYNC_MASTER never waits for slaves (use "
            "brokerRole=SYNC_MASTER for a quorum write)",
            q.in_sync_replicas, q.min_in_sync_replicas, q.enable_auto_in_sync_replicas));
    }
    if (q.broker_role == BrokerRole::kSyncMaster && q.total_replicas == 1 && !rocketmq4) {
        e->warnings.push_back(
            "brokerRole=SYNC_MASTER with totalReplicas=1: the group is declared to have no "
            "slave, so no send waits for one; set totalReplicas to the group's size and "
            "inSyncReplicas to the replicas a send must reach");
    }
}

void explain_dledger(const DurabilityFacts& f, DurabilityExplanation* e) {
    const int32_t n = f.dledger_peers;
    const int32_t majority = n / 2 + 1;
    e->contract = fmt::format(
        "a send is acknowledged once a majority ({} of {} peers, the leader counted) has it {}",
        majority, n,
        f.dledger_sync_before_ack ? "on disk (fsync before each ack and before the leader "
                                    "counts itself)"
                                  : "in its page cache (dLegerSyncBeforeAck=false: a power "
                                    "failure of a majority can lose acknowledged messages)");
    e->reasons.push_back(
        fmt::format("enableDLegerCommitLog=true, {} peers in dLegerPeers, dLegerSyncBeforeAck={}",
                    n, f.dledger_sync_before_ack));
    e->reasons.push_back(
        "no majority within slaveTimeout: FLUSH_SLAVE_TIMEOUT (the outcome is unknown: a new "
        "leader may still commit it); a follower refuses sends");
    if (f.live.has_value()) {
        e->reasons.push_back(
            fmt::format("now: this peer is {}, the leader is {}",
                        f.live->dledger_role.empty() ? "?" : f.live->dledger_role,
                        f.live->dledger_leader.empty() ? "unknown" : f.live->dledger_leader));
    }
    if (n % 2 == 0) {
        e->warnings.push_back(fmt::format(
            "dLegerPeers lists {} peers: an even group tolerates no more failures than {} peers", n,
            n - 1));
    }
}

void explain_controller(const DurabilityFacts& f, DurabilityExplanation* e) {
    const QuorumConfig& q = f.quorum;
    if (f.live.has_value() && f.live->is_slave) {
        e->contract =
            "this broker is a slave in controller mode: it refuses sends; the master "
            "the controller elected has the group's contract";
        return;
    }
    if (f.all_ack_in_sync_state_set) {
        e->contract = fmt::format(
            "a send is acknowledged once every member of the SyncStateSet holds it: {} and "
            "every in-sync slave",
            master_copy(f));
        e->reasons.push_back(fmt::format(
            "enableControllerMode=true, allAckInSyncStateSet=true, minInSyncReplicas={} (a "
            "SyncStateSet smaller than that fails sends with IN_SYNC_REPLICAS_NOT_ENOUGH)",
            q.min_in_sync_replicas));
    } else {
        e->contract = fmt::format(
            "a send is acknowledged once {} replica{} of the SyncStateSet hold{} it ({} "
            "included)",
            q.in_sync_replicas, q.in_sync_replicas == 1 ? "" : "s",
            q.in_sync_replicas == 1 ? "s" : "", master_copy(f));
        e->reasons.push_back(fmt::format(
            "enableControllerMode=true, allAckInSyncStateSet=false, inSyncReplicas={}, "
            "minInSyncReplicas={}, enableAutoInSyncReplicas={}",
            q.in_sync_replicas, q.min_in_sync_replicas, q.enable_auto_in_sync_replicas));
    }
    e->reasons.push_back(
        "a master cut off from the controllers stops acknowledging when its lease ends; "
        "replicas that fall behind leave the SyncStateSet and no longer count");
    if (f.live.has_value()) {
        e->reasons.push_back(fmt::format("now: SyncStateSet {{{}}}, needAckNums={}",
                                         f.live->sync_state_set, f.live->need_ack_nums));
        add_live_replicas(*f.live, e);
    }
}

std::string get(const std::map<std::string, std::string>& m, const std::string& key,
                std::string dflt = "") {
    auto it = m.find(key);
    return it == m.end() ? dflt : it->second;
}

template <typename Int>
Int get_int(const std::map<std::string, std::string>& m, const std::string& key, Int dflt) {
    const std::string v = get(m, key);
    Int out = dflt;
    if (v.empty() || std::from_chars(v.data(), v.data() + v.size(), out).ec != std::errc()) {
        return dflt;
    }
    return out;
}

bool get_bool(const std::map<std::string, std::string>& m, const std::string& key, bool dflt) {
    const std::string v = get(m, key);
    if (v == "true") {
        return true;
    }
    if (v == "false") {
        return false;
    }
    return dflt;
}

QuorumRules quorum_rules_from_properties(const std::map<std::string, std::string>& p) {
    if (auto it = p.find("quorumRules"); it != p.end()) {
        auto rules = parse_quorum_rules(it->second);
        if (rules.is_ok()) {
            return rules.value();
        }
    }
    for (std::string_view key : kQuorumKeys) {
        if (p.contains(std::string(key))) {
            return QuorumRules::kRocketMq5;
        }
    }
    return QuorumRules::kRocketMq4;
}

}  // namespace

DurabilityFacts durability_facts_from_properties(const std::map<std::string, std::string>& p) {
    DurabilityFacts f;
    if (get_bool(p, "enableDLegerCommitLog", false)) {
        f.mode = ReplicationMode::kDLedger;
    } else if (get_bool(p, "enableControllerMode", false)) {
        f.mode = ReplicationMode::kController;
    }
    QuorumConfig& q = f.quorum;
    auto role = parse_broker_role(get(p, "brokerRole", "ASYNC_MASTER"));
    q.broker_role = role.is_ok() ? role.value() : BrokerRole::kAsyncMaster;
    q.total_replicas = get_int<int32_t>(p, "totalReplicas", 1);
    q.in_sync_replicas = get_int<int32_t>(p, "inSyncReplicas", 1);
    q.min_in_sync_replicas = get_int<int32_t>(p, "minInSyncReplicas", 1);
    q.enable_auto_in_sync_replicas = get_bool(p, "enableAutoInSyncReplicas", false);
    q.enable_slave_acting_master = get_bool(p, "enableSlaveActingMaster", false);
    q.rules = quorum_rules_from_properties(p);
    q.ha_max_gap_not_in_sync = get_int<int64_t>(p, "haMaxGapNotInSync", q.ha_max_gap_not_in_sync);
    q.ha_slave_fallbehind_max =
        get_int<int64_t>(p, "haSlaveFallbehindMax", q.ha_slave_fallbehind_max);
    q.slave_not_available_fast_fail = get_bool(p, "slaveNotAvailableFastFail", true);
    f.sync_flush = get(p, "flushDiskType", "ASYNC_FLUSH") == "SYNC_FLUSH";
    const std::string peers = get(p, "dLegerPeers");
    f.dledger_peers = 0;
    size_t start = 0;
    while (start <= peers.size()) {
        size_t end = peers.find(';', start);
        if (end == std::string::npos) {
            end = peers.size();
        }
        if (end > start) {
            ++f.dledger_peers;
        }
        start = end + 1;
    }
    f.dledger_sync_before_ack = get_bool(p, "dLegerSyncBeforeAck", true);
    f.all_ack_in_sync_state_set = get_bool(p, "allAckInSyncStateSet", false);
    return f;
}

void add_runtime_info(const std::map<std::string, std::string>& r, DurabilityFacts* f) {
    DurabilityFacts::Live live;
    if (f->mode == ReplicationMode::kDLedger) {
        live.dledger_role = get(r, "dledgerRole");
        live.dledger_leader = get(r, "dledgerLeaderId");
        live.is_slave = live.dledger_role != "Leader";
    } else {
        live.is_slave = get(r, "haBrokerRole") == "SLAVE";
    }
    live.alive_replicas = get_int<int32_t>(r, "aliveReplicaNums", 1);
    live.in_sync_replicas = get_int<int32_t>(r, "inSyncReplicaNums", 1);
    live.need_ack_nums = get_int<int32_t>(r, "needAckNums", 1);
    live.degraded = get_bool(r, "needAckNumsDegraded", false);
    live.sync_state_set = get(r, "syncStateSet");
    for (int i = 0;; ++i) {
        auto it = r.find("haConnectionInfo." + std::to_string(i));
        if (it == r.end()) {
            break;
        }
        auto doc = protocol::parse_json_body(it->second);
        if (!doc.is_ok() || !doc->IsObject()) {
            continue;
        }
        DurabilityFacts::Replica rep;
        (void)protocol::read_string(*doc, "addr", &rep.addr);
        (void)protocol::read_int64(*doc, "brokerId", &rep.broker_id);
        (void)protocol::read_int64(*doc, "diff", &rep.gap_bytes);
        (void)protocol::read_bool(*doc, "inSync", &rep.in_sync);
        live.replicas.push_back(std::move(rep));
    }
    f->live = std::move(live);
}

DurabilityExplanation explain_durability(const DurabilityFacts& facts) {
    DurabilityExplanation e;
    switch (facts.mode) {
        case ReplicationMode::kMasterSlave:
            explain_master_slave(facts, &e);
            break;
        case ReplicationMode::kDLedger:
            explain_dledger(facts, &e);
            break;
        case ReplicationMode::kController:
            explain_controller(facts, &e);
            break;
    }
    return e;
}

}  // namespace comet::ha
