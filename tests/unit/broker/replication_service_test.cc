// ReplicationService on fakes: a fake replica set (slave acks + a real GroupTransfer on a
// ManualClock) and a fake CommitLog end. Every quorum verdict is driven through put() and the
// resulting PutMessageStatus is mapped to the response code the send processor answers with.

#include "broker/replication/replication_service.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/config.h"
#include "broker/context/store_adapter.h"
#include "broker/processor/broker_processors.h"
#include "broker/replication/replicated_store_port.h"
#include "fake_store.h"
#include "protocol/response_code.h"

namespace comet::broker {
namespace {

using namespace std::chrono_literals;
using store::PutMessageStatus;
namespace RC = protocol::ResponseCode;

class FakeHaStore final : public ha::HaStorePort {
public:
    int64_t end = 1000;
    int64_t min_offset() const override { return 0; }
    int64_t max_offset() const override { return end; }
    std::optional<ha::HaChunk> read(int64_t, int64_t) const override { return std::nullopt; }
    Status append(int64_t, std::string_view) override {
        return Status::error(Errc::kFailedPrecondition, "not a slave");
    }
};

class FakeReplicas final : public ReplicaSet {
public:
    explicit FakeReplicas(Clock& clock) : gt(clock) {}
    std::vector<int64_t> acks;
    ha::GroupTransfer gt;
    int notified = 0;
    std::vector<int64_t> slave_ack_offsets() const override { return acks; }
    ha::GroupTransfer& group_transfer() override { return gt; }
    void notify_new_data() override { ++notified; }
    void ack(std::vector<int64_t> a) {
        acks = std::move(a);
        gt.on_acks(acks);
    }
};

struct Outcome {
    std::optional<store::PutMessageResult> result;
    SendDurability durability;
    int calls = 0;
    ReplicationService::Done cb() {
        return [this](store::PutMessageResult r, SendDurability d) {
            ++calls;
            result = std::move(r);
            durability = d;
        };
    }
    int32_t code() const { return map_put_status(*result).code; }
};

// One message of 100 bytes appended at the fake store's end; the store answers `status`.
struct FakeAppend {
    FakeHaStore* store;
    PutMessageStatus status = PutMessageStatus::kPutOk;
    int calls = 0;
    ReplicationService::PutFn fn() {
        return [this](ReplicationService::PutCallback cb) {
            ++calls;
            store::PutMessageResult r;
            r.status = status;
            r.append.wrote_offset = store::PhysicalOffset(store->end);
            r.append.wrote_bytes = 100;
            store->end += 100;
            cb(std::move(r));
        };
    }
};

class ReplicationServiceTest : public ::testing::Test {
protected:
    ReplicationConfig config(ha::BrokerRole role, int32_t total, int32_t isr) {
        ReplicationConfig c;
        c.quorum.broker_role = role;
        c.quorum.total_replicas = total;
        c.quorum.in_sync_replicas = isr;
        c.broker_name = "broker-a";
        c.slave_timeout = 3000ms;
        return c;
    }
    std::unique_ptr<ReplicationService> make(ReplicationConfig c) {
        auto s = std::make_unique<ReplicationService>(std::move(c), clock_, store_);
        s->start_with(&replicas_);
        return s;
    }

    ManualClock clock_;
    FakeHaStore store_;
    FakeReplicas replicas_{clock_};
};

TEST_F(ReplicationServiceTest, AsyncMasterAnswersAtOnceWithOneReplica) {
    auto svc = make(config(ha::BrokerRole::kAsyncMaster, 3, 3));
    FakeAppend app{&store_};
    Outcome o;
    svc->put(true, app.fn(), o.cb());
    ASSERT_EQ(o.calls, 1);
    EXPECT_EQ(o.code(), RC::kSuccess);
    EXPECT_EQ(o.durability.replicas, 1);
    EXPECT_EQ(replicas_.notified, 1);
}

TEST_F(ReplicationServiceTest, SyncMasterWaitsForTheQuorumThenSucceeds) {
    auto svc = make(config(ha::BrokerRole::kSyncMaster, 3, 2));
    replicas_.ack({1000, 1000});
    FakeAppend app{&store_};
    Outcome o;
    svc->put(true, app.fn(), o.cb());
    EXPECT_EQ(app.calls, 1);
    EXPECT_EQ(o.calls, 0) << "waits for a slave ack of offset 1100";
    replicas_.ack({1050, 1000});
    EXPECT_EQ(o.calls, 0);
    replicas_.ack({1100, 1000});
    ASSERT_EQ(o.calls, 1);
    EXPECT_EQ(o.code(), RC::kSuccess);
    EXPECT_EQ(o.durability.replicas, 2);
    EXPECT_EQ(o.durability.need_ack_nums, 2);
    EXPECT_EQ(svc->counters().quorum_acks.load(), 1);
}

TEST_F(ReplicationServiceTest, AllSlavesAckedCountsEveryReplica) {
    auto svc = make(config(ha::BrokerRole::kSyncMaster, 3, 2));
    replicas_.ack({1000, 1000});
    FakeAppend app{&store_};
    Outcome o;
    svc->put(true, app.fn(), o.cb());
    replicas_.ack({1100, 1100});
    ASSERT_EQ(o.calls, 1);
    EXPECT_EQ(o.durability.replicas, 3);
}

TEST_F(ReplicationServiceTest, TimeoutAnswersFlushSlaveTimeout) {
    auto svc = make(config(ha::BrokerRole::kSyncMaster, 2, 2));
    replicas_.ack({1000});
    FakeAppend app{&store_};
    Outcome o;
    svc->put(true, app.fn(), o.cb());
    clock_.advance(2999ms);
    replicas_.gt.expire();
    EXPECT_EQ(o.calls, 0);
    clock_.advance(2ms);
    replicas_.gt.expire();
    ASSERT_EQ(o.calls, 1);
    EXPECT_EQ(o.result->status, PutMessageStatus::kFlushSlaveTimeout);
    EXPECT_EQ(o.code(), RC::kFlushSlaveTimeout);
    EXPECT_EQ(o.durability.replicas, 1);
    EXPECT_EQ(svc->counters().slave_timeouts.load(), 1);
    EXPECT_TRUE(store::is_stored(o.result->status)) << "the master holds it: header is filled";
}

TEST_F(ReplicationServiceTest, NoSlaveConnectedAnswersSlaveNotAvailable) {
    auto svc = make(config(ha::BrokerRole::kSyncMaster, 2, 2));
    FakeAppend app{&store_};
    Outcome o;
    svc->put(true, app.fn(), o.cb());
    EXPECT_EQ(app.calls, 1) << "stored on the master";
    ASSERT_EQ(o.calls, 1);
    EXPECT_EQ(o.code(), RC::kSlaveNotAvailable);
    EXPECT_EQ(svc->counters().slave_not_available.load(), 1);
}

// A 4.x broker.conf (SYNC_MASTER, no quorum key): 4.9.8's rules through the send path. No
// slave: SLAVE_NOT_AVAILABLE (stored on the master); a slave: wait for it; no ack within
// slaveTimeout: FLUSH_SLAVE_TIMEOUT. Never SEND_OK on the master's copy alone.
TEST_F(ReplicationServiceTest, RocketMq498RulesWaitForOneSlave) {
    auto c = config(ha::BrokerRole::kSyncMaster, 1, 1);
    c.quorum.rules = ha::QuorumRules::kRocketMq4;
    c.quorum.slave_not_available_fast_fail = false;  // a Comet key of the 5.x rules only
    auto svc = make(c);
    FakeAppend app{&store_};
    Outcome none;
    svc->put(true, app.fn(), none.cb());
    EXPECT_EQ(app.calls, 1) << "stored on the master";
    ASSERT_EQ(none.calls, 1);
    EXPECT_EQ(none.code(), RC::kSlaveNotAvailable);
    EXPECT_EQ(none.durability.replicas, 1);

    replicas_.ack({1100});
    Outcome acked;
    svc->put(true, app.fn(), acked.cb());
    EXPECT_EQ(acked.calls, 0) << "waits for the slave to ack offset 1200";
    replicas_.ack({1200});
    ASSERT_EQ(acked.calls, 1);
    EXPECT_EQ(acked.code(), RC::kSuccess);
    EXPECT_EQ(acked.durability.replicas, 2);
    EXPECT_EQ(acked.durability.need_ack_nums, 2);

    Outcome hung;
    svc->put(true, app.fn(), hung.cb());
    clock_.advance(3001ms);
    replicas_.gt.expire();
    ASSERT_EQ(hung.calls, 1);
    EXPECT_EQ(hung.code(), RC::kFlushSlaveTimeout);
    EXPECT_EQ(hung.durability.replicas, 1);

    Outcome no_wait;  // WAIT=false: answered at once, as 4.9.8 does
    svc->put(false, app.fn(), no_wait.cb());
    ASSERT_EQ(no_wait.calls, 1);
    EXPECT_EQ(no_wait.code(), RC::kSuccess);
    EXPECT_EQ(svc->runtime_info()["needAckNums"], "2");
}

TEST_F(ReplicationServiceTest, WithoutFastFailNoSlaveWaitsAndTimesOut) {
    auto c = config(ha::BrokerRole::kSyncMaster, 2, 2);
    c.quorum.slave_not_available_fast_fail = false;
    auto svc = make(c);
    FakeAppend app{&store_};
    Outcome o;
    svc->put(true, app.fn(), o.cb());
    EXPECT_EQ(o.calls, 0);
    clock_.advance(3001ms);
    replicas_.gt.expire();
    ASSERT_EQ(o.calls, 1);
    EXPECT_EQ(o.code(), RC::kFlushSlaveTimeout);
}

TEST_F(ReplicationServiceTest, InSyncReplicasNotEnoughRefusesBeforeTheAppend) {
    auto c = config(ha::BrokerRole::kSyncMaster, 3, 2);
    c.quorum.enable_slave_acting_master = true;
    c.quorum.ha_max_gap_not_in_sync = 100;
    auto svc = make(c);
    replicas_.ack({0, 0});  // both slaves 1000 bytes behind: not in sync
    FakeAppend app{&store_};
    Outcome o;
    svc->put(true, app.fn(), o.cb());
    EXPECT_EQ(app.calls, 0) << "nothing written";
    ASSERT_EQ(o.calls, 1);
    EXPECT_EQ(o.result->status, PutMessageStatus::kInSyncReplicasNotEnough);
    EXPECT_EQ(o.code(), RC::kSystemError);
    EXPECT_EQ(map_put_status(*o.result).remark, "in-sync replicas not enough");
    EXPECT_EQ(svc->counters().isr_not_enough.load(), 1);
}

TEST_F(ReplicationServiceTest, AliveReplicaCountComesFromTheInjectedFunction) {
    auto c = config(ha::BrokerRole::kSyncMaster, 3, 2);
    c.quorum.enable_slave_acting_master = true;
    auto svc = make(c);
    replicas_.ack({1000, 1000});  // both in sync by gap
    int32_t alive = 1;            // ...but the name server says only the master is alive
    svc->set_alive_replica_fn([&alive] { return alive; });
    FakeAppend app{&store_};
    Outcome o;
    svc->put(true, app.fn(), o.cb());
    ASSERT_EQ(o.calls, 1);
    EXPECT_EQ(o.result->status, PutMessageStatus::kInSyncReplicasNotEnough);
    alive = 3;
    Outcome o2;
    svc->put(true, app.fn(), o2.cb());
    EXPECT_EQ(o2.calls, 0) << "now waits for a slave";
    replicas_.ack({1100, 1000});
    ASSERT_EQ(o2.calls, 1);
    EXPECT_EQ(o2.code(), RC::kSuccess);
}

TEST_F(ReplicationServiceTest, AutoDowngradeAcksOnTheMasterAloneAndCountsIt) {
    auto c = config(ha::BrokerRole::kSyncMaster, 3, 2);
    c.quorum.enable_slave_acting_master = true;
    c.quorum.enable_auto_in_sync_replicas = true;
    c.quorum.min_in_sync_replicas = 1;
    c.quorum.ha_max_gap_not_in_sync = 100;
    auto svc = make(c);
    replicas_.ack({0, 0});
    FakeAppend app{&store_};
    Outcome o;
    svc->put(true, app.fn(), o.cb());
    ASSERT_EQ(o.calls, 1);
    EXPECT_EQ(o.code(), RC::kSuccess);
    EXPECT_TRUE(o.durability.degraded);
    EXPECT_EQ(o.durability.replicas, 1);
    EXPECT_EQ(o.durability.need_ack_nums, 1);
    EXPECT_EQ(svc->counters().degraded_acks.load(), 1);
    auto info = svc->runtime_info();
    EXPECT_EQ(info["degradedAckTotal"], "1");
    EXPECT_EQ(info["inSyncReplicaNums"], "1");
    EXPECT_EQ(info["needAckNums"], "1");
    EXPECT_EQ(info["needAckNumsDegraded"], "true");
}

TEST_F(ReplicationServiceTest, WaitFalseNeverWaits) {
    auto svc = make(config(ha::BrokerRole::kSyncMaster, 2, 2));
    replicas_.ack({1000});
    FakeAppend app{&store_};
    Outcome o;
    svc->put(false, app.fn(), o.cb());
    ASSERT_EQ(o.calls, 1);
    EXPECT_EQ(o.code(), RC::kSuccess);
    EXPECT_EQ(replicas_.gt.pending(), 0u);
}

TEST_F(ReplicationServiceTest, StoreFailureWinsOverReplication) {
    auto svc = make(config(ha::BrokerRole::kSyncMaster, 2, 2));
    replicas_.ack({1000});
    FakeAppend app{&store_};
    app.status = PutMessageStatus::kFlushDiskTimeout;
    Outcome o;
    svc->put(true, app.fn(), o.cb());
    ASSERT_EQ(o.calls, 1);
    EXPECT_EQ(o.code(), RC::kFlushDiskTimeout);
    EXPECT_EQ(replicas_.gt.pending(), 0u);
    app.status = PutMessageStatus::kCreateMappedFileFailed;
    Outcome o2;
    svc->put(true, app.fn(), o2.cb());
    EXPECT_EQ(o2.code(), RC::kSystemError);
}

TEST_F(ReplicationServiceTest, ShutdownCompletesWaitingPuts) {
    auto svc = make(config(ha::BrokerRole::kSyncMaster, 2, 2));
    replicas_.ack({1000});
    FakeAppend app{&store_};
    Outcome o;
    svc->put(true, app.fn(), o.cb());
    replicas_.gt.shutdown();
    ASSERT_EQ(o.calls, 1);
    EXPECT_EQ(o.code(), RC::kServiceNotAvailable);
}

TEST_F(ReplicationServiceTest, SlaveRefusesProducerWritesLikeRocketMq) {
    auto c = config(ha::BrokerRole::kSlave, 1, 1);
    c.broker_id = 1;
    ReplicationService svc(c, clock_, store_);
    ASSERT_TRUE(svc.start().is_ok()) << "no master address yet: nothing to connect";
    FakeAppend app{&store_};
    Outcome o;
    svc.put(true, app.fn(), o.cb());
    EXPECT_EQ(app.calls, 0);
    ASSERT_EQ(o.calls, 1);
    EXPECT_EQ(o.code(), RC::kServiceNotAvailable);
    EXPECT_NE(map_put_status(*o.result).remark->find("messages are put to the slave"),
              std::string::npos);
    EXPECT_EQ(svc.counters().slave_refused.load(), 1);
    auto info = svc.runtime_info();
    EXPECT_EQ(info["haClientConnected"], "false");
    EXPECT_EQ(info["haMasterAddress"], "");
    svc.on_register_result(std::nullopt, std::string("127.0.0.1:10911"));
    EXPECT_EQ(svc.master_addr(), "127.0.0.1:10911");
    svc.shutdown();
}

// The broker's own writes (deliveries, transaction writes, replies) go through the
// replication service like a send: a WAIT=true one waits for the slaves' acks, a WAIT=false one
// does not, and a slave refuses them instead of growing its CommitLog by itself.
TEST_F(ReplicationServiceTest, ReplicatedStorePortPutsThroughTheReplicationService) {
    auto svc = make(config(ha::BrokerRole::kSyncMaster, 2, 2));
    replicas_.ack({0});
    testing::FakeStore fake;
    ReplicatedStorePort port(fake, *svc);
    protocol::MessageExt msg;
    msg.topic = "T";
    msg.body = "delivered";
    std::vector<store::PutMessageResult> done;
    auto record = [&done](store::PutMessageResult r) { done.push_back(std::move(r)); };
    port.put_message(msg, record);
    ASSERT_EQ(fake.puts.size(), 1u);
    EXPECT_TRUE(done.empty()) << "answered before the slave acked";
    replicas_.ack({int64_t{1} << 40});
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].status, PutMessageStatus::kPutOk);

    msg.set_property(protocol::property::kWaitStoreMsgOk, "false");
    port.put_message(msg, record);
    ASSERT_EQ(done.size(), 2u) << "WAIT=false does not wait outside DLedger mode";
    EXPECT_EQ(done[1].status, PutMessageStatus::kPutOk);
    // Master-slave mode keeps RocketMQ's rule for the degraded statuses.
    EXPECT_TRUE(port.put_acknowledged(PutMessageStatus::kFlushSlaveTimeout));
    EXPECT_FALSE(port.put_acknowledged(PutMessageStatus::kServiceNotAvailable));

    auto c = config(ha::BrokerRole::kSlave, 1, 1);
    c.broker_id = 1;
    ReplicationService slave(c, clock_, store_);
    ReplicatedStorePort slave_port(fake, slave);
    slave_port.put_message(msg, record);
    ASSERT_EQ(done.size(), 3u);
    EXPECT_EQ(done[2].status, PutMessageStatus::kServiceNotAvailable);
    EXPECT_EQ(fake.puts.size(), 2u) << "a slave's store never grows by a broker write";
}

TEST(ReplicationConfig, KeysFromBrokerConfigAndValidation) {
    BrokerConfig b;
    b.listen_port = 20911;
    ASSERT_TRUE(b.apply({{"brokerRole", "SYNC_MASTER"},
                         {"totalReplicas", "3"},
                         {"inSyncReplicas", "2"},
                         {"minInSyncReplicas", "1"},
                         {"enableAutoInSyncReplicas", "true"},
                         {"enableSlaveActingMaster", "true"},
                         {"haMaxGapNotInSync", "1024"},
                         {"slaveTimeout", "1500"},
                         {"haSendHeartbeatInterval", "1000"},
                         {"haHousekeepingInterval", "4000"},
                         {"haTransferBatchSize", "65536"},
                         {"requireHandshake", "true"}})
                    .is_ok());
    std::vector<std::string> warnings;
    auto c = make_replication_config(b, &warnings);
    ASSERT_TRUE(c.is_ok()) << c.status().message();
    EXPECT_TRUE(warnings.empty());
    EXPECT_EQ(c->ha_listen_port, 20912) << "haListenPort defaults to listenPort + 1";
    EXPECT_EQ(c->quorum.broker_role, ha::BrokerRole::kSyncMaster);
    EXPECT_EQ(c->quorum.in_sync_replicas, 2);
    EXPECT_EQ(c->quorum.ha_max_gap_not_in_sync, 1024);
    EXPECT_EQ(c->slave_timeout, 1500ms);
    EXPECT_EQ(c->housekeeping_interval, 4000ms);
    EXPECT_EQ(c->ha_transfer_batch_size, 65536);
    EXPECT_TRUE(c->require_handshake);
    EXPECT_EQ(b.ha_server_addr(), "127.0.0.1:20912");

    ASSERT_TRUE(b.set("haListenPort", "30000").is_ok());
    EXPECT_EQ(make_replication_config(b, nullptr)->ha_listen_port, 30000);

    // SYNC_MASTER with inSyncReplicas=1 written out (RocketMQ 5's rules: no wait) is loud.
    BrokerConfig trap;
    ASSERT_TRUE(trap.set("brokerRole", "SYNC_MASTER").is_ok());
    ASSERT_TRUE(trap.set("inSyncReplicas", "1").is_ok());
    warnings.clear();
    ASSERT_TRUE(make_replication_config(trap, &warnings).is_ok());
    ASSERT_FALSE(warnings.empty());
    EXPECT_NE(warnings[0].find("inSyncReplicas"), std::string::npos);

    BrokerConfig bad;
    ASSERT_TRUE(bad.apply({{"totalReplicas", "2"}, {"inSyncReplicas", "3"}}).is_ok());
    auto e = make_replication_config(bad, nullptr);
    ASSERT_FALSE(e.is_ok());
    EXPECT_NE(e.status().message().find("inSyncReplicas"), std::string::npos);
    EXPECT_NE(e.status().message().find("totalReplicas"), std::string::npos);

    BrokerConfig slave;
    ASSERT_TRUE(slave.apply({{"brokerRole", "SLAVE"}, {"brokerId", "0"}}).is_ok());
    EXPECT_FALSE(slave.validate().is_ok());
    EXPECT_FALSE(make_replication_config(slave, nullptr).is_ok());

    BrokerConfig addr;
    ASSERT_TRUE(addr.apply({{"brokerRole", "SLAVE"}, {"brokerId", "1"},
                            {"haMasterAddress", "nohostport"}})
                    .is_ok());
    auto ae = make_replication_config(addr, nullptr);
    ASSERT_FALSE(ae.is_ok());
    EXPECT_NE(ae.status().message().find("haMasterAddress"), std::string::npos);

    BrokerConfig role;
    EXPECT_FALSE(role.set("brokerRole", "MASTER").is_ok() && role.validate().is_ok());
}

// The quorum rules follow which keys the file (or command line) set, through the same
// registry mqbroker and the container load broker.conf with: none of the four quorum keys is
// RocketMQ 4.9.8's meaning, any of them (even at its default) RocketMQ 5's.
TEST(ReplicationConfig, QuorumRulesFollowTheKeysTheFileSet) {
    struct Loaded {
        BrokerConfig broker;
        store::MessageStoreConfig store;
    };
    auto load = [](const std::string& file,
                   const std::vector<std::pair<std::string, std::string>>& cli) {
        auto l = std::make_unique<Loaded>();
        ConfigRegistry r;
        register_broker_config(r, &l->broker);
        register_store_config(r, &l->store);
        EXPECT_TRUE(r.update_from_text(file, "broker.conf", nullptr).is_ok());
        for (const auto& [k, v] : cli) {
            EXPECT_TRUE(r.set(k, v, "command line").is_ok());
        }
        note_keys_set(r, &l->broker);
        return l;
    };
    auto rules = [](const BrokerConfig& b, std::vector<std::string>* w = nullptr) {
        auto c = make_replication_config(b, w);
        EXPECT_TRUE(c.is_ok()) << c.status().message();
        return c.is_ok() ? c->quorum.rules : ha::QuorumRules::kRocketMq5;
    };

    auto old_file = load("brokerRole=SYNC_MASTER\nhaSlaveFallbehindMax=1048576\n", {});
    std::vector<std::string> warnings;
    EXPECT_EQ(rules(old_file->broker, &warnings), ha::QuorumRules::kRocketMq4);
    EXPECT_TRUE(warnings.empty());
    EXPECT_EQ(old_file->broker.to_properties()["quorumRules"], "4.9.8");
    EXPECT_EQ(make_replication_config(old_file->broker, nullptr)->quorum.ha_slave_fallbehind_max,
              1048576);

    auto isr_one = load("brokerRole=SYNC_MASTER\ninSyncReplicas=1\n", {});
    warnings.clear();
    EXPECT_EQ(rules(isr_one->broker, &warnings), ha::QuorumRules::kRocketMq5);
    EXPECT_FALSE(warnings.empty()) << "SYNC_MASTER with inSyncReplicas=1 is warned about";
    EXPECT_EQ(isr_one->broker.to_properties()["quorumRules"], "5");

    for (std::string_view key : ha::kQuorumKeys) {
        const std::string k(key);
        const std::string v = k == "enableAutoInSyncReplicas" ? "false" : "1";
        EXPECT_EQ(rules(load("brokerRole=SYNC_MASTER\n" + k + "=" + v + "\n", {})->broker),
                  ha::QuorumRules::kRocketMq5)
            << k << " in the file";
        EXPECT_EQ(rules(load("brokerRole=SYNC_MASTER\n", {{k, v}})->broker),
                  ha::QuorumRules::kRocketMq5)
            << k << " on the command line";
        BrokerConfig b;
        ASSERT_TRUE(b.set(k, v).is_ok());
        EXPECT_TRUE(b.uses_rocketmq5_quorum_rules()) << k << " through BrokerConfig::set";
    }

    // Built in code: a value other than the default could only have been set.
    BrokerConfig coded;
    coded.broker_role = "SYNC_MASTER";
    EXPECT_EQ(rules(coded), ha::QuorumRules::kRocketMq4);
    coded.in_sync_replicas = 2;
    coded.total_replicas = 2;
    EXPECT_EQ(rules(coded), ha::QuorumRules::kRocketMq5);

    // DLedger and controller mode keep rules of their own.
    auto controller = load(
        "brokerRole=SYNC_MASTER\nenableControllerMode=true\ncontrollerAddr=127.0.0.1:9878\n", {});
    EXPECT_EQ(rules(controller->broker), ha::QuorumRules::kRocketMq5);

    // Derived, never set.
    BrokerConfig derived;
    Status st = derived.set("quorumRules", "5");
    EXPECT_FALSE(st.is_ok());
    EXPECT_NE(st.message().find("inSyncReplicas"), std::string::npos) << st.message();
}

// haAdvertisedAddress (Comet): what a master hands its slaves must be host:port; a bad value
// is refused naming the key.
TEST(ReplicationConfig, HaAdvertisedAddressMustBeHostAndPort) {
    BrokerConfig ok;
    ASSERT_TRUE(ok.set("haAdvertisedAddress", "10.0.0.7:30911").is_ok());
    EXPECT_TRUE(ok.validate().is_ok());
    EXPECT_EQ(ok.ha_advertised_address, "10.0.0.7:30911");
    for (const char* bad : {"10.0.0.7", ":30911", "10.0.0.7:0", "10.0.0.7:70000", "h:x"}) {
        BrokerConfig b;
        ASSERT_TRUE(b.set("haAdvertisedAddress", bad).is_ok());
        const Status s = b.validate();
        ASSERT_FALSE(s.is_ok()) << bad;
        EXPECT_NE(s.message().find("haAdvertisedAddress"), std::string::npos) << s.message();
    }
}

}  // namespace
}  // namespace comet::broker
