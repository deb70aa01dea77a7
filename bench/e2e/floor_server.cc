// floor_server: the lower bound of what a RocketMQ send costs a server on this machine. A
// minimal epoll server that splits RocketMQ remoting frames and answers every request with one
// canned SEND_OK response carrying the request's opaque: no store, no header decoding beyond
// the opaque, no threads handing work to each other. bench/e2e/run.sh compares the broker's
// CPU per message and context switches per message with this one's (docs/benchmarks.md).
//
//   floor_server [--host 127.0.0.1] [--port 0] [--threads 1] [--store DIR]
//
// Prints "listening on HOST:PORT" once bound (port 0 = ephemeral), then serves until SIGINT /
// SIGTERM. Threads: N event loops, each with its own epoll set; loop 0 also accepts and deals
// the accepted sockets out round robin. A connection lives on one loop, which alone touches it.
// Per readable event: read until EAGAIN, answer every whole frame, one write() for all replies
// (the rest waits for EPOLLOUT).
//
// --store DIR makes it the store floor: before answering, each loop appends the whole frames of
// a read to its own file under DIR with one pwrite() (an ASYNC_FLUSH send is acknowledged once
// the page cache holds it), so that the least a broker pays for persisting the bytes is
// measured apart from the network's share. The files are removed at exit.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "protocol/remoting_command.h"
#include "protocol/response_code.h"

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

// The canned response, ROCKETMQ-serialized so that the opaque is a fixed 4-byte field:
//   length(4) | serType+headerLength(4) | code(2) language(1) version(2) opaque(4) ...
constexpr size_t kOpaqueAt = 4 + 4 + 2 + 1 + 2;

std::string make_canned_response() {
    comet::protocol::RemotingCommand r;
    r.code = comet::protocol::ResponseCode::kSuccess;
    r.flag = comet::protocol::kFlagResponse;
    r.serialize_type = comet::protocol::SerializeType::kRocketMq;
    r.opaque = 0x7A7A7A7A;
    r.set_ext("msgId", "7F00000100002A9F0000000000000000");
    r.set_ext("queueId", "0");
    r.set_ext("queueOffset", "0");
    r.set_ext("MSG_REGION", "DefaultRegion");
    r.set_ext("TRACE_ON", "true");
    std::string frame = comet::protocol::encode_frame(r);
    if (frame.size() < kOpaqueAt + 4 ||
        std::memcmp(frame.data() + kOpaqueAt, "\x7A\x7A\x7A\x7A", 4) != 0) {
        std::fprintf(stderr, "floor_server: unexpected ROCKETMQ header layout\n");
        std::exit(2);
    }
    return frame;
}

uint32_t be32(const char* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return ntohl(v);
}

// The opaque of a request header: a fixed field (ROCKETMQ) or the JSON "opaque" member.
bool request_opaque(std::string_view frame, int32_t* opaque) {
    if (frame.size() < 8) {
        return false;
    }
    const uint32_t word = be32(frame.data() + 4);
    const uint8_t type = static_cast<uint8_t>(word >> 24);
    const size_t header_len = word & 0xFFFFFF;
    if (8 + header_len > frame.size()) {
        return false;
    }
    std::string_view header = frame.substr(8, header_len);
    if (type == 1) {
        if (header.size() < 9) {
            return false;
        }
        *opaque = static_cast<int32_t>(be32(header.data() + 5));
        return true;
    }
    const size_t at = header.find("\"opaque\":");
    if (at == std::string_view::npos) {
        return false;
    }
    *opaque = static_cast<int32_t>(std::strtol(header.data() + at + 9, nullptr, 10));
    return true;
}

struct Conn {
    int fd = -1;
    std::vector<char> in;
    size_t in_len = 0;
    std::string out;       // replies not yet written
    size_t out_done = 0;
    bool want_write = false;
};

class Loop {
public:
    // `store_path` empty: no store; else the file this loop appends every frame to.
    Loop(const std::string* canned, std::string store_path)
        : canned_(canned), ep_(epoll_create1(0)), store_path_(std::move(store_path)) {
        if (!store_path_.empty()) {
            store_fd_ = open(store_path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (store_fd_ < 0) {
                std::fprintf(stderr, "floor_server: cannot open %s: %s\n", store_path_.c_str(),
                             std::strerror(errno));
                std::exit(1);
            }
        }
    }
    ~Loop() {
        if (store_fd_ >= 0) {
            close(store_fd_);
            unlink(store_path_.c_str());
        }
    }
    int epoll_fd() const { return ep_; }

    // Any thread: hands a connected socket to this loop.
    void adopt(int fd) {
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLRDHUP;
        ev.data.fd = fd;
        epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev);
    }

    void run(int listen_fd, std::vector<std::unique_ptr<Loop>>* loops) {
        if (listen_fd >= 0) {
            epoll_event ev{};
            ev.events = EPOLLIN;
            ev.data.fd = listen_fd;
            epoll_ctl(ep_, EPOLL_CTL_ADD, listen_fd, &ev);
        }
        size_t next = 0;
        epoll_event events[64];
        while (!g_stop) {
            const int n = epoll_wait(ep_, events, 64, 200);
            for (int i = 0; i < n; ++i) {
                const int fd = events[i].data.fd;
                if (fd == listen_fd) {
                    for (;;) {
                        const int c = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK);
                        if (c < 0) {
                            break;
                        }
                        const int one = 1;
                        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                        (*loops)[next++ % loops->size()]->adopt(c);
                    }
                    continue;
                }
                on_event(fd, events[i].events);
            }
        }
        for (auto& [fd, c] : conns_) {
            close(fd);
        }
    }

private:
    void on_event(int fd, uint32_t events) {
        auto& slot = conns_[fd];
        if (!slot) {
            slot = std::make_unique<Conn>();
            slot->fd = fd;
            slot->in.resize(256 * 1024);
        }
        Conn& c = *slot;
        if ((events & EPOLLOUT) != 0 && !flush(c)) {
            drop(fd);
            return;
        }
        if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) == 0) {
            return;
        }
        bool eof = false;
        for (;;) {
            if (c.in.size() - c.in_len < 64 * 1024) {
                c.in.resize(c.in.size() * 2);
            }
            const ssize_t r = read(fd, c.in.data() + c.in_len, c.in.size() - c.in_len);
            if (r > 0) {
                c.in_len += static_cast<size_t>(r);
                continue;
            }
            if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
                eof = true;
            }
            if (r < 0 && errno == EINTR) {
                continue;
            }
            break;
        }
        size_t at = 0;
        while (c.in_len - at >= 4) {
            const size_t frame = 4 + static_cast<size_t>(be32(c.in.data() + at));
            if (c.in_len - at < frame) {
                break;
            }
            int32_t opaque = 0;
            if (!request_opaque(std::string_view(c.in.data() + at, frame), &opaque)) {
                drop(fd);
                return;
            }
            const size_t o = c.out.size();
            c.out.append(*canned_);
            const uint32_t net = htonl(static_cast<uint32_t>(opaque));
            std::memcpy(c.out.data() + o + kOpaqueAt, &net, 4);
            at += frame;
        }
        if (at > 0 && store_fd_ >= 0 && !append(c.in.data(), at)) {
            drop(fd);
            return;
        }
        if (at > 0) {
            std::memmove(c.in.data(), c.in.data() + at, c.in_len - at);
            c.in_len -= at;
        }
        if (eof || !flush(c)) {
            drop(fd);
        }
    }

    // One write() of everything queued; false when the socket failed.
    bool flush(Conn& c) {
        while (c.out_done < c.out.size()) {
            const ssize_t w = write(c.fd, c.out.data() + c.out_done, c.out.size() - c.out_done);
            if (w > 0) {
                c.out_done += static_cast<size_t>(w);
                continue;
            }
            if (w < 0 && errno == EINTR) {
                continue;
            }
            if (w < 0 && errno == EAGAIN) {
                break;
            }
            return false;
        }
        if (c.out_done == c.out.size()) {
            c.out.clear();
            c.out_done = 0;
        }
        const bool want = !c.out.empty();
        if (want != c.want_write) {
            epoll_event ev{};
            ev.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0u);
            ev.data.fd = c.fd;
            epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev);
            c.want_write = want;
        }
        return true;
    }

    // The store floor's append: the frames of one read, one pwrite() at the file's end.
    bool append(const char* data, size_t size) {
        while (size > 0) {
            const ssize_t w = pwrite(store_fd_, data, size, store_end_);
            if (w < 0 && errno == EINTR) {
                continue;
            }
            if (w <= 0) {
                std::fprintf(stderr, "floor_server: pwrite: %s\n", std::strerror(errno));
                return false;
            }
            data += w;
            size -= static_cast<size_t>(w);
            store_end_ += w;
        }
        return true;
    }

    void drop(int fd) {
        epoll_ctl(ep_, EPOLL_CTL_DEL, fd, nullptr);
        close(fd);
        conns_.erase(fd);
    }

    const std::string* canned_;
    int ep_;
    std::string store_path_;
    int store_fd_ = -1;
    off_t store_end_ = 0;
    std::unordered_map<int, std::unique_ptr<Conn>> conns_;
};

}  // namespace

int main(int argc, char** argv) {
    std::string host = "127.0.0.1";
    int port = 0;
    int threads = 1;
    std::string store_dir;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i];
        if (k == "--host") {
            host = argv[i + 1];
        } else if (k == "--port") {
            port = std::atoi(argv[i + 1]);
        } else if (k == "--threads") {
            threads = std::max(1, std::atoi(argv[i + 1]));
        } else if (k == "--store") {
            store_dir = argv[i + 1];
        } else {
            std::fprintf(stderr,
                         "usage: floor_server [--host H] [--port P] [--threads N] [--store DIR]\n");
            return 2;
        }
    }
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    std::signal(SIGPIPE, SIG_IGN);
    const std::string canned = make_canned_response();

    const int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    const int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1 ||
        bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(lfd, 512) != 0) {
        std::fprintf(stderr, "floor_server: cannot listen on %s:%d: %s\n", host.c_str(), port,
                     std::strerror(errno));
        return 1;
    }
    socklen_t len = sizeof(addr);
    getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len);
    std::printf("listening on %s:%d\n", host.c_str(), ntohs(addr.sin_port));
    std::fflush(stdout);

    std::vector<std::unique_ptr<Loop>> loops;
    for (int i = 0; i < threads; ++i) {
        std::string path;
        if (!store_dir.empty()) {
            path = store_dir + "/floor-store." + std::to_string(i);
        }
        loops.push_back(std::make_unique<Loop>(&canned, std::move(path)));
    }
    std::vector<std::thread> others;
    for (int i = 1; i < threads; ++i) {
        others.emplace_back([&loops, i] { loops[static_cast<size_t>(i)]->run(-1, &loops); });
    }
    loops[0]->run(lfd, &loops);
    for (auto& t : others) {
        t.join();
    }
    close(lfd);
    return 0;
}
