#include "store/store_checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/bytes.h"

namespace comet::store {

Result<std::unique_ptr<StoreCheckpoint>> StoreCheckpoint::open(const std::string& path) {
    std::error_code ec;
    auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) {
        std::filesystem::create_directories(parent, ec);
    }
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        return Status::error(Errc::kIoError, "open checkpoint {}: {}", path, std::strerror(errno));
    }
    uint8_t page[kFileSize] = {};
    ssize_t n = ::pread(fd, page, sizeof(page), 0);
    if (n < 0) {
        int err = errno;
        ::close(fd);
        return Status::error(Errc::kIoError, "read checkpoint {}: {}", path, std::strerror(err));
    }
    std::unique_ptr<StoreCheckpoint> cp(new StoreCheckpoint(path, fd));
    // Fields beyond a short file read as zero.
    cp->physic_ = static_cast<int64_t>(get_be64(page + 0));
    cp->logics_ = static_cast<int64_t>(get_be64(page + 8));
    cp->index_ = static_cast<int64_t>(get_be64(page + 16));
    cp->master_flushed_ = static_cast<int64_t>(get_be64(page + 24));
    cp->confirm_phy_ = static_cast<int64_t>(get_be64(page + 32));
    return cp;
}

StoreCheckpoint::StoreCheckpoint(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

StoreCheckpoint::~StoreCheckpoint() { ::close(fd_); }

int64_t StoreCheckpoint::min_timestamp() const {
    int64_t m = std::min(physic_.load(), logics_.load()) - 3000;
    return std::max<int64_t>(m, 0);
}

int64_t StoreCheckpoint::min_timestamp_index() const {
    return std::min(min_timestamp(), index_.load());
}

Status StoreCheckpoint::flush() {
    MutexLock l(mu_);
    uint8_t page[kFileSize] = {};
    put_be64(page + 0, static_cast<uint64_t>(physic_.load()));
    put_be64(page + 8, static_cast<uint64_t>(logics_.load()));
    put_be64(page + 16, static_cast<uint64_t>(index_.load()));
    put_be64(page + 24, static_cast<uint64_t>(master_flushed_.load()));
    put_be64(page + 32, static_cast<uint64_t>(confirm_phy_.load()));
    ssize_t n = ::pwrite(fd_, page, sizeof(page), 0);
    if (n != static_cast<ssize_t>(sizeof(page))) {
        return Status::error(Errc::kIoError, "write checkpoint {}: {}", path_,
                             n < 0 ? std::strerror(errno) : "short write");
    }
    if (::fdatasync(fd_) != 0) {
        return Status::error(Errc::kIoError, "fdatasync checkpoint {}: {}", path_,
                             std::strerror(errno));
    }
    return Status::ok();
}

}  // namespace comet::store
