// FaultProxy tests: an echo server on 127.0.0.1 behind the proxy; every socket has a receive
// timeout, every thread is joined.

#include "fault_proxy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace comet::it {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Echoes every byte back on each accepted connection; closes its side after the peer's EOF.
class EchoServer {
public:
    EchoServer() {
        listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        EXPECT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
        EXPECT_EQ(::listen(listen_fd_, 16), 0);
        socklen_t len = sizeof(a);
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this] { run(); });
    }
    ~EchoServer() {
        stop_ = true;
        thread_.join();
        ::close(listen_fd_);
    }
    uint16_t port() const { return port_; }
    int connections() const { return connections_.load(); }

private:
    void run() {
        std::vector<int> conns;
        while (!stop_) {
            std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
            for (int c : conns) {
                fds.push_back({c, POLLIN, 0});
            }
            if (::poll(fds.data(), fds.size(), 20) <= 0) {
                continue;
            }
            std::vector<int> keep;
            if ((fds[0].revents & POLLIN) != 0) {
                const int c = ::accept(listen_fd_, nullptr, nullptr);
                if (c >= 0) {
                    keep.push_back(c);
                    connections_.fetch_add(1);
                }
            }
            for (size_t i = 1; i < fds.size(); ++i) {
                const int c = fds[i].fd;
                if (fds[i].revents == 0) {
                    keep.push_back(c);
                    continue;
                }
                char buf[65536];
                const ssize_t n = ::recv(c, buf, sizeof(buf), 0);
                if (n <= 0) {
                    ::close(c);
                    continue;
                }
                size_t sent = 0;
                bool ok = true;
                while (sent < static_cast<size_t>(n) && ok) {
                    const ssize_t w =
                        ::send(c, buf + sent, static_cast<size_t>(n) - sent, MSG_NOSIGNAL);
                    ok = w > 0;
                    sent += ok ? static_cast<size_t>(w) : 0;
                }
                if (ok) {
                    keep.push_back(c);
                } else {
                    ::close(c);
                }
            }
            conns = std::move(keep);
        }
        for (int c : conns) {
            ::close(c);
        }
    }

    int listen_fd_ = -1;
    uint16_t port_ = 0;
    std::atomic<bool> stop_{false};
    std::atomic<int> connections_{0};
    std::thread thread_;
};

// A blocking client socket with a receive timeout.
int connect_to(uint16_t port, std::chrono::milliseconds rcv_timeout = 30000ms) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{};
    tv.tv_sec = rcv_timeout.count() / 1000;
    tv.tv_usec = (rcv_timeout.count() % 1000) * 1000;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

bool send_all(int fd, const std::string& data) {
    size_t sent = 0;
    while (sent < data.size()) {
        const ssize_t w = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
        if (w <= 0) {
            return false;
        }
        sent += static_cast<size_t>(w);
    }
    return true;
}

// Reads exactly n bytes or fewer when the peer closes / the receive timeout fires.
std::string recv_n(int fd, size_t n) {
    std::string out;
    char buf[65536];
    while (out.size() < n) {
        const ssize_t r = ::recv(fd, buf, std::min(sizeof(buf), n - out.size()), 0);
        if (r <= 0) {
            break;
        }
        out.append(buf, static_cast<size_t>(r));
    }
    return out;
}

// 0 = orderly EOF, -1 = error/reset, 1 = data, -2 = timeout.
int recv_state(int fd) {
    char c;
    const ssize_t r = ::recv(fd, &c, 1, 0);
    if (r > 0) {
        return 1;
    }
    if (r == 0) {
        return 0;
    }
    return (errno == EAGAIN || errno == EWOULDBLOCK) ? -2 : -1;
}

std::string pattern(size_t n) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i) {
        s[i] = static_cast<char>((i * 131 + i / 7) & 0xff);
    }
    return s;
}

std::unique_ptr<FaultProxy> make_proxy(uint16_t target) {
    auto p = FaultProxy::start("127.0.0.1", target);
    EXPECT_TRUE(p.is_ok()) << p.status().to_string();
    return p.is_ok() ? std::move(p).value() : nullptr;
}

double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

TEST(FaultProxy, ForwardsBothWaysByteExact) {
    EchoServer echo;
    auto proxy = make_proxy(echo.port());
    ASSERT_NE(proxy, nullptr);
    EXPECT_NE(proxy->port(), 0);
    EXPECT_EQ(proxy->address(), "127.0.0.1:" + std::to_string(proxy->port()));
    const int fd = connect_to(proxy->port());
    ASSERT_GE(fd, 0);
    const std::string data = pattern(1 << 20);
    std::thread writer([&] { EXPECT_TRUE(send_all(fd, data)); });
    const std::string back = recv_n(fd, data.size());
    writer.join();
    EXPECT_EQ(back.size(), data.size());
    EXPECT_TRUE(back == data);
    const auto s = proxy->stats();
    EXPECT_EQ(s.accepted, 1u);
    EXPECT_EQ(s.active, 1u);
    EXPECT_EQ(s.upstream_bytes, data.size());
    // The loop counts a write after the kernel took it, so the client may read the last bytes
    // before they are counted: wait for the counter itself.
    EXPECT_TRUE(eventually([&] { return proxy->stats().downstream_bytes == data.size(); }, 10s))
        << proxy->stats().downstream_bytes;
    ::close(fd);
    EXPECT_TRUE(eventually([&] { return proxy->stats().active == 0; }, 3000ms));
}

TEST(FaultProxy, ManyConnectionsAreIndependent) {
    EchoServer echo;
    auto proxy = make_proxy(echo.port());
    ASSERT_NE(proxy, nullptr);
    std::vector<int> fds;
    for (int i = 0; i < 8; ++i) {
        fds.push_back(connect_to(proxy->port()));
        ASSERT_GE(fds.back(), 0);
    }
    for (int i = 0; i < 8; ++i) {
        ASSERT_TRUE(send_all(fds[i], "conn-" + std::to_string(i)));
    }
    for (int i = 0; i < 8; ++i) {
        const std::string want = "conn-" + std::to_string(i);
        EXPECT_EQ(recv_n(fds[i], want.size()), want);
        ::close(fds[i]);
    }
    EXPECT_EQ(echo.connections(), 8);
}

TEST(FaultProxy, AddsOneWayLatencyPerDirection) {
    EchoServer echo;
    auto proxy = make_proxy(echo.port());
    ASSERT_NE(proxy, nullptr);
    const int fd = connect_to(proxy->port());
    ASSERT_GE(fd, 0);
    // Baseline round trip without delay.
    ASSERT_TRUE(send_all(fd, "x"));
    ASSERT_EQ(recv_n(fd, 1), "x");

    proxy->set_delay(ProxyDirection::kUpstream, 150ms);
    auto t = Clock::now();
    ASSERT_TRUE(send_all(fd, "up"));
    ASSERT_EQ(recv_n(fd, 2), "up");
    EXPECT_GE(ms_since(t), 150.0);  // the delay happened

    proxy->set_delay(150ms);  // both directions: the round trip pays twice
    t = Clock::now();
    ASSERT_TRUE(send_all(fd, "both"));
    ASSERT_EQ(recv_n(fd, 4), "both");
    EXPECT_GE(ms_since(t), 300.0);

    // heal() clears the delay for bytes read after it: with an hour of delay left in place the
    // echo below could not come back before the 30 s receive timeout.
    proxy->set_delay(std::chrono::hours(1));
    proxy->heal();
    ASSERT_TRUE(send_all(fd, "fast"));
    EXPECT_EQ(recv_n(fd, 4), "fast");
    ::close(fd);
}

TEST(FaultProxy, LatencyKeepsOrderAndPipelines) {
    EchoServer echo;
    auto proxy = make_proxy(echo.port());
    ASSERT_NE(proxy, nullptr);
    constexpr auto kDelay = 1000ms;
    proxy->set_delay(ProxyDirection::kDownstream, kDelay);
    const int fd = connect_to(proxy->port());
    ASSERT_GE(fd, 0);
    // Ten one-byte writes. A pipelining proxy holds each chunk kDelay after it read it, so the
    // bytes come back spaced like the writes; a proxy that held one chunk at a time would space
    // them kDelay apart. The writer only sends byte i+1 after byte i was echoed through the
    // upstream side (the proxy counts it), so every byte is a chunk of its own.
    std::thread writer([&] {
        for (int i = 0; i < 10; ++i) {
            EXPECT_TRUE(send_all(fd, std::string(1, static_cast<char>('a' + i))));
            EXPECT_TRUE(eventually(
                [&] { return proxy->stats().upstream_bytes == static_cast<uint64_t>(i + 1); },
                10s));
        }
    });
    const auto t = Clock::now();
    std::vector<Clock::time_point> arrived;
    std::string got;
    while (got.size() < 10) {
        const std::string b = recv_n(fd, 1);
        if (b.empty()) {
            break;
        }
        got += b;
        arrived.push_back(Clock::now());
    }
    writer.join();
    EXPECT_EQ(got, "abcdefghij");
    ASSERT_EQ(arrived.size(), 10u);
    EXPECT_GE(arrived.front() - t, kDelay);  // the delay happened
    // Held one at a time, the last byte would come 9 delays after the first.
    EXPECT_LT(arrived.back() - arrived.front(), 9 * kDelay)
        << "chunks were delayed one after another, not pipelined";
    ::close(fd);
}

TEST(FaultProxy, ThrottlesBandwidth) {
    EchoServer echo;
    auto proxy = make_proxy(echo.port());
    ASSERT_NE(proxy, nullptr);
    proxy->set_rate(ProxyDirection::kDownstream, 200 * 1024);  // 200 KiB/s back to the client
    const int fd = connect_to(proxy->port());
    ASSERT_GE(fd, 0);
    const std::string data = pattern(160 * 1024);  // >= 0.8 s at 200 KiB/s (one burst of 10 KiB)
    const auto t = Clock::now();
    std::thread writer([&] { EXPECT_TRUE(send_all(fd, data)); });
    const std::string back = recv_n(fd, data.size());
    writer.join();
    EXPECT_TRUE(back == data);
    EXPECT_GE(ms_since(t), 650.0);  // the throttle held the bytes back
    // Lifting the limit applies at once: at the 16 B/s set first the transfer would take hours,
    // far beyond the 30 s receive timeout of the socket.
    proxy->set_rate(ProxyDirection::kDownstream, 16);
    proxy->set_rate(0);
    std::thread writer2([&] { EXPECT_TRUE(send_all(fd, data)); });
    EXPECT_EQ(recv_n(fd, data.size()).size(), data.size());
    writer2.join();
    ::close(fd);
}

TEST(FaultProxy, PauseHoldsBytesUntilResume) {
    EchoServer echo;
    auto proxy = make_proxy(echo.port());
    ASSERT_NE(proxy, nullptr);
    const int fd = connect_to(proxy->port(), 300ms);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(send_all(fd, "a"));
    ASSERT_EQ(recv_n(fd, 1), "a");
    proxy->pause();
    ASSERT_TRUE(send_all(fd, "held"));
    EXPECT_EQ(recv_state(fd), -2);  // nothing within the 300 ms receive timeout
    EXPECT_EQ(proxy->stats().upstream_bytes, 1u);
    proxy->resume();
    EXPECT_EQ(recv_n(fd, 4), "held");
    ::close(fd);
}

TEST(FaultProxy, DropClosesConnectionsAndAcceptsNewOnes) {
    EchoServer echo;
    auto proxy = make_proxy(echo.port());
    ASSERT_NE(proxy, nullptr);
    const int fd = connect_to(proxy->port(), 2000ms);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(send_all(fd, "a"));
    ASSERT_EQ(recv_n(fd, 1), "a");
    proxy->drop();
    const int st = recv_state(fd);
    EXPECT_TRUE(st == 0 || st == -1) << st;
    ::close(fd);
    EXPECT_TRUE(eventually([&] { return proxy->stats().active == 0; }, 3000ms));

    const int fd2 = connect_to(proxy->port());
    ASSERT_GE(fd2, 0);
    ASSERT_TRUE(send_all(fd2, "again"));
    EXPECT_EQ(recv_n(fd2, 5), "again");
    ::close(fd2);
}

TEST(FaultProxy, RefuseClosesNewConnections) {
    EchoServer echo;
    auto proxy = make_proxy(echo.port());
    ASSERT_NE(proxy, nullptr);
    proxy->set_refuse(true);
    const int fd = connect_to(proxy->port(), 2000ms);
    ASSERT_GE(fd, 0);  // the kernel accepts; the proxy closes at once
    const int st = recv_state(fd);
    EXPECT_TRUE(st == 0 || st == -1) << st;
    ::close(fd);
    EXPECT_EQ(echo.connections(), 0);
    proxy->resume();
    const int fd2 = connect_to(proxy->port());
    ASSERT_GE(fd2, 0);
    ASSERT_TRUE(send_all(fd2, "ok"));
    EXPECT_EQ(recv_n(fd2, 2), "ok");
    ::close(fd2);
}

TEST(FaultProxy, ClosesClientWhenTargetIsDown) {
    const uint16_t dead_port = free_port();  // nothing listens there
    auto proxy = make_proxy(dead_port);
    ASSERT_NE(proxy, nullptr);
    const int fd = connect_to(proxy->port(), 2000ms);
    ASSERT_GE(fd, 0);
    const int st = recv_state(fd);
    EXPECT_TRUE(st == 0 || st == -1) << st;
    ::close(fd);
}

TEST(FaultProxy, ForwardsHalfCloseAfterDelayedData) {
    EchoServer echo;
    auto proxy = make_proxy(echo.port());
    ASSERT_NE(proxy, nullptr);
    proxy->set_delay(100ms);
    const int fd = connect_to(proxy->port());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(send_all(fd, "bye"));
    ::shutdown(fd, SHUT_WR);  // the echo server closes after echoing; EOF must follow the data
    EXPECT_EQ(recv_n(fd, 3), "bye");
    EXPECT_EQ(recv_state(fd), 0);
    ::close(fd);
}

TEST(FaultProxy, RejectsBadAddresses) {
    auto bad = FaultProxy::start("not a host!", 1);
    EXPECT_FALSE(bad.is_ok());
    // A port in use: listen on the proxy's own port twice.
    auto first = FaultProxy::start("127.0.0.1", 1);
    ASSERT_TRUE(first.is_ok());
    auto second = FaultProxy::start("127.0.0.1", 1, first.value()->port());
    EXPECT_FALSE(second.is_ok());
    EXPECT_NE(second.status().to_string().find("listen"), std::string::npos)
        << second.status().to_string();
}

}  // namespace
}  // namespace comet::it
