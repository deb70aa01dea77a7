#include "store/flush.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "commit_log_test_util.h"
#include "store/mapped_file_queue.h"
#include "store/store_checkpoint.h"

namespace comet::store {
namespace {

using testing::kSeg;

using testing::TempDir;

struct Outcome {
    int calls = 0;
    PutMessageStatus status = PutMessageStatus::kUnknownError;
    std::string remark;
};

FlushService::FlushCompletion record(Outcome* o) {
    return [o](PutMessageStatus s, const std::string& remark) {
        ++o->calls;
        o->status = s;
        o->remark = remark;
    };
}

class FlushServiceTest : public ::testing::Test {
protected:
    void SetUp() override {
        config_.flush_disk_type = FlushDiskType::kSyncFlush;
        config_.sync_flush_timeout_ms = 5000;
        ASSERT_TRUE(queue_.load().is_ok());
    }
    // Appends n bytes; returns the new end offset.
    int64_t write(int32_t n) {
        auto f = queue_.get_last_mapped_file(0, true).value();
        EXPECT_TRUE(f->append(std::string(static_cast<size_t>(n), 'w')));
        f->set_store_timestamp(clock_.wall_millis());
        return queue_.max_offset();
    }

    TempDir dir_;
    MessageStoreConfig config_;
    ManualClock clock_;
    RunningFlags flags_;
    MappedFileQueue queue_{dir_.path() + "/log", kSeg, nullptr};
};

TEST_F(FlushServiceTest, OneFlushCompletesEveryCoveredWaiter) {
    FlushService fs(config_, &queue_, &clock_, &flags_, nullptr);
    std::vector<Outcome> outcomes(10);
    for (auto& o : outcomes) {
        int64_t end = write(100);
        fs.wait_for_flush(PhysicalOffset(end), record(&o));
    }
    Outcome later;
    EXPECT_EQ(fs.pending_waiters(), 10u);
    EXPECT_EQ(fs.group_commit_once(), 10);
    EXPECT_EQ(fs.fsync_count(), 1);  // ten puts, one msync
    for (const auto& o : outcomes) {
        EXPECT_EQ(o.calls, 1);
        EXPECT_EQ(o.status, PutMessageStatus::kPutOk);
    }
    EXPECT_EQ(queue_.flushed_where(), 1000);
    // Already durable: completes at once, no waiter kept.
    fs.wait_for_flush(PhysicalOffset(500), record(&later));
    EXPECT_EQ(later.calls, 1);
    EXPECT_EQ(fs.pending_waiters(), 0u);
}

TEST_F(FlushServiceTest, GroupCommitSpansSegments) {
    FlushService fs(config_, &queue_, &clock_, &flags_, nullptr);
    write(static_cast<int32_t>(kSeg));
    int64_t end = write(10);
    Outcome o;
    fs.wait_for_flush(PhysicalOffset(end), record(&o));
    EXPECT_EQ(fs.group_commit_once(), 1);
    EXPECT_EQ(o.status, PutMessageStatus::kPutOk);
    EXPECT_EQ(queue_.flushed_where(), kSeg + 10);
}

TEST_F(FlushServiceTest, WaitersTimeOutByTheInjectedClock) {
    FlushService fs(config_, &queue_, &clock_, &flags_, nullptr);
    Outcome early;
    Outcome late;
    fs.wait_for_flush(PhysicalOffset(write(10)), record(&early));
    clock_.advance(std::chrono::milliseconds(3000));
    fs.wait_for_flush(PhysicalOffset(write(10)), record(&late));
    EXPECT_EQ(fs.expire_timeouts(), 0);
    clock_.advance(std::chrono::milliseconds(2000));  // early's deadline
    EXPECT_EQ(fs.expire_timeouts(), 1);
    EXPECT_EQ(early.calls, 1);
    EXPECT_EQ(early.status, PutMessageStatus::kFlushDiskTimeout);
    EXPECT_EQ(late.calls, 0);
    // The flush then completes the other one exactly once; the expired one is not called again.
    EXPECT_EQ(fs.group_commit_once(), 1);
    EXPECT_EQ(late.status, PutMessageStatus::kPutOk);
    EXPECT_EQ(early.calls, 1);
}

TEST_F(FlushServiceTest, FailedFlushCompletesAllAndRefusesLaterWaits) {
    FlushService fs(config_, &queue_, &clock_, &flags_, nullptr);
    Outcome a;
    Outcome b;
    fs.wait_for_flush(PhysicalOffset(write(10)), record(&a));
    fs.wait_for_flush(PhysicalOffset(write(10)), record(&b));
    set_flush_fault_for_test(true);
    EXPECT_EQ(fs.group_commit_once(), 2);
    set_flush_fault_for_test(false);
    EXPECT_EQ(a.status, PutMessageStatus::kFlushDiskTimeout);
    EXPECT_EQ(b.status, PutMessageStatus::kFlushDiskTimeout);
    EXPECT_NE(a.remark.find("msync"), std::string::npos) << a.remark;
    EXPECT_FALSE(flags_.is_writeable());
    EXPECT_EQ(queue_.flushed_where(), 0);  // never reported as flushed
    Outcome c;
    fs.wait_for_flush(PhysicalOffset(write(10)), record(&c));
    EXPECT_EQ(c.calls, 1);
    EXPECT_EQ(c.status, PutMessageStatus::kFlushDiskTimeout);
    EXPECT_FALSE(fs.flush_all());
}

TEST_F(FlushServiceTest, ThreadsFlushAndUpdateCheckpoint) {
    auto cp = StoreCheckpoint::open(dir_.path() + "/checkpoint").value();
    FlushService fs(config_, &queue_, &clock_, &flags_, cp.get());
    fs.start();
    std::promise<PutMessageStatus> p;
    auto f = p.get_future();
    int64_t end = write(4000);
    fs.wait_for_flush(PhysicalOffset(end),
                      [&p](PutMessageStatus s, const std::string&) { p.set_value(s); });
    ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_EQ(f.get(), PutMessageStatus::kPutOk);
    EXPECT_GE(queue_.flushed_where(), end);
    EXPECT_EQ(cp->physic_msg_timestamp(), clock_.wall_millis());
    // Shutdown completes a waiter registered after the thread stopped looking.
    Outcome o;
    fs.wait_for_flush(PhysicalOffset(write(10)), record(&o));
    fs.shutdown();
    EXPECT_EQ(o.calls, 1);
    EXPECT_EQ(o.status, PutMessageStatus::kPutOk);
}

TEST_F(FlushServiceTest, AsyncFlushHonoursLeastPagesThenFlushesAll) {
    config_.flush_disk_type = FlushDiskType::kAsyncFlush;
    config_.flush_interval_commit_log_ms = 1;
    config_.flush_commit_log_least_pages = 4;
    FlushService fs(config_, &queue_, &clock_, &flags_, nullptr);
    write(100);
    fs.start();
    int64_t end = write(5 * kOsPageSize);
    for (int i = 0; i < 30000 && queue_.flushed_where() < end; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));  // bounded: 30 s at most
    }
    EXPECT_EQ(queue_.flushed_where(), end);
    write(10);  // under the page threshold: stays dirty until shutdown
    fs.shutdown();
    EXPECT_EQ(queue_.flushed_where(), queue_.max_offset());
}

// ASYNC_FLUSH's wake-up per append goes out only when the woken thread has something to flush:
// flushCommitLogLeastPages dirty pages, or a filled segment.
TEST_F(FlushServiceTest, AppendWakesTheAsyncFlushOnlyWithPagesToFlush) {
    config_.flush_disk_type = FlushDiskType::kAsyncFlush;
    config_.flush_commit_log_timed = false;  // wake-ups cut the wait short (not the default)
    config_.flush_interval_commit_log_ms = 60000;  // the interval never comes in this test
    config_.flush_commit_log_least_pages = 4;
    FlushService fs(config_, &queue_, &clock_, &flags_, nullptr);
    fs.start();
    int64_t end = 0;
    for (int i = 0; i < 10; ++i) {  // 3,000 bytes: under a page
        end = write(300);
        fs.wakeup_for(end);
    }
    EXPECT_EQ(fs.wakeups(), 0);
    end = write(4 * kOsPageSize);  // now 4 pages are dirty
    fs.wakeup_for(end);
    EXPECT_EQ(fs.wakeups(), 1);
    for (int i = 0; i < 30000 && queue_.flushed_where() < end; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));  // bounded: 30 s at most
    }
    EXPECT_EQ(queue_.flushed_where(), end);
    end = write(100);
    fs.wakeup_for(end);
    EXPECT_EQ(fs.wakeups(), 1);
    // Filling the segment: its last bytes are flushed without waiting for four more pages.
    const int64_t to_end = kSeg - queue_.max_offset() % kSeg;
    end = write(static_cast<int32_t>(to_end));
    ASSERT_EQ(end % kSeg, 0);
    end = write(10);  // the next segment's first bytes
    fs.wakeup_for(end);
    EXPECT_EQ(fs.wakeups(), 2);
    // Least pages 0: every append wakes it (as Java does).
    config_.flush_commit_log_least_pages = 0;
    FlushService every(config_, &queue_, &clock_, &flags_, nullptr);
    every.wakeup_for(write(10));
    EXPECT_EQ(every.wakeups(), 1);
    fs.shutdown();
}

// Decision 035: one device flush for the CommitLog and the caller's file. The segments are
// recorded flushed only after the caller's flush succeeded.
TEST(FlushAllThen, WritesBackThenCallsTheDeviceFlushThenRecords) {
    TempDir dir;
    MessageStoreConfig config;
    ManualClock clock;
    RunningFlags flags;
    MappedFileQueue queue(dir.path() + "/log", kSeg, nullptr);
    queue.set_zero_fill(true);
    ASSERT_TRUE(queue.load().is_ok());
    FlushService fs(config, &queue, &clock, &flags, nullptr);
    auto f = queue.get_last_mapped_file(0, true).value();
    ASSERT_TRUE(f->fully_written());
    ASSERT_TRUE(f->append(std::string(3000, 'a')));

    int calls = 0;
    Status st = fs.flush_all_then([&] {
        ++calls;
        EXPECT_EQ(queue.flushed_where(), 0) << "recorded before the device flush";
        return Status::error(Errc::kIoError, "injected fdatasync failure");
    });
    EXPECT_FALSE(st.is_ok());
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(queue.flushed_where(), 0);
    EXPECT_EQ(fs.fsync_count(), 0);

    st = fs.flush_all_then([&] {
        ++calls;
        return Status::ok();
    });
    ASSERT_TRUE(st.is_ok()) << st.to_string();
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(queue.flushed_where(), 3000);
    EXPECT_EQ(f->flushed_position(), 3000);
    EXPECT_EQ(fs.fsync_count(), 1);
    EXPECT_TRUE(fs.flush_all()) << "the store is not failed by the caller's failure";
}

TEST(FlushAllThen, FallsBackToMsyncForAFallocatedSegment) {
    TempDir dir;
    MessageStoreConfig config;
    ManualClock clock;
    RunningFlags flags;
    MappedFileQueue queue(dir.path() + "/log", kSeg, nullptr);
    ASSERT_TRUE(queue.load().is_ok());
    FlushService fs(config, &queue, &clock, &flags, nullptr);
    ASSERT_TRUE(queue.get_last_mapped_file(0, true).value()->append(std::string(700, 'b')));
    int64_t flushed_when_called = -1;
    Status st = fs.flush_all_then([&] {
        flushed_when_called = queue.flushed_where();
        return Status::ok();
    });
    ASSERT_TRUE(st.is_ok());
    EXPECT_EQ(flushed_when_called, 700) << "msync'ed first, then the caller's flush";

    set_flush_fault_for_test(true);
    ASSERT_TRUE(queue.get_last_mapped_file(0, true).value()->append("c"));
    int calls = 0;
    st = fs.flush_all_then([&] {
        ++calls;
        return Status::ok();
    });
    set_flush_fault_for_test(false);
    EXPECT_FALSE(st.is_ok());
    EXPECT_EQ(calls, 0);
    EXPECT_FALSE(fs.flush_all()) << "a failed CommitLog flush makes the store read-only";
}

}  // namespace
}  // namespace comet::store
