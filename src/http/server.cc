#include "http/server.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <exception>
#include <unordered_set>

#include "net/asio.h"

namespace comet::http {
namespace {

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

// RFC 9110 tchar.
bool is_token(std::string_view s) {
    if (s.empty()) {
        return false;
    }
    return std::all_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return std::isalnum(u) != 0 || std::string_view("!#$%&'*+-.^_`|~").find(c) !=
                                           std::string_view::npos;
    });
}

ParsedHead fail(int status, std::string why) {
    ParsedHead out;
    out.error_status = status;
    out.error = std::move(why);
    out.keep_alive = false;
    return out;
}

std::string format_response(const Response& r, bool head_only, bool keep_alive) {
    std::string out;
    out.reserve(160 + (head_only ? 0 : r.body.size()));
    out += "HTTP/1.1 ";
    out += std::to_string(r.status);
    out += ' ';
    out += reason_phrase(r.status);
    out += "\r\nContent-Type: ";
    out += r.content_type;
    out += "\r\nContent-Length: ";
    out += std::to_string(r.body.size());
    if (r.status == 405) {
        out += "\r\nAllow: GET, HEAD";
    }
    out += keep_alive ? "\r\nConnection: keep-alive\r\n\r\n" : "\r\nConnection: close\r\n\r\n";
    if (!head_only) {
        out += r.body;
    }
    return out;
}

}  // namespace

std::string_view reason_phrase(int status) {
    switch (status) {
        case 200: return "OK";
        case 204: return "No Content";
        case 400: return "Bad Request";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 431: return "Request Header Fields Too Large";
        case 500: return "Internal Server Error";
        case 501: return "Not Implemented";
        case 503: return "Service Unavailable";
        case 505: return "HTTP Version Not Supported";
        default: return "Unknown";
    }
}

ParsedHead parse_request_head(std::string_view head) {
    const size_t line_end = head.find("\r\n");
    if (line_end == std::string_view::npos) {
        return fail(400, "request line not terminated by CRLF");
    }
    const std::string_view line = head.substr(0, line_end);
    const size_t sp1 = line.find(' ');
    const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
        return fail(400, "request line is not 'METHOD target HTTP/1.x'");
    }
    const std::string_view method = line.substr(0, sp1);
    const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    const std::string_view version = line.substr(sp2 + 1);
    if (!is_token(method)) {
        return fail(400, "bad method");
    }
    if (version.size() != 8 || version.substr(0, 7) != "HTTP/1." ||
        (version[7] != '0' && version[7] != '1')) {
        return fail(version.substr(0, 5) == "HTTP/" ? 505 : 400, "only HTTP/1.0 and HTTP/1.1");
    }
    if (target.empty() || target.front() != '/') {
        return fail(400, "request target must be an absolute path");
    }
    ParsedHead out;
    out.keep_alive = version[7] == '1';
    bool has_body = false;
    size_t pos = line_end + 2;
    while (pos < head.size()) {
        const size_t end = head.find("\r\n", pos);
        if (end == std::string_view::npos) {
            return fail(400, "header line not terminated by CRLF");
        }
        const std::string_view field = head.substr(pos, end - pos);
        pos = end + 2;
        if (field.empty()) {
            break;  // the blank line ending the head
        }
        const size_t colon = field.find(':');
        if (colon == std::string_view::npos || !is_token(field.substr(0, colon))) {
            return fail(400, "malformed header field");
        }
        const std::string_view name = field.substr(0, colon);
        const std::string_view value = trim(field.substr(colon + 1));
        if (iequals(name, "Connection")) {
            // A comma-separated list of options; only close / keep-alive matter here.
            std::string_view rest = value;
            while (!rest.empty()) {
                const size_t comma = rest.find(',');
                const std::string_view opt = trim(rest.substr(0, comma));
                if (iequals(opt, "close")) {
                    out.keep_alive = false;
                } else if (iequals(opt, "keep-alive")) {
                    out.keep_alive = true;
                }
                rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
            }
        } else if (iequals(name, "Content-Length")) {
            if (value != "0") {
                has_body = true;
            }
        } else if (iequals(name, "Transfer-Encoding")) {
            has_body = true;
        }
    }
    out.request.method = std::string(method);
    const size_t q = target.find('?');
    out.request.path = std::string(target.substr(0, q));
    if (q != std::string_view::npos) {
        out.request.query = std::string(target.substr(q + 1));
    }
    if (method != "GET" && method != "HEAD") {
        ParsedHead refused = fail(405, "only GET and HEAD");
        refused.request = std::move(out.request);
        return refused;
    }
    if (has_body) {
        return fail(400, "a GET request must not carry a body");
    }
    return out;
}

struct Server::Impl {
    asio::io_context ctx;
    asio::ip::tcp::acceptor acceptor{ctx};
    std::unordered_set<std::shared_ptr<Connection>> connections;  // server thread only
    const std::map<std::string, Handler, std::less<>>* routes = nullptr;
    bool stopping = false;  // server thread only
};

// One accepted socket. Lives on the server thread only; kept alive by Impl::connections and by
// its pending asio handlers.
class Server::Connection : public std::enable_shared_from_this<Server::Connection> {
public:
    Connection(Impl* impl, asio::ip::tcp::socket socket)
        : impl_(impl), socket_(std::move(socket)), idle_timer_(impl->ctx) {}

    void start() { handle_buffered(); }

    void close() {
        asio::error_code ignored;
        idle_timer_.cancel();
        socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
        socket_.close(ignored);
        impl_->connections.erase(shared_from_this());
    }

private:
    // Answers every complete request already buffered (pipelining), else reads more.
    void handle_buffered() {
        const size_t end = in_.find("\r\n\r\n");
        if (end == std::string::npos) {
            if (in_.size() >= kMaxRequestBytes) {
                reply(Response{431, "text/plain; charset=utf-8", "request head too large\n"},
                      false, false);
                return;
            }
            read_more();
            return;
        }
        if (end + 4 > kMaxRequestBytes) {
            reply(Response{431, "text/plain; charset=utf-8", "request head too large\n"}, false,
                  false);
            return;
        }
        ParsedHead parsed = parse_request_head(std::string_view(in_).substr(0, end + 4));
        in_.erase(0, end + 4);
        if (parsed.error_status != 0) {
            reply(Response{parsed.error_status, "text/plain; charset=utf-8", parsed.error + "\n"},
                  parsed.request.method == "HEAD", false);
            return;
        }
        Response response;
        const auto it = impl_->routes->find(parsed.request.path);
        if (it == impl_->routes->end()) {
            response = Response{404, "text/plain; charset=utf-8", "not found\n"};
        } else {
            try {
                response = it->second(parsed.request);
            } catch (const std::exception& e) {
                spdlog::warn("http: handler for {} failed: {}", parsed.request.path, e.what());
                response = Response{500, "text/plain; charset=utf-8", "internal error\n"};
            }
        }
        reply(response, parsed.request.method == "HEAD", parsed.keep_alive);
    }

    void read_more() {
        idle_timer_.expires_after(kIdleTimeout);
        idle_timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
            if (!ec) {
                self->close();
            }
        });
        socket_.async_read_some(asio::buffer(chunk_), [self = shared_from_this()](
                                                          const asio::error_code& ec, size_t n) {
            self->idle_timer_.cancel();
            if (ec || self->impl_->stopping) {
                self->close();
                return;
            }
            self->in_.append(self->chunk_.data(), n);
            self->handle_buffered();
        });
    }

    void reply(const Response& response, bool head_only, bool keep_alive) {
        out_ = format_response(response, head_only, keep_alive);
        asio::async_write(socket_, asio::buffer(out_),
                          [self = shared_from_this(), keep_alive](const asio::error_code& ec,
                                                                  size_t) {
                              if (ec || !keep_alive || self->impl_->stopping) {
                                  self->close();
                                  return;
                              }
                              self->handle_buffered();
                          });
    }

    Impl* impl_;
    asio::ip::tcp::socket socket_;
    asio::steady_timer idle_timer_;
    std::array<char, 4096> chunk_{};
    std::string in_;   // bytes read and not yet consumed
    std::string out_;  // the answer being written
};

Server::Server(std::string host, uint16_t port)
    : host_(std::move(host)), port_(port), impl_(std::make_unique<Impl>()) {
    impl_->routes = &routes_;
}

Server::~Server() { stop(); }

void Server::route(std::string path, Handler handler) {
    COMET_CHECK(!started_, "http: route({}) after start", path);
    routes_[std::move(path)] = std::move(handler);
}

Status Server::start() {
    COMET_CHECK(!started_ && !stopped_, "http: server on {}:{} started twice", host_, port_);
    asio::error_code ec;
    const auto address = asio::ip::make_address(host_, ec);
    if (ec) {
        return Status::error(Errc::kInvalidArgument, "http: bad listen address '{}': {}", host_,
                             ec.message());
    }
    const asio::ip::tcp::endpoint endpoint(address, port_);
    auto& acceptor = impl_->acceptor;
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) {
        acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    }
    if (!ec) {
        acceptor.bind(endpoint, ec);
    }
    if (!ec) {
        acceptor.listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) {
        asio::error_code ignored;
        acceptor.close(ignored);
        return Status::error(Errc::kIoError, "http: cannot listen on {}:{}: {}", host_, port_,
                             ec.message());
    }
    port_ = acceptor.local_endpoint(ec).port();
    started_ = true;
    do_accept();
    thread_ = std::thread([this] {
        pthread_setname_np(pthread_self(), "HttpServer");
        impl_->ctx.run();
    });
    spdlog::info("http: serving on {}:{}", host_, port_);
    return Status::ok();
}

void Server::stop() {
    if (stopped_) {
        return;
    }
    stopped_ = true;
    if (!started_) {
        return;
    }
    asio::post(impl_->ctx, [impl = impl_.get()] {
        impl->stopping = true;
        asio::error_code ignored;
        impl->acceptor.close(ignored);
        // close() erases from the set: iterate over a copy.
        const auto connections = impl->connections;
        for (const auto& conn : connections) {
            conn->close();
        }
    });
    // Every pending operation now completes with an error and issues no new one, so the loop
    // runs out of work and the thread ends.
    thread_.join();
    spdlog::info("http: stopped serving on {}:{}", host_, port_);
}

uint16_t Server::port() const { return port_; }

void Server::do_accept() {
    impl_->acceptor.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
        if (ec == asio::error::operation_aborted || impl_->stopping) {
            return;
        }
        if (!ec) {
            if (impl_->connections.size() >= kMaxConnections) {
                asio::error_code ignored;
                socket.close(ignored);
            } else {
                auto conn = std::make_shared<Connection>(impl_.get(), std::move(socket));
                impl_->connections.insert(conn);
                conn->start();
            }
        }
        do_accept();
    });
}

}  // namespace comet::http
