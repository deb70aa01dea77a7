#include "fault_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <list>
#include <vector>

namespace comet::it {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr size_t kReadChunk = 64 * 1024;
constexpr milliseconds kMaxPollWait(100);

int index_of(ProxyDirection dir) { return dir == ProxyDirection::kUpstream ? 0 : 1; }

bool set_nonblocking(int fd) {
    const int flags = ::fcntl(fd, F_GETFL, 0);
    return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

void set_nodelay(int fd) {
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

bool resolve_ipv4(const std::string& host, in_addr* out) {
    if (::inet_pton(AF_INET, host.c_str(), out) == 1) {
        return true;
    }
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) {
        return false;
    }
    *out = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
    ::freeaddrinfo(res);
    return true;
}

}  // namespace

// One direction of a link: bytes read from `from` wait in `chunks` until their release time,
// then go to `to` as fast as the token bucket allows.
struct Chunk {
    Clock::time_point release;
    std::string data;
    size_t sent = 0;
};

struct DirectionState {
    std::deque<Chunk> chunks;
    size_t buffered = 0;
    bool read_eof = false;    // `from` reached EOF
    bool write_shut = false;  // shutdown(to, SHUT_WR) done after the EOF was forwarded
    bool want_write = false;  // last write hit EAGAIN
    double tokens = 0;
    Clock::time_point refilled = Clock::now();
    uint64_t rate_seen = 0;
};

struct FaultProxy::Link {
    int client_fd = -1;
    int server_fd = -1;
    bool connecting = true;
    bool dead = false;
    DirectionState dir[2];  // 0: client→server, 1: server→client

    int from_fd(int d) const { return d == 0 ? client_fd : server_fd; }
    int to_fd(int d) const { return d == 0 ? server_fd : client_fd; }
    ~Link() {
        if (client_fd >= 0) {
            ::close(client_fd);
        }
        if (server_fd >= 0) {
            ::close(server_fd);
        }
    }
};

Result<std::unique_ptr<FaultProxy>> FaultProxy::start(const std::string& target_host,
                                                      uint16_t target_port, uint16_t listen_port,
                                                      const std::string& listen_host) {
    in_addr listen_ip{};
    if (!resolve_ipv4(listen_host, &listen_ip)) {
        return Status::error(Errc::kInvalidArgument, "fault proxy: bad listen host '{}'",
                             listen_host);
    }
    in_addr target_ip{};
    if (!resolve_ipv4(target_host, &target_ip)) {
        return Status::error(Errc::kInvalidArgument, "fault proxy: bad target host '{}'",
                             target_host);
    }
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return Status::error(Errc::kIoError, "fault proxy: socket: {}", std::strerror(errno));
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr = listen_ip;
    a.sin_port = htons(listen_port);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || ::listen(fd, 128) != 0 ||
        !set_nonblocking(fd)) {
        const int err = errno;
        ::close(fd);
        return Status::error(Errc::kIoError, "fault proxy: listen on {}:{}: {}", listen_host,
                             listen_port, std::strerror(err));
    }
    socklen_t len = sizeof(a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    const int wake = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake < 0) {
        const int err = errno;
        ::close(fd);
        return Status::error(Errc::kIoError, "fault proxy: eventfd: {}", std::strerror(err));
    }
    char ip[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &target_ip, ip, sizeof(ip));
    std::unique_ptr<FaultProxy> p(new FaultProxy(fd, ntohs(a.sin_port), ip, target_port, wake));
    p->thread_ = std::thread([raw = p.get()] { raw->run(); });
    return p;
}

FaultProxy::FaultProxy(int listen_fd, uint16_t listen_port, std::string target_host,
                       uint16_t target_port, int wake_fd)
    : listen_fd_(listen_fd),
      listen_port_(listen_port),
      target_host_(std::move(target_host)),
      target_port_(target_port),
      wake_fd_(wake_fd) {}

FaultProxy::~FaultProxy() { shutdown(); }

std::string FaultProxy::address() const { return "127.0.0.1:" + std::to_string(listen_port_); }

void FaultProxy::wake() {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

void FaultProxy::set_delay(ProxyDirection dir, milliseconds delay) {
    {
        MutexLock lock(mu_);
        settings_.delay[index_of(dir)] = std::max(delay, milliseconds(0));
    }
    wake();
}

void FaultProxy::set_delay(milliseconds delay) {
    set_delay(ProxyDirection::kUpstream, delay);
    set_delay(ProxyDirection::kDownstream, delay);
}

void FaultProxy::set_rate(ProxyDirection dir, uint64_t bytes_per_second) {
    {
        MutexLock lock(mu_);
        settings_.rate[index_of(dir)] = bytes_per_second;
    }
    wake();
}

void FaultProxy::set_rate(uint64_t bytes_per_second) {
    set_rate(ProxyDirection::kUpstream, bytes_per_second);
    set_rate(ProxyDirection::kDownstream, bytes_per_second);
}

void FaultProxy::pause() {
    {
        MutexLock lock(mu_);
        settings_.paused = true;
    }
    wake();
}

void FaultProxy::resume() {
    {
        MutexLock lock(mu_);
        settings_.paused = false;
        settings_.refuse = false;
    }
    wake();
}

void FaultProxy::drop() {
    uint64_t gen = 0;
    {
        MutexLock lock(mu_);
        gen = ++settings_.drop_generation;
    }
    wake();
    // Sharp: once drop() returns the loop has closed the connections, so nothing it read
    // before is forwarded afterwards (bounded: a stopped loop does not hang the caller).
    for (int i = 0; i < 5000 && drops_done_.load() < gen && !stop_.load(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

void FaultProxy::set_refuse(bool refuse) {
    {
        MutexLock lock(mu_);
        settings_.refuse = refuse;
    }
    wake();
}

void FaultProxy::heal() {
    {
        MutexLock lock(mu_);
        const uint64_t gen = settings_.drop_generation;
        settings_ = Settings{};
        settings_.drop_generation = gen;
    }
    wake();
}

FaultProxy::Settings FaultProxy::settings() const {
    MutexLock lock(mu_);
    return settings_;
}

FaultProxyStats FaultProxy::stats() const {
    FaultProxyStats s;
    s.accepted = accepted_.load();
    s.active = active_.load();
    s.upstream_bytes = bytes_[0].load();
    s.downstream_bytes = bytes_[1].load();
    return s;
}

void FaultProxy::shutdown() {
    if (shut_) {
        return;
    }
    shut_ = true;
    stop_.store(true);
    wake();
    if (thread_.joinable()) {
        thread_.join();
    }
    ::close(listen_fd_);
    ::close(wake_fd_);
}

void FaultProxy::run() {
    std::list<Link> links;
    uint64_t drop_seen = settings().drop_generation;
    std::vector<pollfd> fds;
    std::vector<std::pair<Link*, int>> fd_owner;  // (link, 0 client / 1 server) per pollfd
    char buf[kReadChunk];

    sockaddr_in target{};
    target.sin_family = AF_INET;
    ::inet_pton(AF_INET, target_host_.c_str(), &target.sin_addr);
    target.sin_port = htons(target_port_);

    while (!stop_.load()) {
        Settings s = settings();
        if (s.drop_generation != drop_seen) {
            drop_seen = s.drop_generation;
            links.clear();
            drops_done_.store(drop_seen);
        }
        auto now = Clock::now();
        Clock::time_point next_timer = now + kMaxPollWait;

        // Forward what is due, as far as pause, rate and the receivers allow.
        for (auto& link : links) {
            if (link.connecting || link.dead) {
                continue;
            }
            for (int d = 0; d < 2; ++d) {
                DirectionState& st = link.dir[d];
                const uint64_t rate = s.rate[d];
                if (rate != st.rate_seen) {
                    st.rate_seen = rate;
                    st.tokens = 0;
                    st.refilled = now;
                }
                const double cap = std::max<double>(static_cast<double>(rate) / 20.0, 256.0);
                if (rate > 0) {
                    const double secs = std::chrono::duration<double>(now - st.refilled).count();
                    st.tokens = std::min(cap, st.tokens + secs * static_cast<double>(rate));
                    st.refilled = now;
                }
                st.want_write = false;
                while (!s.paused && !st.chunks.empty()) {
                    Chunk& c = st.chunks.front();
                    if (c.release > now) {
                        next_timer = std::min(next_timer, c.release);
                        break;
                    }
                    size_t n = c.data.size() - c.sent;
                    if (rate > 0) {
                        const double want = std::min<double>(static_cast<double>(n), cap / 4.0);
                        if (st.tokens < want) {
                            const double wait_s = (want - st.tokens) / static_cast<double>(rate);
                            next_timer = std::min(next_timer,
                                                  now + std::chrono::duration_cast<Clock::duration>(
                                                            std::chrono::duration<double>(wait_s)));
                            break;
                        }
                        n = std::min(n, static_cast<size_t>(st.tokens));
                    }
                    const ssize_t w =
                        ::send(link.to_fd(d), c.data.data() + c.sent, n, MSG_NOSIGNAL);
                    if (w < 0) {
                        if (errno == EAGAIN || errno == EWOULDBLOCK) {
                            st.want_write = true;
                        } else if (errno != EINTR) {
                            link.dead = true;
                        }
                        break;
                    }
                    c.sent += static_cast<size_t>(w);
                    st.buffered -= static_cast<size_t>(w);
                    bytes_[d].fetch_add(static_cast<uint64_t>(w));
                    if (rate > 0) {
                        st.tokens -= static_cast<double>(w);
                    }
                    if (c.sent == c.data.size()) {
                        st.chunks.pop_front();
                    }
                }
                if (st.chunks.empty() && st.read_eof && !st.write_shut && !link.dead) {
                    ::shutdown(link.to_fd(d), SHUT_WR);
                    st.write_shut = true;
                }
            }
        }
        for (auto it = links.begin(); it != links.end();) {
            const bool done = it->dir[0].write_shut && it->dir[1].write_shut;
            if (it->dead || done) {
                it = links.erase(it);
            } else {
                ++it;
            }
        }
        active_.store(links.size());

        fds.clear();
        fd_owner.clear();
        fds.push_back({wake_fd_, POLLIN, 0});
        fd_owner.emplace_back(nullptr, 0);
        fds.push_back({listen_fd_, POLLIN, 0});
        fd_owner.emplace_back(nullptr, 1);
        for (auto& link : links) {
            short client_ev = 0;
            short server_ev = 0;
            const DirectionState& up = link.dir[0];
            const DirectionState& down = link.dir[1];
            if (!up.read_eof && up.buffered < kMaxBufferedBytes) {
                client_ev |= POLLIN;
            }
            if (down.want_write) {
                client_ev |= POLLOUT;
            }
            if (link.connecting) {
                server_ev = POLLOUT;
            } else {
                if (!down.read_eof && down.buffered < kMaxBufferedBytes) {
                    server_ev |= POLLIN;
                }
                if (up.want_write) {
                    server_ev |= POLLOUT;
                }
            }
            // A negative fd makes poll() skip it: a hung-up socket we neither read nor write
            // would otherwise report POLLHUP forever and spin the loop.
            fds.push_back({client_ev != 0 ? link.client_fd : -1, client_ev, 0});
            fd_owner.emplace_back(&link, 0);
            fds.push_back({server_ev != 0 ? link.server_fd : -1, server_ev, 0});
            fd_owner.emplace_back(&link, 1);
        }

        now = Clock::now();
        const auto wait = std::chrono::duration_cast<milliseconds>(next_timer - now);
        int timeout_ms = static_cast<int>(std::clamp<int64_t>(wait.count(), 0, 100));
        if (next_timer > now && timeout_ms == 0) {
            timeout_ms = 1;  // sub-millisecond wait: round up instead of spinning
        }
        const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
        if (ready < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        if (ready == 0) {
            continue;
        }
        // Controls may have changed while poll() slept (the wake fd says so): bytes read now
        // must get the current delay, and a connection accepted now the current refuse flag.
        s = settings();
        now = Clock::now();
        for (size_t i = 0; i < fds.size(); ++i) {
            const short re = fds[i].revents;
            if (re == 0) {
                continue;
            }
            Link* link = fd_owner[i].first;
            const int side = fd_owner[i].second;
            if (link == nullptr && side == 0) {
                uint64_t v = 0;
                [[maybe_unused]] const ssize_t n = ::read(wake_fd_, &v, sizeof(v));
                continue;
            }
            if (link == nullptr) {
                for (int k = 0; k < 64; ++k) {
                    const int c =
                        ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
                    if (c < 0) {
                        break;
                    }
                    accepted_.fetch_add(1);
                    // Read the flag again for every connection: this loop drains the backlog,
                    // and a client may have connected after resume() while it ran (a stale
                    // copy refused it: a flake seen under load).
                    if (settings().refuse) {
                        ::close(c);
                        continue;
                    }
                    set_nodelay(c);
                    const int up = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                    if (up < 0) {
                        ::close(c);
                        continue;
                    }
                    set_nodelay(up);
                    links.emplace_back();
                    Link& l = links.back();
                    l.client_fd = c;
                    l.server_fd = up;
                    const int rc =
                        ::connect(up, reinterpret_cast<sockaddr*>(&target), sizeof(target));
                    if (rc == 0) {
                        l.connecting = false;
                    } else if (errno != EINPROGRESS) {
                        l.dead = true;
                    }
                }
                continue;
            }
            if (link->dead) {
                continue;
            }
            if (side == 1 && link->connecting) {
                int err = 0;
                socklen_t len = sizeof(err);
                ::getsockopt(link->server_fd, SOL_SOCKET, SO_ERROR, &err, &len);
                if (err != 0 || (re & (POLLERR | POLLHUP)) != 0) {
                    link->dead = true;  // target refused: close the client too
                } else {
                    link->connecting = false;
                }
                continue;
            }
            // Reading side `side` feeds direction d == side (client reads go upstream).
            if ((re & (POLLIN | POLLHUP | POLLERR)) != 0) {
                DirectionState& st = link->dir[side];
                if (!st.read_eof && st.buffered < kMaxBufferedBytes) {
                    const int fd = side == 0 ? link->client_fd : link->server_fd;
                    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
                    if (n > 0) {
                        Chunk c;
                        c.release = now + s.delay[side];
                        c.data.assign(buf, static_cast<size_t>(n));
                        st.buffered += static_cast<size_t>(n);
                        st.chunks.push_back(std::move(c));
                    } else if (n == 0) {
                        st.read_eof = true;
                    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                        link->dead = true;  // reset by peer: reset the other side as well
                    }
                } else if ((re & POLLERR) != 0) {
                    link->dead = true;
                }
            }
        }
    }
    links.clear();
    active_.store(0);
}

}  // namespace comet::it
