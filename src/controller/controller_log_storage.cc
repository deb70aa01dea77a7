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
constexpr char kSnapMagic[8] = {'C', 'M', 'T', 'C', 'T', 'L', 'S', 'N'};
constexpr uint32_t kSnapVersion = 1;
constexpr size_t kHsSize = ControllerLogStorage::kHardStateSize;
// Bytes after the crc field that are not payload: term, index, type.
constexpr size_t kBodyFixed = 17;
constexpr size_t kOverhead = ControllerLogStorage::kRecordOverhead;
static_assert(kOverhead == 8 + kBodyFixed);

void encode_header(uint8_t* b, uint32_t version = ControllerLogStorage::kVersion) {
    std::memcpy(b, kLogMagic, 8);
    put_be32(b + 8, version);
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

Status check_log_header(const uint8_t* b, const std::string& path) {
    if (std::memcmp(b, kLogMagic, 8) != 0) {
        return Status::error(Errc::kCorruption, "{}: bad magic (not a Comet controller log)", path);
    }
    if (get_be32(b + 12) != crc32(b, 12)) {
        return Status::error(Errc::kCorruption, "{}: header checksum mismatch", path);
    }
    if (get_be32(b + 8) != ControllerLogStorage::kVersion &&
        get_be32(b + 8) != ControllerLogStorage::kCompactedLogVersion) {
        return Status::error(Errc::kUnsupported, "{}: version {} (this build reads {} and {})",
                             path, get_be32(b + 8), ControllerLogStorage::kVersion,
                             ControllerLogStorage::kCompactedLogVersion);
    }
    return Status::ok();
}

// The fixed fields of one log record.
struct RecordHead {
    size_t len = 0;  // bytes after the crc field
    raft::Term term;
    int64_t index = 0;
    raft::EntryType type = raft::EntryType::kNormal;
};

// Decodes the record at `off` of the `size`-byte file `b`. Returns nullptr when it is whole and
// its checksum matches, else why the log ends there.
const char* read_record_head(const uint8_t* b, size_t size, size_t off, RecordHead* r) {
    if (size - off < kOverhead) {
        return "short record";
    }
    const size_t len = get_be32(b + off);
    if (len < kBodyFixed || len - kBodyFixed > ControllerLogStorage::kMaxPayload) {
        return "impossible length";
    }
    if (len > size - off - 8) {
        return "record runs past the end of the file";
    }
    if (get_be32(b + off + 4) != crc32(b + off + 8, len)) {
        return "checksum mismatch";
    }
    r->len = len;
    r->term = raft::Term(static_cast<int64_t>(get_be64(b + off + 8)));
    r->index = static_cast<int64_t>(get_be64(b + off + 16));
    r->type = static_cast<raft::EntryType>(b[off + 24]);
    return nullptr;
}

// Whether a sound record may follow the previous one (`next` its expected index, 0 for the
// first record; `prev_term` the previous record's term, or the snapshot's). Returns nullptr
// when it may, else why the log ends there.
const char* check_record_place(const RecordHead& r, int64_t next, raft::Term prev_term,
                               const raft::Snapshot& snap) {
    const bool first = next == 0;
    if (first ? (r.index < 1 || r.index > snap.index.value() + 1 ||
                 (snap.index.value() == 0 && r.index != 1))
              : r.index != next) {
        return "index out of sequence";
    }
    if (!valid_type(r.type)) {
        return "unknown entry type";
    }
    if (r.term.value() < 0 || (!first && r.term < prev_term) ||
        (r.index > snap.index.value() && r.term < snap.term)) {
        return "term lower than the previous entry's";
    }
    return nullptr;
}

}  // namespace

Result<std::unique_ptr<ControllerLogStorage>> ControllerLogStorage::open(const std::string& dir) {
    std::unique_ptr<ControllerLogStorage> s(new ControllerLogStorage(dir));
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        return Status::error(Errc::kIoError, "create {}: {}", dir, ec.message());
    }
    COMET_RETURN_IF_ERROR(s->load_snapshot());
    COMET_RETURN_IF_ERROR(s->load_log());
    COMET_RETURN_IF_ERROR(s->load_hard_state());
    return s;
}

ControllerLogStorage::~ControllerLogStorage() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

Status ControllerLogStorage::load_snapshot() {
    const std::string path = snapshot_path();
    // A leftover temp file is a replacement that never got renamed: the old file stands.
    for (const std::string& tmp : {path + ".tmp", log_path() + ".tmp"}) {
        if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) {
            return io_error("unlink", tmp);
        }
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return errno == ENOENT ? Status::ok() : io_error("open", path);
    }
    struct stat st {};
    Status rs = ::fstat(fd, &st) == 0 ? Status::ok() : io_error("stat", path);
    const auto size = static_cast<size_t>(rs.is_ok() ? st.st_size : 0);
    if (rs.is_ok() && (size < kSnapshotOverhead || size - kSnapshotOverhead > kMaxSnapshot)) {
        rs = Status::error(Errc::kCorruption, "{}: {} bytes is no snapshot", path, size);
    }
    auto buf = std::make_shared<std::string>(rs.is_ok() ? size : 0, '\0');
    if (rs.is_ok()) {
        rs = pread_all(fd, buf->data(), size, 0, path);
    }
    ::close(fd);
    COMET_RETURN_IF_ERROR(rs);
    // The file is renamed into place only once durable, so damage here is corruption, not a
    // torn write: refuse to start rather than lose the state it holds.
    const auto* b = reinterpret_cast<const uint8_t*>(buf->data());
    if (std::memcmp(b, kSnapMagic, 8) != 0) {
        return Status::error(Errc::kCorruption, "{}: bad magic (not a controller snapshot)", path);
    }
    if (get_be32(b + size - 4) != crc32(b, size - 4)) {
        return Status::error(Errc::kCorruption, "{}: checksum mismatch", path);
    }
    if (get_be32(b + 8) != kSnapVersion) {
        return Status::error(Errc::kUnsupported, "{}: version {} (this build reads {})", path,
                             get_be32(b + 8), kSnapVersion);
    }
    const auto index = static_cast<int64_t>(get_be64(b + 12));
    const auto term = static_cast<int64_t>(get_be64(b + 20));
    const size_t n = get_be32(b + 28);
    if (n != size - kSnapshotOverhead || index <= 0 || term <= 0) {
        return Status::error(Errc::kCorruption, "{}: size {} index {} term {} in a {}-byte file",
                             path, n, index, term, size);
    }
    snap_.index = raft::LogIndex(index);
    snap_.term = raft::Term(term);
    snap_.data = raft::SharedBytes(std::shared_ptr<const void>(buf, buf->data()), b + 32, n);
    return Status::ok();
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
        return init_log(size);
    }
    // One buffer for the whole file; payloads are views into it.
    auto buf = std::shared_ptr<uint8_t[]>(new uint8_t[size]);
    COMET_RETURN_IF_ERROR(pread_all(fd_, buf.get(), size, 0, path));
    COMET_RETURN_IF_ERROR(check_log_header(buf.get(), path));
    const LogScan scan = scan_records(std::shared_ptr<const void>(buf, buf.get()), size);
    return finish_recovery(scan, size);
}

// New, or a header that never reached disk whole. The header is made durable before open()
// returns, so no entry can have been appended behind a torn one.
Status ControllerLogStorage::init_log(size_t size) {
    const std::string path = log_path();
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

// Reads the records after the header in order into slots_ (see the class comment, Recovery),
// stopping at the first that is damaged or out of place. `owner` holds the whole file.
ControllerLogStorage::LogScan ControllerLogStorage::scan_records(
    const std::shared_ptr<const void>& owner, size_t size) {
    const auto* b = static_cast<const uint8_t*>(owner.get());
    LogScan scan;
    // Records start at index 1, or (compacted) anywhere up to just after the snapshot; those the
    // snapshot covers are skipped (a kill between the snapshot's rename and the log's rewrite).
    int64_t next = 0;  // index the next record must have; 0 = not yet known
    raft::Term prev_term = snap_.term;
    size_t off = kHeaderSize;
    while (off != size) {
        RecordHead r;
        if (const char* why = read_record_head(b, size, off, &r); why != nullptr) {
            scan.why = why;
            break;
        }
        if (const char* why = check_record_place(r, next, prev_term, snap_); why != nullptr) {
            scan.why = why;
            break;
        }
        next = r.index + 1;
        prev_term = r.term;
        const size_t at = off;
        off += 8 + r.len;
        if (r.index == snap_.index.value() && r.term != snap_.term) {
            // Not the log the snapshot continues: cut everything after this record.
            scan.diverged = true;
            scan.why = "log diverges from the snapshot";
            break;
        }
        if (r.index <= snap_.index.value()) {
            scan.covered = true;
            continue;  // covered by the snapshot
        }
        Slot slot;
        slot.offset = static_cast<int64_t>(at);
        slot.term = r.term;
        slot.type = r.type;
        if (r.len > kBodyFixed) {
            slot.payload = raft::SharedBytes(owner, b + at + kOverhead, r.len - kBodyFixed);
        }
        slots_.push_back(std::move(slot));
    }
    scan.end = off;
    return scan;
}

// Cuts what the scan did not take from the file's tail, and finishes a compaction that was
// interrupted between the snapshot's rename and the log's rewrite.
Status ControllerLogStorage::finish_recovery(const LogScan& scan, size_t size) {
    const std::string path = log_path();
    const size_t off = scan.end;
    end_ = static_cast<int64_t>(off);
    if (scan.diverged) {
        spdlog::warn(
            "{}: the log's entry {} has another term than the snapshot's ({}): "
            "dropping the log after it",
            path, snap_.index, snap_.term);
    }
    if (off != size) {
        cut_bytes_ = static_cast<int64_t>(size - off);
        spdlog::warn("{}: log ends after index {} ({} at byte {}); cutting {} bytes", path,
                     slots_.size(), scan.why, off, cut_bytes_);
        if (::ftruncate(fd_, static_cast<off_t>(off)) != 0) {
            return io_error("truncate", path);
        }
        if (::fdatasync(fd_) != 0) {
            return io_error("fdatasync", path);
        }
    }
    if (scan.covered || scan.diverged) {
        // Killed between the snapshot's rename and the log's rewrite: finish the rewrite, so
        // the file again starts right after the snapshot (appends must continue the records).
        spdlog::warn("{}: finishing an interrupted compaction at snapshot {}", path, snap_.index);
        COMET_RETURN_IF_ERROR(rewrite_log());
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
    const raft::Term last_term = slots_.empty() ? snap_.term : slots_.back().term;
    if (last_term > hs_.term) {
        spdlog::warn(
            "{}: the log holds entries of term {} but the hard state says term {}: "
            "taking term {} (no vote)",
            dir_, last_term, hs_.term, last_term);
        hs_.term = last_term;
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
    if (index == snap_.index) {
        return snap_.term;
    }
    if (index < first_index() || index > last_index()) {
        return std::nullopt;
    }
    return slots_[static_cast<size_t>((index - snap_.index) - 1)].term;
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
    raft::Term prev = slots_.empty() ? snap_.term : slots_.back().term;
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
    if (from < first_index()) {
        return Status::error(Errc::kInvalidArgument, "truncate_suffix: from={} < first index {}",
                             from, first_index());
    }
    COMET_RETURN_IF_ERROR(check_usable("truncate"));
    if (from > last_index()) {
        return Status::ok();
    }
    const size_t keep = static_cast<size_t>((from - snap_.index) - 1);
    const int64_t cut = slots_[keep].offset;
    // Cut and flush before any later append is written (class comment: write order).
    if (::ftruncate(fd_, static_cast<off_t>(cut)) != 0) {
        return fail(io_error("truncate", log_path()));
    }
    if (::fdatasync(fd_) != 0) {
        return fail(io_error("fdatasync", log_path()));
    }
    slots_.resize(keep);
    end_ = cut;
    log_dirty_ = false;  // the fdatasync covered the kept prefix too
    return Status::ok();
}

Status ControllerLogStorage::read(raft::LogIndex lo, raft::LogIndex hi, size_t max_bytes,
                                  std::vector<raft::Entry>* out) const {
    if (lo < first_index() || hi > last_index()) {
        return Status::error(Errc::kInvalidArgument, "read [{}, {}] outside [{}, {}]", lo, hi,
                             first_index(), last_index());
    }
    size_t bytes = 0;
    for (raft::LogIndex i = lo; i <= hi; i += 1) {
        const Slot& s = slots_[static_cast<size_t>((i - snap_.index) - 1)];
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

namespace comet::controller {

bool ControllerLogStorage::stop_here(int step) {
    if (stop_after_step_ != step) {
        return false;
    }
    failed_ = true;
    spdlog::warn("controller raft log {}: test stop after compaction step {}", dir_, step);
    return true;
}

Status ControllerLogStorage::save_snapshot(const raft::Snapshot& s) {
    COMET_RETURN_IF_ERROR(check_usable("save_snapshot"));
    if (s.index <= snap_.index || s.term.value() <= 0) {
        return Status::error(Errc::kInvalidArgument,
                             "save_snapshot: index {} term {} (current snapshot {})", s.index,
                             s.term, snap_.index);
    }
    if (s.data.size() > kMaxSnapshot) {
        return Status::error(Errc::kInvalidArgument, "save_snapshot: {} bytes exceeds {}",
                             s.data.size(), kMaxSnapshot);
    }
    // (0) Everything written so far is durable first: after a crash the hard state is never
    // older than the snapshot's term and no acknowledged entry after it is lost.
    COMET_RETURN_IF_ERROR(sync());
    // (1)-(3) The snapshot file.
    const std::string path = snapshot_path();
    const std::string tmp = path + ".tmp";
    std::string bytes(32, '\0');
    auto* h = reinterpret_cast<uint8_t*>(bytes.data());
    std::memcpy(h, kSnapMagic, 8);
    put_be32(h + 8, kSnapVersion);
    put_be64(h + 12, static_cast<uint64_t>(s.index.value()));
    put_be64(h + 20, static_cast<uint64_t>(s.term.value()));
    put_be32(h + 28, static_cast<uint32_t>(s.data.size()));
    bytes.append(s.data.view());
    uint8_t crc[4];
    put_be32(crc, crc32(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    bytes.append(reinterpret_cast<const char*>(crc), 4);
    {
        const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
            return fail(io_error("open", tmp));
        }
        Status st = pwrite_all(fd, bytes.data(), bytes.size(), 0, tmp);
        if (st.is_ok() && ::fdatasync(fd) != 0) {
            st = io_error("fdatasync", tmp);
        }
        ::close(fd);
        if (!st.is_ok()) {
            return fail(std::move(st));
        }
    }
    if (stop_here(1)) {
        return Status::error(Errc::kIoError, "stopped after step 1");
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        return fail(io_error("rename", tmp));
    }
    if (stop_here(2)) {
        return Status::error(Errc::kIoError, "stopped after step 2");
    }
    if (Status st = fsync_dir(dir_); !st.is_ok()) {
        return fail(std::move(st));
    }
    if (stop_here(3)) {
        return Status::error(Errc::kIoError, "stopped after step 3");
    }
    // Keep the entries after the snapshot when the log continues it (Raft §7).
    const std::optional<raft::Term> t = term_at(s.index);
    std::vector<Slot> kept;
    if (t.has_value() && *t == s.term) {
        kept.assign(slots_.begin() + ((s.index - snap_.index)), slots_.end());
    }
    const size_t dropped = slots_.size() - kept.size();
    slots_ = std::move(kept);
    snap_ = s;
    // (4)-(6) The log, rewritten without what the snapshot covers.
    COMET_RETURN_IF_ERROR(rewrite_log());
    spdlog::info(
        "controller raft log {}: snapshot at index {} term {} ({} bytes); {} entries "
        "dropped, log now [{}, {}]",
        dir_, s.index, s.term, s.data.size(), dropped, first_index(), last_index());
    return Status::ok();
}

Status ControllerLogStorage::rewrite_log() {
    const std::string path = log_path();
    const std::string tmp = path + ".tmp";
    std::vector<uint8_t> buf(kHeaderSize);
    encode_header(buf.data(), kCompactedLogVersion);
    std::vector<int64_t> offsets;
    offsets.reserve(slots_.size());
    raft::LogIndex i = snap_.index + 1;
    for (const Slot& slot : slots_) {
        offsets.push_back(static_cast<int64_t>(buf.size()));
        encode_record(raft::Entry{slot.term, i, slot.type, slot.payload}, &buf);
        i += 1;
    }
    const int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return fail(io_error("open", tmp));
    }
    Status st = pwrite_all(fd, buf.data(), buf.size(), 0, tmp);
    if (st.is_ok() && ::fdatasync(fd) != 0) {
        st = io_error("fdatasync", tmp);
    }
    if (!st.is_ok()) {
        ::close(fd);
        return fail(std::move(st));
    }
    if (stop_here(4)) {
        ::close(fd);
        return Status::error(Errc::kIoError, "stopped after step 4");
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        ::close(fd);
        return fail(io_error("rename", tmp));
    }
    // The renamed file is the log now: append through its descriptor.
    ::close(fd_);
    fd_ = fd;
    for (size_t k = 0; k < slots_.size(); ++k) {
        slots_[k].offset = offsets[k];
    }
    end_ = static_cast<int64_t>(buf.size());
    log_dirty_ = false;
    if (stop_here(5)) {
        return Status::error(Errc::kIoError, "stopped after step 5");
    }
    if (Status ds = fsync_dir(dir_); !ds.is_ok()) {
        return fail(std::move(ds));
    }
    if (stop_here(6)) {
        return Status::error(Errc::kIoError, "stopped after step 6");
    }
    return Status::ok();
}

}  // namespace comet::controller
