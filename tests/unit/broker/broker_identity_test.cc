#include "broker/controller/broker_identity.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace comet::broker {
namespace {

class BrokerIdentityTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("comet_identity_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir_);
        path_ = (dir_ / "brokerIdentity").string();
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::string read(const std::string& p) {
        std::ifstream in(p);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
    std::filesystem::path dir_;
    std::string path_;
};

TEST_F(BrokerIdentityTest, FilesHoldRocketMqTextAndRoundTrip) {
    auto none = load_broker_identity(path_, false, "C", "b");
    ASSERT_TRUE(none.is_ok());
    EXPECT_FALSE(none->has_value());
    BrokerIdentity id{"C", "b", 3, "127.0.0.1:10911;1700000000000"};
    ASSERT_TRUE(save_broker_identity(path_, true, id).is_ok());
    EXPECT_EQ(read(path_ + "-temp"), "C#b#3#127.0.0.1:10911;1700000000000");
    auto temp = load_broker_identity(path_, true, "C", "b");
    ASSERT_TRUE(temp.is_ok() && temp->has_value());
    EXPECT_EQ(**temp, id);
    ASSERT_TRUE(save_broker_identity(path_, false, id).is_ok());
    ASSERT_TRUE(remove_broker_identity(path_).is_ok());
    EXPECT_FALSE(std::filesystem::exists(path_ + "-temp"));
    EXPECT_EQ(read(path_), "C#b#3");
    auto fin = load_broker_identity(path_, false, "C", "b");
    ASSERT_TRUE(fin.is_ok() && fin->has_value());
    EXPECT_EQ((*fin)->broker_id, 3);
    EXPECT_EQ((*fin)->register_check_code, "");
}

TEST_F(BrokerIdentityTest, AnotherBrokersOrAGarbledFileIsAnErrorNamingIt) {
    ASSERT_TRUE(save_broker_identity(path_, false, BrokerIdentity{"C", "b", 2, ""}).is_ok());
    auto other = load_broker_identity(path_, false, "C", "other");
    ASSERT_FALSE(other.is_ok());
    EXPECT_NE(other.status().message().find("belongs to C/b"), std::string::npos);
    {
        std::ofstream out(path_, std::ios::trunc);
        out << "C#b#zero";
    }
    auto bad = load_broker_identity(path_, false, "C", "b");
    ASSERT_FALSE(bad.is_ok());
    EXPECT_EQ(bad.status().code(), Errc::kCorruption);
    EXPECT_NE(bad.status().message().find(path_), std::string::npos);
}

}  // namespace
}  // namespace comet::broker
