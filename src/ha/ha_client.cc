#include "ha/ha_client.h"

#include <algorithm>
#include <array>
#include <deque>

#include "base/logging.h"
#include "ha/autoswitch_codec.h"
#include "ha/ha_codec.h"
#include "net/asio.h"
#include "net/io_loop.h"
#include "net/thread_pool_executor.h"

namespace comet::ha {

using asio::ip::tcp;

// Everything here runs on the client's loop (one io_context of the group, for the client's
// whole life). Handlers hold the Impl (shared_ptr) and check `stopping` before using `client`.
struct HaClient::Impl : std::enable_shared_from_this<HaClient::Impl> {
    Impl(HaClient& c, std::shared_ptr<net::IoLoopGroup> group, bool own)
        : loops(std::move(group)),
          own_loops(own),
          loop(loops->next()),
          io(loops->context(loop)),
          client(c),
          tick(io) {}

    // Declared first: destroyed last, after the sockets and timer that use its context.
    std::shared_ptr<net::IoLoopGroup> loops;
    const bool own_loops;
    const size_t loop;
    asio::io_context& io;
    HaClient& client;  // only while !stopping (set by shutdown's step on this loop)
    asio::steady_timer tick;
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
    static constexpr size_t kReadChunk = 64 * 1024;  // room offered to each read
    TransferDecoder decoder;
    AutoSwitchMasterStreamDecoder as_decoder;
    // Reports go out (classic: from connecting on; AutoSwitch: once the master's handshake was
    // applied and the consistent point reported).
    bool reporting = false;
    int64_t last_epoch = -1;  // AutoSwitch: epoch of the last local entry, -1 = none
    std::deque<std::string> out;  // front() is being written while `writing`
    bool writing = false;
    // AutoSwitch: EpochPort calls that cut files or fsync (truncate_to, begin_epoch) run here,
    // not on the loop (run_blocking). Shut down by HaClient::shutdown().
    std::unique_ptr<net::ThreadPoolExecutor> blocking;
    bool suspended = false;  // such a call is in flight: the stream waits for it
    bool back_is_report = false;  // out.back() is a report not yet handed to the socket

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
        back_is_report = false;
        decoder = TransferDecoder();
        as_decoder = AutoSwitchMasterStreamDecoder();
        reporting = false;
        next_connect = now() + client.config_.reconnect_interval;
        set_connected(false);
    }

    void connect() {
        if (stopping || sock || connecting || suspended || now() < next_connect)
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
        s->async_connect(tcp::endpoint(addr, port), [this, self = shared_from_this(),
                                                     s](std::error_code cec) {
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
            const HaClientConfig& cfg = client.config_;
            if (cfg.auto_switch) {
                // Reports wait for the master's handshake (on_master_handshake).
                send(encode_autoswitch_slave_handshake(
                    {cfg.sync_from_last_file, cfg.async_learner, cfg.broker_id}));
            } else {
                if (cfg.send_handshake) {
                    send(encode_handshake({cfg.broker_name, cfg.broker_id}));
                }
                reporting = true;
                report();
            }
            read_more(s);
        });
    }

    void send(std::string bytes, bool is_report = false) {
        // A newer report replaces one still waiting behind the write in flight: the master
        // only needs the latest offset (fewer acks to read and fewer put completions to run).
        if (is_report && back_is_report && out.size() > 1) {
            out.back() = std::move(bytes);
            return;
        }
        out.push_back(std::move(bytes));
        back_is_report = is_report;
        flush();
    }

    void flush() {
        if (writing || out.empty() || !sock)
            return;
        writing = true;
        auto s = sock;
        asio::async_write(*s, asio::buffer(out.front()), [this, self = shared_from_this(),
                                                          s](std::error_code ec, size_t) {
            if (stopping || s != sock)
                return;  // stopped, or connection replaced meanwhile
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
        send(client.config_.auto_switch ? encode_autoswitch_report(max) : encode_report(max),
             true);
    }

    // Reads straight into the decoder's buffer (no copy before the append into the log).
    void read_more(const std::shared_ptr<tcp::socket>& s) {
        char* room = client.config_.auto_switch ? as_decoder.prepare(kReadChunk)
                                                : decoder.prepare(kReadChunk);
        s->async_read_some(asio::buffer(room, kReadChunk), [this, self = shared_from_this(),
                                                            s](std::error_code ec, size_t n) {
            if (stopping || s != sock)
                return;
            if (ec) {
                disconnect(ec == asio::error::eof ? "closed by master" : "read failed");
                return;
            }
            last_read = now();
            if (client.config_.auto_switch) {
                as_decoder.commit(n);
                if (!drain_autoswitch())
                    return;
            } else {
                decoder.commit(n);
                if (!drain())
                    return;
            }
            if (suspended)
                return;  // resume() reads on
            if (reporting && client.store_.max_offset() != reported)
                report();
            read_more(s);
        });
    }

    // Applies every complete frame. Returns false after disconnecting on an error.
    bool drain() {
        for (;;) {
            auto r = decoder.next_view();
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
            if (!starts_at_local_end(f.offset) || !append(f.offset, f.data))
                return false;
        }
    }

    // Each frame must start exactly at the local CommitLog end; false after disconnecting.
    bool starts_at_local_end(int64_t offset) {
        const int64_t local = client.store_.max_offset();
        if (offset == local)
            return true;
        spdlog::error("HaClient: master {}:{} sent offset {} but the local CommitLog ends at {}",
                      host, port, offset, local);
        count_error();
        disconnect("offset mismatch");
        return false;
    }

    // Appends a frame's bytes and counts them; false after disconnecting.
    bool append(int64_t offset, std::string_view data) {
        Status st = client.store_.append(offset, data);
        if (!st.is_ok()) {
            spdlog::error("HaClient: append of {} bytes at {} failed: {}", data.size(), offset,
                          st.to_string());
            count_error();
            disconnect("append failed");
            return false;
        }
        MutexLock l(client.mu_);
        ++client.stats_.frames;
        client.stats_.bytes += static_cast<int64_t>(data.size());
        return true;
    }

    // AutoSwitch: the master's handshake, then its frames. Returns false after disconnecting.
    bool drain_autoswitch() {
        using Kind = AutoSwitchMasterStreamDecoder::Message::Kind;
        for (;;) {
            if (suspended)
                return true;  // resume() goes on once the blocking call is back
            auto r = as_decoder.next_view();
            if (!r.is_ok()) {
                spdlog::error("HaClient: bad message from master {}:{}: {}", host, port,
                              r.status().to_string());
                count_error();
                disconnect("protocol error");
                return false;
            }
            if (!r.value())
                return true;
            const auto& m = *r.value();
            if ((m.kind == Kind::kHandshake) == reporting) {
                spdlog::error("HaClient: master {}:{} sent {} {}", host, port,
                              m.kind == Kind::kHandshake ? "a second handshake" : "a frame",
                              reporting ? "while streaming" : "before its handshake");
                count_error();
                disconnect("protocol error");
                return false;
            }
            bool ok = m.kind == Kind::kHandshake ? on_master_handshake(m.handshake)
                                                 : on_autoswitch_frame(m.header, m.body);
            if (!ok)
                return false;
        }
    }

    // Runs `call` (an EpochPort call that cuts files or fsyncs) on the blocking executor
    // while the stream waits: no read, no frame applied, no reconnect until it is back. `then`
    // continues on this loop with its status unless the connection went meanwhile. `then`
    // must not own the Impl (it may be destroyed on the executor's thread).
    void run_blocking(std::function<Status()> call, std::function<void(Status)> then) {
        suspended = true;
        std::weak_ptr<Impl> weak = weak_from_this();
        bool queued = blocking->execute([call = std::move(call), then = std::move(then), weak,
                                         group = loops, index = loop, s = sock]() mutable {
            Status st = call();
            asio::post(group->context(index), [weak, s, st = std::move(st),
                                               then = std::move(then)]() mutable {
                std::shared_ptr<Impl> im = weak.lock();
                if (im == nullptr)
                    return;
                im->suspended = false;
                if (im->stopping || s != im->sock)
                    return;  // disconnected meanwhile; the tick reconnects
                then(std::move(st));
            });
        });
        if (!queued) {
            suspended = false;
            count_error();
            disconnect("EpochPort executor unavailable");
        }
    }

    // The stream goes on after a blocking call: the rest of the buffered frames, then reads.
    void resume() {
        if (!sock || suspended || !drain_autoswitch() || suspended)
            return;
        if (reporting && client.store_.max_offset() != reported)
            report();
        read_more(sock);
    }

    // Finds the consistent point, cuts the local log back to it (off the loop) and reports it.
    bool on_master_handshake(const AutoSwitchMasterHandshake& hs) {
        EpochPort& ep = *client.epochs_;
        std::vector<store::EpochEntry> local = ep.epochs();
        int64_t local_max = client.store_.max_offset();
        auto point = compute_consistent_point(local, local_max, hs.epochs, hs.max_offset);
        if (!point) {
            spdlog::error(
                "HaClient: no consistent point with master {}:{}: local epochs {} (max offset "
                "{}), master epochs {} (max offset {}); retrying in {} ms",
                host, port, format_epochs(local), local_max, format_epochs(hs.epochs),
                hs.max_offset, client.config_.reconnect_interval.count());
            {
                MutexLock l(client.mu_);
                ++client.stats_.no_consistent_point;
            }
            disconnect("no common epoch");
            return false;
        }
        // Also cut when the point is the end but the last local epoch, one the master never
        // had, starts there holding no data (RocketMQ keeps it; the master's next frames would
        // then carry an older epoch than the local last one).
        bool empty_tail_epoch =
            !local.empty() && local.back().start_offset >= *point &&
            std::find(hs.epochs.begin(), hs.epochs.end(), local.back()) == hs.epochs.end();
        if (*point < local_max || empty_tail_epoch) {
            const int64_t p = *point;
            EpochPort* port_ptr = client.epochs_;
            run_blocking([port_ptr, p] { return port_ptr->truncate_to(p); },
                         [this, hs, p, local_max, local](Status st) {
                             if (!st.is_ok()) {
                                 spdlog::error(
                                     "HaClient: truncating the local log from {} to the "
                                     "consistent point {} (master {}:{}) failed: {}",
                                     local_max, p, host, port, st.to_string());
                                 count_error();
                                 disconnect("truncate failed");
                                 return;
                             }
                             spdlog::info(
                                 "HaClient: truncated the local log from {} to {}: local "
                                 "epochs were {}, master {}:{} has {} (max offset {})",
                                 local_max, p, format_epochs(local), host, port,
                                 format_epochs(hs.epochs), hs.max_offset);
                             {
                                 MutexLock l(client.mu_);
                                 ++client.stats_.truncations;
                             }
                             if (finish_handshake(p))
                                 resume();
                         });
            return true;
        }
        return finish_handshake(*point);
    }

    // After any cut: the local end must be the point; then reports start.
    bool finish_handshake(int64_t point) {
        int64_t now_max = client.store_.max_offset();
        if (now_max != point) {
            spdlog::error("HaClient: after truncating to {} the local CommitLog ends at {}", point,
                          now_max);
            count_error();
            disconnect("truncate left the wrong end");
            return false;
        }
        std::vector<store::EpochEntry> local = client.epochs_->epochs();
        last_epoch = local.empty() ? -1 : local.back().epoch;
        spdlog::info("HaClient: master {}:{} handshake done, streaming from {} (local epochs {})",
                     host, port, point, format_epochs(local));
        {
            MutexLock l(client.mu_);
            ++client.stats_.handshakes;
        }
        reporting = true;
        report();
        return true;
    }

    // One transfer frame: epoch change (off the loop), append, confirm offset. `data` views the
    // decoder's buffer, which stays put while the stream waits for begin_epoch.
    bool on_autoswitch_frame(const AutoSwitchTransferHeader& h, std::string_view data) {
        int64_t local = client.store_.max_offset();
        if (data.empty()) {
            {
                MutexLock l(client.mu_);
                ++client.stats_.heartbeats;
            }
            // A heartbeat describing our end may start a newer epoch that has no data yet.
            if (h.offset == local && h.epoch > last_epoch && h.epoch_start_offset <= local) {
                begin_epoch_then(h, [this, h] { return confirm(h); });
                return true;
            }
        } else {
            if (!starts_at_local_end(h.offset))
                return false;
            if (h.epoch_start_offset > h.offset || h.epoch < last_epoch) {
                spdlog::error(
                    "HaClient: master {}:{} sent data at {} of epoch {} starting at {}; "
                    "the local last epoch is {}",
                    host, port, h.offset, h.epoch, h.epoch_start_offset, last_epoch);
                count_error();
                disconnect("bad epoch");
                return false;
            }
            if (h.epoch != last_epoch) {
                begin_epoch_then(h, [this, h, data] { return append(h.offset, data) && confirm(h); });
                return true;
            }
            if (!append(h.offset, data))
                return false;
        }
        return confirm(h);
    }

    bool confirm(const AutoSwitchTransferHeader& h) {
        if (h.confirm_offset >= 0) {  // -1: the master does not know it yet
            client.epochs_->set_confirm_offset(
                std::min(h.confirm_offset, client.store_.max_offset()));
        }
        return true;
    }

    // Starts the frame's epoch locally (the epoch file is replaced durably: off the loop), then
    // `rest` applies the frame and the stream resumes.
    void begin_epoch_then(const AutoSwitchTransferHeader& h, std::function<bool()> rest) {
        EpochPort* port_ptr = client.epochs_;
        run_blocking(
            [port_ptr, epoch = h.epoch, start = h.epoch_start_offset] {
                return port_ptr->begin_epoch(epoch, start);
            },
            [this, h, rest = std::move(rest)](Status st) {
                if (!st.is_ok()) {
                    spdlog::error("HaClient: starting epoch {} at {} (master {}:{}) failed: {}",
                                  h.epoch, h.epoch_start_offset, host, port, st.to_string());
                    count_error();
                    disconnect("begin epoch failed");
                    return;
                }
                spdlog::info("HaClient: epoch {} starts at {} (was {}), from master {}:{}",
                             h.epoch, h.epoch_start_offset, last_epoch, host, port);
                last_epoch = h.epoch;
                if (rest())
                    resume();
            });
    }

    void count_error() {
        MutexLock l(client.mu_);
        ++client.stats_.protocol_errors;
    }

    void on_tick() {
        if (sock) {
            if (now() - last_read >= client.config_.housekeeping_interval) {
                disconnect("master silent for haHousekeepingInterval");
            } else if (reporting && (now() - last_report >= client.config_.heartbeat_interval ||
                                     client.store_.max_offset() != reported)) {
                report();
            }
        }
        connect();
    }

    void arm_tick() {
        tick.expires_after(client.config_.tick_interval);
        tick.async_wait([this, self = shared_from_this()](std::error_code ec) {
            if (ec || stopping)
                return;
            on_tick();
            arm_tick();
        });
    }
};

HaClient::HaClient(HaClientConfig config, HaStorePort& store, Clock& clock, EpochPort* epochs)
    : config_(std::move(config)),
      store_(store),
      clock_(clock),
      epochs_(epochs) {}

Result<std::unique_ptr<HaClient>> HaClient::start(HaClientConfig config, HaStorePort& store,
                                                  Clock& clock, EpochPort* epochs,
                                                  std::shared_ptr<net::IoLoopGroup> loops) {
    if (config.broker_id <= 0) {
        return Status::error(Errc::kInvalidArgument, "brokerId={} must be > 0 on a slave",
                             config.broker_id);
    }
    if (config.master_host.empty() || config.master_port == 0) {
        return Status::error(Errc::kInvalidArgument, "haMasterAddress is not set");
    }
    if (config.auto_switch && epochs == nullptr) {
        return Status::error(Errc::kInvalidArgument,
                             "HaClient: AutoSwitch mode (controller mode) needs an EpochPort");
    }
    std::unique_ptr<HaClient> c(new HaClient(std::move(config), store, clock, epochs));
    const bool own = loops == nullptr;
    if (own) {
        loops = std::make_shared<net::IoLoopGroup>("HaClient", 1);
    }
    c->impl_ = std::make_shared<Impl>(*c, loops, own);
    std::shared_ptr<Impl> im = c->impl_;
    if (c->config_.auto_switch) {
        im->blocking = std::make_unique<net::ThreadPoolExecutor>("HaEpochStore", 1, 16);
    }
    im->host = c->config_.master_host;
    im->port = c->config_.master_port;
    asio::post(im->io, [im] {
        if (im->stopping)
            return;
        im->connect();
        im->arm_tick();
    });
    if (own) {
        loops->start();
    }
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
    std::shared_ptr<Impl> im = impl_;
    if (im == nullptr)
        return;
    // After this step no handler of the client's loop touches the store, the epochs or *this.
    im->loops->run_and_wait(im->loop, [im] {
        im->disconnect("shutdown");
        im->stopping = true;
        im->tick.cancel();
        if (im->pending) {
            std::error_code ec;
            im->pending->close(ec);
        }
    });
    // A cut or epoch-file write in flight finishes here; its continuation finds `stopping`.
    if (im->blocking)
        im->blocking->shutdown();
    if (im->own_loops)
        im->loops->shutdown();
}

void HaClient::update_master_address(std::string host, uint16_t port) {
    std::shared_ptr<Impl> im = impl_;
    asio::post(im->io, [im, host = std::move(host), port] {
        if (im->stopping || (im->host == host && im->port == port))
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
