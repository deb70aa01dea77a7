#include "store/mapped_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/file_io.h"

namespace comet::store {

namespace {

Status errno_status(std::string_view op, const std::string& path, int err) {
    Errc code = (err == ENOSPC || err == EDQUOT) ? Errc::kResourceExhausted : Errc::kIoError;
    return Status::error(code, "{} {}: {}", op, path, std::strerror(err));
}

std::string dir_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::atomic<bool> g_flush_fault{false};
std::atomic<bool> g_write_fault{false};

// Writes zeros over [0, size) and makes them durable, with write-behind: at most two 1 MiB
// chunks are in flight, so a sync of another file (a DLedger round, a group commit) never waits
// behind the writeback of a whole segment (a 128 MiB burst made follower syncs take 290 ms and
// cost a DLedger group its leader).
Status zero_fill_durably(int fd, int64_t size, const std::string& path) {
    constexpr int64_t kChunk = 1 << 20;
    for (int64_t at = 0; at < size; at += kChunk) {
        const int64_t n = std::min(kChunk, size - at);
        COMET_RETURN_IF_ERROR(pwrite_zeros(fd, at, n, path));
        if (::sync_file_range(fd, at, n, SYNC_FILE_RANGE_WRITE) != 0) {
            return errno_status("sync_file_range", path, errno);
        }
        if (at >= kChunk &&
            ::sync_file_range(fd, at - kChunk, kChunk,
                              SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                  SYNC_FILE_RANGE_WAIT_AFTER) != 0) {
            return errno_status("sync_file_range", path, errno);
        }
    }
    if (::fdatasync(fd) != 0) {
        return errno_status("fdatasync", path, errno);
    }
    return Status::ok();
}

// True when FIEMAP reports extents covering [0, size) with none unwritten, delayed or of
// unknown state. False when the file system cannot tell (no FIEMAP) or any doubt remains.
bool all_blocks_written(int fd, int64_t size) {
    constexpr int kExtents = 64;
    alignas(fiemap) uint8_t buf[sizeof(fiemap) + kExtents * sizeof(fiemap_extent)];
    int64_t expect = 0;
    for (int round = 0; round < 1 << 16 && expect < size; ++round) {
        std::memset(buf, 0, sizeof buf);
        auto* fm = reinterpret_cast<fiemap*>(buf);
        fm->fm_start = static_cast<uint64_t>(expect);
        fm->fm_length = static_cast<uint64_t>(size - expect);
        fm->fm_extent_count = kExtents;
        if (::ioctl(fd, FS_IOC_FIEMAP, fm) != 0 || fm->fm_mapped_extents == 0) {
            return false;
        }
        for (uint32_t i = 0; i < fm->fm_mapped_extents; ++i) {
            const fiemap_extent& e = fm->fm_extents[i];
            constexpr uint32_t kDoubt =
                FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_UNKNOWN;
            if (static_cast<int64_t>(e.fe_logical) > expect || (e.fe_flags & kDoubt) != 0) {
                return false;  // a hole, or blocks whose first write changes metadata
            }
            expect = std::max(expect, static_cast<int64_t>(e.fe_logical + e.fe_length));
            if ((e.fe_flags & FIEMAP_EXTENT_LAST) != 0) {
                return expect >= size;
            }
        }
    }
    return expect >= size;
}

}  // namespace

void set_flush_fault_for_test(bool fail) { g_flush_fault.store(fail); }
void set_write_fault_for_test(bool fail) { g_write_fault.store(fail); }

std::string offset_to_file_name(int64_t offset) { return fmt::format("{:020d}", offset); }

std::optional<int64_t> file_name_to_offset(std::string_view name) {
    if (name.size() != 20) {
        return std::nullopt;
    }
    int64_t v = 0;
    for (char c : name) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        if (v > (INT64_MAX - (c - '0')) / 10) {
            return std::nullopt;
        }
        v = v * 10 + (c - '0');
    }
    return v;
}

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string& dir,
                                                     int64_t file_from_offset, int64_t file_size,
                                                     bool zero_fill) {
    return open_path(dir + "/" + offset_to_file_name(file_from_offset), file_size, zero_fill);
}

Result<std::shared_ptr<MappedFile>> MappedFile::open_path(const std::string& path,
                                                          int64_t file_size, bool zero_fill) {
    auto from = file_name_to_offset(base_of(path));
    if (!from) {
        return Status::error(Errc::kInvalidArgument,
                             "mapped file name is not a 20-digit offset: {}", path);
    }
    if (file_size <= 0 || file_size > INT32_MAX) {
        return Status::error(Errc::kInvalidArgument, "mapped file size {} out of range for {}",
                             file_size, path);
    }
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    bool created = false;
    if (fd < 0 && errno == ENOENT) {
        // Create under a temporary name, reserve every block (a full disk fails here, not as
        // SIGBUS through the mapping later), then publish the name without replacing anything.
        // A crash mid-allocation leaves only a *.tmp.* file, which load() removes.
        static std::atomic<uint64_t> counter{0};
        std::string tmp = fmt::format("{}.tmp.{}.{}", path, ::getpid(), counter.fetch_add(1));
        int tfd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (tfd < 0) {
            return errno_status("create", tmp, errno);
        }
        int rc = ::posix_fallocate(tfd, 0, file_size);
        if (rc != 0) {
            ::close(tfd);
            ::unlink(tmp.c_str());
            return errno_status("fallocate", path, rc);
        }
        if (zero_fill) {
            Status st = zero_fill_durably(tfd, file_size, tmp);
            if (!st.is_ok()) {
                ::close(tfd);
                ::unlink(tmp.c_str());
                return st;
            }
        }
        if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) != 0) {
            int err = errno;
            ::close(tfd);
            ::unlink(tmp.c_str());
            if (err != EEXIST) {
                return errno_status("rename", tmp, err);
            }
            fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);  // someone else created it
        } else {
            fd = tfd;
            created = true;
        }
    }
    if (fd < 0) {
        return errno_status("open", path, errno);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int err = errno;
        ::close(fd);
        return errno_status("fstat", path, err);
    }
    if (st.st_size != file_size) {
        ::close(fd);
        return Status::error(Errc::kCorruption, "mapped file {} has size {}, expected {}", path,
                             static_cast<int64_t>(st.st_size), file_size);
    }
    void* p =
        ::mmap(nullptr, static_cast<size_t>(file_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        int err = errno;
        ::close(fd);
        return errno_status("mmap", path, err);
    }
    std::shared_ptr<MappedFile> file(
        new MappedFile(path, *from, file_size, fd, static_cast<uint8_t*>(p)));
    file->dir_sync_pending_.store(created, std::memory_order_relaxed);
    // A file created here was zero-filled above; one found on disk may have been created
    // without (another mode, a truncation's hole punch) and is asked.
    file->fully_written_.store(zero_fill && (created || all_blocks_written(fd, file_size)),
                               std::memory_order_relaxed);
    return file;
}

MappedFile::MappedFile(std::string path, int64_t from, int64_t size, int fd, uint8_t* base)
    : path_(std::move(path)), file_from_offset_(from), file_size_(size), fd_(fd), base_(base) {}

MappedFile::~MappedFile() {
    ::munmap(base_, static_cast<size_t>(file_size_));
    ::close(fd_);
}

int64_t MappedFile::last_modified_millis() const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
        return 0;
    }
    return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000;
}

void MappedFile::set_wrote_position(int32_t pos) {
    COMET_CHECK(pos >= wrote_position() && pos <= file_size_,
                "wrote position {} -> {} out of order in {}", wrote_position(), pos, path_);
    wrote_position_.store(pos, std::memory_order_release);
}

bool MappedFile::append(std::string_view bytes) {
    int32_t pos = wrote_position();
    if (static_cast<int64_t>(pos) + static_cast<int64_t>(bytes.size()) > file_size_) {
        return false;
    }
    std::memcpy(base_ + pos, bytes.data(), bytes.size());
    set_wrote_position(pos + static_cast<int32_t>(bytes.size()));
    return true;
}

Result<bool> MappedFile::append_written(std::string_view bytes) {
    const int32_t pos = wrote_position();
    const int64_t end = static_cast<int64_t>(pos) + static_cast<int64_t>(bytes.size());
    if (end > file_size_) {
        return false;
    }
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done,
                                   static_cast<off_t>(pos) + static_cast<off_t>(done));
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno_status("pwrite", path_, errno);
        }
        done += static_cast<size_t>(n);
    }
    set_wrote_position(static_cast<int32_t>(end));
    return true;
}

Status MappedFile::write_at_end(std::string_view head, std::string_view tail) {
    const int32_t pos = wrote_position();
    const int64_t len = static_cast<int64_t>(head.size() + tail.size());
    if (static_cast<int64_t>(pos) + len > file_size_) {
        return Status::error(Errc::kInvalidArgument, "write of {} bytes at {} overruns {}", len,
                             pos, path_);
    }
    if (g_write_fault.load(std::memory_order_relaxed)) {
        return errno_status("pwritev", path_, EIO);
    }
    iovec iov[2];
    int n_iov = 0;
    for (std::string_view part : {head, tail}) {
        if (!part.empty()) {
            iov[n_iov].iov_base = const_cast<char*>(part.data());
            iov[n_iov].iov_len = part.size();
            ++n_iov;
        }
    }
    int64_t done = 0;
    int first = 0;
    while (done < len) {
        const ssize_t w = ::pwritev(fd_, iov + first, n_iov - first,
                                    static_cast<off_t>(pos) + static_cast<off_t>(done));
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno_status("pwritev", path_, errno);
        }
        done += w;
        // Short write: skip what went out (rare: signals, page cache pressure).
        auto left = static_cast<size_t>(w);
        while (first < n_iov && left >= iov[first].iov_len) {
            left -= iov[first].iov_len;
            ++first;
        }
        if (first < n_iov) {
            iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
            iov[first].iov_len -= left;
        }
    }
    set_wrote_position(static_cast<int32_t>(pos + len));
    return Status::ok();
}

void MappedFile::set_positions(int32_t pos) {
    COMET_CHECK(pos >= 0 && pos <= file_size_, "position {} out of range in {}", pos, path_);
    wrote_position_.store(pos, std::memory_order_release);
    flushed_position_.store(pos, std::memory_order_release);
}

Result<int32_t> MappedFile::flush(int32_t least_pages) {
    int32_t flushed = flushed_position();
    int32_t wrote = wrote_position();
    if (wrote <= flushed) {
        return flushed;
    }
    if (least_pages > 0 && wrote < file_size_) {
        int64_t dirty_pages = wrote / kOsPageSize - flushed / kOsPageSize;
        if (dirty_pages < least_pages) {
            return flushed;
        }
    }
    int64_t begin = (flushed / kOsPageSize) * kOsPageSize;
    if (g_flush_fault.load(std::memory_order_relaxed)) {
        return errno_status("msync", path_, EIO);
    }
    COMET_RETURN_IF_ERROR(sync_name_if_pending());
    if (::msync(base_ + begin, static_cast<size_t>(wrote - begin), MS_SYNC) != 0) {
        int err = errno;
        return errno_status("msync", path_, err);
    }
    flushed_position_.store(wrote, std::memory_order_release);
    return wrote;
}

Status MappedFile::sync_name_if_pending() {
    if (!dir_sync_pending_.load(std::memory_order_acquire)) {
        return Status::ok();
    }
    // First data flush: the name first (a crash must not keep bytes we report durable in a
    // file whose directory entry was never committed).
    const std::string dir = dir_of(path_);
    int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || ::fsync(dfd) != 0) {
        int err = errno;
        if (dfd >= 0) {
            ::close(dfd);
        }
        return errno_status("fsync directory", dir, err);
    }
    ::close(dfd);
    dir_sync_pending_.store(false, std::memory_order_release);
    return Status::ok();
}

Result<int32_t> MappedFile::write_back() {
    COMET_CHECK(fully_written(), "write_back of {}, which is not fully written", path_);
    int32_t flushed = flushed_position();
    int32_t wrote = wrote_position();
    if (wrote <= flushed) {
        return flushed;
    }
    if (g_flush_fault.load(std::memory_order_relaxed)) {
        return errno_status("sync_file_range", path_, EIO);
    }
    COMET_RETURN_IF_ERROR(sync_name_if_pending());
    int64_t begin = (flushed / kOsPageSize) * kOsPageSize;
    // The mapping's dirty pages are the page cache's: writing the file range writes them.
    if (::sync_file_range(fd_, begin, wrote - begin,
                          SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                              SYNC_FILE_RANGE_WAIT_AFTER) != 0) {
        return errno_status("sync_file_range", path_, errno);
    }
    return wrote;
}

void MappedFile::mark_flushed(int32_t pos) {
    COMET_CHECK(pos <= wrote_position(), "flushed {} beyond wrote {} in {}", pos,
                wrote_position(), path_);
    int32_t cur = flushed_position_.load(std::memory_order_acquire);
    while (pos > cur && !flushed_position_.compare_exchange_weak(cur, pos)) {
    }
}

std::optional<MappedView> MappedFile::select(int32_t pos, int32_t size) const {
    int32_t wrote = wrote_position();
    if (pos < 0 || size < 0 || static_cast<int64_t>(pos) + size > wrote) {
        return std::nullopt;
    }
    MappedView v;
    v.file = shared_from_this();
    v.data = base_ + pos;
    v.size = static_cast<size_t>(size);
    v.start_offset = file_from_offset_ + pos;
    return v;
}

std::optional<MappedView> MappedFile::select(int32_t pos) const {
    int32_t wrote = wrote_position();
    if (pos < 0 || pos > wrote) {
        return std::nullopt;
    }
    return select(pos, wrote - pos);
}

Status MappedFile::zero_tail() {
    int64_t pos = wrote_position();
    if (pos >= file_size_) {
        return Status::ok();
    }
    int64_t page_end =
        std::min<int64_t>(((pos + kOsPageSize - 1) / kOsPageSize) * kOsPageSize, file_size_);
    std::memset(base_ + pos, 0, static_cast<size_t>(page_end - pos));
    if (page_end < file_size_) {
        int64_t len = file_size_ - page_end;
        if (::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, page_end, len) == 0) {
            fully_written_.store(false, std::memory_order_release);  // unwritten extents again
            int rc = ::posix_fallocate(fd_, page_end, len);
            if (rc != 0) {
                return errno_status("fallocate after hole punch", path_, rc);
            }
        } else {
            std::memset(base_ + page_end, 0, static_cast<size_t>(len));
        }
    }
    int64_t begin = (pos / kOsPageSize) * kOsPageSize;
    if (::msync(base_ + begin, static_cast<size_t>(file_size_ - begin), MS_SYNC) != 0) {
        return errno_status("msync", path_, errno);
    }
    return Status::ok();
}

Status MappedFile::destroy() {
    bool expected = false;
    if (!destroyed_.compare_exchange_strong(expected, true)) {
        return Status::ok();
    }
    if (::unlink(path_.c_str()) != 0 && errno != ENOENT) {
        return errno_status("unlink", path_, errno);
    }
    spdlog::info("mapped file destroyed: {} (wrote {} flushed {})", path_, wrote_position(),
                 flushed_position());
    return Status::ok();
}

bool MappedFile::prefault(int64_t from, int64_t len) {
#ifndef MADV_POPULATE_WRITE
    constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14 uapi value
#endif
    from = std::clamp<int64_t>(from, 0, file_size_);
    int64_t begin = (from / kOsPageSize) * kOsPageSize;
    int64_t end = std::min<int64_t>(from + std::max<int64_t>(len, 0), file_size_);
    if (end <= begin) {
        return true;
    }
    return ::madvise(base_ + begin, static_cast<size_t>(end - begin), MADV_POPULATE_WRITE) == 0;
}

void MappedFile::warm() {
    for (int64_t i = 0; i < file_size_; i += kOsPageSize) {
        volatile uint8_t* p = base_ + i;
        *p = *p;
    }
}

}  // namespace comet::store
