// The get path's less common statuses: MESSAGE_WAS_REMOVING, OFFSET_FOUND_NULL,
// OFFSET_TOO_SMALL and OFFSET_OVERFLOW_BADLY with a moved min, CommitLog-level filtering.
#include <gtest/gtest.h>

#include "message_store_test_util.h"
#include "protocol/message_decoder.h"
#include "store/message_store.h"

namespace comet::store {
namespace {

using testing::make_message;
using testing::tiny_config;

class GetMessageTest : public testing::StoreDirTest {
protected:
    // 30 messages of ~260 bytes in queue G-0: 3 CommitLog segments, 4 ConsumeQueue segments.
    std::unique_ptr<MessageStore> filled(ManualClock& clock) {
        auto store = open_store(clock, tiny_config(root_));
        for (int i = 0; i < 30; ++i) {
            EXPECT_TRUE(put(*store, make_message("G", 0, std::string(150, 'a' + i % 26),
                                                 i % 3 == 0 ? "three" : "other"))
                            .ok());
        }
        EXPECT_TRUE(store->dispatch_now().is_ok());
        return store;
    }
};

TEST_F(GetMessageTest, StatusNamesMatchJava) {
    EXPECT_EQ(get_message_status_name(GetMessageStatus::kFound), "FOUND");
    EXPECT_EQ(get_message_status_name(GetMessageStatus::kOffsetFoundNull), "OFFSET_FOUND_NULL");
    EXPECT_EQ(get_message_status_name(GetMessageStatus::kNoMatchedLogicQueue),
              "NO_MATCHED_LOGIC_QUEUE");
    EXPECT_EQ(get_message_status_name(GetMessageStatus::kMessageWasRemoving),
              "MESSAGE_WAS_REMOVING");
}

TEST_F(GetMessageTest, MessageWasRemovingWhenCommitLogSegmentIsGone) {
    ManualClock clock;
    auto store = filled(clock);
    const int64_t first_seg_end = store->config().mapped_file_size_commit_log;
    // Delete the first CommitLog segment without correcting the ConsumeQueue.
    ASSERT_EQ(store->commit_log().mapped_file_queue().delete_expired_file_by_time(
                  0, clock.wall_millis() + 1, true, 1),
              1);
    EXPECT_EQ(store->get_min_phy_offset().value(), first_seg_end);
    auto got = store->get_message("g", "G", 0, QueueOffset(0), 4, 0, nullptr);
    EXPECT_EQ(got.status, GetMessageStatus::kMessageWasRemoving);
    EXPECT_GT(got.next_begin_offset.value(), 0);
    // A later offset still in the CommitLog reads fine.
    const int64_t max = store->get_max_offset_in_queue("G", 0).value();
    got = store->get_message("g", "G", 0, QueueOffset(max - 1), 4, 0, nullptr);
    EXPECT_EQ(got.status, GetMessageStatus::kFound);
    // Retention then moves the queue's min offset: offset 0 is now too small.
    store->run_clean_once();
    const QueueOffset min = store->get_min_offset_in_queue("G", 0);
    EXPECT_GT(min.value(), 0);
    EXPECT_EQ(store->get_commit_log_offset_in_queue("G", 0, min).value() >= first_seg_end, true);
    got = store->get_message("g", "G", 0, QueueOffset(0), 4, 0, nullptr);
    EXPECT_EQ(got.status, GetMessageStatus::kOffsetTooSmall);
    EXPECT_EQ(got.next_begin_offset, min);
    got = store->get_message("g", "G", 0, min, 4, 0, nullptr);
    EXPECT_EQ(got.status, GetMessageStatus::kFound);
    // Beyond max with min > 0: corrected to max.
    got = store->get_message("g", "G", 0, QueueOffset(max + 5), 4, 0, nullptr);
    EXPECT_EQ(got.status, GetMessageStatus::kOffsetOverflowBadly);
    EXPECT_EQ(got.next_begin_offset.value(), max);
    store->shutdown();
}

TEST_F(GetMessageTest, OffsetFoundNullWhenConsumeQueueSegmentIsGone) {
    ManualClock clock;
    auto store = filled(clock);
    auto cq = store->consume_queues().find("G", 0);
    ASSERT_NE(cq, nullptr);
    // Drop the first ConsumeQueue segment (8 units) but leave the min offset at 0.
    ASSERT_EQ(cq->mapped_file_queue().delete_leading_files_while(
                  [](const MappedFile&) { return true; }, 1),
              1);
    auto got = store->get_message("g", "G", 0, QueueOffset(3), 4, 0, nullptr);
    EXPECT_EQ(got.status, GetMessageStatus::kOffsetFoundNull);
    EXPECT_EQ(got.next_begin_offset.value(), 8);
    got = store->get_message("g", "G", 0, got.next_begin_offset, 4, 0, nullptr);
    EXPECT_EQ(got.status, GetMessageStatus::kFound);
    store->shutdown();
}

TEST_F(GetMessageTest, CommitLogFilterAndNextBeginOffsetCountsSkippedUnits) {
    ManualClock clock;
    auto store = filled(clock);
    // Matches by record bytes: bodies starting with 'd' (message 3 only in 0..7).
    struct BodyFilter final : MessageFilter {
        bool is_matched_by_consume_queue(std::optional<int64_t>) const override { return true; }
        bool is_matched_by_commit_log(std::string_view record) const override {
            auto m = protocol::decode_message(record);
            return m.is_ok() && !m->body.empty() && m->body[0] == 'd';
        }
    } filter;
    auto got = store->get_message("g", "G", 0, QueueOffset(0), 32, 0, &filter);
    ASSERT_EQ(got.status, GetMessageStatus::kFound);
    ASSERT_EQ(got.message_count(), 1);
    EXPECT_EQ(got.message_queue_offsets[0].value(), 3);
    EXPECT_EQ(got.next_begin_offset.value(), 8);  // the whole segment was examined
    got = store->get_message("g", "G", 0, QueueOffset(4), 32, 0, &filter);
    EXPECT_EQ(got.status, GetMessageStatus::kNoMatchedMessage);
    EXPECT_EQ(got.next_begin_offset.value(), 8);
    // Tag filter by hash code: messages 0, 3, 6 in the first segment.
    TagsCodeFilter three({tags_string_to_tags_code("three")});
    got = store->get_message("g", "G", 0, QueueOffset(0), 2, 0, &three);
    ASSERT_EQ(got.message_count(), 2);
    EXPECT_EQ(got.message_queue_offsets[1].value(), 3);
    EXPECT_EQ(got.next_begin_offset.value(), 4);  // stopped at the unit after the batch filled
    store->shutdown();
}

}  // namespace
}  // namespace comet::store
