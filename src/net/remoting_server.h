#pragma once
// RemotingServer: the RocketMQ remoting server on asio (Java NettyRemotingServer). Accepts
// connections, decodes frames and hands each request to the processor registered for its code,
// on that processor's executor. The server can also call a connected peer (Connection::
// invoke_async / invoke_oneway), e.g. the broker's NOTIFY_CONSUMER_IDS_CHANGED to a consumer.
//
// Owner: the broker / namesrv / controller that builds it; one instance per listening port.
// Threads: "<name>_N" I/O threads (config.io_threads; loop 1 also accepts). Processors run on
// their executors. Connection hooks (ConnectionListener) run on I/O threads and must not block.
// Lock order: RemotingServer::mu_ before nothing (leaf with respect to Connection::mu_: never
//   held while calling into a Connection or a listener).
// Lifecycle: register processors and the listener, start(), ..., shutdown() (also run by the
// destructor): stop accepting; run every request already queued on the executors; let each
// connection flush what it has queued (bounded by shutdown_grace), close them all (requests
// this server sent fail); join the I/O threads, or, on shared loops (RemotingServerConfig::
// loops), wait until no handler that refers to this server is left on them.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "net/connection.h"
#include "net/io_loop.h"
#include "net/processor.h"

namespace comet::net {

// Java NettyServerConfig (the parts the transport uses).
struct RemotingServerConfig {
    std::string name = "NettyServer";  // thread name prefix
    std::string listen_host = "0.0.0.0";
    uint16_t listen_port = 0;      // 0: pick an ephemeral port; see RemotingServer::port()
    size_t io_threads = 3;         // serverSelectorThreads
    ConnectionOptions connection;  // max frame size, channelMaxIdleTimeSeconds
    // How long shutdown() waits for queued responses to be written before closing hard.
    Duration shutdown_grace = std::chrono::seconds(3);
    // Run on these loops (another owner's, started before start() and running until this
    // server's shutdown() has returned) instead of io_threads of its own: the brokers of one
    // BrokerContainer share one set of I/O threads. Empty: the server owns its loops.
    std::shared_ptr<IoLoopGroup> loops;
    // Log tag of the requests' handling on the I/O threads (base/log_tag.h; the broker a
    // container's shared loops serve). Empty: none.
    std::string log_tag;
};

// Java ChannelEventListener. Called on I/O threads; must not block.
class ConnectionListener {
public:
    virtual ~ConnectionListener() = default;
    virtual void on_connected(const ConnectionPtr& conn) {}
    // Once per connection, after its in-flight requests have failed.
    virtual void on_closed(const ConnectionPtr& conn, const Status& reason) {}
};

class RemotingServer final : private ConnectionHandler {
public:
    explicit RemotingServer(RemotingServerConfig config, Clock* clock = &SystemClock::instance());
    ~RemotingServer() override;
    RemotingServer(const RemotingServer&) = delete;
    RemotingServer& operator=(const RemotingServer&) = delete;

    // Before start(). Several codes may share one executor; the server shuts the executors down
    // in shutdown().
    void register_processor(int32_t code, std::shared_ptr<RequestProcessor> processor,
                            std::shared_ptr<ThreadPoolExecutor> executor);
    // Runs on the I/O thread that read the request (ProcessorTable::register_inline).
    void register_inline_processor(int32_t code, std::shared_ptr<RequestProcessor> processor,
                                   bool borrows_body = false);
    void register_default_processor(std::shared_ptr<RequestProcessor> processor,
                                    std::shared_ptr<ThreadPoolExecutor> executor);
    void set_connection_listener(std::shared_ptr<ConnectionListener> listener);
    // Before start(): every request's answer is reported to `observer` (metrics). The
    // observer must outlive the server and every Responder it handed out.
    void set_rpc_observer(const RpcObserver* observer);
    // Before start(): called on the I/O thread around the requests decoded from one socket
    // read, and once their replies were written (ConnectionHandler::on_read_batch_begin /
    // _end / _written). Must not block.
    void set_read_batch_hooks(std::function<void()> begin, std::function<void()> end,
                              std::function<void()> written);

    // Binds and starts accepting. kIoError naming the address when the bind fails.
    Status start();
    // The bound port (the ephemeral one when listen_port was 0). Requires: start() succeeded.
    uint16_t port() const;
    void shutdown();


    std::vector<ConnectionPtr> connections() const;
    size_t connection_count() const;
    // The I/O loops (running from start() until shutdown() returns): other parts of the same
    // peer may run their sockets, timers and posted work on them (RemotingClientConfig::loops,
    // src/ha replication, the DLedger driver). Such a part must be stopped before shutdown(),
    // which drains and joins the loops.
    const std::shared_ptr<IoLoopGroup>& loops() const { return loops_; }

private:
    void do_accept();
    // Shared loops: two rounds of an empty step on every loop, each queued behind whatever the
    // closes posted (RemotingClient::drain_shared_loops).
    void drain_shared_loops();
    ConnectionHandler* handler() { return this; }
    void on_request(const ConnectionPtr& conn, protocol::RemotingCommand&& request) override;
    void on_closed(const ConnectionPtr& conn, const Status& reason) override;
    void on_read_batch_begin() override;
    void on_read_batch_end() override;
    void on_read_batch_written() override;

    const RemotingServerConfig config_;
    Clock* const clock_;
    std::shared_ptr<IoLoopGroup> loops_;
    const bool owns_loops_;
    const std::string* const log_tag_;  // interned config_.log_tag, nullptr when empty
    ProcessorTable processors_;                     // read-only after start()
    std::shared_ptr<ConnectionListener> listener_;  // read-only after start()
    std::function<void()> batch_begin_;             // read-only after start()
    std::function<void()> batch_end_;               // read-only after start()
    std::function<void()> batch_written_;           // read-only after start()
    asio::ip::tcp::acceptor acceptor_;              // loop 0 only, after start()
    uint16_t port_ = 0;

    mutable Mutex mu_;
    std::condition_variable_any closed_cv_;
    bool started_ GUARDED_BY(mu_) = false;
    bool stopping_ GUARDED_BY(mu_) = false;
    std::unordered_map<uint64_t, ConnectionPtr> connections_ GUARDED_BY(mu_);
};

}  // namespace comet::net
