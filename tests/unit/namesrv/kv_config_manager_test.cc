#include "namesrv/kv_config_manager.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "namesrv_test_helper.h"

namespace comet::namesrv {
namespace {

class KvConfigManagerTest : public ::testing::Test {
protected:
    void SetUp() override { dir_ = testing::make_temp_dir("kv"); }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::string dir_;
};

TEST_F(KvConfigManagerTest, PutGetDeleteAndList) {
    KvConfigManager kv("");
    ASSERT_TRUE(kv.load().is_ok());
    EXPECT_FALSE(kv.get("ns", "k"));
    ASSERT_TRUE(kv.put("ns", "k", "v1").is_ok());
    ASSERT_TRUE(kv.put("ns", "k", "v2").is_ok());
    ASSERT_TRUE(kv.put("ns", "k2", "x").is_ok());
    EXPECT_EQ(kv.get("ns", "k"), "v2");
    EXPECT_EQ(kv.list("ns")->size(), 2u);
    EXPECT_FALSE(kv.list("other"));
    ASSERT_TRUE(kv.remove("ns", "k").is_ok());
    ASSERT_TRUE(kv.remove("ns", "missing").is_ok());
    ASSERT_TRUE(kv.remove("ns", "k2").is_ok());
    EXPECT_FALSE(kv.list("ns"));
}

TEST_F(KvConfigManagerTest, PersistsAtomicallyAndReloads) {
    const std::string path = dir_ + "/sub/kvConfig.json";
    {
        KvConfigManager kv(path);
        ASSERT_TRUE(kv.load().is_ok());  // missing file: empty
        ASSERT_TRUE(kv.put("ORDER_TOPIC_CONFIG", "T", "broker-a:4").is_ok());
        ASSERT_TRUE(kv.put("ns \"q\"", "k", "v\n2").is_ok());
    }
    EXPECT_TRUE(std::filesystem::exists(path));
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text,
              R"({"configTable":{"ORDER_TOPIC_CONFIG":{"T":"broker-a:4"},)"
              R"("ns \"q\"":{"k":"v\n2"}}})");
    KvConfigManager again(path);
    ASSERT_TRUE(again.load().is_ok());
    EXPECT_EQ(again.get("ORDER_TOPIC_CONFIG", "T"), "broker-a:4");
    EXPECT_EQ(again.get("ns \"q\"", "k"), "v\n2");
}

TEST_F(KvConfigManagerTest, LoadsJavaWrittenFile) {
    const std::string path = dir_ + "/kvConfig.json";
    std::ofstream(path) << "{\n\t\"configTable\":{\n\t\t\"ORDER_TOPIC_CONFIG\":{\n\t\t\t"
                           "\"TopicA\":\"broker-a:8;broker-b:8\"\n\t\t}\n\t}\n}";
    KvConfigManager kv(path);
    ASSERT_TRUE(kv.load().is_ok());
    EXPECT_EQ(kv.get("ORDER_TOPIC_CONFIG", "TopicA"), "broker-a:8;broker-b:8");
}

TEST_F(KvConfigManagerTest, CorruptFileIsAnErrorNamingThePath) {
    const std::string path = dir_ + "/kvConfig.json";
    std::ofstream(path) << "{\"configTable\":{\"ns\":";
    KvConfigManager kv(path);
    Status st = kv.load();
    ASSERT_FALSE(st.is_ok());
    EXPECT_EQ(st.code(), Errc::kCorruption);
    EXPECT_NE(st.message().find(path), std::string::npos);
}

TEST_F(KvConfigManagerTest, UnwritableDirectoryIsAnIoError) {
    const std::string blocker = dir_ + "/file";
    std::ofstream(blocker) << "x";
    KvConfigManager kv(blocker + "/kvConfig.json");  // parent is a regular file
    Status st = kv.put("ns", "k", "v");
    EXPECT_EQ(st.code(), Errc::kIoError);
    EXPECT_EQ(kv.get("ns", "k"), "v");  // the in-memory change stays, as in RocketMQ
}

}  // namespace
}  // namespace comet::namesrv
