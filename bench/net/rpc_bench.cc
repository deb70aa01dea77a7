// Request/response round trips over loopback through RemotingServer and RemotingClient, with
// 1 and 64 requests in flight and a 1 KiB body. items_per_second = round trips per second.
// Run: build/<dir>/bench/bench_net --benchmark_filter=RoundTrip

#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include <condition_variable>
#include <mutex>

#include "net/remoting_client.h"
#include "net/remoting_server.h"

namespace comet::net {
namespace {

using namespace std::chrono_literals;
using protocol::RemotingCommand;

constexpr int32_t kEcho = 7201;

void BM_RoundTrip(benchmark::State& state) {
    const int in_flight = static_cast<int>(state.range(0));
    spdlog::set_level(spdlog::level::warn);
    RemotingServerConfig sc;
    sc.listen_host = "127.0.0.1";
    sc.io_threads = 1;
    sc.name = "BenchServer";
    RemotingServer server(sc);
    server.register_processor(
        kEcho, make_processor([](const ConnectionPtr&, RemotingCommand req, Responder respond) {
            auto response = RemotingCommand::response_to(req, 0);
            response.body = std::move(req.body);
            respond(std::move(response));
        }),
        std::make_shared<ThreadPoolExecutor>("BenchProc", 2));
    if (!server.start().is_ok()) {
        state.SkipWithError("server did not start");
        return;
    }
    RemotingClient client;
    client.start();
    const std::string addr = "127.0.0.1:" + std::to_string(server.port());
    auto request = RemotingCommand::request(kEcho);
    request.set_ext("topic", "BenchTopic");
    request.body.assign(1024, 'x');
    if (!client.invoke_sync(addr, request, 5s).is_ok()) {
        state.SkipWithError("warm-up request failed");
        return;
    }

    std::mutex mu;
    std::condition_variable cv;
    int64_t failures = 0;
    for (auto _ : state) {
        int remaining = in_flight;
        for (int i = 0; i < in_flight; ++i) {
            client.invoke_async(addr, request, 10s, [&](Result<RemotingCommand> r) {
                std::lock_guard<std::mutex> lock(mu);
                if (!r.is_ok() || r->body.size() != 1024) {
                    ++failures;
                }
                if (--remaining == 0) {
                    cv.notify_one();
                }
            });
        }
        std::unique_lock<std::mutex> lock(mu);
        if (!cv.wait_for(lock, 30s, [&] { return remaining == 0; })) {
            state.SkipWithError("requests did not complete within 30 s");
            break;
        }
    }
    state.SetItemsProcessed(state.iterations() * in_flight);
    state.counters["failures"] = static_cast<double>(failures);
    client.shutdown();
    server.shutdown();
}
BENCHMARK(BM_RoundTrip)->Arg(1)->Arg(64)->ArgName("in_flight")->UseRealTime()->MinTime(1.0);

}  // namespace
}  // namespace comet::net

BENCHMARK_MAIN();
