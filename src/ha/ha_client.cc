#include "ha/ha_client.h"

#include <pthread.h>

#include <array>
#include <deque>

#include "base/logging.h"
#include "ha/ha_codec.h"
#include "net/asio.h"

namespace comet::ha {

using asio::ip::tcp;

// Everything here runs on the "HaClient" io thread.
struct HaClient::Impl {
    explicit Impl(HaClient& c) : client(c) {}

    HaClient& client;
    asio::io_context io;
    asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
    asio::steady_timer tick{io};
    std::shared_ptr<tcp::socket> sock;     // null when disconnected; replaced per connection
    std::shared_ptr<tcp::socket> pending;  // socket of a connect in progress
    bool connecting = false;
    bool stopping = false;
    std::string host;
    uint16_t port = 0;
    TimePoint next_connect{};
    TimePoint last_read{};
    TimePoint last_report{};
    int64_t reported = -1;
    std::array<char, 64 * 1024> rbuf{};
    TransferDecoder decoder;
    std::deque<std::string> out;
    bool writing = false;

    TimePoint now() const { return client.clock_.now(); }

    void set_connected(bool v) {
        MutexLock l(client.mu_);
        client.stats_.connected = v;
        if (v)
            ++client.stats_.connects;
    }

    void disconnect(const char* why) {
        if (!sock)
            return;
        spdlog::info("HaClient: closing connection to master {}:{}: {}", host, port, why);
        std::error_code ec;
        sock->shutdown(tcp::socket::shutdown_both, ec);
        sock->close(ec);
        sock.reset();
        out.clear();
        writing = false;
        decoder = TransferDecoder();
        next_connect = now() + client.config_.reconnect_interval;
        set_connected(false);
    }

    void connect() {
        if (stopping || sock || connecting || now() < next_connect)
            return;
        std::error_code ec;
        auto addr = asio::ip::make_address(host, ec);
        if (ec) {
            spdlog::error("HaClient: bad master HA host '{}': {}", host, ec.message());
            next_connect = now() + client.config_.reconnect_interval;
            return;
        }
        connecting = true;
        auto s = std::make_shared<tcp::socket>(io);
        pending = s;
        s->async_connect(tcp::endpoint(addr, port), [this, s](std::error_code cec) {
            connecting = false;
            pending.reset();
            if (stopping)
                return;
            if (cec) {
                spdlog::debug("HaClient: connect to {}:{} failed: {}", host, port, cec.message());
                next_connect = now() + client.config_.reconnect_interval;
                MutexLock l(client.mu_);
                ++client.stats_.connect_failures;
                return;
            }
            std::error_code nec;
            s->set_option(tcp::no_delay(true), nec);
            sock = s;
            last_read = now();
            reported = -1;
            set_connected(true);
            spdlog::info("HaClient: connected to master {}:{}", host, port);
            if (client.config_.send_handshake) {
                send(encode_handshake({client.config_.broker_name, client.config_.broker_id}));
            }
            report();
            read_more(s);
        });
    }

    void send(std::string bytes) {
        out.push_back(std::move(bytes));
        flush();
    }

    void flush() {
        if (writing || out.empty() || !sock)
            return;
        writing = true;
        auto s = sock;
        asio::async_write(*s, asio::buffer(out.front()), [this, s](std::error_code ec, size_t) {
            if (s != sock)
                return;  // connection replaced meanwhile
            writing = false;
            if (ec) {
                disconnect("write failed");
                return;
            }
            out.pop_front();
            flush();
        });
    }

    void report() {
        int64_t max = client.store_.max_offset();
        reported = max;
        last_report = now();
        send(encode_report(max));
    }

    void read_more(const std::shared_ptr<tcp::socket>& s) {
        s->async_read_some(asio::buffer(rbuf), [this, s](std::error_code ec, size_t n) {
            if (s != sock)
                return;
            if (ec) {
                disconnect(ec == asio::error::eof ? "closed by master" : "read failed");
                return;
            }
            last_read = now();
            decoder.feed(std::string_view(rbuf.data(), n));
            if (!drain())
                return;
            if (client.store_.max_offset() != reported)
                report();
            read_more(s);
        });
    }

    // Applies every complete frame. Returns false after disconnecting on an error.
    bool drain() {
        for (;;) {
            auto r = decoder.next();
            if (!r.is_ok()) {
                spdlog::error("HaClient: bad frame from master {}:{}: {}", host, port,
                              r.status().to_string());
                count_error();
                disconnect("protocol error");
                return false;
            }
            if (!r.value())
                return true;
            const auto& f = *r.value();
            if (f.data.empty()) {
                MutexLock l(client.mu_);
                ++client.stats_.heartbeats;
                continue;
            }
            int64_t local = client.store_.max_offset();
            if (f.offset != local) {
                spdlog::error(
                    "HaClient: master {}:{} sent offset {} but the local CommitLog ends at {}",
                    host, port, f.offset, local);
                count_error();
                disconnect("offset mismatch");
                return false;
            }
            Status st = client.store_.append(f.offset, f.data);
            if (!st.is_ok()) {
                spdlog::error("HaClient: append of {} bytes at {} failed: {}", f.data.size(),
                              f.offset, st.to_string());
                count_error();
                disconnect("append failed");
                return false;
            }
            MutexLock l(client.mu_);
            ++client.stats_.frames;
            client.stats_.bytes += static_cast<int64_t>(f.data.size());
        }
    }

    void count_error() {
        MutexLock l(client.mu_);
        ++client.stats_.protocol_errors;
    }

    void on_tick() {
        if (sock) {
            if (now() - last_read >= client.config_.housekeeping_interval) {
                disconnect("master silent for haHousekeepingInterval");
            } else if (now() - last_report >= client.config_.heartbeat_interval ||
                       client.store_.max_offset() != reported) {
                report();
            }
        }
        connect();
    }

    void arm_tick() {
        tick.expires_after(client.config_.tick_interval);
        tick.async_wait([this](std::error_code ec) {
            if (ec || stopping)
                return;
            on_tick();
            arm_tick();
        });
    }
};

HaClient::HaClient(HaClientConfig config, HaStorePort& store, Clock& clock)
    : config_(std::move(config)),
      store_(store),
      clock_(clock),
      impl_(std::make_unique<Impl>(*this)) {}

Result<std::unique_ptr<HaClient>> HaClient::start(HaClientConfig config, HaStorePort& store,
                                                  Clock& clock) {
    if (config.broker_id <= 0) {
        return Status::error(Errc::kInvalidArgument, "brokerId={} must be > 0 on a slave",
                             config.broker_id);
    }
    if (config.master_host.empty() || config.master_port == 0) {
        return Status::error(Errc::kInvalidArgument, "haMasterAddress is not set");
    }
    std::unique_ptr<HaClient> c(new HaClient(std::move(config), store, clock));
    Impl* im = c->impl_.get();
    im->host = c->config_.master_host;
    im->port = c->config_.master_port;
    asio::post(im->io, [im] {
        im->connect();
        im->arm_tick();
    });
    c->thread_ = std::thread([im] {
        pthread_setname_np(pthread_self(), "HaClient");
        im->io.run();
    });
    return c;
}

HaClient::~HaClient() { shutdown(); }

void HaClient::shutdown() {
    {
        MutexLock l(mu_);
        if (stopped_)
            return;
        stopped_ = true;
    }
    Impl* im = impl_.get();
    asio::post(im->io, [im] {
        im->stopping = true;
        im->tick.cancel();
        if (im->pending) {
            std::error_code ec;
            im->pending->close(ec);
        }
        im->disconnect("shutdown");
    });
    im->work.reset();
    if (thread_.joinable())
        thread_.join();
}

void HaClient::update_master_address(std::string host, uint16_t port) {
    Impl* im = impl_.get();
    asio::post(im->io, [im, host = std::move(host), port] {
        if (im->host == host && im->port == port)
            return;
        im->disconnect("master address changed");
        if (im->pending) {  // its handler sees the abort and retries at the new address
            std::error_code ec;
            im->pending->close(ec);
        }
        im->host = host;
        im->port = port;
        im->next_connect = im->now();
        im->connect();
    });
}

HaClientStats HaClient::stats() const {
    MutexLock l(mu_);
    return stats_;
}

}  // namespace comet::ha
