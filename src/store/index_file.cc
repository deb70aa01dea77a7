#include "store/index_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "base/bytes.h"
#include "store/consume_queue_unit.h"

namespace comet::store {

namespace {

size_t file_size_for(int32_t hash_slot_num, int32_t index_num) {
    return static_cast<size_t>(kIndexHeaderSize) +
           static_cast<size_t>(hash_slot_num) * kIndexHashSlotSize +
           static_cast<size_t>(index_num) * kIndexEntrySize;
}

Status index_io_error(std::string_view op, const std::string& path, int err) {
    return Status::error(Errc::kIoError, "{} {}: {}", op, path, std::strerror(err));
}

Result<uint8_t*> map_fd(int fd, size_t size, const std::string& path) {
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        return index_io_error("mmap index file", path, errno);
    }
    return static_cast<uint8_t*>(p);
}

}  // namespace

int32_t index_key_hash(std::string_view key) {
    const int32_t h = java_string_hash_code(key);
    if (h == INT32_MIN) {
        return 0;
    }
    return h < 0 ? -h : h;
}

IndexFile::IndexFile(std::string path, int32_t hash_slot_num, int32_t index_num, uint8_t* base,
                     size_t size)
    : path_(std::move(path)),
      hash_slot_num_(hash_slot_num),
      index_num_(index_num),
      base_(base),
      size_(size) {}

IndexFile::~IndexFile() {
    if (base_ != nullptr) {
        ::munmap(base_, size_);
    }
}

Result<std::unique_ptr<IndexFile>> IndexFile::create(const std::string& path,
                                                     int32_t hash_slot_num, int32_t index_num,
                                                     PhysicalOffset prev_end_phy_offset,
                                                     int64_t prev_end_timestamp) {
    if (hash_slot_num <= 0 || index_num <= 1) {
        return Status::error(Errc::kInvalidArgument, "index file {}: bad sizes slots={} num={}",
                             path, hash_slot_num, index_num);
    }
    const size_t size = file_size_for(hash_slot_num, index_num);
    if (::access(path.c_str(), F_OK) == 0) {
        return Status::error(Errc::kAlreadyExists, "create index file {}: file exists", path);
    }
    // The file is sized and given its header under a temporary name and renamed last: a
    // process killed while a large file is being allocated leaves a leftover that load()
    // removes, never an index file without a header.
    const std::string tmp = path + std::string(kIndexCreatingSuffix);
    int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return index_io_error("create index file", tmp, errno);
    }
    const int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
    if (rc != 0) {
        ::close(fd);
        ::unlink(tmp.c_str());
        return Status(rc == ENOSPC ? Errc::kResourceExhausted : Errc::kIoError,
                      fmt::format("fallocate index file {} ({} bytes): {}", tmp, size,
                                  std::strerror(rc)));
    }
    auto base = map_fd(fd, size, tmp);
    ::close(fd);
    if (!base.is_ok()) {
        ::unlink(tmp.c_str());
        return base.status();
    }
    std::unique_ptr<IndexFile> f(new IndexFile(path, hash_slot_num, index_num, *base, size));
    f->header_.begin_phy_offset = prev_end_phy_offset;
    f->header_.end_phy_offset = prev_end_phy_offset;
    f->header_.begin_timestamp = prev_end_timestamp;
    f->header_.end_timestamp = prev_end_timestamp;
    f->write_header();
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        return index_io_error("rename index file to", path, err);  // f unmaps on return
    }
    return f;
}

Result<std::unique_ptr<IndexFile>> IndexFile::load(const std::string& path, int32_t hash_slot_num,
                                                   int32_t index_num) {
    const size_t size = file_size_for(hash_slot_num, index_num);
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        return index_io_error("open index file", path, errno);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        return index_io_error("stat index file", path, err);
    }
    if (static_cast<size_t>(st.st_size) != size) {
        ::close(fd);
        return Status::error(Errc::kCorruption,
                             "index file {} has {} bytes, expected {} (maxHashSlotNum={}, "
                             "maxIndexNum={})",
                             path, st.st_size, size, hash_slot_num, index_num);
    }
    auto base = map_fd(fd, size, path);
    ::close(fd);
    if (!base.is_ok()) {
        return base.status();
    }
    std::unique_ptr<IndexFile> f(new IndexFile(path, hash_slot_num, index_num, *base, size));
    f->read_header();
    if (f->header_.index_count < 1 || f->header_.index_count > index_num ||
        f->header_.hash_slot_count < 0) {
        return Status::error(Errc::kCorruption, "index file {}: bad header indexCount={}", path,
                             f->header_.index_count);
    }
    return f;
}

void IndexFile::write_header() {
    put_be64(base_, static_cast<uint64_t>(header_.begin_timestamp));
    put_be64(base_ + 8, static_cast<uint64_t>(header_.end_timestamp));
    put_be64(base_ + 16, static_cast<uint64_t>(header_.begin_phy_offset.value()));
    put_be64(base_ + 24, static_cast<uint64_t>(header_.end_phy_offset.value()));
    put_be32(base_ + 32, static_cast<uint32_t>(header_.hash_slot_count));
    put_be32(base_ + 36, static_cast<uint32_t>(header_.index_count));
}

void IndexFile::read_header() {
    header_.begin_timestamp = static_cast<int64_t>(get_be64(base_));
    header_.end_timestamp = static_cast<int64_t>(get_be64(base_ + 8));
    header_.begin_phy_offset = PhysicalOffset(static_cast<int64_t>(get_be64(base_ + 16)));
    header_.end_phy_offset = PhysicalOffset(static_cast<int64_t>(get_be64(base_ + 24)));
    header_.hash_slot_count = static_cast<int32_t>(get_be32(base_ + 32));
    header_.index_count = static_cast<int32_t>(get_be32(base_ + 36));
}

int32_t IndexFile::slot(int32_t n) const {
    COMET_CHECK(n >= 0 && n < hash_slot_num_, "slot {} out of range {}", n, hash_slot_num_);
    return static_cast<int32_t>(
        get_be32(base_ + kIndexHeaderSize + static_cast<size_t>(n) * kIndexHashSlotSize));
}

IndexEntry IndexFile::entry(int32_t n) const {
    COMET_CHECK(n >= 0 && n < index_num_, "entry {} out of range {}", n, index_num_);
    const uint8_t* p = base_ + kIndexHeaderSize +
                       static_cast<size_t>(hash_slot_num_) * kIndexHashSlotSize +
                       static_cast<size_t>(n) * kIndexEntrySize;
    IndexEntry e;
    e.key_hash = static_cast<int32_t>(get_be32(p));
    e.phy_offset = PhysicalOffset(static_cast<int64_t>(get_be64(p + 4)));
    e.time_diff_seconds = static_cast<int32_t>(get_be32(p + 12));
    e.prev_index = static_cast<int32_t>(get_be32(p + 16));
    return e;
}

bool IndexFile::put_key(std::string_view key, PhysicalOffset phy_offset,
                        int64_t store_timestamp) {
    if (is_write_full()) {
        return false;
    }
    const int32_t key_hash = index_key_hash(key);
    const int32_t slot_pos = key_hash % hash_slot_num_;
    uint8_t* slot_ptr =
        base_ + kIndexHeaderSize + static_cast<size_t>(slot_pos) * kIndexHashSlotSize;
    auto slot_value = static_cast<int32_t>(get_be32(slot_ptr));
    if (slot_value <= 0 || slot_value > header_.index_count) {
        slot_value = 0;
    }
    int64_t time_diff = store_timestamp - header_.begin_timestamp;
    time_diff /= 1000;
    if (header_.begin_timestamp <= 0 || time_diff < 0) {
        time_diff = 0;
    } else if (time_diff > INT32_MAX) {
        time_diff = INT32_MAX;
    }
    uint8_t* p = base_ + kIndexHeaderSize +
                 static_cast<size_t>(hash_slot_num_) * kIndexHashSlotSize +
                 static_cast<size_t>(header_.index_count) * kIndexEntrySize;
    put_be32(p, static_cast<uint32_t>(key_hash));
    put_be64(p + 4, static_cast<uint64_t>(phy_offset.value()));
    put_be32(p + 12, static_cast<uint32_t>(time_diff));
    put_be32(p + 16, static_cast<uint32_t>(slot_value));
    put_be32(slot_ptr, static_cast<uint32_t>(header_.index_count));
    if (header_.index_count <= 1) {
        header_.begin_phy_offset = phy_offset;
        header_.begin_timestamp = store_timestamp;
    }
    if (slot_value == 0) {
        ++header_.hash_slot_count;
    }
    ++header_.index_count;
    header_.end_phy_offset = phy_offset;
    header_.end_timestamp = store_timestamp;
    write_header();
    return true;
}

void IndexFile::select_phy_offsets(std::string_view key, size_t max_num, int64_t begin_ms,
                                   int64_t end_ms, std::vector<PhysicalOffset>* out) const {
    const int32_t key_hash = index_key_hash(key);
    const int32_t slot_value = slot(key_hash % hash_slot_num_);
    if (slot_value <= 0 || slot_value > header_.index_count || header_.index_count <= 1) {
        return;
    }
    // Each step follows prev_index, which must strictly decrease: bounds the walk even when
    // the file holds garbage.
    int32_t next = slot_value;
    while (out->size() < max_num && next > 0 && next < header_.index_count) {
        const IndexEntry e = entry(next);
        if (e.time_diff_seconds < 0) {
            break;
        }
        const int64_t time_read = header_.begin_timestamp + int64_t{e.time_diff_seconds} * 1000;
        const bool time_matched = time_read >= begin_ms && time_read <= end_ms;
        if (e.key_hash == key_hash && time_matched) {
            out->push_back(e.phy_offset);
        }
        if (e.prev_index <= 0 || e.prev_index >= next || time_read < begin_ms) {
            break;
        }
        next = e.prev_index;
    }
}

bool IndexFile::is_time_matched(int64_t begin_ms, int64_t end_ms) const {
    const int64_t b = header_.begin_timestamp;
    const int64_t e = header_.end_timestamp;
    return (begin_ms < b && end_ms > e) || (begin_ms >= b && begin_ms <= e) ||
           (end_ms >= b && end_ms <= e);
}

std::string IndexFile::file_name() const {
    const auto slash = path_.find_last_of('/');
    return slash == std::string::npos ? path_ : path_.substr(slash + 1);
}

Status IndexFile::flush() {
    write_header();
    if (::msync(base_, size_, MS_SYNC) != 0) {
        return index_io_error("msync index file", path_, errno);
    }
    return Status::ok();
}

Status IndexFile::destroy() {
    if (base_ != nullptr) {
        ::munmap(base_, size_);
        base_ = nullptr;
    }
    if (::unlink(path_.c_str()) != 0 && errno != ENOENT) {
        return index_io_error("unlink index file", path_, errno);
    }
    return Status::ok();
}

}  // namespace comet::store
