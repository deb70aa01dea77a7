// Disk full: above diskSpaceWarningLevelRatio (90%) the store refuses puts with
// SERVICE_NOT_AVAILABLE (RocketMQ's DISK_FULL running flag) while reads keep working and nothing
// written is damaged; once space is back, puts resume. Tested with an injected disk-usage probe
// and, when the test runs as root and can mount one, with a real 2 MiB tmpfs.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "message_store_test_util.h"
#include "protocol/message_decoder.h"
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

class DiskFullTest : public testing::StoreDirTest {};

void expect_all_readable(MessageStore& store, const std::string& topic, int64_t count) {
    int64_t off = store.get_min_offset_in_queue(topic, 0).value();
    int64_t seen = 0;
    while (off < store.get_max_offset_in_queue(topic, 0).value()) {
        auto got = store.get_message("g", topic, 0, QueueOffset(off), 32, 0, nullptr);
        ASSERT_EQ(got.status, GetMessageStatus::kFound) << "offset " << off;
        for (const auto& v : got.messages) {
            auto m = protocol::decode_message(v.bytes(), {.read_body = true, .check_crc = true});
            ASSERT_TRUE(m.is_ok()) << m.status().to_string();
            ++seen;
        }
        off = got.next_begin_offset.value();
    }
    EXPECT_EQ(seen, count) << "min " << store.get_min_offset_in_queue(topic, 0).value() << " max "
                           << store.get_max_offset_in_queue(topic, 0).value();
}

TEST_F(DiskFullTest, InjectedFullDiskRefusesPutsKeepsReads) {
    ManualClock clock;
    FakeDiskProbe probe;
    MessageStoreOptions opts;
    opts.disk_probe = &probe;
    auto store = open_store(clock, tiny_config(root_), opts);
    ASSERT_NE(store, nullptr);
    for (int i = 0; i < 10; ++i) {
        ASSERT_TRUE(put(*store, make_message("F", 0, "before-" + std::to_string(i))).ok());
    }
    ASSERT_TRUE(store->dispatch_now().is_ok());
    const int64_t max_before = store->get_max_phy_offset().value();

    probe.ratio = 0.95;
    store->run_clean_once();
    EXPECT_TRUE(store->is_disk_full());
    auto r = put(*store, make_message("F", 0, "refused"));
    EXPECT_EQ(r.status, PutMessageStatus::kServiceNotAvailable);
    EXPECT_NE(r.remark.find("disk full"), std::string::npos) << r.remark;
    MessageBatch batch;
    batch.topic = "F";
    protocol::encode_batch_entry(0, "b", "", &batch.body);
    EXPECT_EQ(store->put_messages(std::move(batch)).get().status,
              PutMessageStatus::kServiceNotAvailable);
    EXPECT_EQ(store->get_max_phy_offset().value(), max_before);  // nothing written
    EXPECT_EQ(store->runtime_info()["diskFull"], "true");
    EXPECT_EQ(store->stats().put_failed_total(), 2);
    expect_all_readable(*store, "F", 10);

    probe.ratio = 0.50;
    store->run_clean_once();
    EXPECT_FALSE(store->is_disk_full());
    ASSERT_TRUE(put(*store, make_message("F", 0, "after")).ok());
    ASSERT_TRUE(store->dispatch_now().is_ok());
    expect_all_readable(*store, "F", 11);
    store->shutdown();
}

// A real small file system: puts fill it, the put that cannot get a new segment fails cleanly,
// the statvfs probe then marks the disk full, retention force-deletes the oldest segments, and
// every message still in the store stays intact (CRC-checked).
TEST_F(DiskFullTest, RealTmpfsFillsUpWithoutDamage) {
    // CI runs as root and must run this test: there a missing privilege is a failure. A
    // developer's unprivileged run skips it, saying why.
    const bool must_run = std::getenv("CI") != nullptr;
    if (::geteuid() != 0) {
        if (must_run) {
            FAIL() << "CI must run as root to mount the 2 MiB tmpfs of this test";
        }
        GTEST_SKIP() << "not root: cannot mount a tmpfs (the injected-probe test still runs)";
    }
    fs::create_directories(root_);
    if (::mount("tmpfs", root_.c_str(), "tmpfs", 0, "size=2m") != 0) {
        if (must_run) {
            FAIL() << "tmpfs mount failed in CI: " << std::strerror(errno);
        }
        GTEST_SKIP() << "tmpfs mount failed (" << std::strerror(errno)
                     << "): the injected-probe test still runs";
    }
    struct Unmount {
        std::string path;
        ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
    } unmount{root_};
    ManualClock clock;
    auto config = tiny_config(root_);
    config.mapped_file_size_commit_log = 64 * 1024;
    config.mapped_file_size_consume_queue = 1000 * 20;
    config.message_index_enable = false;
    {
        auto store = open_store(clock, config);
        ASSERT_NE(store, nullptr);
        int64_t ok = 0;
        PutMessageResult last;
        for (int i = 0; i < 5000; ++i) {
            last = put(*store, make_message("Tmp", 0, std::string(1000, 'a' + i % 26)));
            if (!last.ok()) {
                break;
            }
            ++ok;
        }
        ASSERT_FALSE(last.ok()) << "2 MiB should fill up";
        GTEST_LOG_(INFO) << "stored " << ok << " then " << put_message_status_name(last.status)
                         << ": " << last.remark;
        EXPECT_GT(ok, 100);
        ASSERT_TRUE(store->dispatch_now().is_ok());
        // Real statvfs: above 90% marks the disk full, and above 85% RocketMQ deletes the
        // oldest CommitLog segments regardless of age (cleanFileForciblyEnable).
        store->run_clean_once();
        EXPECT_TRUE(store->is_disk_full());
        EXPECT_EQ(put(*store, make_message("Tmp", 0, "x")).status,
                  PutMessageStatus::kServiceNotAvailable);
        const int64_t min = store->get_min_offset_in_queue("Tmp", 0).value();
        EXPECT_GT(min, 0);
        EXPECT_EQ(store->get_max_offset_in_queue("Tmp", 0).value(), ok);
        expect_all_readable(*store, "Tmp", ok - min);
        // The next round sees the space the deletion freed: puts resume.
        store->run_clean_once();
        EXPECT_FALSE(store->is_disk_full());
        ASSERT_TRUE(put(*store, make_message("Tmp", 0, "resumed")).ok());
        store->shutdown();
        store.reset();
        // Everything acknowledged and not yet expired survives a restart.
        store = open_store(clock, config);
        ASSERT_NE(store, nullptr);
        EXPECT_EQ(store->get_max_offset_in_queue("Tmp", 0).value(), ok + 1);
        expect_all_readable(*store, "Tmp",
                            ok + 1 - store->get_min_offset_in_queue("Tmp", 0).value());
        store->shutdown();
    }
}

}  // namespace
}  // namespace comet::store
