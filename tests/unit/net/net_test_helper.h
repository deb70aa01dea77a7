#pragma once
// Test helpers for src/net: a bounded count-down latch, a blocking raw TCP socket with a receive
// timeout (for feeding servers bad bytes), and small command builders.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "base/status.h"
#include "protocol/remoting_command.h"

namespace comet::net::testing {

// Count-down latch whose wait is bounded (tests never wait forever).
class Latch {
public:
    explicit Latch(int64_t count) : count_(count) {}
    void count_down(int64_t n = 1);
    // True when the count reached zero within `timeout`.
    bool wait_for(std::chrono::milliseconds timeout);
    int64_t count() const;

private:
    mutable std::mutex mu_;
    std::condition_variable cv_;
    int64_t count_;
};

// Blocking IPv4 socket to 127.0.0.1:port; every receive waits at most `recv_timeout`.
class RawSocket {
public:
    RawSocket(uint16_t port, std::chrono::milliseconds recv_timeout = std::chrono::seconds(5));
    ~RawSocket();
    RawSocket(const RawSocket&) = delete;
    RawSocket& operator=(const RawSocket&) = delete;

    bool connected() const { return fd_ >= 0; }
    bool send_all(std::string_view bytes);
    // True when the peer closed the connection (EOF or reset) before the receive timeout.
    bool wait_closed();
    // Reads one whole frame; error on timeout, close or a bad frame.
    Result<protocol::RemotingCommand> read_frame();
    // Whether bytes are waiting to be read, without reading or waiting.
    bool readable_now() const;

private:
    int fd_ = -1;
};

// A request with `code`, ext field "k" = key and the given body.
protocol::RemotingCommand make_request(int32_t code, const std::string& key,
                                       const std::string& body = {});

// A port on 127.0.0.1 that nothing listens on (bound then closed).
uint16_t unused_port();

}  // namespace comet::net::testing
