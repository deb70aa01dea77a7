// CommitLog recovery: scans the last segments (after a clean shutdown) or from the segment the
// checkpoint points at (after a crash), checks each record (magic, sizes, PHYSICALOFFSET ==
// position, CRC when checkCRCOnRecover), cuts at the first invalid one, truncates the files
// past it and resets the write and flush positions there.
// Threads: the store's opening thread, once, before start(): no puts, no commit thread. put_mu_
// is taken only around the reset of the put side's positions.

#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/bytes.h"
#include "base/progress_log.h"
#include "protocol/message_decoder.h"
#include "store/commit_log.h"
#include "store/store_checkpoint.h"

namespace comet::store {

namespace pm = comet::protocol;

namespace {

struct RecordCheck {
    enum Kind { kMessage, kBlank, kEnd } kind = kEnd;
    int32_t size = 0;
    int64_t store_timestamp = 0;
    std::string reason;  // why a kEnd is not a clean end of data; empty for zeros
};

// Java CommitLog#checkMessageAndReturnSize, stricter: the PHYSICALOFFSET field must equal the
// record's position (stale bytes from an older write cannot pass).
RecordCheck check_record(const uint8_t* p, int64_t avail, int64_t expected_phys, bool check_crc) {
    RecordCheck c;
    if (avail < 8) {
        c.reason = avail == 0 ? "" : fmt::format("only {} bytes left in the segment", avail);
        return c;
    }
    auto total = static_cast<int32_t>(get_be32(p));
    auto magic = static_cast<int32_t>(get_be32(p + 4));
    if (total == 0 && magic == 0) {
        return c;  // zeros: the clean end of written data
    }
    if (magic == pm::kBlankMagicCode) {
        if (total != avail) {
            c.reason = fmt::format("blank filler of size {} but {} bytes left", total, avail);
            return c;
        }
        c.kind = RecordCheck::kBlank;
        c.size = total;
        return c;
    }
    if (magic != pm::kMessageMagicCodeV1 && magic != pm::kMessageMagicCodeV2) {
        c.reason = fmt::format("bad magic {:#010x}", static_cast<uint32_t>(magic));
        return c;
    }
    if (total <= 0 || total > avail) {
        c.reason = fmt::format("TOTALSIZE {} does not fit the {} bytes left", total, avail);
        return c;
    }
    auto m = pm::decode_message(
        std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(total)),
        {.read_body = false, .check_crc = check_crc});
    if (!m.is_ok()) {
        c.reason = m.status().message();
        return c;
    }
    if (m.value().commit_log_offset != expected_phys) {
        c.reason = fmt::format("PHYSICALOFFSET {} does not match position {}",
                               m.value().commit_log_offset, expected_phys);
        return c;
    }
    c.kind = RecordCheck::kMessage;
    c.size = total;
    c.store_timestamp = m.value().store_timestamp;
    return c;
}

}  // namespace

Result<RecoveryResult> CommitLog::recover_normally() {
    size_t n = queue_.file_count();
    size_t first = n > 3 ? n - 3 : 0;  // Java: start from the third-last segment
    return recover_from(first, config_.check_crc_on_recover);
}

Result<RecoveryResult> CommitLog::recover_abnormally() {
    auto files = queue_.files();
    size_t first = 0;
    if (checkpoint_ != nullptr && !files.empty()) {
        int64_t min_ts = checkpoint_->min_timestamp();
        for (size_t i = files.size(); i-- > 0;) {
            const auto& f = files[i];
            RecordCheck c = check_record(f->data(), f->file_size(), f->file_from_offset(), false);
            if (c.kind == RecordCheck::kMessage && c.store_timestamp != 0 &&
                c.store_timestamp <= min_ts) {
                first = i;
                spdlog::info("abnormal recovery: checkpoint min timestamp {} -> start at {}",
                             min_ts, f->file_name());
                break;
            }
        }
    }
    return recover_from(first, config_.check_crc_on_recover);
}

Result<RecoveryResult> CommitLog::recover_from(size_t first_index, bool check_crc) {
    auto files = queue_.files();
    RecoveryResult res;
    if (files.empty()) {
        max_offset_.store(0);
        reset_put_positions(0);
        queue_.set_flushed_where(0);
        spdlog::info("CommitLog recovery: no segments in {}", queue_.dir());
        return res;
    }
    first_index = std::min(first_index, files.size() - 1);
    const int64_t process = scan_valid_records(files, first_index, check_crc, &res);
    res.max_offset = PhysicalOffset(process);
    int64_t on_disk_end = files.back()->file_from_offset() + files.back()->file_size();
    res.bytes_truncated = on_disk_end - process;
    if (!res.cut_reason.empty()) {
        spdlog::warn("CommitLog recovery: cut at offset {}: {} (scanned {} records from {})",
                     process, res.cut_reason, res.records_scanned, res.scan_from);
    } else {
        spdlog::info("CommitLog recovery: valid data ends at {} ({} records scanned from {})",
                     process, res.records_scanned, res.scan_from);
    }
    COMET_RETURN_IF_ERROR(queue_.truncate_dirty_files(process));
    queue_.set_flushed_where(process);
    max_offset_.store(process);
    reset_put_positions(process);
    return res;
}

int64_t CommitLog::scan_valid_records(const std::vector<std::shared_ptr<MappedFile>>& files,
                                      size_t first_index, bool check_crc,
                                      RecoveryResult* res) const {
    int64_t process = files[first_index]->file_from_offset();
    res->scan_from = PhysicalOffset(process);
    bool stopped = false;
    // A long scan (many segments, CRC on) reports its progress every few seconds.
    ProgressLog progress("CommitLog recovery scan", process,
                         files.back()->file_from_offset() + files.back()->file_size(), *clock_);
    for (size_t i = first_index; i < files.size() && !stopped; ++i) {
        const auto& f = files[i];
        const int64_t size = f->file_size();
        int64_t pos = 0;
        for (;;) {
            RecordCheck c =
                check_record(f->data() + pos, size - pos, f->file_from_offset() + pos, check_crc);
            if (c.kind == RecordCheck::kMessage) {
                pos += c.size;
                ++res->records_scanned;
                if ((res->records_scanned & 4095) == 0) {
                    (void)progress.update(f->file_from_offset() + pos);
                }
                continue;
            }
            if (c.kind == RecordCheck::kBlank) {
                pos = size;
                break;
            }
            stopped = true;
            res->cut_reason = c.reason;
            break;
        }
        process = f->file_from_offset() + pos;
    }
    (void)progress.finish(process);
    return process;
}

void CommitLog::reset_put_positions(int64_t end) {
    MutexLock l(put_mu_);
    reserved_ = end;
    reserved_pub_.store(end);
    write_file_.reset();
    ring_room_end_ = 0;
    slot_room_end_ = 0;
}

}  // namespace comet::store
