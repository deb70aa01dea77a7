#include "net/remoting_server.h"

#include <spdlog/spdlog.h>

#include <future>

#include "base/check.h"
#include "base/log_tag.h"

namespace comet::net {

RemotingServer::RemotingServer(RemotingServerConfig config, Clock* clock)
    : config_(std::move(config)),
      clock_(clock),
      loops_(config_.loops ? config_.loops
                           : std::make_shared<IoLoopGroup>(config_.name,
                                                           std::max<size_t>(config_.io_threads, 1))),
      owns_loops_(!config_.loops),
      log_tag_(intern_log_tag(config_.log_tag)),
      acceptor_(loops_->context(0)) {}

RemotingServer::~RemotingServer() { shutdown(); }

void RemotingServer::register_processor(int32_t code, std::shared_ptr<RequestProcessor> processor,
                                        std::shared_ptr<ThreadPoolExecutor> executor) {
    MutexLock lock(mu_);
    COMET_CHECK(!started_, "register_processor({}) after start", code);
    processors_.register_processor(code, std::move(processor), std::move(executor));
}

void RemotingServer::register_inline_processor(int32_t code,
                                               std::shared_ptr<RequestProcessor> processor,
                                               bool borrows_body) {
    MutexLock lock(mu_);
    COMET_CHECK(!started_, "register_inline_processor({}) after start", code);
    processors_.register_inline(code, std::move(processor), borrows_body);
}

void RemotingServer::register_default_processor(std::shared_ptr<RequestProcessor> processor,
                                                std::shared_ptr<ThreadPoolExecutor> executor) {
    MutexLock lock(mu_);
    COMET_CHECK(!started_, "register_default_processor after start");
    processors_.register_default(std::move(processor), std::move(executor));
}

void RemotingServer::set_connection_listener(std::shared_ptr<ConnectionListener> listener) {
    MutexLock lock(mu_);
    COMET_CHECK(!started_, "set_connection_listener after start");
    listener_ = std::move(listener);
}

void RemotingServer::set_rpc_observer(const RpcObserver* observer) {
    MutexLock lock(mu_);
    COMET_CHECK(!started_, "set_rpc_observer after start");
    processors_.set_observer(observer);
}

Status RemotingServer::start() {
    {
        MutexLock lock(mu_);
        COMET_CHECK(!started_ && !stopping_, "RemotingServer {} started twice", config_.name);
    }
    asio::error_code ec;
    const auto address = asio::ip::make_address(config_.listen_host, ec);
    if (ec) {
        return Status::error(Errc::kInvalidArgument, "bad listen address '{}': {}",
                             config_.listen_host, ec.message());
    }
    const asio::ip::tcp::endpoint endpoint(address, config_.listen_port);
    const std::string where = config_.listen_host + ":" + std::to_string(config_.listen_port);
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) {
        acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    }
    if (!ec) {
        acceptor_.bind(endpoint, ec);
    }
    if (!ec) {
        acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) {
        asio::error_code ignored;
        acceptor_.close(ignored);
        return Status::error(Errc::kIoError, "{}: cannot listen on {}: {}", config_.name, where,
                             ec.message());
    }
    port_ = acceptor_.local_endpoint(ec).port();
    {
        MutexLock lock(mu_);
        started_ = true;
    }
    if (owns_loops_) {
        loops_->start();
    }
    asio::post(loops_->context(0), [this] { do_accept(); });
    spdlog::info("net: {} listening on {}:{}", config_.name, config_.listen_host, port_);
    return Status::ok();
}

uint16_t RemotingServer::port() const { return port_; }

void RemotingServer::do_accept() {
    const size_t index = loops_->next();
    acceptor_.async_accept(loops_->context(index), [this, index](const asio::error_code& ec,
                                                                 asio::ip::tcp::socket socket) {
        if (ec == asio::error::operation_aborted || !acceptor_.is_open()) {
            return;
        }
        if (ec) {
            // EMFILE and friends: keep the acceptor alive, try again.
            spdlog::warn("net: {} accept failed: {}", config_.name, ec.message());
            do_accept();
            return;
        }
        ScopedLogTag tag(log_tag_);
        auto conn = std::make_shared<Connection>(loops_, index, std::move(socket), handler(),
                                                 config_.connection, clock_);
        bool accepted = false;
        {
            MutexLock lock(mu_);
            if (!stopping_) {
                connections_.emplace(conn->id(), conn);
                accepted = true;
            }
        }
        if (accepted) {
            spdlog::debug("net: {} accepted connection {} from {}", config_.name, conn->id(),
                          conn->remote_address());
            if (listener_) {
                listener_->on_connected(conn);
            }
            conn->start();
        } else {
            conn->close(Status::error(Errc::kUnavailable, "server shutting down"));
        }
        do_accept();
    });
}

void RemotingServer::on_request(const ConnectionPtr& conn, protocol::RemotingCommand&& request) {
    ScopedLogTag tag(log_tag_);
    processors_.dispatch(conn, std::move(request));
}

void RemotingServer::set_read_batch_hooks(std::function<void()> begin, std::function<void()> end,
                                          std::function<void()> written) {
    batch_begin_ = std::move(begin);
    batch_end_ = std::move(end);
    batch_written_ = std::move(written);
}

void RemotingServer::on_read_batch_begin() {
    if (batch_begin_) {
        batch_begin_();
    }
}

void RemotingServer::on_read_batch_end() {
    if (batch_end_) {
        batch_end_();
    }
}

void RemotingServer::on_read_batch_written() {
    if (batch_written_) {
        batch_written_();
    }
}

void RemotingServer::on_closed(const ConnectionPtr& conn, const Status& reason) {
    ScopedLogTag tag(log_tag_);
    {
        MutexLock lock(mu_);
        connections_.erase(conn->id());
    }
    // The hook sees a server that no longer lists the connection.
    if (listener_) {
        listener_->on_closed(conn, reason);
    }
    closed_cv_.notify_all();
}

std::vector<ConnectionPtr> RemotingServer::connections() const {
    MutexLock lock(mu_);
    std::vector<ConnectionPtr> out;
    out.reserve(connections_.size());
    for (const auto& [id, conn] : connections_) {
        out.push_back(conn);
    }
    return out;
}

size_t RemotingServer::connection_count() const {
    MutexLock lock(mu_);
    return connections_.size();
}

void RemotingServer::shutdown() {
    {
        MutexLock lock(mu_);
        if (!started_ || stopping_) {
            return;
        }
        stopping_ = true;
    }
    COMET_CHECK(!IoLoopGroup::on_io_thread(), "RemotingServer::shutdown on an I/O thread");
    spdlog::info("net: {} shutting down ({} connections)", config_.name, connection_count());

    // 1. Stop accepting (the acceptor belongs to loop 0).
    std::promise<void> acceptor_closed;
    asio::post(loops_->context(0), [this, &acceptor_closed] {
        asio::error_code ignored;
        acceptor_.close(ignored);
        acceptor_closed.set_value();
    });
    acceptor_closed.get_future().wait();

    // 2. Finish the requests already handed to processors (their answers are queued).
    processors_.shutdown_executors();

    // 3. Flush and close every connection, bounded by shutdown_grace.
    for (const auto& conn : connections()) {
        conn->close_after_flush(Status::error(Errc::kUnavailable, "server shutting down"));
    }
    {
        std::unique_lock<Mutex> lock(mu_);
        closed_cv_.wait_for(lock, config_.shutdown_grace,
                            [this]() NO_THREAD_SAFETY_ANALYSIS { return connections_.empty(); });
    }
    for (const auto& conn : connections()) {
        conn->close(Status::error(Errc::kUnavailable, "server shut down"));
    }
    {
        std::unique_lock<Mutex> lock(mu_);
        closed_cv_.wait_for(lock, std::chrono::seconds(5),
                            [this]() NO_THREAD_SAFETY_ANALYSIS { return connections_.empty(); });
    }

    // 4. Join the I/O threads once they ran out of work; shared ones keep running for their
    // owner, once nothing of this server is queued on them.
    if (owns_loops_) {
        loops_->shutdown();
    } else {
        drain_shared_loops();
    }
    spdlog::info("net: {} shut down", config_.name);
}

void RemotingServer::drain_shared_loops() {
    for (int round = 0; round < 2; ++round) {
        for (size_t i = 0; i < loops_->size(); ++i) {
            loops_->run_and_wait(i, [] {});
        }
    }
}

}  // namespace comet::net
