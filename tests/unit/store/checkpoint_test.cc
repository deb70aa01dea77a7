#include "store/store_checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "base/bytes.h"
#include "commit_log_test_util.h"

namespace comet::store {
namespace {

using testing::TempDir;

TEST(StoreCheckpoint, PersistsFieldsInRocketMqLayout) {
    TempDir dir;
    std::string path = dir.path() + "/sub/checkpoint";
    {
        auto cp = StoreCheckpoint::open(path);
        ASSERT_TRUE(cp.is_ok()) << cp.status().to_string();
        EXPECT_EQ(cp.value()->physic_msg_timestamp(), 0);
        cp.value()->set_physic_msg_timestamp(0x0102030405060708);
        cp.value()->set_logics_msg_timestamp(1'700'000'010'000);
        cp.value()->set_index_msg_timestamp(1'700'000'005'000);
        cp.value()->set_master_flushed_offset(123);
        cp.value()->set_confirm_phy_offset(456);
        ASSERT_TRUE(cp.value()->flush().is_ok());
    }
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_EQ(bytes.size(), 4096u);
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
    EXPECT_EQ(get_be64(p), 0x0102030405060708u);
    EXPECT_EQ(get_be64(p + 8), 1'700'000'010'000u);
    EXPECT_EQ(get_be64(p + 16), 1'700'000'005'000u);
    EXPECT_EQ(get_be64(p + 24), 123u);
    EXPECT_EQ(get_be64(p + 32), 456u);

    auto cp = StoreCheckpoint::open(path).value();
    EXPECT_EQ(cp->physic_msg_timestamp(), 0x0102030405060708);
    EXPECT_EQ(cp->logics_msg_timestamp(), 1'700'000'010'000);
    EXPECT_EQ(cp->min_timestamp(), 1'700'000'007'000);  // min(physic, logics) - 3 s
    EXPECT_EQ(cp->min_timestamp_index(), 1'700'000'005'000);
    EXPECT_EQ(cp->master_flushed_offset(), 123);
    EXPECT_EQ(cp->confirm_phy_offset(), 456);
}

TEST(StoreCheckpoint, ShortFileReadsAsZeroAndMinTimestampFloorsAtZero) {
    TempDir dir;
    std::string path = dir.path() + "/checkpoint";
    {
        std::ofstream out(path, std::ios::binary);
        uint8_t first[8];
        put_be64(first, 2000);
        out.write(reinterpret_cast<const char*>(first), 8);
    }
    auto cp = StoreCheckpoint::open(path).value();
    EXPECT_EQ(cp->physic_msg_timestamp(), 2000);
    EXPECT_EQ(cp->logics_msg_timestamp(), 0);
    EXPECT_EQ(cp->min_timestamp(), 0);
}

TEST(StoreCheckpoint, OpenFailsClearlyOnABadPath) {
    TempDir dir;
    std::string blocker = dir.path() + "/file";
    std::ofstream(blocker) << "x";
    auto cp = StoreCheckpoint::open(blocker + "/checkpoint");
    ASSERT_FALSE(cp.is_ok());
    EXPECT_EQ(cp.status().code(), Errc::kIoError);
}

}  // namespace
}  // namespace comet::store
