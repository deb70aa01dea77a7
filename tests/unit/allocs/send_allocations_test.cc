// Heap allocations per send on the broker's I/O threads (issue 16). This binary replaces the
// global operator new with a counting one; it counts only allocations made on threads named
// "BrokerServer*" (the remoting I/O threads, where a send runs to completion: decode, checks,
// append, commit at the end of the read, completion, reply). A real BrokerController (ASYNC_MASTER,
// ASYNC_FLUSH, ephemeral port, temp store) is driven over a plain socket with pipelined
// SEND_MESSAGE_V2 frames of 1 KiB; after a warm-up, allocations are counted over 5,000 and over
// 10,000 sends, and the per-send figure is their difference over the extra 5,000 (so fixed costs
// such as a first segment or a table that grows once do not count).
//
// Target (issue 16): no allocation per send. Until the send path gets there this test holds
// the line at kBudgetPerSend, the figure measured when it was written plus a small margin, and
// prints the measured figure; lower the budget when the path improves.

#include <dlfcn.h>
#include <execinfo.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "broker/broker_controller.h"
#include "protocol/remoting_command.h"
#include "protocol/request_code.h"

namespace {

std::atomic<int64_t> g_counted{0};
std::atomic<bool> g_saw_io_thread{false};

// 1: a BrokerServer thread (counted); 0: not known to be one yet. Only a positive answer is
// cached, because a thread allocates before it is named.
thread_local int tls_io_thread = 0;

bool counted_thread() {
    if (tls_io_thread == 1) {
        return true;
    }
    char name[16] = {};
    if (::prctl(PR_GET_NAME, name, 0, 0, 0) == 0 && std::strncmp(name, "BrokerServer", 12) == 0) {
        tls_io_thread = 1;
        g_saw_io_thread.store(true, std::memory_order_relaxed);
        return true;
    }
    return false;
}

// COMET_ALLOC_TRACE=1: the call stacks of the counted allocations of one window are kept and
// printed (as offsets into this binary, for `addr2line -f -C -i -e unit_allocs`), to find
// what still allocates per send. Off by default.
constexpr int kTraceDepth = 14;
constexpr int kTraceSlots = 256;
struct TraceSlot {
    void* frames[kTraceDepth];
    int depth;
    int64_t count;
};
std::atomic<bool> g_tracing{false};
std::mutex g_trace_mu;
TraceSlot g_trace[kTraceSlots];
int g_trace_used = 0;
thread_local bool tls_in_trace = false;

void trace_alloc() {
    if (tls_in_trace) {
        return;
    }
    tls_in_trace = true;
    void* frames[kTraceDepth];
    const int depth = ::backtrace(frames, kTraceDepth);
    {
        std::lock_guard<std::mutex> lock(g_trace_mu);
        int i = 0;
        for (; i < g_trace_used; ++i) {
            if (g_trace[i].depth == depth &&
                std::memcmp(g_trace[i].frames, frames, sizeof(void*) * depth) == 0) {
                ++g_trace[i].count;
                break;
            }
        }
        if (i == g_trace_used && g_trace_used < kTraceSlots) {
            std::memcpy(g_trace[i].frames, frames, sizeof(void*) * depth);
            g_trace[i].depth = depth;
            g_trace[i].count = 1;
            ++g_trace_used;
        }
    }
    tls_in_trace = false;
}

void print_traces(int64_t sends) {
    std::lock_guard<std::mutex> lock(g_trace_mu);
    std::vector<const TraceSlot*> order;
    for (int i = 0; i < g_trace_used; ++i) {
        order.push_back(&g_trace[i]);
    }
    std::sort(order.begin(), order.end(),
              [](const TraceSlot* a, const TraceSlot* b) { return a->count > b->count; });
    for (const TraceSlot* t : order) {
        std::printf("%.2f per send:", static_cast<double>(t->count) / static_cast<double>(sends));
        for (int f = 2; f < t->depth; ++f) {  // skip trace_alloc and counted_alloc
            Dl_info info{};
            if (::dladdr(t->frames[f], &info) != 0 && info.dli_fbase != nullptr) {
                std::printf(" %s+0x%lx", std::strrchr(info.dli_fname, '/') != nullptr
                                             ? std::strrchr(info.dli_fname, '/') + 1
                                             : info.dli_fname,
                            static_cast<unsigned long>(static_cast<char*>(t->frames[f]) -
                                                       static_cast<char*>(info.dli_fbase) - 1));
            }
        }
        std::printf("\n");
    }
}

void* counted_alloc(std::size_t n) {
    if (counted_thread()) {
        g_counted.fetch_add(1, std::memory_order_relaxed);
        if (g_tracing.load(std::memory_order_relaxed)) {
            trace_alloc();
        }
    }
    if (void* p = std::malloc(n == 0 ? 1 : n)) {
        return p;
    }
    throw std::bad_alloc();
}

}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace comet::broker {
namespace {

namespace fs = std::filesystem;
namespace Req = protocol::RequestCode;

// Measured 2026-12-05: 28.2 after decision 028 and the ExtFields / properties changes, 22.0
// once the completion chain (reply -> replication -> store -> CommitLog) was held inline
// (base/inline_function.h), 20.9 once the properties string is built in a per-thread buffer,
// 17.8 once the put's result is moved down the completion chain and the fast path's header
// strings are moved out instead of copied, 16.9 once the reply's msgId is moved in, 12.8 once
// the transactionId (the UNIQ_KEY) is moved down to the reply instead of copied three times
// and responses are encoded straight into the connection's shared write buffer, 11.8 once the
// inline send moves its reply function into the completion instead of copying it, 5.8 once the
// Responder's state and the typed header's slot come from per-thread pools
// (base/pool_allocator.h), the JSON scanner's escape buffer is kept per thread, an inline send
// is answered through its Responder held inline (SendReply, no std::function) with a per-thread
// response command whose extFields strings keep their capacity, and the UNIQ_KEY is kept inline
// by the completion, 3.8 once the typed send header is read into the strings of the last
// header the broker gave back (protocol::recycle_send_header, read_fields_into), 2.8 once a
// put's offset message id is held inline (store::OffsetMsgIds). The target is zero;
// COMET_ALLOC_TRACE=1 prints the call stacks of what is left: the three parts of the message
// the store's put consumes (the body copied out of the read buffer, the properties' vector and
// the UNIQ_KEY value), which only a put that leaves the message with its caller can recycle.
constexpr double kBudgetPerSend = 3.3;

// A blocking client socket on 127.0.0.1 (the test thread's allocations are not counted).
class Client {
public:
    explicit Client(uint16_t port) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        timeval tv{10, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        int one = 1;
        ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }
    ~Client() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    bool ok() const { return fd_ >= 0; }
    bool write_all(const std::string& bytes) {
        size_t done = 0;
        while (done < bytes.size()) {
            const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
            if (n <= 0) {
                return false;
            }
            done += static_cast<size_t>(n);
        }
        return true;
    }
    bool read_exact(char* p, size_t n) {
        size_t done = 0;
        while (done < n) {
            const ssize_t r = ::recv(fd_, p + done, n - done, 0);
            if (r <= 0) {
                return false;
            }
            done += static_cast<size_t>(r);
        }
        return true;
    }
    // The response code of the next frame, or -1.
    int32_t read_response_code() {
        char len_buf[4];
        if (!read_exact(len_buf, 4)) {
            return -1;
        }
        const uint32_t len = get_be32(reinterpret_cast<const uint8_t*>(len_buf));
        std::string payload(len, '\0');
        if (len < 4 || !read_exact(payload.data(), len)) {
            return -1;
        }
        auto cmd = protocol::decode_frame_payload(payload);
        return cmd.is_ok() ? cmd->code : -1;
    }

private:
    int fd_ = -1;
};

class SendAllocations : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() / ("comet-allocs-" + std::to_string(::getpid()));
        fs::remove_all(root_);
    }
    void TearDown() override {
        if (broker_) {
            broker_->shutdown();
        }
        broker_.reset();
        fs::remove_all(root_);
    }

    fs::path root_;
    std::unique_ptr<BrokerController> broker_;
};

// Sends `count` messages pipelined `window` at a time; returns how many were answered SUCCESS.
int send_many(Client& c, const std::string& frame, int count, int window) {
    int ok = 0;
    std::string burst;
    for (int i = 0; i < window; ++i) {
        burst += frame;
    }
    for (int sent = 0; sent < count; sent += window) {
        if (!c.write_all(burst)) {
            return ok;
        }
        for (int i = 0; i < window; ++i) {
            if (c.read_response_code() == 0) {
                ++ok;
            }
        }
    }
    return ok;
}

TEST_F(SendAllocations, PerSendAllocationsOnTheIoThreadStayWithinBudget) {
    BrokerConfig c;
    c.broker_name = "broker-allocs";
    c.listen_host = "127.0.0.1";
    c.listen_port = 0;
    c.store_path_root_dir = root_.string();
    c.broker_role = "ASYNC_MASTER";
    c.server_selector_threads = 1;
    store::MessageStoreConfig s;
    s.mapped_file_size_commit_log = 64 * 1024 * 1024;  // no segment roll during the run
    broker_ = std::make_unique<BrokerController>(c, SystemClock::instance(), s);
    ASSERT_TRUE(broker_->initialize().is_ok());
    ASSERT_TRUE(broker_->start().is_ok());

    protocol::RemotingCommand req = protocol::RemotingCommand::request(Req::kSendMessageV2);
    const std::string props = std::string("UNIQ_KEY\x01") + "7F0000010000ABCDEF0123456789AB" +
                              "\x02WAIT\x01true\x02TAGS\x01TagA";
    req.ext_fields = {{"a", "allocs_producer_group"}, {"b", "AllocTopic"}, {"c", "TBW102"},
                      {"d", "4"}, {"e", "1"}, {"f", "0"}, {"g", "1700000000000"},
                      {"h", "0"}, {"i", props}, {"j", "0"}, {"k", "false"}};
    req.body = std::string(1024, 'm');
    req.serialize_type = protocol::SerializeType::kJson;
    req.language = protocol::LanguageCode::kJava;
    req.version = 399;  // V4_9_8
    const std::string frame = protocol::encode_frame(req);

    Client client(broker_->port());
    ASSERT_TRUE(client.ok());
    // Warm-up: creates the topic (executor path), the queue's tables, the pools, the caches.
    ASSERT_EQ(send_many(client, frame, 3000, 30), 3000);

    const char* trace_env = std::getenv("COMET_ALLOC_TRACE");
    const bool trace = trace_env != nullptr && std::string(trace_env) == "1";
    if (trace) {
        void* warm[2];
        (void)::backtrace(warm, 2);  // loads the unwinder before any traced allocation
    }

    const int64_t before = g_counted.load();
    ASSERT_EQ(send_many(client, frame, 5000, 50), 5000);
    const int64_t after_5k = g_counted.load();
    g_tracing.store(trace);
    ASSERT_EQ(send_many(client, frame, 10000, 50), 10000);
    g_tracing.store(false);
    const int64_t after_15k = g_counted.load();
    if (trace) {
        print_traces(10000);
    }

    const int64_t for_5k = after_5k - before;
    const int64_t for_10k = after_15k - after_5k;
    const double per_send = static_cast<double>(for_10k - for_5k) / 5000.0;
    std::printf("allocations on the I/O thread: %lld for 5,000 sends, %lld for 10,000 sends: "
                "%.2f per send (budget %.1f, target 0)\n",
                static_cast<long long>(for_5k), static_cast<long long>(for_10k), per_send,
                kBudgetPerSend);
    EXPECT_TRUE(g_saw_io_thread.load()) << "no thread named BrokerServer* allocated anything";
    EXPECT_LE(per_send, kBudgetPerSend);
}

}  // namespace
}  // namespace comet::broker
