#pragma once
// Server: a small HTTP/1.1 server for GET (and HEAD) on exact paths, for operational endpoints
// such as /metrics. Not a general web server: no request bodies, no chunked encoding, no TLS.
//
// Owner: the process component that exposes the endpoint (broker, namesrv, controller); one
// instance per listening port.
// Threads: one "HttpServer" thread runs the asio io_context: accepting, parsing, calling the
// handlers and writing answers. Handlers therefore run one at a time, on that thread, and should
// answer quickly (a slow handler delays every other client of this server, nothing else).
// route() before start(); start()/stop()/port() from the owner's thread.
// Limits: a request head (request line + headers) is at most kMaxRequestBytes (431 otherwise),
// at most kMaxConnections at once (further connections are closed at once), an idle connection
// is closed after kIdleTimeout. Keep-alive follows HTTP/1.1 (HTTP/1.0: close unless asked).
// Answers: 404 unknown path, 405 method other than GET/HEAD (with Allow), 400 malformed
// request or a request carrying a body, 500 when a handler throws.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "base/status.h"

namespace comet::http {

struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
};

struct Request {
    std::string method;  // "GET" or "HEAD" (others never reach a handler)
    std::string path;    // the request target up to '?', not percent-decoded
    std::string query;   // after '?', without it; empty when absent
};

using Handler = std::function<Response(const Request&)>;

class Server {
public:
    static constexpr size_t kMaxRequestBytes = 8192;
    static constexpr size_t kMaxConnections = 64;
    static constexpr std::chrono::seconds kIdleTimeout{60};

    // host: a numeric IPv4/IPv6 address to bind ("0.0.0.0", "127.0.0.1"). port 0 = ephemeral.
    Server(std::string host, uint16_t port);
    ~Server();  // stop()
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Exact path match (no prefix matching). Requires: before start().
    void route(std::string path, Handler handler);
    // Binds and serves on its own thread. kInvalidArgument for a bad host, kIoError naming the
    // address when the bind fails. Requires: called at most once.
    Status start();
    // Closes the listener and every connection, then joins the thread. Idempotent; safe without
    // start().
    void stop();
    // The bound port after start() (the ephemeral one when constructed with 0).
    uint16_t port() const;

private:
    struct Impl;
    class Connection;

    void do_accept();  // server thread (and start(), before the thread runs)

    std::string host_;
    uint16_t port_;
    std::map<std::string, Handler, std::less<>> routes_;
    std::unique_ptr<Impl> impl_;
    std::thread thread_;
    bool started_ = false;  // owner thread only
    bool stopped_ = false;  // owner thread only
};

// Parses one request head (everything up to and including the blank line). Pure; exposed for
// tests. Returns the request and whether the client wants the connection kept open, or a
// status code (400 malformed, 405 method, 501 transfer coding) with a reason.
struct ParsedHead {
    Request request;
    bool keep_alive = true;
    int error_status = 0;  // 0: ok
    std::string error;     // why, for the 4xx body
};
ParsedHead parse_request_head(std::string_view head);

// "200 OK", "404 Not Found", ...: the status line's code and reason phrase.
std::string_view reason_phrase(int status);

}  // namespace comet::http
