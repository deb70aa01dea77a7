// EpochFile: RocketMQ's epochFileCheckpoint text format, its .bak fallback, and the append and
// truncation rules DLedger and controller mode rely on.
#include "store/epoch_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/crc32.h"
#include "message_store_test_util.h"

namespace comet::store {
namespace {

class EpochFileTest : public testing::StoreDirTest {
protected:
    void SetUp() override {
        StoreDirTest::SetUp();
        dir_ = root_;
        std::filesystem::create_directories(dir_);
    }
    std::string dir_;
};

TEST_F(EpochFileTest, TextIsRocketMqsCheckpointFormat) {
    const std::string body = "1-0\n3-4096\n";
    const std::string text = EpochFile::encode({{1, 0}, {3, 4096}});
    EXPECT_EQ(text, "2\n" + std::to_string(crc32(body) & 0x7FFFFFFFu) + "\n" + body);
    auto back = EpochFile::decode(text, "f");
    ASSERT_TRUE(back.is_ok());
    EXPECT_EQ(*back, (std::vector<EpochEntry>{{1, 0}, {3, 4096}}));
    // CRC 0 is not checked (RocketMQ's rule); a wrong one is refused; bad lines name the line.
    EXPECT_TRUE(EpochFile::decode("1\n0\n7-10\n", "f").is_ok());
    EXPECT_FALSE(EpochFile::decode("1\n12345\n7-10\n", "f").is_ok());
    auto bad = EpochFile::decode("1\n0\n7x10\n", "f");
    ASSERT_FALSE(bad.is_ok());
    EXPECT_NE(bad.status().message().find("line 3"), std::string::npos);
    EXPECT_FALSE(EpochFile::decode("3\n0\n1-0\n", "f").is_ok());
}

TEST_F(EpochFileTest, SaveKeepsABackupThatLoadFallsBackTo) {
    const std::string path = dir_ + "/epochFileCheckpoint";
    EpochFile f(path);
    ASSERT_TRUE(f.load().is_ok());  // missing: empty
    EXPECT_TRUE(f.entries().empty());
    ASSERT_TRUE(f.append(1, 0).is_ok());
    ASSERT_TRUE(f.save().is_ok());
    ASSERT_TRUE(f.append(2, 100).is_ok());
    ASSERT_TRUE(f.save().is_ok());
    std::ofstream(path, std::ios::trunc) << "garbage";
    EpochFile g(path);
    ASSERT_TRUE(g.load().is_ok());
    EXPECT_EQ(g.entries(), (std::vector<EpochEntry>{{1, 0}}));  // the .bak of the last save
}

TEST_F(EpochFileTest, EpochsAndOffsetsOnlyGrowAndTruncationDropsWhatStartsPastTheCut) {
    EpochFile f(dir_ + "/e");
    ASSERT_TRUE(f.append(1, 0).is_ok());
    ASSERT_TRUE(f.append(1, 50).is_ok());  // same epoch: nothing new
    ASSERT_TRUE(f.append(2, 100).is_ok());
    ASSERT_TRUE(f.append(4, 100).is_ok());  // epoch 2 wrote nothing: 4 takes its place
    ASSERT_TRUE(f.append(5, 300).is_ok());
    EXPECT_FALSE(f.append(3, 400).is_ok());
    EXPECT_FALSE(f.append(6, 200).is_ok());
    EXPECT_EQ(f.entries(), (std::vector<EpochEntry>{{1, 0}, {4, 100}, {5, 300}}));
    f.truncate_from(300);
    EXPECT_EQ(f.entries(), (std::vector<EpochEntry>{{1, 0}, {4, 100}}));
    f.truncate_from(150);
    EXPECT_EQ(f.last_epoch(), 4);
}

}  // namespace
}  // namespace comet::store
