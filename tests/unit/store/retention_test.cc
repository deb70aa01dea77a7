// Retention: CommitLog segments older than fileReservedTime go at deleteWhen (or at once when
// the disk is above diskMaxUsedSpaceRatio); ConsumeQueue segments and index files behind the
// new CommitLog min follow; the active segment and everything after the min stay readable.
#include <gtest/gtest.h>

#include <atomic>
#include <ctime>
#include <filesystem>

#include "message_store_test_util.h"
#include "store/clean_service.h"
#include "store/message_store.h"

namespace comet::store {
namespace {

using testing::make_message;
using testing::tiny_config;
namespace fs = std::filesystem;

class FakeDiskProbe final : public DiskUsageProbe {
public:
    double used_ratio(const std::string&) const override { return ratio.load(); }
    std::atomic<double> ratio{0.10};
};

// CommitLog segments in use. Not a directory listing: the allocator pre-creates the next
// segment in the background, so the number of files on disk changes at any moment.
size_t cl_segments(MessageStore& store) {
    return store.commit_log().mapped_file_queue().file_count();
}

size_t count_files(const std::string& dir) {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        n += e.is_regular_file() ? 1 : 0;
    }
    return n;
}

int local_hour(int64_t ms) {
    const std::time_t s = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    ::localtime_r(&s, &tm);
    return tm.tm_hour;
}

class RetentionTest : public testing::StoreDirTest {};

// Only the segment being written is left (a pre-allocated next segment may also exist on disk).
void expect_only_active_segment(MessageStore& store) {
    const int64_t seg = store.config().mapped_file_size_commit_log;
    const int64_t max = store.get_max_phy_offset().value();
    EXPECT_EQ(store.get_min_phy_offset().value(), max - max % seg);
    EXPECT_EQ(cl_segments(store), 1u);
    EXPECT_LE(count_files(store.config().commit_log_dir()), 2u);  // active + pre-allocated
}

TEST(DeleteWhenTest, HourPatterns) {
    EXPECT_TRUE(is_it_time_to_do("04", 4));
    EXPECT_FALSE(is_it_time_to_do("04", 5));
    EXPECT_TRUE(is_it_time_to_do("01;04;23", 23));
    EXPECT_FALSE(is_it_time_to_do("", 0));
    EXPECT_FALSE(is_it_time_to_do("x;;4a", 4));
}

TEST_F(RetentionTest, ExpiredSegmentsGoAtDeleteWhenAndQueuesFollow) {
    // Real wall time: segment ages come from file mtimes.
    ManualClock clock(SystemClock::instance().wall_millis());
    FakeDiskProbe probe;
    auto config = tiny_config(root_);
    config.file_reserved_time_hours = 1;
    const int64_t later = clock.wall_millis() + 2 * 3600 * 1000;
    config.delete_when = std::to_string((local_hour(later) + 1) % 24);  // not yet
    MessageStoreOptions opts;
    opts.disk_probe = &probe;
    auto store = open_store(clock, config, opts);
    ASSERT_NE(store, nullptr);
    for (int i = 0; i < 40; ++i) {
        ASSERT_TRUE(put(*store, make_message("Ret", i % 2, std::string(150, 'x'), "",
                                             "key" + std::to_string(i)))
                        .ok());
    }
    ASSERT_TRUE(store->dispatch_now().is_ok());
    const size_t cl_files = cl_segments(*store);
    ASSERT_GE(cl_files, 3u);
    const size_t index_files = store->index_service().file_count();
    ASSERT_GE(index_files, 2u);

    // Young files, not the deleteWhen hour: nothing happens.
    store->run_clean_once();
    EXPECT_EQ(cl_segments(*store), cl_files);

    // Two hours later, but not the deleteWhen hour and the disk is fine: still nothing.
    clock.set_wall_millis(later);
    store->run_clean_once();
    EXPECT_EQ(cl_segments(*store), cl_files);
    EXPECT_EQ(store->get_min_phy_offset().value(), 0);

    // Manual deletion (mqadmin deleteExpiredCommitLog) does not wait for deleteWhen.
    store->execute_delete_files_manually();
    store->run_clean_once();
    expect_only_active_segment(*store);  // the active segment stays
    const int64_t min_phy = store->get_min_phy_offset().value();
    EXPECT_GT(min_phy, 0);
    for (int q = 0; q < 2; ++q) {
        const QueueOffset min = store->get_min_offset_in_queue("Ret", q);
        EXPECT_GT(min.value(), 0);
        EXPECT_GE(store->get_commit_log_offset_in_queue("Ret", q, min).value(), min_phy);
        auto got = store->get_message("g", "Ret", q, QueueOffset(0), 32, 0, nullptr);
        EXPECT_EQ(got.status, GetMessageStatus::kOffsetTooSmall);
        got = store->get_message("g", "Ret", q, min, 32, 0, nullptr);
        EXPECT_EQ(got.status, GetMessageStatus::kFound);
        EXPECT_EQ(got.next_begin_offset, store->get_max_offset_in_queue("Ret", q));
    }
    EXPECT_LT(store->index_service().file_count(), index_files);
    EXPECT_EQ(store->query_message("Ret", "key39", 4, 0, INT64_MAX).messages.size(), 1u);
    EXPECT_TRUE(store->query_message("Ret", "key0", 4, 0, INT64_MAX).messages.empty());
    store->check_invariants();

    // New puts keep going; a restart sees the same min.
    ASSERT_TRUE(put(*store, make_message("Ret", 0, "after")).ok());
    store->shutdown();
    store.reset();
    store = open_store(clock, config, opts);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->get_min_phy_offset().value(), min_phy);
    EXPECT_GT(store->get_min_offset_in_queue("Ret", 0).value(), 0);
    store->shutdown();
}

TEST_F(RetentionTest, DeleteWhenHourAndFullDiskTriggerDeletion) {
    ManualClock clock(SystemClock::instance().wall_millis());
    FakeDiskProbe probe;
    auto config = tiny_config(root_);
    config.file_reserved_time_hours = 1;
    config.delete_when = std::to_string(local_hour(clock.wall_millis() + 2 * 3600 * 1000));
    MessageStoreOptions opts;
    opts.disk_probe = &probe;
    auto store = open_store(clock, config, opts);
    ASSERT_NE(store, nullptr);
    for (int i = 0; i < 40; ++i) {
        ASSERT_TRUE(put(*store, make_message("D", 0, std::string(150, 'y'))).ok());
    }
    ASSERT_TRUE(store->dispatch_now().is_ok());
    const size_t cl_files = cl_segments(*store);
    ASSERT_GE(cl_files, 3u);
    // Disk above diskMaxUsedSpaceRatio (75%) but below the force ratio: expired files only.
    probe.ratio = 0.80;
    store->run_clean_once();
    EXPECT_EQ(cl_segments(*store), cl_files);  // nothing has expired yet
    // Above diskSpaceCleanForciblyRatio (85%): age no longer matters.
    probe.ratio = 0.87;
    store->run_clean_once();
    expect_only_active_segment(*store);
    EXPECT_FALSE(store->is_disk_full());
    // More data, then the deleteWhen hour two hours later removes the (now old) segments.
    probe.ratio = 0.10;
    for (int i = 0; i < 40; ++i) {
        ASSERT_TRUE(put(*store, make_message("D", 0, std::string(150, 'z'))).ok());
    }
    ASSERT_TRUE(store->dispatch_now().is_ok());
    ASSERT_GE(cl_segments(*store), 3u);
    clock.set_wall_millis(clock.wall_millis() + 2 * 3600 * 1000);
    store->run_clean_once();
    expect_only_active_segment(*store);
    const QueueOffset min = store->get_min_offset_in_queue("D", 0);
    auto got = store->get_message("g", "D", 0, min, 32, 0, nullptr);
    EXPECT_EQ(got.status, GetMessageStatus::kFound);
    store->shutdown();
}

}  // namespace
}  // namespace comet::store
