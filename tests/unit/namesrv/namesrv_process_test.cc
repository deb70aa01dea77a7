// Process-level test: starts the real mqnamesrv binary on an ephemeral 127.0.0.1 port and talks
// to it over raw sockets with the captured RocketMQ 4.9.8 frames (sent byte-for-byte).
// Every wait is bounded; the child is always reaped.

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "protocol/route_bodies.h"
#include "namesrv_test_helper.h"
#include "protocol/remoting_command.h"
#include "protocol/response_code.h"

namespace comet::namesrv {
namespace {

namespace rs = protocol::ResponseCode;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string binary_path() { return std::string(COMET_BINARY_DIR) + "/apps/mqnamesrv/mqnamesrv"; }

// The port of "The Name Server boot success. serializeType=JSON, address <ip>:<port>\n".
std::optional<uint16_t> parse_boot_port(const std::string& out) {
    const std::string marker = "boot success. serializeType=JSON, address ";
    size_t at = out.find(marker);
    if (at == std::string::npos) {
        return std::nullopt;
    }
    size_t eol = out.find('\n', at);
    if (eol == std::string::npos) {
        return std::nullopt;  // line not complete yet
    }
    size_t colon = out.rfind(':', eol);
    if (colon == std::string::npos || colon < at) {
        return std::nullopt;
    }
    int port = 0;
    for (size_t i = colon + 1; i < eol; ++i) {
        if (out[i] < '0' || out[i] > '9') {
            return std::nullopt;
        }
        port = port * 10 + (out[i] - '0');
    }
    return port > 0 && port < 65536 ? std::optional<uint16_t>(static_cast<uint16_t>(port))
                                    : std::nullopt;
}

// A running mqnamesrv child. The destructor stops it (SIGTERM, then SIGKILL after 5 s).
class NamesrvProcess {
public:
    // Starts the binary with `args`; waits (bounded) for the boot line and parses the port.
    static std::unique_ptr<NamesrvProcess> start(const std::vector<std::string>& args,
                                                 const std::string& stderr_path) {
        auto p = std::unique_ptr<NamesrvProcess>(new NamesrvProcess());
        int out[2];
        if (::pipe(out) != 0) {
            ADD_FAILURE() << "pipe failed";
            return nullptr;
        }
        std::vector<std::string> argv_s{binary_path()};
        argv_s.insert(argv_s.end(), args.begin(), args.end());
        p->pid_ = ::fork();
        if (p->pid_ == 0) {
            ::dup2(out[1], STDOUT_FILENO);
            int err = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (err >= 0) {
                ::dup2(err, STDERR_FILENO);
            }
            ::close(out[0]);
            std::vector<char*> argv;
            for (auto& s : argv_s) {
                argv.push_back(s.data());
            }
            argv.push_back(nullptr);
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        ::close(out[1]);
        p->out_fd_ = out[0];
        return p;
    }

    ~NamesrvProcess() {
        if (pid_ > 0) {
            stop(SIGTERM);
        }
        if (out_fd_ >= 0) {
            ::close(out_fd_);
        }
    }

    // Reads stdout until the boot line; returns the port, or nullopt after `timeout`.
    std::optional<uint16_t> wait_boot(milliseconds timeout) {
        const auto deadline = Clock::now() + timeout;
        while (Clock::now() < deadline) {
            if (auto port = parse_boot_port(output_)) {
                return port;
            }
            pollfd pfd{out_fd_, POLLIN, 0};
            int left = static_cast<int>(
                std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count());
            if (::poll(&pfd, 1, std::max(left, 1)) <= 0) {
                continue;
            }
            char buf[512];
            ssize_t n = ::read(out_fd_, buf, sizeof(buf));
            if (n <= 0) {
                return std::nullopt;  // exited before booting
            }
            output_.append(buf, static_cast<size_t>(n));
        }
        return std::nullopt;
    }

    // Sends `sig` and reaps the child (SIGKILL after 5 s). Returns the exit status.
    int stop(int sig) {
        ::kill(pid_, sig);
        return wait_exit(milliseconds(5000));
    }

    // Waits for the child to exit on its own; -1 on timeout (then it is killed).
    int wait_exit(milliseconds timeout) {
        const auto deadline = Clock::now() + timeout;
        int status = 0;
        while (Clock::now() < deadline) {
            pid_t r = ::waitpid(pid_, &status, WNOHANG);
            if (r == pid_) {
                pid_ = -1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            std::this_thread::sleep_for(milliseconds(10));
        }
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        return -1;
    }

private:
    NamesrvProcess() = default;
    pid_t pid_ = -1;
    int out_fd_ = -1;
    std::string output_;
};

// A blocking TCP connection with a receive timeout, speaking whole remoting frames.
class RawConnection {
public:
    explicit RawConnection(uint16_t port) {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        timeval tv{5, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(port);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    }
    ~RawConnection() { close(); }
    void close() {
        if (fd_ >= 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }
    bool connected() const { return connected_; }

    bool send_bytes(const std::string& bytes) {
        return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
               static_cast<ssize_t>(bytes.size());
    }
    // One response frame, or an error (timeout, EOF, bad frame).
    Result<protocol::RemotingCommand> read_frame() {
        std::string len_bytes;
        COMET_RETURN_IF_ERROR(read_exact(4, &len_bytes));
        uint32_t len = (static_cast<uint8_t>(len_bytes[0]) << 24) |
                       (static_cast<uint8_t>(len_bytes[1]) << 16) |
                       (static_cast<uint8_t>(len_bytes[2]) << 8) |
                       static_cast<uint8_t>(len_bytes[3]);
        if (len > 16 * 1024 * 1024) {
            return Status(Errc::kCorruption, "frame too large");
        }
        std::string payload;
        COMET_RETURN_IF_ERROR(read_exact(len, &payload));
        return protocol::decode_frame_payload(payload);
    }
    Result<protocol::RemotingCommand> call(const std::string& frame_bytes) {
        if (!send_bytes(frame_bytes)) {
            return Status(Errc::kIoError, "send failed");
        }
        return read_frame();
    }
    // True when data or a close arrives within `timeout`.
    bool readable(milliseconds timeout) {
        pollfd pfd{fd_, POLLIN, 0};
        return ::poll(&pfd, 1, static_cast<int>(timeout.count())) > 0;
    }
    // True when the peer closed the connection within `timeout`.
    bool wait_peer_close(milliseconds timeout) {
        pollfd pfd{fd_, POLLIN, 0};
        if (::poll(&pfd, 1, static_cast<int>(timeout.count())) <= 0) {
            return false;
        }
        char c;
        return ::recv(fd_, &c, 1, MSG_DONTWAIT) == 0;
    }

private:
    Status read_exact(size_t n, std::string* out) {
        out->resize(n);
        size_t done = 0;
        while (done < n) {
            ssize_t r = ::recv(fd_, out->data() + done, n - done, 0);
            if (r == 0) {
                return Status(Errc::kUnavailable, "connection closed by the name server");
            }
            if (r < 0) {
                if (errno == EINTR) {
                    continue;
                }
                return Status(Errc::kTimeout, "no response within 5 s");
            }
            done += static_cast<size_t>(r);
        }
        return Status::ok();
    }
    int fd_ = -1;
    bool connected_ = false;
};

// Polls a route query until `pred(response)` holds or `timeout` passes.
template <typename Pred>
bool eventually(uint16_t port, const std::string& query, milliseconds timeout, Pred pred) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
        RawConnection c(port);
        auto r = c.call(query);
        if (r.is_ok() && pred(r.value())) {
            return true;
        }
        std::this_thread::sleep_for(milliseconds(50));
    }
    return false;
}

class NamesrvProcessTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(std::filesystem::exists(binary_path()))
            << binary_path() << " is missing: build the mqnamesrv target first";
        dir_ = testing::make_temp_dir("proc");
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    std::unique_ptr<NamesrvProcess> start(std::vector<std::string> extra, uint16_t* port) {
        std::string conf = dir_ + "/namesrv.conf";
        std::ofstream(conf) << "# written by namesrv_process_test\n"
                               "listenPort=0\n"
                               "listenHost=127.0.0.1\n"
                               "kvConfigPath="
                            << dir_ << "/kvConfig.json\n"
                            << "logDir=" << dir_ << "/logs\n";
        std::vector<std::string> args{"-c", conf};
        args.insert(args.end(), extra.begin(), extra.end());
        auto p = NamesrvProcess::start(args, dir_ + "/stderr.txt");
        if (!p) {
            return nullptr;
        }
        auto booted = p->wait_boot(milliseconds(10000));
        EXPECT_TRUE(booted.has_value()) << "mqnamesrv did not boot";
        *port = booted.value_or(0);
        return booted ? std::move(p) : nullptr;
    }

    std::string dir_;
    const std::string register_frame_ = testing::read_data_file("0001-c2s-REGISTER_BROKER.bin");
    const std::string route_query_ = testing::read_data_file("0006-c2s-GET_ROUTEINFO_BY_TOPIC.bin");
    const std::string expected_route_ =
        testing::read_frame("0008-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS.bin").body;
};

TEST_F(NamesrvProcessTest, RegisterRouteThenRemovalOnConnectionClose) {
    uint16_t port = 0;
    auto ns = start({}, &port);
    ASSERT_TRUE(ns);

    RawConnection broker(port);
    ASSERT_TRUE(broker.connected());
    auto reg = broker.call(register_frame_);  // the real bytes, unchanged
    ASSERT_TRUE(reg.is_ok()) << reg.status().to_string();
    EXPECT_EQ(reg->code, rs::kSuccess);
    EXPECT_TRUE(reg->is_response());

    RawConnection client(port);
    auto route = client.call(route_query_);
    ASSERT_TRUE(route.is_ok()) << route.status().to_string();
    EXPECT_EQ(route->code, rs::kSuccess);
    EXPECT_EQ(route->body, expected_route_);  // byte-identical to RocketMQ 4.9.8's answer

    // A one-way registration (flag 2, as sent on topic auto-creation) gets no answer but
    // adds its topics.
    const std::string auto_query = testing::read_data_file("0028-c2s-GET_ROUTEINFO_BY_TOPIC.bin");
    auto before = client.call(auto_query);
    ASSERT_TRUE(before.is_ok());
    EXPECT_EQ(before->code, rs::kTopicNotExist);
    ASSERT_TRUE(broker.send_bytes(testing::read_data_file("0033-c2s-REGISTER_BROKER-oneway.bin")));
    EXPECT_TRUE(eventually(port, auto_query, milliseconds(5000),
                           [](const auto& r) { return r.code == rs::kSuccess; }));
    EXPECT_FALSE(broker.readable(milliseconds(100)));  // no response, no close

    broker.close();  // the broker's connection drops: its routes go
    EXPECT_TRUE(eventually(port, route_query_, milliseconds(5000),
                           [](const auto& r) { return r.code == rs::kTopicNotExist; }));
    EXPECT_EQ(ns->stop(SIGTERM), 0);
}

TEST_F(NamesrvProcessTest, SilentBrokerExpiresAndItsConnectionIsClosed) {
    uint16_t port = 0;
    auto ns = start({"--brokerChannelExpiredTime=800", "--scanNotActiveBrokerInterval=100"},
                    &port);
    ASSERT_TRUE(ns);
    RawConnection broker(port);
    // Taken before the request: the name server stamps the registration later than this, so
    // the expiry can never come earlier than 800 ms after it (taking it after the response
    // made the check flaky by the round trip).
    const auto registered = Clock::now();
    auto reg = broker.call(register_frame_);
    ASSERT_TRUE(reg.is_ok()) << reg.status().to_string();
    RawConnection client(port);
    auto route = client.call(route_query_);
    ASSERT_TRUE(route.is_ok());
    EXPECT_EQ(route->code, rs::kSuccess);

    EXPECT_TRUE(broker.wait_peer_close(milliseconds(5000)));  // closed by the expiry scan
    // Not expired early (a few ms of slack: the name server stamps in whole milliseconds).
    EXPECT_GE(Clock::now() - registered, milliseconds(795));
    auto gone = client.call(route_query_);
    ASSERT_TRUE(gone.is_ok()) << gone.status().to_string();
    EXPECT_EQ(gone->code, rs::kTopicNotExist);
    EXPECT_EQ(ns->stop(SIGINT), 0);
}

TEST_F(NamesrvProcessTest, KvConfigSurvivesRestart) {
    protocol::RemotingCommand put = protocol::RemotingCommand::request(100);
    put.ext_fields = {{"namespace", "ORDER_TOPIC_CONFIG"}, {"key", "T"}, {"value", "broker-a:4"}};
    protocol::RemotingCommand get = protocol::RemotingCommand::request(101);
    get.ext_fields = {{"namespace", "ORDER_TOPIC_CONFIG"}, {"key", "T"}};
    {
        uint16_t port = 0;
        auto ns = start({}, &port);
        ASSERT_TRUE(ns);
        RawConnection c(port);
        auto r = c.call(protocol::encode_frame(put));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        EXPECT_EQ(r->code, rs::kSuccess);
        EXPECT_EQ(ns->stop(SIGTERM), 0);
    }
    uint16_t port = 0;
    auto ns = start({}, &port);
    ASSERT_TRUE(ns);
    RawConnection c(port);
    auto r = c.call(protocol::encode_frame(get));
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->code, rs::kSuccess);
    EXPECT_EQ(r->ext_fields["value"], "broker-a:4");
}

TEST_F(NamesrvProcessTest, BadArgumentsExitTwoWithoutStarting) {
    auto p = NamesrvProcess::start({"--listenPort=abc"}, dir_ + "/stderr.txt");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->wait_exit(milliseconds(5000)), 2);
    std::ifstream in(dir_ + "/stderr.txt");
    std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(err.find("listenPort"), std::string::npos) << err;
    EXPECT_NE(err.find("\"abc\""), std::string::npos) << err;

    auto missing = NamesrvProcess::start({"-c", dir_ + "/none.conf"}, dir_ + "/stderr2.txt");
    ASSERT_TRUE(missing);
    EXPECT_EQ(missing->wait_exit(milliseconds(5000)), 2);
}

}  // namespace
}  // namespace comet::namesrv
