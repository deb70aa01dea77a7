#include "ha/ha_service.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <optional>
#include <set>

#include "base/check.h"
#include "base/logging.h"
#include "base/progress_log.h"
#include "ha/autoswitch_codec.h"
#include "ha/ha_codec.h"
#include "net/asio.h"
#include "net/io_loop.h"

namespace comet::ha {

using asio::ip::tcp;

// Shared by the service and every handler on the loops (shared_ptr). Fields marked "home"
// are touched on the home loop only, a Slot's non-atomic fields on its own loop only.
struct HaService::Impl {
    // One per loop of the group: the connections bound to it.
    struct Slot {
        std::set<std::shared_ptr<Connection>> conns;  // its loop only
        bool stopping = false;                        // its loop only; set by shutdown's step
        // conns.size(), written by the loop, read by puts: no wake-up without slaves.
        std::atomic<size_t> count{0};
        // A wake-up is queued and not yet run: puts coalesce into one post per loop.
        std::atomic<bool> notify_pending{false};
    };

    Impl(std::shared_ptr<net::IoLoopGroup> group, bool own, HaService* service)
        : loops(std::move(group)),
          own_loops(own),
          svc(service),
          home(loops->next()),
          acceptor(loops->context(home)),
          tick(loops->context(home)) {
        for (size_t i = 0; i < loops->size(); ++i) {
            slots.push_back(std::make_unique<Slot>());
        }
    }

    // Declared first: destroyed last, after the sockets and timers that use its contexts.
    std::shared_ptr<net::IoLoopGroup> loops;
    const bool own_loops;
    // Valid until shutdown() returns; a handler uses it only after checking its loop's
    // stopping flag (home_stopping / Slot::stopping / Connection::closed_).
    HaService* const svc;
    const size_t home;       // the loop of the acceptor and the housekeeping tick
    tcp::acceptor acceptor;  // home
    asio::steady_timer tick;  // home
    bool home_stopping = false;  // home
    std::vector<std::unique_ptr<Slot>> slots;  // fixed after construction
    std::atomic<uint64_t> next_id{1};
};

// One slave connection; lives on the io thread only (no locks).
class HaService::Connection : public std::enable_shared_from_this<HaService::Connection> {
public:
    Connection(std::shared_ptr<Impl> im, size_t loop, tcp::socket sock, uint64_t id)
        : im_(std::move(im)),
          loop_(loop),
          svc_(*im_->svc),
          sock_(std::move(sock)),
          timer_(im_->loops->context(loop)),
          id_(id) {
        std::error_code ec;
        auto ep = sock_.remote_endpoint(ec);
        info_.connection_id = id;
        info_.address = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
        last_read_ = last_write_ = svc_.clock_.now();
    }

    // On its loop: registers with the loop's slot and starts reading and ticking.
    void start() {
        Impl::Slot& slot = *im_->slots[loop_];
        if (slot.stopping) {  // the service stopped while this connection was handed over
            abandon();
            return;
        }
        slot.conns.insert(shared_from_this());
        slot.count.store(slot.conns.size(), std::memory_order_release);
        read_more();
        arm_timer();
    }

    // Shutdown's step found it on a stopped loop before start(): close without telling the
    // service (no slave entry exists yet).
    void abandon() {
        closed_ = true;
        std::error_code ec;
        sock_.close(ec);
    }

    // Housekeeping and sending; called by the tick and by notify_new_data().
    void poll() {
        if (closed_) return;
        if (svc_.clock_.now() - last_read_ >= svc_.config_.housekeeping_interval) {
            spdlog::warn("HaService: slave {} (brokerId {}) silent for {} ms, dropping it",
                         info_.address, info_.broker_id,
                         svc_.config_.housekeeping_interval.count());
            close(false);
            return;
        }
        try_send();
    }

    void close(bool rejected) {
        if (closed_) return;
        closed_ = true;
        std::error_code ec;
        sock_.shutdown(tcp::socket::shutdown_both, ec);
        sock_.close(ec);
        timer_.cancel();
        Impl::Slot& slot = *im_->slots[loop_];
        slot.conns.erase(shared_from_this());
        slot.count.store(slot.conns.size(), std::memory_order_release);
        svc_.on_slave_closed(id_, rejected);
    }

    bool closed() const { return closed_; }

private:
    // The per-connection tick: housekeeping, heartbeats and data the wake-ups missed.
    void arm_timer() {
        timer_.expires_after(svc_.config_.tick_interval);
        auto self = shared_from_this();
        timer_.async_wait([self](std::error_code ec) {
            if (ec || self->closed_) return;
            self->poll();
            if (!self->closed_) self->arm_timer();
        });
    }

    void read_more() {
        auto self = shared_from_this();
        sock_.async_read_some(asio::buffer(rbuf_), [self](std::error_code ec, size_t n) {
            if (ec || self->closed_) {
                if (!self->closed_) {
                    spdlog::info("HaService: slave {} disconnected: {}", self->info_.address,
                                 ec.message());
                }
                self->close(false);
                return;
            }
            self->last_read_ = self->svc_.clock_.now();
            std::string_view in(self->rbuf_.data(), n);
            if (self->svc_.config_.auto_switch) {
                self->as_decoder_.feed(in);
                if (!self->process_autoswitch_input())
                    return;
            } else {
                self->decoder_.feed(in);
                if (!self->process_input())
                    return;
            }
            self->read_more();
            self->try_send();
        });
    }

    // Returns false when the connection was closed.
    bool process_input() {
        for (;;) {
            auto r = decoder_.next();
            if (!r.is_ok()) {
                spdlog::error("HaService: slave {}: {}; closing", info_.address,
                              r.status().to_string());
                close(true);
                return false;
            }
            if (!r.value()) return true;
            const auto& ev = *r.value();
            if (ev.kind == SlaveStreamDecoder::Event::Kind::kHandshake) {
                if (ev.handshake.broker_name != svc_.config_.broker_name ||
                    ev.handshake.broker_id <= 0) {
                    spdlog::error(
                        "HaService: slave {} claims brokerName '{}' brokerId {}; this master "
                        "serves '{}' (slaves need brokerId > 0); closing",
                        info_.address, ev.handshake.broker_name, ev.handshake.broker_id,
                        svc_.config_.broker_name);
                    close(true);
                    return false;
                }
                info_.broker_id = ev.handshake.broker_id;
                handshaken_ = true;
                continue;
            }
            if (!handshaken_ && svc_.config_.require_handshake) {
                spdlog::error("HaService: slave {} sent no handshake (requireHandshake); closing",
                              info_.address);
                close(true);
                return false;
            }
            if (!on_report(ev.offset)) return false;
        }
    }

    // AutoSwitch: handshake first and once, then reports. Returns false when closed.
    bool process_autoswitch_input() {
        for (;;) {
            auto r = as_decoder_.next();
            if (!r.is_ok()) {
                spdlog::error("HaService: slave {} (brokerId {}): {}; closing", info_.address,
                              info_.broker_id, r.status().to_string());
                close(true);
                return false;
            }
            if (!r.value())
                return true;
            const auto& ev = *r.value();
            if (ev.kind == AutoSwitchSlaveStreamDecoder::Event::Kind::kHandshake) {
                if (handshaken_ || ev.handshake.broker_id <= 0) {
                    spdlog::error(
                        "HaService: slave {} sent {} AutoSwitch handshake with brokerId {} "
                        "(slaves need brokerControllerId > 0); closing",
                        info_.address, handshaken_ ? "a second" : "an", ev.handshake.broker_id);
                    close(true);
                    return false;
                }
                info_.broker_id = ev.handshake.broker_id;
                info_.async_learner = ev.handshake.async_learner;
                sync_from_last_file_ = ev.handshake.sync_from_last_file;
                handshaken_ = true;
                send_handshake_reply();
                continue;
            }
            if (!handshaken_) {
                spdlog::error(
                    "HaService: slave {} reported offset {} before its AutoSwitch "
                    "handshake; closing",
                    info_.address, ev.offset);
                close(true);
                return false;
            }
            if (!on_report(ev.offset))
                return false;
        }
    }

    // AutoSwitch: the master's epoch list and max offset, before any frame.
    void send_handshake_reply() {
        COMET_CHECK(!writing_, "HaService: handshake reply to {} while a write is pending",
                    info_.address);
        AutoSwitchMasterHandshake hs;
        hs.epochs = svc_.epochs_->epochs();
        hs.max_offset = svc_.store_.max_offset();
        hs.last_epoch = hs.epochs.empty() ? 0 : static_cast<int32_t>(hs.epochs.back().epoch);
        spdlog::info(
            "HaService: slave {} (brokerId {}, syncFromLastFile {}, asyncLearner {}) "
            "handshake; master epochs {} max offset {}",
            info_.address, info_.broker_id, sync_from_last_file_, info_.async_learner,
            format_epochs(hs.epochs), hs.max_offset);
        header_ = encode_autoswitch_master_handshake(hs);
        chunk_.reset();
        writing_ = true;
        last_write_ = svc_.clock_.now();
        auto self = shared_from_this();
        asio::async_write(sock_, asio::buffer(header_),
                          [self](std::error_code ec, size_t) { self->on_written(ec); });
    }

    // Caught-up bookkeeping (SlaveInfo::caught_up_at) for an ack.
    void note_ack(int64_t ack) {
        TimePoint now = svc_.clock_.now();
        if (ack >= svc_.store_.max_offset()) {
            info_.caught_up_at = now;
            sends_.clear();
            return;
        }
        // Differs from RocketMQ (which keeps only the last send): every send still in flight is
        // remembered, so a pipelined slave that is one frame behind still counts as caught up
        // as of the frame it did get.
        while (!sends_.empty() && sends_.front().master_max <= ack) {
            info_.caught_up_at = std::max(info_.caught_up_at, sends_.front().at);
            sends_.pop_front();
        }
    }

    bool on_report(int64_t offset) {
        if (!got_request_) {
            int64_t master_max = svc_.store_.max_offset();
            if (offset > master_max) {
                spdlog::error(
                    "HaService: slave {} (brokerId {}) asks for offset {} beyond the master's "
                    "end {}; closing",
                    info_.address, info_.broker_id, offset, master_max);
                close(true);
                return false;
            }
            got_request_ = true;
            // Comet: an empty slave copies from the first byte still on disk (RocketMQ starts at
            // the last file); see docs/replication.md. AutoSwitch as RocketMQ: the first byte
            // still on disk, or the last file's start when the slave asked for it.
            if (offset != 0) {
                next_offset_ = offset;
            } else if (svc_.config_.auto_switch && sync_from_last_file_) {
                next_offset_ = svc_.store_.last_file_start();
            } else {
                next_offset_ = svc_.store_.min_offset();
            }
            sent_end_ = next_offset_;
            info_.ack_offset = offset;
            note_ack(offset);
            info_.sent_offset = sent_end_;
            spdlog::info("HaService: slave {} (brokerId {}) starts at offset {}", info_.address,
                         info_.broker_id, next_offset_);
            if (master_max - next_offset_ >= kCatchUpLogBytes) {
                // A slave far behind (new, or down for long): log its catch-up every few
                // seconds until it reaches the end the master had when it connected.
                catch_up_to_ = master_max;
                catch_up_.emplace(fmt::format("HaService: slave {} (brokerId {}) catch-up",
                                              info_.address, info_.broker_id),
                                  next_offset_, master_max, svc_.clock_);
            }
            svc_.on_slave_update(id_, info_);
            return true;
        }
        if (offset > sent_end_) {
            spdlog::error(
                "HaService: slave {} (brokerId {}) acked offset {} but only {} was sent on this "
                "connection; closing",
                info_.address, info_.broker_id, offset, sent_end_);
            close(true);
            return false;
        }
        info_.ack_offset = offset;
        note_ack(offset);
        if (catch_up_.has_value()) {
            if (offset >= catch_up_to_) {
                (void)catch_up_->finish(offset);
                catch_up_.reset();
            } else {
                (void)catch_up_->update(offset);
            }
        }
        svc_.on_slave_update(id_, info_);
        return true;
    }

    void try_send() {
        if (closed_ || writing_ || !got_request_) return;
        if (svc_.config_.auto_switch) {
            try_send_autoswitch();
            return;
        }
        auto chunk = svc_.store_.read(next_offset_, svc_.config_.transfer_batch_size);
        TimePoint now = svc_.clock_.now();
        if (!chunk) {
            if (now - last_write_ < svc_.config_.heartbeat_interval) return;
            header_ = encode_transfer_header(next_offset_, 0);
            chunk_.reset();
            write(0);
            return;
        }
        header_ = encode_transfer_header(next_offset_, static_cast<int32_t>(chunk->bytes.size()));
        chunk_ = std::move(chunk);
        write(static_cast<int64_t>(chunk_->bytes.size()));
    }

    // AutoSwitch frames: the data of one epoch at a time, cut at the next epoch's start.
    void try_send_autoswitch() {
        std::vector<store::EpochEntry> epochs = svc_.epochs_->epochs();
        // The entry covering next_offset_: the last one starting at or before it.
        auto it = std::upper_bound(
            epochs.begin(), epochs.end(), next_offset_,
            [](int64_t off, const store::EpochEntry& e) { return off < e.start_offset; });
        const store::EpochEntry* cur = it == epochs.begin() ? nullptr : &*std::prev(it);
        std::optional<HaChunk> chunk;
        if (cur != nullptr) {
            int64_t max_bytes = svc_.config_.transfer_batch_size;
            if (it != epochs.end()) {
                max_bytes = std::min(max_bytes, it->start_offset - next_offset_);
            }
            chunk = svc_.store_.read(next_offset_, max_bytes);
        } else if (!warned_no_epoch_) {
            warned_no_epoch_ = true;
            spdlog::error(
                "HaService: no epoch entry covers offset {} for slave {} (brokerId {}); master "
                "epochs {}; sending heartbeats only",
                next_offset_, info_.address, info_.broker_id, format_epochs(epochs));
        }
        AutoSwitchTransferHeader h;
        h.offset = next_offset_;
        h.confirm_offset = svc_.epochs_->confirm_offset();
        // A heartbeat without a covering entry names the first one, as RocketMQ does.
        const store::EpochEntry* label = cur != nullptr   ? cur
                                         : epochs.empty() ? nullptr
                                                          : &epochs.front();
        if (label != nullptr) {
            h.epoch = static_cast<int32_t>(label->epoch);
            h.epoch_start_offset = label->start_offset;
        }
        if (!chunk) {
            if (svc_.clock_.now() - last_write_ < svc_.config_.heartbeat_interval)
                return;
            header_ = encode_autoswitch_transfer_header(h, 0);
            chunk_.reset();
            write(0);
            return;
        }
        header_ = encode_autoswitch_transfer_header(h, static_cast<int32_t>(chunk->bytes.size()));
        chunk_ = std::move(chunk);
        write(static_cast<int64_t>(chunk_->bytes.size()));
    }

    void write(int64_t body_size) {
        writing_ = true;
        next_offset_ += body_size;
        sent_end_ = next_offset_;  // handed to the socket: the slave may ack up to here
        info_.sent_offset = sent_end_;
        last_write_ = svc_.clock_.now();
        if (body_size > 0) {
            remember_send(svc_.store_.max_offset(), last_write_);
        }
        std::array<asio::const_buffer, 2> bufs{
            asio::buffer(header_),
            chunk_ ? asio::buffer(chunk_->bytes.data(), chunk_->bytes.size())
                   : asio::const_buffer()};
        auto self = shared_from_this();
        asio::async_write(sock_, bufs,
                          [self](std::error_code ec, size_t) { self->on_written(ec); });
    }

    void on_written(std::error_code ec) {
        writing_ = false;
        chunk_.reset();
        if (ec) {
            if (!closed_) {
                spdlog::info("HaService: write to slave {} failed: {}", info_.address,
                             ec.message());
            }
            close(false);
            return;
        }
        try_send();  // pipelined: keep streaming without waiting for the ack
    }

    // A data frame went out while the master's max offset was `master_max`. Equal maxima keep
    // the later time; a slave that never acks stops being tracked after kMaxSends frames.
    void remember_send(int64_t master_max, TimePoint at) {
        if (!sends_.empty() && sends_.back().master_max == master_max) {
            sends_.back().at = at;
        } else if (sends_.size() < kMaxSends) {
            sends_.push_back({master_max, at});
        }
    }

    struct Send {
        int64_t master_max;
        TimePoint at;
    };
    static constexpr size_t kMaxSends = 256;
    static constexpr int64_t kCatchUpLogBytes = 64LL * 1024 * 1024;

    std::shared_ptr<Impl> im_;  // first: outlives the socket and timer below
    const size_t loop_;         // the loop this connection is bound to
    HaService& svc_;            // only while !closed_ (see Impl::svc)
    tcp::socket sock_;
    asio::steady_timer timer_;
    uint64_t id_;
    SlaveInfo info_;
    std::array<char, 4096> rbuf_{};
    SlaveStreamDecoder decoder_;
    AutoSwitchSlaveStreamDecoder as_decoder_;
    std::deque<Send> sends_;  // data frames not yet acked, oldest first
    bool sync_from_last_file_ = false;
    bool warned_no_epoch_ = false;
    bool closed_ = false;
    bool handshaken_ = false;
    bool got_request_ = false;
    bool writing_ = false;
    int64_t next_offset_ = 0;
    int64_t sent_end_ = 0;
    std::optional<ProgressLog> catch_up_;  // a far-behind slave's catch-up, until catch_up_to_
    int64_t catch_up_to_ = 0;
    TimePoint last_read_;
    TimePoint last_write_;
    std::string header_;
    std::optional<HaChunk> chunk_;
};

HaService::HaService(HaServiceConfig config, HaStorePort& store, Clock& clock, EpochPort* epochs)
    : config_(std::move(config)),
      store_(store),
      clock_(clock),
      epochs_(epochs),
      group_transfer_(clock) {}

Result<std::unique_ptr<HaService>> HaService::start(HaServiceConfig config, HaStorePort& store,
                                                    Clock& clock, EpochPort* epochs,
                                                    std::shared_ptr<net::IoLoopGroup> loops) {
    COMET_RETURN_IF_ERROR(validate_quorum_config(config.quorum, nullptr));
    if (config.transfer_batch_size <= 0) {
        return Status::error(Errc::kInvalidArgument, "haTransferBatchSize={} must be > 0",
                             config.transfer_batch_size);
    }
    if (config.housekeeping_interval.count() <= 0 || config.heartbeat_interval.count() <= 0) {
        return Status::error(Errc::kInvalidArgument,
                             "haHousekeepingInterval and haSendHeartbeatInterval must be > 0");
    }
    if (config.auto_switch && epochs == nullptr) {
        return Status::error(Errc::kInvalidArgument,
                             "HaService: AutoSwitch mode (controller mode) needs an EpochPort");
    }
    std::unique_ptr<HaService> svc(new HaService(std::move(config), store, clock, epochs));
    const bool own = loops == nullptr;
    if (own) {
        loops = std::make_shared<net::IoLoopGroup>("HaService", 1);
    }
    svc->impl_ = std::make_shared<Impl>(loops, own, svc.get());
    auto& im = *svc->impl_;
    std::error_code ec;
    auto addr = asio::ip::make_address(svc->config_.listen_host, ec);
    if (ec) {
        return Status::error(Errc::kInvalidArgument, "HA listen host '{}': {}",
                             svc->config_.listen_host, ec.message());
    }
    tcp::endpoint ep(addr, svc->config_.listen_port);
    im.acceptor.open(ep.protocol(), ec);
    if (!ec) im.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) im.acceptor.bind(ep, ec);
    if (!ec) im.acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
        return Status::error(Errc::kIoError, "HA listen on {}:{}: {}", svc->config_.listen_host,
                             svc->config_.listen_port, ec.message());
    }
    svc->port_ = im.acceptor.local_endpoint().port();
    // Accept loop and housekeeping tick, both on the home loop; each accepted socket is
    // created on the loop it is bound to and its connection starts there.
    struct Loops {
        static void accept(const std::shared_ptr<Impl>& im) {
            const size_t index = im->loops->next();
            im->acceptor.async_accept(
                im->loops->context(index),
                [im, index](std::error_code aec, tcp::socket sock) {
                    if (aec || im->home_stopping) return;
                    std::error_code nec;
                    sock.set_option(tcp::no_delay(true), nec);
                    auto c = std::make_shared<Connection>(im, index, std::move(sock),
                                                          im->next_id.fetch_add(1));
                    asio::post(im->loops->context(index), [c] { c->start(); });
                    accept(im);
                });
        }
        static void tick(const std::shared_ptr<Impl>& im) {
            im->tick.expires_after(im->svc->config_.tick_interval);
            im->tick.async_wait([im](std::error_code tec) {
                if (tec || im->home_stopping) return;
                im->svc->group_transfer_.expire();
                tick(im);
            });
        }
    };
    // Posted: the first handlers run on the home loop, never on this thread.
    asio::post(loops->context(im.home), [im = svc->impl_] {
        if (im->home_stopping) return;
        Loops::accept(im);
        Loops::tick(im);
    });
    if (own) {
        loops->start();
    }
    spdlog::info("HaService: broker '{}' listening for slaves on port {} ({} protocol, {} "
                 "loop{})",
                 svc->config_.broker_name, svc->port_,
                 svc->config_.auto_switch ? "AutoSwitch" : "classic", loops->size(),
                 loops->size() == 1 ? "" : "s");
    return svc;
}

HaService::~HaService() { shutdown(); }

void HaService::shutdown() {
    {
        MutexLock l(mu_);
        if (stopped_) return;
        stopped_ = true;
    }
    std::shared_ptr<Impl> im = impl_;
    if (im != nullptr) {
        // Home first: no connection is accepted after it, so every hand-over to a loop was
        // posted before that loop's step below and runs before it.
        im->loops->run_and_wait(im->home, [im] {
            im->home_stopping = true;
            std::error_code ec;
            im->acceptor.close(ec);
            im->tick.cancel();
        });
        for (size_t i = 0; i < im->slots.size(); ++i) {
            im->loops->run_and_wait(i, [im, i] {
                Impl::Slot& slot = *im->slots[i];
                slot.stopping = true;
                // close() erases from the set: iterate over a copy.
                std::vector<std::shared_ptr<Connection>> conns(slot.conns.begin(),
                                                               slot.conns.end());
                for (auto& c : conns) c->close(false);
                slot.conns.clear();
                slot.count.store(0, std::memory_order_release);
            });
        }
        if (im->own_loops) {
            im->loops->shutdown();
        }
    }
    group_transfer_.shutdown();
}

void HaService::notify_new_data() {
    Impl* im = impl_.get();
    for (size_t i = 0; i < im->slots.size(); ++i) {
        Impl::Slot& slot = *im->slots[i];
        // No slave on this loop: nothing to wake (a slave that connects later starts from its
        // own offset and is served by its connection's start and tick).
        if (slot.count.load(std::memory_order_acquire) == 0) {
            continue;
        }
        // A plain load first: while a wake-up is queued, the puts of a whole commit round
        // return here without writing the shared flag.
        if (slot.notify_pending.load(std::memory_order_acquire) ||
            slot.notify_pending.exchange(true, std::memory_order_acq_rel)) {
            continue;  // the queued wake-up will see this put's data too
        }
        asio::post(im->loops->context(i), [keep = impl_, i] {
            Impl::Slot& s = *keep->slots[i];
            s.notify_pending.store(false, std::memory_order_release);
            if (s.stopping) return;
            // poll() may close (and erase) the connection it is called on: step first.
            for (auto it = s.conns.begin(); it != s.conns.end();) {
                std::shared_ptr<Connection> c = *it++;
                c->poll();
            }
        });
    }
}

void HaService::on_slave_update(uint64_t id, const SlaveInfo& info) {
    {
        MutexLock l(mu_);
        slaves_[id] = info;
    }
    publish_acks();
}

void HaService::on_slave_closed(uint64_t id, bool rejected) {
    {
        MutexLock l(mu_);
        slaves_.erase(id);
        if (rejected) ++rejected_;
    }
    publish_acks();
}

void HaService::publish_acks() {
    std::vector<int64_t> acks = slave_ack_offsets();
    group_transfer_.on_acks(acks);
    std::function<void()> listener;
    {
        MutexLock l(mu_);
        listener = ack_listener_;
    }
    if (listener) {
        listener();
    }
}

void HaService::set_ack_listener(std::function<void()> listener) {
    MutexLock l(mu_);
    ack_listener_ = std::move(listener);
}

std::vector<SlaveInfo> HaService::slaves() const {
    MutexLock l(mu_);
    std::vector<SlaveInfo> out;
    for (const auto& [id, s] : slaves_) out.push_back(s);
    return out;
}

std::vector<int64_t> HaService::slave_ack_offsets() const {
    std::function<bool(int64_t)> filter;
    std::vector<std::pair<int64_t, int64_t>> all;  // (brokerId, ack)
    {
        MutexLock l(mu_);
        filter = ack_filter_;
        for (const auto& [id, s] : slaves_) all.emplace_back(s.broker_id, s.ack_offset);
    }
    std::vector<int64_t> out;
    for (const auto& [broker_id, ack] : all) {
        if (!filter || filter(broker_id)) out.push_back(ack);
    }
    return out;
}

void HaService::set_ack_filter(std::function<bool(int64_t broker_id)> filter) {
    {
        MutexLock l(mu_);
        ack_filter_ = std::move(filter);
    }
    publish_acks();
}

int32_t HaService::in_sync_replica_nums(int64_t master_put_offset) const {
    std::vector<int64_t> acks = slave_ack_offsets();
    return ha::in_sync_replica_nums(config_.quorum, master_put_offset, acks);
}

QuorumDecision HaService::decide(bool wait_store_msg_ok, int32_t alive_replica_num,
                                 int64_t master_put_offset) const {
    std::vector<int64_t> acks = slave_ack_offsets();
    QuorumInput in;
    in.wait_store_msg_ok = wait_store_msg_ok;
    in.alive_replica_num = alive_replica_num;
    in.master_put_offset = master_put_offset;
    in.slave_ack_offsets = acks;
    return decide_quorum(config_.quorum, in);
}

int64_t HaService::rejected_connections() const {
    MutexLock l(mu_);
    return rejected_;
}

}  // namespace comet::ha
