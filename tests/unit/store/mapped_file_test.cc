#include "store/mapped_file.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "commit_log_test_util.h"
#include "base/bytes.h"
#include "store/mapped_file_allocator.h"
#include "store/mapped_file_queue.h"

namespace comet::store {
namespace {

using testing::kSeg;
using testing::TempDir;

namespace fs = std::filesystem;

// Creates the first segment of `q` (inline), fills it, waits until the worker pre-created the
// next one and returns both (second null on failure, with a test failure recorded).
std::pair<std::shared_ptr<MappedFile>, std::shared_ptr<MappedFile>>
first_inline_second_from_worker(AllocateMappedFileService& alloc, MappedFileQueue& q) {
    auto first = q.get_last_mapped_file(0, true);
    EXPECT_TRUE(first.is_ok());
    if (!first.is_ok() || !first.value()->append(std::string(kSeg, 'x'))) {
        ADD_FAILURE() << "first segment";
        return {};
    }
    // The first get asked the worker for the next segment: wait until it made it, so the
    // second get is served from the worker, not created inline.
    for (int i = 0; i < 30000 && alloc.created_in_background() < 1; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(alloc.created_in_background(), 1);
    auto second = q.get_last_mapped_file(0, true);
    if (!second.is_ok() || second.value()->file_from_offset() != kSeg) {
        ADD_FAILURE() << "second segment";
        return {first.value(), nullptr};
    }
    return {first.value(), second.value()};
}

TEST(MappedFileName, FormatsAndParses) {
    EXPECT_EQ(offset_to_file_name(0), "00000000000000000000");
    EXPECT_EQ(offset_to_file_name(1073741824), "00000000001073741824");
    EXPECT_EQ(file_name_to_offset("00000000001073741824"), 1073741824);
    EXPECT_FALSE(file_name_to_offset("0000000000107374182"));
    EXPECT_FALSE(file_name_to_offset("0000000000107374182x"));
    EXPECT_FALSE(file_name_to_offset("99999999999999999999"));  // overflows int64
}

TEST(MappedFile, CreatesAllocatedFileAndAppends) {
    TempDir dir;
    auto r = MappedFile::open(dir.path(), kSeg * 3, kSeg);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    auto f = r.value();
    EXPECT_EQ(f->file_from_offset(), kSeg * 3);
    EXPECT_EQ(fs::file_size(f->file_name()), static_cast<uintmax_t>(kSeg));
    EXPECT_EQ(f->wrote_position(), 0);
    ASSERT_TRUE(f->append("hello"));
    ASSERT_TRUE(f->append(" world"));
    EXPECT_EQ(f->wrote_position(), 11);
    auto v = f->select(0);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->bytes(), "hello world");
    EXPECT_EQ(v->start_offset, kSeg * 3);
    auto v2 = f->select(6, 5);
    ASSERT_TRUE(v2);
    EXPECT_EQ(v2->bytes(), "world");
    EXPECT_FALSE(f->select(6, 6));  // beyond written bytes
    EXPECT_FALSE(f->select(12));
    std::string big(kSeg, 'x');
    EXPECT_FALSE(f->append(big));  // does not fit: nothing written
    EXPECT_EQ(f->wrote_position(), 11);
}

TEST(MappedFile, WrongSizeExistingFileIsRejected) {
    TempDir dir;
    {
        auto r = MappedFile::open(dir.path(), 0, kSeg);
        ASSERT_TRUE(r.is_ok());
    }
    auto r = MappedFile::open(dir.path(), 0, kSeg * 2);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Errc::kCorruption);
    auto bad = MappedFile::open_path(dir.path() + "/notanoffset", kSeg);
    EXPECT_EQ(bad.status().code(), Errc::kInvalidArgument);
}

TEST(MappedFile, FlushHonoursLeastPages) {
    TempDir dir;
    auto f = MappedFile::open(dir.path(), 0, kSeg).value();
    ASSERT_TRUE(f->append(std::string(100, 'a')));
    auto r = f->flush(4);  // fewer than 4 dirty pages: nothing flushed
    ASSERT_TRUE(r.is_ok());
    EXPECT_EQ(r.value(), 0);
    EXPECT_EQ(f->flush(0).value(), 100);
    EXPECT_EQ(f->flushed_position(), 100);
    ASSERT_TRUE(f->append(std::string(5 * kOsPageSize, 'b')));
    EXPECT_EQ(f->flush(4).value(), 100 + 5 * kOsPageSize);
}

TEST(MappedFile, DataSurvivesReopen) {
    TempDir dir;
    {
        auto f = MappedFile::open(dir.path(), 0, kSeg).value();
        ASSERT_TRUE(f->append("persist me"));
        ASSERT_TRUE(f->flush(0).is_ok());
    }
    auto f = MappedFile::open(dir.path(), 0, kSeg).value();
    f->set_positions(10);
    EXPECT_EQ(f->select(0)->bytes(), "persist me");
}

TEST(MappedFile, ViewKeepsMappingAliveAfterDestroy) {
    TempDir dir;
    MappedView view;
    {
        auto f = MappedFile::open(dir.path(), 0, kSeg).value();
        ASSERT_TRUE(f->append("still readable"));
        view = *f->select(0);
        ASSERT_TRUE(f->destroy().is_ok());
        EXPECT_TRUE(f->destroyed());
        EXPECT_FALSE(fs::exists(f->file_name()));
    }
    EXPECT_EQ(view.bytes(), "still readable");
}

TEST(MappedFile, ZeroTailClearsStaleBytes) {
    TempDir dir;
    auto f = MappedFile::open(dir.path(), 0, kSeg).value();
    ASSERT_TRUE(f->append(std::string(3 * kOsPageSize + 7, 'z')));
    f->set_positions(10);
    ASSERT_TRUE(f->zero_tail().is_ok());
    for (int64_t i = 10; i < kSeg; ++i) {
        ASSERT_EQ(f->data()[i], 0) << i;
    }
    EXPECT_EQ(f->data()[9], 'z');
}

TEST(MappedFileQueue, CreatesRollsAndFindsByOffset) {
    TempDir dir;
    MappedFileQueue q(dir.path() + "/log", kSeg, nullptr);
    ASSERT_TRUE(q.load().is_ok());
    EXPECT_EQ(q.min_offset(), -1);
    EXPECT_EQ(q.max_offset(), 0);
    for (int i = 0; i < 3; ++i) {
        auto f = q.get_last_mapped_file(0, true).value();
        EXPECT_EQ(f->file_from_offset(), i * kSeg);
        ASSERT_TRUE(f->append(std::string(kSeg, static_cast<char>('a' + i))));
    }
    EXPECT_EQ(q.file_count(), 3u);
    EXPECT_EQ(q.max_offset(), 3 * kSeg);
    EXPECT_EQ(q.find_mapped_file_by_offset(0)->file_from_offset(), 0);
    EXPECT_EQ(q.find_mapped_file_by_offset(kSeg + 5)->file_from_offset(), kSeg);
    EXPECT_EQ(q.find_mapped_file_by_offset(3 * kSeg - 1)->file_from_offset(), 2 * kSeg);
    EXPECT_EQ(q.find_mapped_file_by_offset(3 * kSeg), nullptr);
    EXPECT_EQ(q.find_mapped_file_by_offset(-1), nullptr);
    q.check_invariants();
}

TEST(MappedFileQueue, StartsAtSegmentBoundaryOfStartOffset) {
    TempDir dir;
    MappedFileQueue q(dir.path(), kSeg, nullptr);
    ASSERT_TRUE(q.load().is_ok());
    auto f = q.get_last_mapped_file(5 * kSeg + 100, true).value();
    EXPECT_EQ(f->file_from_offset(), 5 * kSeg);
    EXPECT_EQ(q.find_mapped_file_by_offset(0, true), f);
    EXPECT_EQ(q.find_mapped_file_by_offset(0, false), nullptr);
}

TEST(MappedFileQueue, LoadsTruncatesAndFlushes) {
    TempDir dir;
    {
        MappedFileQueue q(dir.path(), kSeg, nullptr);
        ASSERT_TRUE(q.load().is_ok());
        for (int i = 0; i < 3; ++i) {
            auto f = q.get_last_mapped_file(0, true).value();
            ASSERT_TRUE(f->append(std::string(kSeg, 'q')));
        }
        auto flushed = q.flush(0);
        ASSERT_TRUE(flushed.is_ok());
        EXPECT_TRUE(flushed.value());
        EXPECT_EQ(q.flushed_where(), kSeg);  // one segment per flush call
        while (q.flush(0).value()) {
        }
        EXPECT_EQ(q.flushed_where(), 3 * kSeg);
    }
    MappedFileQueue q(dir.path(), kSeg, nullptr);
    ASSERT_TRUE(q.load().is_ok());
    EXPECT_EQ(q.file_count(), 3u);
    EXPECT_EQ(q.max_offset(), 3 * kSeg);  // loaded files count as full until recovery
    ASSERT_TRUE(q.truncate_dirty_files(kSeg + 123).is_ok());
    EXPECT_EQ(q.file_count(), 2u);
    EXPECT_EQ(q.max_offset(), kSeg + 123);
    EXPECT_EQ(q.flushed_where(), kSeg + 123);
    EXPECT_FALSE(fs::exists(dir.path() + "/" + offset_to_file_name(2 * kSeg)));
    // Writing continues from the cut.
    auto f = q.get_last_mapped_file(0, true).value();
    EXPECT_EQ(f->file_from_offset(), kSeg);
    EXPECT_EQ(f->wrote_position(), 123);
}

TEST(MappedFileQueue, LoadRejectsGapsAndBadSizes) {
    TempDir dir;
    ASSERT_TRUE(MappedFile::open(dir.path(), 0, kSeg).is_ok());
    ASSERT_TRUE(MappedFile::open(dir.path(), 2 * kSeg, kSeg).is_ok());
    MappedFileQueue q(dir.path(), kSeg, nullptr);
    Status st = q.load();
    EXPECT_EQ(st.code(), Errc::kCorruption) << st.to_string();

    TempDir dir2;
    ASSERT_TRUE(MappedFile::open(dir2.path(), 0, kSeg / 2).is_ok());
    MappedFileQueue q2(dir2.path(), kSeg, nullptr);
    EXPECT_EQ(q2.load().code(), Errc::kCorruption);
}

TEST(MappedFileQueue, LoadRemovesUnfinishedAllocations) {
    TempDir dir;
    ASSERT_TRUE(MappedFile::open(dir.path(), 0, kSeg).is_ok());
    // What a crash during pre-allocation leaves behind: a temporary, never-published file.
    std::string tmp = dir.path() + "/" + offset_to_file_name(kSeg) + ".tmp.123.0";
    { std::ofstream(tmp) << "partial"; }
    MappedFileQueue q(dir.path(), kSeg, nullptr);
    ASSERT_TRUE(q.load().is_ok());
    EXPECT_EQ(q.file_count(), 1u);
    EXPECT_FALSE(fs::exists(tmp));
}

TEST(MappedFileQueue, DeletesExpiredByTimeButNeverTheLast) {
    TempDir dir;
    MappedFileQueue q(dir.path(), kSeg, nullptr);
    ASSERT_TRUE(q.load().is_ok());
    for (int i = 0; i < 4; ++i) {
        ASSERT_TRUE(q.get_last_mapped_file(0, true).value()->append(std::string(kSeg, 'x')));
    }
    auto first = q.first_mapped_file();
    int64_t mtime = first->last_modified_millis();
    EXPECT_EQ(q.delete_expired_file_by_time(3'600'000, mtime + 1000, false, 0), 0);
    EXPECT_EQ(q.delete_expired_file_by_time(3'600'000, mtime + 7'200'000, false, 2), 2);
    EXPECT_EQ(q.min_offset(), 2 * kSeg);
    EXPECT_EQ(q.delete_expired_file_by_time(3'600'000, 0, true, 0), 1);
    EXPECT_EQ(q.file_count(), 1u);
    EXPECT_EQ(q.min_offset(), 3 * kSeg);
    EXPECT_FALSE(fs::exists(first->file_name()));
}

TEST(MappedFileQueue, DeletesExpiredByOffsetOfLastUnit) {
    TempDir dir;
    constexpr int32_t kUnit = 20;
    constexpr int64_t kCqSeg = kUnit * 10;
    MappedFileQueue q(dir.path(), kCqSeg, nullptr);
    ASSERT_TRUE(q.load().is_ok());
    int64_t phy = 0;
    for (int i = 0; i < 30; ++i) {  // 3 segments of 10 units, physical offsets 0,100,200...
        auto f = q.get_last_mapped_file(0, true).value();
        std::string unit(kUnit, '\0');
        put_be64(reinterpret_cast<uint8_t*>(unit.data()), static_cast<uint64_t>(phy));
        ASSERT_TRUE(f->append(unit));
        phy += 100;
    }
    // Segment 0 holds up to phy 900, segment 1 up to 1900.
    EXPECT_EQ(q.delete_expired_file_by_offset(900, kUnit), 0);
    EXPECT_EQ(q.delete_expired_file_by_offset(901, kUnit), 1);
    EXPECT_EQ(q.delete_expired_file_by_offset(100000, kUnit), 1);  // never the last
    EXPECT_EQ(q.file_count(), 1u);
}

TEST(AllocateMappedFileService, PreallocatesNextSegment) {
    TempDir dir;
    AllocateMappedFileService alloc;
    alloc.start();
    MappedFileQueue q(dir.path(), kSeg, &alloc);
    ASSERT_TRUE(q.load().is_ok());
    for (int i = 0; i < 5; ++i) {
        auto f = q.get_last_mapped_file(0, true);
        ASSERT_TRUE(f.is_ok()) << f.status().to_string();
        EXPECT_EQ(f.value()->file_from_offset(), i * kSeg);
        ASSERT_TRUE(f.value()->append(std::string(kSeg, 'p')));
    }
    // Files 1..4 were requested ahead; each was either served by the worker or created inline
    // after waiting for it, and file 5 is being (or has been) pre-created.
    alloc.shutdown();
    EXPECT_GE(alloc.created_in_background(), 4);
    q.check_invariants();
    // After shutdown the service still serves requests inline.
    auto f = q.get_last_mapped_file(0, true);
    ASSERT_TRUE(f.is_ok());
    EXPECT_EQ(f.value()->file_from_offset(), 5 * kSeg);
}

// Prefaulting makes pages resident without changing a byte, also under written data.
TEST(MappedFile, PrefaultKeepsBytesAndMakesPagesResident) {
    TempDir dir;
    auto f = MappedFile::open(dir.path(), 0, kSeg).value();
    const std::string head(3 * kOsPageSize + 123, 'h');
    ASSERT_TRUE(f->append(head));
    const bool supported = f->prefault(kOsPageSize + 7, kSeg);  // overlaps written bytes
    EXPECT_TRUE(f->prefault(0, 0));                             // empty range: nothing to do
    EXPECT_TRUE(f->prefault(kSeg, kSeg));                       // past the end: clamped
    EXPECT_EQ(f->select(0)->bytes(), head);
    for (int64_t i = static_cast<int64_t>(head.size()); i < kSeg; ++i) {
        ASSERT_EQ(f->data()[i], 0) << i;
    }
    if (supported) {
        std::vector<unsigned char> vec(kSeg / kOsPageSize);
        ASSERT_EQ(::mincore(f->data(), kSeg, vec.data()), 0);
        for (size_t i = 0; i < vec.size(); ++i) {
            EXPECT_TRUE(vec[i] & 1) << "page " << i << " not resident";
        }
    }
}

// A new file's directory entry is synced by its first data flush (not at creation); the
// flush still reports the data durable and reopening finds the file.
TEST(MappedFile, FirstFlushMakesNewFileDurable) {
    TempDir dir;
    {
        auto f = MappedFile::open(dir.path(), kSeg, kSeg).value();
        EXPECT_EQ(f->flush(0).value(), 0);  // nothing written: nothing to sync
        ASSERT_TRUE(f->append("abc"));
        EXPECT_EQ(f->flush(0).value(), 3);
        ASSERT_TRUE(f->append("def"));
        EXPECT_EQ(f->flush(0).value(), 6);
    }
    auto f = MappedFile::open(dir.path(), kSeg, kSeg).value();
    f->set_positions(6);
    EXPECT_EQ(f->select(0)->bytes(), "abcdef");
}

// The allocator faults in the head of a segment it pre-creates when asked to.
TEST(AllocateMappedFileService, PrefaultsHeadOfPreallocatedSegment) {
    TempDir dir;
    AllocateMappedFileService alloc;
    alloc.start();
    MappedFileQueue q(dir.path(), kSeg, &alloc);
    q.set_prefault_on_preallocate(2 * kOsPageSize);
    ASSERT_TRUE(q.load().is_ok());
    auto [first, second] = first_inline_second_from_worker(alloc, q);
    ASSERT_TRUE(second != nullptr);
    std::vector<unsigned char> vec(2);
    ASSERT_EQ(::mincore(second->data(), 2 * kOsPageSize, vec.data()), 0);
    if (!second->prefault(kSeg - 1, 1)) {
        GTEST_SKIP() << "madvise(MADV_POPULATE_WRITE) unsupported by this kernel (Linux < 5.14)";
    }
    EXPECT_TRUE(vec[0] & 1);
    EXPECT_TRUE(vec[1] & 1);
    EXPECT_EQ(second->wrote_position(), 0);
    alloc.shutdown();
}

// Decision 035: a zero-filled segment has every block written, so a sync of new bytes commits
// no metadata; a fallocate'd one (unwritten extents) is never taken for one.
TEST(MappedFile, ZeroFilledFileIsFullyWrittenAndAFallocatedOneIsNot) {
    TempDir dir;
    auto zeroed = MappedFile::open(dir.path(), 0, kSeg, /*zero_fill=*/true);
    ASSERT_TRUE(zeroed.is_ok()) << zeroed.status().to_string();
    EXPECT_TRUE(zeroed.value()->fully_written());
    for (int64_t i = 0; i < kSeg; i += 4093) {
        ASSERT_EQ(zeroed.value()->data()[i], 0) << i;
    }
    EXPECT_EQ(fs::directory_iterator(dir.path())->path().filename().string().size(), 20u)
        << "no temporary file left behind";
    auto plain = MappedFile::open(dir.path(), kSeg, kSeg);
    ASSERT_TRUE(plain.is_ok());
    EXPECT_FALSE(plain.value()->fully_written());
    zeroed.value().reset();
    plain.value().reset();

    // Reopened: the file system is asked. A fallocate'd file never passes; the zero-filled one
    // does wherever FIEMAP reports extents (ext4, XFS, btrfs; not tmpfs).
    auto plain_again = MappedFile::open(dir.path(), kSeg, kSeg, /*zero_fill=*/true);
    ASSERT_TRUE(plain_again.is_ok());
    EXPECT_FALSE(plain_again.value()->fully_written());
    auto zeroed_again = MappedFile::open(dir.path(), 0, kSeg, /*zero_fill=*/true);
    ASSERT_TRUE(zeroed_again.is_ok());
    if (!zeroed_again.value()->fully_written()) {
        std::cout << "note: FIEMAP does not report written extents on this file system; "
                     "reopened segments use the two-flush path\n";
    }
    // Without zero_fill the question is never asked.
    zeroed_again.value().reset();
    auto unasked = MappedFile::open(dir.path(), 0, kSeg);
    ASSERT_TRUE(unasked.is_ok());
    EXPECT_FALSE(unasked.value()->fully_written());
}

TEST(MappedFile, ZeroTailMakesAZeroFilledFileAFallocatedOneAgain) {
    TempDir dir;
    auto f = MappedFile::open(dir.path(), 0, kSeg, /*zero_fill=*/true).value();
    ASSERT_TRUE(f->append(std::string(3 * kOsPageSize, 'a')));
    f->set_positions(kOsPageSize);
    ASSERT_TRUE(f->zero_tail().is_ok());
    // Wherever the hole punch worked the tail is unwritten again; where it could not, the
    // tail was zeroed in place and stays written.
    if (f->fully_written()) {
        EXPECT_EQ(f->data()[kOsPageSize], 0);
    }
    EXPECT_EQ(f->data()[kOsPageSize - 1], 'a');
    EXPECT_EQ(f->data()[2 * kOsPageSize], 0);
}

TEST(MappedFile, WriteBackLeavesTheFlushedPositionToMarkFlushed) {
    TempDir dir;
    auto f = MappedFile::open(dir.path(), 0, kSeg, /*zero_fill=*/true).value();
    ASSERT_TRUE(f->append(std::string(5000, 'b')));
    auto wrote = f->write_back();
    ASSERT_TRUE(wrote.is_ok()) << wrote.status().to_string();
    EXPECT_EQ(wrote.value(), 5000);
    EXPECT_EQ(f->flushed_position(), 0) << "not durable before the device flush";
    f->mark_flushed(wrote.value());
    EXPECT_EQ(f->flushed_position(), 5000);
    f->mark_flushed(100);
    EXPECT_EQ(f->flushed_position(), 5000) << "never moves backwards";
    set_flush_fault_for_test(true);
    ASSERT_TRUE(f->append(std::string(10, 'c')));
    auto failed = f->write_back();
    set_flush_fault_for_test(false);
    EXPECT_FALSE(failed.is_ok());
    EXPECT_EQ(f->flushed_position(), 5000);
}

TEST(MappedFileQueue, WriteBackCoversEveryZeroFilledSegmentOrNone) {
    TempDir dir;
    {
        MappedFileQueue q(dir.path(), kSeg, nullptr);
        q.set_zero_fill(true);
        ASSERT_TRUE(q.load().is_ok());
        auto a = q.get_last_mapped_file(0, true).value();
        ASSERT_TRUE(a->append(std::string(kSeg, 'x')));
        auto b = q.get_last_mapped_file(0, true).value();
        ASSERT_TRUE(b->append(std::string(100, 'y')));
        auto where = q.write_back();
        ASSERT_TRUE(where.is_ok());
        ASSERT_TRUE(where.value().has_value());
        EXPECT_EQ(*where.value(), kSeg + 100);
        EXPECT_EQ(q.flushed_where(), 0);
        q.mark_flushed(*where.value());
        EXPECT_EQ(q.flushed_where(), kSeg + 100);
        EXPECT_EQ(a->flushed_position(), kSeg);
        EXPECT_EQ(b->flushed_position(), 100);
    }
    // A queue whose unflushed range holds a fallocate'd segment writes nothing back.
    TempDir dir2;
    MappedFileQueue q(dir2.path(), kSeg, nullptr);
    ASSERT_TRUE(q.load().is_ok());
    ASSERT_TRUE(q.get_last_mapped_file(0, true).value()->append("z"));
    auto where = q.write_back();
    ASSERT_TRUE(where.is_ok());
    EXPECT_FALSE(where.value().has_value());
}

TEST(AllocateMappedFileService, ZeroFillsOnlyTheFilesItsWorkerCreates) {
    TempDir dir;
    AllocateMappedFileService alloc;
    alloc.start();
    MappedFileQueue q(dir.path(), kSeg, &alloc);
    q.set_zero_fill(true);
    ASSERT_TRUE(q.load().is_ok());
    auto [first, second] = first_inline_second_from_worker(alloc, q);
    ASSERT_TRUE(second != nullptr);
    EXPECT_FALSE(first->fully_written()) << "created inline: never zero-filled";
    EXPECT_TRUE(second->fully_written());
    alloc.shutdown();
}

}  // namespace
}  // namespace comet::store
