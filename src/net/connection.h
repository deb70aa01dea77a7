#pragma once
// Connection: one TCP connection speaking RocketMQ remoting frames, on either side (a server's
// accepted channel or a client's outbound channel). Both sides may send requests on it and both
// correlate responses by opaque, so the broker can call a client over the client's own
// connection (NOTIFY_CONSUMER_IDS_CHANGED). Java counterpart: a Netty Channel plus the
// responseTable part of NettyRemotingAbstract.
//
// Owner: shared_ptr. The RemotingServer / RemotingClient that created it holds one until it is
// closed; Responders and user code may hold more. A closed Connection is inert: sends fail or
// are dropped, it never touches its socket again.
// Threads: the public methods are safe from any thread. All socket work, timers, frame decoding
// and the handler callbacks run on the one I/O thread of the loop the connection is bound to.
// Lock: mu_ guards the outbound queue, the in-flight request table and the closing flag; it is
// never held while calling user code (callbacks, handler) and it is a leaf lock.
// Invariants: every request registered in pending_ completes exactly once (response, timeout or
// close); after closing_ is set nothing is added to pending_ or out_queue_ and nothing more is
// posted to the loop except the single close.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "net/asio.h"
#include "net/handler_memory.h"
#include "net/io_loop.h"
#include "net/read_buffer.h"
#include "protocol/remoting_command.h"

namespace comet::net {

// Body bytes owned elsewhere (for instance a mapped CommitLog region), appended to a frame
// without copying. `owner` keeps `data` alive until the bytes are written or the write failed.
struct SharedBuffer {
    std::shared_ptr<const void> owner;
    const char* data = nullptr;
    size_t size = 0;
};

// Completion of a request: the response, or kTimeout / kUnavailable (connection closed,
// connect failed, service stopped). Runs on an I/O thread, or on the caller's thread when the
// request fails before anything was sent. Must not block.
using ResponseCallback = std::function<void(Result<protocol::RemotingCommand>)>;
// Completion of a write (one-way requests): OK once the bytes were handed to the kernel.
using WriteCallback = std::function<void(Status)>;

struct ConnectionOptions {
    // Frames longer than this (length word included) close the connection
    // (Java: com.rocketmq.remoting.frameMaxLength, 16 MiB).
    size_t max_frame_bytes = protocol::kDefaultMaxFrameBytes;
    // Close after this long without reading or writing anything
    // (Java: serverChannelMaxIdleTimeSeconds / clientChannelMaxIdleTimeSeconds, 120 s).
    // Zero disables.
    Duration max_idle = std::chrono::seconds(120);
    // Size of each socket read; the buffer grows to hold a whole large frame.
    size_t read_chunk_bytes = 64 * 1024;
};

class Connection;
using ConnectionPtr = std::shared_ptr<Connection>;

// Implemented by the owner (server / client). Called on the connection's I/O thread only.
class ConnectionHandler {
public:
    virtual ~ConnectionHandler() = default;
    // An incoming request (responses are matched inside Connection). A send's body may be
    // borrowed from the connection's read buffer (request.borrowed_body): valid until this
    // call returns; keeping the request longer requires request.own_body() first.
    virtual void on_request(const ConnectionPtr& conn, protocol::RemotingCommand&& request) = 0;
    // Exactly once, after the socket is closed and every pending request has failed.
    virtual void on_closed(const ConnectionPtr& conn, const Status& reason) = 0;
    // Around the frames decoded from one socket read (begin before the first on_request, end
    // after the last, on every path out of the read, only when the read holds a whole frame).
    virtual void on_read_batch_begin() {}
    virtual void on_read_batch_end() {}
    // After on_read_batch_end(), once the replies the batch produced on this thread were
    // handed to the socket (or queued behind a write already in flight); on every path on
    // which on_read_batch_end() ran.
    virtual void on_read_batch_written() {}
};

// Next request id. Process-wide, like Java's static RemotingCommand.requestId.
int32_t next_opaque();

class Connection : public std::enable_shared_from_this<Connection> {
public:
    // `socket` must be connected and belong to loops->context(loop_index). `handler` must stay
    // valid until on_closed has run (owners guarantee it by draining the loops at shutdown).
    Connection(std::shared_ptr<IoLoopGroup> loops, size_t loop_index, asio::ip::tcp::socket socket,
               ConnectionHandler* handler, ConnectionOptions options, Clock* clock);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    // Starts reading and the idle timer. Call once.
    void start();

    uint64_t id() const { return id_; }
    // "ip:port" of the peer / of our end, as RemotingHelper.parseChannelRemoteAddr prints it.
    const std::string& remote_address() const { return remote_address_; }
    const std::string& local_address() const { return local_address_; }
    bool is_open() const;
    // Requests sent on this connection still waiting for their response.
    size_t in_flight_requests() const;

    // Queues a response. Its opaque and response flag must already be set (Responder does it).
    // The body on the wire is response.body followed by every extra buffer, in order; the
    // buffers are not copied. Dropped silently when the connection is closed.
    void send_response(protocol::RemotingCommand response,
                       std::vector<SharedBuffer> extra_body = {});

    // The same without an extra body, for a response the caller keeps: its bytes are encoded
    // into the write buffer, the command is neither moved nor changed.
    void send_response_encoded(const protocol::RemotingCommand& response);

    // Sends a request (a fresh opaque is assigned) and calls `callback` exactly once.
    void invoke_async(protocol::RemotingCommand request, Duration timeout,
                      ResponseCallback callback);
    // Same, with an absolute deadline on the connection's Clock (the client computes it before
    // connecting); `timeout` is only quoted in the timeout error.
    void invoke_until(protocol::RemotingCommand request, TimePoint deadline, Duration timeout,
                      ResponseCallback callback);
    // Sends a one-way request (no response is expected). `written` (optional) reports whether
    // it reached the kernel.
    void invoke_oneway(protocol::RemotingCommand request, WriteCallback written = {});
    // Same; the body on the wire is request.body followed by every extra buffer, in order
    // (not copied, as for send_response).
    void invoke_oneway(protocol::RemotingCommand request, std::vector<SharedBuffer> extra_body,
                       WriteCallback written);
    // Hot path for callers that encode their own request frames (mqbench; decision 031):
    // `frame` is one whole request frame (length word included) whose header already carries
    // `opaque` (from next_opaque()) and no response/one-way flag. Its bytes are copied into the
    // connection's write buffer, which the frames queued together share, so a burst of
    // requests leaves in one write with no allocation per frame; the pending-request entries
    // are recycled too. `callback` as for invoke_until. Returns false, leaving `callback`
    // untouched and sending nothing, when `opaque` is still in flight (the 31-bit counter
    // wrapped): encode again with a fresh opaque. On a closed connection `callback` fails at
    // once, on the calling thread, and true is returned.
    bool invoke_frame(int32_t opaque, std::string_view frame, TimePoint deadline,
                      Duration timeout, ResponseCallback&& callback);

    // Closes now: pending requests fail, queued writes are dropped. Idempotent, any thread.
    void close(Status reason);
    // The same, carried out before it returns; only on this connection's I/O thread. After it
    // no byte of a queued or partly written frame is read again (close() leaves that to the
    // loop, which may still write first): for callers whose frames reference memory they are
    // about to change.
    void close_now(Status reason);
    // Closes once everything queued so far is written (graceful shutdown).
    void close_after_flush(Status reason);

private:
    struct OutFrame {
        std::string head;                 // frame prefix + header + inline body
        std::vector<SharedBuffer> extra;  // more body bytes, referenced
        WriteCallback written;
        bool shared = false;  // a write buffer later frames (invoke_frame, responses) append to
    };
    using DeadlineMap = std::multimap<TimePoint, int32_t>;
    struct Pending {
        ResponseCallback callback;
        DeadlineMap::iterator deadline;
        Duration timeout;
    };
    using PendingMap = std::unordered_map<int32_t, Pending>;

    // Queues a frame; false when closing. Kicks the writer when idle.
    bool enqueue(OutFrame frame);
    void kick_writer_locked() REQUIRES(mu_);
    // The write buffer at the queue's tail that frames are appended to (a new one, from the
    // spare buffers, when the tail is not one).
    std::string& shared_buffer_locked() REQUIRES(mu_);
    // Registers a request in pending_ and deadlines_, reusing recycled nodes; arms the timer
    // when this deadline is the earliest.
    void add_pending_locked(int32_t opaque, ResponseCallback&& callback, TimePoint deadline,
                            Duration timeout) REQUIRES(mu_);
    // Removes `it` from pending_ / deadlines_ (nodes kept for reuse); returns its callback.
    ResponseCallback take_pending_locked(PendingMap::iterator it) REQUIRES(mu_);
    void close_locked(Status reason) REQUIRES(mu_);

    // I/O thread only.
    void do_read();
    void on_read(const asio::error_code& ec, size_t n);
    // A large response (kDirectBodyBytes or more) whose header is in rbuf_: decodes the
    // header and reads the rest of the body straight into the string that becomes its body
    // (a pull of a thousand messages is not copied out of rbuf_, nor is rbuf_ grown for it).
    // False, with nothing changed, when the frame is not such a response.
    bool start_direct_body(std::string_view avail, size_t frame_bytes);
    void on_body_read(const asio::error_code& ec, size_t n);
    // Closes on a failed read (both reads'); true when it did.
    bool read_failed(const asio::error_code& ec);
    // close() was called (from any thread): what is read from now on is ignored.
    bool close_requested();
    void handle_response(protocol::RemotingCommand response);
    void do_write();
    // Starts the writer if it is scheduled and not started yet: at the end of a socket read,
    // or from the posted kick (from_kick), whichever comes first (I/O thread).
    void start_write_now(bool from_kick = false);
    void on_write(const asio::error_code& ec);
    void rearm_request_timer();
    void on_request_timer(const asio::error_code& ec);
    void arm_idle_timer(Duration after);
    void on_idle_timer(const asio::error_code& ec);
    void do_close();
    void touch();

    const uint64_t id_;
    const std::shared_ptr<IoLoopGroup> loops_;  // keeps the io_context alive
    asio::io_context& ctx_;
    ConnectionHandler* const handler_;
    const ConnectionOptions options_;
    Clock* const clock_;
    std::string remote_address_;
    std::string local_address_;

    mutable Mutex mu_;
    bool closing_ GUARDED_BY(mu_) = false;
    Status close_reason_ GUARDED_BY(mu_);
    bool close_after_flush_ GUARDED_BY(mu_) = false;
    Status flush_reason_ GUARDED_BY(mu_);
    bool write_scheduled_ GUARDED_BY(mu_) = false;
    // The writer is scheduled but no do_write() has started yet (the kick is posted): the end
    // of a socket read may start it at once instead (start_write_now).
    bool write_start_pending_ GUARDED_BY(mu_) = false;
    // A kick is posted and has not run (at most one outstanding: its handler memory).
    bool kick_in_queue_ GUARDED_BY(mu_) = false;
    std::vector<OutFrame> out_queue_ GUARDED_BY(mu_);
    PendingMap pending_ GUARDED_BY(mu_);
    DeadlineMap deadlines_ GUARDED_BY(mu_);
    // Nodes of completed requests, reused by the next ones (bounded: kMaxSpareNodes).
    std::vector<PendingMap::node_type> spare_pending_ GUARDED_BY(mu_);
    std::vector<DeadlineMap::node_type> spare_deadlines_ GUARDED_BY(mu_);
    // Written shared buffers, emptied, for the next invoke_frame burst (bounded).
    std::vector<std::string> spare_buffers_ GUARDED_BY(mu_);
    TimePoint armed_deadline_ GUARDED_BY(mu_) = TimePoint::max();

    // I/O thread only.
    asio::ip::tcp::socket socket_;
    asio::steady_timer request_timer_;
    asio::steady_timer idle_timer_;
    ReadBuffer rbuf_;
    size_t rbegin_ = 0;
    size_t rend_ = 0;
    size_t want_bytes_ = 0;  // size of the frame being read, when known
    // start_direct_body: the response whose body is being read into body_in_ (engaged while
    // it is), and how much of the body has arrived.
    static constexpr size_t kDirectBodyBytes = 256 * 1024;
    std::optional<protocol::RemotingCommand> body_cmd_;
    std::string body_in_;
    size_t body_have_ = 0;
    // The frame being read has a large body but is no such response: not examined again.
    bool direct_refused_ = false;
    std::vector<OutFrame> writing_;
    std::vector<asio::const_buffer> iov_;
    // The state of the writer kick's post and of the write in flight: at most one of each is
    // outstanding (write_scheduled_), so neither allocates per burst (issue 16).
    static constexpr size_t kKickMemoryBytes = 256;
    static constexpr size_t kWriteMemoryBytes = 2048;
    HandlerMemory<kKickMemoryBytes> kick_memory_;
    HandlerMemory<kWriteMemoryBytes> write_memory_;
    TimePoint last_io_;
    bool closed_ = false;
};

}  // namespace comet::net
