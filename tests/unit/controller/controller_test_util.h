#pragma once
// Test helpers for the controller state machine: a hand-driven BrokerLiveness and shortcuts that
// run a request through handle_* and apply its events, as a driver would after the commit.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "controller/broker_live_info.h"
#include "controller/replicas_info_manager.h"

namespace comet::controller::testing {

// Alive ids are alive in every broker set. Lease: expired when not alive, unless the id is in
// lease_running.
class FakeLiveness : public BrokerLiveness {
public:
    bool is_alive(const std::string&, const std::string&, BrokerId id) const override {
        return alive.count(id.value()) != 0;
    }
    const BrokerLiveInfo* live_info(const std::string&, const std::string&,
                                    BrokerId id) const override {
        auto it = info.find(id.value());
        return it == info.end() ? nullptr : &it->second;
    }
    bool lease_expired(const std::string&, const std::string&, BrokerId id) const override {
        return alive.count(id.value()) == 0 && lease_running.count(id.value()) == 0;
    }
    void set_info(int64_t id, int32_t epoch, int64_t max_offset,
                  int32_t priority = INT32_MAX) {
        BrokerLiveInfo& i = info[id];
        i.broker_id = BrokerId(id);
        i.epoch = epoch;
        i.max_offset = max_offset;
        i.election_priority = priority;
    }

    std::set<int64_t> alive;
    std::set<int64_t> lease_running;
    std::map<int64_t, BrokerLiveInfo> info;
};

inline constexpr const char* kCluster = "DefaultCluster";
inline constexpr const char* kBroker = "broker-a";

inline std::string addr_of(int64_t id) { return "127.0.0.1:" + std::to_string(10910 + id); }
inline std::string check_code_of(int64_t id) { return addr_of(id) + ";1700000000000"; }

template <typename R>
void apply_all(ReplicasInfoManager& m, const R& result) {
    for (const Event& e : result.events) {
        Status st = m.apply(e);
        ASSERT_TRUE(st.is_ok()) << st.to_string() << " for " << describe(e);
    }
    m.check_invariants();
}

inline protocol::ApplyBrokerIdRequestHeader apply_req(int64_t id,
                                                     const std::string& broker = kBroker) {
    protocol::ApplyBrokerIdRequestHeader h;
    h.cluster_name = kCluster;
    h.broker_name = broker;
    h.applied_broker_id = id;
    h.register_check_code = check_code_of(id);
    return h;
}

inline protocol::ElectMasterRequestHeader elect_req(int64_t id, bool designate = false,
                                                    const std::string& broker = kBroker) {
    protocol::ElectMasterRequestHeader h;
    h.cluster_name = kCluster;
    h.broker_name = broker;
    h.broker_id = id;
    h.designate_elect = designate;
    return h;
}

inline protocol::AlterSyncStateSetRequestHeader alter_req(int64_t master, int32_t master_epoch,
                                                          const std::string& broker = kBroker) {
    protocol::AlterSyncStateSetRequestHeader h;
    h.broker_name = broker;
    h.master_broker_id = master;
    h.master_epoch = master_epoch;
    return h;
}

inline protocol::SyncStateSet sss(std::set<int64_t> ids, int32_t epoch) {
    protocol::SyncStateSet s;
    s.sync_state_set = std::move(ids);
    s.sync_state_set_epoch = epoch;
    return s;
}

// Registers ids 1..n in kBroker and, if elect_first, makes 1 master by the first election.
inline void setup_set(ReplicasInfoManager& m, int n, bool elect_first = true) {
    for (int64_t id = 1; id <= n; ++id) {
        auto r = m.handle_apply_broker_id(apply_req(id));
        ASSERT_EQ(r.code, 0) << r.remark;
        apply_all(m, r);
    }
    if (elect_first) {
        FakeLiveness live;
        live.alive = {1};
        auto r = m.handle_elect_master(elect_req(1), live);
        ASSERT_EQ(r.code, 0) << r.remark;
        apply_all(m, r);
    }
}


// Deterministic random request workload for replay tests: drives a "leader" manager through
// random requests (two broker sets, ids 1..5, random liveness, sometimes stale epochs, sometimes
// two requests validated before either is applied) and returns every event it produced, in the
// order a driver would append them to the log (stale ones included).
inline std::vector<Event> random_workload(uint64_t seed, int steps) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    auto rnd = [&](uint64_t n) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return static_cast<int64_t>(x % n);
    };
    ReplicasInfoManager leader(ReplicasInfoConfig{seed % 2 == 0});
    std::vector<Event> log;
    for (int step = 0; step < steps; ++step) {
        const std::string broker = rnd(4) == 0 ? "broker-b" : kBroker;
        FakeLiveness live;
        for (int64_t id = 1; id <= 5; ++id) {
            if (rnd(3) != 0) {
                live.alive.insert(id);
                live.set_info(id, static_cast<int32_t>(rnd(3)), rnd(4) * 100,
                              static_cast<int32_t>(rnd(2)));
            }
        }
        const BrokerSetState* s = leader.find(broker);
        const int batch = rnd(5) == 0 ? 2 : 1;  // 2: validate twice, then apply both
        std::vector<Event> pending;
        for (int b = 0; b < batch; ++b) {
            std::vector<Event> ev;
            switch (rnd(6)) {
                case 0: {
                    auto req = apply_req(rnd(3) == 0 ? 1 + rnd(5)
                                                     : (s ? s->next_assign_broker_id.value() : 1),
                                         broker);
                    if (rnd(4) == 0) {
                        req.register_check_code = "10.0.0.1:1;" + std::to_string(rnd(2));
                    }
                    ev = leader.handle_apply_broker_id(req).events;
                    break;
                }
                case 1: {
                    protocol::RegisterBrokerToControllerRequestHeader h;
                    h.cluster_name = kCluster;
                    h.broker_name = broker;
                    h.broker_id = 1 + rnd(5);
                    h.broker_address = "10.0.0." + std::to_string(rnd(3)) + ":10911";
                    ev = leader.handle_register_broker(h, live).events;
                    break;
                }
                case 2:
                case 3: {
                    const int64_t id = rnd(3) == 0 ? kControllerTriggeredBrokerId : 1 + rnd(5);
                    ev = leader.handle_elect_master(elect_req(id, rnd(4) == 0, broker), live).events;
                    break;
                }
                case 4: {
                    std::set<int64_t> ids;
                    for (int64_t id = 1; id <= 5; ++id) {
                        if (rnd(2) == 0) {
                            ids.insert(id);
                        }
                    }
                    int64_t master = s && s->master ? s->master->value() : 1;
                    int32_t me = s ? s->master_epoch.value() : 0;
                    int32_t sse = s ? s->sync_state_set_epoch.value() : 0;
                    if (s && s->master && rnd(2) == 0) {
                        ids.insert(master);
                        for (int64_t id : ids) {
                            live.alive.insert(id);
                        }
                    }
                    if (rnd(8) == 0) {
                        sse -= 1;
                    }
                    ev = leader
                             .handle_alter_sync_state_set(alter_req(master, me, broker),
                                                          sss(ids, sse), live)
                             .events;
                    break;
                }
                case 5: {
                    if (rnd(4) != 0) {
                        break;  // rare
                    }
                    protocol::CleanBrokerDataRequestHeader h;
                    h.cluster_name = kCluster;
                    h.broker_name = broker;
                    h.broker_controller_ids_to_clean = std::to_string(1 + rnd(5));
                    h.is_clean_living_broker = rnd(2) == 0;
                    ev = leader.handle_clean_broker_data(h, live).events;
                    break;
                }
            }
            pending.insert(pending.end(), ev.begin(), ev.end());
        }
        for (const Event& e : pending) {
            (void)leader.apply(e);  // stale ones are ignored, as on every replica
            leader.check_invariants();
            log.push_back(e);
        }
    }
    return log;
}

}  // namespace comet::controller::testing
