// Crash safety of the CommitLog, for SYNC_FLUSH and ASYNC_FLUSH, through the write buffer and
// through the mapping (an ASYNC_FLUSH ack promises the bytes are in the page cache, which a
// process crash does not lose): a forked child puts from 8 threads and reports
// every acknowledged put through a pipe; the parent SIGKILLs it at a random moment, recovers the
// log (abnormal recovery, CRC checked) and checks that every acknowledged message is intact at
// its offset and that every queue is dense with no duplicate. The same store is reused across
// rounds, so each round also recovers from the previous crash and keeps appending after it.
// Bounded: 32 rounds, each child lives at most ~80 ms; the whole test takes a few seconds.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/crc32.h"
#include "base/rng.h"
#include "commit_log_test_util.h"
#include "protocol/message_decoder.h"
#include "store/commit_log.h"
#include "store/mapped_file_allocator.h"
#include "store/store_checkpoint.h"

namespace comet::store {
namespace {

using testing::TempDir;
namespace pm = comet::protocol;

constexpr int kRounds = 32;
constexpr int kWriterThreads = 8;
constexpr int kQueues = 6;
constexpr int kMaxPutsPerThread = 400;  // bounds the log size across rounds

// One acknowledged put, written atomically to the pipe (sizeof < PIPE_BUF).
struct Ack {
    int32_t queue_id;
    int32_t size;
    int64_t queue_offset;
    int64_t phys;
    uint32_t body_crc;
    uint32_t pad;
};

struct CrashMode {
    FlushDiskType flush;
    bool write_buffer;
};

MessageStoreConfig crash_config(const std::string& root, CrashMode mode) {
    MessageStoreConfig c = testing::small_config(root, 256 * 1024);
    c.flush_disk_type = mode.flush;
    if (!mode.write_buffer) {
        c.commit_log_write_buffer_bytes = 0;
    }
    c.check_crc_on_recover = true;
    c.sync_flush_timeout_ms = 5000;
    return c;
}

struct Opened {
    std::unique_ptr<StoreCheckpoint> checkpoint;
    RunningFlags flags;
    std::unique_ptr<CommitLog> log;
    RecoveryResult recovery;
};

// Opens and recovers like a restart after a crash. Returns null on failure (with a message).
std::unique_ptr<Opened> open_after_crash(const MessageStoreConfig& c, Clock* clock,
                                         AllocateMappedFileService* alloc, std::string* err) {
    auto o = std::make_unique<Opened>();
    auto cp = StoreCheckpoint::open(c.checkpoint_path());
    if (!cp.is_ok()) {
        *err = cp.status().to_string();
        return nullptr;
    }
    o->checkpoint = std::move(cp).value();
    auto log = CommitLog::open(c, clock, alloc, o->checkpoint.get(), &o->flags);
    if (!log.is_ok()) {
        *err = log.status().to_string();
        return nullptr;
    }
    o->log = std::move(log).value();
    auto rec = o->log->recover_abnormally();
    if (!rec.is_ok()) {
        *err = rec.status().to_string();
        return nullptr;
    }
    o->recovery = rec.value();
    Status st = o->log->rebuild_topic_queue_table();
    if (!st.is_ok()) {
        *err = st.to_string();
        return nullptr;
    }
    return o;
}

[[noreturn]] void child_main(const MessageStoreConfig& c, int fd, uint64_t seed) {
    AllocateMappedFileService alloc;
    alloc.start();
    std::string err;
    auto o = open_after_crash(c, &SystemClock::instance(), &alloc, &err);
    if (o == nullptr) {
        (void)!::write(2, err.data(), err.size());
        ::_exit(3);
    }
    o->log->start();
    std::vector<std::thread> threads;
    std::atomic<bool> failed{false};
    for (int t = 0; t < kWriterThreads; ++t) {
        threads.emplace_back([&, t] {
            Rng rng(seed * 31 + static_cast<uint64_t>(t));
            for (int i = 0; i < kMaxPutsPerThread && !failed.load(); ++i) {
                auto q = static_cast<int32_t>(rng.uniform(0, kQueues - 1));
                std::string body = fmt::format("s{}-t{}-i{}-", seed, t, i);
                body.append(static_cast<size_t>(rng.uniform(0, 3000)),
                            static_cast<char>('a' + rng.uniform(0, 25)));
                auto r = o->log->put_message(testing::sample_message("Crash", q, body)).get();
                if (!r.ok()) {
                    std::string why = fmt::format("child put failed: {} {}\n",
                                                  put_message_status_name(r.status), r.remark);
                    (void)!::write(2, why.data(), why.size());
                    failed.store(true);
                    break;
                }
                Ack a{q,
                      r.append.wrote_bytes,
                      r.append.logics_offset.value(),
                      r.append.wrote_offset.value(),
                      crc32(body),
                      0};
                if (::write(fd, &a, sizeof(a)) != static_cast<ssize_t>(sizeof(a))) {
                    failed.store(true);
                }
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    ::_exit(failed.load() ? 4 : 0);  // no clean shutdown: the parent treats it as a crash
}

// Reads whole Acks from fd until EOF (returns true) or, on a non-blocking fd, until no more
// bytes are there now (returns false).
bool drain(int fd, std::vector<Ack>* out, std::string* partial) {
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n == 0) {
            return true;
        }
        if (n < 0) {
            return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
        }
        partial->append(buf, static_cast<size_t>(n));
        size_t whole = partial->size() / sizeof(Ack) * sizeof(Ack);
        for (size_t p = 0; p < whole; p += sizeof(Ack)) {
            Ack a;
            std::memcpy(&a, partial->data() + p, sizeof(Ack));
            out->push_back(a);
        }
        partial->erase(0, whole);
    }
}

class CommitLogCrash : public ::testing::TestWithParam<CrashMode> {};

INSTANTIATE_TEST_SUITE_P(Modes, CommitLogCrash,
                         ::testing::Values(CrashMode{FlushDiskType::kSyncFlush, true},
                                           CrashMode{FlushDiskType::kAsyncFlush, true},
                                           CrashMode{FlushDiskType::kSyncFlush, false},
                                           CrashMode{FlushDiskType::kAsyncFlush, false}),
                         [](const ::testing::TestParamInfo<CrashMode>& param_info) {
                             return std::string(param_info.param.flush == FlushDiskType::kSyncFlush
                                                    ? "Sync"
                                                    : "Async") +
                                    (param_info.param.write_buffer ? "WriteBuffer" : "Mapping");
                         });

TEST_P(CommitLogCrash, AcknowledgedMessagesSurviveSigkill) {
    TempDir dir;
    const MessageStoreConfig cfg = crash_config(dir.path(), GetParam());
    const uint64_t seed =
        static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    SCOPED_TRACE(fmt::format("seed {}", seed));
    Rng rng(seed);
    std::vector<Ack> acked;
    int killed_mid_run = 0;
    for (int round = 0; round < kRounds; ++round) {
        int fds[2];
        ASSERT_EQ(::pipe(fds), 0);
        pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            ::close(fds[0]);
            child_main(cfg, fds[1], seed + static_cast<uint64_t>(round));
        }
        ::close(fds[1]);
        // Kill once the child has acknowledged a random number of puts (0: during its open and
        // recovery). The kill point is a count, not a time, so a slow machine moves it nowhere;
        // the child's 8 writers keep putting, so the kill lands with puts in flight. It cannot
        // finish first: the count stays far below its kWriterThreads * kMaxPutsPerThread puts.
        const size_t kill_after = static_cast<size_t>(rng.uniform(0, 200));
        std::vector<Ack> round_acks;
        std::string partial;
        ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
        const auto guard_end = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        bool eof = false;
        while (round_acks.size() < kill_after && !eof &&
               std::chrono::steady_clock::now() < guard_end) {
            pollfd p{fds[0], POLLIN, 0};
            ::poll(&p, 1, 10);
            eof = drain(fds[0], &round_acks, &partial);
        }
        ::kill(pid, SIGKILL);
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        ::fcntl(fds[0], F_SETFL, 0);
        drain(fds[0], &round_acks, &partial);  // acks written before the kill
        ::close(fds[0]);
        if (WIFSIGNALED(status)) {
            ++killed_mid_run;
        } else {
            ASSERT_EQ(WEXITSTATUS(status), 0)
                << "child failed in round " << round << " (3: open/recovery, 4: a put failed)";
        }
        ASSERT_GE(round_acks.size(), kill_after) << "child stalled in round " << round;
        acked.insert(acked.end(), round_acks.begin(), round_acks.end());

        // Recover in the parent and check every acknowledged message so far.
        ManualClock clock;
        std::string err;
        auto o = open_after_crash(cfg, &clock, nullptr, &err);
        ASSERT_NE(o, nullptr) << err;
        for (const Ack& a : acked) {
            auto m = o->log->lookup_message(PhysicalOffset(a.phys));
            ASSERT_TRUE(m.is_ok()) << "round " << round << " lost acked message at " << a.phys
                                   << ": " << m.status().to_string();
            ASSERT_EQ(m.value().store_size, a.size);
            ASSERT_EQ(m.value().queue_id, a.queue_id);
            ASSERT_EQ(m.value().queue_offset, a.queue_offset);
            ASSERT_EQ(crc32(m.value().body), a.body_crc);
            ASSERT_EQ(m.value().body_crc, pm::body_crc32(m.value().body));
        }
        // Every queue is dense (0..n-1, each once) in CommitLog order; bodies are unique.
        std::map<int32_t, int64_t> next;
        // Keyed by the body's unique "s<seed>-t<thread>-i<index>-" prefix: a 32-bit CRC of tens of
        // thousands of bodies collides by chance (birthday bound), the prefix cannot.
        std::set<std::string> bodies;
        Status st = o->log->for_each_record(
            o->log->min_offset(), [&](PhysicalOffset, std::string_view rec) {
                auto m = pm::decode_message(rec, {.read_body = true, .check_crc = true});
                EXPECT_TRUE(m.is_ok());
                if (!m.is_ok()) {
                    return false;
                }
                EXPECT_EQ(m.value().queue_offset, next[m.value().queue_id]++);
                const std::string& b = m.value().body;
                const size_t cut = b.find('-', b.find("-i") + 1);
                EXPECT_TRUE(bodies.insert(b.substr(0, cut)).second)
                    << "duplicate body " << b.substr(0, cut);
                return true;
            });
        ASSERT_TRUE(st.is_ok()) << st.to_string();
        ASSERT_FALSE(::testing::Test::HasFailure()) << "round " << round;
        o->log->shutdown();
    }
    EXPECT_EQ(killed_mid_run, kRounds);  // every child was killed, none ran out of puts
    std::printf("crash test: %d rounds, %d killed mid-run, %zu acknowledged puts verified\n",
                kRounds, killed_mid_run, acked.size());
}

// A tail damaged on disk while the broker is down: truncated mid-record, or a flipped byte in
// the last message. Recovery cuts exactly the damaged record and logs why.
TEST(CommitLogCrashTail, DamagedTailIsCutOnRecovery) {
    for (int damage = 0; damage < 2; ++damage) {
        TempDir dir;
        MessageStoreConfig cfg = crash_config(dir.path(), {FlushDiskType::kSyncFlush, true});
        ManualClock clock;
        int64_t last = 0;
        int32_t last_size = 0;
        std::string path;
        {
            std::string err;
            auto o = open_after_crash(cfg, &clock, nullptr, &err);
            ASSERT_NE(o, nullptr) << err;
            o->log->start();
            for (int i = 0; i < 50; ++i) {
                auto r =
                    o->log
                        ->put_message(testing::sample_message("Tail", i % 3, std::string(500, 'q')))
                        .get();
                ASSERT_TRUE(r.ok());
                last = r.append.wrote_offset.value();
                last_size = r.append.wrote_bytes;
            }
            path = o->log->mapped_file_queue().find_mapped_file_by_offset(last)->file_name();
            o->log->shutdown();
        }
        int fd = ::open(path.c_str(), O_RDWR);
        ASSERT_GE(fd, 0);
        if (damage == 0) {
            // Torn write: the second half of the last record never reached the disk.
            std::string zeros(static_cast<size_t>(last_size / 2), '\0');
            ASSERT_EQ(::pwrite(fd, zeros.data(), zeros.size(), last + last_size / 2),
                      static_cast<ssize_t>(zeros.size()));
        } else {
            char b = 0;
            ASSERT_EQ(::pread(fd, &b, 1, last + last_size - 30), 1);
            b = static_cast<char>(b ^ 0x01);
            ASSERT_EQ(::pwrite(fd, &b, 1, last + last_size - 30), 1);
        }
        ::close(fd);
        std::string err;
        auto o = open_after_crash(cfg, &clock, nullptr, &err);
        ASSERT_NE(o, nullptr) << err;
        EXPECT_EQ(o->log->max_offset().value(), last) << "damage " << damage;
        EXPECT_FALSE(o->recovery.cut_reason.empty());
        EXPECT_EQ(o->log->next_queue_offset("Tail", 49 % 3), QueueOffset(49 / 3));
        EXPECT_TRUE(o->log->lookup_message(PhysicalOffset(last)).status().code() ==
                        Errc::kNotFound ||
                    !o->log->lookup_message(PhysicalOffset(last)).is_ok());
    }
}

}  // namespace
}  // namespace comet::store
