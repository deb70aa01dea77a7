#include "store/index_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "commit_log_test_util.h"
#include "base/bytes.h"
#include "base/clock.h"
#include "store/index_file_service.h"

namespace comet::store {
namespace {

using testing::read_file;
using testing::store_vectors_dir;

namespace fs = std::filesystem;

// The fields of a v1/IPv4 stored record (reference §5.1) that indexing needs.
struct RawRecord {
    int64_t phy_offset = 0;
    int64_t store_timestamp = 0;
    std::string topic;
    std::map<std::string, std::string> props;
};

std::vector<RawRecord> parse_commitlog_prefix(const std::string& bytes) {
    std::vector<RawRecord> out;
    size_t pos = 0;
    while (pos + 8 <= bytes.size()) {
        const auto* p = reinterpret_cast<const uint8_t*>(bytes.data() + pos);
        const auto total = static_cast<int32_t>(get_be32(p));
        if (total <= 0 || pos + static_cast<size_t>(total) > bytes.size()) {
            break;
        }
        RawRecord r;
        r.phy_offset = static_cast<int64_t>(get_be64(p + 28));
        r.store_timestamp = static_cast<int64_t>(get_be64(p + 56));
        const auto body_len = static_cast<int32_t>(get_be32(p + 84));
        size_t q = 88 + static_cast<size_t>(body_len);
        const uint8_t topic_len = p[q];
        r.topic.assign(reinterpret_cast<const char*>(p + q + 1), topic_len);
        q += 1 + topic_len;
        const uint16_t props_len = get_be16(p + q);
        const std::string props(reinterpret_cast<const char*>(p + q + 2), props_len);
        size_t s = 0;
        while (s < props.size()) {
            size_t e = props.find('\2', s);
            if (e == std::string::npos) {
                e = props.size();
            }
            const std::string kv = props.substr(s, e - s);
            const size_t sep = kv.find('\1');
            if (sep != std::string::npos) {
                r.props[kv.substr(0, sep)] = kv.substr(sep + 1);
            }
            s = e + 1;
        }
        out.push_back(std::move(r));
        pos += static_cast<size_t>(total);
    }
    return out;
}

class IndexFileTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("index_test_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
};

// Rebuilds RocketMQ 4.9.8's index file from its own CommitLog records (same slot count, same
// key order: UNIQ_KEY, then KEYS split on spaces) and compares header, slots and entries with
// the captured bytes.
TEST_F(IndexFileTest, RebuildsGoldenRocketMqIndexByteForByte) {
    const auto records =
        parse_commitlog_prefix(read_file(store_vectors_dir() + "/commitlog-00000000000000000000.prefix"));
    ASSERT_EQ(records.size(), 15u);
    const int32_t slots = 5'000'000;
    auto f = IndexFile::create((dir_ / "20261130175709825").string(), slots, 64, PhysicalOffset(0),
                               0);
    ASSERT_TRUE(f.is_ok()) << f.status().to_string();
    for (const auto& r : records) {
        auto uniq = r.props.find("UNIQ_KEY");
        if (uniq != r.props.end()) {
            ASSERT_TRUE((*f)->put_key(r.topic + "#" + uniq->second, PhysicalOffset(r.phy_offset),
                                      r.store_timestamp));
        }
        auto keys = r.props.find("KEYS");
        if (keys != r.props.end()) {
            size_t s = 0;
            const std::string& k = keys->second;
            while (s <= k.size()) {
                size_t e = k.find(' ', s);
                if (e == std::string::npos) {
                    e = k.size();
                }
                if (e > s) {
                    ASSERT_TRUE((*f)->put_key(r.topic + "#" + k.substr(s, e - s),
                                              PhysicalOffset(r.phy_offset), r.store_timestamp));
                }
                s = e + 1;
            }
        }
    }
    const IndexHeader& h = (*f)->header();
    EXPECT_EQ(h.begin_timestamp, 1796061429812);
    EXPECT_EQ(h.end_timestamp, 1796061462213);
    EXPECT_EQ(h.begin_phy_offset.value(), 0);
    EXPECT_EQ(h.end_phy_offset.value(), 2920);
    EXPECT_EQ(h.hash_slot_count, 24);
    EXPECT_EQ(h.index_count, 25);

    // MAP_SHARED: read() sees the mapped bytes without an msync.
    const std::string mine = read_file((dir_ / "20261130175709825").string());
    EXPECT_EQ(mine.substr(0, kIndexHeaderSize),
              read_file(store_vectors_dir() + "/index-20261130175709825.header"));
    const size_t entries_at = kIndexHeaderSize + size_t{slots} * kIndexHashSlotSize;
    EXPECT_EQ(mine.substr(entries_at, 25 * kIndexEntrySize),
              read_file(store_vectors_dir() + "/index-20261130175709825.entries"));
    const std::map<int32_t, int32_t> golden_slots = {
        {301872, 20},  {563306, 17},  {1866228, 6},  {2331668, 21}, {2362917, 22},
        {2362931, 18}, {2362932, 7},  {2362933, 5},  {2472284, 12}, {2472285, 10},
        {2472286, 8},  {2595408, 13}, {2595409, 11}, {2595410, 9},  {2699664, 19},
        {2864403, 14}, {3127754, 23}, {3127755, 24}, {3150590, 1},  {3250904, 3},
        {3250905, 2},  {3394961, 16}, {3410321, 4},  {3579345, 15}};
    for (const auto& [slot, value] : golden_slots) {
        EXPECT_EQ((*f)->slot(slot), value) << "slot " << slot;
    }

    // Lookups by key.
    std::vector<PhysicalOffset> found;
    (*f)->select_phy_offsets("VecTopic#KeyC", 10, 0, INT64_MAX, &found);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].value(), 476);
    found.clear();
    (*f)->select_phy_offsets("VecTopic#KeyBatch2", 10, 0, INT64_MAX, &found);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].value(), 956);
    found.clear();
    (*f)->select_phy_offsets("VecTopic#NoSuchKey", 10, 0, INT64_MAX, &found);
    EXPECT_TRUE(found.empty());
}

TEST_F(IndexFileTest, ChainsCollisionsTimeRangesFullAndReload) {
    const std::string path = (dir_ / "20260101000000000").string();
    {
        auto f = IndexFile::create(path, 1, 6, PhysicalOffset(100), 5000);  // one slot: all collide
        ASSERT_TRUE(f.is_ok());
        EXPECT_EQ((*f)->header().begin_phy_offset.value(), 100);
        EXPECT_TRUE((*f)->put_key("T#a", PhysicalOffset(100), 10'000));
        EXPECT_TRUE((*f)->put_key("T#b", PhysicalOffset(200), 12'000));
        EXPECT_TRUE((*f)->put_key("T#a", PhysicalOffset(300), 15'000));
        EXPECT_TRUE((*f)->put_key("T#a", PhysicalOffset(400), 20'000));
        EXPECT_TRUE((*f)->put_key("T#c", PhysicalOffset(500), 21'000));
        EXPECT_TRUE((*f)->is_write_full());  // 5 entries + unused entry 0
        EXPECT_FALSE((*f)->put_key("T#a", PhysicalOffset(600), 22'000));
        EXPECT_EQ((*f)->header().hash_slot_count, 1);

        std::vector<PhysicalOffset> found;
        (*f)->select_phy_offsets("T#a", 10, 0, INT64_MAX, &found);
        ASSERT_EQ(found.size(), 3u);  // newest first
        EXPECT_EQ(found[0].value(), 400);
        EXPECT_EQ(found[2].value(), 100);
        found.clear();
        (*f)->select_phy_offsets("T#a", 2, 0, INT64_MAX, &found);
        EXPECT_EQ(found.size(), 2u);
        found.clear();
        (*f)->select_phy_offsets("T#a", 10, 14'000, 16'000, &found);
        ASSERT_EQ(found.size(), 1u);
        EXPECT_EQ(found[0].value(), 300);
        EXPECT_TRUE((*f)->is_time_matched(0, 11'000));
        EXPECT_FALSE((*f)->is_time_matched(22'000, 30'000));
        ASSERT_TRUE((*f)->flush().is_ok());
    }
    auto f = IndexFile::load(path, 1, 6);
    ASSERT_TRUE(f.is_ok()) << f.status().to_string();
    EXPECT_EQ((*f)->header().index_count, 6);
    EXPECT_EQ((*f)->header().end_phy_offset.value(), 500);
    std::vector<PhysicalOffset> found;
    (*f)->select_phy_offsets("T#b", 10, 0, INT64_MAX, &found);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].value(), 200);
    // Wrong geometry is reported, not crashed on.
    auto bad = IndexFile::load(path, 2, 6);
    EXPECT_FALSE(bad.is_ok());
    ASSERT_TRUE((*f)->destroy().is_ok());
    EXPECT_FALSE(fs::exists(path));
}

// A broker killed while an index file is being allocated (hundreds of MB at the defaults) left
// a file without a header, and the next start failed with "bad header indexCount=0". Now the
// file only gets its name once its header is written, and a torn file found at load is dropped
// and rebuilt from the CommitLog instead of stopping the broker.
TEST_F(IndexFileTest, KillDuringCreationOrTornHeaderIsRebuiltNotFatal) {
    ManualClock clock;
    std::vector<std::string> names;
    {
        IndexService index(dir_.string(), 4, 3, clock);  // two entries a file
        ASSERT_TRUE(index.load(true, 0).is_ok());
        for (int i = 0; i < 3; ++i) {
            clock.advance(std::chrono::milliseconds(5));
            ASSERT_TRUE(index.build_index({"T", "k" + std::to_string(i), "",
                                           PhysicalOffset(100 * (i + 1)), clock.wall_millis(), 0})
                            .is_ok());
        }
        ASSERT_EQ(index.file_count(), 2u);
        ASSERT_TRUE(index.flush().is_ok());
        for (const auto& e : fs::directory_iterator(dir_)) {
            names.push_back(e.path().filename().string());
        }
    }
    std::sort(names.begin(), names.end());
    ASSERT_EQ(names.size(), 2u);  // no temporary name left behind
    // A kill during the third file's allocation, and the second file's header torn.
    std::ofstream((dir_ / "99990101000000000.creating").string()) << std::string(64, '\0');
    {
        std::fstream torn((dir_ / names[1]).string(), std::ios::in | std::ios::out | std::ios::binary);
        const std::string zeros(kIndexHeaderSize, '\0');
        torn.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
    }
    IndexService index(dir_.string(), 4, 3, clock);
    auto from = index.load(false, INT64_MAX);
    ASSERT_TRUE(from.is_ok()) << from.status().to_string();
    EXPECT_EQ(*from, 200);  // where the first, intact file ends
    EXPECT_EQ(index.file_count(), 1u);
    EXPECT_FALSE(fs::exists(dir_ / "99990101000000000.creating"));
    EXPECT_FALSE(fs::exists(dir_ / names[1]));
    // Rebuilding the dropped record indexes it again.
    ASSERT_TRUE(index.build_index({"T", "k2", "", PhysicalOffset(300), clock.wall_millis(), 0})
                    .is_ok());
    auto found = index.query_offset("T", "k2", 10, 0, INT64_MAX);
    ASSERT_EQ(found.phy_offsets.size(), 1u);
    EXPECT_EQ(found.phy_offsets[0].value(), 300);
    // An existing name is never overwritten.
    auto again = IndexFile::create((dir_ / names[0]).string(), 4, 3, PhysicalOffset(0), 0);
    ASSERT_FALSE(again.is_ok());
    EXPECT_EQ(again.status().code(), Errc::kAlreadyExists);
}

}  // namespace
}  // namespace comet::store
