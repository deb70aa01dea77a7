// Acting-master support in the name server: MinBrokerIdChange queueing, prime-slave routes,
// write-permission wipe, acting master in routes, and NOTIFY_MIN_BROKER_ID_CHANGE sent over
// 127.0.0.1 by a real NamesrvController.
#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>

#include "namesrv/min_broker_id_notifier.h"
#include "namesrv/namesrv_controller.h"
#include "namesrv/route_info_manager.h"
#include "namesrv_test_helper.h"
#include "net/remoting_client.h"
#include "net/remoting_server.h"
#include "protocol/namesrv_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::namesrv {
namespace {

using std::chrono::seconds;

RegisterBrokerRequest member(int64_t id, const std::string& addr, bool acting = true,
                             ChannelId channel = 0) {
    RegisterBrokerRequest r;
    r.cluster_name = "c1";
    r.broker_name = "broker-a";
    r.broker_id = id;
    r.broker_addr = addr;
    r.ha_server_addr = addr + "-ha";
    r.enable_acting_master = acting;
    r.channel = channel;
    r.data_version = DataVersion{.timestamp = 1, .counter = 1};
    TopicConfig tc;
    tc.topic_name = "T";
    tc.read_queue_nums = 4;
    tc.write_queue_nums = 4;
    tc.perm = 6;
    r.topic_config_table["T"] = tc;
    return r;
}

class MinBrokerIdTest : public ::testing::Test {
protected:
    void reg(const RegisterBrokerRequest& r) {
        ASSERT_TRUE(rim_.register_broker(r).is_ok());
        ASSERT_TRUE(rim_.check_invariants());
    }
    ManualClock clock_;
    RouteInfoManager rim_{clock_, seconds(120)};
};

TEST_F(MinBrokerIdTest, MasterLeavingNotifiesTheSlavesWithTheNewMinimum) {
    reg(member(0, "m:1"));
    reg(member(1, "s1:1"));
    reg(member(2, "s2:1"));
    EXPECT_TRUE(rim_.take_min_broker_id_changes().empty());  // larger ids: no change

    rim_.unregister_broker("c1", "m:1", "broker-a", 0);
    auto changes = rim_.take_min_broker_id_changes();
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0].broker_name, "broker-a");
    EXPECT_EQ(changes[0].min_broker_id, 1);
    EXPECT_EQ(changes[0].min_broker_addr, "s1:1");
    EXPECT_EQ(changes[0].offline_broker_addr, "m:1");
    EXPECT_EQ(changes[0].notify_addrs, (std::vector<std::string>{"s1:1", "s2:1"}));
    EXPECT_TRUE(rim_.take_min_broker_id_changes().empty());  // drained

    // No master left: the group's queues are read-only in the route.
    auto route = rim_.pick_topic_route_data("T");
    ASSERT_TRUE(route);
    ASSERT_EQ(route->queue_datas.size(), 1u);
    EXPECT_EQ(route->queue_datas[0].perm, 4);
    EXPECT_FALSE(route->broker_datas[0].broker_addrs.contains(0));

    // The master returns: the others (not the new minimum itself) hear of it.
    reg(member(0, "m:1"));
    changes = rim_.take_min_broker_id_changes();
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0].min_broker_id, 0);
    EXPECT_EQ(changes[0].min_broker_addr, "m:1");
    EXPECT_TRUE(changes[0].offline_broker_addr.empty());
    EXPECT_EQ(changes[0].ha_broker_addr, "m:1-ha");
    EXPECT_EQ(changes[0].notify_addrs, (std::vector<std::string>{"s1:1", "s2:1"}));
    route = rim_.pick_topic_route_data("T");
    EXPECT_EQ(route->queue_datas[0].perm, 6);  // the master's topics again
}

TEST_F(MinBrokerIdTest, SlaveLeavingIsNoChangeAndOldGroupsAreNotNotified) {
    reg(member(0, "m:1"));
    reg(member(1, "s1:1"));
    rim_.unregister_broker("c1", "s1:1", "broker-a", 1);
    EXPECT_TRUE(rim_.take_min_broker_id_changes().empty());

    RegisterBrokerRequest old_m = member(0, "om:1", false);
    old_m.broker_name = "broker-b";
    RegisterBrokerRequest old_s = member(1, "os:1", false);
    old_s.broker_name = "broker-b";
    reg(old_m);
    reg(old_s);
    rim_.unregister_broker("c1", "om:1", "broker-b", 0);
    EXPECT_TRUE(rim_.take_min_broker_id_changes().empty());
    // Without acting master the master's queue data stays writable (RocketMQ 4 behaviour).
    auto route = rim_.pick_topic_route_data("T");
    ASSERT_TRUE(route);
    int seen = 0;
    for (const auto& qd : route->queue_datas) {
        if (qd.broker_name == "broker-b") {
            EXPECT_EQ(qd.perm, 6);
            ++seen;
        }
    }
    EXPECT_EQ(seen, 1) << "broker-b's queue data is missing from the route";
}

TEST_F(MinBrokerIdTest, ExpiryAndChannelCloseQueueChangesToo) {
    reg(member(0, "m:1", true, 11));
    reg(member(1, "s1:1", true, 12));
    EXPECT_EQ(rim_.on_channel_destroy(11), (std::vector<std::string>{"m:1"}));
    auto changes = rim_.take_min_broker_id_changes();
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0].offline_broker_addr, "m:1");
    EXPECT_EQ(changes[0].notify_addrs, (std::vector<std::string>{"s1:1"}));

    reg(member(0, "m:1", true, 13));
    (void)rim_.take_min_broker_id_changes();
    clock_.advance(seconds(60));
    rim_.update_broker_info_update_timestamp("c1", "s1:1");
    clock_.advance(seconds(61));
    auto expired = rim_.scan_not_active_broker();
    ASSERT_EQ(expired.size(), 1u);
    EXPECT_EQ(expired[0].broker_addr, "m:1");
    changes = rim_.take_min_broker_id_changes();
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0].min_broker_id, 1);
}

TEST_F(MinBrokerIdTest, PrimeSlaveRegistersReadOnlyQueuesAndActsAsMasterInRoutes) {
    // Only slaves: the smallest one's topics make a read-only route.
    reg(member(2, "s2:1"));
    reg(member(1, "s1:1"));
    auto route = rim_.pick_topic_route_data("T");
    ASSERT_TRUE(route);
    EXPECT_EQ(route->queue_datas[0].perm, 4);
    EXPECT_EQ(route->broker_datas[0].broker_addrs,
              (std::map<int64_t, std::string>{{1, "s1:1"}, {2, "s2:1"}}));

    rim_.set_support_acting_master(true);
    route = rim_.pick_topic_route_data("T");
    EXPECT_EQ(route->broker_datas[0].broker_addrs,
              (std::map<int64_t, std::string>{{0, "s1:1"}, {2, "s2:1"}}));

    // A group that does not support acting master is never rewritten.
    RegisterBrokerRequest old_s = member(1, "os:1", false);
    old_s.broker_name = "broker-b";
    reg(old_s);
    route = rim_.pick_topic_route_data("T");
    ASSERT_TRUE(route);
    // Its slave registers no queues (RocketMQ 4), so the topic's route does not show it at all...
    for (const auto& bd : route->broker_datas) {
        EXPECT_NE(bd.broker_name, "broker-b");
    }
    for (const auto& qd : route->queue_datas) {
        EXPECT_NE(qd.broker_name, "broker-b");
    }
    // ...and the cluster table keeps it under its own id 1, not promoted to 0.
    const auto cluster = rim_.get_all_cluster_info();
    ASSERT_TRUE(cluster.broker_addr_table.contains("broker-b"));
    EXPECT_EQ(cluster.broker_addr_table.at("broker-b").broker_addrs,
              (std::map<int64_t, std::string>{{1, "os:1"}}));
}

TEST(MinBrokerIdRequest, HeaderCarriesRocketMqFieldNames) {
    MinBrokerIdChange c;
    c.broker_name = "broker-a";
    c.min_broker_id = 1;
    c.min_broker_addr = "s1:1";
    c.offline_broker_addr = "m:1";
    auto req = make_min_broker_id_change_request(c);
    EXPECT_EQ(req.code, protocol::RequestCode::kNotifyMinBrokerIdChange);
    EXPECT_TRUE(req.flag & protocol::kFlagOneway);
    EXPECT_EQ(req.ext_fields.at("minBrokerId"), "1");
    EXPECT_EQ(req.ext_fields.at("brokerName"), "broker-a");
    EXPECT_EQ(req.ext_fields.at("minBrokerAddr"), "s1:1");
    EXPECT_EQ(req.ext_fields.at("offlineBrokerAddr"), "m:1");
    EXPECT_FALSE(req.ext_fields.contains("haBrokerAddr"));
    auto back = NotifyMinBrokerIdChangeRequestHeader::from_ext(req);
    ASSERT_TRUE(back.is_ok());
    EXPECT_EQ(back->min_broker_id, 1);
}

// A fake broker: a RemotingServer on 127.0.0.1 that records NOTIFY_MIN_BROKER_ID_CHANGE.
class FakeBroker {
public:
    FakeBroker() {
        net::RemotingServerConfig sc;
        sc.name = "FakeBroker";
        sc.listen_host = "127.0.0.1";
        sc.io_threads = 1;
        server_ = std::make_unique<net::RemotingServer>(sc);
        server_->register_processor(
            protocol::RequestCode::kNotifyMinBrokerIdChange,
            net::make_processor(
                [this](const net::ConnectionPtr&, protocol::RemotingCommand req, net::Responder) {
                    std::lock_guard<std::mutex> l(mu_);
                    got_.push_back(std::move(req));
                    cv_.notify_all();
                }),
            std::make_shared<net::ThreadPoolExecutor>("FakeBrokerExec", 1, 100));
        EXPECT_TRUE(server_->start().is_ok());
    }
    ~FakeBroker() { server_->shutdown(); }
    std::string addr() const { return "127.0.0.1:" + std::to_string(server_->port()); }
    // Waits (bounded) for `n` notifications.
    std::vector<protocol::RemotingCommand> wait_for(size_t n) {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait_for(l, seconds(10), [&] { return got_.size() >= n; });
        return got_;
    }

private:
    std::unique_ptr<net::RemotingServer> server_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::vector<protocol::RemotingCommand> got_;
};

TEST(NamesrvNotifyTest, ControllerNotifiesSlavesWhenTheMasterUnregisters) {
    NamesrvConfig config;
    ConfigRegistry registry;
    register_namesrv_config(registry, &config);
    const std::string dir = testing::make_temp_dir("min_broker_id");
    config.kv_config_path = dir + "/kv.json";
    config.listen_host = "127.0.0.1";
    config.listen_port = 0;
    config.notify_min_broker_id_changed = true;
    registry.seal();
    NamesrvController ns(config, registry);
    ASSERT_TRUE(ns.initialize().is_ok());
    ASSERT_TRUE(ns.start().is_ok());
    const std::string ns_addr = "127.0.0.1:" + std::to_string(ns.port());

    FakeBroker slave;
    net::RemotingClient client;
    client.start();
    auto send = [&](int32_t code, int64_t id, const std::string& addr) {
        auto req = protocol::RemotingCommand::request(code);
        if (code == protocol::RequestCode::kRegisterBroker) {
            protocol::RegisterBrokerRequestHeader h;
            h.broker_name = "broker-a";
            h.broker_addr = addr;
            h.cluster_name = "c1";
            h.ha_server_addr = addr + "-ha";
            h.broker_id = id;
            h.enable_acting_master = true;
            h.to_ext(req);
        } else {
            protocol::UnRegisterBrokerRequestHeader h;
            h.broker_name = "broker-a";
            h.broker_addr = addr;
            h.cluster_name = "c1";
            h.broker_id = id;
            h.to_ext(req);
        }
        auto resp = client.invoke_sync(ns_addr, std::move(req), seconds(5));
        ASSERT_TRUE(resp.is_ok()) << resp.status().to_string();
        EXPECT_EQ(resp->code, protocol::ResponseCode::kSuccess);
    };
    send(protocol::RequestCode::kRegisterBroker, 0, "127.0.0.1:1");  // master (nobody listens)
    send(protocol::RequestCode::kRegisterBroker, 1, slave.addr());
    send(protocol::RequestCode::kUnregisterBroker, 0, "127.0.0.1:1");
    auto got = slave.wait_for(1);
    ASSERT_EQ(got.size(), 1u);
    auto h = NotifyMinBrokerIdChangeRequestHeader::from_ext(got[0]);
    ASSERT_TRUE(h.is_ok());
    EXPECT_EQ(h->min_broker_id, 1);
    EXPECT_EQ(h->min_broker_addr, slave.addr());
    EXPECT_EQ(h->offline_broker_addr, "127.0.0.1:1");

    // The master comes back: the slave hears that the minimum is 0 again.
    send(protocol::RequestCode::kRegisterBroker, 0, "127.0.0.1:1");
    got = slave.wait_for(2);
    ASSERT_EQ(got.size(), 2u);
    h = NotifyMinBrokerIdChangeRequestHeader::from_ext(got[1]);
    ASSERT_TRUE(h.is_ok());
    EXPECT_EQ(h->min_broker_id, 0);
    EXPECT_EQ(h->ha_broker_addr, "127.0.0.1:1-ha");
    client.shutdown();
    ns.shutdown();
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace comet::namesrv
