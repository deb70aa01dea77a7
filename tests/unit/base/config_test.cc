#include "base/config.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace comet {
namespace {

enum class FlushDiskType { kAsyncFlush, kSyncFlush };

// A module-style config struct and its registration function.
struct TestStoreConfig {
    int32_t listen_port = 0;
    int64_t mapped_file_size = 0;
    bool auto_create_topic = false;
    double disk_max_used_ratio = 0;
    std::string broker_name;
    std::string broker_role;
    FlushDiskType flush_disk_type = FlushDiskType::kSyncFlush;
    int32_t total_replicas = 0;
    std::atomic<int32_t> broker_permission{0};
    std::atomic<bool> slave_read_enable{false};
};

void register_test_config(ConfigRegistry& r, TestStoreConfig* c) {
    r.add_int("listenPort", &c->listen_port, 10911, "port").important().range(1, 65535);
    r.add_int64("mappedFileSizeCommitLog", &c->mapped_file_size, 1024LL * 1024 * 1024, "bytes")
        .positive();
    r.add_bool("autoCreateTopicEnable", &c->auto_create_topic, true, "auto create");
    r.add_double("diskMaxUsedSpaceRatio", &c->disk_max_used_ratio, 0.75, "ratio").range(0, 1);
    r.add_string("brokerName", &c->broker_name, "broker-a", "name").important();
    r.add_enum("brokerRole", &c->broker_role, "ASYNC_MASTER",
               {"ASYNC_MASTER", "SYNC_MASTER", "SLAVE"}, "role")
        .important();
    r.add_enum<FlushDiskType>("flushDiskType", &c->flush_disk_type, FlushDiskType::kAsyncFlush,
                              {{"ASYNC_FLUSH", FlushDiskType::kAsyncFlush},
                               {"SYNC_FLUSH", FlushDiskType::kSyncFlush}},
                              "flush");
    r.add_int("totalReplicas", &c->total_replicas, 1, "replicas").at_least(1);
    r.add_int("brokerPermission", &c->broker_permission, 6, "perm").range(0, 7);
    r.add_bool("slaveReadEnable", &c->slave_read_enable, false, "read from slave");
}

class ConfigTest : public ::testing::Test {
protected:
    void SetUp() override { register_test_config(registry_, &cfg_); }
    TestStoreConfig cfg_;
    ConfigRegistry registry_;
};

TEST_F(ConfigTest, DefaultsAreStoredAtRegistration) {
    EXPECT_EQ(cfg_.listen_port, 10911);
    EXPECT_EQ(cfg_.mapped_file_size, 1024LL * 1024 * 1024);
    EXPECT_TRUE(cfg_.auto_create_topic);
    EXPECT_DOUBLE_EQ(cfg_.disk_max_used_ratio, 0.75);
    EXPECT_EQ(cfg_.broker_name, "broker-a");
    EXPECT_EQ(cfg_.broker_role, "ASYNC_MASTER");
    EXPECT_EQ(cfg_.flush_disk_type, FlushDiskType::kAsyncFlush);
    EXPECT_EQ(cfg_.broker_permission.load(), 6);
    EXPECT_EQ(registry_.field("listenPort")->default_text(), "10911");
    EXPECT_EQ(registry_.field("diskMaxUsedSpaceRatio")->default_text(), "0.75");
}

TEST_F(ConfigTest, SetParsesEachTypeAndTrims) {
    ASSERT_TRUE(registry_.set("listenPort", "  10921 ", "t").is_ok());
    EXPECT_EQ(cfg_.listen_port, 10921);
    ASSERT_TRUE(registry_.set("listenPort", "+10922", "t").is_ok());
    EXPECT_EQ(cfg_.listen_port, 10922);
    ASSERT_TRUE(registry_.set("mappedFileSizeCommitLog", "10737418240", "t").is_ok());
    EXPECT_EQ(cfg_.mapped_file_size, 10737418240LL);
    ASSERT_TRUE(registry_.set("autoCreateTopicEnable", "FALSE", "t").is_ok());
    EXPECT_FALSE(cfg_.auto_create_topic);
    ASSERT_TRUE(registry_.set("autoCreateTopicEnable", "True", "t").is_ok());
    EXPECT_TRUE(cfg_.auto_create_topic);
    ASSERT_TRUE(registry_.set("diskMaxUsedSpaceRatio", "0.5", "t").is_ok());
    EXPECT_DOUBLE_EQ(cfg_.disk_max_used_ratio, 0.5);
    ASSERT_TRUE(registry_.set("brokerName", "  b 1 ", "t").is_ok());
    EXPECT_EQ(cfg_.broker_name, "b 1");
    ASSERT_TRUE(registry_.set("brokerRole", "SLAVE", "t").is_ok());
    EXPECT_EQ(cfg_.broker_role, "SLAVE");
    ASSERT_TRUE(registry_.set("flushDiskType", "SYNC_FLUSH", "t").is_ok());
    EXPECT_EQ(cfg_.flush_disk_type, FlushDiskType::kSyncFlush);
    EXPECT_EQ(registry_.get("flushDiskType").value(), "SYNC_FLUSH");
}

struct BadValue {
    const char* key;
    const char* value;
    const char* reason;  // fragment of the expected message
};

class ConfigBadValueTest : public ConfigTest, public ::testing::WithParamInterface<BadValue> {};

TEST_P(ConfigBadValueTest, RejectedWithKeyValueAndSource) {
    const BadValue& b = GetParam();
    Status s = registry_.set(b.key, b.value, "broker.conf:7");
    ASSERT_FALSE(s.is_ok());
    EXPECT_EQ(s.code(), Errc::kInvalidArgument);
    EXPECT_NE(s.message().find(b.key), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(std::string("\"") + b.value + "\""), std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find("broker.conf:7"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(b.reason), std::string::npos) << s.message();
}

INSTANTIATE_TEST_SUITE_P(
    All, ConfigBadValueTest,
    ::testing::Values(BadValue{"listenPort", "abc", "expected an integer"},
                      BadValue{"listenPort", "12.5", "expected an integer"},
                      BadValue{"listenPort", "", "expected an integer"},
                      BadValue{"listenPort", "0", "between 1 and 65535"},
                      BadValue{"listenPort", "70000", "between 1 and 65535"},
                      BadValue{"listenPort", "3000000000", "32-bit"},
                      BadValue{"mappedFileSizeCommitLog", "99999999999999999999", "64-bit"},
                      BadValue{"mappedFileSizeCommitLog", "0", ">= 1"},
                      BadValue{"totalReplicas", "-1", ">= 1"},
                      BadValue{"autoCreateTopicEnable", "yes", "true or false"},
                      BadValue{"autoCreateTopicEnable", "1", "true or false"},
                      BadValue{"diskMaxUsedSpaceRatio", "1.5", "between 0 and 1"},
                      BadValue{"diskMaxUsedSpaceRatio", "nan", "number"},
                      BadValue{"diskMaxUsedSpaceRatio", "x", "expected a number"},
                      BadValue{"brokerRole", "MASTER", "ASYNC_MASTER|SYNC_MASTER|SLAVE"},
                      BadValue{"flushDiskType", "sync_flush", "ASYNC_FLUSH|SYNC_FLUSH"}));

TEST_F(ConfigTest, BadValueLeavesMemberUnchanged) {
    EXPECT_FALSE(registry_.set("listenPort", "abc", "t").is_ok());
    EXPECT_EQ(cfg_.listen_port, 10911);
}

TEST_F(ConfigTest, UnknownKeyIsNotFound) {
    Status s = registry_.set("noSuchKey", "1", "t");
    EXPECT_EQ(s.code(), Errc::kNotFound);
    EXPECT_NE(s.message().find("noSuchKey"), std::string::npos);
    EXPECT_EQ(registry_.get("noSuchKey").status().code(), Errc::kNotFound);
}

TEST_F(ConfigTest, UpdateIsAllOrNothingAndWarnsOnUnknownKeys) {
    auto entries = parse_properties(
                       "listenPort=10999\n"
                       "mystery=1\n"
                       "brokerRole=BOSS\n"
                       "totalReplicas=0\n",
                       "b.conf")
                       .value();
    std::vector<std::string> warnings;
    Status s = registry_.update(entries, &warnings);
    ASSERT_FALSE(s.is_ok());
    EXPECT_EQ(s.code(), Errc::kInvalidArgument);
    EXPECT_NE(s.message().find("'brokerRole' at b.conf:3"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("'totalReplicas' at b.conf:4"), std::string::npos) << s.message();
    EXPECT_EQ(cfg_.listen_port, 10911);  // nothing applied
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("'mystery' at b.conf:2"), std::string::npos) << warnings[0];

    warnings.clear();
    entries.pop_back();
    entries.pop_back();
    ASSERT_TRUE(registry_.update(entries, &warnings).is_ok());
    EXPECT_EQ(cfg_.listen_port, 10999);
    EXPECT_EQ(warnings.size(), 1u);
}

// was_set(): what the operator wrote, even a value equal to the default; nothing from a
// rejected update; never a key only registered.
TEST_F(ConfigTest, WasSetRecordsWhatTheFileAndCommandLineSet) {
    EXPECT_FALSE(registry_.was_set("totalReplicas"));
    EXPECT_FALSE(registry_.was_set("listenPort"));
    EXPECT_FALSE(registry_.was_set("mystery"));
    auto bad = parse_properties("listenPort=10999\ntotalReplicas=0\n", "b.conf").value();
    EXPECT_FALSE(registry_.update(bad, nullptr).is_ok());
    EXPECT_FALSE(registry_.was_set("listenPort")) << "a rejected update sets nothing";
    auto good = parse_properties("totalReplicas=1\nmystery=2\n", "b.conf").value();
    ASSERT_TRUE(registry_.update(good, nullptr).is_ok());
    EXPECT_EQ(cfg_.total_replicas, 1);
    EXPECT_TRUE(registry_.was_set("totalReplicas")) << "the default value, but written";
    EXPECT_FALSE(registry_.was_set("mystery"));
    EXPECT_FALSE(registry_.set("listenPort", "0", "command line").is_ok());
    EXPECT_FALSE(registry_.was_set("listenPort"));
    ASSERT_TRUE(registry_.set("listenPort", "10912", "command line").is_ok());
    EXPECT_TRUE(registry_.was_set("listenPort"));
}

TEST_F(ConfigTest, KeysOfARegistrySharingTheFileAreNotWarnedAbout) {
    // mqnamesrv's file also holds the embedded controller's keys: only keys neither knows warn.
    ConfigRegistry other;
    std::string peers;
    other.add_string("controllerDLegerPeers", &peers, "", "peers");
    registry_.share_file_with(other);
    std::vector<PropertyEntry> entries = {{"controllerDLegerPeers", "n0-h:1", "ns.conf", 1},
                                          {"mystery", "1", "ns.conf", 2},
                                          {"listenPort", "9", "ns.conf", 3}};
    std::vector<std::string> warnings;
    ASSERT_TRUE(registry_.update(entries, &warnings).is_ok());
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("'mystery' at ns.conf:2"), std::string::npos) << warnings[0];
    EXPECT_EQ(cfg_.listen_port, 9);
    EXPECT_FALSE(registry_.contains("controllerDLegerPeers"));
}

TEST_F(ConfigTest, UpdateFromText) {
    registry_.seal();
    std::vector<std::string> warnings;
    ASSERT_TRUE(registry_
                    .update_from_text("brokerPermission=4\nslaveReadEnable=true\nzz=1\n",
                                      "UPDATE_BROKER_CONFIG", &warnings)
                    .is_ok());
    EXPECT_EQ(cfg_.broker_permission.load(), 4);
    EXPECT_TRUE(cfg_.slave_read_enable.load());
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("UPDATE_BROKER_CONFIG:3"), std::string::npos) << warnings[0];
    Status bad =
        registry_.update_from_text("brokerPermission=8\n", "UPDATE_BROKER_CONFIG", nullptr);
    EXPECT_EQ(bad.code(), Errc::kInvalidArgument);
    EXPECT_NE(bad.message().find("UPDATE_BROKER_CONFIG:1"), std::string::npos) << bad.message();
    EXPECT_EQ(cfg_.broker_permission.load(), 4);
}

TEST_F(ConfigTest, LastDuplicateWins) {
    auto entries = parse_properties("listenPort=1\nlistenPort=2\n", "d").value();
    ASSERT_TRUE(registry_.update(entries, nullptr).is_ok());
    EXPECT_EQ(cfg_.listen_port, 2);
}

TEST_F(ConfigTest, PropertiesTextIsSortedAndComplete) {
    ASSERT_TRUE(registry_.set("brokerName", "b-x", "t").is_ok());
    const std::string text = registry_.to_properties_text();
    EXPECT_EQ(text,
              "autoCreateTopicEnable=true\n"
              "brokerName=b-x\n"
              "brokerPermission=6\n"
              "brokerRole=ASYNC_MASTER\n"
              "diskMaxUsedSpaceRatio=0.75\n"
              "flushDiskType=ASYNC_FLUSH\n"
              "listenPort=10911\n"
              "mappedFileSizeCommitLog=1073741824\n"
              "slaveReadEnable=false\n"
              "totalReplicas=1\n");
    EXPECT_EQ(registry_.important_properties_text(),
              "brokerName=b-x\nbrokerRole=ASYNC_MASTER\nlistenPort=10911\n");
    // The text parses back to the same values.
    auto entries = parse_properties(text, "round-trip").value();
    ConfigRegistry other;
    TestStoreConfig other_cfg;
    register_test_config(other, &other_cfg);
    ASSERT_TRUE(other.update(entries, nullptr).is_ok());
    EXPECT_EQ(other.to_properties_text(), text);
}

TEST_F(ConfigTest, DoubleFormatting) {
    EXPECT_EQ(format_config_value(1.0), "1.0");
    EXPECT_EQ(format_config_value(0.25), "0.25");
    EXPECT_EQ(format_config_value(int64_t{-5}), "-5");
    EXPECT_EQ(format_config_value(true), "true");
}

TEST_F(ConfigTest, AfterSealOnlyAtomicFieldsChange) {
    registry_.seal();
    EXPECT_TRUE(registry_.sealed());
    Status s = registry_.set("listenPort", "10000", "UPDATE_BROKER_CONFIG");
    EXPECT_EQ(s.code(), Errc::kFailedPrecondition);
    EXPECT_NE(s.message().find("restart required"), std::string::npos);
    EXPECT_EQ(cfg_.listen_port, 10911);
    ASSERT_TRUE(registry_.set("brokerPermission", "4", "UPDATE_BROKER_CONFIG").is_ok());
    EXPECT_EQ(cfg_.broker_permission.load(), 4);
    // Runtime bad value is still validated.
    EXPECT_EQ(registry_.set("brokerPermission", "9", "u").code(), Errc::kInvalidArgument);
    // update(): a non-updatable key rejects the whole batch.
    auto entries = parse_properties("slaveReadEnable=true\nlistenPort=1\n", "u").value();
    EXPECT_EQ(registry_.update(entries, nullptr).code(), Errc::kFailedPrecondition);
    EXPECT_FALSE(cfg_.slave_read_enable.load());
    EXPECT_TRUE(registry_.field("slaveReadEnable")->is_runtime_updatable());
    EXPECT_FALSE(registry_.field("listenPort")->is_runtime_updatable());
}

TEST_F(ConfigTest, RuntimeUpdatesRaceFreeWithReaders) {
    registry_.seal();
    std::atomic<bool> stop{false};
    std::thread reader([&] {
        do {
            int32_t p = cfg_.broker_permission.load();
            EXPECT_TRUE(p >= 0 && p <= 7);
            EXPECT_NE(registry_.to_properties_text().find("brokerPermission="), std::string::npos);
        } while (!stop.load());
    });
    for (int i = 0; i < 200; ++i) {
        ASSERT_TRUE(registry_.set("brokerPermission", std::to_string(i % 8), "u").is_ok());
    }
    stop = true;
    reader.join();
}

TEST_F(ConfigTest, CustomCheck) {
    ConfigRegistry r;
    std::string addr;
    r.add_string("namesrvAddr", &addr, "", "addresses").check([](const ConfigValue& v) {
        const std::string& s = std::get<std::string>(v);
        if (!s.empty() && s.find(':') == std::string::npos) {
            return Status(Errc::kInvalidArgument, "expected host:port[;host:port]");
        }
        return Status::ok();
    });
    EXPECT_TRUE(r.set("namesrvAddr", "127.0.0.1:9876", "t").is_ok());
    Status s = r.set("namesrvAddr", "localhost", "t");
    EXPECT_NE(s.message().find("host:port"), std::string::npos);
    EXPECT_EQ(addr, "127.0.0.1:9876");
}

TEST(ConfigDeathTest, DuplicateRegistrationIsABug) {
    ConfigRegistry r;
    int32_t a = 0;
    r.add_int("x", &a, 1, "");
    EXPECT_DEATH(r.add_int("x", &a, 1, ""), "registered twice");
}

}  // namespace
}  // namespace comet
