#include "raft/memory_log_storage.h"

#include <algorithm>

namespace comet::raft {

std::optional<Term> MemoryLogStorage::term_at(LogIndex index) const {
    if (index.value() == 0) {
        return Term(0);
    }
    if (index.value() < 0 || index > last_index()) {
        return std::nullopt;
    }
    return entries_[static_cast<size_t>(index.value() - 1)].term;
}

Status MemoryLogStorage::append(std::span<const Entry> entries) {
    LogIndex expect = last_index() + 1;
    for (const Entry& e : entries) {
        if (e.index != expect) {
            return Status::error(Errc::kInvalidArgument, "append: entry index {} but expected {}",
                                 e.index, expect);
        }
        expect += 1;
    }
    changed_from_ = std::min(changed_from_, entries_.size());
    entries_.insert(entries_.end(), entries.begin(), entries.end());
    return Status::ok();
}

Status MemoryLogStorage::truncate_suffix(LogIndex from) {
    if (from.value() < 1) {
        return Status::error(Errc::kInvalidArgument, "truncate_suffix: from={} < 1", from);
    }
    const auto keep = static_cast<size_t>(from.value() - 1);
    if (keep >= entries_.size()) {
        return Status::ok();
    }
    entries_.resize(keep);
    // Truncation is ordered before later appends: a synced prefix never extends past it.
    durable_len_ = std::min(durable_len_, keep);
    changed_from_ = std::min(changed_from_, keep);
    return Status::ok();
}

Status MemoryLogStorage::read(LogIndex lo, LogIndex hi, size_t max_bytes,
                              std::vector<Entry>* out) const {
    if (lo.value() < 1 || hi > last_index()) {
        return Status::error(Errc::kInvalidArgument, "read [{}, {}] outside [1, {}]", lo, hi,
                             last_index());
    }
    size_t bytes = 0;
    for (LogIndex i = lo; i <= hi; i += 1) {
        const Entry& e = entries_[static_cast<size_t>(i.value() - 1)];
        if (i != lo && bytes + e.payload.size() > max_bytes) {
            break;
        }
        bytes += e.payload.size();
        out->push_back(e);
    }
    return Status::ok();
}

Status MemoryLogStorage::save_hard_state(const HardState& hs) {
    hard_state_ = hs;
    return Status::ok();
}

Status MemoryLogStorage::sync() {
    durable_len_ = entries_.size();
    durable_hard_state_ = hard_state_;
    return Status::ok();
}

void MemoryLogStorage::crash(size_t keep_unsynced, bool keep_unsynced_hard_state) {
    const size_t keep = durable_len_ + std::min(keep_unsynced, entries_.size() - durable_len_);
    const size_t synced = durable_len_;
    if (keep < entries_.size()) {
        entries_.resize(keep);
        changed_from_ = std::min(changed_from_, keep);
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
        changed_from_ = std::min(changed_from_, keep);
    }
    durable_len_ = entries_.size();
    hard_state_ = durable_hard_state_;
    if (!entries_.empty() && entries_.back().term > hard_state_.term) {
        hard_state_.term = entries_.back().term;
        hard_state_.voted_for = kNoNode;
    }
    if (hard_state_.commit.value() > static_cast<int64_t>(entries_.size())) {
        hard_state_.commit = LogIndex(static_cast<int64_t>(entries_.size()));
    }
    durable_hard_state_ = hard_state_;
}

const Entry& MemoryLogStorage::entry(LogIndex index) const {
    COMET_CHECK(index.value() >= 1 && index <= last_index(), "entry({}) outside [1, {}]", index,
                last_index());
    return entries_[static_cast<size_t>(index.value() - 1)];
}

LogIndex MemoryLogStorage::take_changed_from() {
    const size_t from = std::min(changed_from_, entries_.size());
    changed_from_ = SIZE_MAX;
    return LogIndex(static_cast<int64_t>(from) + 1);
}

}  // namespace comet::raft
