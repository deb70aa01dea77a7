#include "dashboard/collector.h"

#include <algorithm>
#include <cstdlib>
#include <future>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>

#include "ha/durability_contract.h"
#include "protocol/json_body.h"

namespace comet::dashboard {

namespace {

std::string get(const KvMap& kv, const std::string& key) {
    auto it = kv.find(key);
    return it == kv.end() ? std::string() : it->second;
}

std::optional<int64_t> get_int(const KvMap& kv, const std::string& key) {
    auto it = kv.find(key);
    if (it == kv.end() || it->second.empty()) {
        return std::nullopt;
    }
    char* end = nullptr;
    const long long v = std::strtoll(it->second.c_str(), &end, 10);
    if (end == it->second.c_str()) {
        return std::nullopt;
    }
    return static_cast<int64_t>(v);
}

// First figure of a "10s 1min 10min" TPS triple.
double first_number(const KvMap& kv, const std::string& key) {
    auto it = kv.find(key);
    return it == kv.end() ? 0.0 : std::strtod(it->second.c_str(), nullptr);
}

GroupMode mode_of(const KvMap& kv) {
    if (kv.count("dledgerRole") != 0) {
        return GroupMode::kDLedger;
    }
    if (kv.count("controllerMaster") != 0) {
        return GroupMode::kController;
    }
    return GroupMode::kMasterSlave;
}

// What the broker says it is right now.
std::string role_from_runtime(const KvMap& kv) {
    const std::string dledger = get(kv, "dledgerRole");
    if (!dledger.empty()) {
        return dledger == "Leader" ? "MASTER" : "SLAVE";
    }
    std::string r = get(kv, "haBrokerRole");
    if (r.empty()) {
        r = get(kv, "brokerRole");
    }
    return r == "SLAVE" ? "SLAVE" : "MASTER";
}

void fill_from_runtime(const KvMap& kv, MemberView* m) {
    m->broker_role = get(kv, "brokerRole");
    m->dledger_role = get(kv, "dledgerRole");
    m->dledger_id = get(kv, "dledgerSelfId");
    m->version = get(kv, "brokerVersionDesc");
    m->put_tps = first_number(kv, "putTps");
    m->get_tps = first_number(kv, "getTransferedTps");
    m->role = role_from_runtime(kv);
    if (auto v = get_int(kv, "masterCommitLogMaxOffset")) {
        m->max_offset = *v;
    } else if (auto c = get_int(kv, "haClientMaxOffset")) {
        m->max_offset = *c;
    } else if (auto d = get_int(kv, "dledgerCommittedOffset")) {
        m->max_offset = *d;
    }
}

struct HaConnection {
    int64_t diff = 0;
    bool in_sync = false;
};

// haConnectionInfo.N of a master, by the slave's brokerId.
std::map<int64_t, HaConnection> ha_connections(const KvMap& kv) {
    std::map<int64_t, HaConnection> out;
    for (int i = 0; i < 1024; ++i) {
        auto it = kv.find("haConnectionInfo." + std::to_string(i));
        if (it == kv.end()) {
            break;
        }
        auto doc = protocol::parse_json_body(it->second);
        if (!doc.is_ok() || !doc->IsObject()) {
            continue;
        }
        int64_t id = -1;
        HaConnection c;
        (void)protocol::read_int64(*doc, "brokerId", &id);
        (void)protocol::read_int64(*doc, "diff", &c.diff);
        (void)protocol::read_bool(*doc, "inSync", &c.in_sync);
        out[id] = c;
    }
    return out;
}

// dledgerPeerMatch of a leader ("id:matchIndex:matchOffset;..."), by peer id.
std::map<std::string, int64_t> dledger_match_offsets(const KvMap& kv) {
    std::map<std::string, int64_t> out;
    std::stringstream list(get(kv, "dledgerPeerMatch"));
    std::string item;
    while (std::getline(list, item, ';')) {
        const size_t c1 = item.find(':');
        const size_t c2 = item.rfind(':');
        if (c1 != std::string::npos && c2 != std::string::npos && c1 < c2) {
            out[item.substr(0, c1)] = std::strtoll(item.c_str() + c2 + 1, nullptr, 10);
        }
    }
    return out;
}

// Fills the group's replication figures from its master's (or leader's) runtime info.
void apply_master_view(const KvMap& kv, GroupView* g) {
    g->in_sync_replicas = get_int(kv, "inSyncReplicaNums");
    g->alive_replicas = get_int(kv, "aliveReplicaNums");
    g->need_ack_nums = get_int(kv, "needAckNums");
    g->degraded = get(kv, "needAckNumsDegraded") == "true";
    g->sync_state_set = get(kv, "syncStateSet");
    g->dledger_leader = get(kv, "dledgerLeaderId");
    if (g->mode == GroupMode::kDLedger) {
        const int64_t committed = get_int(kv, "dledgerCommittedOffset").value_or(0);
        g->master_max_offset = committed;
        const auto match = dledger_match_offsets(kv);
        for (MemberView& m : g->members) {
            if (m.role == "MASTER" && m.up) {
                continue;
            }
            auto it = match.find(m.dledger_id);
            if (it != match.end()) {
                m.lag_bytes = std::max<int64_t>(0, committed - it->second);
                m.connected_to_master = true;
            }
        }
        return;
    }
    g->master_max_offset = get_int(kv, "masterCommitLogMaxOffset");
    const auto conns = ha_connections(kv);
    for (MemberView& m : g->members) {
        if (m.addr == g->master_addr) {
            continue;
        }
        auto it = conns.find(m.broker_id);
        if (it != conns.end()) {
            m.connected_to_master = true;
            m.lag_bytes = it->second.diff;
            m.in_sync = it->second.in_sync;
        } else {
            m.in_sync = false;
            if (g->master_max_offset && m.max_offset >= 0) {
                m.lag_bytes = std::max<int64_t>(0, *g->master_max_offset - m.max_offset);
            }
        }
    }
}

DurabilityView durability_of(ClusterSource& source, const GroupView& g,
                             const KvMap* master_runtime) {
    DurabilityView d;
    d.broker_name = g.broker_name;
    d.master_addr = g.master_addr;
    if (g.master_addr.empty() || master_runtime == nullptr) {
        d.contract = fmt::format(
            "no master is answering: sends to this group fail until one is ({} member(s) "
            "known)",
            g.members.size());
        return d;
    }
    auto config = source.broker_config(g.master_addr);
    if (!config.is_ok()) {
        d.contract = "unknown: the master's config could not be read";
        d.warnings.push_back(config.status().message());
        return d;
    }
    ha::DurabilityFacts facts = ha::durability_facts_from_properties(*config);
    ha::add_runtime_info(*master_runtime, &facts);
    ha::DurabilityExplanation e = ha::explain_durability(facts);
    d.contract = std::move(e.contract);
    d.reasons = std::move(e.reasons);
    d.warnings = std::move(e.warnings);
    return d;
}

// The master: the member that says it is master, registered brokerId 0 first.
const MemberView* pick_master(const GroupView& g) {
    const MemberView* master = nullptr;
    for (const MemberView& m : g.members) {
        if (m.up && m.role == "MASTER" && (master == nullptr || m.broker_id == 0)) {
            master = &m;
        }
    }
    return master;
}

// The groups with committed offsets on a broker ("topic@group" keys), sorted.
std::set<std::string> consumer_group_names(
    const protocol::ConsumerOffsetSerializeWrapper& offsets) {
    std::set<std::string> names;
    for (const auto& [key, queues] : offsets.offset_table) {
        const size_t at = key.find('@');
        if (at != std::string::npos && at + 1 < key.size()) {
            names.insert(key.substr(at + 1));
        }
    }
    return names;
}

}  // namespace

const char* group_mode_name(GroupMode m) {
    switch (m) {
        case GroupMode::kMasterSlave:
            return "master-slave";
        case GroupMode::kDLedger:
            return "dledger";
        case GroupMode::kController:
            return "controller";
    }
    return "?";
}

bool is_system_topic(const std::string& topic, const protocol::ClusterInfo& info) {
    static const std::set<std::string> system_topics = {"TBW102",
                                                        "SCHEDULE_TOPIC_XXXX",
                                                        "BenchmarkTest",
                                                        "RMQ_SYS_TRANS_HALF_TOPIC",
                                                        "RMQ_SYS_TRACE_TOPIC",
                                                        "RMQ_SYS_TRANS_OP_HALF_TOPIC",
                                                        "TRANS_CHECK_MAX_TIME_TOPIC",
                                                        "SELF_TEST_TOPIC",
                                                        "OFFSET_MOVED_EVENT"};
    if (system_topics.count(topic) != 0 || topic.rfind("rmq_sys_", 0) == 0 ||
        topic.rfind("%RETRY%", 0) == 0 || topic.rfind("%DLQ%", 0) == 0) {
        return true;
    }
    // MixAll.getReplyTopic: "<cluster>_REPLY_TOPIC", created by every broker of the cluster.
    constexpr std::string_view kReply = "_REPLY_TOPIC";
    if (topic.size() > kReply.size() &&
        topic.compare(topic.size() - kReply.size(), kReply.size(), kReply) == 0 &&
        info.cluster_addr_table.count(topic.substr(0, topic.size() - kReply.size())) != 0) {
        return true;
    }
    return info.cluster_addr_table.count(topic) != 0 || info.broker_addr_table.count(topic) != 0;
}

Collector::Collector(ClusterSource& source, CollectorOptions options)
    : source_(source), options_(options) {}

ClusterSnapshot Collector::collect(int64_t now_ms) {
    ClusterSnapshot snap;
    snap.seq = ++seq_;
    snap.taken_at_ms = now_ms;

    // 1. Members: the name server's view merged with the members known from earlier polls.
    protocol::ClusterInfo info;
    if (auto ci = source_.cluster_info(); ci.is_ok()) {
        info = std::move(ci).value();
    } else {
        snap.namesrv_error = ci.status().message();
    }
    Groups groups = list_members(info, snap.namesrv_error.empty(), now_ms);
    // 2. Every member's runtime info, in parallel.
    RuntimeByAddr runtime = poll_runtime_info(groups, now_ms);
    // 3. Per group: the master, replication state, durability contract.
    const Masters masters = summarize_groups(groups, runtime, now_ms, &snap);
    // 4. Topics: route, queues and stats from each group's master.
    collect_topics(info, masters, &snap);
    // 5. Consumer groups: those with committed offsets on a master, their lag per queue.
    collect_consumer_groups(masters, &snap);
    return snap;
}

// The registered members by group, then those known from earlier polls that the name server no
// longer lists (until forget_after). Updates known_.
Collector::Groups Collector::list_members(const protocol::ClusterInfo& info, bool namesrv_answered,
                                          int64_t now_ms) {
    Groups groups;
    std::set<std::pair<std::string, std::string>> registered;  // (brokerName, addr)
    for (const auto& [cluster, names] : info.cluster_addr_table) {
        for (const std::string& name : names) {
            auto b = info.broker_addr_table.find(name);
            if (b == info.broker_addr_table.end()) {
                continue;
            }
            GroupView& g = groups[{cluster, name}];
            g.cluster = cluster;
            g.broker_name = name;
            for (const auto& [id, addr] : b->second.broker_addrs) {
                MemberView m;
                m.broker_id = id;
                m.addr = addr;
                m.role = id == 0 ? "MASTER" : "SLAVE";
                g.members.push_back(std::move(m));
                registered.insert({name, addr});
                Known& k = known_[{name, addr}];
                k.cluster = cluster;
                k.broker_id = id;
                k.registered = true;
                k.last_registered_ms = now_ms;
            }
        }
    }
    add_remembered_members(registered, namesrv_answered, now_ms, &groups);
    return groups;
}

void Collector::add_remembered_members(
    const std::set<std::pair<std::string, std::string>>& registered, bool namesrv_answered,
    int64_t now_ms, Groups* groups) {
    for (auto it = known_.begin(); it != known_.end();) {
        auto& [key, k] = *it;
        if (registered.count(key) != 0) {
            ++it;
            continue;
        }
        const int64_t last = std::max(k.last_registered_ms, k.last_seen_ms);
        if (now_ms - last > options_.forget_after.count()) {
            it = known_.erase(it);
            continue;
        }
        GroupView& g = (*groups)[{k.cluster, key.first}];
        g.cluster = k.cluster;
        g.broker_name = key.first;
        MemberView m;
        m.broker_id = k.broker_id;
        m.addr = key.second;
        // Without an answer from the name server, registration is what it was last time.
        if (namesrv_answered) {
            k.registered = false;
        }
        m.registered = k.registered;
        m.role = k.role;
        g.members.push_back(std::move(m));
        ++it;
    }
}

// Sorts each group's members, asks all of them for runtime info at once and fills the members
// from the answers. Returns the answers by address.
Collector::RuntimeByAddr Collector::poll_runtime_info(Groups& groups, int64_t now_ms) {
    std::vector<MemberView*> members;
    for (auto& [key, g] : groups) {
        std::sort(g.members.begin(), g.members.end(), [](const auto& a, const auto& b) {
            return std::tie(a.broker_id, a.addr) < std::tie(b.broker_id, b.addr);
        });
        for (MemberView& m : g.members) {
            members.push_back(&m);
        }
    }
    std::vector<std::future<Result<KvMap>>> pending;
    pending.reserve(members.size());
    for (MemberView* m : members) {
        pending.push_back(std::async(
            std::launch::async, [this, addr = m->addr] { return source_.runtime_info(addr); }));
    }
    RuntimeByAddr runtime;
    for (size_t i = 0; i < members.size(); ++i) {
        MemberView& m = *members[i];
        Result<KvMap> r = pending[i].get();
        if (!r.is_ok()) {
            m.up = false;
            m.error = r.status().message();
            continue;
        }
        m.up = true;
        m.last_seen_ms = now_ms;
        fill_from_runtime(*r, &m);
        runtime[m.addr] = std::move(r).value();
    }
    return runtime;
}

// Moves every group into the snapshot with its master, replication figures and durability
// contract; returns the contracts and answering masters by brokerName.
Collector::Masters Collector::summarize_groups(Groups& groups, RuntimeByAddr& runtime,
                                               int64_t now_ms, ClusterSnapshot* snap) {
    Masters out;
    for (auto& [key, g] : groups) {
        remember_members(g, runtime, now_ms);
        const MemberView* master = pick_master(g);
        const KvMap* master_rt = nullptr;
        if (master != nullptr) {
            g.master_addr = master->addr;
            master_rt = &runtime[master->addr];
            out.master_of[g.broker_name] = g.master_addr;
            apply_master_view(*master_rt, &g);
        }
        out.durability[g.broker_name] = durability_of(source_, g, master_rt);
        snap->groups.push_back(std::move(g));
    }
    return out;
}

// Records what answering members said in known_, shows down members as last known, and takes
// the group's mode from any member's runtime info.
void Collector::remember_members(GroupView& g, const RuntimeByAddr& runtime, int64_t now_ms) {
    for (MemberView& m : g.members) {
        Known& k = known_[{g.broker_name, m.addr}];
        k.cluster = g.cluster;
        if (m.up) {
            k.last_seen_ms = now_ms;
            k.version = m.version;
            k.broker_role = m.broker_role;
            k.dledger_role = m.dledger_role;
            k.dledger_id = m.dledger_id;
        } else {
            m.last_seen_ms = k.last_seen_ms;
            m.version = k.version;
            m.broker_role = k.broker_role;
            m.dledger_id = k.dledger_id;
            // Not its role now: a DLedger peer that stopped answering leads nothing.
        }
        if (!m.role.empty()) {
            k.role = m.role;
        }
        if (auto rt = runtime.find(m.addr); rt != runtime.end()) {
            g.mode = mode_of(rt->second);
        }
    }
}

void Collector::collect_topics(const protocol::ClusterInfo& info, const Masters& masters,
                               ClusterSnapshot* snap) {
    std::vector<std::string> topics;
    if (auto tl = source_.topic_list(); tl.is_ok()) {
        topics = std::move(tl).value();
        std::sort(topics.begin(), topics.end());
    } else if (snap->namesrv_error.empty()) {
        snap->namesrv_error = tl.status().message();
    }
    for (size_t i = 0; i < topics.size(); ++i) {
        TopicView t;
        t.name = topics[i];
        t.system = is_system_topic(t.name, info);
        if (i >= options_.max_topics) {
            t.error = fmt::format("not polled: more than {} topics", options_.max_topics);
        } else {
            poll_topic(masters, &t);
        }
        snap->topics.push_back(std::move(t));
    }
}

// One topic's route, durability per group and queue stats from each group's master.
void Collector::poll_topic(const Masters& masters, TopicView* t) {
    auto route = source_.topic_route(t->name);
    if (!route.is_ok()) {
        t->error = route.status().message();
        return;
    }
    std::set<std::string> clusters;
    for (const auto& bd : route->broker_datas) {
        clusters.insert(bd.cluster);
    }
    t->clusters.assign(clusters.begin(), clusters.end());
    std::vector<protocol::QueueData> qds = route->queue_datas;
    std::sort(qds.begin(), qds.end(),
              [](const auto& a, const auto& b) { return a.broker_name < b.broker_name; });
    for (const auto& qd : qds) {
        t->routes.push_back({qd.broker_name, qd.read_queue_nums, qd.write_queue_nums, qd.perm});
        if (auto d = masters.durability.find(qd.broker_name); d != masters.durability.end()) {
            t->durability.push_back(d->second);
        }
        auto m = masters.master_of.find(qd.broker_name);
        if (m == masters.master_of.end()) {
            continue;
        }
        auto stats = source_.topic_stats(m->second, t->name);
        if (!stats.is_ok()) {
            t->error = stats.status().message();
            continue;
        }
        t->put_tps += stats->topic_put_tps;
        for (const auto& [mq, off] : stats->offset_table) {
            t->queues.push_back({mq.broker_name, mq.queue_id, off.min_offset, off.max_offset,
                                 off.last_update_timestamp});
        }
    }
    std::sort(t->queues.begin(), t->queues.end(), [](const auto& a, const auto& b) {
        return std::tie(a.broker_name, a.queue_id) < std::tie(b.broker_name, b.queue_id);
    });
}

void Collector::collect_consumer_groups(const Masters& masters, ClusterSnapshot* snap) {
    std::map<std::string, ConsumerGroupView> cgs;
    for (const auto& [broker_name, addr] : masters.master_of) {
        auto offsets = source_.consumer_offsets(addr);
        if (!offsets.is_ok()) {
            continue;
        }
        for (const std::string& name : consumer_group_names(*offsets)) {
            ConsumerGroupView& cg = cgs[name];
            cg.group = name;
            add_consume_stats(addr, name, &cg);
        }
    }
    for (auto& [name, cg] : cgs) {
        std::sort(cg.queues.begin(), cg.queues.end(), [](const auto& a, const auto& b) {
            return std::tie(a.topic, a.broker_name, a.queue_id) <
                   std::tie(b.topic, b.broker_name, b.queue_id);
        });
        snap->consumer_groups.push_back(std::move(cg));
    }
}

// The group's lag per queue on the master at `addr`.
void Collector::add_consume_stats(const std::string& addr, const std::string& group,
                                  ConsumerGroupView* cg) {
    auto stats = source_.consume_stats(addr, group);
    if (!stats.is_ok()) {
        cg->error = stats.status().message();
        return;
    }
    cg->consume_tps += stats->consume_tps;
    for (const auto& [mq, w] : stats->offset_table) {
        ConsumerQueueView q;
        q.topic = mq.topic;
        q.broker_name = mq.broker_name;
        q.queue_id = mq.queue_id;
        q.broker_offset = w.broker_offset;
        q.consumer_offset = w.consumer_offset;
        q.lag = std::max<int64_t>(0, w.broker_offset - w.consumer_offset);
        q.last_timestamp_ms = w.last_timestamp;
        cg->total_lag += q.lag;
        cg->queues.push_back(std::move(q));
    }
}

}  // namespace comet::dashboard
