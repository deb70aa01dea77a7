#include "controller/controller_log_storage.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/bytes.h"
#include "base/crc32.h"
#include "base/file_io.h"

namespace comet::controller {
namespace {

constexpr char kLogMagic[8] = {'C', 'M', 'T', 'C', 'T', 'L', 'O', 'G'};
constexpr char kHsMagic[8] = {'C', 'M', 'T', 'C', 'T', 'L', 'H', 'S'};
constexpr size_t kHsSize = ControllerLogStorage::kHardStateSize;
// Bytes after the crc field that are not payload: term, index, type.
constexpr size_t kBodyFixed = 17;
constexpr size_t kOverhead = ControllerLogStorage::kRecordOverhead;
static_assert(kOverhead == 8 + kBodyFixed);

void encode_header(uint8_t* b) {
    std::memcpy(b, kLogMagic, 8);
    put_be32(b + 8, ControllerLogStorage::kVersion);
    put_be32(b + 12, crc32(b, 12));
}

// Appends one record to *out.
void encode_record(const raft::Entry& e, std::vector<uint8_t>* out) {
    const size_t at = out->size();
    const size_t n = e.payload.size();
    out->resize(at + kOverhead + n);
    uint8_t* b = out->data() + at;
    put_be32(b, static_cast<uint32_t>(kBodyFixed + n));
    put_be64(b + 8, static_cast<uint64_t>(e.term.value()));
    put_be64(b + 16, static_cast<uint64_t>(e.index.value()));
    b[24] = static_cast<uint8_t>(e.type);
    if (n > 0) {
        std::memcpy(b + kOverhead, e.payload.data(), n);
    }
    put_be32(b + 4, crc32(b + 8, kBodyFixed + n));
}

bool valid_type(raft::EntryType t) {
    return static_cast<uint8_t>(t) <= static_cast<uint8_t>(raft::EntryType::kNoOp);
}

}  // namespace

Result<std::unique_ptr<ControllerLogStorage>> ControllerLogStorage::open(const std::string& dir) {
    std::unique_ptr<ControllerLogStorage> s(new ControllerLogStorage(dir));
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        return Status::error(Errc::kIoError, "create {}: {}", dir, ec.message());
    }
    COMET_RETURN_IF_ERROR(s->load_log());
    COMET_RETURN_IF_ERROR(s->load_hard_state());
    return s;
}

ControllerLogStorage::~ControllerLogStorage() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

Status ControllerLogStorage::load_log() {
    const std::string path = log_path();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
        return io_error("open", path);
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
        return io_error("stat", path);
    }
    const auto size = static_cast<size_t>(st.st_size);
    if (size < kHeaderSize) {
        // New, or a header that never reached disk whole. The header is made durable before
        // open() returns, so no entry can have been appended behind a torn one.
        uint8_t h[kHeaderSize];
        encode_header(h);
        if (size > 0 && ::ftruncate(fd_, 0) != 0) {
            return io_error("truncate", path);
        }
        COMET_RETURN_IF_ERROR(pwrite_all(fd_, h, sizeof h, 0, path));
        if (::fdatasync(fd_) != 0) {
            return io_error("fdatasync", path);
        }
        COMET_RETURN_IF_ERROR(fsync_dir(dir_));
        end_ = static_cast<int64_t>(kHeaderSize);
        if (size > 0) {
            spdlog::warn("{}: torn header ({} bytes) rewritten; the log is empty", path, size);
        }
        return Status::ok();
    }

    // One buffer for the whole file; payloads are views into it.
    auto buf = std::shared_ptr<uint8_t[]>(new uint8_t[size]);
    COMET_RETURN_IF_ERROR(pread_all(fd_, buf.get(), size, 0, path));
    const uint8_t* b = buf.get();
    if (std::memcmp(b, kLogMagic, 8) != 0) {
        return Status::error(Errc::kCorruption, "{}: bad magic (not a Comet controller log)", path);
    }
    if (get_be32(b + 12) != crc32(b, 12)) {
        return Status::error(Errc::kCorruption, "{}: header checksum mismatch", path);
    }
    if (get_be32(b + 8) != kVersion) {
        return Status::error(Errc::kUnsupported, "{}: version {} (this build reads {})", path,
                             get_be32(b + 8), kVersion);
    }

    std::shared_ptr<const void> owner(buf, buf.get());
    size_t off = kHeaderSize;
    const char* why = "";
    while (true) {
        if (off == size) {
            break;
        }
        if (size - off < kOverhead) {
            why = "short record";
            break;
        }
        const size_t len = get_be32(b + off);
        if (len < kBodyFixed || len - kBodyFixed > kMaxPayload) {
            why = "impossible length";
            break;
        }
        if (len > size - off - 8) {
            why = "record runs past the end of the file";
            break;
        }
        if (get_be32(b + off + 4) != crc32(b + off + 8, len)) {
            why = "checksum mismatch";
            break;
        }
        const raft::Term term(static_cast<int64_t>(get_be64(b + off + 8)));
        const auto index = static_cast<int64_t>(get_be64(b + off + 16));
        const auto type = static_cast<raft::EntryType>(b[off + 24]);
        if (index != static_cast<int64_t>(slots_.size()) + 1) {
            why = "index out of sequence";
            break;
        }
        if (!valid_type(type)) {
            why = "unknown entry type";
            break;
        }
        if (term.value() < 0 || (!slots_.empty() && term < slots_.back().term)) {
            why = "term lower than the previous entry's";
            break;
        }
        Slot slot;
        slot.offset = static_cast<int64_t>(off);
        slot.term = term;
        slot.type = type;
        if (len > kBodyFixed) {
            slot.payload = raft::SharedBytes(owner, b + off + kOverhead, len - kBodyFixed);
        }
        slots_.push_back(std::move(slot));
        off += 8 + len;
    }
    end_ = static_cast<int64_t>(off);
    if (off != size) {
        cut_bytes_ = static_cast<int64_t>(size - off);
        spdlog::warn("{}: log ends after index {} ({} at byte {}); cutting {} bytes", path,
                     slots_.size(), why, off, cut_bytes_);
        if (::ftruncate(fd_, static_cast<off_t>(off)) != 0) {
            return io_error("truncate", path);
        }
        if (::fdatasync(fd_) != 0) {
            return io_error("fdatasync", path);
        }
    }
    return Status::ok();
}

Status ControllerLogStorage::load_hard_state() {
    const std::string path = hard_state_path();
    // A leftover temp file is a replacement that never got renamed: the old file stands.
    const std::string tmp = path + ".tmp";
    if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) {
        return io_error("unlink", tmp);
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno != ENOENT) {
        return io_error("open", path);
    }
    if (fd >= 0) {
        struct stat st {};
        uint8_t b[kHsSize];
        Status rs = ::fstat(fd, &st) == 0 ? Status::ok() : io_error("stat", path);
        if (rs.is_ok() && static_cast<size_t>(st.st_size) != kHsSize) {
            rs = Status::error(Errc::kCorruption, "{}: {} bytes, expected {}", path,
                               static_cast<int64_t>(st.st_size), kHsSize);
        }
        if (rs.is_ok()) {
            rs = pread_all(fd, b, sizeof b, 0, path);
        }
        ::close(fd);
        COMET_RETURN_IF_ERROR(rs);
        if (std::memcmp(b, kHsMagic, 8) != 0 || get_be32(b + 32) != crc32(b, 32)) {
            return Status::error(Errc::kCorruption, "{}: bad magic or checksum", path);
        }
        if (get_be32(b + 8) != kVersion) {
            return Status::error(Errc::kUnsupported, "{}: version {} (this build reads {})", path,
                                 get_be32(b + 8), kVersion);
        }
        hs_.term = raft::Term(static_cast<int64_t>(get_be64(b + 12)));
        hs_.voted_for = raft::NodeId(static_cast<int32_t>(get_be32(b + 20)));
        hs_.commit = raft::LogIndex(static_cast<int64_t>(get_be64(b + 24)));
        written_hs_ = hs_;
    }
    // Appends may reach disk without the sync that writes the hard state (class comment).
    if (!slots_.empty() && slots_.back().term > hs_.term) {
        spdlog::warn(
            "{}: the log holds entries of term {} but the hard state says term {}: "
            "taking term {} (no vote)",
            dir_, slots_.back().term, hs_.term, slots_.back().term);
        hs_.term = slots_.back().term;
        hs_.voted_for = raft::kNoNode;
    }
    if (hs_.commit > last_index()) {
        spdlog::error(
            "{}: commit {} beyond the recovered log end {}: committed entries were "
            "lost (corruption); using the log end",
            dir_, hs_.commit, last_index());
        hs_.commit = last_index();
        lost_committed_ = true;
    }
    return Status::ok();
}

std::optional<raft::Term> ControllerLogStorage::term_at(raft::LogIndex index) const {
    if (index.value() == 0) {
        return raft::Term(0);
    }
    if (index.value() < 0 || index > last_index()) {
        return std::nullopt;
    }
    return slots_[static_cast<size_t>(index.value() - 1)].term;
}

Status ControllerLogStorage::check_usable(const char* op) const {
    if (failed_) {
        return Status::error(Errc::kIoError, "{} {}: storage failed earlier; reopen it", op,
                             log_path());
    }
    return Status::ok();
}

Status ControllerLogStorage::fail(Status st) {
    failed_ = true;
    spdlog::error("controller raft log {}: {}; no more writes until reopened", dir_,
                  st.to_string());
    return st;
}

Status ControllerLogStorage::append(std::span<const raft::Entry> entries) {
    COMET_RETURN_IF_ERROR(check_usable("append"));
    raft::LogIndex expect = last_index() + 1;
    raft::Term prev = slots_.empty() ? raft::Term(0) : slots_.back().term;
    size_t bytes = 0;
    for (const raft::Entry& e : entries) {
        if (e.index != expect) {
            return Status::error(Errc::kInvalidArgument, "append: entry index {} but expected {}",
                                 e.index, expect);
        }
        if (e.term < prev) {
            return Status::error(Errc::kInvalidArgument,
                                 "append: entry {} has term {} below the previous term {}", e.index,
                                 e.term, prev);
        }
        if (!valid_type(e.type)) {
            return Status::error(Errc::kInvalidArgument, "append: entry {} has unknown type {}",
                                 e.index, static_cast<int>(e.type));
        }
        if (e.payload.size() > kMaxPayload) {
            return Status::error(Errc::kInvalidArgument,
                                 "append: entry {} payload {} bytes exceeds {}", e.index,
                                 e.payload.size(), kMaxPayload);
        }
        bytes += kOverhead + e.payload.size();
        prev = e.term;
        expect += 1;
    }
    if (entries.empty()) {
        return Status::ok();
    }
    std::vector<uint8_t> buf;
    buf.reserve(bytes);
    for (const raft::Entry& e : entries) {
        encode_record(e, &buf);
    }
    Status st = pwrite_all(fd_, buf.data(), buf.size(), static_cast<off_t>(end_), log_path());
    if (!st.is_ok()) {
        return fail(std::move(st));
    }
    int64_t off = end_;
    for (const raft::Entry& e : entries) {
        slots_.push_back(Slot{off, e.term, e.type, e.payload});
        off += static_cast<int64_t>(kOverhead + e.payload.size());
    }
    end_ = off;
    log_dirty_ = true;
    return Status::ok();
}

Status ControllerLogStorage::truncate_suffix(raft::LogIndex from) {
    if (from.value() < 1) {
        return Status::error(Errc::kInvalidArgument, "truncate_suffix: from={} < 1", from);
    }
    COMET_RETURN_IF_ERROR(check_usable("truncate"));
    if (from > last_index()) {
        return Status::ok();
    }
    const int64_t cut = slots_[static_cast<size_t>(from.value() - 1)].offset;
    // Cut and flush before any later append is written (class comment: write order).
    if (::ftruncate(fd_, static_cast<off_t>(cut)) != 0) {
        return fail(io_error("truncate", log_path()));
    }
    if (::fdatasync(fd_) != 0) {
        return fail(io_error("fdatasync", log_path()));
    }
    slots_.resize(static_cast<size_t>(from.value() - 1));
    end_ = cut;
    log_dirty_ = false;  // the fdatasync covered the kept prefix too
    return Status::ok();
}

Status ControllerLogStorage::read(raft::LogIndex lo, raft::LogIndex hi, size_t max_bytes,
                                  std::vector<raft::Entry>* out) const {
    if (lo.value() < 1 || hi > last_index()) {
        return Status::error(Errc::kInvalidArgument, "read [{}, {}] outside [1, {}]", lo, hi,
                             last_index());
    }
    size_t bytes = 0;
    for (raft::LogIndex i = lo; i <= hi; i += 1) {
        const Slot& s = slots_[static_cast<size_t>(i.value() - 1)];
        if (i != lo && bytes + s.payload.size() > max_bytes) {
            break;
        }
        bytes += s.payload.size();
        out->push_back(raft::Entry{s.term, i, s.type, s.payload});
    }
    return Status::ok();
}

Status ControllerLogStorage::save_hard_state(const raft::HardState& hs) {
    hs_ = hs;
    return Status::ok();
}

Status ControllerLogStorage::sync() {
    COMET_RETURN_IF_ERROR(check_usable("sync"));
    if (log_dirty_) {
        if (::fdatasync(fd_) != 0) {
            return fail(io_error("fdatasync", log_path()));
        }
        log_dirty_ = false;
    }
    if (hs_ != written_hs_) {
        Status st = write_hard_state(hs_);
        if (!st.is_ok()) {
            return fail(std::move(st));
        }
        written_hs_ = hs_;
    }
    return Status::ok();
}

Status ControllerLogStorage::write_hard_state(const raft::HardState& hs) {
    uint8_t b[kHsSize] = {};
    std::memcpy(b, kHsMagic, 8);
    put_be32(b + 8, kVersion);
    put_be64(b + 12, static_cast<uint64_t>(hs.term.value()));
    put_be32(b + 20, static_cast<uint32_t>(hs.voted_for.value()));
    put_be64(b + 24, static_cast<uint64_t>(hs.commit.value()));
    put_be32(b + 32, crc32(b, 32));
    return replace_file_durably(hard_state_path(),
                                std::string_view(reinterpret_cast<const char*>(b), sizeof b));
}

}  // namespace comet::controller
