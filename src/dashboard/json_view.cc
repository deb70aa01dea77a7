#include "dashboard/json_view.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <map>

#include "protocol/route_bodies.h"

namespace comet::dashboard {

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void str(Writer& w, const char* key, const std::string& v) {
    w.Key(key);
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
}

void i64(Writer& w, const char* key, int64_t v) {
    w.Key(key);
    w.Int64(v);
}

void dbl(Writer& w, const char* key, double v) {
    w.Key(key);
    w.Double(v);
}

void boolean(Writer& w, const char* key, bool v) {
    w.Key(key);
    w.Bool(v);
}

template <typename T>
void opt_int(Writer& w, const char* key, const std::optional<T>& v) {
    w.Key(key);
    if (v) {
        w.Int64(static_cast<int64_t>(*v));
    } else {
        w.Null();
    }
}

void strings(Writer& w, const char* key, const std::vector<std::string>& v) {
    w.Key(key);
    w.StartArray();
    for (const std::string& s : v) {
        w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    }
    w.EndArray();
}

void header(Writer& w, const ClusterSnapshot& s) {
    i64(w, "seq", static_cast<int64_t>(s.seq));
    i64(w, "takenAt", s.taken_at_ms);
}

// How a non-master member is doing, in words the page shows as is.
std::string replication_text(const GroupView& g, const MemberView& m) {
    if (m.addr == g.master_addr) {
        return "master";
    }
    if (g.master_addr.empty()) {
        return "no master answering";
    }
    if (!m.up) {
        // The master's view of a silent member is its last word, not a live figure.
        return m.lag_bytes ? fmt::format("not answering (the master last saw it {} bytes behind)",
                                         *m.lag_bytes)
                           : "not answering";
    }
    if (g.mode == GroupMode::kDLedger) {
        return m.lag_bytes ? fmt::format("{} bytes behind the leader", *m.lag_bytes)
                           : "no match reported by the leader";
    }
    if (!m.connected_to_master) {
        return m.lag_bytes ? fmt::format("not connected ({} bytes behind)", *m.lag_bytes)
                           : "not connected to the master";
    }
    return fmt::format("{} ({} bytes behind)",
                       m.in_sync.value_or(false) ? "in sync" : "NOT in sync",
                       m.lag_bytes.value_or(0));
}

void member(Writer& w, const GroupView& g, const MemberView& m) {
    w.StartObject();
    i64(w, "brokerId", m.broker_id);
    str(w, "addr", m.addr);
    boolean(w, "registered", m.registered);
    boolean(w, "up", m.up);
    str(w, "state", m.up ? "UP" : "DOWN");
    str(w, "error", m.error);
    str(w, "role", m.role);
    str(w, "brokerRole", m.broker_role);
    str(w, "dledgerRole", m.dledger_role);
    str(w, "dledgerId", m.dledger_id);
    str(w, "version", m.version);
    dbl(w, "putTps", m.put_tps);
    dbl(w, "getTps", m.get_tps);
    i64(w, "maxOffset", m.max_offset);
    i64(w, "lastSeen", m.last_seen_ms);
    opt_int(w, "lagBytes", m.lag_bytes);
    w.Key("inSync");
    if (m.in_sync) {
        w.Bool(*m.in_sync);
    } else {
        w.Null();
    }
    boolean(w, "connectedToMaster", m.connected_to_master);
    str(w, "replication", replication_text(g, m));
    w.EndObject();
}

void group(Writer& w, const GroupView& g) {
    w.StartObject();
    str(w, "brokerName", g.broker_name);
    str(w, "mode", group_mode_name(g.mode));
    str(w, "masterAddr", g.master_addr);
    opt_int(w, "inSyncReplicaNums", g.in_sync_replicas);
    opt_int(w, "aliveReplicaNums", g.alive_replicas);
    opt_int(w, "needAckNums", g.need_ack_nums);
    boolean(w, "degraded", g.degraded);
    opt_int(w, "masterMaxOffset", g.master_max_offset);
    str(w, "syncStateSet", g.sync_state_set);
    str(w, "dledgerLeader", g.dledger_leader);
    // The in-sync set: the master plus every member it reports in sync (DLedger: the peers
    // the leader reports, as committed entries reach a majority of them).
    w.Key("inSyncSet");
    w.StartArray();
    for (const MemberView& m : g.members) {
        if (!g.master_addr.empty() && (m.addr == g.master_addr || m.in_sync.value_or(false))) {
            w.String(m.addr.data(), static_cast<rapidjson::SizeType>(m.addr.size()));
        }
    }
    w.EndArray();
    w.Key("members");
    w.StartArray();
    for (const MemberView& m : g.members) {
        member(w, g, m);
    }
    w.EndArray();
    w.EndObject();
}

}  // namespace

std::string cluster_json(const ClusterSnapshot& s, const std::vector<std::string>& namesrv_addrs) {
    rapidjson::StringBuffer buf;
    Writer w(buf);
    w.StartObject();
    header(w, s);
    w.Key("namesrv");
    w.StartObject();
    strings(w, "addrs", namesrv_addrs);
    str(w, "error", s.namesrv_error);
    w.EndObject();
    // Clusters in name order, each with its groups (the snapshot is sorted by cluster).
    std::map<std::string, std::vector<const GroupView*>> clusters;
    for (const GroupView& g : s.groups) {
        clusters[g.cluster].push_back(&g);
    }
    w.Key("clusters");
    w.StartArray();
    for (const auto& [name, groups] : clusters) {
        w.StartObject();
        str(w, "name", name);
        w.Key("groups");
        w.StartArray();
        for (const GroupView* g : groups) {
            group(w, *g);
        }
        w.EndArray();
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return buf.GetString();
}

std::string topics_json(const ClusterSnapshot& s) {
    rapidjson::StringBuffer buf;
    Writer w(buf);
    w.StartObject();
    header(w, s);
    w.Key("topics");
    w.StartArray();
    for (const TopicView& t : s.topics) {
        w.StartObject();
        str(w, "name", t.name);
        boolean(w, "system", t.system);
        strings(w, "clusters", t.clusters);
        dbl(w, "putTps", t.put_tps);
        str(w, "error", t.error);
        w.Key("routes");
        w.StartArray();
        for (const QueueRouteView& r : t.routes) {
            w.StartObject();
            str(w, "brokerName", r.broker_name);
            i64(w, "readQueueNums", r.read_queue_nums);
            i64(w, "writeQueueNums", r.write_queue_nums);
            str(w, "perm", protocol::perm_to_string(r.perm));
            w.EndObject();
        }
        w.EndArray();
        w.Key("queues");
        w.StartArray();
        for (const QueueView& q : t.queues) {
            w.StartObject();
            str(w, "brokerName", q.broker_name);
            i64(w, "queueId", q.queue_id);
            i64(w, "minOffset", q.min_offset);
            i64(w, "maxOffset", q.max_offset);
            i64(w, "lastUpdate", q.last_update_ms);
            w.EndObject();
        }
        w.EndArray();
        w.Key("durability");
        w.StartArray();
        for (const DurabilityView& d : t.durability) {
            w.StartObject();
            str(w, "brokerName", d.broker_name);
            str(w, "masterAddr", d.master_addr);
            str(w, "contract", d.contract);
            strings(w, "reasons", d.reasons);
            strings(w, "warnings", d.warnings);
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return buf.GetString();
}

std::string groups_json(const ClusterSnapshot& s) {
    rapidjson::StringBuffer buf;
    Writer w(buf);
    w.StartObject();
    header(w, s);
    w.Key("groups");
    w.StartArray();
    for (const ConsumerGroupView& g : s.consumer_groups) {
        w.StartObject();
        str(w, "group", g.group);
        i64(w, "totalLag", g.total_lag);
        dbl(w, "consumeTps", g.consume_tps);
        str(w, "error", g.error);
        w.Key("queues");
        w.StartArray();
        for (const ConsumerQueueView& q : g.queues) {
            w.StartObject();
            str(w, "topic", q.topic);
            str(w, "brokerName", q.broker_name);
            i64(w, "queueId", q.queue_id);
            i64(w, "brokerOffset", q.broker_offset);
            i64(w, "consumerOffset", q.consumer_offset);
            i64(w, "lag", q.lag);
            i64(w, "lastTimestamp", q.last_timestamp_ms);
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return buf.GetString();
}

std::string history_json(const std::deque<ChangeEvent>& events, uint64_t dropped) {
    rapidjson::StringBuffer buf;
    Writer w(buf);
    w.StartObject();
    i64(w, "dropped", static_cast<int64_t>(dropped));
    w.Key("events");
    w.StartArray();
    for (auto it = events.rbegin(); it != events.rend(); ++it) {
        w.StartObject();
        i64(w, "at", it->at_ms);
        str(w, "cluster", it->cluster);
        str(w, "brokerName", it->broker_name);
        str(w, "addr", it->addr);
        i64(w, "brokerId", it->broker_id);
        str(w, "kind", it->kind);
        str(w, "from", it->from);
        str(w, "to", it->to);
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return buf.GetString();
}

}  // namespace comet::dashboard
