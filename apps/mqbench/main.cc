// mqbench: producer / consumer benchmark over the Comet C++ client (the model is RocketMQ's
// benchmark/producer.sh and consumer.sh). See docs/benchmarks.md.
//
//   mqbench producer -n NAMESRV -t TOPIC [-s SIZE] [--threads N] [--window N]
//                    [--duration SEC | --count N] [--keys] [--batch N] [--json]
//   mqbench producer -b BROKER_ADDR -t TOPIC [--connections N] ...   (no name server)
//   mqbench consumer -n NAMESRV -t TOPIC [-g GROUP] [--duration SEC | --count N] [--json]
//                    [--from-first] [--pull-batch N]
//
// Every second: TPS, max RT, average RT, failures. At the end: throughput and latency
// percentiles (p50, p99, p99.9, max); with --json one machine-readable summary line.
// A send counts as ok only with SEND_OK: a reply FLUSH_SLAVE_TIMEOUT / SLAVE_NOT_AVAILABLE /
// FLUSH_DISK_TIMEOUT (the message is on the master but not as durable as asked) counts as
// failed and is also counted per status (JSON "not_send_ok"), so a quorum-write benchmark
// never reports a timed-out send as throughput.
// With -b/--broker the producer skips the name server and the client library's routing: it
// sends SEND_MESSAGE_V2 (the producer's headers, queues 0..--queues-1 in turn) straight to that
// address over --connections connections (thread t uses connection t % N), so the same load
// can be pointed at a broker and at bench/e2e/floor_server. The topic must exist or be
// auto-creatable (defaultTopic TBW102).
// Producer exit status: 0 when every send succeeded and at least one was sent, 1 otherwise.

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <malloc.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/bytes.h"
#include "base/check.h"
#include "base/clock.h"
#include "client/producer.h"
#include "client/push_consumer.h"
#include "net/remoting_client.h"
#include "protocol/message_ext.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"
#include "protocol/send_headers.h"

namespace {

using namespace comet;
using namespace comet::client;
using Clock = std::chrono::steady_clock;

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop = true; }

struct Options {
    std::string mode;
    std::string namesrv;
    std::string topic;
    std::string group;
    size_t size = 128;
    size_t threads = 1;
    size_t window = 1;
    double duration = 0;
    int64_t count = 0;
    bool keys = false;
    size_t batch = 1;
    bool json = false;
    bool from_first = false;
    int64_t send_timeout_ms = 3000;
    std::string broker;  // -b: send straight to this address (no name server)
    size_t connections = 1;
    int32_t queues = 4;
    int32_t pull_batch = 32;  // consumer: messages asked per pull (the broker caps it too)
};

// The SEND_MESSAGE_V2 frame of -b mode (JSON header, as the Java client writes it), encoded
// once through the general encoder with placeholders, then filled in per message: the queue
// id, born timestamp, UNIQ_KEY and opaque are the only fields that change, so a send costs a
// few appends into a reused buffer instead of building and encoding a RemotingCommand.
class SendFrameTemplate {
public:
    SendFrameTemplate(const Options& o, std::string body) : body_(std::move(body)) {
        protocol::MessageProperties props;
        props.set(protocol::property::kUniqClientMessageIdKeyIdx,
                  fmt::format("MQBENCH{:08X}{}", ::getpid(), kSeqMark));
        props.set(protocol::property::kWaitStoreMsgOk, "true");
        protocol::SendMessageRequestHeaderV2 h;
        h.a = o.group.empty() ? "mqbench_producer" : o.group;
        h.b = o.topic;
        h.c = kAutoCreateTopicKey;
        h.d = o.queues;
        h.e = 0;
        h.f = 0;
        h.g = 0;
        h.h = 0;
        h.i = protocol::message_properties_to_string(props);
        h.j = 0;
        h.k = false;
        h.m = false;
        auto req = protocol::RemotingCommand::request(protocol::RequestCode::kSendMessageV2);
        h.to_ext(req);
        req.ext_fields["e"] = std::string(kQueueMark);
        req.ext_fields["g"] = std::string(kBornMark);
        req.opaque = kOpaqueMark;
        const std::string header = protocol::encode_header(req);
        struct Mark {
            size_t at;
            size_t len;
            Field field;
        };
        std::vector<Mark> marks;
        const std::string opaque_text = std::to_string(kOpaqueMark);
        for (auto [text, field] : {std::pair<std::string_view, Field>{kSeqMark, Field::kSeq},
                                   {kQueueMark, Field::kQueue},
                                   {kBornMark, Field::kBorn},
                                   {opaque_text, Field::kOpaque}}) {
            const size_t at = header.find(text);
            COMET_CHECK(at != std::string::npos && header.find(text, at + 1) == std::string::npos,
                        "mqbench: placeholder {} not found once in the send header", text);
            marks.push_back(Mark{at, text.size(), field});
        }
        std::sort(marks.begin(), marks.end(),
                  [](const Mark& x, const Mark& y) { return x.at < y.at; });
        size_t from = 0;
        for (const Mark& m : marks) {
            pieces_.push_back(Piece{header.substr(from, m.at - from), m.field});
            from = m.at + m.len;
        }
        tail_ = header.substr(from);
    }

    // The whole frame (length word included) into *out, which is cleared first.
    void encode(int32_t opaque, int32_t queue_id, int64_t born_ms, uint64_t seq,
                std::string* out) const {
        out->clear();
        out->append(8, '\0');
        for (const Piece& p : pieces_) {
            out->append(p.literal);
            char buf[24];
            char* end = buf;
            switch (p.field) {
                case Field::kQueue: end = std::to_chars(buf, buf + sizeof buf, queue_id).ptr; break;
                case Field::kBorn: end = std::to_chars(buf, buf + sizeof buf, born_ms).ptr; break;
                case Field::kOpaque: end = std::to_chars(buf, buf + sizeof buf, opaque).ptr; break;
                case Field::kSeq:
                    for (int i = 15; i >= 0; --i) {
                        buf[i] = "0123456789ABCDEF"[seq & 0xF];
                        seq >>= 4;
                    }
                    end = buf + 16;
                    break;
            }
            out->append(buf, static_cast<size_t>(end - buf));
        }
        out->append(tail_);
        const size_t header_len = out->size() - 8;
        out->append(body_);
        auto* frame = reinterpret_cast<uint8_t*>(out->data());
        comet::put_be32(frame, static_cast<uint32_t>(4 + header_len + body_.size()));
        comet::put_be32(frame + 4, static_cast<uint32_t>(header_len));  // serType 0 = JSON
    }

private:
    enum class Field { kQueue, kBorn, kSeq, kOpaque };
    struct Piece {
        std::string literal;  // header bytes before the field
        Field field;
    };
    static constexpr std::string_view kSeqMark = "~SEQ~~~~~~~~~~~~";  // 16 hex digits
    static constexpr std::string_view kQueueMark = "~QUEUE~";
    static constexpr std::string_view kBornMark = "~BORN~";
    static constexpr int32_t kOpaqueMark = 1987654321;

    std::vector<Piece> pieces_;
    std::string tail_;
    const std::string body_;
};

// SEND_OK and the statuses that carry a send result -> SendStatus, anything else an error.
Result<SendStatus> send_status_of(const Result<protocol::RemotingCommand>& resp) {
    if (!resp.is_ok()) {
        return resp.status();
    }
    if (const std::optional<SendStatus> s = client::send_status_of_code(resp->code)) {
        return *s;
    }
    return Status::error(Errc::kInternal, "send answered code {}: {}", resp->code,
                         resp->remark.value_or(""));
}

// -b mode: SEND_MESSAGE_V2 straight to one address over N connections (one RemotingClient,
// hence one connection and one I/O thread, each); thread t uses connection t % N. Frames come
// from SendFrameTemplate and go out through Connection::invoke_frame (decision 031).
// With a window > 1 the sends run to completion on the connections' I/O threads: the sending
// threads only start their windows ("lanes"); each reply's completion, on the I/O thread that
// read it, records it and sends the lane's next message, so no message is handed from one
// thread to another and the sends of one read leave in one write. With window 1 each thread
// sends and waits (a synchronous send, as the user of a blocking client would).
class DirectSender {
public:
    // Thread-safe: true when this send was claimed (the run is not over); false to stop.
    using Claim = std::function<bool()>;
    // Called for every reply or failure of a send started `us` microseconds earlier.
    using Record = std::function<void(const Result<SendStatus>&, int64_t us)>;

    DirectSender(const Options& o, Claim claim, Record record)
        : o_(o),
          claim_(std::move(claim)),
          record_(std::move(record)),
          frame_(o, std::string(o.size, 'x')) {
        for (size_t i = 0; i < o.connections; ++i) {
            net::RemotingClientConfig cfg;
            cfg.name = "MqbenchConn" + std::to_string(i);
            cfg.io_threads = 1;
            clients_.push_back(std::make_unique<net::RemotingClient>(cfg));
            clients_.back()->start();
            conns_.emplace_back();
        }
    }
    ~DirectSender() {
        for (auto& c : clients_) {
            c->shutdown();
        }
    }

    // The open connection of client i, connecting (blocking) when it has none.
    Result<net::ConnectionPtr> connection(size_t i) {
        {
            std::lock_guard<std::mutex> lock(mu_);
            if (conns_[i] && conns_[i]->is_open()) {
                return conns_[i];
            }
        }
        std::promise<Result<net::ConnectionPtr>> p;
        auto f = p.get_future();
        clients_[i]->get_connection(o_.broker,
                                    [&p](Result<net::ConnectionPtr> c) { p.set_value(std::move(c)); });
        auto c = f.get();
        if (c.is_ok()) {
            std::lock_guard<std::mutex> lock(mu_);
            conns_[i] = *c;
        }
        return c;
    }

    // Synchronous sends from the calling thread until claim_ says stop.
    void run_sync(size_t thread) {
        struct Waiter {
            std::mutex mu;
            std::condition_variable cv;
            std::optional<Result<protocol::RemotingCommand>> resp;
        } w;
        std::string buf;
        while (claim_()) {
            const auto t0 = Clock::now();
            auto conn = connection(thread % clients_.size());
            if (!conn.is_ok()) {
                record_(conn.status(), us_since(t0));
                continue;
            }
            {
                std::lock_guard<std::mutex> lock(w.mu);
                w.resp.reset();
            }
            net::ResponseCallback cb = [&w](Result<protocol::RemotingCommand> r) {
                std::lock_guard<std::mutex> lock(w.mu);
                w.resp = std::move(r);
                w.cv.notify_one();
            };
            send_frame(**conn, &buf, std::move(cb));
            std::unique_lock<std::mutex> lock(w.mu);
            w.cv.wait(lock, [&] { return w.resp.has_value(); });  // the callback always runs
            record_(send_status_of(*w.resp), us_since(t0));
        }
    }

    // Starts `window` sends for thread `thread`, then waits until they have all stopped.
    void run_window(size_t thread) {
        auto conn = connection(thread % clients_.size());
        if (!conn.is_ok()) {
            record_(conn.status(), 0);
            return;
        }
        auto lane = std::make_unique<Lane>();
        lane->sender = this;
        lane->conn = *conn;
        lane->slots.resize(o_.window);
        Lane* l = lane.get();
        {
            std::lock_guard<std::mutex> lock(mu_);
            lanes_.push_back(std::move(lane));
        }
        std::string buf;
        for (size_t k = 0; k < o_.window; ++k) {
            if (!claim_()) {
                break;
            }
            l->active.fetch_add(1);
            l->send(k, &buf);
        }
        std::unique_lock<std::mutex> lock(l->mu);
        l->cv.wait(lock, [&] { return l->active.load() == 0; });  // bounded by the send timeout
    }

private:
    // One thread's window: `slots` sends, each re-sent from its own completion.
    struct Lane {
        DirectSender* sender = nullptr;
        net::ConnectionPtr conn;
        std::vector<Clock::time_point> slots;  // when each slot's send left
        std::atomic<size_t> active{0};
        std::mutex mu;  // for cv only: the lane's end
        std::condition_variable cv;

        void send(size_t slot, std::string* buf) {
            slots[slot] = Clock::now();
            sender->send_frame(*conn, buf, [this, slot](Result<protocol::RemotingCommand> r) {
                on_reply(slot, std::move(r));
            });
        }
        // On the connection's I/O thread (or the sending thread when the connection closed).
        void on_reply(size_t slot, Result<protocol::RemotingCommand> r) {
            const bool transport_ok = r.is_ok();
            sender->record_(send_status_of(r), us_since(slots[slot]));
            // A lost connection or a timeout ends the slot: re-sending from a completion that
            // failed on the sending thread would recurse until the run's end.
            if (transport_ok && sender->claim_()) {
                thread_local std::string buf;
                send(slot, &buf);
                return;
            }
            if (active.fetch_sub(1) == 1) {
                std::lock_guard<std::mutex> lock(mu);
                cv.notify_all();
            }
        }
    };

    static int64_t us_since(Clock::time_point t0) {
        return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count();
    }

    // Encodes the next message into *buf and sends it on `conn`.
    void send_frame(net::Connection& conn, std::string* buf, net::ResponseCallback&& cb) {
        const auto timeout = std::chrono::milliseconds(o_.send_timeout_ms);
        const auto deadline = SystemClock::instance().now() + timeout;
        const uint64_t seq = seq_.fetch_add(1, std::memory_order_relaxed);
        const int64_t born = SystemClock::instance().wall_millis();
        const auto queue = static_cast<int32_t>(seq % static_cast<uint64_t>(o_.queues));
        for (;;) {
            const int32_t opaque = net::next_opaque();
            frame_.encode(opaque, queue, born, seq, buf);
            if (conn.invoke_frame(opaque, *buf, deadline, timeout, std::move(cb))) {
                return;
            }
        }
    }

    const Options& o_;
    const Claim claim_;
    const Record record_;
    const SendFrameTemplate frame_;
    std::vector<std::unique_ptr<net::RemotingClient>> clients_;
    std::atomic<uint64_t> seq_{0};
    std::mutex mu_;
    std::vector<net::ConnectionPtr> conns_;    // GUARDED_BY(mu_)
    std::vector<std::unique_ptr<Lane>> lanes_;  // GUARDED_BY(mu_), kept until the end
};

// Per-second window plus every sample, for the percentiles at the end. Each recording thread
// has a shard of its own (its counters on their own cache lines, its samples under a lock only
// the reader at the end shares), so that threads recording per message, such as the
// consumer's four consume threads, do not contend on one lock and one line.
class Stats {
public:
    void record(int64_t us, bool ok, int64_t n = 1) {
        Shard& s = shard();
        if (!ok) {
            s.failed.fetch_add(n, std::memory_order_relaxed);
            s.sec_failed.fetch_add(n, std::memory_order_relaxed);
            return;
        }
        s.ok.fetch_add(n, std::memory_order_relaxed);
        s.sec_ok.fetch_add(n, std::memory_order_relaxed);
        s.sec_sum_us.fetch_add(us * n, std::memory_order_relaxed);
        if (us > s.sec_max_us.load(std::memory_order_relaxed)) {
            s.sec_max_us.store(us, std::memory_order_relaxed);  // only this thread raises it
        }
        std::lock_guard<std::mutex> lock(s.mu);
        s.samples.push_back(us);
    }
    struct Second {
        int64_t ok, failed, sum_us, max_us;
    };
    // The window since the last call, over every shard (a sample recorded while this runs
    // lands in this window or the next).
    Second take_second() {
        Second out{0, 0, 0, 0};
        std::lock_guard<std::mutex> lock(shards_mu_);
        for (const auto& s : shards_) {
            out.ok += s->sec_ok.exchange(0);
            out.failed += s->sec_failed.exchange(0);
            out.sum_us += s->sec_sum_us.exchange(0);
            out.max_us = std::max(out.max_us, s->sec_max_us.exchange(0));
        }
        return out;
    }
    int64_t ok() const { return sum(&Shard::ok); }
    int64_t failed() const { return sum(&Shard::failed); }
    std::vector<int64_t> samples() {
        std::vector<int64_t> out;
        std::lock_guard<std::mutex> lock(shards_mu_);
        for (const auto& s : shards_) {
            std::lock_guard<std::mutex> l(s->mu);
            out.insert(out.end(), s->samples.begin(), s->samples.end());
        }
        return out;
    }

private:
    struct alignas(64) Shard {
        std::atomic<int64_t> ok{0}, failed{0};
        std::atomic<int64_t> sec_ok{0}, sec_failed{0}, sec_sum_us{0}, sec_max_us{0};
        std::mutex mu;
        std::vector<int64_t> samples;
    };

    // The calling thread's shard of this object, created on its first record. A thread
    // remembers one object's shard: mqbench records into one Stats at a time (a thread
    // alternating between two would make a shard per switch).
    Shard& shard() {
        struct Mine {
            uint64_t generation = 0;  // of the Stats object `shard` belongs to
            Shard* shard = nullptr;
        };
        thread_local Mine mine;
        if (mine.generation != generation_) {
            auto fresh = std::make_unique<Shard>();
            std::lock_guard<std::mutex> lock(shards_mu_);
            shards_.push_back(std::move(fresh));
            mine = Mine{generation_, shards_.back().get()};
        }
        return *mine.shard;
    }

    int64_t sum(std::atomic<int64_t> Shard::*field) const {
        int64_t total = 0;
        std::lock_guard<std::mutex> lock(shards_mu_);
        for (const auto& s : shards_) {
            total += ((*s).*field).load(std::memory_order_relaxed);
        }
        return total;
    }

    // Tells this object's shards from those of another one (one built later at the same
    // address included).
    static inline std::atomic<uint64_t> next_generation_{1};
    const uint64_t generation_ = next_generation_.fetch_add(1);
    mutable std::mutex shards_mu_;
    std::vector<std::unique_ptr<Shard>> shards_;  // GUARDED_BY(shards_mu_)
};

// Replies that arrived but were not SEND_OK, by SendStatus.
class StatusCounts {
public:
    void add(SendStatus s, int64_t n) { counts_[static_cast<size_t>(s)] += n; }
    int64_t total() const {
        int64_t t = 0;
        for (const auto& c : counts_) {
            t += c.load();
        }
        return t;
    }
    // {"FLUSH_SLAVE_TIMEOUT":3,...} over the non-zero ones.
    std::string json() const {
        std::string out = "{";
        for (size_t i = 0; i < counts_.size(); ++i) {
            const int64_t c = counts_[i].load();
            if (c == 0) {
                continue;
            }
            if (out.size() > 1) {
                out += ",";
            }
            out += "\"" + std::string(send_status_name(static_cast<SendStatus>(i))) +
                   "\":" + std::to_string(c);
        }
        return out + "}";
    }

private:
    std::array<std::atomic<int64_t>, 4> counts_{};
};

double pct_ms(const std::vector<int64_t>& sorted, double q) {
    if (sorted.empty()) {
        return 0;
    }
    size_t i = static_cast<size_t>(q * static_cast<double>(sorted.size()));
    i = std::min(i, sorted.size() - 1);
    return static_cast<double>(sorted[i]) / 1000.0;
}

// How far a run is: "12%" of --count or of --duration, or "" when unbounded.
std::string run_progress(const Options& o, int64_t done, double elapsed_s) {
    double f = -1;
    if (o.count > 0) {
        f = static_cast<double>(done) / static_cast<double>(o.count);
    } else if (o.duration > 0) {
        f = elapsed_s / o.duration;
    }
    if (f < 0) {
        return "";
    }
    return fmt::format(" [{:.0f}%]", std::min(f, 1.0) * 100.0);
}

// Prints the figures of each second until `done` says stop; returns the elapsed seconds. On a
// terminal the figures update one live line in place (with the run's progress); otherwise,
// for logs and scripts, one line per second.
double report_loop(const Options& o, Stats& stats, const char* what,
                   const std::function<bool()>& done) {
    const bool live = ::isatty(::fileno(stdout)) == 1 && !o.json;
    const auto start = Clock::now();
    auto next = start + std::chrono::seconds(1);
    while (!done()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (Clock::now() >= next) {
            next += std::chrono::seconds(1);
            auto s = stats.take_second();
            const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
            std::printf(
                "%s%s TPS: %lld Max RT(ms): %.3f Average RT(ms): %.3f Failed: %lld "
                "Total: %lld%s%s",
                live ? "\r" : "", what, static_cast<long long>(s.ok), s.max_us / 1000.0,
                s.ok > 0 ? static_cast<double>(s.sum_us) / s.ok / 1000.0 : 0.0,
                static_cast<long long>(s.failed), static_cast<long long>(stats.ok()),
                run_progress(o, stats.ok() + stats.failed(), elapsed).c_str(),
                live ? "\033[K" : "\n");
            std::fflush(stdout);
        }
    }
    if (live) {
        std::printf("\n");
    }
    return std::chrono::duration<double>(Clock::now() - start).count();
}

void print_summary(const Options& o, Stats& stats, double seconds, const char* rt_name,
                   const StatusCounts* statuses = nullptr) {
    auto v = stats.samples();
    std::sort(v.begin(), v.end());
    const double tps = seconds > 0 ? static_cast<double>(stats.ok()) / seconds : 0;
    const double p50 = pct_ms(v, 0.50), p99 = pct_ms(v, 0.99), p999 = pct_ms(v, 0.999);
    const double mx = v.empty() ? 0 : static_cast<double>(v.back()) / 1000.0;
    std::printf("Summary %s: ok %lld failed %lld in %.2f s, %.1f msg/s; %s p50 %.3f ms, p99 %.3f "
                "ms, p99.9 %.3f ms, max %.3f ms\n",
                o.mode.c_str(), static_cast<long long>(stats.ok()),
                static_cast<long long>(stats.failed()), seconds, tps, rt_name, p50, p99, p999, mx);
    if (statuses != nullptr && statuses->total() > 0) {
        std::printf("Replies not SEND_OK (counted as failed): %s\n", statuses->json().c_str());
    }
    if (o.json) {
        std::printf("{\"mode\":\"%s\",\"topic\":\"%s\",\"ok\":%lld,\"failed\":%lld,"
                    "\"seconds\":%.3f,\"tps\":%.1f,\"latency\":\"%s\",\"p50_ms\":%.3f,"
                    "\"p99_ms\":%.3f,\"p999_ms\":%.3f,\"max_ms\":%.3f,\"size\":%zu,"
                    "\"threads\":%zu,\"window\":%zu,\"batch\":%zu,\"connections\":%zu,"
                    "\"not_send_ok\":%s}\n",
                    o.mode.c_str(), o.topic.c_str(), static_cast<long long>(stats.ok()),
                    static_cast<long long>(stats.failed()), seconds, tps, rt_name, p50, p99,
                    p999, mx, o.size, o.threads, o.window, o.batch, o.connections,
                    statuses != nullptr ? statuses->json().c_str() : "{}");
    }
    std::fflush(stdout);
}

ProducerConfig producer_config(const Options& o) {
    ProducerConfig cfg;
    cfg.client.namesrv_addr = o.namesrv;
    cfg.group = o.group.empty() ? "mqbench_producer" : o.group;
    cfg.send_timeout = std::chrono::milliseconds(o.send_timeout_ms);
    cfg.client.io_threads = 1;
    return cfg;
}

// Through the client library the sending threads keep their windows (a condition variable
// each): chaining the sends from the completions as -b does puts all of the library's per-send
// work on the one client I/O thread, which then sends smaller bursts (measured: 10-15 % fewer
// msgs/s and more broker CPU per message; docs/benchmarks-notebook.md, "mqbench and the client
// at native speed").
// A full window is refilled from three quarters: the thread is woken once per window / 4
// replies and sends that many back to back, instead of once per reply (a wake-up per message
// cost more client CPU than the library's send itself: 18 -> 8-11 µs per message at 4 x 64,
// docs/benchmarks-notebook.md). Thread-safety: acquire() and wait_idle() on the sending thread,
// release() on the completions' threads.
class SendWindow {
public:
    explicit SendWindow(size_t window)
        : window_(window), low_water_(window - std::max<size_t>(1, window / 4)) {}

    // Waits while the window is full (until it is down to its low water), then takes a slot.
    void acquire() {
        std::unique_lock<std::mutex> lock(mu_);
        if (in_flight_ >= window_) {
            waiting_ = true;
            cv_.wait(lock, [&] { return in_flight_ <= low_water_; });
            waiting_ = false;
        }
        ++in_flight_;
    }
    // A send of the window completed.
    void release() {
        std::lock_guard<std::mutex> lock(mu_);
        --in_flight_;
        if (waiting_ && in_flight_ <= low_water_) {
            cv_.notify_all();
        }
    }
    // Waits until every send of the window completed (bounded by the send timeout).
    void wait_idle() {
        std::unique_lock<std::mutex> lock(mu_);
        waiting_ = true;
        cv_.wait(lock, [&] { return in_flight_ == 0; });
    }

private:
    const size_t window_;
    const size_t low_water_;
    std::mutex mu_;
    std::condition_variable cv_;
    size_t in_flight_ = 0;  // GUARDED_BY(mu_)
    bool waiting_ = false;  // GUARDED_BY(mu_)
};

// One producer run: --threads sending threads, through the client library or (-b) a
// DirectSender, until --count messages are claimed, --duration is over or a signal arrives.
// Owned by run_producer; the figures are recorded from the sending threads and the
// completions' threads, and printed from the calling thread.
class ProducerRun {
public:
    // `producer` is started unless -b is given; it is shut down by run().
    ProducerRun(const Options& o, DefaultMqProducer& producer)
        : o_(o),
          producer_(producer),
          remaining_(o.count > 0 ? o.count : INT64_MAX),
          body_(o.size, 'x'),
          deadline_(o.duration > 0 ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                        std::chrono::duration<double>(o.duration))
                                   : Clock::time_point::max()),
          running_(o.threads) {}

    // Sends until the run is over, prints the summary; the exit status.
    int run() {
        std::unique_ptr<DirectSender> direct;
        if (!o_.broker.empty()) {
            direct = std::make_unique<DirectSender>(
                o_, [this] { return claim() > 0; },
                [this](const Result<SendStatus>& r, int64_t us) {
                    stats_.record(us, accept(r, 1), 1);
                });
        }
        std::vector<std::thread> workers;
        for (size_t t = 0; t < o_.threads; ++t) {
            workers.emplace_back([this, &direct, t] {
                if (direct) {
                    send_direct(*direct, t);
                } else {
                    send_through_library();
                }
                --running_;
            });
        }
        const double seconds =
            report_loop(o_, stats_, "Send", [&] { return running_.load() == 0; });
        for (auto& w : workers) {
            w.join();
        }
        direct.reset();
        producer_.shutdown();
        print_summary(o_, stats_, seconds, "send RT", &statuses_);
        return stats_.failed() == 0 && stats_.ok() > 0 ? 0 : 1;
    }

private:
    // True for SEND_OK; a reply with another status is counted in `statuses_` (logged once).
    bool accept(const Result<SendStatus>& r, int64_t n) {
        if (!r.is_ok()) {
            // Once, then only counted: a broker under back-pressure refuses (SYSTEM_BUSY) many
            // sends a second, and a log line each would slow the completions' I/O thread.
            if (!failure_logged_.exchange(true)) {
                spdlog::warn("send failed (further failures only counted): {}",
                             r.status().to_string());
            }
            return false;
        }
        if (r.value() == SendStatus::kSendOk) {
            return true;
        }
        statuses_.add(r.value(), n);
        if (!status_logged_.exchange(true)) {
            spdlog::warn("send replied {} (counted as failed; further ones only counted)",
                         send_status_name(r.value()));
        }
        return false;
    }
    static Result<SendStatus> status_of(const Result<SendResult>& r) {
        if (!r.is_ok()) {
            return r.status();
        }
        return r.value().status;
    }
    // Messages the next send may carry, 0 = stop. Thread-safe.
    int64_t claim() {
        if (g_stop || Clock::now() >= deadline_) {
            return 0;
        }
        const int64_t want = static_cast<int64_t>(o_.batch);
        const int64_t before = remaining_.fetch_sub(want);
        return std::max<int64_t>(0, std::min(want, before));
    }
    std::vector<Message> make_messages(int64_t n) {
        std::vector<Message> msgs;
        for (int64_t i = 0; i < n; ++i) {
            Message m(o_.topic, body_);
            if (o_.keys) {
                m.set_keys("k" + std::to_string(key_seq_.fetch_add(1)));
            }
            msgs.push_back(std::move(m));
        }
        return msgs;
    }

    // -b: sending thread `thread`'s share of the DirectSender's sends.
    void send_direct(DirectSender& direct, size_t thread) {
        if (o_.window <= 1) {
            direct.run_sync(thread);
        } else {
            direct.run_window(thread);
        }
    }

    // One sending thread through the client library: sync sends (window 1) or a window of
    // async ones.
    void send_through_library() {
        SendWindow window(o_.window);
        for (;;) {
            const int64_t n = claim();
            if (n == 0) {
                break;
            }
            std::vector<Message> msgs = make_messages(n);
            const auto t0 = Clock::now();
            if (o_.window <= 1) {
                auto r = o_.batch > 1 ? producer_.send_batch(std::move(msgs))
                                      : producer_.send(std::move(msgs.front()));
                stats_.record(us_since(t0), accept(status_of(r), n), n);
                continue;
            }
            window.acquire();
            auto done = [this, &window, t0, n](Result<SendResult> r) {
                stats_.record(us_since(t0), accept(status_of(r), n), n);
                window.release();
            };
            if (o_.batch > 1) {
                producer_.send_batch_async(std::move(msgs), done);
            } else {
                producer_.send_async(std::move(msgs.front()), done);
            }
        }
        window.wait_idle();
    }

    static int64_t us_since(Clock::time_point t0) {
        return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count();
    }

    const Options& o_;
    DefaultMqProducer& producer_;
    Stats stats_;
    StatusCounts statuses_;
    std::atomic<bool> status_logged_{false};
    std::atomic<bool> failure_logged_{false};
    std::atomic<int64_t> remaining_;
    std::atomic<uint64_t> key_seq_{0};
    const std::string body_;
    const Clock::time_point deadline_;
    std::atomic<size_t> running_;  // sending threads not finished yet
};

int run_producer(const Options& o) {
    DefaultMqProducer producer(producer_config(o));
    if (o.broker.empty()) {
        if (Status s = producer.start(); !s.is_ok()) {
            std::fprintf(stderr, "mqbench: producer start failed: %s\n", s.to_string().c_str());
            return 1;
        }
    }
    ProducerRun run(o, producer);
    return run.run();
}

int run_consumer(const Options& o) {
    PushConsumerConfig cfg;
    cfg.client.namesrv_addr = o.namesrv;
    cfg.group = o.group.empty() ? "mqbench_consumer" : o.group;
    cfg.consume_from_where =
        o.from_first ? ConsumeFromWhere::kFirstOffset : ConsumeFromWhere::kLastOffset;
    cfg.consume_threads = std::max<size_t>(1, o.threads);
    cfg.pull_batch_size = o.pull_batch;
    cfg.pull_threshold_for_queue = std::max<size_t>(1000, 4 * static_cast<size_t>(o.pull_batch));
    cfg.rebalance_interval = std::chrono::milliseconds(5000);
    DefaultMqPushConsumer consumer(cfg);
    consumer.subscribe(o.topic, "*");
    Stats stats;
    std::atomic<int64_t> received{0};
    consumer.register_listener([&](const std::vector<MessageExt>& msgs, const MessageQueue&) {
        const int64_t now = SystemClock::instance().wall_millis();
        for (const auto& m : msgs) {
            stats.record(std::max<int64_t>(0, now - m.born_timestamp) * 1000, true);
        }
        received += static_cast<int64_t>(msgs.size());
        return ConsumeStatus::kConsumeSuccess;
    });
    if (Status s = consumer.start(); !s.is_ok()) {
        std::fprintf(stderr, "mqbench: consumer start failed: %s\n", s.to_string().c_str());
        return 1;
    }
    std::printf("Consumer %s started\n", consumer.instance().client_id().c_str());
    std::fflush(stdout);
    const double limit = o.duration > 0 ? o.duration : (o.count > 0 ? 1e9 : 10.0);
    const auto start = Clock::now();
    const double seconds = report_loop(o, stats, "Receive", [&] {
        return g_stop || (o.count > 0 && received.load() >= o.count) ||
               std::chrono::duration<double>(Clock::now() - start).count() >= limit;
    });
    consumer.shutdown();
    print_summary(o, stats, seconds, "end-to-end");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    CLI::App app{"mqbench: RocketMQ-protocol producer/consumer benchmark"};
    app.require_subcommand(1);
    auto add_common = [&](CLI::App* sub) {
        sub->add_option("-n,--namesrv", o.namesrv, "name server address(es), a:p;b:p");
        sub->add_option("-t,--topic", o.topic, "topic")->required();
        sub->add_option("-g,--group", o.group, "producer / consumer group");
        sub->add_option("--threads", o.threads, "sending threads / consume threads")
            ->check(CLI::Range(1, 1024));
        auto* d = sub->add_option("--duration", o.duration, "seconds to run");
        auto* c = sub->add_option("--count", o.count, "messages to send / receive");
        d->excludes(c);
        sub->add_flag("--json", o.json, "print a JSON summary line at the end");
    };
    auto* prod = app.add_subcommand("producer", "send messages");
    add_common(prod);
    prod->add_option("-s,--size", o.size, "message body bytes")->check(CLI::Range(1, 4 << 20));
    prod->add_option("--window", o.window, "async sends in flight per thread (1 = sync)")
        ->check(CLI::Range(1, 100000));
    prod->add_flag("--keys", o.keys, "set a unique KEYS property on each message");
    prod->add_option("--batch", o.batch, "messages per SEND_BATCH_MESSAGE")
        ->check(CLI::Range(1, 1024));
    prod->add_option("--send-timeout", o.send_timeout_ms, "send timeout in ms");
    prod->add_option("-b,--broker", o.broker,
                     "send SEND_MESSAGE_V2 straight to this host:port (no name server)");
    prod->add_option("--connections", o.connections, "with --broker: connections to open")
        ->check(CLI::Range(1, 1024));
    prod->add_option("--queues", o.queues, "with --broker: queues 0..N-1 are used in turn")
        ->check(CLI::Range(1, 1024));
    auto* cons = app.add_subcommand("consumer", "receive messages");
    add_common(cons);
    cons->add_flag("--from-first", o.from_first, "a new group starts at the first offset");
    cons->add_option("--pull-batch", o.pull_batch,
                     "messages asked per pull (pullBatchSize; the broker caps it with "
                     "maxTransferCountOnMessageInMemory, 32 by default)")
        ->check(CLI::Range(1, 1024));
    CLI11_PARSE(app, argc, argv);

    spdlog::set_level(spdlog::level::warn);
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    if (o.namesrv.empty() && (!prod->parsed() || o.broker.empty())) {
        std::fprintf(stderr, "mqbench: -n/--namesrv is required (or, for producer, -b)\n");
        return 2;
    }
    if (prod->parsed()) {
        o.mode = "producer";
        if (!o.broker.empty() && o.batch > 1) {
            std::fprintf(stderr, "mqbench: --broker sends single messages only\n");
            return 2;
        }
        if (o.duration <= 0 && o.count <= 0) {
            o.duration = 10;
        }
        return run_producer(o);
    }
    o.mode = "consumer";
    // A pull body over glibc's mmap threshold (128 KiB to start with; a pull of 1,024 1 KiB
    // messages is 1.2 MB) would be mapped and unmapped for every pull, faulting in each page
    // anew; keep such buffers in the heap and the heap's top from being trimmed after each one.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    return run_consumer(o);
}
