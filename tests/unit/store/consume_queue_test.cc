#include "store/consume_queue.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "commit_log_test_util.h"
#include "store/consume_queue_store.h"
#include "store/consume_queue_unit.h"

namespace comet::store {
namespace {

using testing::read_file;
using testing::store_vectors_dir;

namespace fs = std::filesystem;

// Captured RocketMQ 4.9.8 store files (see ../shared/reference/vectors/INDEX.md §3).
class ConsumeQueueTest : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() /
                ("cq_test_" + std::to_string(::getpid()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root_);
        fs::create_directories(root_);
    }
    void TearDown() override { fs::remove_all(root_); }

    std::string cq_root() const { return (root_ / "consumequeue").string(); }

    fs::path root_;
};

TEST(ConsumeQueueUnitTest, JavaHashCodes) {
    // Tags codes of the captured RocketMQ 4.9.8 ConsumeQueue units.
    EXPECT_EQ(tags_string_to_tags_code("TagA"), 2598919);
    EXPECT_EQ(tags_string_to_tags_code("TagBatch"), -726516768);
    EXPECT_EQ(tags_string_to_tags_code("TagAli"), -1797402684);
    EXPECT_EQ(tags_string_to_tags_code("TagAuto"), 115100745);
    EXPECT_EQ(tags_string_to_tags_code(""), 0);
    // Non-ASCII: "é" is one UTF-16 unit (0xE9); U+1F600 is a surrogate pair.
    EXPECT_EQ(java_string_hash_code("\xC3\xA9"), 0xE9);
    EXPECT_EQ(java_string_hash_code("\xF0\x9F\x98\x80"), 31 * 0xD83D + 0xDE00);
    EXPECT_EQ(java_string_hash_code("\xFF"), 0xFFFD);  // malformed byte
    // Java's "hello world".hashCode().
    EXPECT_EQ(java_string_hash_code("hello world"), 1794106052);
}

TEST(ConsumeQueueUnitTest, JavaHashCodeOfAsciiRunsAndMixedText) {
    // The ASCII fast path (four characters a step) against Java's definition, a UTF-16 unit at
    // a time, for every length and with a non-ASCII character at every position.
    auto reference = [](const std::vector<uint32_t>& units) {
        uint32_t h = 0;
        for (uint32_t u : units) {
            h = 31 * h + u;
        }
        return static_cast<int32_t>(h);
    };
    for (size_t len = 0; len <= 40; ++len) {
        std::string text;
        std::vector<uint32_t> units;
        for (size_t i = 0; i < len; ++i) {
            const char c = static_cast<char>('!' + (i * 7) % 90);
            text.push_back(c);
            units.push_back(static_cast<uint32_t>(c));
        }
        EXPECT_EQ(java_string_hash_code(text), reference(units)) << len;
        for (size_t at = 0; at <= len; ++at) {
            std::string mixed = text.substr(0, at) + "\xC3\xA9" + text.substr(at);  // U+00E9
            std::vector<uint32_t> mixed_units(units.begin(), units.begin() + static_cast<long>(at));
            mixed_units.push_back(0xE9);
            mixed_units.insert(mixed_units.end(), units.begin() + static_cast<long>(at), units.end());
            EXPECT_EQ(java_string_hash_code(mixed), reference(mixed_units)) << len << " " << at;
        }
    }
}

TEST(ConsumeQueueUnitTest, EncodeDecodeRoundTrip) {
    CqUnit u{PhysicalOffset(1234567890123), 257, -726516768};
    uint8_t buf[kCqStoreUnitSize];
    encode_cq_unit(u, buf);
    const CqUnit d = decode_cq_unit(buf);
    EXPECT_EQ(d.phy_offset, u.phy_offset);
    EXPECT_EQ(d.size, 257);
    EXPECT_EQ(d.tags_code, -726516768);
}

// Loads the real files RocketMQ 4.9.8 wrote (prefix + zeros, as on disk) and reads them back.
TEST_F(ConsumeQueueTest, ReadsGoldenRocketMqFiles) {
    struct Golden {
        const char* file;
        std::string topic;
        int32_t queue_id;
        std::vector<CqUnit> units;
    };
    const std::vector<Golden> goldens = {
        {"VecTopic-0", "VecTopic", 0,
         {{PhysicalOffset(0), 257, 2598919},
          {PhysicalOffset(257), 219, 2598920},
          {PhysicalOffset(476), 226, 2598921}}},
        {"VecTopic-1", "VecTopic", 1,
         {{PhysicalOffset(702), 254, -726516768},
          {PhysicalOffset(956), 254, -726516768},
          {PhysicalOffset(1210), 254, -726516768}}},
        {"SCHEDULE_TOPIC_XXXX-2", "SCHEDULE_TOPIC_XXXX", 2,
         {{PhysicalOffset(1695), 374, 1796061441904},
          {PhysicalOffset(3258), 302, 1796061485284}}},
        {"_RETRY_VecConsumerGroup-0", "%RETRY%VecConsumerGroup", 0,
         {{PhysicalOffset(2297), 378, 2598921}}},
    };
    const int64_t seg = 100 * kCqStoreUnitSize;
    for (const auto& g : goldens) {
        const std::string prefix =
            read_file(store_vectors_dir() + "/consumequeue/" + g.file + "-00000000000000000000.prefix");
        std::string content = prefix;
        ASSERT_EQ(content.size(), g.units.size() * kCqStoreUnitSize) << g.file;
        content.resize(seg, '\0');
        const fs::path dir = fs::path(cq_root()) / g.topic / std::to_string(g.queue_id);
        fs::create_directories(dir);
        std::ofstream(dir / "00000000000000000000", std::ios::binary) << content;

        ConsumeQueue cq(g.topic, g.queue_id, cq_root(), seg);
        ASSERT_TRUE(cq.load().is_ok()) << g.file;
        ASSERT_TRUE(cq.recover().is_ok());
        EXPECT_EQ(cq.min_offset_in_queue().value(), 0);
        ASSERT_EQ(cq.max_offset_in_queue().value(), static_cast<int64_t>(g.units.size()));
        for (size_t i = 0; i < g.units.size(); ++i) {
            auto u = cq.get_unit(QueueOffset(static_cast<int64_t>(i)));
            ASSERT_TRUE(u.has_value());
            EXPECT_EQ(u->phy_offset, g.units[i].phy_offset) << g.file << " unit " << i;
            EXPECT_EQ(u->size, g.units[i].size);
            EXPECT_EQ(u->tags_code, g.units[i].tags_code);
        }
        const auto& last = g.units.back();
        EXPECT_EQ(cq.max_physic_offset().value(), last.phy_offset.value() + last.size);
        EXPECT_FALSE(cq.get_unit(QueueOffset(static_cast<int64_t>(g.units.size()))).has_value());

        // The bytes we would write for the same units equal RocketMQ's.
        ConsumeQueue mine(g.topic + "Copy", g.queue_id, cq_root(), seg);
        ASSERT_TRUE(mine.load().is_ok());
        for (size_t i = 0; i < g.units.size(); ++i) {
            ASSERT_TRUE(mine.put_message_position_info(g.units[i],
                                                       QueueOffset(static_cast<int64_t>(i)))
                            .is_ok());
        }
        auto view = mine.get_index_buffer(QueueOffset(0));
        ASSERT_TRUE(view.has_value());
        EXPECT_EQ(std::string(view->bytes()), content.substr(0, prefix.size()));
    }
}

TEST_F(ConsumeQueueTest, AppendRollLookupAndRecover) {
    const int64_t seg = 4 * kCqStoreUnitSize;  // 4 units per segment
    {
        ConsumeQueue cq("T", 3, cq_root(), seg);
        ASSERT_TRUE(cq.load().is_ok());
        ASSERT_TRUE(cq.recover().is_ok());
        EXPECT_EQ(cq.max_offset_in_queue().value(), 0);
        for (int i = 0; i < 10; ++i) {
            ASSERT_TRUE(cq.put_message_position_info({PhysicalOffset(i * 100), 100, i},
                                                     QueueOffset(i))
                            .is_ok());
        }
        EXPECT_EQ(cq.max_offset_in_queue().value(), 10);
        EXPECT_EQ(cq.mapped_file_queue().file_count(), 3u);
        // A buffer stops at the end of its segment.
        auto view = cq.get_index_buffer(QueueOffset(5));
        ASSERT_TRUE(view.has_value());
        EXPECT_EQ(view->size, 3u * kCqStoreUnitSize);
        EXPECT_EQ(cq.roll_next_file(QueueOffset(5)).value(), 8);
        // Redispatch of an already-built unit is ignored; a gap is refused.
        EXPECT_TRUE(cq.put_message_position_info({PhysicalOffset(900), 100, 9}, QueueOffset(9))
                        .is_ok());
        EXPECT_EQ(cq.max_offset_in_queue().value(), 10);
        EXPECT_FALSE(
            cq.put_message_position_info({PhysicalOffset(5000), 10, 0}, QueueOffset(12)).is_ok());
        ASSERT_TRUE(cq.flush(0).is_ok());
    }
    ConsumeQueue cq("T", 3, cq_root(), seg);
    ASSERT_TRUE(cq.load().is_ok());
    ASSERT_TRUE(cq.recover().is_ok());
    EXPECT_EQ(cq.max_offset_in_queue().value(), 10);
    EXPECT_EQ(cq.max_physic_offset().value(), 1000);
    auto u = cq.get_unit(QueueOffset(7));
    ASSERT_TRUE(u.has_value());
    EXPECT_EQ(u->phy_offset.value(), 700);

    // The CommitLog was cut at 700: units 7.. point at or beyond it and go away.
    ASSERT_TRUE(cq.truncate_dirty_logic_files(PhysicalOffset(700)).is_ok());
    EXPECT_EQ(cq.max_offset_in_queue().value(), 7);
    EXPECT_EQ(cq.max_physic_offset().value(), 700);
    EXPECT_EQ(cq.mapped_file_queue().file_count(), 2u);
    // Appending continues right after the cut.
    ASSERT_TRUE(
        cq.put_message_position_info({PhysicalOffset(700), 10, 0}, QueueOffset(7)).is_ok());
    EXPECT_EQ(cq.max_offset_in_queue().value(), 8);
    // Cut everything.
    ASSERT_TRUE(cq.truncate_dirty_logic_files(PhysicalOffset(0)).is_ok());
    EXPECT_EQ(cq.max_offset_in_queue().value(), 0);
    EXPECT_EQ(cq.max_physic_offset().value(), -1);
}

TEST_F(ConsumeQueueTest, RecoverStopsAtTornUnit) {
    const int64_t seg = 8 * kCqStoreUnitSize;
    {
        ConsumeQueue cq("T", 0, cq_root(), seg);
        ASSERT_TRUE(cq.load().is_ok());
        for (int i = 0; i < 6; ++i) {
            ASSERT_TRUE(cq.put_message_position_info({PhysicalOffset(i * 50), 50, 0},
                                                     QueueOffset(i))
                            .is_ok());
        }
    }
    // Zero the size of unit 4, as a torn write would leave it.
    {
        std::fstream f(fs::path(cq_root()) / "T" / "0" / "00000000000000000000",
                       std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(4 * kCqStoreUnitSize + 8);
        const char zero[4] = {0, 0, 0, 0};
        f.write(zero, 4);
    }
    ConsumeQueue cq("T", 0, cq_root(), seg);
    ASSERT_TRUE(cq.load().is_ok());
    ASSERT_TRUE(cq.recover().is_ok());
    EXPECT_EQ(cq.max_offset_in_queue().value(), 4);
    EXPECT_EQ(cq.max_physic_offset().value(), 200);
}

TEST_F(ConsumeQueueTest, LateStartIsBlankFilledAndMinOffsetMoves) {
    const int64_t seg = 4 * kCqStoreUnitSize;
    ConsumeQueue cq("T", 1, cq_root(), seg);
    ASSERT_TRUE(cq.load().is_ok());
    ASSERT_TRUE(cq.put_message_position_info({PhysicalOffset(1000), 10, 0}, QueueOffset(6))
                    .is_ok());
    EXPECT_EQ(cq.min_offset_in_queue().value(), 6);
    EXPECT_EQ(cq.max_offset_in_queue().value(), 7);
    EXPECT_FALSE(cq.get_unit(QueueOffset(5)).has_value());
    for (int i = 7; i < 14; ++i) {
        ASSERT_TRUE(cq.put_message_position_info({PhysicalOffset(1000 + (i - 6) * 10), 10, 0},
                                                 QueueOffset(i))
                        .is_ok());
    }
    // Reload: blank units are not counted as data.
    ConsumeQueue again("T", 1, cq_root(), seg);
    ASSERT_TRUE(again.load().is_ok());
    ASSERT_TRUE(again.recover().is_ok());
    EXPECT_EQ(again.min_offset_in_queue().value(), 6);
    EXPECT_EQ(again.max_offset_in_queue().value(), 14);

    // Retention: CommitLog now starts at 1045 -> segment [4,8) goes, min moves to unit 11.
    EXPECT_EQ(again.delete_expired_file(PhysicalOffset(1045)), 1);
    EXPECT_EQ(again.min_offset_in_queue().value(), 11);
    auto u = again.get_unit(QueueOffset(11));
    ASSERT_TRUE(u.has_value());
    EXPECT_EQ(u->phy_offset.value(), 1050);
    EXPECT_FALSE(again.get_unit(QueueOffset(9)).has_value());
}

// Two threads asking for the same new queue get one object; only one creates its files.
TEST_F(ConsumeQueueTest, ConcurrentFindOrCreateYieldsOneQueue) {
    ConsumeQueueStore store(cq_root(), 1000 * kCqStoreUnitSize, nullptr);
    ASSERT_TRUE(store.load().is_ok());
    for (int round = 0; round < 20; ++round) {
        const std::string topic = "Race" + std::to_string(round);
        std::shared_ptr<ConsumeQueue> a;
        std::shared_ptr<ConsumeQueue> b;
        std::thread t([&] { a = store.find_or_create(topic, 1).value(); });
        b = store.find_or_create(topic, 1).value();
        t.join();
        ASSERT_EQ(a, b) << topic;
        ASSERT_TRUE(a->put_message_position_info(CqUnit{PhysicalOffset(10), 5, 7}, QueueOffset(0))
                        .is_ok());
        EXPECT_EQ(store.find(topic, 1)->max_offset_in_queue(), QueueOffset(1));
    }
}

// Units written across page boundaries (the first unit of each page goes through pwrite, the
// rest through the mapping) read back through the mapping and after a reload.
TEST_F(ConsumeQueueTest, UnitsAcrossPagesReadBackAndSurviveReload) {
    constexpr int kUnits = 1000;  // ~5 pages
    {
        ConsumeQueue cq("PageTopic", 0, cq_root(), 2000 * kCqStoreUnitSize, nullptr);
        ASSERT_TRUE(cq.load().is_ok());
        ASSERT_TRUE(cq.recover().is_ok());
        for (int i = 0; i < kUnits; ++i) {
            ASSERT_TRUE(cq.put_message_position_info(
                              CqUnit{PhysicalOffset(1000 + 100 * i), 100, i}, QueueOffset(i))
                            .is_ok())
                << i;
        }
        for (int i = 0; i < kUnits; ++i) {
            auto u = cq.get_unit(QueueOffset(i));
            ASSERT_TRUE(u.has_value()) << i;
            EXPECT_EQ(u->phy_offset.value(), 1000 + 100 * i);
            EXPECT_EQ(u->tags_code, i);
        }
        ASSERT_TRUE(cq.flush(0).is_ok());
    }
    ConsumeQueue again("PageTopic", 0, cq_root(), 2000 * kCqStoreUnitSize, nullptr);
    ASSERT_TRUE(again.load().is_ok());
    ASSERT_TRUE(again.recover().is_ok());
    EXPECT_EQ(again.max_offset_in_queue(), QueueOffset(kUnits));
    auto u = again.get_unit(QueueOffset(kUnits - 1));
    ASSERT_TRUE(u.has_value());
    EXPECT_EQ(u->phy_offset.value(), 1000 + 100 * (kUnits - 1));
}

// A dispatch pass stages units and writes each queue's run with one pwrite() at the end:
// readers see nothing staged, a run never spans segments (the earlier part is written when
// the next unit belongs to the next segment), a unit staged again is ignored, a gap is
// refused, and what was written survives a reload.
TEST_F(ConsumeQueueTest, StagedUnitsAreWrittenPerRunAndVisibleOnlyOnceCommitted) {
    const int64_t seg = 5 * kCqStoreUnitSize;  // 5 units per segment
    {
        ConsumeQueue cq("T", 1, cq_root(), seg);
        ASSERT_TRUE(cq.load().is_ok());
        ASSERT_TRUE(cq.recover().is_ok());
        bool registered = false;
        ASSERT_TRUE(
            cq.stage_message_position_info({PhysicalOffset(0), 100, 0}, QueueOffset(0), &registered)
                .is_ok());
        EXPECT_TRUE(registered);
        EXPECT_TRUE(cq.in_pass());
        EXPECT_EQ(cq.max_offset_in_queue().value(), 0);  // staged, not visible
        EXPECT_FALSE(cq.get_unit(QueueOffset(0)).has_value());
        for (int i = 1; i < 12; ++i) {
            ASSERT_TRUE(cq.stage_message_position_info({PhysicalOffset(i * 100), 100, i},
                                                       QueueOffset(i), &registered)
                            .is_ok())
                << i;
            EXPECT_FALSE(registered) << i;  // once per pass
        }
        // Units 0-9 filled two segments and were written when unit 10 began the third.
        EXPECT_EQ(cq.max_offset_in_queue().value(), 10);
        EXPECT_EQ(cq.max_physic_offset().value(), 1000);
        // Staged again (a redispatch): ignored. A gap: refused, nothing staged changes.
        ASSERT_TRUE(cq.stage_message_position_info({PhysicalOffset(1100), 100, 11},
                                                   QueueOffset(11), &registered)
                        .is_ok());
        EXPECT_FALSE(cq.stage_message_position_info({PhysicalOffset(5000), 10, 0},
                                                    QueueOffset(14), &registered)
                         .is_ok());
        ASSERT_TRUE(cq.commit_staged().is_ok());
        cq.end_pass();
        EXPECT_FALSE(cq.in_pass());
        EXPECT_EQ(cq.max_offset_in_queue().value(), 12);
        EXPECT_EQ(cq.max_physic_offset().value(), 1200);
        for (int i = 0; i < 12; ++i) {
            auto u = cq.get_unit(QueueOffset(i));
            ASSERT_TRUE(u.has_value()) << i;
            EXPECT_EQ(u->phy_offset.value(), i * 100) << i;
            EXPECT_EQ(u->tags_code, i) << i;
        }
        // A new pass registers the queue again.
        ASSERT_TRUE(cq.stage_message_position_info({PhysicalOffset(1200), 100, 12},
                                                   QueueOffset(12), &registered)
                        .is_ok());
        EXPECT_TRUE(registered);
        // A pass that ends without its commit (an error) leaves nothing behind.
        cq.end_pass();
        EXPECT_EQ(cq.max_offset_in_queue().value(), 12);
        ASSERT_TRUE(cq.flush(0).is_ok());
    }
    ConsumeQueue cq("T", 1, cq_root(), seg);
    ASSERT_TRUE(cq.load().is_ok());
    ASSERT_TRUE(cq.recover().is_ok());
    EXPECT_EQ(cq.max_offset_in_queue().value(), 12);
    EXPECT_EQ(cq.max_physic_offset().value(), 1200);
}

// Controller mode cuts a rejoining replica's log (and its queues) while its dispatcher runs,
// below everything dispatchable: a cut between a pass's staging and its commit must leave the
// staged run alone (it once dropped it, the pass then moved past those records, and every
// later unit of the queue was refused as leaving a gap).
TEST_F(ConsumeQueueTest, ACutAboveTheStagedUnitsKeepsThem) {
    ConsumeQueue cq("T", 0, cq_root(), 100 * kCqStoreUnitSize);
    ASSERT_TRUE(cq.load().is_ok());
    ASSERT_TRUE(cq.recover().is_ok());
    ASSERT_TRUE(cq.put_message_position_info({PhysicalOffset(0), 100, 0}, QueueOffset(0)).is_ok());
    bool registered = false;
    for (int i = 1; i < 4; ++i) {
        ASSERT_TRUE(cq.stage_message_position_info({PhysicalOffset(i * 100), 100, i},
                                                   QueueOffset(i), &registered)
                        .is_ok());
    }
    ASSERT_TRUE(cq.truncate_dirty_logic_files(PhysicalOffset(5000)).is_ok());
    ASSERT_TRUE(cq.commit_staged().is_ok());
    cq.end_pass();
    EXPECT_EQ(cq.max_offset_in_queue().value(), 4);
    ASSERT_TRUE(cq.put_message_position_info({PhysicalOffset(400), 100, 4}, QueueOffset(4)).is_ok());
    EXPECT_EQ(cq.max_offset_in_queue().value(), 5);
}

// The store-level pass: units of several queues interleaved, each queue found once per pass
// (the staged list is its cache), transaction records skipped, everything visible after
// commit_staged().
TEST_F(ConsumeQueueTest, StorePassStagesInterleavedQueuesAndCommitsThemTogether) {
    ConsumeQueueStore cqs(cq_root(), 100 * kCqStoreUnitSize);
    ASSERT_TRUE(cqs.load().is_ok());
    for (int i = 0; i < 12; ++i) {
        DispatchRequest req;
        req.topic = "Topic" + std::to_string(i % 3);
        req.queue_id = i % 2;
        req.commit_log_offset = PhysicalOffset(i * 100);
        req.msg_size = 100;
        req.consume_queue_offset = QueueOffset(i / 6);  // each (topic, queue) pair gets 0, 1
        ConsumeQueue* cq = nullptr;
        ASSERT_TRUE(cqs.stage_message_position_info(req, &cq).is_ok()) << i;
        ASSERT_NE(cq, nullptr) << i;
        EXPECT_EQ(cq->topic(), req.topic);
        EXPECT_EQ(cq->queue_id(), req.queue_id);
        EXPECT_EQ(cq->max_offset_in_queue().value(), 0) << i;  // nothing visible yet
    }
    DispatchRequest prepared;
    prepared.topic = "Topic0";
    prepared.commit_log_offset = PhysicalOffset(1200);
    prepared.msg_size = 100;
    prepared.consume_queue_offset = QueueOffset(2);
    prepared.sys_flag = protocol::sysflag::kTransactionPreparedType;
    ConsumeQueue* none = nullptr;
    ASSERT_TRUE(cqs.stage_message_position_info(prepared, &none).is_ok());
    EXPECT_EQ(none, nullptr);
    ASSERT_TRUE(cqs.commit_staged().is_ok());
    cqs.end_pass();
    for (int t = 0; t < 3; ++t) {
        for (int q = 0; q < 2; ++q) {
            auto cq = cqs.find("Topic" + std::to_string(t), q);
            ASSERT_NE(cq, nullptr);
            EXPECT_EQ(cq->max_offset_in_queue().value(), 2) << t << "/" << q;
            EXPECT_FALSE(cq->in_pass());
        }
    }
}

// Java ConsumeQueue#getLastOffset: the end of the last unit of the last segment; -1 for a
// queue without units or whose last segment was just rolled (empty).
TEST_F(ConsumeQueueTest, LastOffsetIsTheEndOfTheLastSegmentsLastUnit) {
    const int64_t seg = 4 * kCqStoreUnitSize;
    ConsumeQueue cq("T", 0, cq_root(), seg);
    ASSERT_TRUE(cq.load().is_ok());
    ASSERT_TRUE(cq.recover().is_ok());
    EXPECT_EQ(cq.last_offset(), -1);
    for (int i = 0; i < 5; ++i) {
        ASSERT_TRUE(
            cq.put_message_position_info({PhysicalOffset(i * 100), 60, i}, QueueOffset(i)).is_ok());
    }
    EXPECT_EQ(cq.last_offset(), 460);
}

// cleanExpiredConsumerQueue: queues whose last unit ends below the CommitLog's min offset go
// (files too, and the topic when it has none left); SCHEDULE_TOPIC_XXXX and live queues stay.
TEST_F(ConsumeQueueTest, CleanExpiredDropsQueuesBelowTheCommitLogMin) {
    ConsumeQueueStore store(cq_root(), 1000 * kCqStoreUnitSize, nullptr);
    ASSERT_TRUE(store.load().is_ok());
    auto put = [&](const std::string& topic, int32_t qid, int64_t phy, int64_t cq_offset) {
        DispatchRequest r;
        r.topic = topic;
        r.queue_id = qid;
        r.commit_log_offset = PhysicalOffset(phy);
        r.msg_size = 100;
        r.consume_queue_offset = QueueOffset(cq_offset);
        ASSERT_TRUE(store.put_message_position_info(r).is_ok());
    };
    put("Old", 0, 0, 0);
    put("Old", 0, 100, 1);      // ends at 200
    put("Mixed", 0, 300, 0);    // ends at 400
    put("Mixed", 1, 1000, 0);   // ends at 1100
    put("SCHEDULE_TOPIC_XXXX", 2, 400, 0);
    ASSERT_TRUE(store.find_or_create("Empty", 0).is_ok());  // no unit: kept (-1)

    std::vector<std::pair<std::string, int32_t>> removed;
    const int n = store.clean_expired(PhysicalOffset(1000), [&](const std::string& t, int32_t q) {
        removed.emplace_back(t, q);
    });
    EXPECT_EQ(n, 2);
    EXPECT_EQ(removed, (std::vector<std::pair<std::string, int32_t>>{{"Mixed", 0}, {"Old", 0}}));
    EXPECT_EQ(store.find("Old", 0), nullptr);
    EXPECT_FALSE(fs::exists(fs::path(cq_root()) / "Old"));
    EXPECT_EQ(store.find("Mixed", 0), nullptr);
    EXPECT_NE(store.find("Mixed", 1), nullptr);
    EXPECT_TRUE(fs::exists(fs::path(cq_root()) / "Mixed" / "1"));
    EXPECT_NE(store.find("SCHEDULE_TOPIC_XXXX", 2), nullptr);
    EXPECT_NE(store.find("Empty", 0), nullptr);
    EXPECT_EQ(store.max_offsets().count("Old"), 0u);
}

}  // namespace
}  // namespace comet::store
