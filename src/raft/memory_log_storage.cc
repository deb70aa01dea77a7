#include "raft/memory_log_storage.h"

#include <algorithm>

namespace comet::raft {

std::optional<Term> MemoryLogStorage::term_at(LogIndex index) const {
    if (index.value() == 0) {
        return Term(0);
    }
    if (index == snap_.index) {
        return snap_.term;
    }
    // Below a drop_prefix() the terms stay known, as DLedger's entries file keeps them.
    if (index <= snap_.index || index > last_index()) {
        return std::nullopt;
    }
    return entries_[pos(index)].term;
}

Status MemoryLogStorage::append(std::span<const Entry> entries) {
    COMET_RETURN_IF_ERROR(write_error_);
    LogIndex expect = last_index() + 1;
    for (const Entry& e : entries) {
        if (e.index != expect) {
            return Status::error(Errc::kInvalidArgument, "append: entry index {} but expected {}",
                                 e.index, expect);
        }
        expect += 1;
    }
    changed_from_ = std::min(changed_from_, (last_index() + 1).value());
    entries_.insert(entries_.end(), entries.begin(), entries.end());
    return Status::ok();
}

Status MemoryLogStorage::truncate_suffix(LogIndex from) {
    COMET_RETURN_IF_ERROR(write_error_);
    if (from < first_index()) {
        return Status::error(Errc::kInvalidArgument, "truncate_suffix: from={} < first index {}",
                             from, first_index());
    }
    if (from > last_index()) {
        return Status::ok();
    }
    const size_t keep = pos(from);
    entries_.resize(keep);
    // Truncation is ordered before later appends: a synced prefix never extends past it.
    durable_len_ = std::min(durable_len_, keep);
    changed_from_ = std::min(changed_from_, from.value());
    return Status::ok();
}

Status MemoryLogStorage::read(LogIndex lo, LogIndex hi, size_t max_bytes,
                              std::vector<Entry>* out) const {
    COMET_RETURN_IF_ERROR(read_error_);
    if (lo < first_index() || hi > last_index()) {
        return Status::error(Errc::kInvalidArgument, "read [{}, {}] outside [{}, {}]", lo, hi,
                             first_index(), last_index());
    }
    if (lo < retained_from_) {
        return Status::error(Errc::kNotFound, "read [{}, {}]: entries before {} were deleted", lo,
                             hi, retained_from_);
    }
    size_t bytes = 0;
    for (LogIndex i = lo; i <= hi; i += 1) {
        const Entry& e = entries_[pos(i)];
        if (i != lo && bytes + e.payload.size() > max_bytes) {
            break;
        }
        bytes += e.payload.size();
        out->push_back(e);
    }
    return Status::ok();
}

Status MemoryLogStorage::save_hard_state(const HardState& hs) {
    COMET_RETURN_IF_ERROR(write_error_);
    hard_state_ = hs;
    return Status::ok();
}

Status MemoryLogStorage::sync() {
    durable_len_ = entries_.size();
    durable_hard_state_ = hard_state_;
    return Status::ok();
}

Status MemoryLogStorage::save_snapshot(const Snapshot& s) {
    COMET_RETURN_IF_ERROR(write_error_);
    if (s.index <= snap_.index) {
        return Status::error(Errc::kInvalidArgument, "save_snapshot: index {} <= snapshot {}",
                             s.index, snap_.index);
    }
    const std::optional<Term> t = term_at(s.index);
    if (t.has_value() && *t == s.term) {
        const size_t drop = pos(s.index) + 1;
        entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(drop));
        durable_len_ -= std::min(durable_len_, drop);
    } else {
        entries_.clear();
        durable_len_ = 0;
        changed_from_ = std::min(changed_from_, s.index.value());
    }
    snap_ = s;
    // Durable on return, and everything written before it (the contract's sync()).
    durable_len_ = entries_.size();
    durable_hard_state_ = hard_state_;
    return Status::ok();
}

void MemoryLogStorage::crash(size_t keep_unsynced, bool keep_unsynced_hard_state) {
    const size_t keep = durable_len_ + std::min(keep_unsynced, entries_.size() - durable_len_);
    const size_t synced = durable_len_;
    if (keep < entries_.size()) {
        entries_.resize(keep);
        changed_from_ = std::min(changed_from_, last_index().value() + 1);
    }
    durable_len_ = entries_.size();  // what survived is on disk now
    // Writes land in order: a surviving unsynced entry implies the hard state saved before it
    // (its term) survived too.
    if (!keep_unsynced_hard_state && keep == synced) {
        hard_state_ = durable_hard_state_;
    }
    durable_hard_state_ = hard_state_;
}

void MemoryLogStorage::crash_split(size_t keep_data, size_t keep_records) {
    const size_t unsynced = entries_.size() - durable_len_;
    const size_t keep = durable_len_ + std::min({keep_data, keep_records, unsynced});
    if (keep < entries_.size()) {
        entries_.resize(keep);
        changed_from_ = std::min(changed_from_, last_index().value() + 1);
    }
    durable_len_ = entries_.size();
    hard_state_ = durable_hard_state_;
    const Term last_term = entries_.empty() ? snap_.term : entries_.back().term;
    if (last_term > hard_state_.term) {
        hard_state_.term = last_term;
        hard_state_.voted_for = kNoNode;
    }
    if (hard_state_.commit > last_index()) {
        hard_state_.commit = last_index();
    }
    durable_hard_state_ = hard_state_;
}

const Entry& MemoryLogStorage::entry(LogIndex index) const {
    COMET_CHECK(index >= first_index() && index <= last_index(), "entry({}) outside [{}, {}]",
                index, first_index(), last_index());
    return entries_[pos(index)];
}

LogIndex MemoryLogStorage::take_changed_from() {
    const int64_t from = std::min(changed_from_, last_index().value() + 1);
    changed_from_ = INT64_MAX;
    return LogIndex(from);
}

}  // namespace comet::raft
