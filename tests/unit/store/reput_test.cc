#include "store/reput.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "base/bytes.h"
#include "base/clock.h"
#include "protocol/message_decoder.h"
#include "store/consume_queue_store.h"
#include "store/index_file_service.h"

namespace comet::store {
namespace {

namespace fs = std::filesystem;

std::string store_vectors_dir() {
    if (const char* env = std::getenv("COMET_VECTORS_DIR")) {
        return std::string(env) + "/../store";
    }
    return COMET_SOURCE_DIR "/../shared/reference/vectors/store";
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A CommitLog held in a string, cut into segments of segment_size bytes.
class StringCommitLog final : public CommitLogReader {
public:
    StringCommitLog(std::string data, int64_t segment_size)
        : data_(std::move(data)), segment_size_(segment_size), max_(data_.size()) {}
    PhysicalOffset dispatchable_max_offset() const override { return PhysicalOffset(max_); }
    std::optional<MappedView> read_from(PhysicalOffset offset) const override {
        const int64_t off = offset.value();
        if (off < 0 || off >= static_cast<int64_t>(data_.size())) {
            return std::nullopt;
        }
        const int64_t seg_end = (off / segment_size_ + 1) * segment_size_;
        MappedView v;
        v.data = reinterpret_cast<const uint8_t*>(data_.data()) + off;
        v.size = static_cast<size_t>(std::min<int64_t>(seg_end, data_.size()) - off);
        v.start_offset = off;
        return v;
    }
    PhysicalOffset roll_next_file(PhysicalOffset offset) const override {
        return PhysicalOffset((offset.value() / segment_size_ + 1) * segment_size_);
    }
    PhysicalOffset min_offset() const override { return PhysicalOffset(0); }
    void set_max(int64_t m) { max_ = m; }
    std::string& data() { return data_; }

private:
    std::string data_;
    int64_t segment_size_;
    int64_t max_;
};

class ReputTest : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() /
                ("reput_test_" + std::to_string(::getpid()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root_);
        fs::create_directories(root_);
    }
    void TearDown() override { fs::remove_all(root_); }
    fs::path root_;
};

// Dispatching RocketMQ 4.9.8's own CommitLog rebuilds its ConsumeQueue files byte for byte,
// including the SCHEDULE_TOPIC_XXXX delivery-time tags codes.
TEST_F(ReputTest, RebuildsGoldenConsumeQueuesFromRocketMqCommitLog) {
    StringCommitLog log(read_file(store_vectors_dir() + "/commitlog-00000000000000000000.prefix"),
                        1 << 20);
    ASSERT_EQ(log.data().size(), 3869u);
    ConsumeQueueStore cqs((root_ / "consumequeue").string(), 100 * kCqStoreUnitSize);
    ASSERT_TRUE(cqs.load().is_ok());
    ManualClock clock;
    IndexService index((root_ / "index").string(), 101, 100, clock);
    ASSERT_TRUE(index.load(true, 0).is_ok());
    ReputMessageService reput(
        log,
        [&](const DispatchRequest& req) {
            COMET_RETURN_IF_ERROR(cqs.put_message_position_info(req));
            return index.build_index({req.topic, req.keys, req.uniq_key, req.commit_log_offset,
                                      req.store_timestamp, req.sys_flag});
        },
        parse_message_delay_level(kDefaultMessageDelayLevel));

    // Only the first three records are dispatchable.
    log.set_max(702);
    auto r = reput.do_reput();
    ASSERT_TRUE(r.is_ok());
    EXPECT_EQ(*r, 3);
    EXPECT_EQ(reput.reput_from_offset().value(), 702);
    log.set_max(3869);
    EXPECT_EQ(reput.behind(), 3869 - 702);
    r = reput.do_reput();
    ASSERT_TRUE(r.is_ok());
    EXPECT_EQ(*r, 12);
    EXPECT_EQ(reput.behind(), 0);

    const std::vector<std::pair<std::string, std::string>> goldens = {
        {"VecTopic-0", "VecTopic/0"},
        {"VecTopic-1", "VecTopic/1"},
        {"VecTopic-2", "VecTopic/2"},
        {"VecTopic-3", "VecTopic/3"},
        {"VecAutoTopic-1", "VecAutoTopic/1"},
        {"SCHEDULE_TOPIC_XXXX-2", "SCHEDULE_TOPIC_XXXX/2"},
        {"_RETRY_VecConsumerGroup-0", "%RETRY%VecConsumerGroup/0"},
        {"_RETRY_VecAliConsumerGroup-0", "%RETRY%VecAliConsumerGroup/0"},
    };
    for (const auto& [golden, dir] : goldens) {
        const std::string want =
            read_file(store_vectors_dir() + "/consumequeue/" + golden + "-00000000000000000000.prefix");
        const std::string got =
            read_file((root_ / "consumequeue" / dir / "00000000000000000000").string());
        ASSERT_EQ(got.size(), 100u * kCqStoreUnitSize) << dir;
        EXPECT_EQ(got.substr(0, want.size()), want) << dir;
        EXPECT_EQ(got.substr(want.size()), std::string(got.size() - want.size(), '\0')) << dir;
    }
    EXPECT_EQ(cqs.queues().size(), 8u);

    // Index: keys and unique keys resolve.
    auto q = index.query_offset("VecTopic", "KeyBatch3", 10, 0, INT64_MAX);
    ASSERT_EQ(q.phy_offsets.size(), 1u);
    EXPECT_EQ(q.phy_offsets[0].value(), 1210);
    q = index.query_offset("VecTopic", "KeyAli2", 10, 0, INT64_MAX);
    ASSERT_EQ(q.phy_offsets.size(), 1u);
    EXPECT_EQ(q.phy_offsets[0].value(), 2920);

    // Dispatching again from 0 changes nothing (idempotent redispatch after recovery).
    reput.set_reput_from_offset(PhysicalOffset(0));
    ASSERT_TRUE(reput.do_reput().is_ok());
    EXPECT_EQ(cqs.find("VecTopic", 0)->max_offset_in_queue().value(), 3);
    q = index.query_offset("VecTopic", "KeyBatch3", 10, 0, INT64_MAX);
    EXPECT_EQ(q.phy_offsets.size(), 1u);
}

std::string encode_at(int64_t phy, int32_t queue_id, int64_t queue_offset, const std::string& tag) {
    protocol::MessageExt m;
    m.topic = "T";
    m.body = "body-" + std::to_string(phy);
    m.queue_id = queue_id;
    m.queue_offset = queue_offset;
    m.commit_log_offset = phy;
    m.store_timestamp = 1'700'000'000'000 + phy;
    m.born_host = protocol::HostAddress::ipv4(127, 0, 0, 1, 5000);
    m.store_host = protocol::HostAddress::ipv4(127, 0, 0, 1, 10911);
    m.properties.set("TAGS", tag);
    std::string out;
    EXPECT_TRUE(protocol::encode_message(m, &out).is_ok());
    put_be32(reinterpret_cast<uint8_t*>(out.data()), static_cast<uint32_t>(out.size()));
    return out;
}

TEST_F(ReputTest, FollowsBlankFillerAndSkipsCorruptRecords) {
    const int64_t seg = 512;
    std::string data = encode_at(0, 0, 0, "a");
    const int64_t first = static_cast<int64_t>(data.size());
    data += encode_at(first, 0, 1, "b");
    // Filler: TOTALSIZE = rest of the segment, BLANK magic.
    std::string blank(8, '\0');
    put_be32(reinterpret_cast<uint8_t*>(blank.data()), static_cast<uint32_t>(seg - data.size()));
    put_be32(reinterpret_cast<uint8_t*>(blank.data()) + 4,
             static_cast<uint32_t>(protocol::kBlankMagicCode));
    data += blank;
    data.resize(seg, '\0');
    data += encode_at(seg, 0, 2, "c");
    const int64_t corrupt_at = static_cast<int64_t>(data.size());
    std::string bad = encode_at(corrupt_at, 0, 3, "d");
    // Break the properties length so the lengths no longer add up.
    const size_t props_len_pos = bad.size() - 2 - std::string("TAGS\1d\2").size();
    put_be16(reinterpret_cast<uint8_t*>(bad.data()) + props_len_pos, 0x7FFF);
    data += bad;
    data += encode_at(static_cast<int64_t>(data.size()), 0, 3, "e");

    StringCommitLog log(data, seg);
    std::vector<DispatchRequest> seen;
    ReputMessageService reput(
        log,
        [&](const DispatchRequest& req) {
            seen.push_back(req);
            return Status::ok();
        },
        {});
    auto r = reput.do_reput();
    ASSERT_TRUE(r.is_ok());
    ASSERT_EQ(seen.size(), 4u);
    EXPECT_EQ(seen[0].commit_log_offset.value(), 0);
    EXPECT_EQ(seen[1].commit_log_offset.value(), first);
    EXPECT_EQ(seen[2].commit_log_offset.value(), seg);
    EXPECT_EQ(seen[2].tags_code, tags_string_to_tags_code("c"));
    EXPECT_EQ(seen[3].consume_queue_offset.value(), 3);
    EXPECT_EQ(reput.corrupt_skipped(), 1);
    EXPECT_EQ(reput.reput_from_offset().value(), static_cast<int64_t>(data.size()));

    // A dispatch failure stops at that record and is retried later.
    ReputMessageService failing(
        log, [&](const DispatchRequest& req) {
            if (req.commit_log_offset.value() == seg) {
                return Status::error(Errc::kIoError, "disk");
            }
            return Status::ok();
        },
        {});
    EXPECT_FALSE(failing.do_reput().is_ok());
    EXPECT_EQ(failing.reput_from_offset().value(), seg);
}

TEST(ReputParseTest, DelayLevels) {
    auto v = parse_message_delay_level(kDefaultMessageDelayLevel);
    ASSERT_EQ(v.size(), 18u);
    EXPECT_EQ(v[0], 1000);
    EXPECT_EQ(v[4], 60'000);
    EXPECT_EQ(v[17], 7'200'000);
    EXPECT_TRUE(parse_message_delay_level("x 5q").empty());
}

TEST_F(ReputTest, ThreadDispatchesAfterWakeup) {
    StringCommitLog log(encode_at(0, 0, 0, "a") , 1 << 20);
    std::atomic<int> count{0};
    ReputMessageService reput(
        log,
        [&](const DispatchRequest&) {
            count.fetch_add(1);
            return Status::ok();
        },
        {});
    reput.start();
    reput.wakeup();
    for (int i = 0; i < 2000 && count.load() == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    reput.shutdown();
    EXPECT_EQ(count.load(), 1);
}

}  // namespace
}  // namespace comet::store
