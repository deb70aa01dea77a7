// RemotingServer over real sockets on 127.0.0.1 (ephemeral ports, bounded waits).

#include "net/remoting_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "base/bytes.h"
#include "net/remoting_client.h"
#include "net_test_helper.h"
#include "protocol/request_code.h"

namespace comet::net {
namespace {

using namespace std::chrono_literals;
using protocol::RemotingCommand;
using testing::Latch;
using testing::make_request;
using testing::RawSocket;

constexpr int32_t kEcho = 7001;
constexpr int32_t kCount = 7002;
constexpr int32_t kHold = 7003;
constexpr int32_t kNotify = 40;  // NOTIFY_CONSUMER_IDS_CHANGED

// Echoes ext "k" and the body back, with SUCCESS.
void echo(const ConnectionPtr&, RemotingCommand request, Responder respond) {
    auto response = RemotingCommand::response_to(request, 0);
    if (const std::string* k = request.ext("k")) {
        response.set_ext("k", *k);
    }
    response.body = std::move(request.body);
    respond(std::move(response));
}

class RecordingListener : public ConnectionListener {
public:
    void on_connected(const ConnectionPtr& conn) override {
        std::lock_guard<std::mutex> lock(mu);
        connected.push_back(conn);
        connected_latch.count_down();
    }
    void on_closed(const ConnectionPtr& conn, const Status& reason) override {
        std::lock_guard<std::mutex> lock(mu);
        closed.emplace_back(conn->id(), reason);
        closed_latch.count_down();
    }
    ConnectionPtr first() {
        std::lock_guard<std::mutex> lock(mu);
        return connected.empty() ? nullptr : connected.front();
    }
    std::mutex mu;
    std::vector<ConnectionPtr> connected;
    std::vector<std::pair<uint64_t, Status>> closed;
    Latch connected_latch{1};
    Latch closed_latch{1};
};

class RemotingServerTest : public ::testing::Test {
protected:
    void start_server(RemotingServerConfig config = {}) {
        config.listen_host = "127.0.0.1";
        config.listen_port = 0;
        config.io_threads = 2;
        config.name = "TestServer";
        server_ = std::make_unique<RemotingServer>(config);
        auto pool = std::make_shared<ThreadPoolExecutor>("TestProc", 4);
        server_->register_processor(kEcho, make_processor(echo), pool);
        server_->register_processor(
            kCount, make_processor([this](const ConnectionPtr&, RemotingCommand, Responder r) {
                counted_.fetch_add(1);
                count_latch_.count_down();
                r.respond(0);
            }),
            pool);
        server_->register_processor(
            kHold, make_processor([this](const ConnectionPtr&, RemotingCommand, Responder r) {
                std::lock_guard<std::mutex> lock(held_mu_);
                held_.push_back(std::move(r));
                held_latch_.count_down();
            }),
            pool);
        server_->set_connection_listener(listener_);
        ASSERT_TRUE(server_->start().is_ok());
        addr_ = "127.0.0.1:" + std::to_string(server_->port());
    }

    void TearDown() override {
        {
            std::lock_guard<std::mutex> lock(held_mu_);
            held_.clear();
        }
        if (server_) {
            server_->shutdown();
        }
    }

    RemotingClient& client() {
        if (!client_) {
            client_ = std::make_unique<RemotingClient>();
            client_->start();
        }
        return *client_;
    }

    void expect_echo_works(RemotingClient& c, const std::string& key) {
        auto r = c.invoke_sync(addr_, make_request(kEcho, key, "body-" + key), 5s);
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        EXPECT_EQ(r->code, 0);
        ASSERT_NE(r->ext("k"), nullptr);
        EXPECT_EQ(*r->ext("k"), key);
        EXPECT_EQ(r->body, "body-" + key);
    }

    std::shared_ptr<RecordingListener> listener_ = std::make_shared<RecordingListener>();
    std::unique_ptr<RemotingServer> server_;
    std::unique_ptr<RemotingClient> client_;
    std::string addr_;
    std::atomic<int> counted_{0};
    Latch count_latch_{1};
    std::mutex held_mu_;
    std::vector<Responder> held_;
    Latch held_latch_{1};
};

TEST_F(RemotingServerTest, TenThousandConcurrentRequestsOverSeveralConnections) {
    start_server();
    constexpr int kClients = 4;
    constexpr int kPerClient = 2500;
    std::vector<std::unique_ptr<RemotingClient>> clients;
    for (int i = 0; i < kClients; ++i) {
        RemotingClientConfig cc;
        cc.name = "TestClient" + std::to_string(i);
        clients.push_back(std::make_unique<RemotingClient>(cc));
        clients.back()->start();
    }
    Latch done(kClients * kPerClient);
    std::atomic<int> wrong{0};
    std::atomic<int> failed{0};
    std::vector<std::thread> senders;
    for (int c = 0; c < kClients; ++c) {
        senders.emplace_back([&, c] {
            for (int i = 0; i < kPerClient; ++i) {
                const std::string key = std::to_string(c) + "-" + std::to_string(i);
                clients[c]->invoke_async(
                    addr_, make_request(kEcho, key, std::string(i % 300, 'x') + key), 30s,
                    [&, key, i](Result<RemotingCommand> r) {
                        if (!r.is_ok()) {
                            failed.fetch_add(1);
                        } else if (r->code != 0 || r->ext("k") == nullptr || *r->ext("k") != key ||
                                   r->body != std::string(i % 300, 'x') + key) {
                            wrong.fetch_add(1);
                        }
                        done.count_down();
                    });
            }
        });
    }
    for (auto& t : senders) {
        t.join();
    }
    ASSERT_TRUE(done.wait_for(60s)) << done.count() << " requests never completed";
    EXPECT_EQ(failed.load(), 0);
    EXPECT_EQ(wrong.load(), 0);
    for (auto& c : clients) {
        EXPECT_EQ(c->connection_count(), 1u);  // one reused connection per address
    }
    EXPECT_EQ(server_->connection_count(), static_cast<size_t>(kClients));
}

// Two servers on one shared group (RemotingServerConfig::loops, as the brokers of a container):
// each answers on its own port from the group's threads; shutting one down closes its
// connections and leaves the group running for the other, which keeps answering; the owner
// stops the group last.
TEST(RemotingServerSharedLoops, ServersShareTheGroupAndOneStopsWithoutStoppingIt) {
    auto loops = std::make_shared<IoLoopGroup>("SharedIo", 2);
    loops->start();
    auto make = [&](const std::string& name) {
        RemotingServerConfig c;
        c.name = name;
        c.listen_host = "127.0.0.1";
        c.loops = loops;
        auto server = std::make_unique<RemotingServer>(c);
        server->register_inline_processor(kEcho, make_processor(echo));
        return server;
    };
    auto one = make("One");
    auto two = make("Two");
    ASSERT_TRUE(one->start().is_ok());
    ASSERT_TRUE(two->start().is_ok());
    EXPECT_EQ(one->loops(), loops);
    RemotingClient client;
    client.start();
    auto echo_on = [&](RemotingServer& s, const std::string& k) {
        return client.invoke_sync("127.0.0.1:" + std::to_string(s.port()),
                                  make_request(kEcho, k, "b"), 5s);
    };
    ASSERT_TRUE(echo_on(*one, "1").is_ok());
    ASSERT_TRUE(echo_on(*two, "2").is_ok());
    EXPECT_EQ(one->connection_count(), 1u);

    // One's shutdown returns with its connection closed; the group still runs Two.
    const uint16_t one_port = one->port();
    one->shutdown();
    EXPECT_EQ(one->connection_count(), 0u);
    one.reset();
    EXPECT_TRUE(loops->running());
    auto r = echo_on(*two, "again");
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(*r->ext("k"), "again");
    auto gone = client.invoke_sync("127.0.0.1:" + std::to_string(one_port),
                                   make_request(kEcho, "x", "b"), 2s);
    EXPECT_FALSE(gone.is_ok());

    client.shutdown();
    two->shutdown();
    loops->shutdown();
}

TEST_F(RemotingServerTest, UnknownCodeAnswersRequestCodeNotSupported) {
    start_server();
    auto r = client().invoke_sync(addr_, make_request(9999, "x"), 5s);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->code, protocol::ResponseCode::kRequestCodeNotSupported);
    ASSERT_TRUE(r->remark.has_value());
    EXPECT_EQ(*r->remark, " request type 9999 not supported");
}

TEST_F(RemotingServerTest, OnewayRequestIsProcessedAndNeverAnswered) {
    start_server();
    RawSocket raw(server_->port());
    ASSERT_TRUE(raw.connected());
    auto oneway = make_request(kCount, "oneway");
    oneway.opaque = 100;
    oneway.flag = protocol::kFlagOneway;
    auto unknown_oneway = make_request(9998, "unknown-oneway");  // no error response either
    unknown_oneway.opaque = 101;
    unknown_oneway.flag = protocol::kFlagOneway;
    ASSERT_TRUE(raw.send_all(protocol::encode_frame(oneway)));
    ASSERT_TRUE(raw.send_all(protocol::encode_frame(unknown_oneway)));
    ASSERT_TRUE(count_latch_.wait_for(5s));
    EXPECT_EQ(counted_.load(), 1);
    // The next frame on the wire answers the normal request: nothing came for the one-ways.
    auto normal = make_request(kEcho, "after");
    normal.opaque = 102;
    ASSERT_TRUE(raw.send_all(protocol::encode_frame(normal)));
    auto frame = raw.read_frame();
    ASSERT_TRUE(frame.is_ok()) << frame.status().to_string();
    EXPECT_TRUE(frame->is_response());
    EXPECT_EQ(frame->opaque, 102);
    EXPECT_EQ(*frame->ext("k"), "after");
}

TEST_F(RemotingServerTest, FramesSplitAndCoalescedOnTheWireAreDecoded) {
    start_server();
    RawSocket raw(server_->port());
    ASSERT_TRUE(raw.connected());
    auto first = make_request(kEcho, "split", std::string(5000, 's'));
    first.opaque = 1;
    const std::string bytes = protocol::encode_frame(first);
    // One frame in pieces: inside the length word, inside the header, inside the body.
    size_t from = 0;
    for (size_t cut : {size_t{2}, size_t{9}, size_t{40}, bytes.size()}) {
        ASSERT_TRUE(raw.send_all(std::string_view(bytes).substr(from, cut - from)));
        from = cut;
        std::this_thread::sleep_for(2ms);  // let each piece arrive on its own
    }
    auto r1 = raw.read_frame();
    ASSERT_TRUE(r1.is_ok()) << r1.status().to_string();
    EXPECT_EQ(r1->opaque, 1);
    EXPECT_EQ(r1->body, std::string(5000, 's'));
    // Two frames in one write; the second uses the ROCKETMQ binary header.
    auto a = make_request(kEcho, "a", "first");
    a.opaque = 2;
    auto b = make_request(kEcho, "b", "second");
    b.opaque = 3;
    b.serialize_type = protocol::SerializeType::kRocketMq;
    ASSERT_TRUE(raw.send_all(protocol::encode_frame(a) + protocol::encode_frame(b)));
    std::map<int32_t, std::string> got;
    for (int i = 0; i < 2; ++i) {
        auto r = raw.read_frame();
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        got[r->opaque] = r->body;
        // Each answered in its request's serialization, as RocketMQ 4.9.8 answers.
        EXPECT_EQ(r->serialize_type, r->opaque == 3 ? protocol::SerializeType::kRocketMq
                                                    : protocol::SerializeType::kJson)
            << "opaque " << r->opaque;
    }
    EXPECT_EQ(got[2], "first");
    EXPECT_EQ(got[3], "second");
}

TEST_F(RemotingServerTest, ClientOnewayReachesServer) {
    start_server();
    ASSERT_TRUE(client().invoke_oneway(addr_, make_request(kCount, "x"), 5s).is_ok());
    ASSERT_TRUE(count_latch_.wait_for(5s));
    EXPECT_EQ(counted_.load(), 1);
}

std::string be32(uint32_t v) {
    std::string s;
    ByteWriter(&s).be32(v);
    return s;
}

struct BadInput {
    const char* name;
    std::string bytes;
};

TEST_F(RemotingServerTest, BadInputClosesOnlyThatConnection) {
    RemotingServerConfig config;
    config.connection.max_frame_bytes = 1 << 20;
    start_server(config);
    std::vector<BadInput> inputs = {
        {"http garbage", "GET / HTTP/1.1\r\nHost: x\r\n\r\n"},
        {"length over limit", be32((1 << 20) + 1) + "xxxxxxxx"},
        {"negative length", be32(0xFFFFFFF0u) + "xxxxxxxx"},
        {"length below minimum", be32(2) + "xx"},
        {"header length > frame", be32(8) + be32(100) + "abcd"},
        {"unknown serialization type", be32(8) + be32((7u << 24) | 2) + "{}" + "zz"},
        {"invalid json header", be32(12) + be32(8) + "not json"},
    };
    // A well-behaved client connected before, during and after the bad ones.
    expect_echo_works(client(), "before");
    for (const auto& input : inputs) {
        SCOPED_TRACE(input.name);
        RawSocket raw(server_->port());
        ASSERT_TRUE(raw.connected());
        ASSERT_TRUE(raw.send_all(input.bytes));
        EXPECT_TRUE(raw.wait_closed()) << "server kept a connection that sent " << input.name;
        expect_echo_works(client(), std::string("after ") + input.name);
    }
    EXPECT_EQ(client().connection_count(), 1u);
}

TEST_F(RemotingServerTest, ConfiguredMaxFrameClosesConnectionAndFailsClient) {
    RemotingServerConfig config;
    config.connection.max_frame_bytes = 4096;
    start_server(config);
    expect_echo_works(client(), "small");
    auto r = client().invoke_sync(addr_, make_request(kEcho, "big", std::string(8192, 'b')), 5s);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Errc::kUnavailable) << r.status().to_string();
    // The client reconnects on demand.
    expect_echo_works(client(), "again");
}

TEST_F(RemotingServerTest, LargeFrameUnderTheLimitRoundTrips) {
    start_server();
    std::string body(3 << 20, '\0');
    for (size_t i = 0; i < body.size(); ++i) {
        body[i] = static_cast<char>(i * 131);
    }
    auto r = client().invoke_sync(addr_, make_request(kEcho, "large", body), 10s);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->body, body);
}

TEST_F(RemotingServerTest, IdleConnectionIsClosed) {
    RemotingServerConfig config;
    config.connection.max_idle = 200ms;
    start_server(config);
    expect_echo_works(client(), "x");
    ASSERT_TRUE(listener_->closed_latch.wait_for(5s));
    {
        std::lock_guard<std::mutex> lock(listener_->mu);
        ASSERT_EQ(listener_->closed.size(), 1u);
        EXPECT_EQ(listener_->closed[0].second.code(), Errc::kTimeout);
        EXPECT_NE(listener_->closed[0].second.message().find("idle"), std::string::npos);
    }
    // The close hook may run just before the server drops the connection from its table.
    for (int i = 0; i < 30000 && server_->connection_count() > 0; ++i) {
        std::this_thread::sleep_for(1ms);
    }
    EXPECT_EQ(server_->connection_count(), 0u);
    // The client notices the close (a request racing with it would fail with kUnavailable, as
    // in Java) and reconnects on the next call.
    for (int i = 0; i < 30000 && client().connection_count() > 0; ++i) {
        std::this_thread::sleep_for(1ms);
    }
    EXPECT_EQ(client().connection_count(), 0u);
    expect_echo_works(client(), "y");
}

TEST_F(RemotingServerTest, ServerCallsClientOverItsOwnConnection) {
    start_server();
    Latch notified(1);
    std::string notified_key;
    RemotingClient c;
    auto pool = std::make_shared<ThreadPoolExecutor>("ClientCb", 1);
    c.register_processor(
        kNotify, make_processor([&](const ConnectionPtr&, RemotingCommand req, Responder r) {
            notified_key = *req.ext("k");
            EXPECT_TRUE(r.is_oneway());
            r.respond(0);  // dropped: one-way
            notified.count_down();
        }),
        pool);
    c.register_processor(kEcho, make_processor(echo), pool);
    c.start();
    expect_echo_works(c, "hello");
    ASSERT_TRUE(listener_->connected_latch.wait_for(5s));
    ConnectionPtr conn = listener_->first();
    ASSERT_NE(conn, nullptr);

    // One-way NOTIFY_CONSUMER_IDS_CHANGED.
    Latch written(1);
    Status write_status = Status::error(Errc::kInternal, "unset");
    conn->invoke_oneway(make_request(kNotify, "group-1"), [&](Status st) {
        write_status = st;
        written.count_down();
    });
    ASSERT_TRUE(written.wait_for(5s));
    EXPECT_TRUE(write_status.is_ok()) << write_status.to_string();
    ASSERT_TRUE(notified.wait_for(5s));
    EXPECT_EQ(notified_key, "group-1");

    // A request with a response, server -> client.
    auto r = invoke_sync(*conn, make_request(kEcho, "to-client", "payload"), 5s);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->body, "payload");
    EXPECT_EQ(*r->ext("k"), "to-client");
    // A code the client has no processor for.
    auto unknown = invoke_sync(*conn, make_request(4242, "u"), 5s);
    ASSERT_TRUE(unknown.is_ok());
    EXPECT_EQ(unknown->code, protocol::ResponseCode::kRequestCodeNotSupported);
    c.shutdown();
}

TEST_F(RemotingServerTest, ScatterGatherResponseBody) {
    // A processor answering with bytes owned by a shared region (as the pull path answers with
    // mapped CommitLog memory): the frame is written from the region, not from a copy.
    auto region = std::make_shared<std::string>("0123456789abcdefghij");
    std::weak_ptr<std::string> weak = region;
    std::mutex slot_mu;
    std::shared_ptr<std::string> slot = std::move(region);
    RemotingServerConfig sg_config;
    sg_config.listen_host = "127.0.0.1";
    sg_config.name = "SgServer";
    RemotingServer sg(sg_config);
    sg.register_processor(
        kEcho, make_processor([&](const ConnectionPtr&, RemotingCommand req, Responder respond) {
            std::shared_ptr<std::string> owned;
            {
                std::lock_guard<std::mutex> lock(slot_mu);
                owned = std::move(slot);
            }
            auto response = RemotingCommand::response_to(req, 0);
            response.body = "head:";
            std::vector<SharedBuffer> extra;
            extra.push_back(SharedBuffer{owned, owned->data() + 10, 10});  // "abcdefghij"
            extra.push_back(SharedBuffer{owned, owned->data(), 0});        // empty piece
            extra.push_back(SharedBuffer{owned, owned->data(), 10});       // "0123456789"
            respond(std::move(response), std::move(extra));
        }),
        std::make_shared<ThreadPoolExecutor>("SgProc", 1));
    ASSERT_TRUE(sg.start().is_ok());
    auto r = client().invoke_sync("127.0.0.1:" + std::to_string(sg.port()),
                                  make_request(kEcho, "sg"), 5s);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->body, "head:abcdefghij0123456789");
    // The server releases the region once its write completed (bounded wait: the client may
    // see the bytes before the server's write handler ran).
    for (int i = 0; i < 30000 && !weak.expired(); ++i) {
        std::this_thread::sleep_for(1ms);
    }
    EXPECT_TRUE(weak.expired());
    sg.shutdown();
}

TEST_F(RemotingServerTest, FullExecutorAnswersSystemBusy) {
    RemotingServerConfig sc;
    sc.listen_host = "127.0.0.1";
    RemotingServer server(sc);
    Latch release(1);
    Latch entered(1);
    auto pool = std::make_shared<ThreadPoolExecutor>("Slow", 1, /*queue_capacity=*/1);
    server.register_processor(
        kHold, make_processor([&](const ConnectionPtr&, RemotingCommand, Responder r) {
            entered.count_down();
            release.wait_for(10s);
            r.respond(0);
        }),
        pool);
    ASSERT_TRUE(server.start().is_ok());
    const std::string addr = "127.0.0.1:" + std::to_string(server.port());
    Latch first_done(1);
    client().invoke_async(addr, make_request(kHold, "1"), 10s,
                          [&](Result<RemotingCommand>) { first_done.count_down(); });
    ASSERT_TRUE(entered.wait_for(5s));  // the only thread is busy
    Latch second_done(1);
    client().invoke_async(addr, make_request(kHold, "2"), 10s,
                          [&](Result<RemotingCommand>) { second_done.count_down(); });
    // Third request: the queue (capacity 1) holds the second one, so this one is refused.
    auto third = client().invoke_sync(addr, make_request(kHold, "3"), 5s);
    ASSERT_TRUE(third.is_ok()) << third.status().to_string();
    EXPECT_EQ(third->code, protocol::ResponseCode::kSystemBusy);
    EXPECT_EQ(third->remark.value_or(""), "[OVERLOAD]system busy, start flow control for a while");
    release.count_down();
    EXPECT_TRUE(first_done.wait_for(5s));
    EXPECT_TRUE(second_done.wait_for(5s));
    server.shutdown();
}

TEST_F(RemotingServerTest, ProcessorDroppingTheResponderAnswersSystemError) {
    RemotingServerConfig sc;
    sc.listen_host = "127.0.0.1";
    RemotingServer server(sc);
    server.register_processor(kEcho,
                              make_processor([](const ConnectionPtr&, RemotingCommand,
                                                Responder) { /* forgets to answer */ }),
                              std::make_shared<ThreadPoolExecutor>("Forget", 1));
    server.register_processor(
        kCount, make_processor([](const ConnectionPtr&, RemotingCommand, Responder) -> void {
            throw std::runtime_error("processor bug");
        }),
        std::make_shared<ThreadPoolExecutor>("Throw", 1));
    ASSERT_TRUE(server.start().is_ok());
    const std::string addr = "127.0.0.1:" + std::to_string(server.port());
    auto r = client().invoke_sync(addr, make_request(kEcho, "x"), 5s);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->code, protocol::ResponseCode::kSystemError);
    auto thrown = client().invoke_sync(addr, make_request(kCount, "x"), 5s);
    ASSERT_TRUE(thrown.is_ok()) << thrown.status().to_string();
    EXPECT_EQ(thrown->code, protocol::ResponseCode::kSystemError);
    EXPECT_EQ(thrown->remark.value_or(""), "processor bug");
    server.shutdown();
}

// Run to completion (decision 019): an inline processor runs on the I/O thread that read the
// request, in arrival order per connection, may answer later from another thread, and a throw
// still answers SYSTEM_ERROR.
TEST_F(RemotingServerTest, InlineProcessorRunsOnTheIoThreadInArrivalOrder) {
    RemotingServerConfig sc;
    sc.listen_host = "127.0.0.1";
    sc.io_threads = 2;
    RemotingServer server(sc);
    std::mutex mu;
    std::vector<std::string> order;
    std::atomic<int> off_io_thread{0};
    std::vector<Responder> later;
    server.register_inline_processor(
        kEcho, make_processor([&](const ConnectionPtr& conn, RemotingCommand req, Responder r) {
            if (!IoLoopGroup::on_io_thread()) {
                off_io_thread.fetch_add(1);
            }
            const std::string key = req.ext("k") != nullptr ? *req.ext("k") : "";
            if (key == "later") {
                std::lock_guard<std::mutex> lock(mu);
                later.push_back(std::move(r));  // answered from the test thread below
                return;
            }
            {
                std::lock_guard<std::mutex> lock(mu);
                order.push_back(key);
            }
            echo(conn, std::move(req), std::move(r));
        }));
    server.register_inline_processor(
        kCount, make_processor([](const ConnectionPtr&, RemotingCommand, Responder) -> void {
            throw std::runtime_error("inline bug");
        }));
    ASSERT_TRUE(server.start().is_ok());
    const std::string addr = "127.0.0.1:" + std::to_string(server.port());
    // Open the connection first: requests queued while the client is still connecting are not
    // promised to leave in call order; on an open connection they are (one write queue).
    ASSERT_TRUE(client().invoke_sync(addr, make_request(kEcho, "connect"), 10s).is_ok());
    {
        std::lock_guard<std::mutex> lock(mu);
        order.clear();
    }
    constexpr int kRequests = 200;
    Latch done(kRequests);
    std::atomic<int> wrong{0};
    for (int i = 0; i < kRequests; ++i) {
        const std::string key = std::to_string(i);
        client().invoke_async(addr, make_request(kEcho, key, "b" + key), 10s,
                              [&, key](Result<RemotingCommand> r) {
                                  if (!r.is_ok() || r->code != 0 || r->ext("k") == nullptr ||
                                      *r->ext("k") != key || r->body != "b" + key) {
                                      wrong.fetch_add(1);
                                  }
                                  done.count_down();
                              });
    }
    ASSERT_TRUE(done.wait_for(20s)) << done.count() << " requests never completed";
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(off_io_thread.load(), 0);
    {
        std::lock_guard<std::mutex> lock(mu);
        ASSERT_EQ(order.size(), static_cast<size_t>(kRequests));
        for (int i = 0; i < kRequests; ++i) {
            EXPECT_EQ(order[static_cast<size_t>(i)], std::to_string(i));  // one connection
        }
    }
    Latch later_done(1);
    client().invoke_async(addr, make_request(kEcho, "later"), 10s, [&](Result<RemotingCommand> r) {
        if (!r.is_ok() || r->code != 0) {
            wrong.fetch_add(1);
        }
        later_done.count_down();
    });
    for (int i = 0; i < 3000; ++i) {  // bounded: 30 s; the lock is not held while sleeping
        {
            std::lock_guard<std::mutex> lock(mu);
            if (!later.empty()) {
                break;
            }
        }
        std::this_thread::sleep_for(10ms);
    }
    {
        std::lock_guard<std::mutex> lock(mu);
        ASSERT_EQ(later.size(), 1u);
        later.front().respond(0);
    }
    ASSERT_TRUE(later_done.wait_for(10s));
    EXPECT_EQ(wrong.load(), 0);
    auto thrown = client().invoke_sync(addr, make_request(kCount, "x"), 5s);
    ASSERT_TRUE(thrown.is_ok()) << thrown.status().to_string();
    EXPECT_EQ(thrown->code, protocol::ResponseCode::kSystemError);
    EXPECT_EQ(thrown->remark.value_or(""), "inline bug");
    server.shutdown();
}

// Read batches (decision 028): the requests decoded from one socket read are handed over
// between the server's batch hooks, on the I/O thread, and every begin has its end; the
// written hook follows each end, once the replies of the batch's inline requests are on the
// socket (they leave before the hook's work: a store's thread wake-ups).
TEST_F(RemotingServerTest, RequestsOfOneReadRunBetweenTheBatchHooks) {
    RemotingServerConfig sc;
    sc.listen_host = "127.0.0.1";
    sc.io_threads = 1;
    RemotingServer server(sc);
    std::atomic<bool> open{false};
    std::atomic<bool> written_owed{false};
    std::atomic<int> begins{0};
    std::atomic<int> ends{0};
    std::atomic<int> writtens{0};
    std::atomic<int> misuse{0};
    std::atomic<int> outside{0};
    std::atomic<int> handled{0};
    std::atomic<int> reply_not_out{0};
    std::atomic<RawSocket*> peer{nullptr};
    server.set_read_batch_hooks(
        [&] {
            if (open.exchange(true) || written_owed.load() || !IoLoopGroup::on_io_thread()) {
                misuse.fetch_add(1);
            }
            begins.fetch_add(1);
        },
        [&] {
            if (!open.exchange(false) || written_owed.exchange(true)) {
                misuse.fetch_add(1);
            }
            ends.fetch_add(1);
        },
        [&] {
            if (open.load() || !written_owed.exchange(false) || !IoLoopGroup::on_io_thread()) {
                misuse.fetch_add(1);
            }
            // The client reads only after every reply came: a batch's replies are unread here.
            if (RawSocket* p = peer.load(); p != nullptr && !p->readable_now()) {
                reply_not_out.fetch_add(1);
            }
            writtens.fetch_add(1);
        });
    server.register_inline_processor(
        kEcho, make_processor([&](const ConnectionPtr& conn, RemotingCommand req, Responder r) {
            if (!open.load()) {
                outside.fetch_add(1);
            }
            handled.fetch_add(1);
            echo(conn, std::move(req), std::move(r));
        }));
    ASSERT_TRUE(server.start().is_ok());
    RawSocket raw(server.port());
    ASSERT_TRUE(raw.connected());
    peer.store(&raw);
    constexpr int kFrames = 50;
    std::string bytes;
    for (int i = 0; i < kFrames; ++i) {
        auto req = make_request(kEcho, std::to_string(i), "b");
        req.opaque = i;
        bytes += protocol::encode_frame(req);
    }
    // Half a frame first: a read without a whole frame opens no batch.
    const std::string lone = protocol::encode_frame(make_request(kEcho, "lone"));
    ASSERT_TRUE(raw.send_all(std::string_view(lone).substr(0, 10)));
    ASSERT_TRUE(raw.send_all(std::string_view(lone).substr(10)));
    // Every batch's hooks have run before the next one's bytes are sent: the first batch's
    // reply alone is on the socket when its written hook looks.
    for (int i = 0; i < 3000 && writtens.load() < 1; ++i) {
        std::this_thread::sleep_for(1ms);
    }
    ASSERT_EQ(writtens.load(), 1);
    ASSERT_TRUE(raw.send_all(bytes));  // one write: one or a few reads
    for (int i = 0; i < kFrames + 1; ++i) {
        auto r = raw.read_frame();
        ASSERT_TRUE(r.is_ok()) << i << ": " << r.status().to_string();
    }
    peer.store(nullptr);
    EXPECT_EQ(handled.load(), kFrames + 1);
    EXPECT_EQ(outside.load(), 0);
    EXPECT_EQ(misuse.load(), 0);
    EXPECT_EQ(reply_not_out.load(), 0);
    EXPECT_GE(begins.load(), 2);
    EXPECT_LT(begins.load(), kFrames + 1);  // frames of one read share a batch
    server.shutdown();
    EXPECT_EQ(begins.load(), ends.load());
    EXPECT_EQ(ends.load(), writtens.load());
    EXPECT_FALSE(open.load());
    EXPECT_FALSE(written_owed.load());
}

TEST_F(RemotingServerTest, ResponsesMayComeBackOutOfOrder) {
    start_server();
    Latch first_done(1);
    Result<RemotingCommand> first = Status::error(Errc::kInternal, "unset");
    client().invoke_async(addr_, make_request(kHold, "held"), 10s, [&](Result<RemotingCommand> r) {
        first = std::move(r);
        first_done.count_down();
    });
    ASSERT_TRUE(held_latch_.wait_for(5s));
    // A later request on the same connection is answered while the first is still held.
    expect_echo_works(client(), "later");
    EXPECT_EQ(first_done.count(), 1);
    {
        std::lock_guard<std::mutex> lock(held_mu_);
        auto response = RemotingCommand::request(0);
        response.body = "late answer";
        held_[0](std::move(response));
        held_[0].respond(1);  // a second answer is dropped
    }
    ASSERT_TRUE(first_done.wait_for(5s));
    ASSERT_TRUE(first.is_ok()) << first.status().to_string();
    EXPECT_EQ(first->body, "late answer");
    expect_echo_works(client(), "still fine");
}

TEST_F(RemotingServerTest, GracefulShutdownFinishesQueuedRequestsAndFailsHeldOnes) {
    RemotingServerConfig sc;
    sc.listen_host = "127.0.0.1";
    auto server = std::make_unique<RemotingServer>(sc);
    Latch started(1);
    Latch gate(1);  // the two pool threads wait here, so the other requests stay queued
    std::atomic<int> entered{0};
    auto slow_pool = std::make_shared<ThreadPoolExecutor>("SlowEcho", 2);
    server->register_processor(
        kEcho, make_processor([&](const ConnectionPtr& c, RemotingCommand req, Responder r) {
            entered.fetch_add(1);
            started.count_down();
            gate.wait_for(60s);
            echo(c, std::move(req), std::move(r));
        }),
        slow_pool);
    std::vector<Responder> held;
    std::mutex held_mu;
    Latch held_latch(1);
    server->register_processor(
        kHold, make_processor([&](const ConnectionPtr&, RemotingCommand, Responder r) {
            std::lock_guard<std::mutex> lock(held_mu);
            held.push_back(std::move(r));
            held_latch.count_down();
        }),
        std::make_shared<ThreadPoolExecutor>("Hold", 1));
    ASSERT_TRUE(server->start().is_ok());
    const std::string addr = "127.0.0.1:" + std::to_string(server->port());

    Latch held_done(1);
    Result<RemotingCommand> held_result = Status::error(Errc::kInternal, "unset");
    client().invoke_async(addr, make_request(kHold, "long-poll"), 30s,
                          [&](Result<RemotingCommand> r) {
                              held_result = std::move(r);
                              held_done.count_down();
                          });
    ASSERT_TRUE(held_latch.wait_for(5s));
    constexpr int kInFlight = 40;
    Latch done(kInFlight);
    std::atomic<int> ok{0};
    for (int i = 0; i < kInFlight; ++i) {
        client().invoke_async(addr, make_request(kEcho, std::to_string(i)), 30s,
                              [&](Result<RemotingCommand> r) {
                                  if (r.is_ok() && r->code == 0) {
                                      ok.fetch_add(1);
                                  }
                                  done.count_down();
                              });
    }
    ASSERT_TRUE(started.wait_for(30s));
    // Both pool threads are held at the gate, so every other request stays queued: wait
    // (bounded) until all of them reached the executor.
    for (int i = 0; i < 30000 && !(entered.load() == 2 && slow_pool->queued() == kInFlight - 2);
         ++i) {
        std::this_thread::sleep_for(1ms);
    }
    ASSERT_EQ(entered.load(), 2);
    ASSERT_EQ(static_cast<int>(slow_pool->queued()), kInFlight - 2);
    // Shut down while they are queued; open the gate only once shutdown has begun (its first
    // step closes the acceptor, so a new connect is refused).
    std::thread stopper([&] { server->shutdown(); });
    bool refused = false;
    for (int i = 0; i < 3000 && !refused; ++i) {
        refused = !RawSocket(server->port(), 1s).connected();
        if (!refused) {
            std::this_thread::sleep_for(10ms);
        }
    }
    EXPECT_TRUE(refused) << "the acceptor stayed open during shutdown";
    gate.count_down();
    stopper.join();
    ASSERT_TRUE(done.wait_for(30s));
    EXPECT_EQ(ok.load(), kInFlight);  // everything that arrived before shutdown was answered
    ASSERT_TRUE(held_done.wait_for(10s));
    ASSERT_FALSE(held_result.is_ok());  // the held one fails: the connection closed
    EXPECT_EQ(held_result.status().code(), Errc::kUnavailable);
    {
        std::lock_guard<std::mutex> lock(held_mu);
        held.clear();  // answering (or dropping) after shutdown is harmless
    }
    server.reset();
    // New connections are refused.
    auto after = client().invoke_sync(addr, make_request(kEcho, "after"), 2s);
    EXPECT_FALSE(after.is_ok());
}

TEST_F(RemotingServerTest, ConnectionHooksSeeOpenAndClose) {
    start_server();
    {
        RemotingClient c;
        c.start();
        expect_echo_works(c, "x");
        ASSERT_TRUE(listener_->connected_latch.wait_for(5s));
        EXPECT_EQ(server_->connection_count(), 1u);
        c.shutdown();
    }
    ASSERT_TRUE(listener_->closed_latch.wait_for(5s));
    std::lock_guard<std::mutex> lock(listener_->mu);
    ASSERT_EQ(listener_->closed.size(), 1u);
    EXPECT_EQ(listener_->closed[0].first, listener_->connected[0]->id());
    EXPECT_EQ(listener_->closed[0].second.code(), Errc::kUnavailable);
}

// Responder::answer sends a command the processor keeps: encoded as operator() would send it
// (opaque and response flag set), the command itself left with its fields, a second answer
// dropped, a one-way request never answered.
TEST_F(RemotingServerTest, AnswerSendsAKeptCommandOnce) {
    RemotingServerConfig sc;
    sc.listen_host = "127.0.0.1";
    sc.io_threads = 1;
    RemotingServer server(sc);
    RemotingCommand kept;  // touched only on the I/O thread
    std::atomic<int> kept_intact{0};
    std::atomic<int> oneway_seen{0};
    server.register_inline_processor(
        kEcho, make_processor([&](const ConnectionPtr&, RemotingCommand req, Responder r) {
            if (req.is_oneway()) {
                oneway_seen.fetch_add(1);
            }
            kept.code = 0;
            kept.flag = 0;
            kept.ext_fields.assign_sorted({{"k", *req.ext("k")}, {"long", std::string(40, 'L')}});
            r.answer(kept);
            r.answer(kept);  // dropped
            if (!req.is_oneway() && kept.ext_fields.size() == 2 && kept.is_response() &&
                kept.opaque == req.opaque) {
                kept_intact.fetch_add(1);
            }
        }));
    ASSERT_TRUE(server.start().is_ok());
    const std::string addr = "127.0.0.1:" + std::to_string(server.port());
    RemotingCommand oneway = make_request(kEcho, "one-way");
    ASSERT_TRUE(client().invoke_oneway(addr, oneway, 5s).is_ok());
    for (const std::string key : {"a", "b", "c"}) {
        auto r = client().invoke_sync(addr, make_request(kEcho, key), 5s);
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        EXPECT_EQ(r->code, 0);
        ASSERT_NE(r->ext("k"), nullptr);
        EXPECT_EQ(*r->ext("k"), key);
        ASSERT_NE(r->ext("long"), nullptr);
        EXPECT_EQ(*r->ext("long"), std::string(40, 'L'));
    }
    EXPECT_EQ(oneway_seen.load(), 1);  // processed before the next request on the connection
    EXPECT_EQ(kept_intact.load(), 3);
    server.shutdown();
}

// A send request's body is borrowed from the connection's read buffer (issue 16) only by an
// inline processor registered with borrows_body; every other processor gets it in
// request.body, and an executor's copy outlives the read buffer.
TEST_F(RemotingServerTest, OnlyABorrowingInlineProcessorSeesABorrowedBody) {
    RemotingServerConfig sc;
    sc.listen_host = "127.0.0.1";
    sc.io_threads = 1;
    RemotingServer server(sc);
    std::atomic<int> borrowed{0};
    std::atomic<int> owned{0};
    // Answers with the body it saw and counts how it got it.
    auto answer_body = [&](const ConnectionPtr&, RemotingCommand req, Responder r) {
        if (req.body.empty() && !req.borrowed_body.empty()) {
            borrowed.fetch_add(1);
        } else if (!req.body.empty() && req.borrowed_body.empty()) {
            owned.fetch_add(1);
        }
        RemotingCommand resp;
        resp.code = 0;
        resp.body = std::string(req.body_view());
        r(std::move(resp));
    };
    server.register_inline_processor(protocol::RequestCode::kSendMessageV2,
                                     make_processor(answer_body), /*borrows_body=*/true);
    server.register_inline_processor(protocol::RequestCode::kSendMessage,
                                     make_processor(answer_body));
    server.register_processor(protocol::RequestCode::kSendBatchMessage, make_processor(answer_body),
                              std::make_shared<ThreadPoolExecutor>("TestSend", 1));
    ASSERT_TRUE(server.start().is_ok());
    const std::string addr = "127.0.0.1:" + std::to_string(server.port());
    // A SEND_MESSAGE_V2 header the typed fast path accepts (v1 names for SEND_MESSAGE).
    auto send_request = [](int32_t code, const std::string& body) {
        RemotingCommand req = RemotingCommand::request(code);
        if (code == protocol::RequestCode::kSendMessage) {
            req.ext_fields = {{"producerGroup", "g"},     {"topic", "T"},
                              {"defaultTopic", "TBW102"}, {"defaultTopicQueueNums", "4"},
                              {"queueId", "0"},           {"sysFlag", "0"},
                              {"bornTimestamp", "1"},     {"flag", "0"},
                              {"reconsumeTimes", "0"},    {"unitMode", "false"}};
        } else {
            req.ext_fields = {{"a", "g"}, {"b", "T"}, {"c", "TBW102"}, {"d", "4"}, {"e", "0"},
                              {"f", "0"}, {"g", "1"}, {"h", "0"},      {"j", "0"}, {"k", "false"}};
        }
        req.body = body;
        return req;
    };
    for (int i = 0; i < 3; ++i) {
        for (int32_t code :
             {protocol::RequestCode::kSendMessageV2, protocol::RequestCode::kSendMessage,
              protocol::RequestCode::kSendBatchMessage}) {
            const std::string body = "body-" + std::to_string(code) + "-" + std::to_string(i);
            auto r = client().invoke_sync(addr, send_request(code, body), 5s);
            ASSERT_TRUE(r.is_ok()) << r.status().to_string();
            EXPECT_EQ(r->body, body) << code;
        }
    }
    EXPECT_EQ(borrowed.load(), 3);  // SEND_MESSAGE_V2 only
    EXPECT_EQ(owned.load(), 6);
    server.shutdown();
}

TEST(RemotingServerStartTest, BindFailureIsAnError) {
    RemotingServerConfig sc;
    sc.listen_host = "127.0.0.1";
    RemotingServer first(sc);
    ASSERT_TRUE(first.start().is_ok());
    sc.listen_port = first.port();
    RemotingServer second(sc);
    Status st = second.start();
    EXPECT_EQ(st.code(), Errc::kIoError);
    EXPECT_NE(st.message().find(std::to_string(first.port())), std::string::npos);
    sc.listen_host = "not-an-ip";
    RemotingServer third(sc);
    EXPECT_EQ(third.start().code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace comet::net
