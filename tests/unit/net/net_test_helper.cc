#include "net_test_helper.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>

#include "base/bytes.h"

namespace comet::net::testing {

void Latch::count_down(int64_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    count_ -= n;
    if (count_ <= 0) {
        cv_.notify_all();
    }
}

bool Latch::wait_for(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [this] { return count_ <= 0; });
}

int64_t Latch::count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return count_;
}

RawSocket::RawSocket(uint16_t port, std::chrono::milliseconds recv_timeout) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) {
        return;
    }
    timeval tv{};
    tv.tv_sec = recv_timeout.count() / 1000;
    tv.tv_usec = (recv_timeout.count() % 1000) * 1000;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        ::close(fd_);
        fd_ = -1;
    }
}

RawSocket::~RawSocket() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

bool RawSocket::readable_now() const {
    char c = 0;
    return ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
}

bool RawSocket::send_all(std::string_view bytes) {
    while (!bytes.empty()) {
        ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n <= 0) {
            return false;
        }
        bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

bool RawSocket::wait_closed() {
    char buf[4096];
    for (int i = 0; i < 1000; ++i) {  // bounded: each recv waits at most recv_timeout
        ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
        if (n == 0) {
            return true;
        }
        if (n < 0) {
            return errno == ECONNRESET || errno == EPIPE;
        }
    }
    return false;
}

Result<protocol::RemotingCommand> RawSocket::read_frame() {
    auto read_exact = [this](char* out, size_t len) -> bool {
        size_t got = 0;
        while (got < len) {
            ssize_t n = ::recv(fd_, out + got, len - got, 0);
            if (n <= 0) {
                return false;
            }
            got += static_cast<size_t>(n);
        }
        return true;
    };
    char len_buf[4];
    if (!read_exact(len_buf, 4)) {
        return Status::error(Errc::kUnavailable, "no frame: closed or timed out");
    }
    const uint32_t len = get_be32(reinterpret_cast<const uint8_t*>(len_buf));
    if (len > (64u << 20)) {
        return Status::error(Errc::kCorruption, "frame length {} too large", len);
    }
    std::string payload(len, '\0');
    if (!read_exact(payload.data(), len)) {
        return Status::error(Errc::kUnavailable, "truncated frame");
    }
    return protocol::decode_frame_payload(payload);
}

protocol::RemotingCommand make_request(int32_t code, const std::string& key,
                                       const std::string& body) {
    auto cmd = protocol::RemotingCommand::request(code);
    cmd.set_ext("k", key);
    cmd.body = body;
    return cmd;
}

uint16_t unused_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = 0;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
}

}  // namespace comet::net::testing
