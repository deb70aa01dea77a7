// Crash safety of the whole store: a forked child runs a MessageStore and puts messages from two
// threads, reporting every acknowledged (queue, queue offset, physical offset, id) on a pipe; the
// parent SIGKILLs it at a random moment, reopens the store (abnormal recovery: abort file left
// behind) and checks that every acknowledged message is readable through its ConsumeQueue at
// the acknowledged offset, that every queue is dense, and that new puts continue the offsets.
#include <gtest/gtest.h>
#include <signal.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "base/rng.h"
#include "message_store_test_util.h"
#include "protocol/message_decoder.h"
#include "store/message_store.h"

namespace comet::store {
namespace {

using testing::make_message;
using testing::tiny_config;

struct Ack {
    int32_t queue_id;
    int32_t id;
    int64_t queue_offset;
    int64_t phy_offset;
};

MessageStoreConfig crash_config(const std::string& root) {
    auto c = tiny_config(root);
    c.mapped_file_size_commit_log = 16 * 1024;
    c.mapped_file_size_consume_queue = 64 * 20;
    return c;
}

[[noreturn]] void run_child(const std::string& root, int fd, int first_id) {
    ManualClock clock;
    MessageStoreOptions options;
    options.start_scheduler = false;
    auto opened = MessageStore::open(crash_config(root), clock, options);
    if (!opened.is_ok()) {
        ::_exit(3);
    }
    auto store = std::move(opened).value();
    store->start();
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0;; ++i) {
                const int id = first_id + i * 2 + t;
                auto r = store->put_message(make_message("K", id % 4, "m" + std::to_string(id)))
                             .get();
                if (!r.ok()) {
                    ::_exit(4);
                }
                const Ack a{id % 4, id, r.append.logics_offset.value(),
                            r.append.wrote_offset.value()};
                if (::write(fd, &a, sizeof(a)) != static_cast<ssize_t>(sizeof(a))) {
                    ::_exit(5);
                }
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    ::_exit(0);
}

class MessageStoreCrashTest : public testing::StoreDirTest {};

TEST_F(MessageStoreCrashTest, AcknowledgedMessagesSurviveSigkill) {
    Rng rng(20261130);
    std::map<std::pair<int32_t, int64_t>, Ack> acked;  // (queue, offset) -> ack
    int next_id = 0;
    for (int round = 0; round < 6; ++round) {
        int fds[2];
        ASSERT_EQ(::pipe(fds), 0);
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            ::close(fds[0]);
            run_child(root_, fds[1], next_id);
        }
        ::close(fds[1]);
        // Wait (at most 20 s) for the child's first acknowledgement, then kill it at a random
        // moment while it keeps putting.
        Ack a{};
        int got_acks = 0;
        pollfd pfd{fds[0], POLLIN, 0};
        const bool started = ::poll(&pfd, 1, 20000) == 1 &&
                             ::read(fds[0], &a, sizeof(a)) == static_cast<ssize_t>(sizeof(a));
        std::this_thread::sleep_for(std::chrono::milliseconds(rng.uniform(5, 60)));
        ::kill(pid, SIGKILL);
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(started) << "child never acknowledged a put";
        ASSERT_TRUE(WIFSIGNALED(status)) << "child exited early with " << WEXITSTATUS(status);
        bool have = true;
        while (have || ::read(fds[0], &a, sizeof(a)) == static_cast<ssize_t>(sizeof(a))) {
            have = false;
            EXPECT_TRUE(acked.emplace(std::make_pair(a.queue_id, a.queue_offset), a).second)
                << "offset acknowledged twice: queue " << a.queue_id << " @" << a.queue_offset;
            next_id = std::max(next_id, a.id + 1);
            ++got_acks;
        }
        ::close(fds[0]);
        next_id += 2;  // ids of puts in flight at the kill are never reused

        ManualClock clock;
        auto store = open_store(clock, crash_config(root_));
        ASSERT_NE(store, nullptr);
        EXPECT_FALSE(store->last_exit_ok());
        for (const auto& [key, ack] : acked) {
            const auto& [q, off] = key;
            auto got = store->get_message("g", "K", q, QueueOffset(off), 1, 0, nullptr);
            ASSERT_EQ(got.status, GetMessageStatus::kFound)
                << "round " << round << " queue " << q << " @" << off << ": "
                << get_message_status_name(got.status);
            auto m = protocol::decode_message(got.messages[0].bytes(),
                                              {.read_body = true, .check_crc = true});
            ASSERT_TRUE(m.is_ok());
            EXPECT_EQ(m->body, "m" + std::to_string(ack.id));
            EXPECT_EQ(m->commit_log_offset, ack.phy_offset);
        }
        // Dense: every unit of every queue holds the message stored at that queue offset.
        for (int q = 0; q < 4; ++q) {
            const int64_t max = store->get_max_offset_in_queue("K", q).value();
            for (int64_t off = 0; off < max;) {
                auto got = store->get_message("g", "K", q, QueueOffset(off), 32, 0, nullptr);
                ASSERT_EQ(got.status, GetMessageStatus::kFound);
                for (int k = 0; k < got.message_count(); ++k) {
                    auto m = protocol::decode_message(got.messages[k].bytes(), {.read_body = false});
                    ASSERT_TRUE(m.is_ok());
                    ASSERT_EQ(m->queue_offset, off + k);
                }
                off = got.next_begin_offset.value();
            }
        }
        // New puts continue right after the recovered ends (units of unacknowledged but
        // stored messages count: they were written before the kill).
        const int64_t max0 = store->get_max_offset_in_queue("K", 0).value();
        const int after_id = next_id;
        next_id += 2;
        auto r = put(*store, make_message("K", 0, "m" + std::to_string(after_id)));
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(r.append.logics_offset.value(), max0);
        acked.emplace(std::make_pair(0, max0), Ack{0, after_id, max0, r.append.wrote_offset.value()});
        store->halt_for_test();  // leave `abort` behind: the next round recovers abnormally too
        GTEST_LOG_(INFO) << "round " << round << ": " << got_acks << " acks, " << acked.size()
                         << " total";
    }
}

}  // namespace
}  // namespace comet::store

namespace comet::store {
namespace {

// CommitLog truncation (DLedger and controller mode: MessageStore::truncate_log) zeroes the cut
// segment from the cut, then deletes later segments newest first. A kill can stop it after any
// of those steps, or in the middle of the zeroing; each such state, recovered abnormally, must
// give a consistent prefix: the whole old log (nothing done yet) or exactly the cut, with every
// record below it readable and the ConsumeQueues cut to match.
TEST_F(MessageStoreCrashTest, AKillAtAnyPointOfATruncationRecoversToAConsistentPrefix) {
    namespace fs = std::filesystem;
    ManualClock clock;
    struct Rec {
        int64_t start;
        int64_t end;
        int32_t queue;
    };
    std::vector<Rec> recs;
    const MessageStoreConfig cfg = crash_config(root_);
    const int64_t seg = cfg.mapped_file_size_commit_log;
    {
        auto store = open_store(clock, cfg);
        ASSERT_NE(store, nullptr);
        for (int i = 0; recs.empty() || recs.back().end < 3 * seg + seg / 2; ++i) {
            auto r = put(*store, make_message("K", i % 4, "m" + std::to_string(i) +
                                                              std::string(300, 'x')));
            ASSERT_TRUE(r.ok());
            recs.push_back({r.append.wrote_offset.value(), r.append.end_offset().value(), i % 4});
        }
        ASSERT_TRUE(store->dispatch_now().is_ok());
        store->shutdown();
    }
    const int64_t old_end = recs.back().end;
    // Cut at a record start in the second segment: segment 1 is cut, segments 2 and 3 go.
    size_t cut_index = 0;
    while (recs[cut_index].start < seg + seg / 3) {
        ++cut_index;
    }
    const int64_t cut = recs[cut_index].start;
    const std::string log_dir = root_ + "/commitlog";
    auto seg_path = [&](int64_t base) {
        char name[32];
        std::snprintf(name, sizeof(name), "%020lld", static_cast<long long>(base));
        return log_dir + "/" + name;
    };
    auto zero = [&](int64_t from, int64_t to) {
        const int64_t base = from / seg * seg;
        std::fstream f(seg_path(base), std::ios::in | std::ios::out | std::ios::binary);
        ASSERT_TRUE(f.is_open());
        f.seekp(from - base);
        const std::string zeros(static_cast<size_t>(to - from), '\0');
        f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
    };
    const std::string pristine = root_ + ".pristine";
    fs::remove_all(pristine);
    fs::copy(root_, pristine, fs::copy_options::recursive);

    // Steps of truncate_to(cut), stopped after `done` of them (a kill).
    const int64_t seg1_end = 2 * seg;
    std::vector<std::function<void()>> steps = {
        [&] { zero(cut, cut + (seg1_end - cut) / 2); },  // torn: half the tail zeroed
        [&] { zero(cut, seg1_end); },
    };
    std::vector<std::string> later;  // every segment after the cut one (preallocated included)
    for (const auto& e : fs::directory_iterator(log_dir)) {
        if (std::stoll(e.path().filename().string()) >= seg1_end) {
            later.push_back(e.path().string());
        }
    }
    std::sort(later.rbegin(), later.rend());  // newest first, as truncate_dirty_files
    ASSERT_GE(later.size(), 2u);
    for (const std::string& path : later) {
        steps.push_back([path] { fs::remove(path); });
    }
    for (size_t done = 0; done <= steps.size(); ++done) {
        fs::remove_all(root_);
        fs::copy(pristine, root_, fs::copy_options::recursive);
        for (size_t k = 0; k < done; ++k) {
            steps[k]();
        }
        { std::ofstream abort_file(cfg.abort_file_path()); }  // killed: no clean shutdown
        auto store = open_store(clock, cfg);
        ASSERT_NE(store, nullptr) << "after " << done << " steps";
        EXPECT_FALSE(store->last_exit_ok());
        const int64_t end = store->get_max_phy_offset().value();
        EXPECT_EQ(end, done == 0 ? old_end : cut) << "after " << done << " steps";
        store->check_invariants();
        std::map<int32_t, int64_t> per_queue;
        for (size_t i = 0; i < recs.size() && recs[i].end <= end; ++i) {
            auto m = store->look_message_by_offset(PhysicalOffset(recs[i].start));
            ASSERT_TRUE(m.is_ok()) << "record " << i << " after " << done << " steps";
            EXPECT_EQ(m->body.rfind("m" + std::to_string(i) + "x", 0), 0u);
            ++per_queue[recs[i].queue];
        }
        for (int q = 0; q < 4; ++q) {
            EXPECT_EQ(store->get_max_offset_in_queue("K", q).value(), per_queue[q])
                << "queue " << q << " after " << done << " steps";
        }
        auto r = put(*store, make_message("K", 0, "next"));
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(r.append.logics_offset.value(), per_queue[0]);
        store->shutdown();
    }
    fs::remove_all(pristine);
}

}  // namespace
}  // namespace comet::store
