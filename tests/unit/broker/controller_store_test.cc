// ControllerStore over a real MessageStore: a store from master-slave mode (data, no epoch
// file) gets epoch 0 from offset 0 with its whole log confirmed; an empty store gets no
// entry; a slave copying a master's epoch-0 bytes records epoch 0 too, so its epoch file
// exists as soon as it holds data; the consistent point of such a slave keeps what the master
// holds of epoch 0.
#include "broker/controller/controller_store.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "../store/message_store_test_util.h"
#include "ha/autoswitch_codec.h"

namespace comet::broker {
namespace {

using store::EpochEntry;
using store::testing::make_message;
using store::testing::tiny_config;

class ControllerStoreTest : public store::testing::StoreDirTest {
protected:
    std::unique_ptr<store::MessageStore> open(const std::string& name) {
        return open_store(clock_, tiny_config(root_ + "/" + name));
    }
    std::string epoch_path(const std::string& name) const {
        return root_ + "/" + name + "/epochFileCheckpoint";
    }
    static int64_t put_some(store::MessageStore& s, int n) {
        for (int i = 0; i < n; ++i) {
            EXPECT_TRUE(put(s, make_message("T", 0, "m" + std::to_string(i))).ok());
        }
        return s.get_max_phy_offset().value();
    }

    ManualClock clock_;
};

TEST_F(ControllerStoreTest, AStoreFromMasterSlaveModeIsEpochZeroAndConfirmed) {
    auto s = open("old");
    ASSERT_NE(s, nullptr);
    const int64_t end = put_some(*s, 5);
    ASSERT_GT(end, 0);
    EXPECT_EQ(ControllerStore::before_controller_mode(epoch_path("old")).value(), true);
    ControllerStore cs(*s, epoch_path("old"), true);
    ASSERT_TRUE(cs.load().is_ok());
    EXPECT_EQ(cs.epochs(), (std::vector<EpochEntry>{{0, 0}}));
    EXPECT_EQ(ControllerStore::before_controller_mode(epoch_path("old")).value(), false);
    EXPECT_EQ(cs.confirm_offset(), end);
    EXPECT_EQ(s->checkpoint_confirm_offset(), end);
    EXPECT_TRUE(std::filesystem::exists(epoch_path("old")));

    // Reloaded, it is an ordinary epoch file: nothing added, the confirm offset kept.
    ControllerStore again(*s, epoch_path("old"), true);
    ASSERT_TRUE(again.load().is_ok());
    EXPECT_EQ(again.epochs(), (std::vector<EpochEntry>{{0, 0}}));

    // Made master at epoch 1, epoch 1 starts at the end of the old bytes.
    ASSERT_TRUE(again.become_master_store(1, 1, std::chrono::seconds(5)).is_ok());
    EXPECT_EQ(again.epochs(), (std::vector<EpochEntry>{{0, 0}, {1, end}}));
}

TEST_F(ControllerStoreTest, AnEmptyStoreGetsNoEpochUntilItHoldsData) {
    auto s = open("empty");
    ASSERT_NE(s, nullptr);
    ControllerStore cs(*s, epoch_path("empty"), true);
    ASSERT_TRUE(cs.load().is_ok());
    EXPECT_TRUE(cs.epochs().empty());
    EXPECT_FALSE(std::filesystem::exists(epoch_path("empty")));
    // A master's epoch-0 bytes arrive: epoch 0 is recorded like any other first epoch.
    ASSERT_TRUE(cs.begin_epoch(0, 0).is_ok());
    EXPECT_EQ(cs.epochs(), (std::vector<EpochEntry>{{0, 0}}));
    ASSERT_TRUE(cs.begin_epoch(0, 0).is_ok());  // repeated: no second entry
    ASSERT_TRUE(cs.begin_epoch(2, 700).is_ok());
    EXPECT_EQ(cs.epochs(), (std::vector<EpochEntry>{{0, 0}, {2, 700}}));
}

TEST(PreControllerConsistentPoint, ASlaveKeepsTheEpochZeroBytesItsMasterHas) {
    // The old slave caught up (same end), behind, or (an old slave of another master) ahead.
    const std::vector<EpochEntry> master = {{0, 0}, {1, 5000}};
    EXPECT_EQ(ha::compute_consistent_point({{0, 0}}, 5000, master, 6000), 5000);
    EXPECT_EQ(ha::compute_consistent_point({{0, 0}}, 3000, master, 6000), 3000);
    EXPECT_EQ(ha::compute_consistent_point({{0, 0}}, 5500, master, 6000), 5000);
    // A group born in controller mode has no epoch 0: the old bytes share nothing with it.
    EXPECT_EQ(ha::compute_consistent_point({{0, 0}}, 3000, {{1, 0}}, 6000), std::nullopt);
}

}  // namespace
}  // namespace comet::broker
