// ActingMasterService over 127.0.0.1 against a fake name server (GET_BROKER_MEMBER_GROUP) and a
// fake master (GET_ALL_*): alive count, acting master on and off, the followed master address,
// NOTIFY_MIN_BROKER_ID_CHANGE handling and the background thread's first poll and sync.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "broker/metadata/consumer_offset_manager.h"
#include "broker/metadata/subscription_group_manager.h"
#include "broker/metadata/topic_config_manager.h"
#include "broker/replication/acting_master_service.h"
#include "net/remoting_server.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"
#include "protocol/route_bodies.h"

namespace comet::broker {
namespace {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using std::chrono::seconds;

// One RemotingServer on 127.0.0.1 answering whatever `answer` says; counts requests by code.
class FakePeer {
public:
    using Answer = std::function<protocol::RemotingCommand(const protocol::RemotingCommand&)>;
    FakePeer(std::vector<int32_t> codes, Answer answer) : answer_(std::move(answer)) {
        net::RemotingServerConfig sc;
        sc.name = "FakePeer";
        sc.listen_host = "127.0.0.1";
        sc.io_threads = 1;
        server_ = std::make_unique<net::RemotingServer>(sc);
        auto exec = std::make_shared<net::ThreadPoolExecutor>("FakePeerExec", 1, 100);
        auto proc =
            net::make_processor([this](const net::ConnectionPtr&, protocol::RemotingCommand req,
                                       net::Responder respond) {
                protocol::RemotingCommand resp = answer_(req);
                {
                    std::lock_guard<std::mutex> l(mu_);
                    ++count_[req.code];
                }
                cv_.notify_all();
                respond(std::move(resp));
            });
        for (int32_t c : codes) {
            server_->register_processor(c, proc, exec);
        }
        EXPECT_TRUE(server_->start().is_ok());
    }
    ~FakePeer() { server_->shutdown(); }
    std::string addr() const { return "127.0.0.1:" + std::to_string(server_->port()); }
    bool wait_for(int32_t code, int n) {
        std::unique_lock<std::mutex> l(mu_);
        return cv_.wait_for(l, seconds(10), [&] { return count_[code] >= n; });
    }

private:
    Answer answer_;
    std::unique_ptr<net::RemotingServer> server_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::map<int32_t, int> count_;
};

class ActingMasterServiceTest : public ::testing::Test {
protected:
    ActingMasterServiceTest()
        : namesrv_({Req::kGetBrokerMemberGroup},
                   [this](const protocol::RemotingCommand& req) {
                       std::lock_guard<std::mutex> l(members_mu_);
                       protocol::GetBrokerMemberGroupResponseBody body;
                       body.broker_member_group.cluster = "c1";
                       body.broker_member_group.broker_name = "broker-a";
                       body.broker_member_group.broker_addrs = members_;
                       auto resp = protocol::RemotingCommand::response_to(req, RC::kSuccess);
                       resp.body = body.encode();
                       return resp;
                   }),
          master_({Req::kGetAllTopicConfig, Req::kGetAllConsumerOffset,
                   Req::kGetAllSubscriptionGroupConfig, Req::kGetAllDelayOffset},
                  [this](const protocol::RemotingCommand& req) {
                      auto resp = protocol::RemotingCommand::response_to(req, RC::kSuccess);
                      if (req.code == Req::kGetAllTopicConfig) {
                          resp.body = m_topics_.encode(false);
                      } else if (req.code == Req::kGetAllConsumerOffset) {
                          resp.body = m_offsets_.encode(false);
                      } else if (req.code == Req::kGetAllSubscriptionGroupConfig) {
                          resp.body = m_groups_.encode(false);
                      }
                      return resp;
                  }) {
        client_.start();
    }
    ~ActingMasterServiceTest() override { client_.shutdown(); }

    void set_members(std::map<int64_t, std::string> m) {
        std::lock_guard<std::mutex> l(members_mu_);
        members_ = std::move(m);
    }

    std::unique_ptr<ActingMasterService> make(int64_t broker_id, bool acting) {
        BrokerConfig cfg;
        cfg.broker_cluster_name = "c1";
        cfg.broker_name = "broker-a";
        cfg.broker_id = broker_id;
        cfg.broker_role = broker_id == 0 ? "ASYNC_MASTER" : "SLAVE";
        cfg.listen_port = 20000 + static_cast<int32_t>(broker_id);
        cfg.namesrv_addr = namesrv_.addr();
        EXPECT_TRUE(cfg.set("enableSlaveActingMaster", acting ? "true" : "false").is_ok());
        holder_ = std::make_unique<BrokerConfigHolder>(cfg);
        ActingMasterService::Deps d;
        d.config = holder_.get();
        d.clock = &clock_;
        d.client = &client_;
        d.tables = {&s_topics_, &s_offsets_, &s_groups_, nullptr, ""};
        auto svc = ActingMasterService::create(std::move(d));
        EXPECT_TRUE(svc.is_ok());
        auto out = std::move(svc).value();
        out->set_master_listener([this](const std::string& a, const std::string& ha) {
            std::lock_guard<std::mutex> l(members_mu_);
            followed_.push_back(a + "|" + ha);
        });
        return out;
    }
    std::vector<std::string> followed() {
        std::lock_guard<std::mutex> l(members_mu_);
        return followed_;
    }

    SystemClock& clock_ = SystemClock::instance();
    BrokerConfig base_;
    std::mutex members_mu_;
    std::map<int64_t, std::string> members_;
    std::vector<std::string> followed_;
    TopicConfigManager m_topics_{base_, clock_, ""};
    ConsumerOffsetManager m_offsets_{""};
    SubscriptionGroupManager m_groups_{clock_, "", true, 16};
    TopicConfigManager s_topics_{base_, clock_, ""};
    ConsumerOffsetManager s_offsets_{""};
    SubscriptionGroupManager s_groups_{clock_, "", true, 16};
    FakePeer namesrv_;
    FakePeer master_;
    net::RemotingClient client_;
    std::unique_ptr<BrokerConfigHolder> holder_;
};

TEST_F(ActingMasterServiceTest, SlaveActsWhileTheMasterIsGoneAndFollowsItBack) {
    auto svc = make(1, true);
    const std::string self = "127.0.0.1:20001";
    set_members({{0, master_.addr()}, {1, self}});
    ASSERT_TRUE(svc->sync_member_group().is_ok());
    EXPECT_EQ(svc->alive_replica_num(), 2);
    EXPECT_FALSE(svc->is_acting_master());

    svc->on_register_result(master_.addr(), "127.0.0.1:1");
    EXPECT_EQ(svc->slave_synchronize().master_addr(), master_.addr());
    ASSERT_TRUE(svc->slave_synchronize().sync_all().is_ok());
    EXPECT_EQ(followed(), (std::vector<std::string>{master_.addr() + "|127.0.0.1:1"}));

    // The master disappears from the name server: this slave (smallest id) acts.
    set_members({{1, self}, {2, "127.0.0.1:20002"}});
    ASSERT_TRUE(svc->sync_member_group().is_ok());
    EXPECT_TRUE(svc->is_acting_master());
    EXPECT_EQ(svc->alive_replica_num(), 2);
    EXPECT_EQ(svc->slave_synchronize().master_addr(), "");
    EXPECT_EQ(svc->runtime_info().at("isActingMaster"), "true");
    EXPECT_EQ(svc->runtime_info().at("minBrokerIdInGroup"), "1");
    // A registration result without master does not disturb the acting master.
    svc->on_register_result("", "");
    EXPECT_TRUE(svc->is_acting_master());

    // The name server notifies that the master is back.
    auto req = protocol::RemotingCommand::request(Req::kNotifyMinBrokerIdChange);
    req.ext_fields = {{"minBrokerId", "0"},
                      {"brokerName", "broker-a"},
                      {"minBrokerAddr", master_.addr()},
                      {"haBrokerAddr", "127.0.0.1:2"}};
    EXPECT_EQ(svc->handle_notify(req).code, RC::kSuccess);
    EXPECT_FALSE(svc->is_acting_master());
    EXPECT_EQ(svc->slave_synchronize().master_addr(), master_.addr());
    auto f = followed();
    ASSERT_EQ(f.size(), 3u);
    EXPECT_EQ(f[1], "|");
    EXPECT_EQ(f[2], master_.addr() + "|127.0.0.1:2");

    auto bad = protocol::RemotingCommand::request(Req::kNotifyMinBrokerIdChange);
    EXPECT_EQ(svc->handle_notify(bad).code, RC::kSystemError);
}

TEST_F(ActingMasterServiceTest, ThreadPollsTheGroupAndSyncsFromTheMaster) {
    TopicConfig t;
    t.topic_name = "FromMaster";
    ASSERT_TRUE(m_topics_.update(t).is_ok());
    set_members({{0, master_.addr()}, {1, "127.0.0.1:20001"}});
    auto svc = make(1, true);
    svc->on_register_result(master_.addr(), "127.0.0.1:1");
    svc->start();
    EXPECT_TRUE(namesrv_.wait_for(Req::kGetBrokerMemberGroup, 1));
    EXPECT_TRUE(master_.wait_for(Req::kGetAllSubscriptionGroupConfig, 1));
    svc->shutdown();
    EXPECT_TRUE(s_topics_.select("FromMaster"));
    EXPECT_EQ(svc->alive_replica_num(), 2);
}

TEST_F(ActingMasterServiceTest, MasterNeverActsAndWithoutTheKeyNothingIsPolled) {
    auto master_svc = make(0, true);
    set_members({{1, "127.0.0.1:20001"}});
    ASSERT_TRUE(master_svc->sync_member_group().is_ok());
    EXPECT_FALSE(master_svc->is_acting_master());
    EXPECT_EQ(master_svc->alive_replica_num(), 2);

    auto plain = make(1, false);
    EXPECT_FALSE(plain->enable_slave_acting_master());
    auto req = protocol::RemotingCommand::request(Req::kNotifyMinBrokerIdChange);
    req.ext_fields = {{"minBrokerId", "1"}, {"minBrokerAddr", "127.0.0.1:20001"}};
    EXPECT_EQ(plain->handle_notify(req).code, RC::kSuccess);
    EXPECT_FALSE(plain->is_acting_master());
}

}  // namespace
}  // namespace comet::broker
