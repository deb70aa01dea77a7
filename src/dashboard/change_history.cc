#include "dashboard/change_history.h"

#include <map>
#include <tuple>

namespace comet::dashboard {

namespace {

using MemberKey = std::tuple<std::string, std::string, std::string>;  // cluster, name, addr

std::map<MemberKey, const MemberView*> members_of(const ClusterSnapshot& s) {
    std::map<MemberKey, const MemberView*> out;
    for (const GroupView& g : s.groups) {
        for (const MemberView& m : g.members) {
            out[{g.cluster, g.broker_name, m.addr}] = &m;
        }
    }
    return out;
}

std::string role_text(const MemberView& m) { return m.role.empty() ? std::string("?") : m.role; }

}  // namespace

std::vector<ChangeEvent> diff_snapshots(const ClusterSnapshot& prev, const ClusterSnapshot& next) {
    std::vector<ChangeEvent> out;
    auto event = [&](const std::string& cluster, const std::string& name, const MemberView* m,
                     std::string kind, std::string from, std::string to) {
        ChangeEvent e;
        e.at_ms = next.taken_at_ms;
        e.cluster = cluster;
        e.broker_name = name;
        if (m != nullptr) {
            e.addr = m->addr;
            e.broker_id = m->broker_id;
        }
        e.kind = std::move(kind);
        e.from = std::move(from);
        e.to = std::move(to);
        out.push_back(std::move(e));
    };
    const auto before = members_of(prev);
    const auto after = members_of(next);
    for (const auto& [key, m] : after) {
        const auto& [cluster, name, addr] = key;
        auto it = before.find(key);
        if (it == before.end()) {
            event(cluster, name, m, "joined", "", role_text(*m));
            continue;
        }
        const MemberView& p = *it->second;
        if (p.up && !m->up) {
            event(cluster, name, m, "down", "UP", "DOWN");
        } else if (!p.up && m->up) {
            event(cluster, name, m, "up", "DOWN", "UP");
        }
        if (p.registered != m->registered) {
            event(cluster, name, m, m->registered ? "registered" : "unregistered",
                  p.registered ? "registered" : "unregistered",
                  m->registered ? "registered" : "unregistered");
        }
        if (!p.role.empty() && !m->role.empty() && p.role != m->role) {
            event(cluster, name, m, "role", p.role, m->role);
        }
        if (p.up && m->up && p.dledger_role != m->dledger_role) {
            event(cluster, name, m, "dledger", p.dledger_role, m->dledger_role);
        }
    }
    for (const auto& [key, m] : before) {
        if (after.count(key) == 0) {
            const auto& [cluster, name, addr] = key;
            event(cluster, name, m, "left", role_text(*m), "");
        }
    }
    std::map<std::pair<std::string, std::string>, std::string> old_master;
    for (const GroupView& g : prev.groups) {
        old_master[{g.cluster, g.broker_name}] = g.master_addr;
    }
    for (const GroupView& g : next.groups) {
        auto it = old_master.find({g.cluster, g.broker_name});
        if (it != old_master.end() && it->second != g.master_addr) {
            ChangeEvent e;
            e.at_ms = next.taken_at_ms;
            e.cluster = g.cluster;
            e.broker_name = g.broker_name;
            e.addr = g.master_addr;
            for (const MemberView& m : g.members) {
                if (m.addr == g.master_addr) {
                    e.broker_id = m.broker_id;
                }
            }
            e.kind = "master";
            e.from = it->second.empty() ? "none" : it->second;
            e.to = g.master_addr.empty() ? "none" : g.master_addr;
            out.push_back(std::move(e));
        }
    }
    return out;
}

void ChangeHistory::observe(const ClusterSnapshot& next) {
    if (have_prev_) {
        for (ChangeEvent& e : diff_snapshots(prev_, next)) {
            events_.push_back(std::move(e));
        }
        while (events_.size() > capacity_) {
            events_.pop_front();
            ++dropped_;
        }
    }
    prev_ = next;
    have_prev_ = true;
}

}  // namespace comet::dashboard
