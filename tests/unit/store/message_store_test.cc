#include "store/message_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "message_store_test_util.h"
#include "protocol/message_decoder.h"

namespace comet::store {
namespace {

using testing::make_message;
using testing::tiny_config;
namespace fs = std::filesystem;

class MessageStoreTest : public testing::StoreDirTest {};

std::string body_of(const MappedView& v) {
    auto m = protocol::decode_message(v.bytes());
    EXPECT_TRUE(m.is_ok());
    return m.is_ok() ? m->body : std::string();
}

TEST_F(MessageStoreTest, PutDispatchGetAndLookups) {
    ManualClock clock;
    auto store = open_store(clock, tiny_config(root_));
    ASSERT_NE(store, nullptr);
    store->start();
    std::vector<PutMessageResult> results;
    for (int i = 0; i < 6; ++i) {
        clock.advance(std::chrono::seconds(1));
        auto r = put(*store,
                     make_message("TopicA", 1, "m" + std::to_string(i), i % 2 == 0 ? "even" : "odd",
                                  "k" + std::to_string(i), "UNIQ" + std::to_string(i)));
        ASSERT_TRUE(r.ok()) << r.remark;
        EXPECT_EQ(r.append.logics_offset.value(), i);
        results.push_back(r);
    }
    ASSERT_TRUE(store->dispatch_now().is_ok());
    EXPECT_EQ(store->dispatch_behind_bytes(), 0);
    EXPECT_EQ(store->get_max_offset_in_queue("TopicA", 1).value(), 6);
    EXPECT_EQ(store->get_min_offset_in_queue("TopicA", 1).value(), 0);
    // A queue with nothing yet answers 0 like 4.9.8, not -1 (the transaction check service
    // read -1 as "nothing to scan").
    EXPECT_EQ(store->get_min_offset_in_queue("TopicA", 3).value(), 0);
    EXPECT_EQ(store->get_min_offset_in_queue("NoSuchTopic", 0).value(), 0);

    auto got = store->get_message("g", "TopicA", 1, QueueOffset(0), 4, 0, nullptr);
    EXPECT_EQ(got.status, GetMessageStatus::kFound);
    ASSERT_EQ(got.message_count(), 4);
    EXPECT_EQ(got.next_begin_offset.value(), 4);
    EXPECT_EQ(got.max_offset.value(), 6);
    EXPECT_EQ(body_of(got.messages[0]), "m0");
    EXPECT_EQ(body_of(got.messages[3]), "m3");

    // Tag filter: only "odd" (1, 3, 5).
    TagsCodeFilter odd({tags_string_to_tags_code("odd")});
    got = store->get_message("g", "TopicA", 1, QueueOffset(0), 32, 0, &odd);
    ASSERT_EQ(got.status, GetMessageStatus::kFound);
    ASSERT_EQ(got.message_count(), 3);
    EXPECT_EQ(body_of(got.messages[2]), "m5");
    EXPECT_EQ(got.next_begin_offset.value(), 6);
    TagsCodeFilter none({tags_string_to_tags_code("nope")});
    got = store->get_message("g", "TopicA", 1, QueueOffset(2), 32, 0, &none);
    EXPECT_EQ(got.status, GetMessageStatus::kNoMatchedMessage);
    EXPECT_EQ(got.next_begin_offset.value(), 6);

    // Byte cap: the first message always goes, then the cap applies.
    got = store->get_message("g", "TopicA", 1, QueueOffset(0), 32, 1, nullptr);
    EXPECT_EQ(got.message_count(), 1);
    EXPECT_EQ(got.next_begin_offset.value(), 1);

    // Offsets out of range.
    got = store->get_message("g", "TopicA", 1, QueueOffset(6), 32, 0, nullptr);
    EXPECT_EQ(got.status, GetMessageStatus::kOffsetOverflowOne);
    EXPECT_EQ(got.next_begin_offset.value(), 6);
    got = store->get_message("g", "TopicA", 1, QueueOffset(60), 32, 0, nullptr);
    EXPECT_EQ(got.status, GetMessageStatus::kOffsetOverflowBadly);
    EXPECT_EQ(got.next_begin_offset.value(), 6);  // 4.9.8 corrects to max, also when min is 0
    got = store->get_message("g", "NoTopic", 0, QueueOffset(5), 32, 0, nullptr);
    EXPECT_EQ(got.status, GetMessageStatus::kNoMatchedLogicQueue);
    EXPECT_EQ(got.next_begin_offset.value(), 0);
    ASSERT_TRUE(store->consume_queues().find_or_create("Empty", 0).is_ok());
    got = store->get_message("g", "Empty", 0, QueueOffset(3), 32, 0, nullptr);
    EXPECT_EQ(got.status, GetMessageStatus::kNoMessageInQueue);
    EXPECT_EQ(got.next_begin_offset.value(), 0);

    // Lookups.
    const PhysicalOffset phy3 = results[3].append.wrote_offset;
    EXPECT_EQ(store->get_commit_log_offset_in_queue("TopicA", 1, QueueOffset(3)), phy3);
    auto m3 = store->look_message_by_offset(phy3);
    ASSERT_TRUE(m3.is_ok());
    EXPECT_EQ(m3->body, "m3");
    auto by_id = store->look_message_by_msg_id(results[3].append.msg_id);
    ASSERT_TRUE(by_id.is_ok()) << results[3].append.msg_id;
    EXPECT_EQ(by_id->body, "m3");
    EXPECT_FALSE(store->look_message_by_msg_id("XYZ").is_ok());
    auto view = store->select_one_message_by_offset(phy3);
    ASSERT_TRUE(view.has_value());
    EXPECT_EQ(view->size, static_cast<size_t>(results[3].append.wrote_bytes));

    auto q = store->query_message("TopicA", "k4", 10, 0, INT64_MAX);
    ASSERT_EQ(q.messages.size(), 1u);
    EXPECT_EQ(body_of(q.messages[0]), "m4");
    q = store->query_message("TopicA", "UNIQ2", 10, 0, INT64_MAX);
    ASSERT_EQ(q.messages.size(), 1u);
    EXPECT_EQ(body_of(q.messages[0]), "m2");
    EXPECT_TRUE(store->query_message("TopicB", "k4", 10, 0, INT64_MAX).messages.empty());

    // Times: message i was stored at t0 + i s.
    const int64_t t0 = results[0].append.store_timestamp;
    EXPECT_EQ(results[2].append.store_timestamp, t0 + 2000);
    EXPECT_EQ(store->get_earliest_message_time("TopicA", 1), t0);
    EXPECT_EQ(store->get_earliest_message_time(), t0);
    EXPECT_EQ(store->get_message_store_timestamp("TopicA", 1, QueueOffset(5)), t0 + 5000);
    EXPECT_EQ(store->get_offset_in_queue_by_time("TopicA", 1, t0 + 2500).value(), 3);
    EXPECT_EQ(store->get_offset_in_queue_by_time("TopicA", 1, t0 + 2000).value(), 2);
    EXPECT_EQ(
        store->get_offset_in_queue_by_time("TopicA", 1, t0 + 2500, BoundaryType::kUpper).value(),
        2);
    EXPECT_EQ(store->get_offset_in_queue_by_time("TopicA", 1, t0 + 99'000).value(), 6);
    EXPECT_EQ(store->get_offset_in_queue_by_time("TopicA", 1, t0 - 1).value(), 0);
    EXPECT_EQ(store->get_offset_in_queue_by_time("TopicA", 1, t0 - 1, BoundaryType::kUpper).value(),
              0);
    // RocketMQ 4.9.8 (no boundaryType): the nearest message, the left one on a tie, the last
    // message after everything.
    auto nearest = [&](int64_t ts) {
        return store->get_offset_in_queue_by_time("TopicA", 1, ts, BoundaryType::kNearest).value();
    };
    EXPECT_EQ(nearest(t0 + 2400), 2);
    EXPECT_EQ(nearest(t0 + 2600), 3);
    EXPECT_EQ(nearest(t0 + 2500), 2);
    EXPECT_EQ(nearest(t0 + 3000), 3);
    EXPECT_EQ(nearest(t0 + 99'000), 5);
    EXPECT_EQ(nearest(t0 - 1), 0);
    EXPECT_EQ(store->get_offset_in_queue_by_time("NoTopic", 0, t0, BoundaryType::kNearest).value(),
              0);

    auto info = store->runtime_info();
    EXPECT_EQ(info["putMessageTimesTotal"], "6");
    EXPECT_EQ(info["commitLogMaxOffset"], std::to_string(store->get_max_phy_offset().value()));
    EXPECT_EQ(info["dispatchBehindBytes"], "0");
    EXPECT_TRUE(info.count("putTps") == 1 && info.count("getFoundTps") == 1);
    store->check_invariants();
    store->shutdown();
}

// accessMessageInMemoryMaxRatio (40 %) of a 10 000-byte "machine": a record more than 4 000
// bytes behind the log's end is on disk (DefaultMessageStore#checkInDiskByCommitOffset).
TEST_F(MessageStoreTest, InMemoryIsTheRatioOfPhysicalMemoryBehindTheEnd) {
    ManualClock clock;
    MessageStoreOptions opts;
    opts.physical_memory_bytes = 10000;
    auto store = open_store(clock, tiny_config(root_), opts);
    ASSERT_NE(store, nullptr);
    EXPECT_TRUE(store->is_in_memory(0));  // empty log
    std::vector<int64_t> offsets;
    for (int i = 0; i < 20; ++i) {
        auto r = put(*store, make_message("T", 0, std::string(400, 'a' + i % 26)));
        ASSERT_TRUE(r.ok()) << r.remark;
        offsets.push_back(r.append.wrote_offset.value());
    }
    const int64_t end = store->get_max_phy_offset().value();
    ASSERT_GT(end, 4000 + 1000);
    EXPECT_FALSE(store->is_in_memory(offsets.front()));
    EXPECT_TRUE(store->is_in_memory(offsets.back()));
    EXPECT_TRUE(store->is_in_memory(end - 4000));  // exactly the ratio: still in memory
    EXPECT_FALSE(store->is_in_memory(end - 4001));
    store->shutdown();
}

TEST_F(MessageStoreTest, BatchAndArrivalNotification) {
    ManualClock clock;
    auto store = open_store(clock, tiny_config(root_));
    ASSERT_NE(store, nullptr);

    // An arrival is announced once its ConsumeQueue unit is written (a woken pull must find
    // the message): the queue's max offset already covers it when the listener hears of it.
    struct Listener : MessageArrivingListener {
        MessageStore* store = nullptr;
        std::vector<std::pair<std::string, int64_t>> seen;
        std::vector<int64_t> max_when_told;
        void arriving(const std::string& topic, int32_t queue_id, QueueOffset logic_offset, int64_t,
                      int64_t) override {
            seen.emplace_back(topic + "@" + std::to_string(queue_id), logic_offset.value());
            max_when_told.push_back(store->get_max_offset_in_queue(topic, queue_id).value());
        }
    } listener;
    listener.store = store.get();
    store->set_message_arriving_listener(&listener);
    int fired = 0;
    bool arrived = false;
    store->arrival_waiters().add("T", 2, QueueOffset(1), store->get_max_offset_in_queue("T", 2),
                                 clock.now() + std::chrono::seconds(15), [&](bool ok, QueueOffset) {
                                     ++fired;
                                     arrived = ok;
                                 });
    int timed_out = 0;
    store->arrival_waiters().add("T", 3, QueueOffset(0), QueueOffset(0),
                                 clock.now() + std::chrono::seconds(15),
                                 [&](bool ok, QueueOffset) { timed_out += ok ? 0 : 1; });

    MessageBatch batch;
    batch.topic = "T";
    batch.queue_id = 2;
    batch.born_host = protocol::HostAddress::ipv4(10, 0, 0, 1, 1234);
    for (int i = 0; i < 3; ++i) {
        protocol::MessageProperties p;
        p.set("KEYS", "bk" + std::to_string(i));
        protocol::encode_batch_entry(0, "b" + std::to_string(i),
                                     protocol::message_properties_to_string(p), &batch.body);
    }
    auto r = store->put_messages(std::move(batch)).get();
    ASSERT_TRUE(r.ok()) << r.remark;
    EXPECT_EQ(r.append.msg_num, 3);
    ASSERT_TRUE(store->dispatch_now().is_ok());
    ASSERT_EQ(listener.seen.size(), 3u);
    EXPECT_EQ(listener.seen[2], (std::pair<std::string, int64_t>("T@2", 3)));
    for (size_t i = 0; i < listener.seen.size(); ++i) {
        EXPECT_GE(listener.max_when_told[i], listener.seen[i].second) << i;
    }
    EXPECT_EQ(fired, 1);
    EXPECT_TRUE(arrived);
    EXPECT_EQ(store->arrival_waiters().size(), 1u);
    clock.advance(std::chrono::seconds(16));
    EXPECT_EQ(store->arrival_waiters().expire(clock.now()), 1);
    EXPECT_EQ(timed_out, 1);
    auto got = store->get_message("g", "T", 2, QueueOffset(1), 32, 0, nullptr);
    ASSERT_EQ(got.message_count(), 2);
    EXPECT_EQ(body_of(got.messages[1]), "b2");
    EXPECT_EQ(store->query_message("T", "bk1", 4, 0, INT64_MAX).messages.size(), 1u);
    store->set_message_arriving_listener(nullptr);
    store->shutdown();
}

TEST_F(MessageStoreTest, DispatchLimitHoldsBackUncommittedRecords) {
    ManualClock clock;
    auto store = open_store(clock, tiny_config(root_));
    ASSERT_NE(store, nullptr);
    std::atomic<int64_t> limit{0};
    store->set_dispatch_limit([&] { return PhysicalOffset(limit.load()); });
    auto r1 = put(*store, make_message("T", 0, "one"));
    auto r2 = put(*store, make_message("T", 0, "two"));
    ASSERT_TRUE(r1.ok() && r2.ok());
    ASSERT_TRUE(store->dispatch_now().is_ok());
    EXPECT_EQ(store->get_max_offset_in_queue("T", 0).value(), 0);
    limit = r1.append.end_offset().value();
    ASSERT_TRUE(store->dispatch_now().is_ok());
    EXPECT_EQ(store->get_max_offset_in_queue("T", 0).value(), 1);
    EXPECT_EQ(store->dispatched_offset(), r1.append.end_offset());
    limit = INT64_MAX;
    ASSERT_TRUE(store->dispatch_now().is_ok());
    EXPECT_EQ(store->get_max_offset_in_queue("T", 0).value(), 2);
    store->shutdown();
}

// DLedger's contract (MessageStoreOptions::only_limit_raises_wake_dispatch): appends wake
// nobody, the owner of the limit wakes the dispatcher after raising it, and the running
// dispatcher then reaches the new limit.
TEST_F(MessageStoreTest, TheLimitOwnersWakeUpDispatchesWhenAppendsWakeNobody) {
    ManualClock clock;
    std::atomic<int64_t> limit{0};
    MessageStoreOptions opts;
    opts.dispatch_limit = [&] { return PhysicalOffset(limit.load()); };
    opts.only_limit_raises_wake_dispatch = true;
    auto store = open_store(clock, tiny_config(root_), opts);
    ASSERT_NE(store, nullptr);
    auto r1 = put(*store, make_message("T", 0, "one"));
    auto r2 = put(*store, make_message("T", 0, "two"));
    ASSERT_TRUE(r1.ok() && r2.ok());
    EXPECT_EQ(store->dispatched_offset().value(), 0);
    for (const auto& r : {r1, r2}) {
        limit = r.append.end_offset().value();
        store->wake_dispatch();
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (store->dispatched_offset() < r.append.end_offset() &&
               std::chrono::steady_clock::now() < give_up) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        EXPECT_EQ(store->dispatched_offset(), r.append.end_offset());
    }
    EXPECT_EQ(store->get_max_offset_in_queue("T", 0).value(), 2);
    store->shutdown();
}

// The dispatcher sleeps until a put wakes it (MessageStoreOptions::dispatch_idle_wait is only
// a safety net): with the net set to a minute, every put must still be dispatched at once, in
// both CommitLog write modes. A put whose wake-up were lost would wait out the minute and fail
// the bounded wait below.
TEST_F(MessageStoreTest, EveryPutWakesTheDispatcherWithoutPolling) {
    for (const bool write_buffer : {true, false}) {
        SCOPED_TRACE(write_buffer ? "write buffer" : "through the mapping");
        ManualClock clock;
        MessageStoreConfig config = tiny_config(root_ + (write_buffer ? "/wb" : "/map"));
        if (!write_buffer) {
            config.commit_log_write_buffer_bytes = 0;
        }
        MessageStoreOptions opts;
        opts.dispatch_idle_wait = std::chrono::minutes(1);
        auto store = open_store(clock, config, opts);
        ASSERT_NE(store, nullptr);
        for (int i = 0; i < 300; ++i) {
            auto r = put(*store, make_message("W", i % 2, "body-" + std::to_string(i)));
            ASSERT_TRUE(r.ok());
            const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (store->dispatched_offset() < r.append.end_offset() &&
                   std::chrono::steady_clock::now() < give_up) {
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
            ASSERT_EQ(store->dispatched_offset(), r.append.end_offset()) << "put " << i;
        }
        store->shutdown();
    }
}

TEST_F(MessageStoreTest, RecoversAfterCleanShutdownAndAfterCrash) {
    ManualClock clock;
    const auto config = tiny_config(root_);
    int64_t max_after_first = 0;
    {
        auto store = open_store(clock, config);
        ASSERT_NE(store, nullptr);
        EXPECT_TRUE(store->last_exit_ok());
        store->start();
        for (int i = 0; i < 40; ++i) {  // several 4 KiB CommitLog segments
            ASSERT_TRUE(put(*store, make_message("R", i % 3, std::string(150, 'a' + i % 26), "t",
                                                 "key" + std::to_string(i)))
                            .ok());
        }
        store->shutdown();
        max_after_first = store->get_max_phy_offset().value();
        EXPECT_FALSE(fs::exists(config.abort_file_path()));
    }
    {
        auto store = open_store(clock, config);
        ASSERT_NE(store, nullptr);
        EXPECT_TRUE(store->last_exit_ok());
        EXPECT_TRUE(fs::exists(config.abort_file_path()));
        EXPECT_EQ(store->get_max_phy_offset().value(), max_after_first);
        EXPECT_EQ(store->get_max_offset_in_queue("R", 0).value(), 14);
        EXPECT_EQ(store->get_max_offset_in_queue("R", 1).value(), 13);
        EXPECT_EQ(store->dispatched_offset().value(), max_after_first);
        // New puts continue each queue densely.
        auto r = put(*store, make_message("R", 1, "after-restart"));
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(r.append.logics_offset.value(), 13);
        ASSERT_TRUE(put(*store, make_message("R", 1, "last")).ok());
        ASSERT_TRUE(store->dispatch_now().is_ok());
        store->halt_for_test();  // crash: no final flush, abort stays
        EXPECT_TRUE(fs::exists(config.abort_file_path()));
    }
    {
        auto store = open_store(clock, config);
        ASSERT_NE(store, nullptr);
        EXPECT_FALSE(store->last_exit_ok());
        EXPECT_EQ(store->get_max_offset_in_queue("R", 1).value(), 15);
        auto got = store->get_message("g", "R", 1, QueueOffset(13), 32, 0, nullptr);
        ASSERT_EQ(got.message_count(), 2);
        EXPECT_EQ(body_of(got.messages[0]), "after-restart");
        EXPECT_EQ(body_of(got.messages[1]), "last");
        // Corrupt the last record ("last") on disk, then crash again.
        const PhysicalOffset last = store->get_commit_log_offset_in_queue("R", 1, QueueOffset(14));
        store->halt_for_test();
        store.reset();
        const int64_t seg = config.mapped_file_size_commit_log;
        const fs::path f = fs::path(config.commit_log_dir()) /
                           offset_to_file_name(last.value() - last.value() % seg);
        std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
        io.seekp(last.value() % seg + 4);  // magic
        io.write("\0\0\0\0", 4);
    }
    {
        auto store = open_store(clock, config);
        ASSERT_NE(store, nullptr);
        EXPECT_FALSE(store->last_exit_ok());
        // The unit that pointed at the cut record is gone; the offset is reused.
        EXPECT_EQ(store->get_max_offset_in_queue("R", 1).value(), 14);
        auto r = put(*store, make_message("R", 1, "replacement"));
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(r.append.logics_offset.value(), 14);
        ASSERT_TRUE(store->dispatch_now().is_ok());
        auto got = store->get_message("g", "R", 1, QueueOffset(14), 32, 0, nullptr);
        ASSERT_EQ(got.message_count(), 1);
        EXPECT_EQ(body_of(got.messages[0]), "replacement");
        // Queues 0 and 2 are untouched.
        EXPECT_EQ(store->get_max_offset_in_queue("R", 0).value(), 14);
        EXPECT_EQ(store->get_max_offset_in_queue("R", 2).value(), 13);
        got = store->get_message("g", "R", 0, QueueOffset(0), 32, 0, nullptr);
        EXPECT_EQ(got.message_count(), 8);  // a get stops at the end of a ConsumeQueue segment
        EXPECT_EQ(got.next_begin_offset.value(), 8);
        EXPECT_EQ(store->query_message("R", "key39", 4, 0, INT64_MAX).messages.size(), 1u);
        store->shutdown();
    }
}

TEST_F(MessageStoreTest, ConsumeQueueRebuiltWhenItsFilesAreLost) {
    ManualClock clock;
    const auto config = tiny_config(root_);
    {
        auto store = open_store(clock, config);
        ASSERT_NE(store, nullptr);
        for (int i = 0; i < 20; ++i) {
            ASSERT_TRUE(put(*store, make_message("L", 0, "x" + std::to_string(i))).ok());
        }
        ASSERT_TRUE(store->dispatch_now().is_ok());
        store->halt_for_test();
    }
    fs::remove_all(config.consume_queue_dir());
    auto store = open_store(clock, config);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->get_max_offset_in_queue("L", 0).value(), 20);
    auto got = store->get_message("g", "L", 0, QueueOffset(19), 32, 0, nullptr);
    ASSERT_EQ(got.message_count(), 1);
    EXPECT_EQ(body_of(got.messages[0]), "x19");
    store->shutdown();
}

TEST_F(MessageStoreTest, EightThreadsPutConcurrentlyEveryQueueDense) {
    ManualClock clock;
    auto config = tiny_config(root_);
    config.mapped_file_size_commit_log = 64 * 1024;
    config.mapped_file_size_consume_queue = 100 * 20;
    auto store = open_store(clock, config);
    ASSERT_NE(store, nullptr);
    store->start();
    constexpr int kThreads = 8;
    constexpr int kPerThread = 250;
    constexpr int kQueues = 4;
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            std::vector<std::future<PutMessageResult>> fs;
            for (int i = 0; i < kPerThread; ++i) {
                fs.push_back(store->put_message(make_message(
                    "C", (t + i) % kQueues, "t" + std::to_string(t) + "-" + std::to_string(i))));
            }
            for (auto& f : fs) {
                if (!f.get().ok()) {
                    failures.fetch_add(1);
                }
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    ASSERT_EQ(failures.load(), 0);
    // Wait (bounded) for the dispatch thread to catch up.
    for (int i = 0; i < 30000 && store->dispatch_behind_bytes() > 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_EQ(store->dispatch_behind_bytes(), 0);
    std::set<std::string> bodies;
    int64_t total = 0;
    for (int q = 0; q < kQueues; ++q) {
        const int64_t max = store->get_max_offset_in_queue("C", q).value();
        total += max;
        int64_t off = 0;
        while (off < max) {
            auto got = store->get_message("g", "C", q, QueueOffset(off), 32, 0, nullptr);
            ASSERT_EQ(got.status, GetMessageStatus::kFound) << "queue " << q << " @" << off;
            for (int k = 0; k < got.message_count(); ++k) {
                auto m = protocol::decode_message(got.messages[k].bytes());
                ASSERT_TRUE(m.is_ok());
                EXPECT_EQ(m->queue_offset, off + k);  // dense: stored offset == position
                EXPECT_EQ(m->queue_id, q);
                bodies.insert(m->body);
            }
            off = got.next_begin_offset.value();
        }
    }
    EXPECT_EQ(total, kThreads * kPerThread);
    EXPECT_EQ(bodies.size(), static_cast<size_t>(kThreads * kPerThread));
    store->check_invariants();
    store->shutdown();
}

TEST_F(MessageStoreTest, DeleteTopicRemovesQueuesAndRestartsOffsets) {
    ManualClock clock;
    auto store = open_store(clock, tiny_config(root_));
    ASSERT_NE(store, nullptr);
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(put(*store, make_message("Gone", 0, "x")).ok());
        ASSERT_TRUE(put(*store, make_message("Kept", 0, "y")).ok());
    }
    ASSERT_TRUE(store->dispatch_now().is_ok());
    EXPECT_EQ(store->delete_topics({"Gone"}), 1);
    EXPECT_FALSE(fs::exists(fs::path(store->config().consume_queue_dir()) / "Gone"));
    EXPECT_EQ(store->get_message("g", "Gone", 0, QueueOffset(0), 32, 0, nullptr).status,
              GetMessageStatus::kNoMatchedLogicQueue);
    EXPECT_EQ(store->get_max_offset_in_queue("Kept", 0).value(), 3);
    auto r = put(*store, make_message("Gone", 0, "again"));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.append.logics_offset.value(), 0);
    store->shutdown();
}

TEST_F(MessageStoreTest, BadConfigOrFilesAreErrorsNotCrashes) {
    ManualClock clock;
    auto config = tiny_config(root_);
    config.mapped_file_size_consume_queue = 30;  // not a multiple of 20
    EXPECT_FALSE(MessageStore::open(config, clock).is_ok());
    config = tiny_config(root_);
    config.max_index_num = 1;
    EXPECT_FALSE(MessageStore::open(config, clock).is_ok());
    // A ConsumeQueue segment of the wrong size fails open() with a message naming it.
    config = tiny_config(root_);
    const fs::path qdir = fs::path(config.consume_queue_dir()) / "Bad" / "0";
    fs::create_directories(qdir);
    std::ofstream(qdir / "00000000000000000000") << "short";
    auto s = MessageStore::open(config, clock);
    ASSERT_FALSE(s.is_ok());
    EXPECT_NE(s.status().message().find("Bad"), std::string::npos) << s.status().to_string();
    fs::remove_all(fs::path(config.consume_queue_dir()) / "Bad");
    // A directory that is not a topic name is ignored.
    fs::create_directories(fs::path(config.consume_queue_dir()) / "not a topic" / "0");
    auto ok = open_store(clock, config);
    ASSERT_NE(ok, nullptr);
    EXPECT_TRUE(ok->consume_queues().queues().empty());
    // Whether or not the CommitLog accepts a topic that cannot be a directory name, dispatch
    // skips it and never stalls.
    (void)put(*ok, make_message("bad/../topic", 0, "x"));
    ASSERT_TRUE(put(*ok, make_message("Good", 0, "y")).ok());
    ASSERT_TRUE(ok->dispatch_now().is_ok());
    EXPECT_EQ(ok->dispatch_behind_bytes(), 0);
    EXPECT_EQ(ok->consume_queues().find("bad/../topic", 0), nullptr);
    EXPECT_EQ(ok->get_max_offset_in_queue("Good", 0).value(), 1);
    ok->shutdown();
}

}  // namespace
}  // namespace comet::store
