// MessageStore get-path and dispatch benchmarks (bench_store; main() is in commit_log_bench.cc).
//
// BM_GetFullScan/<body bytes>: 100 000 messages in 4 queues are stored and dispatched once; each
// iteration reads every queue from offset 0 to the end with get_message (32 per call, zero-copy
// views) and touches the first byte of every record. Reported as msgs/s.
// BM_DispatchLagUnderLoad/<writers>: that many threads put 256-byte messages (ASYNC_FLUSH) for
// ~2 s while the bench thread samples dispatch_behind_bytes every 200 us. Reports puts/s and the
// mean / max lag in bytes, plus the time to drain after the load stops.
// BM_NewQueueVisible: 40 sends, each to a queue that does not exist yet (new topic); for each,
// the time from the put's acknowledgement until get_max_offset_in_queue shows the message (the
// ConsumeQueue exists and holds its unit). Reports mean / p50 / max in ms, and the p50 of a
// second send to each (now existing) queue: the floor without queue creation. Also the p50
// send -> ack time of both kinds of sends (a new queue's ConsumeQueue is created before the
// ack since 2026-11-30).
// Files go to $COMET_BENCH_DIR (default ./comet-bench-store).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "store/message_store.h"

namespace comet::store {
namespace {

namespace fs = std::filesystem;

std::string get_bench_root(const std::string& name) {
    const char* env = std::getenv("COMET_BENCH_DIR");
    return std::string(env != nullptr ? env : "comet-bench-store") + "/" + name;
}

MessageStoreConfig get_bench_config(const std::string& root) {
    MessageStoreConfig c;
    c.store_path_root_dir = root;
    c.mapped_file_size_commit_log = 64LL * 1024 * 1024;
    c.mapped_file_size_consume_queue = 300000LL * 20;
    c.max_hash_slot_num = 100000;
    c.max_index_num = 400000;
    return c;
}

protocol::MessageExt get_bench_message(size_t body, int32_t queue_id, int i) {
    protocol::MessageExt m;
    m.topic = "GetBench";
    m.queue_id = queue_id;
    m.body.assign(body, 'g');
    m.born_timestamp = 1'700'000'000'000;
    m.born_host = protocol::HostAddress::ipv4(127, 0, 0, 1, 40000);
    m.properties.set("TAGS", "t");
    m.properties.set("KEYS", "k" + std::to_string(i));
    return m;
}

void BM_GetFullScan(benchmark::State& state) {
    const auto body = static_cast<size_t>(state.range(0));
    const std::string root = get_bench_root("getscan");
    fs::remove_all(root);
    constexpr int kMessages = 100000;
    constexpr int kQueues = 4;
    auto opened = MessageStore::open(get_bench_config(root), SystemClock::instance(),
                                     {.disk_probe = nullptr, .start_scheduler = false});
    if (!opened.is_ok()) {
        state.SkipWithError(opened.status().to_string().c_str());
        return;
    }
    auto store = std::move(opened).value();
    store->start();
    std::vector<std::future<PutMessageResult>> pending;
    for (int i = 0; i < kMessages; ++i) {
        pending.push_back(store->put_message(get_bench_message(body, i % kQueues, i)));
        if (pending.size() >= 1024) {
            for (auto& f : pending) {
                f.get();
            }
            pending.clear();
        }
    }
    for (auto& f : pending) {
        f.get();
    }
    while (store->dispatch_behind_bytes() > 0) {
        (void)store->dispatch_now();
    }
    int64_t read = 0;
    uint64_t sink = 0;
    for (auto _ : state) {
        for (int q = 0; q < kQueues; ++q) {
            int64_t off = 0;
            const int64_t max = store->get_max_offset_in_queue("GetBench", q).value();
            while (off < max) {
                auto got = store->get_message("bench", "GetBench", q, QueueOffset(off), 32, 0,
                                              nullptr);
                if (got.status != GetMessageStatus::kFound) {
                    state.SkipWithError("get did not find a message");
                    return;
                }
                for (const auto& v : got.messages) {
                    sink += v.data[0];
                }
                read += got.message_count();
                off = got.next_begin_offset.value();
            }
        }
    }
    benchmark::DoNotOptimize(sink);
    state.SetItemsProcessed(read);
    state.counters["msgs/s"] = benchmark::Counter(static_cast<double>(read),
                                                  benchmark::Counter::kIsRate);
    store->shutdown();
    store.reset();
    fs::remove_all(root);
}
BENCHMARK(BM_GetFullScan)->Arg(128)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_DispatchLagUnderLoad(benchmark::State& state) {
    const int writers = static_cast<int>(state.range(0));
    const std::string root = get_bench_root("lag");
    for (auto _ : state) {
        fs::remove_all(root);
        auto opened = MessageStore::open(get_bench_config(root), SystemClock::instance());
        if (!opened.is_ok()) {
            state.SkipWithError(opened.status().to_string().c_str());
            return;
        }
        auto store = std::move(opened).value();
        store->start();
        std::atomic<bool> stop{false};
        std::atomic<int64_t> puts{0};
        std::vector<std::thread> threads;
        const auto begin = std::chrono::steady_clock::now();
        for (int w = 0; w < writers; ++w) {
            threads.emplace_back([&, w] {
                int i = 0;
                while (!stop.load(std::memory_order_relaxed)) {
                    std::vector<std::future<PutMessageResult>> batch;
                    for (int k = 0; k < 64; ++k, ++i) {
                        batch.push_back(
                            store->put_message(get_bench_message(256, (w + k) % 8, i)));
                    }
                    for (auto& f : batch) {
                        if (f.get().ok()) {
                            puts.fetch_add(1, std::memory_order_relaxed);
                        }
                    }
                }
            });
        }
        int64_t samples = 0;
        double sum = 0;
        int64_t max_lag = 0;
        while (std::chrono::steady_clock::now() - begin < std::chrono::seconds(2)) {
            const int64_t lag = store->dispatch_behind_bytes();
            sum += static_cast<double>(lag);
            max_lag = std::max(max_lag, lag);
            ++samples;
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        stop = true;
        for (auto& t : threads) {
            t.join();
        }
        const auto load_end = std::chrono::steady_clock::now();
        while (store->dispatch_behind_bytes() > 0 &&
               std::chrono::steady_clock::now() - load_end < std::chrono::seconds(10)) {
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
        const double drain_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_end)
                .count();
        const double secs =
            std::chrono::duration<double>(load_end - begin).count();
        state.counters["puts/s"] = static_cast<double>(puts.load()) / secs;
        state.counters["lag_mean_bytes"] = samples > 0 ? sum / static_cast<double>(samples) : 0;
        state.counters["lag_max_bytes"] = static_cast<double>(max_lag);
        state.counters["drain_ms"] = drain_ms;
        store->shutdown();
    }
    fs::remove_all(root);
}
BENCHMARK(BM_DispatchLagUnderLoad)->Arg(1)->Arg(4)->Iterations(1)->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_NewQueueVisible(benchmark::State& state) {
    using Clk = std::chrono::steady_clock;
    const std::string root = get_bench_root("newqueue");
    constexpr int kQueues = 40;
    for (auto _ : state) {
        fs::remove_all(root);
        auto opened = MessageStore::open(get_bench_config(root), SystemClock::instance());
        if (!opened.is_ok()) {
            state.SkipWithError(opened.status().to_string().c_str());
            return;
        }
        auto store = std::move(opened).value();
        store->start();
        // Sends one message to queue 0 of topic `topic` and returns the ms from its ack until
        // get_max_offset_in_queue reaches `want`.
        std::vector<double> put_ms;  // send -> ack, new queues then existing ones
        auto ack_to_visible = [&](const std::string& topic, int64_t want, int i) -> double {
            auto m = get_bench_message(256, 0, i);
            m.topic = topic;
            const auto sent = Clk::now();
            if (!store->put_message(std::move(m)).get().ok()) {
                return -1;
            }
            const auto acked = Clk::now();
            put_ms.push_back(std::chrono::duration<double, std::milli>(acked - sent).count());
            while (store->get_max_offset_in_queue(topic, 0).value() < want &&
                   Clk::now() - acked < std::chrono::seconds(5)) {
                std::this_thread::yield();
            }
            return std::chrono::duration<double, std::milli>(Clk::now() - acked).count();
        };
        std::vector<double> ms;
        std::vector<double> existing;
        for (int q = 0; q < kQueues; ++q) {
            ms.push_back(ack_to_visible("NewQueue" + std::to_string(q), 1, q));
        }
        // The same queues again: the floor (wake-up + dispatch of one record, no creation).
        for (int q = 0; q < kQueues; ++q) {
            existing.push_back(ack_to_visible("NewQueue" + std::to_string(q), 2, q));
        }
        if (*std::min_element(ms.begin(), ms.end()) < 0 ||
            *std::min_element(existing.begin(), existing.end()) < 0) {
            state.SkipWithError("put failed");
            return;
        }
        store->shutdown();
        std::sort(ms.begin(), ms.end());
        double sum = 0;
        for (double v : ms) {
            sum += v;
        }
        state.counters["visible_mean_ms"] = sum / static_cast<double>(ms.size());
        state.counters["visible_p50_ms"] = ms[ms.size() / 2];
        state.counters["visible_max_ms"] = ms.back();
        std::sort(existing.begin(), existing.end());
        std::sort(put_ms.begin(), put_ms.begin() + kQueues);
        std::sort(put_ms.begin() + kQueues, put_ms.end());
        state.counters["new_queue_put_p50_ms"] = put_ms[kQueues / 2];
        state.counters["existing_queue_put_p50_ms"] = put_ms[kQueues + kQueues / 2];
        state.counters["existing_queue_p50_ms"] = existing[existing.size() / 2];
    }
    fs::remove_all(root);
}
BENCHMARK(BM_NewQueueVisible)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace comet::store
