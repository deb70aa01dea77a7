// Server against a plain POSIX socket client: routing, query split, error answers, keep-alive,
// pipelining, HEAD, size bound, lifecycle.
#include "http/server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>

namespace comet::http {
namespace {

// Blocking socket to 127.0.0.1:port; every receive waits at most 5 s.
class Client {
public:
    explicit Client(uint16_t port) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        timeval tv{5, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(port);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }
    ~Client() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    bool connected() const { return fd_ >= 0; }

    bool send_all(const std::string& bytes) {
        size_t off = 0;
        while (off < bytes.size()) {
            const ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
            if (n <= 0) {
                return false;
            }
            off += static_cast<size_t>(n);
        }
        return true;
    }

    // Reads one response: the head, then Content-Length bytes of body (none when `head_only`).
    // Empty string on EOF or timeout before a complete response.
    std::string read_response(bool head_only = false) {
        for (int i = 0; i < 1000; ++i) {
            const size_t end = buf_.find("\r\n\r\n");
            if (end != std::string::npos) {
                size_t body = 0;
                const size_t cl = buf_.find("Content-Length: ");
                if (cl != std::string::npos && cl < end) {
                    body = std::stoul(buf_.substr(cl + 16));
                }
                const size_t total = end + 4 + (head_only ? 0 : body);
                if (buf_.size() >= total) {
                    std::string out = buf_.substr(0, total);
                    buf_.erase(0, total);
                    return out;
                }
            }
            if (!read_some()) {
                return {};
            }
        }
        return {};
    }

    // True when the server closed the connection (EOF) within the receive timeout.
    bool closed_by_peer() {
        char c;
        return ::recv(fd_, &c, 1, 0) == 0;
    }

private:
    bool read_some() {
        char tmp[4096];
        const ssize_t n = ::recv(fd_, tmp, sizeof(tmp), 0);
        if (n <= 0) {
            return false;
        }
        buf_.append(tmp, static_cast<size_t>(n));
        return true;
    }

    int fd_ = -1;
    std::string buf_;
};

std::string status_line(const std::string& response) {
    return response.substr(0, response.find("\r\n"));
}

std::string body_of(const std::string& response) {
    return response.substr(response.find("\r\n\r\n") + 4);
}

class ServerTest : public ::testing::Test {
protected:
    void SetUp() override {
        server_.route("/hello", [this](const Request& req) {
            ++calls_;
            std::lock_guard<std::mutex> lock(mu_);
            last_query_ = req.query;
            return Response{200, "text/plain; version=0.0.4", "hi " + req.method + "\n"};
        });
        server_.route("/throws", [](const Request&) -> Response {
            throw std::runtime_error("boom");
        });
        ASSERT_TRUE(server_.start().is_ok());
        ASSERT_NE(server_.port(), 0);
    }

    Server server_{"127.0.0.1", 0};
    std::string last_query() {
        std::lock_guard<std::mutex> lock(mu_);
        return last_query_;
    }

    std::atomic<int> calls_{0};
    std::mutex mu_;
    std::string last_query_;  // written on the server thread
};

TEST_F(ServerTest, GetAnswersWithBodyAndHeaders) {
    Client c(server_.port());
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.send_all("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"));
    const std::string r = c.read_response();
    EXPECT_EQ(status_line(r), "HTTP/1.1 200 OK");
    EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4\r\n"), std::string::npos);
    EXPECT_NE(r.find("Content-Length: 7\r\n"), std::string::npos);
    EXPECT_EQ(body_of(r), "hi GET\n");
    EXPECT_EQ(last_query(), "");
}

TEST_F(ServerTest, QueryIsSplitFromPath) {
    Client c(server_.port());
    ASSERT_TRUE(c.send_all("GET /hello?name[]=a&x=1 HTTP/1.1\r\n\r\n"));
    EXPECT_EQ(status_line(c.read_response()), "HTTP/1.1 200 OK");
    EXPECT_EQ(last_query(), "name[]=a&x=1");
}

TEST_F(ServerTest, UnknownPathIs404AndPrefixDoesNotMatch) {
    Client c(server_.port());
    ASSERT_TRUE(c.send_all("GET /nope HTTP/1.1\r\n\r\n"));
    EXPECT_EQ(status_line(c.read_response()), "HTTP/1.1 404 Not Found");
    ASSERT_TRUE(c.send_all("GET /hello/more HTTP/1.1\r\n\r\n"));
    EXPECT_EQ(status_line(c.read_response()), "HTTP/1.1 404 Not Found");
    EXPECT_EQ(calls_.load(), 0);
}

TEST_F(ServerTest, PostIs405WithAllowAndCloses) {
    Client c(server_.port());
    ASSERT_TRUE(c.send_all("POST /hello HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"));
    const std::string r = c.read_response();
    EXPECT_EQ(status_line(r), "HTTP/1.1 405 Method Not Allowed");
    EXPECT_NE(r.find("Allow: GET, HEAD\r\n"), std::string::npos);
    EXPECT_NE(r.find("Connection: close\r\n"), std::string::npos);
    EXPECT_TRUE(c.closed_by_peer());
    EXPECT_EQ(calls_.load(), 0);
}

TEST_F(ServerTest, MalformedRequestIs400AndCloses) {
    Client c(server_.port());
    ASSERT_TRUE(c.send_all("GARBAGE\r\n\r\n"));
    EXPECT_EQ(status_line(c.read_response()), "HTTP/1.1 400 Bad Request");
    EXPECT_TRUE(c.closed_by_peer());
}

TEST_F(ServerTest, GetWithBodyIs400) {
    Client c(server_.port());
    ASSERT_TRUE(c.send_all("GET /hello HTTP/1.1\r\nContent-Length: 2\r\n\r\nab"));
    EXPECT_EQ(status_line(c.read_response()), "HTTP/1.1 400 Bad Request");
    EXPECT_EQ(calls_.load(), 0);
}

TEST_F(ServerTest, OversizedHeadIsRefusedAndCloses) {
    Client c(server_.port());
    std::string req = "GET /hello HTTP/1.1\r\nX-Pad: ";
    req.append(Server::kMaxRequestBytes, 'a');
    req += "\r\n\r\n";
    c.send_all(req);  // the server may close before reading it all
    EXPECT_EQ(status_line(c.read_response()), "HTTP/1.1 431 Request Header Fields Too Large");
    EXPECT_EQ(calls_.load(), 0);
}

TEST_F(ServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
    Client c(server_.port());
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(c.send_all("GET /hello HTTP/1.1\r\n\r\n"));
        const std::string r = c.read_response();
        EXPECT_EQ(status_line(r), "HTTP/1.1 200 OK");
        EXPECT_NE(r.find("Connection: keep-alive\r\n"), std::string::npos);
    }
    EXPECT_EQ(calls_.load(), 3);
}

TEST_F(ServerTest, PipelinedRequestsAreAnsweredInOrder) {
    Client c(server_.port());
    ASSERT_TRUE(c.send_all("GET /hello HTTP/1.1\r\n\r\nHEAD /hello HTTP/1.1\r\n\r\n"
                           "GET /nope HTTP/1.1\r\n\r\n"));
    EXPECT_EQ(body_of(c.read_response()), "hi GET\n");
    const std::string head = c.read_response(/*head_only=*/true);
    EXPECT_EQ(status_line(head), "HTTP/1.1 200 OK");
    EXPECT_NE(head.find("Content-Length: 8\r\n"), std::string::npos);
    EXPECT_EQ(body_of(head), "");
    EXPECT_EQ(status_line(c.read_response()), "HTTP/1.1 404 Not Found");
}

TEST_F(ServerTest, ConnectionCloseAndHttp10Close) {
    {
        Client c(server_.port());
        ASSERT_TRUE(c.send_all("GET /hello HTTP/1.1\r\nConnection: close\r\n\r\n"));
        EXPECT_NE(c.read_response().find("Connection: close\r\n"), std::string::npos);
        EXPECT_TRUE(c.closed_by_peer());
    }
    {
        Client c(server_.port());
        ASSERT_TRUE(c.send_all("GET /hello HTTP/1.0\r\n\r\n"));
        EXPECT_EQ(status_line(c.read_response()), "HTTP/1.1 200 OK");
        EXPECT_TRUE(c.closed_by_peer());
    }
    {
        Client c(server_.port());
        ASSERT_TRUE(c.send_all("GET /hello HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
        EXPECT_NE(c.read_response().find("Connection: keep-alive\r\n"), std::string::npos);
        ASSERT_TRUE(c.send_all("GET /hello HTTP/1.0\r\n\r\n"));
        EXPECT_EQ(status_line(c.read_response()), "HTTP/1.1 200 OK");
    }
}

TEST_F(ServerTest, ThrowingHandlerIs500) {
    Client c(server_.port());
    ASSERT_TRUE(c.send_all("GET /throws HTTP/1.1\r\n\r\n"));
    EXPECT_EQ(status_line(c.read_response()), "HTTP/1.1 500 Internal Server Error");
    // The server keeps serving.
    ASSERT_TRUE(c.send_all("GET /hello HTTP/1.1\r\n\r\n"));
    EXPECT_EQ(status_line(c.read_response()), "HTTP/1.1 200 OK");
}

TEST_F(ServerTest, RequestSplitAcrossWritesIsAssembled) {
    Client c(server_.port());
    ASSERT_TRUE(c.send_all("GET /hel"));
    ASSERT_TRUE(c.send_all("lo HTTP/1.1\r\nHost: x\r"));
    ASSERT_TRUE(c.send_all("\n\r\n"));
    EXPECT_EQ(body_of(c.read_response()), "hi GET\n");
}

TEST_F(ServerTest, StopClosesOpenConnectionsAndIsIdempotent) {
    Client c(server_.port());
    ASSERT_TRUE(c.send_all("GET /hello HTTP/1.1\r\n\r\n"));
    EXPECT_EQ(status_line(c.read_response()), "HTTP/1.1 200 OK");
    server_.stop();
    EXPECT_TRUE(c.closed_by_peer());
    server_.stop();
    Client after(server_.port());
    EXPECT_FALSE(after.connected());
}

TEST(ServerLifecycle, BindFailureAndBadHostAreErrors) {
    Server first("127.0.0.1", 0);
    ASSERT_TRUE(first.start().is_ok());
    Server second("127.0.0.1", first.port());
    const Status st = second.start();
    EXPECT_EQ(st.code(), Errc::kIoError);
    EXPECT_NE(st.message().find(std::to_string(first.port())), std::string::npos);
    Server bad("not-an-address", 0);
    EXPECT_EQ(bad.start().code(), Errc::kInvalidArgument);
    Server never_started("127.0.0.1", 0);
    never_started.stop();
}

TEST(ParseRequestHead, Cases) {
    auto ok = parse_request_head("GET /metrics?a=b HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(ok.error_status, 0);
    EXPECT_EQ(ok.request.method, "GET");
    EXPECT_EQ(ok.request.path, "/metrics");
    EXPECT_EQ(ok.request.query, "a=b");
    EXPECT_FALSE(ok.keep_alive);
    EXPECT_TRUE(parse_request_head("GET / HTTP/1.1\r\n\r\n").keep_alive);
    EXPECT_EQ(parse_request_head("GET / HTTP/2.0\r\n\r\n").error_status, 505);
    EXPECT_EQ(parse_request_head("GET http://h/ HTTP/1.1\r\n\r\n").error_status, 400);
    EXPECT_EQ(parse_request_head("GET  / HTTP/1.1\r\n\r\n").error_status, 400);
    EXPECT_EQ(parse_request_head("GET / HTTP/1.1\r\nNoColon\r\n\r\n").error_status, 400);
    EXPECT_EQ(parse_request_head("DELETE / HTTP/1.1\r\n\r\n").error_status, 405);
    EXPECT_EQ(parse_request_head("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")
                  .error_status,
              400);
    EXPECT_EQ(parse_request_head("GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n").error_status, 0);
}

}  // namespace
}  // namespace comet::http
