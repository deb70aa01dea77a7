// Two real BrokerControllers in one process on 127.0.0.1 (ephemeral ports, no name server): a
// SYNC_MASTER (totalReplicas=inSyncReplicas=2) and a SLAVE pointed at it with haMasterAddress.
// Proves: no slave -> SLAVE_NOT_AVAILABLE (stored on the master); the slave catches up; a
// send succeeds only once the slave holds it (replicas=2); the slave refuses producer writes;
// the slave's ConsumeQueue serves the replicated message; runtime info shows the slave.
// Every wait is bounded (deadline loop); everything started is shut down by the fixture.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

#include "broker/broker_controller.h"
#include "net/remoting_client.h"
#include "protocol/json_body.h"
#include "protocol/message_decoder.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::broker {
namespace {

using namespace std::chrono_literals;
using protocol::RemotingCommand;
namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
namespace fs = std::filesystem;

template <typename Pred>
bool wait_until(Pred pred, std::chrono::milliseconds limit = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!pred()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(10ms);
    }
    return true;
}

RemotingCommand send_request(const std::string& topic, const std::string& body,
                             const std::string& keys = "") {
    RemotingCommand r = RemotingCommand::request(Req::kSendMessageV2);
    const std::string props = keys.empty() ? std::string() : "KEYS\x01" + keys + "\x02";
    r.ext_fields = {{"a", "PG"}, {"b", topic}, {"c", "TBW102"}, {"d", "4"}, {"e", "0"},
                    {"f", "0"},  {"g", "1700000000000"}, {"h", "0"}, {"i", props}};
    r.body = body;
    return r;
}

class ReplicationE2E : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() /
                ("comet-repl-e2e-" + std::to_string(::getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root_);
        client_.start();
    }
    void TearDown() override {
        client_.shutdown();
        if (slave_) {
            slave_->shutdown();
        }
        if (master_) {
            master_->shutdown();
        }
        slave_.reset();
        master_.reset();
        fs::remove_all(root_);
    }

    BrokerConfig base(const std::string& dir) {
        BrokerConfig c;
        c.broker_name = "broker-a";
        c.listen_host = "127.0.0.1";
        c.listen_port = 0;
        c.store_path_root_dir = (root_ / dir).string();
        return c;
    }
    static store::MessageStoreConfig small_store() {
        store::MessageStoreConfig s;
        s.mapped_file_size_commit_log = 1024 * 1024;
        s.mapped_file_size_consume_queue = 300 * 20;
        return s;
    }

    void start_master(int32_t total, int32_t isr) {
        BrokerConfig c = base("master");
        c.broker_role = "SYNC_MASTER";
        c.total_replicas = total;
        c.in_sync_replicas = isr;
        c.slave_timeout = 3000;
        master_ = std::make_unique<BrokerController>(c, SystemClock::instance(), small_store());
        ASSERT_TRUE(master_->initialize().is_ok());
        ASSERT_TRUE(master_->start().is_ok());
        ASSERT_NE(master_->replication()->ha_port(), 0);
    }
    void start_slave() {
        BrokerConfig c = base("slave");
        c.broker_role = "SLAVE";
        c.broker_id = 1;
        c.ha_master_address =
            "127.0.0.1:" + std::to_string(master_->replication()->ha_port());
        slave_ = std::make_unique<BrokerController>(c, SystemClock::instance(), small_store());
        ASSERT_TRUE(slave_->initialize().is_ok());
        ASSERT_TRUE(slave_->start().is_ok());
    }

    RemotingCommand call(BrokerController& b, RemotingCommand req) {
        auto r = client_.invoke_sync("127.0.0.1:" + std::to_string(b.port()), std::move(req), 10s);
        EXPECT_TRUE(r.is_ok()) << r.status().message();
        return r.is_ok() ? std::move(r).value() : RemotingCommand{};
    }
    int64_t max_phy(BrokerController& b) {
        return b.store_adapter()->store().get_max_phy_offset().value();
    }

    fs::path root_;
    net::RemotingClient client_;
    std::unique_ptr<BrokerController> master_;
    std::unique_ptr<BrokerController> slave_;
};

TEST_F(ReplicationE2E, SyncMasterWaitsForTheSlaveAndTheSlaveServesTheMessage) {
    start_master(2, 2);
    const std::string topic = "ReplTopic";

    // No slave connected: stored on the master, answered SLAVE_NOT_AVAILABLE (header filled).
    RemotingCommand lonely = call(*master_, send_request(topic, "before-slave"));
    EXPECT_EQ(lonely.code, RC::kSlaveNotAvailable);
    EXPECT_NE(lonely.ext("msgId"), nullptr);
    EXPECT_EQ(master_->replication()->counters().slave_not_available.load(), 1);
    const int64_t first_end = max_phy(*master_);
    ASSERT_GT(first_end, 0);

    // The slave connects and copies what the master already has.
    start_slave();
    ASSERT_TRUE(wait_until([&] {
        auto acks = master_->replication()->ha_service()->slave_ack_offsets();
        return acks.size() == 1 && acks[0] == first_end;
    })) << "slave never caught up";
    EXPECT_EQ(max_phy(*slave_), first_end);

    // Now a send succeeds only after the slave holds it.
    for (int i = 0; i < 5; ++i) {
        RemotingCommand ok = call(*master_, send_request(topic, "msg-" + std::to_string(i),
                                                         "key-" + std::to_string(i)));
        ASSERT_EQ(ok.code, RC::kSuccess) << ok.remark.value_or("");
        ASSERT_NE(ok.ext("replicas"), nullptr);
        EXPECT_EQ(*ok.ext("replicas"), "2");
        EXPECT_GE(max_phy(*slave_), max_phy(*master_)) << "acked before the slave held it";
    }
    EXPECT_EQ(master_->replication()->counters().quorum_acks.load(), 5);

    // The slave refuses producer writes the way RocketMQ does.
    RemotingCommand refused = call(*slave_, send_request(topic, "to-slave"));
    EXPECT_EQ(refused.code, RC::kServiceNotAvailable);
    EXPECT_NE(refused.remark.value_or("").find("messages are put to the slave"),
              std::string::npos);

    // The slave's reput builds its ConsumeQueue from the replicated bytes.
    StoreAdapter& slave_store = *slave_->store_adapter();
    ASSERT_TRUE(wait_until([&] { return slave_store.max_offset_in_queue(topic, 0) == 6; }));
    store::GetMessageResult got = slave_store.get_message("CG", topic, 0, 0, 32, nullptr);
    ASSERT_EQ(got.messages.size(), 6u);
    auto last = protocol::decode_message(got.messages.back().bytes());
    ASSERT_TRUE(last.is_ok());
    EXPECT_EQ(last->body, "msg-4");
    // ... and its key index.
    ASSERT_TRUE(wait_until([&] {
        return slave_store.query_message(topic, "key-3", 32, 0, INT64_MAX).messages.size() == 1;
    })) << "slave index never found key-3";

    // Runtime info on both sides.
    RemotingCommand info = call(*master_, RemotingCommand::request(Req::kGetBrokerRuntimeInfo));
    ASSERT_EQ(info.code, RC::kSuccess);
    EXPECT_NE(info.body.find("\"inSyncReplicaNums\":\"2\""), std::string::npos) << info.body;
    EXPECT_NE(info.body.find("haConnectionInfo.0"), std::string::npos) << info.body;
    EXPECT_NE(info.body.find("\"quorumAckTotal\":\"5\""), std::string::npos) << info.body;
    RemotingCommand sinfo = call(*slave_, RemotingCommand::request(Req::kGetBrokerRuntimeInfo));
    EXPECT_NE(sinfo.body.find("\"haClientConnected\":\"true\""), std::string::npos) << sinfo.body;
    // Member group / acting master figures (ActingMasterService) are part of it too.
    EXPECT_NE(info.body.find("\"isActingMaster\":\"false\""), std::string::npos) << info.body;
    EXPECT_NE(sinfo.body.find("\"minBrokerIdInGroup\""), std::string::npos) << sinfo.body;
    EXPECT_NE(sinfo.body.find("\"slaveSyncRounds\""), std::string::npos) << sinfo.body;
}

TEST_F(ReplicationE2E, SlaveGoneMeansSlaveNotAvailableAgain) {
    start_master(2, 2);
    start_slave();
    ASSERT_TRUE(wait_until([&] {
        return master_->replication()->ha_service()->slave_ack_offsets().size() == 1;
    }));
    RemotingCommand ok = call(*master_, send_request("T2", "one"));
    ASSERT_EQ(ok.code, RC::kSuccess);
    slave_->shutdown();
    slave_.reset();
    ASSERT_TRUE(wait_until([&] {
        return master_->replication()->ha_service()->slave_ack_offsets().empty();
    }));
    RemotingCommand none = call(*master_, send_request("T2", "two"));
    EXPECT_EQ(none.code, RC::kSlaveNotAvailable);
}

}  // namespace
}  // namespace comet::broker
