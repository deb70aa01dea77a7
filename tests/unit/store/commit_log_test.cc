#include "store/commit_log.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <mutex>
#include <thread>
#include <vector>

#include "base/bytes.h"
#include "base/clock.h"
#include "commit_log_test_util.h"
#include "protocol/message_decoder.h"
#include "protocol/message_id.h"
#include "store/dispatch_hints.h"
#include "store/mapped_file_allocator.h"
#include "store/reput.h"
#include "store/store_checkpoint.h"

namespace comet::store {
namespace {

using testing::kSeg;

using testing::sample_message;
using testing::small_config;
using testing::TempDir;
namespace pm = comet::protocol;

class CommitLogTest : public ::testing::Test {
protected:
    std::unique_ptr<CommitLog> open_log(const MessageStoreConfig& c, bool abnormal = false) {
        auto cp = StoreCheckpoint::open(c.checkpoint_path());
        EXPECT_TRUE(cp.is_ok());
        checkpoint_ = cp.value().get();
        checkpoints_.push_back(std::move(cp).value());
        flags_.push_back(std::make_unique<RunningFlags>());
        auto r = CommitLog::open(c, &clock_, nullptr, checkpoint_, flags_.back().get());
        EXPECT_TRUE(r.is_ok()) << r.status().to_string();
        auto log = std::move(r).value();
        auto rec = abnormal ? log->recover_abnormally() : log->recover_normally();
        EXPECT_TRUE(rec.is_ok()) << rec.status().to_string();
        last_recovery_ = rec.value();
        log->start();
        return log;
    }

    PutMessageResult put(CommitLog& log, pm::MessageExt m) {
        return log.put_message(std::move(m)).get();
    }

    // small_config in this fixture's write mode.
    MessageStoreConfig config(const std::string& root, int64_t segment = 64 * 1024) const {
        MessageStoreConfig c = small_config(root, segment);
        if (!write_buffer_) {
            c.commit_log_write_buffer_bytes = 0;
        }
        return c;
    }

    bool write_buffer_ = true;  // puts go through the write buffer (default) or the mapping

    TempDir dir_;
    ManualClock clock_{1'700'000'000'000};
    // Kept for the fixture's lifetime: logs borrow them (several logs may be open at once).
    std::vector<std::unique_ptr<StoreCheckpoint>> checkpoints_;
    std::vector<std::unique_ptr<RunningFlags>> flags_;
    StoreCheckpoint* checkpoint_ = nullptr;  // the latest one
    RecoveryResult last_recovery_;
};

// The same tests for both write paths: the write buffer + commit thread, and the mapping.
class CommitLogModeTest : public CommitLogTest, public ::testing::WithParamInterface<bool> {
protected:
    void SetUp() override { write_buffer_ = GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(WritePath, CommitLogModeTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param_info) {
                             return param_info.param ? "WriteBuffer" : "Mapping";
                         });

TEST_P(CommitLogModeTest, PutAssignsOffsetsAndReadsBack) {
    auto log = open_log(config(dir_.path()));
    auto r0 = put(*log, sample_message("TopicA", 1, "hello"));
    ASSERT_TRUE(r0.ok()) << r0.remark;
    EXPECT_EQ(r0.append.wrote_offset, PhysicalOffset(0));
    EXPECT_EQ(r0.append.logics_offset, QueueOffset(0));
    EXPECT_EQ(r0.append.store_timestamp, clock_.wall_millis());
    EXPECT_EQ(r0.append.msg_id, pm::create_offset_msg_id(log->store_host(), 0));
    clock_.advance(std::chrono::milliseconds(5));
    auto r1 = put(*log, sample_message("TopicA", 1, "world!"));
    auto r2 = put(*log, sample_message("TopicA", 2, "other queue"));
    ASSERT_TRUE(r1.ok() && r2.ok());
    EXPECT_EQ(r1.append.wrote_offset, PhysicalOffset(r0.append.wrote_bytes));
    EXPECT_EQ(r1.append.logics_offset, QueueOffset(1));
    EXPECT_EQ(r2.append.logics_offset, QueueOffset(0));
    EXPECT_EQ(log->max_offset(), r2.append.end_offset());
    EXPECT_EQ(log->next_queue_offset("TopicA", 1), QueueOffset(2));
    EXPECT_EQ(log->next_queue_offset("TopicA", 7), QueueOffset(0));

    auto m1 = log->lookup_message(r1.append.wrote_offset);
    ASSERT_TRUE(m1.is_ok()) << m1.status().to_string();
    EXPECT_EQ(m1.value().body, "world!");
    EXPECT_EQ(m1.value().topic, "TopicA");
    EXPECT_EQ(m1.value().queue_id, 1);
    EXPECT_EQ(m1.value().queue_offset, 1);
    EXPECT_EQ(m1.value().commit_log_offset, r1.append.wrote_offset.value());
    EXPECT_EQ(m1.value().store_timestamp, 1'700'000'000'005);
    EXPECT_EQ(m1.value().store_host.to_string(), "127.0.0.1:10911");
    EXPECT_EQ(m1.value().born_host, pm::HostAddress::ipv4(10, 0, 0, 9, 50000));
    EXPECT_EQ(m1.value().tags(), "tag");
    EXPECT_EQ(m1.value().msg_id, r1.append.msg_id);
    auto view = log->get_message(r1.append.wrote_offset, r1.append.wrote_bytes);
    ASSERT_TRUE(view);
    EXPECT_EQ(view->size, static_cast<size_t>(r1.append.wrote_bytes));
    EXPECT_FALSE(log->get_message(r2.append.wrote_offset, r2.append.wrote_bytes + 1));
    EXPECT_FALSE(log->lookup_message(log->max_offset()).is_ok());
    log->check_invariants();
}

// A put given its body apart (a send's body still in its request frame, issue 16) stores that
// body, not msg.body, and reads message and body only before it returns: the caller may change
// both at once, before the put completes.
TEST_P(CommitLogModeTest, PutWithABodyApartStoresThatBodyAndKeepsNoReference) {
    auto log = open_log(config(dir_.path()));
    pm::MessageExt m = sample_message("TopicA", 1, "not this one");
    std::string frame = "..the body from the frame..";
    std::promise<PutMessageResult> done;
    log->put_message(m, std::string_view(frame).substr(2, 25),
                     [&done](PutMessageResult&& r) { done.set_value(std::move(r)); });
    // Reused at once, as the broker's per-thread message and read buffer are.
    m.clear();
    m.topic = "Other";
    frame.assign(frame.size(), 'x');
    const PutMessageResult r = done.get_future().get();
    ASSERT_TRUE(r.ok()) << r.remark;
    auto stored = log->lookup_message(r.append.wrote_offset);
    ASSERT_TRUE(stored.is_ok()) << stored.status().to_string();
    EXPECT_EQ(stored.value().body, "the body from the frame..");
    EXPECT_EQ(stored.value().topic, "TopicA");
    EXPECT_EQ(stored.value().tags(), "tag");
    // The same bytes as a put of the message with that body.
    auto again = put(*log, sample_message("TopicA", 1, "the body from the frame.."));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again.append.wrote_bytes, r.append.wrote_bytes);
    EXPECT_EQ(log->lookup_message(again.append.wrote_offset).value().body, stored.value().body);
}

// The prefault worker keeps a window ahead of the writer faulted in (across roll-overs) and
// never disturbs what puts write; topicQueueTable lookups by a reused key buffer stay exact.
TEST_F(CommitLogTest, PrefaultWindowFollowsWriterWithoutTouchingData) {
    write_buffer_ = false;  // the prefault window serves the mapping path only
    auto c = config(dir_.path());
    c.commit_log_prefault_ahead_bytes = 16 * 1024;
    auto log = open_log(c);
    std::vector<PutMessageResult> rs;
    for (int i = 0; i < 300; ++i) {
        std::string body(300 + i, static_cast<char>('a' + i % 26));
        rs.push_back(put(*log, sample_message("Pf" + std::to_string(i % 3), i % 2, body)));
        ASSERT_TRUE(rs.back().ok()) << rs.back().remark;
    }
    EXPECT_GT(log->mapped_file_queue().file_count(), 1u);  // rolled over at least once
    for (int i = 0; i < 30000 && log->prefault_service().prefaulted_bytes() == 0 &&
                    log->prefault_service().supported();
         ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (log->prefault_service().supported()) {
        EXPECT_GT(log->prefault_service().prefaulted_bytes(), 0);
    }
    for (int i = 0; i < 300; ++i) {
        auto m = log->lookup_message(rs[i].append.wrote_offset);
        ASSERT_TRUE(m.is_ok()) << i;
        EXPECT_EQ(m.value().body, std::string(300 + i, static_cast<char>('a' + i % 26)));
        EXPECT_EQ(m.value().topic, "Pf" + std::to_string(i % 3));
        EXPECT_EQ(m.value().msg_id, rs[i].append.msg_id);
    }
    // Queue offsets per key are dense: 6 keys, 50 puts each.
    for (int t = 0; t < 3; ++t) {
        for (int q = 0; q < 2; ++q) {
            EXPECT_EQ(log->next_queue_offset("Pf" + std::to_string(t), q), QueueOffset(50));
        }
    }
    auto table = log->topic_queue_table();
    EXPECT_EQ(table.size(), 6u);
    EXPECT_EQ(table["Pf1-1"], 50);
    log->remove_queue_from_topic_queue_table("Pf1", 1);
    EXPECT_EQ(log->next_queue_offset("Pf1", 1), QueueOffset(0));
    log->check_invariants();
}

TEST_P(CommitLogModeTest, RollsOverSegmentsWithBlankFillerAndRandomSizes) {
    auto log = open_log(config(dir_.path()));
    std::mt19937 rng(7);
    std::vector<std::pair<int64_t, std::string>> written;
    while (log->max_offset().value() < 3 * kSeg + 1000) {
        std::string body(std::uniform_int_distribution<int>(1, 9000)(rng), 'x');
        for (auto& ch : body) {
            ch = static_cast<char>('a' + rng() % 26);
        }
        auto r = put(*log, sample_message("Roll", 0, body));
        ASSERT_TRUE(r.ok()) << r.remark;
        // A record never spans two segments.
        EXPECT_EQ(r.append.wrote_offset.value() / kSeg, (r.append.end_offset().value() - 1) / kSeg);
        written.emplace_back(r.append.wrote_offset.value(), body);
    }
    EXPECT_GE(log->mapped_file_queue().file_count(), 4u);
    // Each full segment ends with a blank filler [remaining][0xCBD43194] (§5.5).
    auto files = log->mapped_file_queue().files();
    for (size_t i = 0; i + 1 < files.size(); ++i) {
        int64_t last_end = 0;
        for (const auto& [off, body] : written) {
            if (off / kSeg == static_cast<int64_t>(i)) {
                last_end = off + log->lookup_message(PhysicalOffset(off)).value().store_size;
            }
        }
        int64_t pos = last_end - files[i]->file_from_offset();
        ASSERT_GE(kSeg - pos, 8);
        EXPECT_EQ(get_be32(files[i]->data() + pos), static_cast<uint32_t>(kSeg - pos));
        EXPECT_EQ(get_be32(files[i]->data() + pos + 4), 0xCBD43194u);
    }
    // Iteration sees every record once, in order, skipping fillers.
    size_t idx = 0;
    ASSERT_TRUE(log->for_each_record(
                       PhysicalOffset(0),
                       [&](PhysicalOffset off, std::string_view rec) {
                           EXPECT_LT(idx, written.size());
                           EXPECT_EQ(off.value(), written[idx].first);
                           auto m = pm::decode_message(rec, {.read_body = true, .check_crc = true});
                           EXPECT_TRUE(m.is_ok());
                           EXPECT_EQ(m.value().body, written[idx].second);
                           EXPECT_EQ(m.value().queue_offset, static_cast<int64_t>(idx));
                           ++idx;
                           return true;
                       })
                    .is_ok());
    EXPECT_EQ(idx, written.size());
    // roll_next_file and get_data with a byte limit (the HA transfer read).
    EXPECT_EQ(log->roll_next_file(PhysicalOffset(kSeg + 3)), PhysicalOffset(2 * kSeg));
    auto chunk = log->get_data(PhysicalOffset(0), 100);
    ASSERT_TRUE(chunk);
    EXPECT_EQ(chunk->size, 100u);
}

TEST_P(CommitLogModeTest, LimitsGiveClearStatuses) {
    auto log = open_log(config(dir_.path()));
    auto big = put(*log, sample_message("T", 0, std::string(16 * 1024 + 1, 'b')));
    EXPECT_EQ(big.status, PutMessageStatus::kMessageIllegal);
    EXPECT_FALSE(big.remark.empty());
    auto m = sample_message("T", 0, "x");
    m.set_property("huge", std::string(32768, 'p'));
    EXPECT_EQ(put(*log, m).status, PutMessageStatus::kPropertiesSizeExceeded);
    EXPECT_EQ(put(*log, sample_message("", 0, "x")).status, PutMessageStatus::kMessageIllegal);
    // Nothing was written and offsets did not move.
    EXPECT_EQ(log->max_offset(), PhysicalOffset(0));
    EXPECT_EQ(log->next_queue_offset("T", 0), QueueOffset(0));
    // A record that cannot fit one segment at all.
    auto cfg = config(dir_.path() + "/b", 8 * 1024);
    auto small = open_log(cfg);
    EXPECT_EQ(put(*small, sample_message("T", 0, std::string(8 * 1024, 'z'))).status,
              PutMessageStatus::kMessageIllegal);
    // A long topic (> 127 bytes) is stored with magic v2.
    auto r = put(*log, sample_message(std::string(200, 't'), 0, "v2"));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(log->lookup_message(r.append.wrote_offset).value().topic, std::string(200, 't'));
}

TEST_P(CommitLogModeTest, TransactionHalfMessagesDoNotTakeQueueOffsets) {
    auto log = open_log(config(dir_.path()));
    auto half = sample_message("Tx", 0, "prepared");
    half.sys_flag = pm::sysflag::kTransactionPreparedType;
    auto r = put(*log, half);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(log->lookup_message(r.append.wrote_offset).value().queue_offset, 0);
    EXPECT_EQ(log->next_queue_offset("Tx", 0), QueueOffset(0));
    auto commit = sample_message("Tx", 0, "commit");
    commit.sys_flag = pm::sysflag::kTransactionCommitType;
    ASSERT_TRUE(put(*log, commit).ok());
    EXPECT_EQ(log->next_queue_offset("Tx", 0), QueueOffset(1));
}

TEST_P(CommitLogModeTest, BatchPutWritesOneRecordPerMessage) {
    auto log = open_log(config(dir_.path()));
    ASSERT_TRUE(put(*log, sample_message("VecTopic", 1, "before")).ok());
    MessageBatch b;
    b.topic = "VecTopic";
    b.queue_id = 1;
    b.born_host = pm::HostAddress::ipv4(127, 0, 0, 1, 40000);
    for (int i = 1; i <= 3; ++i) {
        std::string props =
            fmt::format("KEYS\1KeyBatch{}\2WAIT\1true\2TAGS\1TagBatch\2seq\1{}", i, i);
        pm::encode_batch_entry(0, fmt::format("vec-b{} batch", i), props, &b.body);
    }
    b.properties.set("CLUSTER", "DefaultCluster");
    b.properties.set("WAIT", "true");
    auto r = log->put_messages(b).get();
    ASSERT_TRUE(r.ok()) << r.remark;
    EXPECT_EQ(r.append.msg_num, 3);
    EXPECT_EQ(r.append.logics_offset, QueueOffset(1));
    EXPECT_EQ(std::count(r.append.msg_id.begin(), r.append.msg_id.end(), ','), 2);
    int64_t off = r.append.wrote_offset.value();
    for (int i = 1; i <= 3; ++i) {
        auto m = log->lookup_message(PhysicalOffset(off));
        ASSERT_TRUE(m.is_ok());
        EXPECT_EQ(m.value().body, fmt::format("vec-b{} batch", i));
        EXPECT_EQ(m.value().queue_offset, i);
        EXPECT_EQ(m.value().commit_log_offset, off);
        // Stored like RocketMQ 4.9.8: own properties, separator, batch properties.
        EXPECT_EQ(*m.value().stored_properties,
                  fmt::format("KEYS\1KeyBatch{}\2WAIT\1true\2TAGS\1TagBatch\2seq\1{}"
                              "\2CLUSTER\1DefaultCluster\2WAIT\1true",
                              i, i));
        off += m.value().store_size;
    }
    EXPECT_EQ(off, r.append.end_offset().value());
    EXPECT_EQ(log->next_queue_offset("VecTopic", 1), QueueOffset(4));

    // Rejections.
    MessageBatch bad = b;
    bad.body.pop_back();
    EXPECT_EQ(log->put_messages(bad).get().status, PutMessageStatus::kMessageIllegal);
    bad = b;
    bad.sys_flag = pm::sysflag::kTransactionPreparedType;
    EXPECT_EQ(log->put_messages(bad).get().status, PutMessageStatus::kMessageIllegal);
    bad = b;
    bad.properties.set("DELAY", "2");
    EXPECT_EQ(log->put_messages(bad).get().status, PutMessageStatus::kMessageIllegal);
    bad = b;
    bad.body.clear();
    EXPECT_EQ(log->put_messages(bad).get().status, PutMessageStatus::kMessageIllegal);
    EXPECT_EQ(log->next_queue_offset("VecTopic", 1), QueueOffset(4));
}

// One offset message id, even an IPv6 one, is held inline; a batch's list goes to the heap.
TEST(OffsetMsgIdsTest, OneIdInlineAListOnTheHeap) {
    OffsetMsgIds ids;
    EXPECT_TRUE(ids.empty());
    const std::string v6(56, 'A');
    ids.reserve(56);
    ids.append(v6);
    EXPECT_EQ(ids, v6);
    EXPECT_EQ(ids.size(), 56u);
    const std::string_view view = ids;
    EXPECT_GE(view.data(), reinterpret_cast<const char*>(&ids));  // inside the object
    EXPECT_LT(view.data(), reinterpret_cast<const char*>(&ids + 1));
    ids.append(",");
    ids.append(v6);
    EXPECT_EQ(ids.str(), v6 + "," + v6);
    EXPECT_EQ(std::count(ids.begin(), ids.end(), ','), 1);
    OffsetMsgIds copy = ids;
    EXPECT_EQ(copy, ids);
    ids = "AB";
    EXPECT_EQ(ids, "AB");
    EXPECT_EQ(copy.size(), 113u);
    std::string s;
    s = copy;  // reads as a string_view
    EXPECT_EQ(s, copy.str());
}

TEST_P(CommitLogModeTest, Ipv6StoreHost) {
    auto cfg = config(dir_.path());
    cfg.store_host = "[::1]:10911";
    auto log = open_log(cfg);
    auto r = put(*log, sample_message("T6", 0, "v6"));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.append.msg_id.size(), 56u);
    auto m = log->lookup_message(r.append.wrote_offset).value();
    EXPECT_TRUE(m.store_host.v6);
    EXPECT_EQ(m.sys_flag & pm::sysflag::kStoreHostAddressV6, pm::sysflag::kStoreHostAddressV6);
    EXPECT_EQ(m.store_timestamp, clock_.wall_millis());
}

TEST_P(CommitLogModeTest, SyncFlushCompletesAfterFsyncAndGroupsCommits) {
    auto cfg = config(dir_.path(), 1024 * 1024);
    cfg.flush_disk_type = FlushDiskType::kSyncFlush;
    auto log = open_log(cfg);
    constexpr int kThreads = 8;
    constexpr int kPerThread = 50;
    std::atomic<int> ok{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            std::vector<std::future<PutMessageResult>> fs;
            for (int i = 0; i < kPerThread; ++i) {
                fs.push_back(log->put_message(sample_message("Sync", t % 4, "payload")));
            }
            for (auto& f : fs) {
                auto r = f.get();
                if (r.ok() && log->flushed_offset() >= r.append.end_offset()) {
                    ok.fetch_add(1);
                }
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    EXPECT_EQ(ok.load(), kThreads * kPerThread);
    EXPECT_LT(log->flush_service().fsync_count(), kThreads * kPerThread);
    // WAIT=false does not wait for the flush.
    auto m = sample_message("Sync", 0, "nowait");
    m.set_property("WAIT", "false");
    EXPECT_TRUE(put(*log, m).ok());
}

TEST_P(CommitLogModeTest, FlushFailureMakesStoreReadOnly) {
    auto cfg = config(dir_.path());
    cfg.flush_disk_type = FlushDiskType::kSyncFlush;
    auto log = open_log(cfg);
    ASSERT_TRUE(put(*log, sample_message("F", 0, "fine")).ok());
    set_flush_fault_for_test(true);
    auto r = put(*log, sample_message("F", 0, "not durable"));
    set_flush_fault_for_test(false);
    EXPECT_EQ(r.status, PutMessageStatus::kFlushDiskTimeout);
    EXPECT_NE(r.remark.find("read-only"), std::string::npos) << r.remark;
    EXPECT_FALSE(log->running_flags().is_writeable());
    auto after = put(*log, sample_message("F", 0, "refused"));
    EXPECT_EQ(after.status, PutMessageStatus::kServiceNotAvailable);
    // Reads keep working.
    EXPECT_TRUE(log->lookup_message(PhysicalOffset(0)).is_ok());
}

// Write buffer: a put completes only once its bytes are published (readable, in the file),
// in offset order, each exactly once; shutdown drains every queued put.
TEST_F(CommitLogTest, WriteBufferCompletesPutsAfterTheirBytesArePublished) {
    auto log = open_log(config(dir_.path()));
    ASSERT_GT(log->write_buffer_capacity(), 0u);
    constexpr int kPuts = 3000;  // several segments of 64 KiB
    std::atomic<int> completed{0};
    std::atomic<int> bad{0};
    std::atomic<int64_t> last_end{0};
    std::vector<int64_t> ends(kPuts, -1);
    for (int i = 0; i < kPuts; ++i) {
        std::string body =
            fmt::format("wb-{}-", i) + std::string(static_cast<size_t>(i % 700), 'w');
        log->put_message(sample_message("Wb", i % 4, body),
                         [&, i, body](const PutMessageResult& r) {
                             const int64_t end = r.append.end_offset().value();
                             // Published before completion: readable through the segment and below
                             // max_offset.
                             auto m = log->lookup_message(r.append.wrote_offset);
                             if (!r.ok() || log->max_offset().value() < end || !m.is_ok() ||
                                 m.value().body != body || last_end.load() >= end) {
                                 bad.fetch_add(1);
                             }
                             last_end.store(end);
                             ends[static_cast<size_t>(i)] = end;
                             completed.fetch_add(1);
                         });
    }
    log->shutdown();  // drains the ring and completes every queued put
    EXPECT_EQ(completed.load(), kPuts);
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(log->max_offset(), log->reserved_offset());
    EXPECT_GT(log->mapped_file_queue().file_count(), 3u);
    log->check_invariants();
    // Reopened: every record is there, fillers included.
    log.reset();
    auto again = open_log(config(dir_.path()));
    EXPECT_EQ(again->max_offset().value(), ends.back());
    int n = 0;
    ASSERT_TRUE(again
                    ->for_each_record(PhysicalOffset(0),
                                      [&](PhysicalOffset, std::string_view) {
                                          ++n;
                                          return true;
                                      })
                    .is_ok());
    EXPECT_EQ(n, kPuts);
}

// Put batches (decision 028): puts made between begin_put_batch and end_put_batch have all
// completed when end_put_batch returns, from several batching threads at once (they wait for
// each other's rounds) and beside the commit thread; a completion that puts takes the
// ordinary path; bytes and offsets are those of unbatched puts.
TEST_F(CommitLogTest, PutBatchCompletesEveryPutByItsEnd) {
    auto log = open_log(config(dir_.path()));
    ASSERT_GT(log->write_buffer_capacity(), 0u);
    constexpr int kThreads = 3;
    constexpr int kBatches = 150;
    std::atomic<int> late{0};       // not completed when its batch ended
    std::atomic<int> bad{0};        // wrong result or unreadable
    std::atomic<int> completed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int b = 0; b < kBatches; ++b) {
                const int n = 1 + (b * 7 + t) % 20;
                std::vector<int> done(static_cast<size_t>(n), 0);
                CommitLog::begin_put_batch();
                for (int i = 0; i < n; ++i) {
                    std::string body = fmt::format("pb-{}-{}-{}-", t, b, i) +
                                       std::string(static_cast<size_t>((b + i) % 500), 'p');
                    log->put_message(sample_message("Pb" + std::to_string(t), i % 2, body),
                                     [&, i, body](const PutMessageResult& r) {
                                         auto m = log->lookup_message(r.append.wrote_offset);
                                         if (!r.ok() || !m.is_ok() || m.value().body != body) {
                                             bad.fetch_add(1);
                                         }
                                         done[static_cast<size_t>(i)] += 1;
                                         completed.fetch_add(1);
                                     });
                }
                CommitLog::end_put_batch();
                for (int v : done) {
                    if (v != 1) {
                        late.fetch_add(1);
                    }
                }
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    EXPECT_EQ(late.load(), 0);
    EXPECT_EQ(bad.load(), 0);
    // A completion inside a batch that puts again: the inner put is not deferred to a batch
    // that has already ended.
    std::promise<PutMessageResult> inner;
    auto inner_done = inner.get_future();
    CommitLog::begin_put_batch();
    log->put_message(sample_message("Pb", 0, "outer"), [&](const PutMessageResult& r) {
        EXPECT_TRUE(r.ok());
        log->put_message(sample_message("Pb", 0, "inner"),
                         [&](const PutMessageResult& r2) { inner.set_value(r2); });
    });
    CommitLog::end_put_batch();
    ASSERT_EQ(inner_done.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(inner_done.get().ok());
    // Sequence numbers per queue stayed dense: every topic's queue offsets were assigned once.
    int expected = 0;
    for (int b = 0; b < kBatches; ++b) {
        expected += 1 + (b * 7) % 20;  // thread 0
    }
    EXPECT_EQ(log->next_queue_offset("Pb0", 0).value() + log->next_queue_offset("Pb0", 1).value(),
              expected);
    log->shutdown();
    log->check_invariants();
}

// The write buffer writes exactly the bytes the mapping path writes: records encoded in place
// in the ring, records that wrap the ring's end, batches, blank fillers and segment roll-over.
TEST_F(CommitLogTest, WriteBufferBytesEqualTheMappingPathBytes) {
    auto run = [&](const std::string& root, bool buffer) {
        write_buffer_ = buffer;
        auto cfg = config(root);
        cfg.commit_log_write_buffer_bytes = 64 * 1024;  // the minimum: it wraps every ~50 puts
        auto log = open_log(cfg);
        std::mt19937 rng(7);
        for (int i = 0; i < 600; ++i) {
            std::string body(static_cast<size_t>(rng() % 3000), static_cast<char>('a' + i % 26));
            auto m = sample_message("Same" + std::to_string(i % 3), i % 4, body);
            if (i % 50 == 7) {
                MessageBatch b;
                b.topic = "SameBatch";
                b.born_host = pm::HostAddress::ipv4(127, 0, 0, 1, 40000);
                for (int k = 0; k < 5; ++k) {
                    pm::encode_batch_entry(0, body.substr(0, 100 * k), "", &b.body);
                }
                EXPECT_TRUE(log->put_messages(b).get().ok());
            }
            EXPECT_TRUE(put(*log, m).ok());
        }
        log->shutdown();
        return log->max_offset().value();
    };
    const int64_t end_map = run(dir_.path() + "/map", false);
    const int64_t end_buf = run(dir_.path() + "/buf", true);
    ASSERT_EQ(end_map, end_buf);
    ASSERT_GT(end_map, 3 * kSeg);  // several segments, so fillers too
    for (int64_t from = 0; from < end_map; from += kSeg) {
        const std::string name = "/commitlog/" + offset_to_file_name(from);
        std::ifstream a(dir_.path() + "/map" + name, std::ios::binary);
        std::ifstream b(dir_.path() + "/buf" + name, std::ios::binary);
        std::string da((std::istreambuf_iterator<char>(a)), std::istreambuf_iterator<char>());
        std::string db((std::istreambuf_iterator<char>(b)), std::istreambuf_iterator<char>());
        ASSERT_EQ(da.size(), static_cast<size_t>(kSeg)) << name;
        ASSERT_TRUE(da == db) << "segment " << name << " differs";
    }
}

// Puts accepted before start() (open and recover only) complete at once through the write
// buffer too: the put commits inline while no commit thread runs.
TEST_F(CommitLogTest, WriteBufferPutsBeforeStartComplete) {
    auto cfg = config(dir_.path());
    auto cp = StoreCheckpoint::open(cfg.checkpoint_path());
    ASSERT_TRUE(cp.is_ok());
    RunningFlags flags;
    auto opened = CommitLog::open(cfg, &clock_, nullptr, cp.value().get(), &flags);
    ASSERT_TRUE(opened.is_ok());
    auto log = std::move(opened).value();
    ASSERT_TRUE(log->recover_normally().is_ok());
    auto f = log->put_message(sample_message("Early", 0, "before start"));
    ASSERT_EQ(f.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    auto r = f.get();
    ASSERT_TRUE(r.ok()) << r.remark;
    EXPECT_EQ(log->max_offset(), r.append.end_offset());
    EXPECT_EQ(log->lookup_message(r.append.wrote_offset).value().body, "before start");
    log->start();
    EXPECT_TRUE(put(*log, sample_message("Early", 0, "after start")).ok());
    log->shutdown();
}

// A batch larger than the write buffer is written directly once the buffer is drained, between
// buffered puts, with the same offsets and ordering.
TEST_F(CommitLogTest, WriteBufferBatchLargerThanTheBufferIsWrittenDirectly) {
    auto cfg = config(dir_.path(), 1024 * 1024);
    cfg.commit_log_write_buffer_bytes = 1;  // raised to the floor: 2 x (16 KiB + 64 KiB) + 4 KiB
    auto log = open_log(cfg);
    ASSERT_LT(log->write_buffer_capacity(), 200u * 1024);
    std::atomic<int> ok{0};
    for (int i = 0; i < 50; ++i) {
        log->put_message(sample_message("Big", 0, std::string(2000, 'a')),
                         [&](const PutMessageResult& r) { ok.fetch_add(r.ok() ? 1 : 0); });
    }
    MessageBatch b;
    b.topic = "Big";
    b.queue_id = 0;
    b.born_host = pm::HostAddress::ipv4(127, 0, 0, 1, 40000);
    for (int i = 0; i < 30; ++i) {
        pm::encode_batch_entry(0, fmt::format("{:08d}", i) + std::string(10000, 'b'), "", &b.body);
    }
    auto r = log->put_messages(b).get();
    ASSERT_TRUE(r.ok()) << r.remark;
    EXPECT_GT(r.append.wrote_bytes, static_cast<int32_t>(log->write_buffer_capacity()));
    EXPECT_EQ(r.append.logics_offset, QueueOffset(50));
    for (int i = 0; i < 50; ++i) {
        log->put_message(sample_message("Big", 0, std::string(2000, 'c')),
                         [&](const PutMessageResult& r2) { ok.fetch_add(r2.ok() ? 1 : 0); });
    }
    ASSERT_TRUE(put(*log, sample_message("Big", 0, "last")).ok());
    EXPECT_EQ(ok.load(), 100);
    int64_t next = 0;
    ASSERT_TRUE(log->for_each_record(PhysicalOffset(0),
                                     [&](PhysicalOffset o, std::string_view rec) {
                                         auto m = pm::decode_message(
                                             rec, {.read_body = true, .check_crc = true});
                                         EXPECT_TRUE(m.is_ok());
                                         EXPECT_EQ(m.value().queue_offset, next++);
                                         EXPECT_EQ(m.value().commit_log_offset, o.value());
                                         return true;
                                     })
                    .is_ok());
    EXPECT_EQ(next, 131);
    log->check_invariants();
}

// A failed write of the commit thread (EIO) fails the puts it held with a remark, makes the
// store read-only (later puts SERVICE_NOT_AVAILABLE, none hangs) and publishes nothing unwritten.
TEST_F(CommitLogTest, WriteBufferWriteFailureMakesStoreReadOnly) {
    auto log = open_log(config(dir_.path()));
    ASSERT_TRUE(put(*log, sample_message("E", 0, "fine")).ok());
    const PhysicalOffset before = log->max_offset();
    set_write_fault_for_test(true);
    auto r = put(*log, sample_message("E", 0, "lost in the buffer"));
    set_write_fault_for_test(false);
    EXPECT_EQ(r.status, PutMessageStatus::kUnknownError);
    EXPECT_NE(r.remark.find("read-only"), std::string::npos) << r.remark;
    EXPECT_FALSE(log->running_flags().is_writeable());
    EXPECT_EQ(log->max_offset(), before);
    EXPECT_EQ(put(*log, sample_message("E", 0, "refused")).status,
              PutMessageStatus::kServiceNotAvailable);
    EXPECT_TRUE(log->lookup_message(PhysicalOffset(0)).is_ok());
    log->shutdown();  // returns: nothing waits for the failed commit
}

// A write buffer that cannot drain (the commit thread stalled, as on a disk that stopped
// taking writes) refuses puts with OS_PAGE_CACHE_BUSY once one has waited
// osPageCacheBusyTimeOutMills for space, and refuses the next ones at once, instead of holding
// the putting thread (a server I/O thread) until the disk comes back. Once the commit thread
// frees space, puts are accepted again and every queued put completes PUT_OK.
TEST_F(CommitLogTest, FullWriteBufferRefusesPutsAsPageCacheBusyInsteadOfWaiting) {
    auto cfg = config(dir_.path());
    cfg.commit_log_write_buffer_bytes = 64 * 1024;  // the minimum
    cfg.os_page_cache_busy_timeout_ms = 100;
    auto log = open_log(cfg);
    log->set_commit_stall_for_test(std::chrono::minutes(10));
    constexpr int kPuts = 120;  // 1 KiB bodies: about twice what the buffer holds
    std::mutex mu;
    std::map<PutMessageStatus, int> outcomes;
    std::atomic<int> returned{0};
    std::thread putter([&] {
        for (int i = 0; i < kPuts; ++i) {
            log->put_message(sample_message("Busy", 0, std::string(1024, 'b')),
                             [&](PutMessageResult&& r) {
                                 std::lock_guard<std::mutex> l(mu);
                                 ++outcomes[r.status];
                             });
            returned.fetch_add(1);
        }
    });
    // Time moves only here: the put waiting for space sees 10 ms per step (bounded loop).
    for (int step = 0; step < 2000 && returned.load() < kPuts; ++step) {
        clock_.advance(std::chrono::milliseconds(10));
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const int returned_while_stalled = returned.load();
    const bool busy_while_stalled = log->is_os_page_cache_busy();
    log->set_commit_stall_for_test(std::chrono::milliseconds(0));  // lets a hung put go on
    putter.join();
    EXPECT_EQ(returned_while_stalled, kPuts) << "puts blocked on a full write buffer";
    EXPECT_TRUE(busy_while_stalled);
    for (int i = 0; i < 500 && log->is_os_page_cache_busy(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_FALSE(log->is_os_page_cache_busy());
    const PutMessageResult after = put(*log, sample_message("Busy", 0, "after the stall"));
    EXPECT_TRUE(after.ok()) << put_message_status_name(after.status) << ": " << after.remark;
    auto completed = [&] {
        std::lock_guard<std::mutex> l(mu);
        int n = 0;
        for (const auto& [status, count] : outcomes) {
            n += count;
        }
        return n;
    };
    for (int i = 0; i < 500 && completed() < kPuts; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::lock_guard<std::mutex> l(mu);
    EXPECT_GT(outcomes[PutMessageStatus::kOsPageCacheBusy], 0);
    EXPECT_GT(outcomes[PutMessageStatus::kPutOk], 0);
    EXPECT_EQ(outcomes[PutMessageStatus::kOsPageCacheBusy] + outcomes[PutMessageStatus::kPutOk],
              kPuts);
    log->shutdown();
}

// A server's read batch with defer_notify: the puts complete by end_put_batch() (their replies
// are written then) but the append listener (the dispatch thread's wake-up) runs on this thread
// only at after_put_batch_written(), once, with the batch's end. Without defer_notify it runs
// by the batch's end. (The commit thread, which may take over a round, never defers.)
TEST_P(CommitLogModeTest, DeferredAppendNotificationWaitsForTheBatchWritten) {
    auto log = open_log(config(dir_.path()));
    std::mutex mu;
    std::vector<int64_t> here;  // notifications on the test thread
    int64_t highest = 0;        // the highest offset notified on any thread
    const auto me = std::this_thread::get_id();
    log->set_append_listener([&](PhysicalOffset o) {
        std::lock_guard<std::mutex> lock(mu);
        if (std::this_thread::get_id() == me) {
            here.push_back(o.value());
        }
        highest = std::max(highest, o.value());
    });
    auto counts = [&] {
        std::lock_guard<std::mutex> lock(mu);
        return std::pair<size_t, int64_t>(here.size(), highest);
    };
    ASSERT_TRUE(put(*log, sample_message("Dn", 0, "before")).ok());
    const size_t before = counts().first;

    CommitLog::begin_put_batch(/*defer_notify=*/true);
    std::vector<std::future<PutMessageResult>> done;
    for (int i = 0; i < 5; ++i) {
        auto p = std::make_shared<std::promise<PutMessageResult>>();
        done.push_back(p->get_future());
        log->put_message(sample_message("Dn", i % 2, "in batch " + std::to_string(i)),
                         [p](const PutMessageResult& r) { p->set_value(r); });
    }
    CommitLog::end_put_batch();
    for (auto& f : done) {
        ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
        EXPECT_TRUE(f.get().ok());
    }
    EXPECT_EQ(counts().first, before) << "notified before the batch's replies were written";
    CommitLog::after_put_batch_written();
    EXPECT_LE(counts().first, before + 1);
    EXPECT_EQ(counts().second, log->max_offset().value());
    const size_t after_written = counts().first;
    CommitLog::after_put_batch_written();  // nothing owed: no call
    EXPECT_EQ(counts().first, after_written);

    // Without deferral the batch has notified by its end.
    CommitLog::begin_put_batch();
    auto plain = std::make_shared<std::promise<PutMessageResult>>();
    auto plain_done = plain->get_future();
    log->put_message(sample_message("Dn", 0, "plain batch"),
                     [plain](const PutMessageResult& r) { plain->set_value(r); });
    CommitLog::end_put_batch();
    ASSERT_EQ(plain_done.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_EQ(counts().second, log->max_offset().value());
    log->set_append_listener(nullptr);
    log->shutdown();
}

TEST_P(CommitLogModeTest, AppendListenerAndAppendData) {
    auto log = open_log(config(dir_.path() + "/master"));
    std::vector<int64_t> seen;
    log->set_append_listener([&](PhysicalOffset o) { seen.push_back(o.value()); });
    for (int i = 0; i < 40; ++i) {
        ASSERT_TRUE(put(*log, sample_message("Ha", 0, std::string(3000, 'h'))).ok());
    }
    ASSERT_EQ(seen.size(), 40u);
    EXPECT_EQ(seen.back(), log->max_offset().value());
    // A slave copies the byte stream, chunk by chunk, and ends with identical records.
    auto slave = open_log(config(dir_.path() + "/slave"));
    EXPECT_FALSE(slave->append_data(PhysicalOffset(5), "x").is_ok());
    int64_t pos = 0;
    while (pos < log->max_offset().value()) {
        auto v = log->get_data(PhysicalOffset(pos), 10000);
        ASSERT_TRUE(v);
        ASSERT_TRUE(slave->append_data(PhysicalOffset(pos), v->bytes()).is_ok());
        pos += static_cast<int64_t>(v->size);
    }
    EXPECT_EQ(slave->max_offset(), log->max_offset());
    // Timed ASYNC_FLUSH (the default): replicated chunks do not wake the flush thread one by
    // one; its interval (10 ms here) makes them durable.
    EXPECT_EQ(slave->flush_service().wakeups(), 0);
    for (int i = 0; i < 10000 && slave->flushed_offset() < slave->max_offset(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));  // bounded: 10 s at most
    }
    EXPECT_EQ(slave->flushed_offset(), slave->max_offset());
    int n = 0;
    ASSERT_TRUE(
        slave
            ->for_each_record(
                PhysicalOffset(0),
                [&](PhysicalOffset o, std::string_view rec) {
                    EXPECT_EQ(rec, log->get_message(o, static_cast<int32_t>(rec.size()))->bytes());
                    ++n;
                    return true;
                })
            .is_ok());
    EXPECT_EQ(n, 40);
}

TEST_P(CommitLogModeTest, NormalRecoveryRestoresEndAndQueueTable) {
    auto cfg = config(dir_.path());
    int64_t end = 0;
    {
        auto log = open_log(cfg);
        for (int i = 0; i < 100; ++i) {
            ASSERT_TRUE(put(*log, sample_message("R", i % 3, std::string(2000, 'r'))).ok());
        }
        end = log->max_offset().value();
        log->shutdown();
    }
    auto log = open_log(cfg);
    EXPECT_EQ(log->max_offset().value(), end);
    EXPECT_TRUE(last_recovery_.cut_reason.empty());
    EXPECT_GT(last_recovery_.scan_from.value(), 0);  // only the last 3 segments
    ASSERT_TRUE(log->rebuild_topic_queue_table().is_ok());
    EXPECT_EQ(log->next_queue_offset("R", 0), QueueOffset(34));
    EXPECT_EQ(log->next_queue_offset("R", 2), QueueOffset(33));
    auto r = put(*log, sample_message("R", 0, "after restart"));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.append.wrote_offset.value(), end);
    EXPECT_EQ(r.append.logics_offset, QueueOffset(34));
}

struct TailCase {
    const char* name;
    void (*damage)(uint8_t* rec, int32_t size);
    const char* reason_contains;
};

class CommitLogTailTest : public CommitLogTest, public ::testing::WithParamInterface<TailCase> {};

TEST_P(CommitLogTailTest, RecoveryCutsDamagedLastRecord) {
    auto cfg = config(dir_.path());
    int64_t last_start = 0;
    int32_t last_size = 0;
    {
        auto log = open_log(cfg);
        for (int i = 0; i < 30; ++i) {
            auto r = put(*log, sample_message("Cut", 0, std::string(1000 + i, 'c')));
            ASSERT_TRUE(r.ok());
            last_start = r.append.wrote_offset.value();
            last_size = r.append.wrote_bytes;
        }
        auto file = log->mapped_file_queue().find_mapped_file_by_offset(last_start);
        GetParam().damage(file->data() + (last_start - file->file_from_offset()), last_size);
        log->shutdown();
    }
    auto log = open_log(cfg, /*abnormal=*/true);
    EXPECT_EQ(log->max_offset().value(), last_start);
    EXPECT_NE(last_recovery_.cut_reason.find(GetParam().reason_contains), std::string::npos)
        << last_recovery_.cut_reason;
    // The cut bytes are zeroed; new puts continue at the cut.
    ASSERT_TRUE(log->rebuild_topic_queue_table().is_ok());
    auto r = put(*log, sample_message("Cut", 0, "replacement"));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.append.wrote_offset.value(), last_start);
    EXPECT_EQ(r.append.logics_offset, QueueOffset(29));
}

INSTANTIATE_TEST_SUITE_P(
    Damage, CommitLogTailTest,
    ::testing::Values(TailCase{"truncated",
                               [](uint8_t* rec, int32_t size) {
                                   std::memset(rec + size / 2, 0, size - size / 2);
                               },
                               "CRC"},
                      TailCase{"flipped_body_byte",
                               [](uint8_t* rec, int32_t size) { rec[size - 60] ^= 0x40; }, "CRC"},
                      TailCase{"bad_magic", [](uint8_t* rec, int32_t) { rec[5] ^= 0xFF; }, "magic"},
                      TailCase{"torn_header",
                               [](uint8_t* rec, int32_t) { put_be32(rec, 1u << 30); },
                               "TOTALSIZE"}),
    [](const auto& p) { return std::string(p.param.name); });

TEST_P(CommitLogModeTest, AbnormalRecoveryStartsFromCheckpointSegment) {
    auto cfg = config(dir_.path());
    {
        auto log = open_log(cfg);
        for (int i = 0; i < 200; ++i) {
            clock_.advance(std::chrono::seconds(1));
            ASSERT_TRUE(put(*log, sample_message("Ck", 0, std::string(2000, 'k'))).ok());
        }
        ASSERT_TRUE(log->flush_service().flush_all());
        // Pretend the consume queues were flushed as far as the CommitLog.
        checkpoint_->set_logics_msg_timestamp(checkpoint_->physic_msg_timestamp());
        ASSERT_TRUE(checkpoint_->flush().is_ok());
        EXPECT_EQ(checkpoint_->physic_msg_timestamp(), clock_.wall_millis());
        log->shutdown();
    }
    auto log = open_log(cfg, /*abnormal=*/true);
    EXPECT_GE(log->mapped_file_queue().file_count(), 6u);
    // The scan starts in the newest segment older than checkpoint - 3 s, not at 0.
    EXPECT_GE(last_recovery_.scan_from.value(),
              static_cast<int64_t>(log->mapped_file_queue().file_count() - 1) * kSeg);
    EXPECT_LT(last_recovery_.records_scanned, 40);
    EXPECT_TRUE(last_recovery_.cut_reason.empty());
}

TEST_P(CommitLogModeTest, EightThreadsKeepEveryQueueDense) {
    auto cfg = config(dir_.path(), 256 * 1024);
    AllocateMappedFileService alloc;
    alloc.start();
    auto cp = StoreCheckpoint::open(cfg.checkpoint_path());
    RunningFlags flags;
    auto log = CommitLog::open(cfg, &clock_, &alloc, cp.value().get(), &flags).value();
    ASSERT_TRUE(log->recover_normally().is_ok());
    log->start();
    constexpr int kThreads = 8;
    constexpr int kPerThread = 400;
    std::vector<std::thread> threads;
    std::mutex mu;
    std::map<int32_t, std::set<int64_t>> offsets;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < kPerThread; ++i) {
                int32_t q = (t + i) % 5;
                auto r =
                    log->put_message(sample_message("Dense", q, fmt::format("{}-{}", t, i))).get();
                ASSERT_TRUE(r.ok());
                std::lock_guard<std::mutex> g(mu);
                EXPECT_TRUE(offsets[q].insert(r.append.logics_offset.value()).second);
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    int64_t total = 0;
    for (auto& [q, set] : offsets) {
        EXPECT_EQ(*set.begin(), 0);
        EXPECT_EQ(*set.rbegin(), static_cast<int64_t>(set.size()) - 1);  // dense
        total += static_cast<int64_t>(set.size());
    }
    EXPECT_EQ(total, kThreads * kPerThread);
    int64_t n = 0;
    std::map<int32_t, int64_t> next;
    ASSERT_TRUE(log->for_each_record(
                       PhysicalOffset(0),
                       [&](PhysicalOffset, std::string_view rec) {
                           auto m = pm::decode_message(rec, {.read_body = true, .check_crc = true});
                           EXPECT_TRUE(m.is_ok());
                           // CommitLog order equals queue order within each queue.
                           EXPECT_EQ(m.value().queue_offset, next[m.value().queue_id]++);
                           ++n;
                           return true;
                       })
                    .is_ok());
    EXPECT_EQ(n, total);
    log->shutdown();
    alloc.shutdown();
}

}  // namespace
}  // namespace comet::store

namespace comet::store {
namespace {

TEST(MessageStoreConfig, DefaultsMatchRocketMq) {
    MessageStoreConfig c;
    EXPECT_EQ(c.mapped_file_size_commit_log, 1073741824);
    EXPECT_EQ(c.mapped_file_size_consume_queue, 6000000);
    EXPECT_EQ(c.flush_disk_type, FlushDiskType::kAsyncFlush);
    EXPECT_EQ(c.flush_interval_commit_log_ms, 500);
    EXPECT_EQ(c.flush_commit_log_least_pages, 4);
    EXPECT_EQ(c.sync_flush_timeout_ms, 5000);
    EXPECT_EQ(c.max_message_size, 4194304);
    EXPECT_TRUE(c.check_crc_on_recover);
    EXPECT_EQ(c.file_reserved_time_hours, 72);
    EXPECT_EQ(c.delete_when, "04");
    EXPECT_EQ(c.disk_max_used_space_ratio, 75);
    c.store_path_root_dir = "/data/store";
    EXPECT_EQ(c.commit_log_dir(), "/data/store/commitlog");
    EXPECT_EQ(c.checkpoint_path(), "/data/store/checkpoint");
    EXPECT_EQ(c.abort_file_path(), "/data/store/abort");
    c.store_path_commit_log = "/fast/cl";
    EXPECT_EQ(c.commit_log_dir(), "/fast/cl");
    MessageStoreConfig d;
    EXPECT_EQ(d.commit_log_dir(), default_store_path_root_dir() + "/commitlog");
}

TEST(CommitLogOpen, RejectsBadConfig) {
    testing::TempDir dir;
    ManualClock clock;
    RunningFlags flags;
    MessageStoreConfig c = testing::small_config(dir.path());
    c.mapped_file_size_commit_log = 100;
    EXPECT_EQ(CommitLog::open(c, &clock, nullptr, nullptr, &flags).status().code(),
              Errc::kInvalidArgument);
    c = testing::small_config(dir.path());
    c.store_host = "not-an-address";
    EXPECT_EQ(CommitLog::open(c, &clock, nullptr, nullptr, &flags).status().code(),
              Errc::kInvalidArgument);
}

// A dispatch hint must describe the record stored at `at` field for field, as the dispatcher's
// own decoder (with the CRC checked) reads it back.
void expect_hint_matches_record(const CommitLog& log, int64_t at, const DispatchRequest& hint,
                                size_t i) {
    auto view = log.get_data(PhysicalOffset(at));
    ASSERT_TRUE(view.has_value()) << i;
    DispatchRequest decoded;
    int32_t size = 0;
    ASSERT_EQ(check_message_and_return_size(view->data, view->size, true, {}, &decoded, &size),
              CheckResult::kMessage)
        << i;
    EXPECT_EQ(hint.commit_log_offset.value(), at) << i;
    EXPECT_EQ(hint.commit_log_offset, decoded.commit_log_offset) << i;
    EXPECT_EQ(hint.msg_size, size) << i;
    EXPECT_EQ(hint.msg_size, decoded.msg_size) << i;
    EXPECT_EQ(hint.topic, decoded.topic) << i;
    EXPECT_EQ(hint.queue_id, decoded.queue_id) << i;
    EXPECT_EQ(hint.tags_code, decoded.tags_code) << i;
    EXPECT_EQ(hint.store_timestamp, decoded.store_timestamp) << i;
    EXPECT_EQ(hint.consume_queue_offset, decoded.consume_queue_offset) << i;
    EXPECT_EQ(hint.keys, decoded.keys) << i;
    EXPECT_EQ(hint.uniq_key, decoded.uniq_key) << i;
    EXPECT_EQ(hint.sys_flag, decoded.sys_flag) << i;
    EXPECT_EQ(hint.prepared_transaction_offset, decoded.prepared_transaction_offset) << i;
}

// Dispatch hints (issue 16): every single-message put of the write-buffer path leaves the
// dispatcher a description of its record; it must equal what decoding the stored bytes gives,
// field for field, for plain, keyed, transactional (prepared / rollback: queue offset 0) and
// segment-rolling puts. The schedule topic (tags code from the delay table) gets no hint.
TEST_F(CommitLogTest, DispatchHintsEqualTheDecodedRecords) {
    auto log = open_log(config(dir_.path()));
    DispatchHints* hints = log->dispatch_hints();
    ASSERT_NE(hints, nullptr);
    std::vector<PutMessageResult> results;
    std::vector<bool> hinted;
    for (int i = 0; i < 60; ++i) {
        pm::MessageExt m = sample_message("Hint" + std::to_string(i % 3), i % 4,
                                          std::string(static_cast<size_t>(100 + i * 97 % 3000), 'h'));
        if (i % 5 == 0) {
            m.set_property("KEYS", "order-" + std::to_string(i) + " customer-7");
        }
        if (i % 7 == 0) {
            m.set_property("UNIQ_KEY", "7F00000100002A9F0000000" + std::to_string(i));
        }
        if (i % 11 == 3) {
            m.set_property("TAGS", "TagB" + std::to_string(i));
        }
        if (i == 13) {
            m.sys_flag = pm::sysflag::kTransactionPreparedType;
            m.prepared_transaction_offset = 0;
        }
        if (i == 17) {
            m.sys_flag = pm::sysflag::kTransactionRollbackType;
            m.prepared_transaction_offset = 4242;
        }
        const bool schedule = i == 21;
        if (schedule) {
            m.topic = std::string(kScheduleTopic);
            m.queue_id = 2;
            m.set_property("DELAY", "3");
        }
        results.push_back(put(*log, std::move(m)));
        ASSERT_TRUE(results.back().ok()) << i;
        hinted.push_back(!schedule);
    }
    const int64_t max = log->max_offset().value();
    ASSERT_GT(max, 64 * 1024) << "the puts should roll a segment";
    DispatchRequest from_hint;
    int compared = 0;
    for (size_t i = 0; i < results.size(); ++i) {
        const int64_t at = results[i].append.wrote_offset.value();
        const bool took = hints->take(at, max, &from_hint);
        ASSERT_EQ(took, hinted[i]) << i;
        if (!took) {
            continue;
        }
        expect_hint_matches_record(*log, at, from_hint, i);
        ++compared;
    }
    EXPECT_EQ(compared, 59);
    EXPECT_FALSE(hints->take(max, INT64_MAX, &from_hint)) << "nothing beyond the last put";
}

// A truncation makes every earlier hint unusable: the records put again at the same offsets
// are described by their own hints, never by the cut ones.
TEST_F(CommitLogTest, TruncationInvalidatesDispatchHints) {
    auto log = open_log(config(dir_.path()));
    DispatchHints* hints = log->dispatch_hints();
    ASSERT_NE(hints, nullptr);
    std::vector<int64_t> offsets;
    for (int i = 0; i < 5; ++i) {
        auto r = put(*log, sample_message("Cut", 0, "before-" + std::to_string(i)));
        ASSERT_TRUE(r.ok());
        offsets.push_back(r.append.wrote_offset.value());
    }
    DispatchRequest req;
    ASSERT_TRUE(hints->take(offsets[0], INT64_MAX, &req));
    ASSERT_TRUE(log->truncate_to(PhysicalOffset(offsets[2])).is_ok());
    EXPECT_FALSE(hints->take(offsets[2], INT64_MAX, &req)) << "a cut record's hint was handed out";

    auto again = put(*log, sample_message("Other", 3, "after-the-cut-and-longer"));
    ASSERT_TRUE(again.ok());
    ASSERT_EQ(again.append.wrote_offset.value(), offsets[2]);
    ASSERT_TRUE(hints->take(offsets[2], INT64_MAX, &req));
    EXPECT_EQ(req.topic, "Other");
    EXPECT_EQ(req.queue_id, 3);
    EXPECT_EQ(req.consume_queue_offset.value(), 0);
}

// Replicated bytes (a follower's or slave's append_data) leave hints too, decoded from the
// chunk while it is hot: equal field for field to decoding the stored record. Chunks of whole
// records are hinted throughout (the schedule topic excepted, as for puts). HA chunks are cut
// anywhere: a record split between two chunks gets no hint, and hinting resumes with the record
// after it (its size read from the chunk, or from the first bytes carried over when the cut
// falls inside its first eight), so every other record is hinted and every hint is right.
TEST_F(CommitLogTest, ReplicatedChunksLeaveCorrectDispatchHints) {
    auto master = open_log(config(dir_.path() + "/master"));
    std::vector<int64_t> starts;
    std::vector<int32_t> sizes;
    std::vector<bool> schedule;
    for (int i = 0; i < 70; ++i) {
        pm::MessageExt m = sample_message("Rep" + std::to_string(i % 3), i % 4,
                                          std::string(static_cast<size_t>(200 + i * 131 % 2900), 'r'));
        if (i % 4 == 1) {
            m.set_property("KEYS", "k-" + std::to_string(i));
        }
        if (i % 9 == 2) {
            m.set_property("TAGS", "T" + std::to_string(i));
        }
        const bool delayed = i == 30;
        if (delayed) {
            m.topic = std::string(kScheduleTopic);
            m.set_property("DELAY", "2");
        }
        auto r = put(*master, std::move(m));
        ASSERT_TRUE(r.ok()) << i;
        starts.push_back(r.append.wrote_offset.value());
        sizes.push_back(r.append.wrote_bytes);
        schedule.push_back(delayed);
    }
    const int64_t max = master->max_offset().value();
    ASSERT_GT(max, 64 * 1024) << "the puts should roll a segment";

    // Compares every hint the slave hands out with the slave's own stored record.
    auto check_hints = [&](CommitLog& slave, int* hinted) {
        DispatchHints* hints = slave.dispatch_hints();
        ASSERT_NE(hints, nullptr);
        DispatchRequest from_hint;
        for (size_t i = 0; i < starts.size(); ++i) {
            if (!hints->take(starts[i], max, &from_hint)) {
                continue;
            }
            EXPECT_FALSE(schedule[i]) << "a delayed message was hinted: " << i;
            ++*hinted;
            expect_hint_matches_record(slave, starts[i], from_hint, i);
        }
    };

    {  // Whole records, a few per chunk (as DLedger entries carry them), filler included.
        auto slave = open_log(config(dir_.path() + "/whole"));
        int64_t pos = 0;
        while (pos < max) {
            auto v = master->get_data(PhysicalOffset(pos));
            ASSERT_TRUE(v);
            // Up to three records (get_data stops at the segment's end, after its filler).
            auto end = std::upper_bound(starts.begin(), starts.end(), pos);
            int64_t cut = pos + static_cast<int64_t>(v->size);
            if (std::distance(end, starts.end()) >= 3 && *(end + 2) < cut) {
                cut = *(end + 2);
            }
            ASSERT_TRUE(slave->append_data(PhysicalOffset(pos),
                                           v->bytes().substr(0, static_cast<size_t>(cut - pos)))
                            .is_ok());
            pos = cut;
        }
        ASSERT_EQ(slave->max_offset().value(), max);
        int hinted = 0;
        check_hints(*slave, &hinted);
        EXPECT_EQ(hinted, 69) << "every record but the delayed one";
    }
    // Feeds the master's bytes to a new slave in chunks ending at `cuts` (and at segment
    // ends); expects a hint for exactly the records no cut falls inside.
    auto split_run = [&](const std::string& name, const std::vector<int64_t>& cuts) {
        auto slave = open_log(config(dir_.path() + "/" + name));
        int64_t pos = 0;
        auto next_cut = cuts.begin();
        while (pos < max) {
            while (next_cut != cuts.end() && *next_cut <= pos) {
                ++next_cut;
            }
            const int64_t until = next_cut != cuts.end() ? std::min(*next_cut, max) : max;
            auto v = master->get_data(PhysicalOffset(pos), static_cast<int32_t>(until - pos));
            ASSERT_TRUE(v) << name << " at " << pos;
            ASSERT_TRUE(slave->append_data(PhysicalOffset(pos), v->bytes()).is_ok());
            pos += static_cast<int64_t>(v->size);
        }
        int expected = 0;
        for (size_t i = 0; i < starts.size(); ++i) {
            const bool split = std::any_of(cuts.begin(), cuts.end(), [&](int64_t c) {
                return c > starts[i] && c < starts[i] + sizes[i];
            });
            expected += !split && !schedule[i] ? 1 : 0;
        }
        int hinted = 0;
        check_hints(*slave, &hinted);
        EXPECT_EQ(hinted, expected) << name;
        EXPECT_LT(hinted, 69) << name;
    };
    std::vector<int64_t> fixed;  // every 7,000 bytes
    for (int64_t c = 7000; c < max; c += 7000) {
        fixed.push_back(c);
    }
    split_run("split", fixed);
    std::vector<int64_t> in_header;  // inside the first eight bytes of every third record
    for (size_t i = 1; i < starts.size(); i += 3) {
        in_header.push_back(starts[i] + static_cast<int64_t>(1 + i % 7));
    }
    split_run("header", in_header);
}

// The ring itself: full means no hint (the record is decoded), hints of records already
// passed are dropped, a record not yet wholly dispatchable keeps its hint.
TEST(DispatchHintsRing, FullPassedAndNotYetDispatchable) {
    DispatchHints ring(4);
    auto push = [&](int64_t at, int32_t size) {
        DispatchRequest* h = ring.begin_push();
        if (h == nullptr) {
            return false;
        }
        h->commit_log_offset = PhysicalOffset(at);
        h->msg_size = size;
        h->topic = "T" + std::to_string(at);
        ring.end_push();
        return true;
    };
    EXPECT_TRUE(push(0, 100));
    EXPECT_TRUE(push(100, 100));
    EXPECT_TRUE(push(200, 100));
    EXPECT_TRUE(push(300, 100));
    EXPECT_FALSE(push(400, 100)) << "a fifth hint in a ring of four";
    DispatchRequest out;
    EXPECT_FALSE(ring.take(200, 250, &out)) << "record 200 ends at 300, beyond the limit";
    EXPECT_TRUE(ring.take(200, 300, &out)) << "0 and 100 were passed (decoded): dropped";
    EXPECT_EQ(out.topic, "T200");
    EXPECT_FALSE(ring.take(350, 1000, &out)) << "no hint starts at 350";
    EXPECT_FALSE(ring.take(300, 1000, &out)) << "300 was dropped when 350 was asked for";
    EXPECT_TRUE(push(400, 100));
    ring.invalidate();
    EXPECT_TRUE(push(500, 100));
    EXPECT_FALSE(ring.take(400, 1000, &out)) << "hint from before invalidate()";
    EXPECT_TRUE(ring.take(500, 1000, &out));
}

}  // namespace
}  // namespace comet::store
