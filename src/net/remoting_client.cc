#include "net/remoting_client.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <future>

#include "base/check.h"

namespace comet::net {

namespace {

int64_t millis_of(Duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

Status sync_on_io_thread_error() {
    return Status::error(Errc::kFailedPrecondition,
                         "blocking remoting call on an I/O thread would deadlock it");
}

}  // namespace

// One connect in progress: resolve (host names only), connect, bounded by connect_timeout.
// Lives on one loop; all its fields are touched only on that loop's thread.
struct RemotingClient::ConnectAttempt {
    ConnectAttempt(std::string a, size_t index, asio::io_context& ctx)
        : addr(std::move(a)), loop_index(index), socket(ctx), resolver(ctx), timer(ctx) {}
    std::string addr;
    size_t loop_index;
    asio::ip::tcp::socket socket;
    asio::ip::tcp::resolver resolver;
    asio::steady_timer timer;
    bool done = false;
};

Result<std::pair<std::string, uint16_t>> parse_address(const std::string& addr) {
    const size_t colon = addr.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == addr.size()) {
        return Status::error(Errc::kInvalidArgument, "bad address '{}': want host:port", addr);
    }
    unsigned port = 0;
    const char* first = addr.data() + colon + 1;
    const char* last = addr.data() + addr.size();
    auto [ptr, ec] = std::from_chars(first, last, port);
    if (ec != std::errc() || ptr != last || port == 0 || port > 65535) {
        return Status::error(Errc::kInvalidArgument, "bad address '{}': bad port", addr);
    }
    std::string host = addr.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);  // [::1]:9876
    }
    return std::make_pair(std::move(host), static_cast<uint16_t>(port));
}

RemotingClient::RemotingClient(RemotingClientConfig config, Clock* clock)
    : config_(std::move(config)),
      clock_(clock),
      loops_(config_.loops ? config_.loops
                           : std::make_shared<IoLoopGroup>(config_.name,
                                                           std::max<size_t>(config_.io_threads, 1))),
      owns_loops_(!config_.loops) {}

RemotingClient::~RemotingClient() { shutdown(); }

void RemotingClient::register_processor(int32_t code, std::shared_ptr<RequestProcessor> processor,
                                        std::shared_ptr<ThreadPoolExecutor> executor) {
    MutexLock lock(mu_);
    COMET_CHECK(!running_ && !stopped_, "register_processor({}) after start", code);
    processors_.register_processor(code, std::move(processor), std::move(executor));
}

void RemotingClient::start() {
    MutexLock lock(mu_);
    COMET_CHECK(!running_ && !stopped_, "RemotingClient {} started twice", config_.name);
    running_ = true;
    if (owns_loops_) {
        loops_->start();
    }
}

void RemotingClient::shutdown() {
    std::vector<ConnectionPtr> conns;
    std::vector<std::shared_ptr<ConnectAttempt>> attempts;
    {
        MutexLock lock(mu_);
        if (!running_) {
            return;
        }
        running_ = false;
        stopped_ = true;
        for (auto& [addr, ch] : channels_) {
            if (ch.conn) {
                conns.push_back(ch.conn);
            }
        }
        for (auto& weak : attempts_) {
            if (auto a = weak.lock()) {
                attempts.push_back(std::move(a));
            }
        }
        attempts_.clear();
        for (auto& a : attempts) {
            asio::post(loops_->context(a->loop_index), [this, a] {
                finish_connect(
                    a, Status::error(Errc::kUnavailable, "client {} shut down", config_.name));
            });
        }
    }
    COMET_CHECK(!IoLoopGroup::on_io_thread(), "RemotingClient::shutdown on an I/O thread");
    for (auto& conn : conns) {
        conn->close(Status::error(Errc::kUnavailable, "client {} shut down", config_.name));
    }
    processors_.shutdown_executors();
    if (owns_loops_) {
        loops_->shutdown();
    } else {
        drain_shared_loops();
    }
    MutexLock lock(mu_);
    channels_.clear();
}

void RemotingClient::drain_shared_loops() {
    // The closes and the connect failures above were posted to the loops; whatever they post in
    // turn (a connection's on_closed) follows them. Two rounds of an empty step on every loop,
    // each queued behind that work, leave no handler that refers to this client.
    for (int round = 0; round < 2; ++round) {
        for (size_t i = 0; i < loops_->size(); ++i) {
            loops_->run_and_wait(i, [] {});
        }
    }
}

void RemotingClient::get_connection(const std::string& addr, ConnectCallback callback) {
    ConnectionPtr ready;
    {
        MutexLock lock(mu_);
        if (!running_) {
            ready = nullptr;
        } else {
            Channel& ch = channels_[addr];
            if (ch.conn && ch.conn->is_open()) {
                ready = ch.conn;
            } else {
                ch.conn.reset();
                ch.waiters.push_back(std::move(callback));
                if (!ch.connecting) {
                    ch.connecting = true;
                    start_connect_locked(addr);
                }
                return;
            }
        }
    }
    if (ready) {
        callback(std::move(ready));
    } else {
        callback(Status::error(Errc::kUnavailable, "client {} is not running", config_.name));
    }
}

void RemotingClient::start_connect_locked(const std::string& addr) {
    const size_t index = loops_->next();
    auto attempt = std::make_shared<ConnectAttempt>(addr, index, loops_->context(index));
    // Forget attempts that finished, keep the live ones for shutdown().
    std::erase_if(attempts_, [](const std::weak_ptr<ConnectAttempt>& w) { return w.expired(); });
    attempts_.push_back(attempt);
    asio::post(loops_->context(index), [this, attempt] {
        auto parsed = parse_address(attempt->addr);
        if (!parsed.is_ok()) {
            finish_connect(attempt, parsed.status());
            return;
        }
        const auto& [host, port] = parsed.value();
        attempt->timer.expires_after(config_.connect_timeout);
        attempt->timer.async_wait([this, attempt](const asio::error_code& ec) {
            if (!ec) {
                finish_connect(
                    attempt,
                    Status::error(Errc::kUnavailable, "connect to {} timed out after {} ms",
                                  attempt->addr, millis_of(config_.connect_timeout)));
            }
        });
        auto on_connected = [this, attempt](const asio::error_code& ec) {
            if (ec) {
                finish_connect(attempt,
                               Status::error(Errc::kUnavailable, "connect to {} failed: {}",
                                             attempt->addr, ec.message()));
            } else {
                finish_connect(attempt, Status::ok());
            }
        };
        asio::error_code ec;
        const auto ip = asio::ip::make_address(host, ec);
        if (!ec) {
            attempt->socket.async_connect(asio::ip::tcp::endpoint(ip, port), on_connected);
            return;
        }
        // A host name: resolve first (asio runs the resolver on a private thread it joins).
        attempt->resolver.async_resolve(
            host, std::to_string(port),
            [this, attempt, on_connected](const asio::error_code& rec,
                                          asio::ip::tcp::resolver::results_type results) {
                if (attempt->done) {
                    return;
                }
                if (rec) {
                    finish_connect(attempt,
                                   Status::error(Errc::kUnavailable, "resolve {} failed: {}",
                                                 attempt->addr, rec.message()));
                    return;
                }
                asio::async_connect(
                    attempt->socket, results,
                    [on_connected](const asio::error_code& cec, const asio::ip::tcp::endpoint&) {
                        on_connected(cec);
                    });
            });
    });
}

void RemotingClient::finish_connect(const std::shared_ptr<ConnectAttempt>& attempt, Status status) {
    if (attempt->done) {
        return;
    }
    attempt->done = true;
    attempt->timer.cancel();
    attempt->resolver.cancel();
    ConnectionPtr conn;
    if (status.is_ok()) {
        conn = std::make_shared<Connection>(loops_, attempt->loop_index, std::move(attempt->socket),
                                            handler(), config_.connection, clock_);
    } else {
        asio::error_code ignored;
        attempt->socket.close(ignored);
    }
    std::vector<ConnectCallback> waiters;
    bool keep = false;
    {
        MutexLock lock(mu_);
        auto it = channels_.find(attempt->addr);
        if (it != channels_.end()) {
            it->second.connecting = false;
            waiters.swap(it->second.waiters);
            if (conn && running_) {
                it->second.conn = conn;
                keep = true;
            }
        }
        if (conn && !keep) {
            status = Status::error(Errc::kUnavailable, "client {} shut down", config_.name);
        }
    }
    if (conn) {
        if (keep) {
            spdlog::info("net: {} connected to {} (connection {}, local {})", config_.name,
                         attempt->addr, conn->id(), conn->local_address());
            conn->start();
        } else {
            conn->close(status);
            conn.reset();
        }
    } else {
        spdlog::warn("net: {}: {}", config_.name, status.to_string());
    }
    for (auto& waiter : waiters) {
        if (conn) {
            waiter(conn);
        } else {
            waiter(status);
        }
    }
}

void RemotingClient::on_request(const ConnectionPtr& conn, protocol::RemotingCommand&& request) {
    processors_.dispatch(conn, std::move(request));
}

void RemotingClient::on_closed(const ConnectionPtr& conn, const Status& reason) {
    MutexLock lock(mu_);
    for (auto it = channels_.begin(); it != channels_.end(); ++it) {
        if (it->second.conn == conn) {
            it->second.conn.reset();
            if (!it->second.connecting) {
                channels_.erase(it);
            }
            break;
        }
    }
}

void RemotingClient::invoke_async(const std::string& addr, protocol::RemotingCommand request,
                                  Duration timeout, ResponseCallback callback) {
    COMET_CHECK(callback != nullptr, "invoke_async without a callback");
    const TimePoint deadline = clock_->now() + timeout;
    // Connected already (the common case): straight to the connection, without wrapping the
    // request and callback in a connect continuation (an allocation per request).
    ConnectionPtr open;
    {
        MutexLock lock(mu_);
        if (running_) {
            auto it = channels_.find(addr);
            if (it != channels_.end()) {
                open = it->second.conn;
            }
        }
    }
    if (open && open->is_open()) {
        open->invoke_until(std::move(request), deadline, timeout, std::move(callback));
        return;
    }
    Clock* clock = clock_;
    get_connection(addr, [clock, deadline, timeout, request = std::move(request),
                          callback = std::move(callback)](Result<ConnectionPtr> conn) mutable {
        if (!conn.is_ok()) {
            callback(conn.status());
            return;
        }
        if (deadline <= clock->now()) {
            callback(Status::error(Errc::kTimeout, "connect to {} took the whole timeout {} ms",
                                   conn.value()->remote_address(), millis_of(timeout)));
            return;
        }
        conn.value()->invoke_until(std::move(request), deadline, timeout, std::move(callback));
    });
}

Result<protocol::RemotingCommand> RemotingClient::invoke_sync(const std::string& addr,
                                                              protocol::RemotingCommand request,
                                                              Duration timeout) {
    if (IoLoopGroup::on_io_thread()) {
        return sync_on_io_thread_error();
    }
    auto promise = std::make_shared<std::promise<Result<protocol::RemotingCommand>>>();
    auto future = promise->get_future();
    invoke_async(addr, std::move(request), timeout, [promise](Result<protocol::RemotingCommand> r) {
        promise->set_value(std::move(r));
    });
    // The callback always runs (timeout, close or shutdown complete it); the margin only guards
    // against a bug turning into a hung caller.
    if (future.wait_for(timeout + config_.connect_timeout + std::chrono::seconds(5)) !=
        std::future_status::ready) {
        return Status::error(Errc::kInternal, "request to {} never completed", addr);
    }
    return future.get();
}

void RemotingClient::invoke_oneway_async(const std::string& addr, protocol::RemotingCommand request,
                                         WriteCallback written) {
    invoke_oneway_async(addr, std::move(request), {}, std::move(written));
}

void RemotingClient::invoke_oneway_async(const std::string& addr, protocol::RemotingCommand request,
                                         std::vector<SharedBuffer> extra_body,
                                         WriteCallback written) {
    get_connection(addr, [request = std::move(request), extra = std::move(extra_body),
                          written = std::move(written)](Result<ConnectionPtr> conn) mutable {
        if (!conn.is_ok()) {
            if (written) {
                written(conn.status());
            }
            return;
        }
        conn.value()->invoke_oneway(std::move(request), std::move(extra), std::move(written));
    });
}

Status RemotingClient::invoke_oneway(const std::string& addr, protocol::RemotingCommand request,
                                     Duration timeout) {
    if (IoLoopGroup::on_io_thread()) {
        return sync_on_io_thread_error();
    }
    auto promise = std::make_shared<std::promise<Status>>();
    auto future = promise->get_future();
    invoke_oneway_async(addr, std::move(request),
                        [promise](Status st) { promise->set_value(std::move(st)); });
    if (future.wait_for(timeout) != std::future_status::ready) {
        return Status::error(Errc::kTimeout, "one-way request to {} not written within {} ms", addr,
                             millis_of(timeout));
    }
    return future.get();
}

ConnectionPtr RemotingClient::connection_to(const std::string& addr) const {
    MutexLock lock(mu_);
    auto it = channels_.find(addr);
    return it != channels_.end() ? it->second.conn : nullptr;
}

void RemotingClient::close_connection(const std::string& addr) {
    if (ConnectionPtr conn = connection_to(addr)) {
        conn->close(Status::error(Errc::kUnavailable, "closed by client {}", config_.name));
    }
}

void RemotingClient::close_connection_now(const std::string& addr) {
    if (ConnectionPtr conn = connection_to(addr)) {
        conn->close_now(Status::error(Errc::kUnavailable, "closed by client {}", config_.name));
    }
}

size_t RemotingClient::connection_count() const {
    MutexLock lock(mu_);
    size_t n = 0;
    for (const auto& [addr, ch] : channels_) {
        if (ch.conn) {
            ++n;
        }
    }
    return n;
}

Result<protocol::RemotingCommand> invoke_sync(Connection& conn, protocol::RemotingCommand request,
                                              Duration timeout) {
    if (IoLoopGroup::on_io_thread()) {
        return sync_on_io_thread_error();
    }
    auto promise = std::make_shared<std::promise<Result<protocol::RemotingCommand>>>();
    auto future = promise->get_future();
    conn.invoke_async(std::move(request), timeout, [promise](Result<protocol::RemotingCommand> r) {
        promise->set_value(std::move(r));
    });
    if (future.wait_for(timeout + std::chrono::seconds(5)) != std::future_status::ready) {
        return Status::error(Errc::kInternal, "request to {} never completed",
                             conn.remote_address());
    }
    return future.get();
}

}  // namespace comet::net
