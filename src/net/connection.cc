#include "net/connection.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <span>

#include "base/bytes.h"
#include "base/check.h"
#include "base/pool_allocator.h"
#include "protocol/fast_header.h"

namespace comet::net {

namespace {

std::atomic<uint64_t> g_next_connection_id{1};
std::atomic<int32_t> g_next_opaque{0};

std::string endpoint_string(const asio::ip::tcp::endpoint& ep) {
    return ep.address().to_string() + ":" + std::to_string(ep.port());
}

int64_t to_millis(Duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

// Bad input from the peer: logged as a warning, everything else at info.
bool is_peer_fault(const Status& s) {
    return s.code() == Errc::kInvalidArgument || s.code() == Errc::kCorruption ||
           s.code() == Errc::kResourceExhausted || s.code() == Errc::kUnsupported;
}

}  // namespace

int32_t next_opaque() {
    // Wraps to 0 after INT32_MAX like Java's AtomicInteger would go negative; opaques only need
    // to be distinct among the requests in flight on one connection.
    return g_next_opaque.fetch_add(1, std::memory_order_relaxed) & 0x7fffffff;
}

Connection::Connection(std::shared_ptr<IoLoopGroup> loops, size_t loop_index,
                       asio::ip::tcp::socket socket, ConnectionHandler* handler,
                       ConnectionOptions options, Clock* clock)
    : id_(g_next_connection_id.fetch_add(1)),
      loops_(std::move(loops)),
      ctx_(loops_->context(loop_index)),
      handler_(handler),
      options_(options),
      clock_(clock),
      socket_(std::move(socket)),
      request_timer_(ctx_),
      idle_timer_(ctx_) {
    asio::error_code ec;
    auto remote = socket_.remote_endpoint(ec);
    remote_address_ = ec ? std::string("unknown") : endpoint_string(remote);
    auto local = socket_.local_endpoint(ec);
    local_address_ = ec ? std::string("unknown") : endpoint_string(local);
    socket_.set_option(asio::ip::tcp::no_delay(true), ec);
    rbuf_.reallocate(std::max<size_t>(options_.read_chunk_bytes, 4096), 0);
    last_io_ = clock_->now();
}

Connection::~Connection() = default;

void Connection::start() {
    MutexLock lock(mu_);
    if (closing_) {
        return;
    }
    asio::post(ctx_, [self = shared_from_this()] {
        self->touch();
        if (self->options_.max_idle > Duration::zero()) {
            self->arm_idle_timer(self->options_.max_idle);
        }
        self->do_read();
    });
}

bool Connection::is_open() const {
    MutexLock lock(mu_);
    return !closing_;
}

size_t Connection::in_flight_requests() const {
    MutexLock lock(mu_);
    return pending_.size();
}

// ---- outbound -----------------------------------------------------------------------------

bool Connection::enqueue(OutFrame frame) {
    MutexLock lock(mu_);
    if (closing_) {
        return false;
    }
    out_queue_.push_back(std::move(frame));
    kick_writer_locked();
    return true;
}

std::string& Connection::shared_buffer_locked() {
    if (out_queue_.empty() || !out_queue_.back().shared) {
        OutFrame f;
        f.shared = true;
        if (!spare_buffers_.empty()) {
            f.head = std::move(spare_buffers_.back());
            spare_buffers_.pop_back();
        }
        out_queue_.push_back(std::move(f));
    }
    return out_queue_.back().head;
}

void Connection::kick_writer_locked() {
    if (write_scheduled_) {
        return;
    }
    write_scheduled_ = true;
    write_start_pending_ = true;
    if (kick_in_queue_) {
        return;  // an earlier kick whose write was started by a read's end: it starts this one
    }
    kick_in_queue_ = true;
    asio::post(ctx_, asio::bind_allocator(HandlerAllocator<void, kKickMemoryBytes>(&kick_memory_),
                                          [self = shared_from_this()] {
                                              self->start_write_now(/*from_kick=*/true);
                                          }));
}

void Connection::start_write_now(bool from_kick) {
    {
        MutexLock lock(mu_);
        if (from_kick) {
            kick_in_queue_ = false;
        }
        if (!write_start_pending_) {
            return;  // nothing queued, or the writer already started (on_write continues it)
        }
        write_start_pending_ = false;
    }
    do_write();
}

namespace {

// A frame whose body is command.body followed by `extra_body` (referenced, not copied).
void encode_out_frame(const protocol::RemotingCommand& command,
                      std::vector<SharedBuffer> extra_body, std::string* head,
                      std::vector<SharedBuffer>* extra) {
    if (extra_body.empty()) {
        *head = protocol::encode_frame(command);
        return;
    }
    size_t body_size = command.body.size();
    for (const auto& b : extra_body) {
        body_size += b.size;
    }
    *head = protocol::encode_frame_prefix(command, body_size);
    head->append(command.body);
    *extra = std::move(extra_body);
}

}  // namespace

void Connection::send_response(protocol::RemotingCommand response,
                               std::vector<SharedBuffer> extra_body) {
    if (extra_body.empty()) {
        send_response_encoded(response);
        return;
    }
    OutFrame frame;
    encode_out_frame(response, std::move(extra_body), &frame.head, &frame.extra);
    if (!enqueue(std::move(frame))) {
        spdlog::debug("net: response code {} opaque {} to {} dropped: connection closed",
                      response.code, response.opaque, remote_address_);
    }
}

void Connection::send_response_encoded(const protocol::RemotingCommand& response) {
    // Encoded straight into the write buffer that queued frames share (as invoke_frame's
    // requests): no string per response, and a burst of answers leaves in one write.
    MutexLock lock(mu_);
    if (closing_) {
        return;
    }
    protocol::append_frame(response, &shared_buffer_locked());
    kick_writer_locked();
}

void Connection::invoke_async(protocol::RemotingCommand request, Duration timeout,
                              ResponseCallback callback) {
    invoke_until(std::move(request), clock_->now() + std::max(timeout, Duration::zero()), timeout,
                 std::move(callback));
}

void Connection::invoke_until(protocol::RemotingCommand request, TimePoint deadline,
                              Duration timeout, ResponseCallback callback) {
    COMET_CHECK(callback != nullptr, "invoke_async without a callback");
    request.opaque = next_opaque();
    request.flag &= ~(protocol::kFlagResponse | protocol::kFlagOneway);
    OutFrame frame;
    frame.head = protocol::encode_frame(request);
    bool collision = false;
    {
        MutexLock lock(mu_);
        if (!closing_ && pending_.contains(request.opaque)) {
            collision = true;  // the 31-bit opaque wrapped onto a request still in flight
        } else if (!closing_) {
            add_pending_locked(request.opaque, std::move(callback), deadline, timeout);
            out_queue_.push_back(std::move(frame));
            kick_writer_locked();
            return;
        }
    }
    if (collision) {
        invoke_until(std::move(request), deadline, timeout, std::move(callback));
        return;
    }
    callback(Status::error(Errc::kUnavailable, "connection to {} is closed", remote_address_));
}

bool Connection::invoke_frame(int32_t opaque, std::string_view frame, TimePoint deadline,
                              Duration timeout, ResponseCallback&& callback) {
    COMET_CHECK(callback != nullptr, "invoke_frame without a callback");
    {
        MutexLock lock(mu_);
        if (!closing_) {
            if (pending_.contains(opaque)) {
                return false;
            }
            add_pending_locked(opaque, std::move(callback), deadline, timeout);
            shared_buffer_locked().append(frame);
            kick_writer_locked();
            return true;
        }
    }
    callback(Status::error(Errc::kUnavailable, "connection to {} is closed", remote_address_));
    return true;
}

namespace {
constexpr size_t kMaxSpareNodes = 4096;
constexpr size_t kMaxSpareBuffers = 2;
constexpr size_t kMaxSpareBufferBytes = 4 << 20;
}  // namespace

void Connection::add_pending_locked(int32_t opaque, ResponseCallback&& callback,
                                    TimePoint deadline, Duration timeout) {
    DeadlineMap::iterator dit;
    if (spare_deadlines_.empty()) {
        dit = deadlines_.emplace(deadline, opaque);
    } else {
        DeadlineMap::node_type node = std::move(spare_deadlines_.back());
        spare_deadlines_.pop_back();
        node.key() = deadline;
        node.mapped() = opaque;
        dit = deadlines_.insert(std::move(node));
    }
    if (spare_pending_.empty()) {
        pending_.emplace(opaque, Pending{std::move(callback), dit, timeout});
    } else {
        PendingMap::node_type node = std::move(spare_pending_.back());
        spare_pending_.pop_back();
        node.key() = opaque;
        node.mapped() = Pending{std::move(callback), dit, timeout};
        pending_.insert(std::move(node));
    }
    if (deadline < armed_deadline_) {
        armed_deadline_ = deadline;
        asio::post(ctx_, [self = shared_from_this()] { self->rearm_request_timer(); });
    }
}

ResponseCallback Connection::take_pending_locked(PendingMap::iterator it) {
    ResponseCallback callback = std::move(it->second.callback);
    DeadlineMap::node_type dnode = deadlines_.extract(it->second.deadline);
    PendingMap::node_type pnode = pending_.extract(it);
    if (spare_pending_.size() < kMaxSpareNodes) {
        pnode.mapped().callback = nullptr;
        spare_pending_.push_back(std::move(pnode));
        spare_deadlines_.push_back(std::move(dnode));
    }
    return callback;
}

void Connection::invoke_oneway(protocol::RemotingCommand request, WriteCallback written) {
    invoke_oneway(std::move(request), {}, std::move(written));
}

void Connection::invoke_oneway(protocol::RemotingCommand request,
                               std::vector<SharedBuffer> extra_body, WriteCallback written) {
    request.opaque = next_opaque();
    request.flag = (request.flag & ~protocol::kFlagResponse) | protocol::kFlagOneway;
    OutFrame frame;
    encode_out_frame(request, std::move(extra_body), &frame.head, &frame.extra);
    WriteCallback copy = written;
    frame.written = std::move(written);
    if (!enqueue(std::move(frame)) && copy) {
        copy(Status::error(Errc::kUnavailable, "connection to {} is closed", remote_address_));
    }
}

void Connection::do_write() {
    if (closed_) {
        return;
    }
    {
        MutexLock lock(mu_);
        if (out_queue_.empty()) {
            write_scheduled_ = false;
            if (close_after_flush_) {
                close_locked(flush_reason_);
            }
            return;
        }
        writing_.swap(out_queue_);
    }
    iov_.clear();
    for (const auto& f : writing_) {
        iov_.emplace_back(f.head.data(), f.head.size());
        for (const auto& b : f.extra) {
            if (b.size > 0) {
                iov_.emplace_back(b.data, b.size);
            }
        }
    }
    // The buffers as a span: asio copies the sequence into its write operation, and a copy of
    // the vector would allocate once per write (iov_ is not touched before on_write).
    asio::async_write(
        socket_, std::span<const asio::const_buffer>(iov_),
        asio::bind_allocator(HandlerAllocator<void, kWriteMemoryBytes>(&write_memory_),
                             [self = shared_from_this()](const asio::error_code& ec, size_t) {
                                 self->on_write(ec);
                             }));
}

void Connection::on_write(const asio::error_code& ec) {
    std::vector<OutFrame> done;
    done.swap(writing_);
    Status st = ec ? Status::error(Errc::kUnavailable, "write to {} failed: {}", remote_address_,
                                   ec.message())
                   : Status::ok();
    for (auto& f : done) {
        if (f.written) {
            f.written(st);
        }
    }
    {
        MutexLock lock(mu_);
        for (auto& f : done) {
            if (f.shared && spare_buffers_.size() < kMaxSpareBuffers &&
                f.head.capacity() <= kMaxSpareBufferBytes) {
                f.head.clear();
                spare_buffers_.push_back(std::move(f.head));
            }
        }
    }
    done.clear();  // releases the extra buffers' owners
    if (writing_.empty()) {
        writing_.swap(done);  // keep the vector's capacity for the next write
    }
    if (ec) {
        close(st);
        return;
    }
    touch();
    do_write();
}

// ---- inbound ------------------------------------------------------------------------------

void Connection::do_read() {
    if (closed_) {
        return;
    }
    if (body_cmd_.has_value()) {
        socket_.async_read_some(
            asio::buffer(body_in_.data() + body_have_, body_in_.size() - body_have_),
            [self = shared_from_this()](const asio::error_code& ec, size_t n) {
                self->on_body_read(ec, n);
            });
        return;
    }
    if (rbegin_ == rend_) {
        rbegin_ = rend_ = 0;
        // Give back the memory of a large frame once it is consumed.
        if (rbuf_.size() > 4 * options_.read_chunk_bytes && want_bytes_ == 0) {
            rbuf_.reallocate(std::max<size_t>(options_.read_chunk_bytes, 4096), 0);
        }
    }
    const size_t have = rend_ - rbegin_;
    const size_t need = std::max(want_bytes_, have + 4096);
    if (rbuf_.size() - rbegin_ < need || rbuf_.size() - rend_ < 1024) {
        // Move the partial frame to the front, then grow if it still does not fit.
        if (rbegin_ > 0) {
            std::memmove(rbuf_.data(), rbuf_.data() + rbegin_, have);
            rbegin_ = 0;
            rend_ = have;
        }
        if (rbuf_.size() < need) {
            rbuf_.reallocate(need, have);  // the new bytes are not zeroed: the read fills them
        }
    }
    socket_.async_read_some(asio::buffer(rbuf_.data() + rend_, rbuf_.size() - rend_),
                            [self = shared_from_this()](const asio::error_code& ec, size_t n) {
                                self->on_read(ec, n);
                            });
}

bool Connection::close_requested() {
    MutexLock lock(mu_);
    return closing_;
}

bool Connection::read_failed(const asio::error_code& ec) {
    if (!ec) {
        return false;
    }
    if (ec == asio::error::eof) {
        close(Status::error(Errc::kUnavailable, "closed by peer"));
    } else if (ec != asio::error::operation_aborted) {
        close(Status::error(Errc::kUnavailable, "read failed: {}", ec.message()));
    }
    return true;
}

bool Connection::start_direct_body(std::string_view avail, size_t frame_bytes) {
    // avail = rbuf_[rbegin_, rend_): the start of this frame and nothing after it (the frame
    // is not complete). length(4) | serialization type and header length(4) | header | body.
    if (direct_refused_ || avail.size() < 8) {
        return false;
    }
    // The low 24 bits of the second word (its top byte is the serialization type).
    const size_t header_len = get_be32(reinterpret_cast<const uint8_t*>(avail.data()) + 4) &
                              0xFFFFFF;
    if (8 + header_len > avail.size() || 8 + header_len > frame_bytes) {
        return false;  // the header is still coming, or the frame is bad (the usual path says)
    }
    // The header alone, as a payload without body.
    auto fast = protocol::decode_frame_payload_fast(avail.substr(4, 4 + header_len),
                                                    options_.max_frame_bytes,
                                                    /*borrow_send_body=*/false);
    if (!fast.is_ok() || !fast->cmd.is_response()) {
        // Requests (and bad headers) take the usual path; the next reads of this frame do not
        // decode its header again.
        direct_refused_ = true;
        return false;
    }
    const size_t body_len = frame_bytes - 8 - header_len;
    const size_t arrived = avail.size() - 8 - header_len;
    body_in_.resize(body_len);
    std::memcpy(body_in_.data(), avail.data() + 8 + header_len, arrived);
    body_have_ = arrived;
    body_cmd_.emplace(std::move(fast->cmd));
    rbegin_ = rend_ = 0;
    want_bytes_ = 0;
    return true;
}

void Connection::on_body_read(const asio::error_code& ec, size_t n) {
    if (closed_ || read_failed(ec)) {
        return;
    }
    body_have_ += n;
    touch();
    if (body_have_ < body_in_.size()) {
        do_read();
        return;
    }
    protocol::RemotingCommand cmd = std::move(*body_cmd_);
    body_cmd_.reset();
    cmd.body = std::move(body_in_);
    body_in_ = std::string();
    body_have_ = 0;
    if (close_requested()) {
        return;  // ignore the rest of the stream
    }
    auto self = shared_from_this();  // the callback may drop the last other reference
    handle_response(std::move(cmd));
    do_read();
}

namespace {

// The requests of one read form one batch for the handler (decision 028: sends commit together
// at its end). Opened lazily, at the first whole frame; closed on every way out. After the
// batch, its replies are written at once (start_write_now: no trip through the I/O loop's
// queue), and only then is the handler told (on_read_batch_written).
struct ReadBatchScope {
    ConnectionHandler* handler;
    bool open = false;   // begun, not ended
    bool ended = false;  // ended, the written hook still owed
    void begin() {
        if (!open && !ended) {
            open = true;
            handler->on_read_batch_begin();
        }
    }
    void end() {
        if (open) {
            open = false;
            ended = true;
            handler->on_read_batch_end();
        }
    }
    void written() {
        end();
        if (ended) {
            ended = false;
            handler->on_read_batch_written();
        }
    }
    ~ReadBatchScope() { written(); }
};

// Decodes a whole frame's payload (the bytes after its length word) for on_read.
// Hot request headers go straight into their typed struct (decision 020). A typed header that
// does not decode is rare: decode generally so the processor answers it from ext_fields with
// the usual error.
// A send's body stays in rbuf_ (borrowed_body), which is neither moved nor overwritten before
// the next do_read(): valid through on_request (issue 16).
// Inlined: on_read's frame loop is the broker's hottest path, and this is its one caller.
[[gnu::always_inline]] inline Result<protocol::RemotingCommand> decode_read_frame(
    std::string_view payload, size_t max_frame_bytes) {
    auto fast = protocol::decode_frame_payload_fast(payload, max_frame_bytes,
                                                    /*borrow_send_body=*/true);
    if (!fast.is_ok()) {
        return fast.status();
    }
    if ((fast->send_v2 && !fast->send_v2->is_ok()) || (fast->pull && !fast->pull->is_ok())) {
        return protocol::decode_frame_payload(payload, max_frame_bytes);
    }
    // The typed headers' slots come from a per-thread pool (issue 16).
    if (fast->send_v2) {
        fast->cmd.typed_send_v2 = std::allocate_shared<protocol::SendMessageRequestHeaderV2>(
            PoolAllocator<protocol::SendMessageRequestHeaderV2>(),
            std::move(*fast->send_v2).value());
    } else if (fast->pull) {
        fast->cmd.typed_pull = std::allocate_shared<protocol::PullMessageRequestHeader>(
            PoolAllocator<protocol::PullMessageRequestHeader>(), std::move(*fast->pull).value());
    }
    return std::move(fast->cmd);
}

}  // namespace

void Connection::on_read(const asio::error_code& ec, size_t n) {
    if (closed_ || read_failed(ec)) {
        return;
    }
    rend_ += n;
    touch();
    auto self = shared_from_this();
    ReadBatchScope batch{handler_};
    while (!closed_) {
        std::string_view avail(rbuf_.data() + rbegin_, rend_ - rbegin_);
        protocol::FrameSplit split = protocol::split_frame(avail, options_.max_frame_bytes);
        if (split.state == protocol::FrameSplit::State::kNeedMore) {
            if (split.frame_bytes >= kDirectBodyBytes &&
                start_direct_body(avail, split.frame_bytes)) {
                break;  // do_read() below goes on reading its body
            }
            want_bytes_ = split.frame_bytes;  // 0 until the length word is complete
            break;
        }
        if (split.state == protocol::FrameSplit::State::kError) {
            close(Status(
                split.error.code() == Errc::kOk ? Errc::kInvalidArgument : split.error.code(),
                "bad frame: " + split.error.message()));
            return;
        }
        Result<protocol::RemotingCommand> decoded =
            decode_read_frame(avail.substr(4, split.frame_bytes - 4), options_.max_frame_bytes);
        rbegin_ += split.frame_bytes;
        want_bytes_ = 0;
        direct_refused_ = false;
        if (!decoded.is_ok()) {
            Status st = decoded.status();
            close(Status(st.code(), "bad frame: " + st.message()));
            return;
        }
        if (close_requested()) {
            return;  // ignore the rest of the stream
        }
        protocol::RemotingCommand cmd = std::move(decoded).value();
        if (cmd.is_response()) {
            handle_response(std::move(cmd));
        } else {
            batch.begin();
            handler_->on_request(self, std::move(cmd));
        }
    }
    batch.end();
    if (!closed_) {
        start_write_now();
    }
    batch.written();
    do_read();
}

void Connection::handle_response(protocol::RemotingCommand response) {
    ResponseCallback callback;
    {
        MutexLock lock(mu_);
        auto it = pending_.find(response.opaque);
        if (it == pending_.end()) {
            spdlog::debug("net: response opaque {} from {} matches no request (late or unknown)",
                          response.opaque, remote_address_);
            return;
        }
        callback = take_pending_locked(it);
    }
    callback(std::move(response));
}

// ---- timers -------------------------------------------------------------------------------

void Connection::rearm_request_timer() {
    if (closed_) {
        return;
    }
    TimePoint deadline;
    {
        MutexLock lock(mu_);
        deadline = armed_deadline_;
    }
    if (deadline == TimePoint::max()) {
        return;
    }
    request_timer_.expires_after(std::max(deadline - clock_->now(), Duration::zero()));
    request_timer_.async_wait(
        [self = shared_from_this()](const asio::error_code& ec) { self->on_request_timer(ec); });
}

void Connection::on_request_timer(const asio::error_code& ec) {
    if (ec || closed_) {
        return;  // re-armed (cancelled) or closed; the newer wait or do_close takes over
    }
    std::vector<std::pair<ResponseCallback, Duration>> expired;
    TimePoint next = TimePoint::max();
    {
        MutexLock lock(mu_);
        const TimePoint now = clock_->now();
        while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
            auto it = pending_.find(deadlines_.begin()->second);
            COMET_CHECK(it != pending_.end(), "deadline without a pending request");
            const Duration timeout = it->second.timeout;
            expired.emplace_back(take_pending_locked(it), timeout);
        }
        if (!deadlines_.empty()) {
            next = deadlines_.begin()->first;
        }
        armed_deadline_ = next;
    }
    for (auto& [callback, timeout] : expired) {
        // Java: "wait response on the channel <addr> timeout, <ms>(ms)".
        callback(Status::error(Errc::kTimeout, "wait response on the channel {} timeout, {}(ms)",
                               remote_address_, to_millis(timeout)));
    }
    if (next != TimePoint::max()) {
        rearm_request_timer();
    }
}

void Connection::arm_idle_timer(Duration after) {
    idle_timer_.expires_after(after);
    idle_timer_.async_wait(
        [self = shared_from_this()](const asio::error_code& ec) { self->on_idle_timer(ec); });
}

void Connection::on_idle_timer(const asio::error_code& ec) {
    if (ec || closed_) {
        return;
    }
    const Duration idle_for = clock_->now() - last_io_;
    if (idle_for >= options_.max_idle) {
        close(Status::error(Errc::kTimeout, "idle for {} ms (max idle {} ms)", to_millis(idle_for),
                            to_millis(options_.max_idle)));
        return;
    }
    arm_idle_timer(options_.max_idle - idle_for);
}

void Connection::touch() { last_io_ = clock_->now(); }

// ---- close --------------------------------------------------------------------------------

void Connection::close(Status reason) {
    MutexLock lock(mu_);
    close_locked(std::move(reason));
}

void Connection::close_now(Status reason) {
    COMET_CHECK(ctx_.get_executor().running_in_this_thread(),
                "Connection::close_now off the connection's I/O thread");
    {
        MutexLock lock(mu_);
        if (!closing_) {
            closing_ = true;
            close_reason_ = std::move(reason);
        }
    }
    do_close();
}

void Connection::close_locked(Status reason) {
    if (closing_) {
        return;
    }
    closing_ = true;
    close_reason_ = std::move(reason);
    asio::post(ctx_, [self = shared_from_this()] { self->do_close(); });
}

void Connection::close_after_flush(Status reason) {
    MutexLock lock(mu_);
    if (closing_) {
        return;
    }
    if (!write_scheduled_ && out_queue_.empty()) {
        close_locked(std::move(reason));
        return;
    }
    close_after_flush_ = true;
    flush_reason_ = std::move(reason);
}

void Connection::do_close() {
    if (closed_) {
        return;
    }
    closed_ = true;
    asio::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    request_timer_.cancel();
    idle_timer_.cancel();

    Status reason;
    std::unordered_map<int32_t, Pending> pending;
    std::vector<OutFrame> unsent;
    {
        MutexLock lock(mu_);
        reason = close_reason_;
        pending.swap(pending_);
        deadlines_.clear();
        unsent.swap(out_queue_);
        armed_deadline_ = TimePoint::max();
    }
    if (is_peer_fault(reason)) {
        spdlog::warn("net: closing connection {} (peer {}): {}", id_, remote_address_,
                     reason.to_string());
    } else {
        spdlog::info("net: closing connection {} (peer {}): {}", id_, remote_address_,
                     reason.to_string());
    }
    const Status failed = Status::error(Errc::kUnavailable, "connection to {} closed: {}",
                                        remote_address_, reason.message());
    for (auto& f : unsent) {
        if (f.written) {
            f.written(failed);
        }
    }
    unsent.clear();
    // Fail in opaque order so callers see a deterministic sequence.
    std::map<int32_t, ResponseCallback> ordered;
    for (auto& [opaque, p] : pending) {
        ordered.emplace(opaque, std::move(p.callback));
    }
    pending.clear();
    for (auto& [opaque, callback] : ordered) {
        callback(failed);
    }
    handler_->on_closed(shared_from_this(), reason);
}

}  // namespace comet::net
