#include "net/processor.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <set>

#include "base/check.h"
#include "base/pool_allocator.h"

namespace comet::net {

namespace {

// Runs one request through its processor. Exceptions never cross module boundaries; this is
// the last line of defence.
void run_processor(RequestProcessor& processor, const ConnectionPtr& conn,
                   protocol::RemotingCommand&& request, const Responder& respond) {
    const int32_t code = request.code;
    try {
        processor.process(conn, std::move(request), respond);
    } catch (const std::exception& e) {
        spdlog::error("net: processor for code {} (peer {}) threw: {}", code,
                      conn->remote_address(), e.what());
        if (!respond.answered()) {
            respond.respond(kSystemError, e.what());
        }
    }
}

}  // namespace

Responder::Responder(ConnectionPtr conn, const protocol::RemotingCommand& request,
                     const RpcObserver* observer)
    // From a per-thread pool: a Responder is made for every request (issue 16).
    : state_(std::allocate_shared<State>(PoolAllocator<State>())) {
    state_->conn = std::move(conn);
    state_->request_code = request.code;
    state_->opaque = request.opaque;
    state_->serialize_type = request.serialize_type;
    state_->oneway = request.is_oneway();
    state_->observer = observer;
    if (observer != nullptr) {
        state_->started = std::chrono::steady_clock::now();
    }
}

Responder::State::~State() {
    if (!answered.load() && observer != nullptr) {
        // A one-way request expects no answer: ran is success. Otherwise it was dropped.
        observer->on_rpc(request_code, oneway ? 0 : kSystemError,
                         std::chrono::steady_clock::now() - started);
    }
    if (!oneway && !answered.load() && conn) {
        protocol::RemotingCommand response;
        response.code = kSystemError;
        response.opaque = opaque;
        response.flag = protocol::kFlagResponse;
        response.serialize_type = serialize_type;
        response.remark = "request code " + std::to_string(request_code) +
                          " dropped by its processor without a response";
        spdlog::warn("net: request code {} opaque {} from {} dropped without a response",
                     request_code, opaque, conn->remote_address());
        conn->send_response(std::move(response));
    }
}

bool Responder::claim(int32_t response_code) const {
    COMET_CHECK(state_ != nullptr, "answer through an empty Responder");
    if (state_->answered.exchange(true)) {
        spdlog::warn("net: second response to request code {} opaque {} from {} dropped",
                     state_->request_code, state_->opaque, state_->conn->remote_address());
        return false;
    }
    if (state_->observer != nullptr) {
        state_->observer->on_rpc(state_->request_code, response_code,
                                 std::chrono::steady_clock::now() - state_->started);
    }
    return !state_->oneway;
}

void Responder::operator()(protocol::RemotingCommand response,
                           std::vector<SharedBuffer> extra_body) const {
    if (!claim(response.code)) {
        return;
    }
    response.opaque = state_->opaque;
    response.serialize_type = state_->serialize_type;
    response.flag |= protocol::kFlagResponse;
    response.flag &= ~protocol::kFlagOneway;
    state_->conn->send_response(std::move(response), std::move(extra_body));
}

void Responder::answer(protocol::RemotingCommand& response) const {
    if (!claim(response.code)) {
        return;
    }
    response.opaque = state_->opaque;
    response.serialize_type = state_->serialize_type;
    response.flag |= protocol::kFlagResponse;
    response.flag &= ~protocol::kFlagOneway;
    state_->conn->send_response_encoded(response);
}

void Responder::respond(int32_t code, std::optional<std::string> remark) const {
    protocol::RemotingCommand response;
    response.code = code;
    response.remark = std::move(remark);
    (*this)(std::move(response));
}

bool Responder::is_oneway() const { return state_ && state_->oneway; }
bool Responder::answered() const { return state_ && state_->answered.load(); }
const ConnectionPtr& Responder::connection() const {
    COMET_CHECK(state_ != nullptr, "connection() of an empty Responder");
    return state_->conn;
}

void QueuedRequest::operator()() { run_processor(*processor, conn, std::move(request), respond); }

void QueuedRequest::reject(std::function<void()>& task, int32_t code, const std::string& remark) {
    if (QueuedRequest* q = task.target<QueuedRequest>()) {
        q->respond.respond(code, remark);
    }
}

std::shared_ptr<RequestProcessor> make_processor(FunctionProcessor::Fn fn) {
    return std::make_shared<FunctionProcessor>(std::move(fn));
}

void ProcessorTable::register_processor(int32_t code, std::shared_ptr<RequestProcessor> processor,
                                        std::shared_ptr<ThreadPoolExecutor> executor) {
    COMET_CHECK(processor != nullptr && executor != nullptr, "processor for code {} incomplete",
                code);
    table_[code] = Entry{std::move(processor), std::move(executor), false};
}

void ProcessorTable::register_inline(int32_t code, std::shared_ptr<RequestProcessor> processor,
                                     bool borrows_body) {
    COMET_CHECK(processor != nullptr, "inline processor for code {} is null", code);
    table_[code] = Entry{std::move(processor), nullptr, borrows_body};
}

void ProcessorTable::register_default(std::shared_ptr<RequestProcessor> processor,
                                      std::shared_ptr<ThreadPoolExecutor> executor) {
    COMET_CHECK(processor != nullptr && executor != nullptr, "default processor incomplete");
    default_ = Entry{std::move(processor), std::move(executor), false};
}

void ProcessorTable::dispatch(const ConnectionPtr& conn, protocol::RemotingCommand&& request) const {
    const Entry* entry = nullptr;
    if (auto it = table_.find(request.code); it != table_.end()) {
        entry = &it->second;
    } else if (default_) {
        entry = &*default_;
    }
    Responder respond(conn, request, observer_);
    if (entry == nullptr) {
        // Java: " request type <code> not supported" (leading space included).
        respond.respond(kRequestCodeNotSupported,
                        " request type " + std::to_string(request.code) + " not supported");
        return;
    }
    if (entry->processor->reject_request()) {
        respond.respond(kSystemBusy, "[REJECTREQUEST]system busy, start flow control for a while");
        return;
    }
    if (entry->executor == nullptr) {
        if (!entry->borrows_body) {
            request.own_body();
        }
        run_processor(*entry->processor, conn, std::move(request), respond);
        return;
    }
    request.own_body();  // the executor runs it after the read buffer has moved on
    bool queued = entry->executor->execute(
        QueuedRequest{entry->processor, conn, std::move(request), respond}, &QueuedRequest::reject);
    if (!queued) {
        respond.respond(kSystemBusy, "[OVERLOAD]system busy, start flow control for a while");
    }
}

void ProcessorTable::shutdown_executors() {
    std::set<ThreadPoolExecutor*> done;
    auto stop = [&done](const std::shared_ptr<ThreadPoolExecutor>& ex) {
        if (done.insert(ex.get()).second) {
            ex->shutdown();
        }
    };
    for (auto& [code, entry] : table_) {
        if (entry.executor != nullptr) {
            stop(entry.executor);
        }
    }
    if (default_) {
        stop(default_->executor);
    }
}

}  // namespace comet::net
