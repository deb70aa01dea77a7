#include "base/file_io.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>

namespace comet {

Status io_error(std::string_view op, const std::string& path) {
    return Status::error(Errc::kIoError, "{} {}: {}", op, path, std::strerror(errno));
}

Status pwrite_all(int fd, const void* data, size_t n, off_t at, const std::string& path) {
    const auto* p = static_cast<const uint8_t*>(data);
    const size_t total = n;
    while (n > 0) {
        const ssize_t w = ::pwrite(fd, p, n, at);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            return io_error("write", path);
        }
        if (w == 0) {
            return Status::error(Errc::kIoError, "write {}: wrote 0 of {} bytes at {}", path,
                                 total, static_cast<int64_t>(at));
        }
        p += w;
        n -= static_cast<size_t>(w);
        at += w;
    }
    return Status::ok();
}

Status pwrite_zeros(int fd, off_t at, int64_t len, const std::string& path) {
    static const uint8_t kZeros[64 * 1024] = {};
    constexpr int kVecs = 16;
    iovec iov[kVecs];
    while (len > 0) {
        int n = 0;
        int64_t batch = 0;
        while (n < kVecs && batch < len) {
            const auto part = static_cast<size_t>(std::min<int64_t>(len - batch, sizeof kZeros));
            iov[n].iov_base = const_cast<uint8_t*>(kZeros);
            iov[n].iov_len = part;
            batch += static_cast<int64_t>(part);
            ++n;
        }
        const ssize_t w = ::pwritev(fd, iov, n, at);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            return io_error("write zeros", path);
        }
        if (w == 0) {
            return Status::error(Errc::kIoError, "write zeros {}: wrote 0 bytes at {}", path,
                                 static_cast<int64_t>(at));
        }
        at += w;
        len -= w;
    }
    return Status::ok();
}

Status pread_all(int fd, void* data, size_t n, off_t at, const std::string& path) {
    auto* p = static_cast<uint8_t*>(data);
    size_t got = 0;
    while (got < n) {
        const ssize_t r = ::pread(fd, p + got, n - got, at + static_cast<off_t>(got));
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            return io_error("read", path);
        }
        if (r == 0) {
            return Status::error(Errc::kIoError, "read {}: end of file at {} of {} bytes", path,
                                 got, n);
        }
        got += static_cast<size_t>(r);
    }
    return Status::ok();
}

Status fsync_dir(const std::string& dir) {
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        return io_error("open dir", dir);
    }
    Status st = ::fsync(dfd) == 0 ? Status::ok() : io_error("fsync dir", dir);
    ::close(dfd);
    return st;
}

Status replace_file_durably(const std::string& path, std::string_view content,
                            const ReplaceOptions& options) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const std::string dir = target.has_parent_path() ? target.parent_path().string() : ".";
    std::error_code ec;
    if (options.create_dirs && target.has_parent_path()) {
        fs::create_directories(target.parent_path(), ec);
        if (ec) {
            return Status::error(Errc::kIoError, "create directory {}: {}", dir, ec.message());
        }
    }
    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return io_error("open", tmp);
    }
    Status st = pwrite_all(fd, content.data(), content.size(), 0, tmp);
    if (st.is_ok() && ::fdatasync(fd) != 0) {
        st = io_error("fdatasync", tmp);
    }
    if (::close(fd) != 0 && st.is_ok()) {
        st = io_error("close", tmp);
    }
    if (!st.is_ok()) {
        ::unlink(tmp.c_str());
        return st;
    }
    if (!options.backup_suffix.empty() && fs::exists(target, ec)) {
        fs::copy_file(target, path + options.backup_suffix, fs::copy_options::overwrite_existing,
                      ec);
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        Status err = io_error("rename", tmp);
        ::unlink(tmp.c_str());
        return err;
    }
    return fsync_dir(dir);
}

}  // namespace comet
