#pragma once
// Request processing: the RequestProcessor interface, the Responder a processor answers with
// (now or later, from any thread), and ProcessorTable, which routes a request by code to its
// processor on the processor's executor. Java counterparts: NettyRequestProcessor,
// RemotingResponseCallback and NettyRemotingAbstract#processRequestCommand.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "net/connection.h"
#include "net/thread_pool_executor.h"
#include "protocol/remoting_command.h"
#include "protocol/response_code.h"

namespace comet::net {

// Response codes the transport itself produces (RemotingSysResponseCode).
inline constexpr int32_t kSystemError = protocol::ResponseCode::kSystemError;
inline constexpr int32_t kSystemBusy = protocol::ResponseCode::kSystemBusy;
inline constexpr int32_t kRequestCodeNotSupported =
    protocol::ResponseCode::kRequestCodeNotSupported;

// Told about every request a server answered (metrics): its code, the response code
// (SYSTEM_ERROR for a request dropped without an answer, SUCCESS for a one-way request left
// unanswered) and the time from dispatch to the answer. Called on the answering thread with no
// lock held; must be quick and must not block.
class RpcObserver {
public:
    virtual ~RpcObserver() = default;
    virtual void on_rpc(int32_t request_code, int32_t response_code,
                        std::chrono::nanoseconds took) const = 0;
};

// Answers one request, exactly once, from any thread, at any later time. Copyable: copies share
// one state and only the first answer goes out (later ones are logged and dropped). For one-way
// requests every answer is dropped. If every copy is destroyed without an answer, the request
// gets SYSTEM_ERROR "request dropped by processor" so the caller does not wait for a timeout.
// Holding a Responder keeps the Connection object (not the socket) alive; answering a closed
// connection is a no-op.
class Responder {
public:
    Responder() = default;
    // `observer` (may be null) hears about the answer; it must outlive every copy.
    Responder(ConnectionPtr conn, const protocol::RemotingCommand& request,
              const RpcObserver* observer = nullptr);

    // Sets the response's opaque, response flag and serialization from the request, then queues
    // it: a request in the ROCKETMQ binary header is answered in it, as RocketMQ 4.9.8's
    // NettyRemotingAbstract does (the response takes the request's serializeTypeCurrentRPC).
    // The body on the wire is response.body followed by `extra_body` (not copied; SharedBuffer).
    void operator()(protocol::RemotingCommand response,
                    std::vector<SharedBuffer> extra_body = {}) const;
    // The same for a response the caller keeps: `response` is encoded (its opaque and flags set
    // first), not moved, so a caller may reuse one command and its strings' capacity for every
    // answer (the send path, issue 16). No extra body.
    void answer(protocol::RemotingCommand& response) const;
    // Shorthand: response_to(request, code, remark).
    void respond(int32_t code, std::optional<std::string> remark = std::nullopt) const;

    bool is_oneway() const;
    // True once an answer was given (or dropped, for one-way requests).
    bool answered() const;
    const ConnectionPtr& connection() const;

private:
    // Marks the request answered and tells the observer; false when nothing is to be sent
    // (answered before: logged and dropped; or a one-way request).
    bool claim(int32_t response_code) const;

    struct State {
        ConnectionPtr conn;
        int32_t request_code = 0;
        int32_t opaque = 0;
        protocol::SerializeType serialize_type = protocol::SerializeType::kJson;
        bool oneway = false;
        std::atomic<bool> answered{false};
        const RpcObserver* observer = nullptr;
        std::chrono::steady_clock::time_point started;  // set only with an observer
        ~State();
    };
    std::shared_ptr<State> state_;
};

// Java NettyRequestProcessor. process() runs on the executor the processor was registered
// with, or, for a processor registered inline, on the I/O thread that read the request; it may
// answer through `respond` before returning or keep it and answer later (long polling,
// asynchronous store puts). An inline processor must never block: what may wait (disk,
// replicas, another broker) must finish through a completion or go on to an executor.
class RequestProcessor {
public:
    virtual ~RequestProcessor() = default;
    virtual void process(const ConnectionPtr& conn, protocol::RemotingCommand request,
                         Responder respond) = 0;
    // True: answer SYSTEM_BUSY "[REJECTREQUEST]..." without calling process (flow control).
    virtual bool reject_request() const { return false; }
};

// A request queued on its processor's executor: running it calls the processor; the executor's
// fast failure (ThreadPoolExecutor::take_head_if_waited) may instead answer it through reject.
struct QueuedRequest {
    std::shared_ptr<RequestProcessor> processor;
    ConnectionPtr conn;
    protocol::RemotingCommand request;
    Responder respond;
    void operator()();
    // ThreadPoolExecutor::Reject for a task holding a QueuedRequest: answers `code` / `remark`.
    static void reject(std::function<void()>& task, int32_t code, const std::string& remark);
};

// Adapts a lambda to RequestProcessor.
class FunctionProcessor final : public RequestProcessor {
public:
    using Fn = std::function<void(const ConnectionPtr&, protocol::RemotingCommand&&, Responder)>;
    explicit FunctionProcessor(Fn fn) : fn_(std::move(fn)) {}
    void process(const ConnectionPtr& conn, protocol::RemotingCommand request,
                 Responder respond) override {
        fn_(conn, std::move(request), std::move(respond));
    }

private:
    Fn fn_;
};
std::shared_ptr<RequestProcessor> make_processor(FunctionProcessor::Fn fn);

// Code -> (processor, executor or inline). Filled before the owner starts, read-only
// afterwards, so dispatch() needs no lock. Owned by RemotingServer / RemotingClient.
class ProcessorTable {
public:
    // Requires: processor and executor non-null; called before the owner starts.
    void register_processor(int32_t code, std::shared_ptr<RequestProcessor> processor,
                            std::shared_ptr<ThreadPoolExecutor> executor);
    // Run to completion: process() is called on the I/O thread that read the request, with no
    // executor hop (docs/decisions/019-run-to-completion.md). For the hot path only (sends);
    // the processor must not block. borrows_body: the processor reads a send's body through
    // request.body_view() and calls request.own_body() before keeping the request past
    // process(), so a borrowed body is handed over as is (issue 16); otherwise it is copied
    // into request.body first. Requires: processor non-null; before the owner starts.
    void register_inline(int32_t code, std::shared_ptr<RequestProcessor> processor,
                         bool borrows_body = false);
    // Used for codes with no processor of their own (namesrv's DefaultRequestProcessor).
    void register_default(std::shared_ptr<RequestProcessor> processor,
                          std::shared_ptr<ThreadPoolExecutor> executor);

    // Called on the connection's I/O thread. Unknown code -> REQUEST_CODE_NOT_SUPPORTED,
    // rejected or executor full -> SYSTEM_BUSY (never answered for one-way requests). An inline
    // processor runs before dispatch() returns.
    // The request is taken by rvalue all the way to the processor's own parameter: a command is
    // moved once between the read and the processor, not once per layer (issue 16).
    void dispatch(const ConnectionPtr& conn, protocol::RemotingCommand&& request) const;

    // Every request dispatched from now on reports its answer to `observer` (null: none).
    // Requires: before the owner starts; the observer outlives the table and its responders.
    void set_observer(const RpcObserver* observer) { observer_ = observer; }

    // Shuts down every registered executor (runs what they have queued, joins).
    void shutdown_executors();

private:
    struct Entry {
        std::shared_ptr<RequestProcessor> processor;
        std::shared_ptr<ThreadPoolExecutor> executor;  // null: runs inline on the I/O thread
        bool borrows_body = false;                     // inline only: see register_inline
    };
    std::unordered_map<int32_t, Entry> table_;
    std::optional<Entry> default_;
    const RpcObserver* observer_ = nullptr;
};

}  // namespace comet::net
