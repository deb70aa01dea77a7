// RemotingClient: timeouts, dropped connections, connect failures, reconnects, shutdown.

#include "net/remoting_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <future>
#include <thread>
#include <vector>

#include "net/remoting_server.h"
#include "net_test_helper.h"

namespace comet::net {
namespace {

using namespace std::chrono_literals;
using protocol::RemotingCommand;
using testing::Latch;
using testing::make_request;

constexpr int32_t kClientEcho = 7101;
constexpr int32_t kClientHold = 7102;

// A server with an echo processor and a processor that keeps its Responders (answers later, or
// never: a long poll, or a lost request).
class RemotingClientTest : public ::testing::Test {
protected:
    void SetUp() override {
        RemotingServerConfig sc;
        sc.listen_host = "127.0.0.1";
        sc.io_threads = 1;
        sc.name = "CliTestSrv";
        server_ = std::make_unique<RemotingServer>(sc);
        auto pool = std::make_shared<ThreadPoolExecutor>("CliTestProc", 2);
        server_->register_processor(
            kClientEcho, make_processor([](const ConnectionPtr&, RemotingCommand req, Responder r) {
                auto response = RemotingCommand::response_to(req, 0);
                response.body = std::move(req.body);
                r(std::move(response));
            }),
            pool);
        server_->register_processor(
            kClientHold, make_processor([this](const ConnectionPtr&, RemotingCommand, Responder r) {
                std::lock_guard<std::mutex> lock(held_mu_);
                held_.push_back(std::move(r));
                held_count_.fetch_add(1);
            }),
            pool);
        ASSERT_TRUE(server_->start().is_ok());
        addr_ = "127.0.0.1:" + std::to_string(server_->port());
        client_.start();
    }

    void TearDown() override {
        client_.shutdown();
        {
            std::lock_guard<std::mutex> lock(held_mu_);
            held_.clear();
        }
        server_->shutdown();
    }

    bool wait_held(int n) {
        for (int i = 0; i < 30000 && held_count_.load() < n; ++i) {
            std::this_thread::sleep_for(1ms);
        }
        return held_count_.load() >= n;
    }

    std::unique_ptr<RemotingServer> server_;
    RemotingClient client_;
    std::string addr_;
    std::mutex held_mu_;
    std::vector<Responder> held_;
    std::atomic<int> held_count_{0};
};

TEST_F(RemotingClientTest, InvokeSyncRoundTrip) {
    auto r = client_.invoke_sync(addr_, make_request(kClientEcho, "k", "hello"), 5s);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_TRUE(r->is_response());
    EXPECT_EQ(r->body, "hello");
    EXPECT_EQ(client_.connection_count(), 1u);
}

TEST_F(RemotingClientTest, LargeAndSmallFramesPipelinedKeepEveryByte) {
    // Responses of 1.5 MiB between small ones, all in flight at once: the read buffer grows
    // for each large frame with the start of the next frames already in it, and shrinks after.
    // Its new bytes are not zeroed, so every body is checked byte for byte.
    constexpr int kRequests = 24;
    std::vector<std::string> bodies;
    for (int i = 0; i < kRequests; ++i) {
        const size_t size = i % 3 == 1 ? (3u << 19) + static_cast<size_t>(i) : 100u + i;
        std::string b(size, '\0');
        for (size_t k = 0; k < size; ++k) {
            b[k] = static_cast<char>(k * 131 + static_cast<size_t>(i));
        }
        bodies.push_back(std::move(b));
    }
    std::vector<std::promise<Result<RemotingCommand>>> done(kRequests);
    for (int i = 0; i < kRequests; ++i) {
        client_.invoke_async(addr_, make_request(kClientEcho, "n", bodies[i]), 20s,
                             [&done, i](Result<RemotingCommand> r) { done[i].set_value(std::move(r)); });
    }
    for (int i = 0; i < kRequests; ++i) {
        auto f = done[i].get_future();
        ASSERT_EQ(f.wait_for(30s), std::future_status::ready) << i;
        auto r = f.get();
        ASSERT_TRUE(r.is_ok()) << i << ": " << r.status().to_string();
        EXPECT_TRUE(r->body == bodies[i]) << "body " << i << " of " << bodies[i].size() << " bytes";
    }
}

TEST_F(RemotingClientTest, TimeoutFiresExactlyOnceAndLateAnswerIsDropped) {
    std::atomic<int> calls{0};
    Latch done(1);
    Status status;
    const auto t0 = std::chrono::steady_clock::now();
    client_.invoke_async(addr_, make_request(kClientHold, "never"), 150ms,
                         [&](Result<RemotingCommand> r) {
                             calls.fetch_add(1);
                             status = r.status();
                             done.count_down();
                         });
    ASSERT_TRUE(done.wait_for(5s));
    const auto elapsed = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(elapsed, 150ms);  // not before its deadline (how late is a benchmark question)
    EXPECT_EQ(status.code(), Errc::kTimeout) << status.to_string();
    EXPECT_NE(status.message().find("timeout, 150(ms)"), std::string::npos) << status.message();
    // The server answers late: the response matches nothing and is dropped.
    ASSERT_TRUE(wait_held(1));
    {
        std::lock_guard<std::mutex> lock(held_mu_);
        held_[0].respond(0, "late");
    }
    // A round trip after the late answer proves it was read (same connection, in order).
    auto r = client_.invoke_sync(addr_, make_request(kClientEcho, "k", "after"), 5s);
    ASSERT_TRUE(r.is_ok());
    EXPECT_EQ(r->body, "after");
    EXPECT_EQ(calls.load(), 1);
}

TEST_F(RemotingClientTest, ManyTimeoutsWithDifferentDeadlinesEachFireOnce) {
    constexpr int kN = 50;
    std::vector<std::atomic<int>> calls(kN);
    Latch done(kN);
    std::atomic<int> timeouts{0};
    for (int i = 0; i < kN; ++i) {
        // Later requests get earlier deadlines, so the timer is re-armed again and again.
        client_.invoke_async(addr_, make_request(kClientHold, std::to_string(i)),
                             std::chrono::milliseconds(300 - 5 * i),
                             [&, i](Result<RemotingCommand> r) {
                                 calls[i].fetch_add(1);
                                 if (!r.is_ok() && r.status().code() == Errc::kTimeout) {
                                     timeouts.fetch_add(1);
                                 }
                                 done.count_down();
                             });
    }
    ASSERT_TRUE(done.wait_for(10s));
    EXPECT_EQ(timeouts.load(), kN);
    ASSERT_TRUE(wait_held(kN));
    {
        std::lock_guard<std::mutex> lock(held_mu_);
        for (auto& r : held_) {
            r.respond(0);
        }
    }
    ASSERT_TRUE(client_.invoke_sync(addr_, make_request(kClientEcho, "k"), 5s).is_ok());
    for (int i = 0; i < kN; ++i) {
        EXPECT_EQ(calls[i].load(), 1) << i;
    }
}

TEST_F(RemotingClientTest, DroppedConnectionFailsEveryRequestInFlight) {
    constexpr int kN = 5;
    Latch done(kN);
    std::atomic<int> unavailable{0};
    for (int i = 0; i < kN; ++i) {
        client_.invoke_async(addr_, make_request(kClientHold, std::to_string(i)), 1h,
                             [&](Result<RemotingCommand> r) {
                                 if (!r.is_ok() && r.status().code() == Errc::kUnavailable) {
                                     unavailable.fetch_add(1);
                                 }
                                 done.count_down();
                             });
    }
    ASSERT_TRUE(wait_held(kN));
    for (const auto& conn : server_->connections()) {
        conn->close(Status::error(Errc::kUnavailable, "test drops the connection"));
    }
    // With an hour of timeout, only the dropped connection can have failed them.
    ASSERT_TRUE(done.wait_for(60s));
    EXPECT_EQ(unavailable.load(), kN);
    // The next call reconnects.
    auto r = client_.invoke_sync(addr_, make_request(kClientEcho, "k", "again"), 5s);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->body, "again");
}

TEST_F(RemotingClientTest, ConnectRefusedFailsQuicklyAsUnavailable) {
    const std::string dead = "127.0.0.1:" + std::to_string(testing::unused_port());
    // kUnavailable (not kTimeout): the refused connect failed the call, not its deadline.
    auto r = client_.invoke_sync(dead, make_request(kClientEcho, "k"), 60s);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Errc::kUnavailable);
    EXPECT_NE(r.status().message().find(dead), std::string::npos) << r.status().message();
    Status oneway = client_.invoke_oneway(dead, make_request(kClientEcho, "k"), 5s);
    EXPECT_EQ(oneway.code(), Errc::kUnavailable);
    // The client stays usable for other addresses.
    EXPECT_TRUE(client_.invoke_sync(addr_, make_request(kClientEcho, "k"), 5s).is_ok());
}

TEST_F(RemotingClientTest, BadAddressIsInvalidArgument) {
    for (const std::string bad :
         {"nocolon", "127.0.0.1:", ":80", "127.0.0.1:70000", "127.0.0.1:12x"}) {
        auto r = client_.invoke_sync(bad, make_request(kClientEcho, "k"), 1s);
        ASSERT_FALSE(r.is_ok()) << bad;
        EXPECT_EQ(r.status().code(), Errc::kInvalidArgument) << bad;
    }
    auto parsed = parse_address("[::1]:9876");
    ASSERT_TRUE(parsed.is_ok());
    EXPECT_EQ(parsed->first, "::1");
    EXPECT_EQ(parsed->second, 9876);
}

TEST_F(RemotingClientTest, HostNameIsResolved) {
    auto r = client_.invoke_sync("localhost:" + std::to_string(server_->port()),
                                 make_request(kClientEcho, "k", "by name"), 5s);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->body, "by name");
}

TEST_F(RemotingClientTest, ConnectionIsReusedAndReconnectedAfterClose) {
    ConnectionPtr first;
    Latch got(1);
    client_.get_connection(addr_, [&](Result<ConnectionPtr> c) {
        ASSERT_TRUE(c.is_ok());
        first = c.value();
        got.count_down();
    });
    ASSERT_TRUE(got.wait_for(5s));
    for (int i = 0; i < 5; ++i) {
        ASSERT_TRUE(client_.invoke_sync(addr_, make_request(kClientEcho, "k"), 5s).is_ok());
    }
    EXPECT_EQ(server_->connection_count(), 1u);
    client_.close_connection(addr_);
    for (int i = 0; i < 30000 && first->is_open(); ++i) {
        std::this_thread::sleep_for(1ms);
    }
    EXPECT_FALSE(first->is_open());
    ASSERT_TRUE(client_.invoke_sync(addr_, make_request(kClientEcho, "k"), 5s).is_ok());
    Latch got2(1);
    ConnectionPtr second;
    client_.get_connection(addr_, [&](Result<ConnectionPtr> c) {
        ASSERT_TRUE(c.is_ok());
        second = c.value();
        got2.count_down();
    });
    ASSERT_TRUE(got2.wait_for(5s));
    EXPECT_NE(first->id(), second->id());
}

TEST_F(RemotingClientTest, ShutdownFailsRequestsInFlight) {
    Latch done(3);
    std::atomic<int> unavailable{0};
    for (int i = 0; i < 3; ++i) {
        client_.invoke_async(addr_, make_request(kClientHold, std::to_string(i)), 30s,
                             [&](Result<RemotingCommand> r) {
                                 if (!r.is_ok() && r.status().code() == Errc::kUnavailable) {
                                     unavailable.fetch_add(1);
                                 }
                                 done.count_down();
                             });
    }
    ASSERT_TRUE(wait_held(3));
    client_.shutdown();
    ASSERT_TRUE(done.wait_for(5s));
    EXPECT_EQ(unavailable.load(), 3);
    // After shutdown every call fails at once.
    auto r = client_.invoke_sync(addr_, make_request(kClientEcho, "k"), 1s);
    EXPECT_EQ(r.status().code(), Errc::kUnavailable);
}

TEST_F(RemotingClientTest, SyncCallFromAnIoThreadIsRefused) {
    Latch done(1);
    Status inner;
    client_.invoke_async(addr_, make_request(kClientEcho, "k"), 5s, [&](Result<RemotingCommand>) {
        // Callbacks run on an I/O thread; blocking there would deadlock the connection.
        inner = client_.invoke_sync(addr_, make_request(kClientEcho, "k"), 1s).status();
        done.count_down();
    });
    ASSERT_TRUE(done.wait_for(5s));
    EXPECT_EQ(inner.code(), Errc::kFailedPrecondition);
}

// ---- invoke_frame: caller-encoded frames sharing one write buffer (decision 031) ----------

ConnectionPtr connect_now(RemotingClient& client, const std::string& addr) {
    Latch done(1);
    ConnectionPtr conn;
    client.get_connection(addr, [&](Result<ConnectionPtr> c) {
        if (c.is_ok()) {
            conn = *c;
        }
        done.count_down();
    });
    EXPECT_TRUE(done.wait_for(5s));
    return conn;
}

// A request frame carrying a fresh opaque, as a caller of invoke_frame encodes it.
std::pair<int32_t, std::string> encoded_request(int32_t code, const std::string& body) {
    RemotingCommand req = make_request(code, "k", body);
    req.opaque = next_opaque();
    return {req.opaque, protocol::encode_frame(req)};
}

TEST_F(RemotingClientTest, InvokeFrameBurstsFromIoThreadAndCallersEachCompleteOnceInOrder) {
    ConnectionPtr conn = connect_now(client_, addr_);
    ASSERT_NE(conn, nullptr);
    // Four threads each keep a chain going: every completion (on the I/O thread) sends the
    // chain's next frame, interleaved with ordinary invoke_async requests on the same
    // connection, so shared buffers and regular frames alternate in the write queue.
    constexpr int kChains = 4;
    constexpr int kPerChain = 500;
    std::atomic<int> bad{0};
    std::atomic<int> completions{0};
    Latch all(kChains);
    struct Chain {
        int next = 0;
        std::vector<int> seen;
    };
    std::vector<Chain> chains(kChains);
    std::function<void(int)> send = [&](int c) {
        const int i = chains[c].next++;
        auto [opaque, frame] = encoded_request(kClientEcho, std::to_string(c) + ":" +
                                                                std::to_string(i));
        ResponseCallback cb = [&, c, i](Result<RemotingCommand> r) {
            completions.fetch_add(1);
            if (!r.is_ok() || r->body != std::to_string(c) + ":" + std::to_string(i)) {
                bad.fetch_add(1);
            }
            chains[c].seen.push_back(i);
            if (i + 1 < kPerChain) {
                send(c);
            } else {
                all.count_down();
            }
        };
        EXPECT_TRUE(conn->invoke_frame(opaque, frame, SystemClock::instance().now() + 10s, 10s,
                                       std::move(cb)));
        if (i % 50 == 0) {
            conn->invoke_async(make_request(kClientEcho, "k", "plain"), 10s,
                               [&](Result<RemotingCommand> r) {
                                   if (!r.is_ok() || r->body != "plain") {
                                       bad.fetch_add(1);
                                   }
                               });
        }
    };
    std::vector<std::thread> starters;
    for (int c = 0; c < kChains; ++c) {
        starters.emplace_back([&, c] { send(c); });
    }
    for (auto& t : starters) {
        t.join();
    }
    ASSERT_TRUE(all.wait_for(30s));
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(completions.load(), kChains * kPerChain);
    for (const Chain& c : chains) {
        ASSERT_EQ(c.seen.size(), static_cast<size_t>(kPerChain));
        for (int i = 0; i < kPerChain; ++i) {
            EXPECT_EQ(c.seen[i], i);
        }
    }
    EXPECT_EQ(conn->in_flight_requests(), 0u);
}

TEST_F(RemotingClientTest, InvokeFrameRefusesAnOpaqueInFlightAndKeepsTheCallback) {
    ConnectionPtr conn = connect_now(client_, addr_);
    ASSERT_NE(conn, nullptr);
    auto [opaque, frame] = encoded_request(kClientHold, "held");
    Latch first(1);
    ASSERT_TRUE(conn->invoke_frame(opaque, frame, SystemClock::instance().now() + 30s, 30s,
                                   [&](Result<RemotingCommand> r) {
                                       EXPECT_TRUE(r.is_ok());
                                       first.count_down();
                                   }));
    ASSERT_TRUE(wait_held(1));
    int second_calls = 0;
    ResponseCallback second = [&](Result<RemotingCommand>) { ++second_calls; };
    EXPECT_FALSE(conn->invoke_frame(opaque, frame, SystemClock::instance().now() + 30s, 30s,
                                    std::move(second)));
    EXPECT_NE(second, nullptr);  // not moved from: the caller encodes again
    EXPECT_EQ(second_calls, 0);
    EXPECT_EQ(held_count_.load(), 1);
    {
        std::lock_guard<std::mutex> lock(held_mu_);
        held_[0].respond(0, "answer");
    }
    ASSERT_TRUE(first.wait_for(5s));
}

TEST_F(RemotingClientTest, InvokeFrameTimesOutOnceAndFailsAtOnceWhenClosed) {
    ConnectionPtr conn = connect_now(client_, addr_);
    ASSERT_NE(conn, nullptr);
    // Recycled entries: completed requests first, then timeouts that reuse their nodes.
    for (int round = 0; round < 2; ++round) {
        std::atomic<int> timeouts{0};
        std::atomic<int> calls{0};
        Latch done(3);
        for (int i = 0; i < 3; ++i) {
            auto [opaque, frame] = encoded_request(kClientHold, "t" + std::to_string(i));
            ASSERT_TRUE(conn->invoke_frame(opaque, frame,
                                           SystemClock::instance().now() + 100ms, 100ms,
                                           [&](Result<RemotingCommand> r) {
                                               calls.fetch_add(1);
                                               if (r.status().code() == Errc::kTimeout) {
                                                   timeouts.fetch_add(1);
                                               }
                                               done.count_down();
                                           }));
        }
        ASSERT_TRUE(done.wait_for(5s));
        EXPECT_EQ(timeouts.load(), 3);
        EXPECT_EQ(calls.load(), 3);
        EXPECT_EQ(conn->in_flight_requests(), 0u);
    }
    conn->close(Status::error(Errc::kUnavailable, "test"));
    Status failed;
    auto [opaque, frame] = encoded_request(kClientEcho, "late");
    EXPECT_TRUE(conn->invoke_frame(opaque, frame, SystemClock::instance().now() + 5s, 5s,
                                   [&](Result<RemotingCommand> r) { failed = r.status(); }));
    EXPECT_EQ(failed.code(), Errc::kUnavailable);  // on this thread, before returning
}

// A client on another owner's loops (RemotingClientConfig::loops): its callbacks run on those
// loops' threads, it starts and stops no thread of its own, and its shutdown fails what is in
// flight while the owner's loops keep serving.
TEST_F(RemotingClientTest, ClientOnSharedLoopsRunsOnThemAndLeavesThemRunning) {
    RemotingClientConfig cc;
    cc.name = "SharedLoopCli";
    cc.loops = server_->loops();
    RemotingClient shared(cc);
    shared.start();

    Latch answered(1);
    bool on_server_loop = false;
    std::thread::id callback_thread;
    shared.invoke_async(addr_, make_request(kClientEcho, "k", "ping"), 5s,
                        [&](Result<RemotingCommand> r) {
                            on_server_loop = r.is_ok() && r->body == "ping";
                            callback_thread = std::this_thread::get_id();
                            answered.count_down();
                        });
    ASSERT_TRUE(answered.wait_for(5s));
    EXPECT_TRUE(on_server_loop);
    // The server's one loop ran the callback: a task posted to it runs on the same thread.
    std::promise<std::thread::id> loop_thread;
    asio::post(server_->loops()->context(0),
               [&loop_thread] { loop_thread.set_value(std::this_thread::get_id()); });
    EXPECT_EQ(loop_thread.get_future().get(), callback_thread);

    Latch failed(1);
    std::atomic<int> unavailable{0};
    shared.invoke_async(addr_, make_request(kClientHold, "held"), 30s,
                        [&](Result<RemotingCommand> r) {
                            if (!r.is_ok() && r.status().code() == Errc::kUnavailable) {
                                unavailable.fetch_add(1);
                            }
                            failed.count_down();
                        });
    ASSERT_TRUE(wait_held(1));
    shared.shutdown();
    ASSERT_TRUE(failed.wait_for(5s));
    EXPECT_EQ(unavailable.load(), 1);
    EXPECT_EQ(shared.connection_count(), 0u);

    // The owner's loops still serve: the fixture's own client gets its answer.
    auto r = client_.invoke_sync(addr_, make_request(kClientEcho, "k", "still"), 5s);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->body, "still");
}

// One-way frames whose body continues in referenced buffers arrive whole; close_now on the I/O
// thread drops what is queued before any of it is written (DLedger relies on it before a
// truncation lets those buffers change).
TEST_F(RemotingClientTest, OnewayExtraBodyArrivesWholeAndCloseNowDropsQueuedFrames) {
    constexpr int32_t kSink = 7103;
    std::mutex got_mu;
    std::vector<std::string> got;
    std::atomic<int> got_count{0};
    RemotingServerConfig sc;
    sc.listen_host = "127.0.0.1";
    sc.io_threads = 1;
    sc.name = "SinkSrv";
    RemotingServer sink(sc);
    sink.register_inline_processor(
        kSink, make_processor([&](const ConnectionPtr&, RemotingCommand req, Responder) {
            std::lock_guard<std::mutex> lock(got_mu);
            got.push_back(std::move(req.body));
            got_count.fetch_add(1);
        }));
    ASSERT_TRUE(sink.start().is_ok());
    const std::string addr = "127.0.0.1:" + std::to_string(sink.port());
    RemotingClientConfig cc;
    cc.name = "OnewayCli";
    cc.loops = sink.loops();
    RemotingClient shared(cc);
    shared.start();

    auto piece = [](std::string s) {
        auto owner = std::make_shared<const std::string>(std::move(s));
        return SharedBuffer{owner, owner->data(), owner->size()};
    };
    Latch written(1);
    std::atomic<bool> write_ok{false};
    shared.invoke_oneway_async(addr, make_request(kSink, "k", "head|"),
                               {piece("one|"), piece(""), piece("two")}, [&](Status st) {
                                   write_ok = st.is_ok();
                                   written.count_down();
                               });
    ASSERT_TRUE(written.wait_for(5s));
    EXPECT_TRUE(write_ok.load());
    for (int i = 0; i < 5000 && got_count.load() < 1; ++i) {
        std::this_thread::sleep_for(1ms);
    }
    {
        std::lock_guard<std::mutex> lock(got_mu);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(got[0], "head|one|two");
    }

    // On the loop: queue three frames on the open connection, then close it at once. Every
    // frame fails before close_now returns, and none reaches the server.
    std::promise<std::vector<bool>> outcome;
    asio::post(sink.loops()->context(0), [&] {
        auto failed = std::make_shared<std::vector<bool>>(3, false);
        for (int i = 0; i < 3; ++i) {
            shared.invoke_oneway_async(addr, make_request(kSink, "k", "dropped|"),
                                       {piece("x")},
                                       [failed, i](Status st) { (*failed)[i] = !st.is_ok(); });
        }
        shared.close_connection_now(addr);
        outcome.set_value(*failed);
    });
    const std::vector<bool> failed = outcome.get_future().get();
    EXPECT_EQ(failed, std::vector<bool>(3, true));
    // A later frame reconnects and arrives; the dropped ones never do (the server reads in order).
    Latch later(1);
    shared.invoke_oneway_async(addr, make_request(kSink, "k", "after"), {}, [&](Status) {
        later.count_down();
    });
    ASSERT_TRUE(later.wait_for(5s));
    for (int i = 0; i < 5000 && got_count.load() < 2; ++i) {
        std::this_thread::sleep_for(1ms);
    }
    {
        std::lock_guard<std::mutex> lock(got_mu);
        ASSERT_EQ(got.size(), 2u);
        EXPECT_EQ(got[1], "after");
    }
    shared.shutdown();
    sink.shutdown();
}

// A peer that answers by hand: accepts one connection on 127.0.0.1, reads request frames and
// writes the bytes a test gives it, in the pieces and with the pauses it asks for.
class HandServer {
public:
    HandServer() {
        listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof(a);
        EXPECT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
        EXPECT_EQ(::listen(listen_fd_, 4), 0);
        EXPECT_EQ(::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len), 0);
        port_ = ntohs(a.sin_port);
    }
    ~HandServer() {
        if (conn_fd_ >= 0) ::close(conn_fd_);
        ::close(listen_fd_);
    }
    std::string addr() const { return "127.0.0.1:" + std::to_string(port_); }
    // Accepts the client's connection (bounded by a 10 s receive timeout on it).
    bool accept_one() {
        conn_fd_ = ::accept(listen_fd_, nullptr, nullptr);
        timeval tv{10, 0};
        ::setsockopt(conn_fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        return conn_fd_ >= 0;
    }
    // The opaque of the next request frame (read exactly: its length word, then the rest).
    std::optional<int32_t> read_request() {
        std::string frame;
        if (!read_exactly(4, &frame)) return std::nullopt;
        const size_t len = static_cast<size_t>(static_cast<uint8_t>(frame[0])) << 24 |
                           static_cast<size_t>(static_cast<uint8_t>(frame[1])) << 16 |
                           static_cast<size_t>(static_cast<uint8_t>(frame[2])) << 8 |
                           static_cast<size_t>(static_cast<uint8_t>(frame[3]));
        if (!read_exactly(len, &frame)) return std::nullopt;
        auto cmd = protocol::decode_frame_payload(std::string_view(frame).substr(4), 1 << 24);
        if (!cmd.is_ok()) return std::nullopt;
        return cmd->opaque;
    }
    // Writes `bytes` cut at `cuts` (offsets into it), pausing `pause` between the pieces.
    bool write_in_pieces(const std::string& bytes, std::vector<size_t> cuts,
                         std::chrono::milliseconds pause) {
        cuts.push_back(bytes.size());
        size_t at = 0;
        for (size_t cut : cuts) {
            while (at < cut) {
                const ssize_t n = ::send(conn_fd_, bytes.data() + at, cut - at, MSG_NOSIGNAL);
                if (n <= 0) return false;
                at += static_cast<size_t>(n);
            }
            std::this_thread::sleep_for(pause);
        }
        return true;
    }
    void close_now() {
        ::close(conn_fd_);
        conn_fd_ = -1;
    }

private:
    bool read_exactly(size_t n, std::string* out) {
        char buf[4096];
        while (n > 0) {
            const ssize_t m = ::recv(conn_fd_, buf, std::min(sizeof(buf), n), 0);
            if (m <= 0) return false;
            out->append(buf, static_cast<size_t>(m));
            n -= static_cast<size_t>(m);
        }
        return true;
    }

    int listen_fd_ = -1;
    int conn_fd_ = -1;
    uint16_t port_ = 0;
};

// The response frame for `opaque` with `body`.
std::string response_frame(int32_t opaque, const std::string& body) {
    RemotingCommand r;
    r.code = 0;
    r.flag = protocol::kFlagResponse;
    r.opaque = opaque;
    r.set_ext("k", "v");
    r.body = body;
    return protocol::encode_frame(r);
}

std::string patterned(size_t size, int seed) {
    std::string b(size, '\0');
    for (size_t k = 0; k < size; ++k) {
        b[k] = static_cast<char>(k * 167 + static_cast<size_t>(seed));
    }
    return b;
}

// A client talking to a HandServer: each request's outcome as a future.
class RemotingClientLargeResponse : public ::testing::Test {
protected:
    void SetUp() override { client_.start(); }
    void TearDown() override { client_.shutdown(); }

    // Sends a request and waits until the peer has read it (the first also accepts the
    // connection); returns its opaque, or nullopt.
    std::optional<int32_t> send(const std::string& key,
                                std::future<Result<RemotingCommand>>* outcome) {
        auto done = std::make_shared<std::promise<Result<RemotingCommand>>>();
        *outcome = done->get_future();
        client_.invoke_async(peer_.addr(), make_request(kClientEcho, key), 20s,
                             [done](Result<RemotingCommand> r) { done->set_value(std::move(r)); });
        if (!accepted_) {
            accepted_ = peer_.accept_one();
        }
        return accepted_ ? peer_.read_request() : std::nullopt;
    }

    static Result<RemotingCommand> outcome_of(std::future<Result<RemotingCommand>>& f) {
        if (f.wait_for(30s) != std::future_status::ready) {
            return Status::error(Errc::kTimeout, "no outcome within 30 s");
        }
        return f.get();
    }

    HandServer peer_;
    RemotingClient client_;
    bool accepted_ = false;
};

TEST_F(RemotingClientLargeResponse, BodyArrivingInPiecesIsWholeAndTheNextFrameFollows) {
    // A 1.2 MB response (read straight into its body, Connection::start_direct_body) whose
    // header is cut in two, whose body comes in pieces, the last one in the same write as a
    // small response: both complete, byte for byte.
    std::future<Result<RemotingCommand>> large;
    std::future<Result<RemotingCommand>> small;
    auto first = send("a", &large);
    ASSERT_TRUE(first.has_value());
    auto second = send("b", &small);
    ASSERT_TRUE(second.has_value());
    const std::string big_body = patterned(1200 * 1024 + 7, 1);
    const std::string small_body = patterned(300, 2);
    const std::string big = response_frame(*first, big_body);
    const std::string bytes = big + response_frame(*second, small_body);
    ASSERT_TRUE(peer_.write_in_pieces(
        bytes, {6, 20, 70 * 1024, 300 * 1024, 800 * 1024, big.size() - 100}, 20ms));
    auto lr = outcome_of(large);
    auto sr = outcome_of(small);
    ASSERT_TRUE(lr.is_ok()) << lr.status().to_string();
    ASSERT_TRUE(sr.is_ok()) << sr.status().to_string();
    EXPECT_TRUE(lr->body == big_body) << lr->body.size() << " bytes";
    ASSERT_NE(lr->ext("k"), nullptr);
    EXPECT_EQ(*lr->ext("k"), "v");
    EXPECT_TRUE(sr->body == small_body);
}

TEST_F(RemotingClientLargeResponse, ConnectionClosedInsideTheBodyFailsTheRequest) {
    std::future<Result<RemotingCommand>> large;
    auto opaque = send("a", &large);
    ASSERT_TRUE(opaque.has_value());
    const std::string big = response_frame(*opaque, patterned(1024 * 1024, 3));
    ASSERT_TRUE(peer_.write_in_pieces(big.substr(0, 400 * 1024), {100, 200 * 1024}, 20ms));
    peer_.close_now();
    auto r = outcome_of(large);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Errc::kUnavailable) << r.status().to_string();
}

TEST(ThreadPoolExecutorTest, RunsEverythingQueuedBeforeShutdownThenRejects) {
    ThreadPoolExecutor pool("Pool", 2, 1000);
    std::atomic<int> ran{0};
    for (int i = 0; i < 500; ++i) {
        ASSERT_TRUE(pool.execute([&] { ran.fetch_add(1); }));
    }
    pool.shutdown();
    EXPECT_EQ(ran.load(), 500);
    EXPECT_FALSE(pool.execute([&] { ran.fetch_add(1); }));
    pool.shutdown();  // idempotent
    EXPECT_EQ(ran.load(), 500);
}

TEST(ThreadPoolExecutorTest, RejectsWhenTheQueueIsFull) {
    ThreadPoolExecutor pool("Full", 1, 2);
    Latch release(1);
    Latch entered(1);
    ASSERT_TRUE(pool.execute([&] {
        entered.count_down();
        release.wait_for(10s);
    }));
    ASSERT_TRUE(entered.wait_for(5s));
    EXPECT_TRUE(pool.execute([] {}));
    EXPECT_TRUE(pool.execute([] {}));
    EXPECT_FALSE(pool.execute([] {}));
    EXPECT_EQ(pool.queued(), 2u);
    release.count_down();
    pool.shutdown();
    EXPECT_EQ(pool.queued(), 0u);
}

}  // namespace
}  // namespace comet::net
