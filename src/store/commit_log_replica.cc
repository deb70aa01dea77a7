// CommitLog bytes that come from elsewhere, and cuts: append_data writes an HA slave's or a
// DLedger follower's replicated bytes straight into the segments (and decodes dispatch hints
// from them while they are hot); truncate_to cuts the log at a record boundary (DLedger: a
// deposed leader's unreplicated tail, a follower's divergent tail; recovery's kept end).
// Threads: one replication thread (append_data); the owner with puts stopped (truncate_to).
// Both run entirely under put_mu_, after the commit thread drained the write ring.

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "base/bytes.h"
#include "protocol/message_decoder.h"
#include "store/commit_log.h"

namespace comet::store {

namespace {

// TOTALSIZE and magic (`head`, 8 bytes) of a record starting at `rec`: where the record after it
// starts, or -1 when they do not describe a message that ends within its segment (`seg` bytes).
int64_t replicated_next_record(int64_t rec, const uint8_t* head, int64_t seg) {
    const auto total = static_cast<int32_t>(get_be32(head));
    const auto magic = static_cast<int32_t>(get_be32(head + 4));
    const bool message =
        magic == protocol::kMessageMagicCodeV1 || magic == protocol::kMessageMagicCodeV2;
    if (!message || total < 8 || (seg > 0 && rec / seg != (rec + total - 1) / seg)) {
        return -1;
    }
    return rec + total;
}

}  // namespace

void CommitLog::hint_replicated_locked(int64_t start, std::string_view data) {
    if (hints_ == nullptr || data.empty()) {
        return;
    }
    size_t pos = 0;
    if (!resume_replicated_hints_locked(start, data, &pos)) {
        return;
    }
    const int64_t seg = config_.mapped_file_size_commit_log;
    int64_t at = start + static_cast<int64_t>(pos);
    const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
    static const std::vector<int64_t> kNoDelayLevels;
    while (pos < data.size()) {
        DispatchRequest* h = hints_->begin_push();
        int32_t size = 0;
        const CheckResult r = check_message_and_return_size(
            bytes + pos, data.size() - pos, /*check_crc=*/false, kNoDelayLevels,
            h != nullptr ? h : &hint_scratch_, &size, /*read_keys=*/true);
        if (r == CheckResult::kMessage) {
            // A delayed message's tags code is its delivery time, which needs the delay
            // levels: the dispatcher decodes those itself.
            if (h != nullptr && h->topic != kScheduleTopic) {
                h->commit_log_offset = PhysicalOffset(at);
                h->msg_size = size;
                hints_->end_push();
            }
            pos += static_cast<size_t>(size);
            at += size;
        } else if (r == CheckResult::kBlank && seg > 0) {
            const int64_t seg_end = (at / seg + 1) * seg;  // the filler ends the segment
            pos += static_cast<size_t>(seg_end - at);
            at = seg_end;
        } else {
            note_hint_cut_locked(at, bytes + pos, data.size() - pos);
            return;
        }
    }
}

bool CommitLog::resume_replicated_hints_locked(int64_t start, std::string_view data, size_t* pos) {
    const int64_t seg = config_.mapped_file_size_commit_log;
    const int64_t end = start + static_cast<int64_t>(data.size());
    if (hint_lost_ && hint_carry_len_ > 0) {
        // The earlier chunk ended within a record's first 8 bytes: complete them.
        const size_t need = 8 - hint_carry_len_;
        if (start == hint_carry_at_ + static_cast<int64_t>(hint_carry_len_) &&
            data.size() >= need) {
            uint8_t head[8];
            std::memcpy(head, hint_carry_.data(), hint_carry_len_);
            std::memcpy(head + hint_carry_len_, data.data(), need);
            hint_resume_at_ = replicated_next_record(hint_carry_at_, head, seg);
        }
        hint_carry_len_ = 0;
    }
    if (hint_lost_) {
        // An earlier chunk ended inside a record (HA chunks are cut anywhere). Resume at the
        // record after it when its size was read, else at the next segment start.
        if (hint_resume_at_ >= start && hint_resume_at_ < end) {
            *pos = static_cast<size_t>(hint_resume_at_ - start);
        } else if (hint_resume_at_ >= end) {
            return false;  // that record covers this whole chunk
        } else if (seg <= 0 || start % seg != 0) {
            return false;
        }
    }
    hint_lost_ = false;
    hint_resume_at_ = -1;
    return true;
}

void CommitLog::note_hint_cut_locked(int64_t at, const uint8_t* rest, size_t left) {
    // A record continues in the next chunk (or bad bytes): its TOTALSIZE and magic, when this
    // chunk holds them, say where the next record starts.
    hint_lost_ = true;
    hint_resume_at_ = -1;
    if (left >= 8) {
        hint_resume_at_ = replicated_next_record(at, rest, config_.mapped_file_size_commit_log);
    } else {
        std::memcpy(hint_carry_.data(), rest, left);
        hint_carry_len_ = left;
        hint_carry_at_ = at;
    }
}

Status CommitLog::append_data(PhysicalOffset start, std::string_view data, bool wake_flush) {
    MutexLock l(put_mu_);
    if (!flags_->is_writeable()) {
        return Status::error(Errc::kFailedPrecondition, "store is not writeable");
    }
    if (ring_ != nullptr) {
        // Puts may have left bytes in the ring (a former master): let the commit thread drain it,
        // then write the replicated bytes straight into the segments.
        if (wait_for_ring_space(reserved_ + static_cast<int64_t>(ring_->capacity()), false) !=
            RingSpace::kFree) {
            return Status::error(Errc::kFailedPrecondition,
                                 "store is not writeable (CommitLog write buffer)");
        }
    }
    if (start.value() != max_offset_.load()) {
        return Status::error(Errc::kInvalidArgument,
                             "append_data at {} but the CommitLog ends at {}", start,
                             max_offset_.load());
    }
    const std::string_view all = data;
    while (ring_ != nullptr && !data.empty()) {
        const int64_t at = max_offset_.load();
        auto r = queue_.get_mapped_file_for_write(at);
        if (!r.is_ok()) {
            return r.status();
        }
        auto file = r.value();
        const int64_t free = file->file_from_offset() + file->file_size() - at;
        const size_t n = std::min<size_t>(data.size(), static_cast<size_t>(free));
        COMET_RETURN_IF_ERROR(write_direct_locked(at, data.substr(0, n)));
        data.remove_prefix(n);
    }
    reserved_ = max_offset_.load();
    while (!data.empty()) {
        auto r = queue_.get_last_mapped_file(max_offset_.load(), true);
        if (!r.is_ok()) {
            return r.status();
        }
        auto file = r.value();
        int64_t free = file->file_size() - file->wrote_position();
        size_t n = std::min<size_t>(data.size(), static_cast<size_t>(free));
        if (!file->append(data.substr(0, n))) {
            return Status::error(Errc::kInternal, "append of {} bytes to {} failed", n,
                                 file->file_name());
        }
        max_offset_.store(file->file_from_offset() + file->wrote_position());
        data.remove_prefix(n);
    }
    reserved_ = max_offset_.load();
    reserved_pub_.store(reserved_);
    hint_replicated_locked(start.value(), all);
    // Replicated bytes wake the flush thread as puts do (run_notify's rule; woken for every
    // chunk, a timed thread flushed a few pages thousands of times a second on a busy slave,
    // which reports what it wrote, not what it flushed), and a SYNC_FLUSH one, which has no
    // waiter for them, at once.
    notify_appended(max_offset_.load(), wake_flush);
    if (wake_flush && config_.flush_disk_type == FlushDiskType::kSyncFlush) {
        flush_->wakeup();
    }
    return Status::ok();
}

Status CommitLog::truncate_to(PhysicalOffset end) {
    MutexLock l(put_mu_);
    if (ring_ != nullptr && wait_for_ring_space(reserved_ + static_cast<int64_t>(ring_->capacity()),
                                                false) != RingSpace::kFree) {
        return Status::error(Errc::kFailedPrecondition,
                             "truncate at {}: the CommitLog write buffer cannot drain", end);
    }
    if (hints_ != nullptr) {
        hints_->invalidate();  // whatever happens below, the cut records are never hinted
    }
    const int64_t max = max_offset_.load();
    if (end.value() > max || end.value() < 0) {
        return Status::error(Errc::kInvalidArgument, "truncate at {} but the CommitLog ends at {}",
                             end, max);
    }
    if (end.value() == max) {
        return Status::ok();
    }
    const int64_t first = queue_.min_offset();
    if (first >= 0 && end.value() < first) {
        return Status::error(Errc::kInvalidArgument,
                             "truncate at {} below the first CommitLog segment {}", end, first);
    }
    COMET_RETURN_IF_ERROR(queue_.truncate_dirty_files(end.value()));
    queue_.set_flushed_where(std::min(queue_.flushed_where(), end.value()));
    max_offset_.store(end.value());
    reserved_ = end.value();
    hint_lost_ = false;  // a truncation cuts at a record boundary
    hint_resume_at_ = -1;
    hint_carry_len_ = 0;
    reserved_pub_.store(reserved_);
    write_file_.reset();
    ring_room_end_ = 0;
    slot_room_end_ = 0;
    spdlog::warn("CommitLog truncated at {} ({} bytes cut)", end, max - end.value());
    return Status::ok();
}
}  // namespace comet::store
