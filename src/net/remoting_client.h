#pragma once
// RemotingClient: the RocketMQ remoting client on asio (Java NettyRemotingClient). Keeps one
// connection per remote address ("host:port"), connects on demand and reconnects after a close.
// Requests are pipelined on that connection and correlated by opaque. The server may call the
// client back on the same connection (NOTIFY_CONSUMER_IDS_CHANGED, CHECK_TRANSACTION_STATE):
// register a processor for the code as on the server.
//
// Owner: the producer / consumer / broker (for namesrv registration, HA, etc.).
// Threads: every public method is thread-safe. "<name>_N" I/O threads; callbacks run on an I/O
// thread (or on the calling thread when a request fails before anything was sent) and must not
// block. invoke_sync / invoke_oneway block the caller and refuse to run on an I/O thread.
// Lock: mu_ guards the address -> channel table; never held while calling a Connection,
// a callback or asio (except asio::post, which never calls back).
// Errors: kUnavailable (connect failed, connection closed, client stopped), kTimeout,
// kInvalidArgument (bad address), kFailedPrecondition (sync call on an I/O thread).

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "net/connection.h"
#include "net/io_loop.h"
#include "net/processor.h"

namespace comet::net {

// Java NettyClientConfig (the parts the transport uses).
struct RemotingClientConfig {
    std::string name = "NettyClient";  // thread name prefix
    size_t io_threads = 1;
    Duration connect_timeout = std::chrono::seconds(3);  // connectTimeoutMillis
    ConnectionOptions connection;  // clientChannelMaxIdleTimeSeconds is connection.max_idle
    // Run on these loops (another owner's, started, and running until this client's shutdown()
    // has returned) instead of io_threads of its own: a peer whose server and client share one
    // thread hands nothing between threads (DLedger). Empty: the client owns its loops.
    std::shared_ptr<IoLoopGroup> loops;
};

using ConnectCallback = std::function<void(Result<ConnectionPtr>)>;

class RemotingClient final : private ConnectionHandler {
public:
    explicit RemotingClient(RemotingClientConfig config = {},
                            Clock* clock = &SystemClock::instance());
    ~RemotingClient() override;
    RemotingClient(const RemotingClient&) = delete;
    RemotingClient& operator=(const RemotingClient&) = delete;

    // Server-initiated requests. Before start().
    void register_processor(int32_t code, std::shared_ptr<RequestProcessor> processor,
                            std::shared_ptr<ThreadPoolExecutor> executor);

    void start();
    // Fails every request in flight and every pending connect with kUnavailable, closes the
    // connections, shuts the registered executors down, joins the I/O threads. Idempotent.
    void shutdown();

    // Calls `callback` exactly once: the response, or an error. `timeout` covers connecting too.
    void invoke_async(const std::string& addr, protocol::RemotingCommand request, Duration timeout,
                      ResponseCallback callback);
    Result<protocol::RemotingCommand> invoke_sync(const std::string& addr,
                                                  protocol::RemotingCommand request,
                                                  Duration timeout);
    // One-way: no response. `written` (optional) says whether the frame reached the kernel.
    void invoke_oneway_async(const std::string& addr, protocol::RemotingCommand request,
                             WriteCallback written = {});
    // Same; the body on the wire is request.body followed by `extra_body` (not copied).
    void invoke_oneway_async(const std::string& addr, protocol::RemotingCommand request,
                             std::vector<SharedBuffer> extra_body, WriteCallback written);
    // Blocks until the frame is written or `timeout`.
    Status invoke_oneway(const std::string& addr, protocol::RemotingCommand request,
                         Duration timeout);

    // The open connection to `addr`, connecting when there is none.
    void get_connection(const std::string& addr, ConnectCallback callback);
    void close_connection(const std::string& addr);
    // Connection::close_now of the connection to `addr`; only on that connection's I/O thread.
    void close_connection_now(const std::string& addr);
    size_t connection_count() const;

private:
    struct Channel {
        ConnectionPtr conn;
        bool connecting = false;
        std::vector<ConnectCallback> waiters;
    };
    struct ConnectAttempt;

    void start_connect_locked(const std::string& addr) REQUIRES(mu_);
    void drain_shared_loops();
    void finish_connect(const std::shared_ptr<ConnectAttempt>& attempt, Status status);
    ConnectionHandler* handler() { return this; }
    void on_request(const ConnectionPtr& conn, protocol::RemotingCommand&& request) override;
    void on_closed(const ConnectionPtr& conn, const Status& reason) override;
    // The connection held for `addr` (open, closing or null).
    ConnectionPtr connection_to(const std::string& addr) const;

    const RemotingClientConfig config_;
    Clock* const clock_;
    std::shared_ptr<IoLoopGroup> loops_;
    const bool owns_loops_;
    ProcessorTable processors_;  // read-only after start()

    mutable Mutex mu_;
    bool running_ GUARDED_BY(mu_) = false;
    bool stopped_ GUARDED_BY(mu_) = false;
    std::map<std::string, Channel> channels_ GUARDED_BY(mu_);
    std::vector<std::weak_ptr<ConnectAttempt>> attempts_ GUARDED_BY(mu_);
};

// Blocking call on an existing connection (server -> client calls in tools and tests).
// Refuses to run on an I/O thread.
Result<protocol::RemotingCommand> invoke_sync(Connection& conn, protocol::RemotingCommand request,
                                              Duration timeout);

// Splits "host:port". kInvalidArgument when malformed.
Result<std::pair<std::string, uint16_t>> parse_address(const std::string& addr);

}  // namespace comet::net
