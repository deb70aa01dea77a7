// SlaveSynchronize against a fake master (an Invoke answering from real managers): tables
// replaced only when the DataVersion differs, persisted, offsets merged (putAll), delay offsets
// written and reloaded, failures reported; the reverse offset take-over of a returning master.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "base/clock.h"
#include "broker/metadata/consumer_offset_manager.h"
#include "broker/metadata/json_file.h"
#include "broker/metadata/subscription_group_manager.h"
#include "broker/metadata/topic_config_manager.h"
#include "broker/replication/slave_synchronize.h"
#include "broker/schedule/schedule_message_service.h"
#include "fake_store.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::broker {
namespace {

namespace fs = std::filesystem;
namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;

class SlaveSyncTest : public ::testing::Test {
protected:
    ~SlaveSyncTest() override { fs::remove_all(dir_); }
    std::string file(const std::string& n) const { return (dir_ / n).string(); }

    // The master: answers the four GET_ALL codes from its own managers.
    Result<protocol::RemotingCommand> master_answer(const std::string& addr,
                                                    protocol::RemotingCommand req) {
        calls_.push_back(addr + " " + std::string(protocol::request_code_name(req.code)));
        if (master_down_) {
            return Status::error(Errc::kUnavailable, "connect {} refused", addr);
        }
        auto resp = protocol::RemotingCommand::response_to(req, RC::kSuccess);
        switch (req.code) {
            case Req::kGetAllTopicConfig:
                resp.body = m_topics_.encode(false);
                break;
            case Req::kGetAllConsumerOffset:
                resp.body = m_offsets_.encode(false);
                break;
            case Req::kGetAllDelayOffset:
                resp.body = m_schedule_.encode(false);
                break;
            case Req::kGetAllSubscriptionGroupConfig:
                resp.body = m_groups_.encode(false);
                break;
            default:
                resp.code = RC::kRequestCodeNotSupported;
        }
        return resp;
    }

    SlaveSynchronize make_sync() {
        SlaveSynchronize::Tables t;
        t.topics = &s_topics_;
        t.offsets = &s_offsets_;
        t.groups = &s_groups_;
        t.schedule = &s_schedule_;
        t.delay_offset_path = file("slave/delayOffset.json");
        return SlaveSynchronize(t, [this](const std::string& a, protocol::RemotingCommand r) {
            return master_answer(a, std::move(r));
        });
    }

    static fs::path fresh_dir() {
        static int seq = 0;
        fs::path d = fs::temp_directory_path() / ("comet_slave_sync_" + std::to_string(::getpid()) +
                                                  "_" + std::to_string(seq++));
        fs::remove_all(d);
        fs::create_directories(d);
        return d;
    }

    fs::path dir_ = fresh_dir();  // first: the managers below take paths under it
    ManualClock clock_;
    BrokerConfig cfg_;
    testing::FakeStore store_;
    bool master_down_ = false;
    std::vector<std::string> calls_;
    // master side
    TopicConfigManager m_topics_{cfg_, clock_, file("master/topics.json")};
    ConsumerOffsetManager m_offsets_{file("master/consumerOffset.json")};
    SubscriptionGroupManager m_groups_{clock_, file("master/subscriptionGroup.json"), true, 16};
    ScheduleMessageService m_schedule_{clock_, store_,
                                       DelayLevels::parse(kDefaultMessageDelayLevel).value(),
                                       file("master/delay.json")};
    // slave side
    TopicConfigManager s_topics_{cfg_, clock_, file("slave/topics.json")};
    ConsumerOffsetManager s_offsets_{file("slave/consumerOffset.json")};
    SubscriptionGroupManager s_groups_{clock_, file("slave/subscriptionGroup.json"), true, 16};
    ScheduleMessageService s_schedule_{clock_, store_,
                                       DelayLevels::parse(kDefaultMessageDelayLevel).value(),
                                       file("slave/delayOffset.json")};
};

TEST_F(SlaveSyncTest, NothingWithoutMaster) {
    SlaveSynchronize sync = make_sync();
    EXPECT_TRUE(sync.sync_all().is_ok());
    EXPECT_TRUE(calls_.empty());
    EXPECT_EQ(sync.stats().rounds, 0);
    EXPECT_FALSE(sync.set_master_addr(""));
    EXPECT_TRUE(sync.set_master_addr("m:1"));
    EXPECT_FALSE(sync.set_master_addr("m:1"));
    EXPECT_EQ(sync.master_addr(), "m:1");
}

TEST_F(SlaveSyncTest, CopiesEveryTableAndPersistsThem) {
    TopicConfig t;
    t.topic_name = "OrderTopic";
    t.read_queue_nums = t.write_queue_nums = 3;
    ASSERT_TRUE(m_topics_.update(t).is_ok());
    SubscriptionGroupConfig g;
    g.group_name = "GroupA";
    g.retry_max_times = 5;
    ASSERT_TRUE(m_groups_.update(g).is_ok());
    m_offsets_.commit_offset("GroupA", "OrderTopic", 2, 42);
    s_offsets_.commit_offset("OnlyHere", "OrderTopic", 0, 7);  // kept (putAll)
    s_offsets_.commit_offset("GroupA", "OrderTopic", 2, 1);    // overwritten

    SlaveSynchronize sync = make_sync();
    sync.set_master_addr("m:1");
    ASSERT_TRUE(sync.sync_all().is_ok());
    EXPECT_EQ(calls_.size(), 4u);
    EXPECT_EQ(calls_[0], "m:1 GET_ALL_TOPIC_CONFIG");

    ASSERT_TRUE(s_topics_.select("OrderTopic"));
    EXPECT_EQ(s_topics_.select("OrderTopic")->read_queue_nums, 3);
    EXPECT_EQ(s_topics_.data_version(), m_topics_.data_version());
    ASSERT_TRUE(s_groups_.get("GroupA"));
    EXPECT_EQ(s_groups_.get("GroupA")->retry_max_times, 5);
    EXPECT_EQ(s_groups_.data_version(), m_groups_.data_version());
    EXPECT_EQ(s_offsets_.query_offset("GroupA", "OrderTopic", 2), 42);
    EXPECT_EQ(s_offsets_.query_offset("OnlyHere", "OrderTopic", 0), 7);
    EXPECT_EQ(sync.stats().topic_replacements, 1);
    EXPECT_EQ(sync.stats().group_replacements, 1);

    // Persisted: fresh managers read the copies back.
    TopicConfigManager topics_again(cfg_, clock_, file("slave/topics.json"));
    ASSERT_TRUE(topics_again.load().is_ok());
    EXPECT_TRUE(topics_again.select("OrderTopic"));
    ConsumerOffsetManager offsets_again(file("slave/consumerOffset.json"));
    ASSERT_TRUE(offsets_again.load().is_ok());
    EXPECT_EQ(offsets_again.query_offset("GroupA", "OrderTopic", 2), 42);
}

TEST_F(SlaveSyncTest, SameDataVersionLeavesLocalTablesAlone) {
    TopicConfig first;
    first.topic_name = "First";
    ASSERT_TRUE(m_topics_.update(first).is_ok());
    SubscriptionGroupConfig g;
    g.group_name = "GroupB";
    ASSERT_TRUE(m_groups_.update(g).is_ok());
    SlaveSynchronize sync = make_sync();
    sync.set_master_addr("m:1");
    ASSERT_TRUE(sync.sync_all().is_ok());
    EXPECT_EQ(sync.stats().topic_replacements, 1);
    // The master's version did not move: nothing is replaced...
    ASSERT_TRUE(sync.sync_all().is_ok());
    EXPECT_EQ(sync.stats().topic_replacements, 1);
    EXPECT_EQ(sync.stats().group_replacements, 1);
    // ...while a master change (new version) is copied.
    TopicConfig t;
    t.topic_name = "Later";
    ASSERT_TRUE(m_topics_.update(t).is_ok());
    ASSERT_TRUE(sync.sync_all().is_ok());
    EXPECT_EQ(sync.stats().topic_replacements, 2);
    EXPECT_TRUE(s_topics_.select("Later"));
    // Topics the master deleted disappear from the slave.
    ASSERT_TRUE(m_topics_.remove("Later"));
    ASSERT_TRUE(sync.sync_all().is_ok());
    EXPECT_FALSE(s_topics_.select("Later"));
}

TEST_F(SlaveSyncTest, DelayOffsetsAreWrittenAndReloaded) {
    ASSERT_TRUE(
        write_file_atomic(file("master/delay.json"), R"({"offsetTable":{"1":12,"3":4}})").is_ok());
    ASSERT_TRUE(m_schedule_.load().is_ok());
    SlaveSynchronize sync = make_sync();
    sync.set_master_addr("m:1");
    ASSERT_TRUE(sync.sync_all().is_ok());
    EXPECT_EQ(s_schedule_.offset(1), 12);
    EXPECT_EQ(s_schedule_.offset(3), 4);
    EXPECT_TRUE(fs::exists(file("slave/delayOffset.json")));
}

TEST_F(SlaveSyncTest, FailuresAreReportedAndCounted) {
    SlaveSynchronize sync = make_sync();
    sync.set_master_addr("m:1");
    master_down_ = true;
    Status st = sync.sync_all();
    EXPECT_FALSE(st.is_ok());
    EXPECT_NE(st.message().find("refused"), std::string::npos);
    EXPECT_EQ(sync.stats().failures, 4);
    EXPECT_EQ(sync.stats().rounds, 1);
    // An error answer names the code.
    SlaveSynchronize::Tables t;
    t.topics = &s_topics_;
    SlaveSynchronize refusing(t, [](const std::string&, protocol::RemotingCommand r) {
        return Result<protocol::RemotingCommand>(
            protocol::RemotingCommand::response_to(r, RC::kSystemError, "busy"));
    });
    st = refusing.sync_topic_config("m:1");
    ASSERT_FALSE(st.is_ok());
    EXPECT_NE(st.message().find("GET_ALL_TOPIC_CONFIG"), std::string::npos);
    EXPECT_NE(st.message().find("busy"), std::string::npos);
    // A corrupt body changes nothing.
    SlaveSynchronize corrupt(t, [](const std::string&, protocol::RemotingCommand r) {
        auto resp = protocol::RemotingCommand::response_to(r, RC::kSuccess);
        resp.body = "{not json";
        return Result<protocol::RemotingCommand>(std::move(resp));
    });
    const size_t before = s_topics_.all().size();
    EXPECT_FALSE(corrupt.sync_topic_config("m:1").is_ok());
    EXPECT_EQ(s_topics_.all().size(), before);
}

TEST_F(SlaveSyncTest, ReturningMasterTakesHigherOffsetsFromASlave) {
    // Here the "master" managers play the acting slave, the s_ ones the returning master.
    m_offsets_.commit_offset("G", "T", 0, 50);  // advanced on the acting master
    m_offsets_.commit_offset("G", "T", 1, 3);   // behind the master's own value
    s_offsets_.commit_offset("G", "T", 1, 9);
    SlaveSynchronize sync = make_sync();
    auto moved = sync.take_higher_offsets_from("s1:1");
    ASSERT_TRUE(moved.is_ok()) << moved.status().to_string();
    EXPECT_EQ(*moved, 1);
    EXPECT_EQ(s_offsets_.query_offset("G", "T", 0), 50);
    EXPECT_EQ(s_offsets_.query_offset("G", "T", 1), 9);
}

}  // namespace
}  // namespace comet::broker
