// CommitLog put benchmarks (bench_store).
//
// BM_PutAsync/<body bytes>/<writer threads>/<write buffer>: ASYNC_FLUSH puts, timed until the
// last put has completed (its bytes are in the page cache), reported as msgs/s, next to
// ceilings measured in the same iteration on the same file system. <write buffer> 1: the
// default write path (write buffer + commit thread, commitLogWriteBufferSize 16 MiB); 0: puts
// copy into the mapping (commitLogWriteBufferSize=0, PrefaultService ahead of the writer).
// Ceilings:
//   write4M    sequential write() of the same record bytes in 4 MiB chunks into a file
//              pre-allocated with posix_fallocate (as a CommitLog segment is), no fsync in the
//              timed part (an async-flush put does not wait for the disk either) - the ceiling
//              the 70 % target refers to (docs/benchmarks.md, "Store");
//   write4M_sync  the same plus a final fdatasync (the ceiling used before 2026-11-30 21:30);
//   write1rec  one write() per record into a pre-allocated file, no fsync.
// The put side starts like a running broker's steady state: the segment exists (pre-allocated
// by AllocateMappedFileService, head faulted in as the allocator does for the next segment).
// Also CPU time per message (put threads alone, and all store threads) against the write4M
// ceiling's CPU: wall-time ratios are unreliable on a shared, loaded machine.
// BM_SyncGroupCommit/<writers>: SYNC_FLUSH with that many concurrent writers, each with one
// put in flight; reports puts/s, fsyncs/s and their ratio (group commit factor).
// BM_DispatchRate: one dispatch pass over 200,000 stored records (decode + ConsumeQueue build).
// Files go to $COMET_BENCH_DIR (default: ./comet-bench-store), removed after each iteration.

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "base/clock.h"
#include "protocol/message_decoder.h"
#include "store/commit_log.h"
#include "store/consume_queue_store.h"
#include "store/mapped_file_allocator.h"
#include "store/reput.h"
#include "store/store_checkpoint.h"

namespace comet::store {
namespace {

namespace fs = std::filesystem;
using Clk = std::chrono::steady_clock;
constexpr int64_t kSegment = 256LL * 1024 * 1024;

std::string bench_root() {
    const char* env = std::getenv("COMET_BENCH_DIR");
    return env != nullptr ? env : "comet-bench-store";
}

protocol::MessageExt bench_message(size_t body_size, int32_t queue_id) {
    protocol::MessageExt m;
    m.topic = "BenchTopic";
    m.queue_id = queue_id;
    m.body.assign(body_size, 'b');
    m.born_timestamp = 1'700'000'000'000;
    m.born_host = protocol::HostAddress::ipv4(127, 0, 0, 1, 40000);
    m.set_property("TAGS", "bench");
    m.set_property("UNIQ_KEY", "7F0000010000000000000000000000");
    return m;
}

struct Store {
    MessageStoreConfig config;
    AllocateMappedFileService alloc;
    std::unique_ptr<StoreCheckpoint> checkpoint;
    RunningFlags flags;
    std::unique_ptr<CommitLog> log;
};

std::unique_ptr<Store> open_store(const std::string& dir, FlushDiskType type,
                                  bool write_buffer = true) {
    auto s = std::make_unique<Store>();
    s->config.store_path_root_dir = dir;
    s->config.mapped_file_size_commit_log = kSegment;
    s->config.flush_disk_type = type;
    if (!write_buffer) {
        s->config.commit_log_write_buffer_bytes = 0;
    } else if (const char* b = std::getenv("COMET_BENCH_WRITE_BUFFER")) {
        s->config.commit_log_write_buffer_bytes = std::atoll(b);  // experiments: buffer size
    }
    s->alloc.start();
    s->checkpoint = StoreCheckpoint::open(s->config.checkpoint_path()).value();
    s->log = CommitLog::open(s->config, &SystemClock::instance(), &s->alloc, s->checkpoint.get(),
                             &s->flags)
                 .value();
    (void)s->log->recover_normally().value();
    s->log->start();
    if (type == FlushDiskType::kAsyncFlush && !write_buffer) {
        // Steady state: the segment being written was pre-allocated in the background and
        // its head faulted in (AllocateMappedFileService does this for segment N+1).
        auto file = s->log->mapped_file_queue().get_last_mapped_file(0, true).value();
        (void)file->prefault(0, s->config.commit_log_prefault_ahead_bytes);
    }
    return s;
}

double seconds_since(Clk::time_point t0) {
    return std::chrono::duration<double>(Clk::now() - t0).count();
}

// CPU seconds of the calling thread / of the whole process (user + system). On a shared
// machine wall time depends on what else runs; CPU time per message does much less.
double thread_cpu_seconds() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
double process_cpu_seconds() {
    timespec ts{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Timing {
    double wall = 0;
    double cpu = 0;
};

// Sequential write() of `count` records, `per_call` bytes per call, into a file of
// `file_size` bytes pre-allocated with posix_fallocate (like a CommitLog segment); with
// `sync`, a final fdatasync is timed too.
Timing write_ceiling(const std::string& path, const std::string& record, int64_t count,
                     size_t per_call, int64_t file_size, bool sync) {
    std::string chunk;
    while (chunk.size() + record.size() <= std::max(per_call, record.size())) {
        chunk += record;
    }
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ::posix_fallocate(fd, 0, file_size) != 0) {
        return {-1, -1};
    }
    int64_t recs_per_chunk = static_cast<int64_t>(chunk.size() / record.size());
    const double cpu0 = thread_cpu_seconds();
    auto t0 = Clk::now();
    for (int64_t done = 0; done < count; done += recs_per_chunk) {
        int64_t n = std::min(recs_per_chunk, count - done);
        if (::write(fd, chunk.data(), static_cast<size_t>(n) * record.size()) < 0) {
            break;
        }
    }
    if (sync) {
        ::fdatasync(fd);
    }
    Timing t{seconds_since(t0), thread_cpu_seconds() - cpu0};
    ::close(fd);
    ::unlink(path.c_str());
    return t;
}

void BM_PutAsync(benchmark::State& state) {
    const auto body = static_cast<size_t>(state.range(0));
    const auto threads = static_cast<int>(state.range(1));
    const bool write_buffer = state.range(2) != 0;
    const int64_t total = body <= 256 ? 400'000 : 100'000;
    std::string record;
    (void)protocol::encode_message(bench_message(body, 0), &record);
    double put_s = 0;
    double put_cpu_writers = 0;        // the writer threads' own CPU
    double put_cpu_all = 0;            // the process's CPU during the puts (+ prefault, flush, ...)
    double rounds = 0;                 // commit thread rounds (write buffer)
    std::atomic<int64_t> switches{0};  // writer threads' context switches
    Timing chunk;
    Timing chunk_sync;
    Timing per_rec;
    for (auto _ : state) {
        std::string dir = bench_root() + "/async";
        fs::remove_all(dir);
        auto store = open_store(dir, FlushDiskType::kAsyncFlush, write_buffer);
        std::atomic<int64_t> failures{0};
        std::atomic<int64_t> completed{0};
        std::vector<double> writer_cpu(static_cast<size_t>(threads));
        const double proc0 = process_cpu_seconds();
        auto t0 = Clk::now();
        std::vector<std::thread> ws;
        for (int t = 0; t < threads; ++t) {
            ws.emplace_back([&, t] {
                const double c0 = thread_cpu_seconds();
                auto msg = bench_message(body, t);
                for (int64_t i = 0; i < total / threads; ++i) {
                    store->log->put_message(msg, [&](const PutMessageResult& r) {
                        if (!r.ok()) {
                            failures.fetch_add(1);
                        }
                        completed.fetch_add(1, std::memory_order_release);
                    });
                }
                writer_cpu[static_cast<size_t>(t)] = thread_cpu_seconds() - c0;
                rusage ru{};
                ::getrusage(RUSAGE_THREAD, &ru);
                switches.fetch_add(ru.ru_nvcsw + ru.ru_nivcsw);
            });
        }
        for (auto& w : ws) {
            w.join();
        }
        const int64_t expected = (total / threads) * threads;
        for (auto deadline = Clk::now() + std::chrono::seconds(60);
             completed.load(std::memory_order_acquire) < expected && Clk::now() < deadline;) {
            // Sleep, not yield: this thread must not take CPU from the commit thread.
            std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
        double s = seconds_since(t0);
        if (completed.load() < expected) {
            state.SkipWithError("puts did not complete within 60 s");
            return;
        }
        put_cpu_all += process_cpu_seconds() - proc0;
        for (double c : writer_cpu) {
            put_cpu_writers += c;
        }
        put_s += s;
        rounds += static_cast<double>(store->log->commit_rounds());
        state.SetIterationTime(s);
        store->log->shutdown();
        store.reset();
        fs::remove_all(dir);
        if (failures.load() != 0) {
            state.SkipWithError("puts failed");
            return;
        }
        fs::create_directories(bench_root());
        const std::string path = bench_root() + "/ceiling";
        for (auto [acc, per_call, sync] : {std::tuple{&chunk, size_t{4} << 20, false},
                                           std::tuple{&chunk_sync, size_t{4} << 20, true},
                                           std::tuple{&per_rec, size_t{0}, false}}) {
            const Timing t = write_ceiling(path, record, total, per_call, kSegment, sync);
            acc->wall += t.wall;
            acc->cpu += t.cpu;
        }
    }
    const double n = static_cast<double>(total) * static_cast<double>(state.iterations());
    state.SetItemsProcessed(static_cast<int64_t>(n));
    state.counters["record_bytes"] = static_cast<double>(record.size());
    state.counters["msgs_per_commit"] = rounds > 0 ? n / rounds : 0;
    state.counters["writer_switches_per_1k_msgs"] = static_cast<double>(switches.load()) * 1000 / n;
    state.counters["put_msgs_per_s"] = n / put_s;
    state.counters["write4M_msgs_per_s"] = n / chunk.wall;
    state.counters["write4M_sync_msgs_per_s"] = n / chunk_sync.wall;
    state.counters["write1rec_msgs_per_s"] = n / per_rec.wall;
    state.counters["ratio_vs_write4M"] = chunk.wall / put_s;
    state.counters["ratio_vs_write4M_sync"] = chunk_sync.wall / put_s;
    state.counters["ratio_vs_write1rec"] = per_rec.wall / put_s;
    // CPU per message (ns) and CPU-based ratios: robust on a loaded machine. "writers" is the
    // put threads' own CPU; "all" adds every store thread (prefault, flush, allocator).
    state.counters["cpu_ns_put_writers"] = put_cpu_writers * 1e9 / n;
    state.counters["cpu_ns_put_all"] = put_cpu_all * 1e9 / n;
    state.counters["cpu_ns_write4M"] = chunk.cpu * 1e9 / n;
    state.counters["cpu_ratio_writers_vs_write4M"] = chunk.cpu / put_cpu_writers;
    state.counters["cpu_ratio_all_vs_write4M"] = chunk.cpu / put_cpu_all;
}
BENCHMARK(BM_PutAsync)
    ->ArgNames({"body", "threads", "wbuf"})
    ->Args({128, 1, 1})
    ->Args({128, 4, 1})
    ->Args({1024, 1, 1})
    ->Args({1024, 4, 1})
    ->Args({1024, 1, 0})
    ->Args({1024, 4, 0})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

void BM_SyncGroupCommit(benchmark::State& state) {
    const auto writers = static_cast<int>(state.range(0));
    const auto duration = std::chrono::seconds(2);
    int64_t puts = 0;
    int64_t fsyncs = 0;
    double secs = 0;
    for (auto _ : state) {
        std::string dir = bench_root() + "/sync";
        fs::remove_all(dir);
        auto store = open_store(dir, FlushDiskType::kSyncFlush);
        int64_t fsync_before = store->log->flush_service().fsync_count();
        std::atomic<int64_t> done{0};
        std::atomic<int64_t> failures{0};
        auto t0 = Clk::now();
        auto stop_at = t0 + duration;
        std::vector<std::thread> ws;
        for (int t = 0; t < writers; ++t) {
            ws.emplace_back([&, t] {
                auto msg = bench_message(1024, t % 8);
                while (Clk::now() < stop_at) {
                    auto r = store->log->put_message(msg).get();
                    if (!r.ok()) {
                        failures.fetch_add(1);
                        return;
                    }
                    done.fetch_add(1);
                }
            });
        }
        for (auto& w : ws) {
            w.join();
        }
        double s = seconds_since(t0);
        state.SetIterationTime(s);
        secs += s;
        puts += done.load();
        fsyncs += store->log->flush_service().fsync_count() - fsync_before;
        store->log->shutdown();
        store.reset();
        fs::remove_all(dir);
        if (failures.load() != 0) {
            state.SkipWithError("puts failed");
            return;
        }
    }
    state.SetItemsProcessed(puts);
    state.counters["puts_per_s"] = static_cast<double>(puts) / secs;
    state.counters["fsyncs_per_s"] = static_cast<double>(fsyncs) / secs;
    state.counters["puts_per_fsync"] =
        fsyncs > 0 ? static_cast<double>(puts) / static_cast<double>(fsyncs) : 0;
}
BENCHMARK(BM_SyncGroupCommit)
    ->Arg(1)
    ->Arg(64)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// Dispatch alone: 200,000 records (256-byte bodies, TAGS + KEYS + UNIQ_KEY, 8 queues) are put
// first; then one ReputMessageService pass decodes every record and builds the ConsumeQueues.
// Reports records/s and CPU ns per record of that pass (decoder + ConsumeQueue write).
class LogReader final : public CommitLogReader {
public:
    explicit LogReader(const CommitLog& log) : log_(log) {}
    PhysicalOffset dispatchable_max_offset() const override { return log_.max_offset(); }
    std::optional<MappedView> read_from(PhysicalOffset offset) const override {
        return log_.get_data(offset);
    }
    PhysicalOffset roll_next_file(PhysicalOffset offset) const override {
        return log_.roll_next_file(offset);
    }
    PhysicalOffset min_offset() const override { return log_.min_offset(); }

private:
    const CommitLog& log_;
};

void BM_DispatchRate(benchmark::State& state) {
    constexpr int64_t kRecords = 200'000;
    double secs = 0;
    double cpu = 0;
    for (auto _ : state) {
        std::string dir = bench_root() + "/dispatch";
        fs::remove_all(dir);
        auto store = open_store(dir, FlushDiskType::kAsyncFlush);
        std::atomic<int64_t> stored{0};
        for (int64_t i = 0; i < kRecords; ++i) {
            auto m = bench_message(256, static_cast<int32_t>(i % 8));
            m.set_property("KEYS", "order-" + std::to_string(i));
            store->log->put_message(m, [&stored](const PutMessageResult& r) {
                stored.fetch_add(r.ok() ? 1 : 0, std::memory_order_release);
            });
        }
        // Puts complete once the commit thread wrote them: dispatch only what is published.
        for (auto deadline = Clk::now() + std::chrono::seconds(30);
             stored.load(std::memory_order_acquire) < kRecords && Clk::now() < deadline;) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        ConsumeQueueStore cqs(dir + "/consumequeue", 300'000LL * 20, &store->alloc);
        if (!cqs.load().is_ok()) {
            state.SkipWithError("consumequeue load failed");
            return;
        }
        LogReader reader(*store->log);
        ReputMessageService reput(
            reader, [&](const DispatchRequest& req) { return cqs.put_message_position_info(req); },
            parse_message_delay_level(kDefaultMessageDelayLevel));
        const double c0 = thread_cpu_seconds();
        const auto t0 = Clk::now();
        auto r = reput.do_reput();
        secs += seconds_since(t0);
        cpu += thread_cpu_seconds() - c0;
        state.SetIterationTime(seconds_since(t0));
        if (!r.is_ok() || *r != kRecords) {
            state.SkipWithError("dispatch failed");
            return;
        }
        store->log->shutdown();
        store.reset();
        fs::remove_all(dir);
    }
    const double n = static_cast<double>(kRecords) * static_cast<double>(state.iterations());
    state.counters["records_per_s"] = n / secs;
    state.counters["cpu_ns_per_record"] = cpu * 1e9 / n;
}
BENCHMARK(BM_DispatchRate)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace comet::store

BENCHMARK_MAIN();
