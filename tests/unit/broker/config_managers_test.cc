#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/clock.h"
#include "broker/metadata/broker_config.h"
#include "broker/metadata/config_file.h"
#include "broker/metadata/consumer_offset_manager.h"
#include "broker/metadata/delay_levels.h"
#include "broker/metadata/json_file.h"
#include "broker/metadata/subscription_group_manager.h"
#include "broker/metadata/topic_config_manager.h"

namespace comet::broker {
namespace {

namespace fs = std::filesystem;

class TempDir {
public:
    TempDir() {
        path_ = fs::temp_directory_path() /
                ("comet_broker_test_" + std::to_string(::getpid()) + "_" + std::to_string(seq_++));
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~TempDir() { fs::remove_all(path_); }
    std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
    static inline int seq_ = 0;
    fs::path path_;
};

std::string vector_file(const std::string& name) {
    return std::string(COMET_SOURCE_DIR) + "/tests/unit/broker/testdata/" + name;
}

TEST(JsonFile, QuotesBareKeysOutsideStrings) {
    EXPECT_EQ(quote_bare_keys(R"({0:1,"a:b":{12:3, -1 : 4},"s":"{5:6}","arr":[1,2]})"),
              R"({"0":1,"a:b":{"12":3, "-1" : 4},"s":"{5:6}","arr":[1,2]})");
}

TEST(JsonFile, AtomicWriteKeepsBackup) {
    TempDir dir;
    const std::string p = dir.file("config/x.json");
    ASSERT_TRUE(write_file_atomic(p, "{\"v\":1}").is_ok());
    ASSERT_TRUE(write_file_atomic(p, "{\"v\":2}").is_ok());
    EXPECT_EQ(read_file(p).value(), "{\"v\":2}");
    EXPECT_EQ(read_file(p + ".bak").value(), "{\"v\":1}");
    EXPECT_FALSE(fs::exists(p + ".tmp"));
    // A torn main file falls back to the backup.
    std::ofstream(p, std::ios::trunc) << "{\"v\":";
    EXPECT_EQ(read_config_file(p).value(), "{\"v\":1}");
    EXPECT_EQ(read_config_file(dir.file("missing.json")).status().code(), Errc::kNotFound);
}

// The cycle every config table goes through: nothing to load on a fresh store, an indented file
// with the previous version kept as .bak, the backup when the file is torn; "" = memory only.
TEST(ConfigFile, LoadsPersistsAndFallsBackToTheBackup) {
    TempDir dir;
    ConfigFile file(dir.file("config/t.json"));
    int decoded = 0;
    std::string seen;
    auto decode = [&](std::string_view text) {
        ++decoded;
        seen = std::string(text);
        return Status::ok();
    };
    ASSERT_TRUE(file.load(decode).is_ok());
    EXPECT_EQ(decoded, 0);
    ASSERT_TRUE(file.persist([] { return std::string(R"({"a":{"b":1}})"); }).is_ok());
    ASSERT_TRUE(file.persist([] { return std::string(R"({"a":{"b":2}})"); }).is_ok());
    EXPECT_EQ(read_file(file.path()).value(), "{\n    \"a\": {\n        \"b\": 2\n    }\n}");
    std::ofstream(file.path(), std::ios::trunc) << "{\"a\":";
    ASSERT_TRUE(file.load(decode).is_ok());
    EXPECT_EQ(decoded, 1);
    EXPECT_EQ(seen, "{\n    \"a\": {\n        \"b\": 1\n    }\n}");
    EXPECT_EQ(file.load([](std::string_view) { return Status(Errc::kCorruption, "bad"); }).code(),
              Errc::kCorruption);
    ConfigFile memory("");
    EXPECT_TRUE(memory.persist([] { return std::string("{}"); }).is_ok());
    EXPECT_TRUE(memory.load(decode).is_ok());
    EXPECT_EQ(decoded, 1);
}

TEST(BrokerConfig, DefaultsMatchRocketMq) {
    BrokerConfig c;
    auto p = c.to_properties();
    EXPECT_EQ(p["brokerClusterName"], "DefaultCluster");
    EXPECT_EQ(p["brokerId"], "0");
    EXPECT_EQ(p["listenPort"], "10911");
    EXPECT_EQ(p["autoCreateTopicEnable"], "true");
    EXPECT_EQ(p["defaultTopicQueueNums"], "8");
    EXPECT_EQ(p["brokerPermission"], "6");
    EXPECT_EQ(p["registerNameServerPeriod"], "30000");
    EXPECT_EQ(p["shortPollingTimeMills"], "1000");
    EXPECT_EQ(p["messageDelayLevel"], "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h");
    EXPECT_TRUE(c.validate().is_ok());
}

TEST(BrokerConfig, ParsesPropertiesAndRejectsBadValues) {
    auto props = parse_properties(
        "# comment\nbrokerName = broker-b\nlistenPort=20911\nnamesrvAddr=a:9876; b:9876\n"
        "autoCreateTopicEnable=false\nmapedFileSizeCommitLog=1024\n\n");
    ASSERT_TRUE(props.is_ok());
    BrokerConfig c;
    ASSERT_TRUE(c.apply(props.value()).is_ok());
    EXPECT_EQ(c.broker_name, "broker-b");
    EXPECT_EQ(c.listen_port, 20911);
    EXPECT_FALSE(c.auto_create_topic_enable);
    EXPECT_EQ(c.namesrv_list(), (std::vector<std::string>{"a:9876", "b:9876"}));
    EXPECT_EQ(c.extra["mapedFileSizeCommitLog"], "1024");
    EXPECT_EQ(c.broker_addr(), "127.0.0.1:20911");

    Status st = c.set("listenPort", "abc");
    EXPECT_EQ(st.code(), Errc::kInvalidArgument);
    EXPECT_NE(st.message().find("listenPort"), std::string::npos);
    EXPECT_FALSE(c.set("longPollingEnable", "yes").is_ok());
    EXPECT_FALSE(parse_properties("novalue\n").is_ok());
    ASSERT_TRUE(c.set("messageDelayLevel", "1s 2x").is_ok());
    EXPECT_FALSE(c.validate().is_ok());
}

TEST(BrokerConfig, ControllerModeNeedsControllersAndRefusesFixedRoleKeys) {
    BrokerConfig c;
    ASSERT_TRUE(c.set("enableControllerMode", "true").is_ok());
    Status st = c.validate();
    EXPECT_EQ(st.code(), Errc::kInvalidArgument);
    EXPECT_NE(st.message().find("controllerAddr is not set"), std::string::npos) << st.message();
    ASSERT_TRUE(c.set("controllerAddr", "127.0.0.1:9878;127.0.0.1:9868").is_ok());
    EXPECT_TRUE(c.validate().is_ok()) << c.validate().message();
    EXPECT_EQ(c.controller_list(),
              (std::vector<std::string>{"127.0.0.1:9878", "127.0.0.1:9868"}));
    struct Case {
        const char* key;
        const char* value;
        const char* expect;
    };
    const std::vector<Case> cases = {
        {"controllerAddr", "127.0.0.1", "controllerAddr: '127.0.0.1' is not host:port"},
        {"haMasterAddress", "127.0.0.1:10912", "haMasterAddress=127.0.0.1:10912 contradicts"},
        {"enableSlaveActingMaster", "true", "enableSlaveActingMaster=true contradicts"},
        {"brokerHeartbeatInterval", "20000", "controllerHeartBeatTimeoutMills 1000 must exceed"},
        {"checkSyncStateSetPeriod", "0", "checkSyncStateSetPeriod"},
        {"enableDLegerCommitLog", "true", "choose one HA mode"},
    };
    for (const Case& k : cases) {
        BrokerConfig b = c;
        ASSERT_TRUE(b.set(k.key, k.value).is_ok()) << k.key;
        if (std::string(k.key) == "enableDLegerCommitLog") {
            ASSERT_TRUE(b.set("dLegerPeers", "n0-127.0.0.1:40911").is_ok());
            ASSERT_TRUE(b.set("dLegerSelfId", "n0").is_ok());
        }
        Status bad = b.validate();
        EXPECT_EQ(bad.code(), Errc::kInvalidArgument) << k.key;
        EXPECT_NE(bad.message().find(k.expect), std::string::npos) << bad.message();
    }
    ASSERT_TRUE(c.set("storePathRootDir", "/data/broker").is_ok());
    EXPECT_EQ(c.epoch_file_path(), "/data/broker/epochFileCheckpoint");
    EXPECT_EQ(c.broker_identity_path(), "/data/broker/brokerIdentity");
}

TEST(BrokerConfig, RuntimeUpdateRefusesStartupOnlyKeys) {
    BrokerConfig c;
    c.broker_role = "SYNC_MASTER";
    EXPECT_TRUE(c.check_runtime_update({{"defaultTopicQueueNums", "4"}}).is_ok());
    EXPECT_TRUE(c.check_runtime_update({{"brokerRole", " SYNC_MASTER"}}).is_ok());
    for (const char* key : {"brokerRole", "flushDiskType", "inSyncReplicas", "totalReplicas",
                            "enableDLegerCommitLog", "brokerName", "slaveTimeout"}) {
        Status st = c.check_runtime_update({{key, "ASYNC_MASTER"}});
        ASSERT_FALSE(st.is_ok()) << key;
        EXPECT_NE(st.message().find(std::string(key) + " is read only at start-up"),
                  std::string::npos)
            << st.message();
    }
}

TEST(BrokerConfig, ServerSelectorThreadsDefaultsToOnePerCore) {
    BrokerConfig c;
    EXPECT_EQ(c.server_selector_threads, 0);  // 0: one I/O thread per core
    ASSERT_TRUE(c.set("serverSelectorThreads", "2").is_ok());
    EXPECT_EQ(c.server_selector_threads, 2);
    EXPECT_TRUE(c.validate().is_ok());
    ASSERT_TRUE(c.set("serverSelectorThreads", "-1").is_ok());
    EXPECT_FALSE(c.validate().is_ok());
}

TEST(DelayLevels, ParsesDefaultTable) {
    auto d = DelayLevels::parse(kDefaultMessageDelayLevel);
    ASSERT_TRUE(d.is_ok());
    EXPECT_EQ(d->max_level(), 18);
    EXPECT_EQ(d->delay_millis(1), 1000);
    EXPECT_EQ(d->delay_millis(5), 60000);
    EXPECT_EQ(d->delay_millis(18), 2 * 3600 * 1000);
    EXPECT_EQ(d->clamp(40), 18);
    EXPECT_EQ(d->clamp(0), 1);
    EXPECT_FALSE(DelayLevels::parse("").is_ok());
    EXPECT_FALSE(DelayLevels::parse("5").is_ok());
}

TEST(TopicConfigManager, SystemTopicsAndAutoCreate) {
    ManualClock clock;
    BrokerConfig cfg;
    TopicConfigManager m(cfg, clock, "");
    auto tbw = m.select("TBW102");
    ASSERT_TRUE(tbw.has_value());
    EXPECT_EQ(tbw->perm, 7);
    EXPECT_EQ(tbw->write_queue_nums, 8);
    ASSERT_TRUE(m.select("SCHEDULE_TOPIC_XXXX").has_value());
    EXPECT_EQ(m.select("SCHEDULE_TOPIC_XXXX")->read_queue_nums, 18);
    EXPECT_TRUE(m.is_system_topic("DefaultCluster"));

    const auto v0 = m.data_version();
    auto r = m.create_in_send("NewTopic", "TBW102", 4, 0);
    ASSERT_TRUE(r.created);
    EXPECT_EQ(r.config->write_queue_nums, 4);
    EXPECT_EQ(r.config->perm, 6);
    EXPECT_EQ(m.data_version().counter, v0.counter + 1);
    // Second call finds it.
    EXPECT_FALSE(m.create_in_send("NewTopic", "TBW102", 4, 0).created);
    // A client asking for more queues than the default topic has gets the default's count.
    EXPECT_EQ(m.create_in_send("Big", "TBW102", 100, 0).config->write_queue_nums, 8);
    // No inherit bit -> not created.
    EXPECT_FALSE(m.create_in_send("X", "SELF_TEST_TOPIC", 4, 0).config.has_value());
    EXPECT_FALSE(m.create_in_send("X", "NoSuchDefault", 4, 0).config.has_value());
}

TEST(TopicConfigManager, AutoCreateDisabledHasNoTbw102) {
    ManualClock clock;
    BrokerConfig cfg;
    cfg.auto_create_topic_enable = false;
    TopicConfigManager m(cfg, clock, "");
    EXPECT_FALSE(m.select("TBW102").has_value());
    EXPECT_FALSE(m.create_in_send("T", "TBW102", 4, 0).config.has_value());
}

TEST(TopicConfigManager, PersistsAndReloads) {
    TempDir dir;
    ManualClock clock;
    BrokerConfig cfg;
    const std::string path = dir.file("config/topics.json");
    {
        TopicConfigManager m(cfg, clock, path);
        TopicConfig t;
        t.topic_name = "Orders";
        t.read_queue_nums = 3;
        t.write_queue_nums = 3;
        t.topic_filter_type = TopicFilterType::kMultiTag;
        ASSERT_TRUE(m.update(t).is_ok());
        TopicConfig bad;
        bad.topic_name = "bad name";
        EXPECT_FALSE(m.update(bad).is_ok());
    }
    TopicConfigManager again(cfg, clock, path);
    ASSERT_TRUE(again.load().is_ok());
    auto t = again.select("Orders");
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->read_queue_nums, 3);
    EXPECT_EQ(t->topic_filter_type, TopicFilterType::kMultiTag);
    EXPECT_EQ(again.data_version().counter, 1);
    EXPECT_TRUE(again.remove("Orders"));
    EXPECT_FALSE(again.remove("Orders"));
}

TEST(TopicConfigManager, LoadsRocketMqFile) {
    ManualClock clock;
    BrokerConfig cfg;
    TopicConfigManager m(cfg, clock, vector_file("topics.json"));
    ASSERT_TRUE(m.load().is_ok());
    auto t = m.select("VecTopic");
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->write_queue_nums, 4);
    EXPECT_EQ(t->perm, 6);
    EXPECT_EQ(m.data_version().counter, 5);
    EXPECT_EQ(m.data_version().timestamp, 1796061470949);
}

// The register body and GET_ALL_TOPIC_CONFIG carry this wrapper: a topic without attributes is
// written as 4.9.8 writes it (no "attributes" member), one with attributes keeps them.
TEST(TopicConfigManager, EncodesTopicsAsRocketMq498) {
    ManualClock clock;
    BrokerConfig cfg;
    TopicConfigManager m(cfg, clock, "");
    TopicConfig plain;
    plain.topic_name = "Plain";
    plain.read_queue_nums = 4;
    plain.write_queue_nums = 4;
    ASSERT_TRUE(m.update(plain).is_ok());
    TopicConfig tagged = plain;
    tagged.topic_name = "Tagged";
    tagged.attributes["+message.type"] = "NORMAL";
    ASSERT_TRUE(m.update(tagged).is_ok());
    const std::string body = m.encode(false);
    EXPECT_NE(body.find(R"("Plain":{"order":false,"perm":6,"readQueueNums":4,)"
                        R"("topicFilterType":"SINGLE_TAG","topicName":"Plain","topicSysFlag":0,)"
                        R"("writeQueueNums":4})"),
              std::string::npos)
        << body;
    EXPECT_NE(body.find(R"("Tagged":{"attributes":{"+message.type":"NORMAL"},"order":false,)"),
              std::string::npos)
        << body;
    TopicConfigManager copy(cfg, clock, "");
    ASSERT_TRUE(copy.decode(m.encode(true)).is_ok());
    EXPECT_EQ(copy.select("Tagged"), tagged);
    EXPECT_EQ(copy.data_version(), m.data_version());
    // The same decoder as the wire (fastjson-like): numeric strings read as numbers, anything
    // else is a corrupt file rather than a silent 0.
    ASSERT_TRUE(
        copy.decode(R"({"dataVersion":{"counter":"7","timestamp":5},"topicConfigTable":{}})")
            .is_ok());
    EXPECT_EQ(copy.data_version(), (DataVersion{.timestamp = 5, .counter = 7}));
    EXPECT_EQ(copy.decode(R"({"dataVersion":{"counter":"x"}})").code(), Errc::kCorruption);
    EXPECT_EQ(copy.decode(R"({"topicConfigTable":{"T":{"perm":6}}})").code(), Errc::kCorruption);
}

TEST(TopicValidator, Names) {
    EXPECT_TRUE(validate_topic("Topic_A-1%|").is_ok());
    EXPECT_FALSE(validate_topic("").is_ok());
    EXPECT_FALSE(validate_topic("a b").is_ok());
    EXPECT_FALSE(validate_topic(std::string(128, 'a')).is_ok());
    EXPECT_TRUE(validate_topic("%RETRY%" + std::string(200, 'a')).is_ok());
    EXPECT_TRUE(is_not_allowed_send_topic("SCHEDULE_TOPIC_XXXX"));
    EXPECT_EQ(retry_topic("g"), "%RETRY%g");
    EXPECT_EQ(dlq_topic("g"), "%DLQ%g");
}

TEST(SubscriptionGroupManager, AutoCreatePersistReload) {
    TempDir dir;
    ManualClock clock;
    const std::string path = dir.file("config/subscriptionGroup.json");
    {
        SubscriptionGroupManager m(clock, path, true, 5);
        auto g = m.find("CG");
        ASSERT_TRUE(g.has_value());
        EXPECT_EQ(g->retry_max_times, 5);
        EXPECT_EQ(g->retry_queue_nums, 1);
    }
    SubscriptionGroupManager again(clock, path, false);
    ASSERT_TRUE(again.load().is_ok());
    EXPECT_TRUE(again.get("CG").has_value());
    EXPECT_FALSE(again.find("Other").has_value());  // auto-create off
    EXPECT_TRUE(again.find("SELF_TEST_C_GROUP").has_value());  // system group
}

// GET_ALL_SUBSCRIPTIONGROUP_CONFIG and subscriptionGroup.json: 4.9.8 has no group attributes, so
// the (5.x) member is written only when a group has some; both forms survive a reload.
TEST(SubscriptionGroupManager, WritesAttributesOnlyWhenPresent) {
    ManualClock clock;
    SubscriptionGroupManager m(clock, "", false);
    SubscriptionGroupConfig plain;
    plain.group_name = "Plain";
    ASSERT_TRUE(m.update(plain).is_ok());
    SubscriptionGroupConfig tagged;
    tagged.group_name = "Tagged";
    tagged.attributes["+k"] = "v";
    ASSERT_TRUE(m.update(tagged).is_ok());
    const std::string body = m.encode(false);
    EXPECT_NE(body.find(R"("Plain":{"brokerId":0,"consumeBroadcastEnable":true,)"),
              std::string::npos)
        << body;
    EXPECT_NE(body.find(R"("Tagged":{"attributes":{"+k":"v"},"brokerId":0,)"), std::string::npos)
        << body;
    SubscriptionGroupManager copy(clock, "", false);
    ASSERT_TRUE(copy.decode(m.encode(true)).is_ok());
    EXPECT_EQ(copy.get("Tagged"), tagged);
    EXPECT_EQ(copy.get("Plain"), plain);
    EXPECT_EQ(copy.data_version(), m.data_version());
}

TEST(SubscriptionGroupManager, LoadsRocketMqFile) {
    ManualClock clock;
    SubscriptionGroupManager m(clock, vector_file("subscriptionGroup.json"), false);
    ASSERT_TRUE(m.load().is_ok());
    auto g = m.get("VecConsumerGroup");
    ASSERT_TRUE(g.has_value());
    EXPECT_EQ(g->retry_max_times, 16);
    EXPECT_TRUE(g->consume_enable);
    EXPECT_EQ(m.data_version().counter, 3);
}

TEST(ConsumerOffsetManager, CommitQueryPersist) {
    TempDir dir;
    const std::string path = dir.file("config/consumerOffset.json");
    {
        ConsumerOffsetManager m(path);
        EXPECT_EQ(m.query_offset("G", "T", 0), -1);
        m.commit_offset("G", "T", 0, 12);
        m.commit_offset("G", "T", 3, 7);
        m.commit_offset("H", "T", 0, 1);
        EXPECT_EQ(m.query_offset("G", "T", 0), 12);
        EXPECT_EQ(m.groups_of_topic("T"), (std::set<std::string>{"G", "H"}));
        ASSERT_TRUE(m.persist().is_ok());
    }
    ConsumerOffsetManager again(path);
    ASSERT_TRUE(again.load().is_ok());
    EXPECT_EQ(again.query_offset("G", "T", 3), 7);
    EXPECT_EQ(again.topics_of_group("H"), (std::set<std::string>{"T"}));
    again.remove_topic("T");
    EXPECT_EQ(again.query_offset("G", "T", 3), -1);
}

TEST(ConsumerOffsetManager, LoadsRocketMqFileWithBareKeys) {
    ConsumerOffsetManager m(vector_file("consumerOffset.json"));
    ASSERT_TRUE(m.load().is_ok());
    EXPECT_EQ(m.query_offset("VecConsumerGroup", "VecTopic", 2), 1);
    EXPECT_EQ(m.query_offset("VecAliConsumerGroup", "VecTopic", 3), 2);
    EXPECT_EQ(m.query_offset("VecConsumerGroup", "%RETRY%VecConsumerGroup", 0), 1);
    auto delay = decode_int_offset_table(read_file(vector_file("delayOffset.json")).value(), "d");
    ASSERT_TRUE(delay.is_ok());
    EXPECT_EQ(delay.value().at(3), 2);
    EXPECT_FALSE(m.decode("{\"offsetTable\":{\"a@b\":{\"x\":1}}}").is_ok());
}

}  // namespace
}  // namespace comet::broker
