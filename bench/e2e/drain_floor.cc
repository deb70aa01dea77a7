// drain_floor: the lower bound of what serving a backlog costs on this machine, for
// bench/e2e/consume.sh (docs/benchmarks.md). The bytes a draining broker sends are records that
// lie in a memory-mapped CommitLog file; this program does only that part: it writes RECORDS
// records of RECORD_BYTES into a file with pwrite (as the store does), maps it, and sends the
// records of each of QUEUES interleaved queues (record i belongs to queue i % QUEUES, as a
// producer's round robin lays them out) over a loopback TCP connection, BATCH records per
// response and at most 64 per sendmsg (asio's limit, which the broker's writes also have).
// A child process receives and discards them with 1 MiB recv calls. No protocol, no lookups,
// no threads handing work over.
//
//   drain_floor [--records N] [--record-bytes B] [--queues Q] [--batch N] [--dir DIR] [--json]
//
// Prints records/s and the sender's and the receiver's CPU per record (getrusage: user + system
// time of each process, the sender's counted from the first send).

#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct Options {
    int64_t records = 500000;
    int64_t record_bytes = 1250;
    int64_t queues = 4;
    int64_t batch = 1024;
    std::string dir = "/tmp";
    bool json = false;
};

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "drain_floor: %s: %s\n", what, std::strerror(errno));
    std::exit(1);
}

double cpu_seconds(int who) {
    rusage ru{};
    ::getrusage(who, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

bool parse_args(int argc, char** argv, Options* o) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        auto number = [&](int64_t* out) {
            if (i + 1 >= argc) {
                return false;
            }
            char* end = nullptr;
            const long long v = std::strtoll(argv[++i], &end, 10);
            if (end == argv[i] || *end != '\0' || v <= 0) {
                return false;
            }
            *out = v;
            return true;
        };
        if (a == "--records") {
            if (!number(&o->records)) return false;
        } else if (a == "--record-bytes") {
            if (!number(&o->record_bytes)) return false;
        } else if (a == "--queues") {
            if (!number(&o->queues)) return false;
        } else if (a == "--batch") {
            if (!number(&o->batch)) return false;
        } else if (a == "--dir" && i + 1 < argc) {
            o->dir = argv[++i];
        } else if (a == "--json") {
            o->json = true;
        } else {
            return false;
        }
    }
    return true;
}

// Receives `total` bytes on `fd` and writes its CPU seconds to `report`.
[[noreturn]] void receiver(int fd, int64_t total, int report) {
    std::vector<char> buf(1 << 20);
    int64_t got = 0;
    while (got < total) {
        const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) {
                continue;
            }
            break;
        }
        got += n;
    }
    const double cpu = cpu_seconds(RUSAGE_SELF);
    (void)!::write(report, &cpu, sizeof cpu);
    ::_exit(got == total ? 0 : 1);
}

void send_all(int fd, std::vector<iovec>& iov) {
    size_t first = 0;
    while (first < iov.size()) {
        msghdr mh{};
        mh.msg_iov = iov.data() + first;
        mh.msg_iovlen = std::min<size_t>(64, iov.size() - first);
        ssize_t n = ::sendmsg(fd, &mh, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            fail("sendmsg");
        }
        while (n > 0) {  // advance past what was sent (a partial write resumes mid-record)
            iovec& v = iov[first];
            const size_t take = std::min<size_t>(static_cast<size_t>(n), v.iov_len);
            v.iov_base = static_cast<char*>(v.iov_base) + take;
            v.iov_len -= take;
            n -= static_cast<ssize_t>(take);
            if (v.iov_len == 0) {
                ++first;
            }
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse_args(argc, argv, &o)) {
        std::fprintf(stderr,
                     "usage: drain_floor [--records N] [--record-bytes B] [--queues Q] "
                     "[--batch N] [--dir DIR] [--json]\n");
        return 2;
    }
    const int64_t total = o.records * o.record_bytes;
    std::string path = o.dir + "/drain_floor.XXXXXX";
    const int file = ::mkstemp(path.data());
    if (file < 0) {
        fail("mkstemp");
    }
    ::unlink(path.c_str());
    {  // the records, written as the store writes them: pwrite into the page cache
        std::vector<char> chunk(1 << 20);
        for (size_t i = 0; i < chunk.size(); ++i) {
            chunk[i] = static_cast<char>('a' + i % 26);
        }
        for (int64_t off = 0; off < total;) {
            const size_t n = static_cast<size_t>(std::min<int64_t>(total - off, chunk.size()));
            const ssize_t w = ::pwrite(file, chunk.data(), n, off);
            if (w <= 0) {
                fail("pwrite");
            }
            off += w;
        }
    }
    void* map = ::mmap(nullptr, static_cast<size_t>(total), PROT_READ, MAP_SHARED, file, 0);
    if (map == MAP_FAILED) {
        fail("mmap");
    }
    const char* base = static_cast<const char*>(map);

    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
        ::listen(listener, 1) != 0) {
        fail("listen on 127.0.0.1");
    }
    int report[2];
    if (::pipe(report) != 0) {
        fail("pipe");
    }
    const pid_t child = ::fork();
    if (child < 0) {
        fail("fork");
    }
    if (child == 0) {
        const int c = ::socket(AF_INET, SOCK_STREAM, 0);
        if (c < 0 || ::connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
            ::_exit(1);
        }
        receiver(c, total, report[1]);
    }
    const int conn = ::accept(listener, nullptr, nullptr);
    if (conn < 0) {
        fail("accept");
    }

    const double cpu0 = cpu_seconds(RUSAGE_SELF);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<iovec> iov;
    iov.reserve(static_cast<size_t>(o.batch));
    for (int64_t q = 0; q < o.queues; ++q) {
        for (int64_t i = q; i < o.records;) {
            iov.clear();
            for (int64_t k = 0; k < o.batch && i < o.records; ++k, i += o.queues) {
                iov.push_back({const_cast<char*>(base + i * o.record_bytes),
                               static_cast<size_t>(o.record_bytes)});
            }
            send_all(conn, iov);
        }
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double sender = cpu_seconds(RUSAGE_SELF) - cpu0;
    double receiver_cpu = 0;
    if (::read(report[0], &receiver_cpu, sizeof receiver_cpu) != sizeof receiver_cpu ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "drain_floor: the receiver did not get every byte\n");
        return 1;
    }
    const double n = static_cast<double>(o.records);
    if (o.json) {
        std::printf("{\"records\":%lld,\"record_bytes\":%lld,\"queues\":%lld,\"seconds\":%.3f,"
                    "\"rate\":%.1f,\"sender_us\":%.3f,\"receiver_us\":%.3f}\n",
                    static_cast<long long>(o.records), static_cast<long long>(o.record_bytes),
                    static_cast<long long>(o.queues), seconds, n / seconds, sender * 1e6 / n,
                    receiver_cpu * 1e6 / n);
    } else {
        std::printf("%lld records of %lld B, %lld queues: %.0f records/s, sender %.3f us/record, "
                    "receiver %.3f us/record\n",
                    static_cast<long long>(o.records), static_cast<long long>(o.record_bytes),
                    static_cast<long long>(o.queues), n / seconds, sender * 1e6 / n,
                    receiver_cpu * 1e6 / n);
    }
    ::munmap(map, static_cast<size_t>(total));
    ::close(file);
    return 0;
}
