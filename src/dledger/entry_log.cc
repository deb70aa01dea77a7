#include "dledger/entry_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "base/bytes.h"
#include "base/check.h"
#include "base/crc32.h"
#include "base/file_io.h"

namespace comet::dledger {
namespace {

constexpr char kLogMagic[8] = {'C', 'M', 'T', 'R', 'L', 'O', 'G', '1'};
constexpr char kHsMagic[8] = {'C', 'M', 'T', 'R', 'H', 'S', '0', '1'};
constexpr size_t kHeader = EntryLog::kRecordSize;
// The entries file grows by this many zero bytes at a time (decision 035): a record written
// into bytes that already exist on disk changes no metadata, so the fdatasync that makes it
// durable commits no journal transaction (a file growing by 32 bytes per entry did, every
// sync). A zeroed record ends the log at load.
constexpr int64_t kGrowBytes = 1 << 20;

void encode_record(const EntryRecord& r, uint8_t* b) {
    std::memset(b, 0, EntryLog::kRecordSize);
    put_be64(b, static_cast<uint64_t>(r.start));
    put_be32(b + 8, static_cast<uint32_t>(r.size));
    b[12] = static_cast<uint8_t>(r.type);
    put_be64(b + 16, static_cast<uint64_t>(r.term.value()));
    put_be32(b + 28, crc32(b, 28));
}

bool decode_record(const uint8_t* b, EntryRecord* r) {
    if (get_be32(b + 28) != crc32(b, 28)) {
        return false;
    }
    r->start = static_cast<int64_t>(get_be64(b));
    r->size = static_cast<int32_t>(get_be32(b + 8));
    if (b[12] > static_cast<uint8_t>(raft::EntryType::kNoOp) || r->size < 0) {
        return false;
    }
    r->type = static_cast<raft::EntryType>(b[12]);
    r->term = raft::Term(static_cast<int64_t>(get_be64(b + 16)));
    return true;
}

}  // namespace

Result<std::unique_ptr<EntryLog>> EntryLog::open(const std::string& dir,
                                                 const std::string& epoch_path) {
    std::unique_ptr<EntryLog> log(new EntryLog());
    log->dir_ = dir;
    log->keep_epochs_ = !epoch_path.empty();
    log->epochs_ = store::EpochFile(epoch_path);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        return Status::error(Errc::kIoError, "create {}: {}", dir, ec.message());
    }
    COMET_RETURN_IF_ERROR(log->load());
    COMET_RETURN_IF_ERROR(log->rebuild_epochs());
    return log;
}

Status EntryLog::rebuild_epochs() {
    if (!keep_epochs_) {
        return Status::ok();
    }
    epochs_.clear();
    for (const EntryRecord& r : recs_) {
        if (r.term.value() > epochs_.last_epoch()) {
            COMET_RETURN_IF_ERROR(epochs_.append(r.term.value(), r.start));
        }
    }
    epochs_dirty_ = false;
    return epochs_.save();
}

EntryLog::~EntryLog() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

Status EntryLog::load() {
    const std::string path = dir_ + "/entries";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
        return io_error("open", path);
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
        return io_error("stat", path);
    }
    const auto size = static_cast<size_t>(st.st_size);
    if (size >= kHeader) {
        std::vector<uint8_t> buf(size);
        COMET_RETURN_IF_ERROR(pread_all(fd_, buf.data(), size, 0, path));
        if (std::memcmp(buf.data(), kLogMagic, 8) != 0 ||
            get_be32(buf.data() + 28) != crc32(buf.data(), 28)) {
            return Status::error(Errc::kCorruption, "{}: bad header (not a Comet DLedger log)",
                                 path);
        }
        has_base_ = true;
        base_ = static_cast<int64_t>(get_be64(buf.data() + 8));
        int64_t expect = base_;
        for (size_t off = kHeader; off + kRecordSize <= size; off += kRecordSize) {
            EntryRecord r;
            if (!decode_record(buf.data() + off, &r) || r.start != expect) {
                if (!std::all_of(buf.begin() + static_cast<std::ptrdiff_t>(off), buf.end(),
                                 [](uint8_t b) { return b == 0; })) {
                    spdlog::warn("{}: log ends at entry {} (torn record at byte {})", path,
                                 recs_.size(), off);
                }
                break;
            }
            recs_.push_back(r);
            expect = r.end();
        }
        // Cut what follows the last valid record (a torn record, the zeros of the last
        // growth): the file then grows again by zeros only, so no stale record can ever
        // reappear behind new ones.
        const size_t valid = kHeader + recs_.size() * kRecordSize;
        if (valid != size) {
            if (::ftruncate(fd_, static_cast<off_t>(valid)) != 0 || ::fdatasync(fd_) != 0) {
                return io_error("truncate", path);
            }
        }
        allocated_ = static_cast<int64_t>(valid);
    } else if (size > 0) {
        // A header that never made it to disk whole: the log was never used.
        if (::ftruncate(fd_, 0) != 0) {
            return io_error("truncate", path);
        }
    }

    const std::string hs_path = dir_ + "/hardstate";
    const int hfd = ::open(hs_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (hfd >= 0) {
        uint8_t b[32];
        const ssize_t r = ::pread(hfd, b, sizeof b, 0);
        ::close(hfd);
        if (r != static_cast<ssize_t>(sizeof b) || std::memcmp(b, kHsMagic, 8) != 0 ||
            get_be32(b + 28) != crc32(b, 28)) {
            return Status::error(Errc::kCorruption, "{}: bad hard state (size {} or checksum)",
                                 hs_path, r);
        }
        hs_.term = raft::Term(static_cast<int64_t>(get_be64(b + 8)));
        hs_.voted_for = raft::NodeId(static_cast<int32_t>(get_be32(b + 16)));
        hs_.commit = raft::LogIndex(static_cast<int64_t>(get_be64(b + 20)));
        if (hs_.commit > last_index()) {
            spdlog::warn("{}: commit {} beyond the log end {}; using the log end", hs_path,
                         hs_.commit, last_index());
            hs_.commit = last_index();
            lost_committed_ = true;
        }
        written_hs_ = hs_;
    }
    // The hard state is written only when a sync finds term or vote changed, the records with
    // every pwrite: after a kill -9 between the two, the log may hold entries of a term the
    // hard state never reached. Their leader existed, so this peer is in that term (no vote).
    if (!recs_.empty() && recs_.back().term > hs_.term) {
        spdlog::warn("{}: the log holds entries of term {} but the hard state says term {}: "
                     "taking term {} (no vote)",
                     dir_, recs_.back().term, hs_.term, recs_.back().term);
        hs_.term = recs_.back().term;
        hs_.voted_for = raft::kNoNode;
    }
    return Status::ok();
}

Status EntryLog::set_base(int64_t base_offset) {
    COMET_CHECK(!has_base_, "EntryLog base already set");
    uint8_t b[kHeader] = {};
    std::memcpy(b, kLogMagic, 8);
    put_be64(b + 8, static_cast<uint64_t>(base_offset));
    put_be32(b + 28, crc32(b, 28));
    const std::string path = dir_ + "/entries";
    COMET_RETURN_IF_ERROR(pwrite_all(fd_, b, sizeof b, 0, path));
    if (::fdatasync(fd_) != 0) {
        return io_error("fdatasync", path);
    }
    COMET_RETURN_IF_ERROR(fsync_dir(dir_));
    allocated_ = std::max<int64_t>(allocated_, static_cast<int64_t>(kHeader));
    has_base_ = true;
    base_ = base_offset;
    return Status::ok();
}

Status EntryLog::append(const EntryRecord& r) {
    COMET_CHECK(has_base_, "EntryLog append before set_base");
    if (r.start != end_offset()) {
        return Status::error(Errc::kInvalidArgument, "entry starts at {} but the log ends at {}",
                             r.start, end_offset());
    }
    uint8_t b[kRecordSize];
    encode_record(r, b);
    const auto at = static_cast<off_t>(kHeader + recs_.size() * kRecordSize);
    if (at + static_cast<off_t>(kRecordSize) > allocated_) {
        // Durable with the next sync (the size change commits once per growth).
        COMET_RETURN_IF_ERROR(pwrite_zeros(fd_, allocated_, kGrowBytes, dir_ + "/entries"));
        allocated_ += kGrowBytes;
    }
    COMET_RETURN_IF_ERROR(pwrite_all(fd_, b, sizeof b, at, dir_ + "/entries"));
    recs_.push_back(r);
    if (keep_epochs_ && r.term.value() > epochs_.last_epoch()) {
        COMET_RETURN_IF_ERROR(epochs_.append(r.term.value(), r.start));
        epochs_dirty_ = true;
    }
    return Status::ok();
}

Status EntryLog::truncate_from(raft::LogIndex from) {
    COMET_CHECK(from.value() >= 1, "truncate_from({})", from);
    if (from > last_index()) {
        return Status::ok();
    }
    const size_t keep = static_cast<size_t>(from.value() - 1);
    const std::string path = dir_ + "/entries";
    if (::ftruncate(fd_, static_cast<off_t>(kHeader + keep * kRecordSize)) != 0 ||
        ::fdatasync(fd_) != 0) {
        return io_error("truncate", path);
    }
    allocated_ = static_cast<int64_t>(kHeader + keep * kRecordSize);
    recs_.resize(keep);
    return rebuild_epochs();
}

Result<int64_t> EntryLog::cut_beyond(int64_t log_end) {
    size_t keep = recs_.size();
    while (keep > 0 && recs_[keep - 1].end() > log_end) {
        --keep;
    }
    const auto dropped = static_cast<int64_t>(recs_.size() - keep);
    if (dropped > 0 && static_cast<int64_t>(keep) < hs_.commit.value()) {
        lost_committed_ = true;
        spdlog::error("{}/entries: committed entries {}..{} lost their CommitLog bytes "
                      "(corruption); this peer will not vote until a leader repairs its log",
                      dir_, keep + 1, hs_.commit);
    }
    if (dropped > 0) {
        spdlog::warn("{}/entries: dropping {} entries past the CommitLog end {}", dir_, dropped,
                     log_end);
        COMET_RETURN_IF_ERROR(truncate_from(raft::LogIndex(static_cast<int64_t>(keep) + 1)));
        if (hs_.commit > last_index()) {
            hs_.commit = last_index();
        }
    }
    return dropped;
}

Status EntryLog::sync() const {
    if (::fdatasync(fd_) != 0) {
        return io_error("fdatasync", dir_ + "/entries");
    }
    return Status::ok();
}

Status EntryLog::sync_hard_state(bool force) {
    if (epochs_dirty_) {
        epochs_dirty_ = false;
        COMET_RETURN_IF_ERROR(epochs_.save());
    }
    if (!force && hs_.term == written_hs_.term && hs_.voted_for == written_hs_.voted_for) {
        return Status::ok();
    }
    COMET_RETURN_IF_ERROR(write_hard_state(hs_));
    written_hs_ = hs_;
    return Status::ok();
}

Status EntryLog::write_hard_state(const raft::HardState& hs) {
    uint8_t b[32] = {};
    std::memcpy(b, kHsMagic, 8);
    put_be64(b + 8, static_cast<uint64_t>(hs.term.value()));
    put_be32(b + 16, static_cast<uint32_t>(hs.voted_for.value()));
    put_be64(b + 20, static_cast<uint64_t>(hs.commit.value()));
    put_be32(b + 28, crc32(b, 28));
    return replace_file_durably(dir_ + "/hardstate",
                                std::string_view(reinterpret_cast<const char*>(b), sizeof b));
}

raft::LogIndex EntryLog::first_starting_at(int64_t offset) const {
    const auto it = std::lower_bound(recs_.begin(), recs_.end(), offset,
                                     [](const EntryRecord& r, int64_t o) { return r.start < o; });
    return raft::LogIndex(static_cast<int64_t>(it - recs_.begin()) + 1);
}

}  // namespace comet::dledger
