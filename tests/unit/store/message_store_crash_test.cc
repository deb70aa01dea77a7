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

#include <chrono>
#include <cstring>
#include <map>
#include <thread>

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
