#include "store/consume_queue.h"

#include <spdlog/spdlog.h>

#include <filesystem>

namespace comet::store {

namespace {

std::string queue_dir(const std::string& root, const std::string& topic, int32_t queue_id) {
    return root + "/" + topic + "/" + std::to_string(queue_id);
}

}  // namespace

ConsumeQueue::ConsumeQueue(std::string topic, int32_t queue_id, const std::string& root_dir,
                           int64_t mapped_file_size, AllocateMappedFileService* allocator)
    : topic_(std::move(topic)),
      queue_id_(queue_id),
      mapped_file_size_(mapped_file_size),
      queue_(queue_dir(root_dir, topic_, queue_id), mapped_file_size, allocator) {
    COMET_CHECK(mapped_file_size > 0 && mapped_file_size % kCqStoreUnitSize == 0,
                "ConsumeQueue {}-{}: segment size {} is not a positive multiple of 20", topic_,
                queue_id_, mapped_file_size);
}

Status ConsumeQueue::load() { return queue_.load(); }

Status ConsumeQueue::recover() {
    auto files = queue_.files();
    if (files.empty()) {
        min_logic_offset_.store(0);
        max_physic_offset_.store(-1);
        return Status::ok();
    }
    size_t index = files.size() > 3 ? files.size() - 3 : 0;
    int64_t process_offset = files[index]->file_from_offset();
    int64_t max_phy_end = -1;
    int64_t last_phy = -1;
    bool stop = false;
    for (; index < files.size() && !stop; ++index) {
        const auto& f = files[index];
        const uint8_t* base = f->data();
        int64_t pos = 0;
        for (; pos + kCqStoreUnitSize <= mapped_file_size_; pos += kCqStoreUnitSize) {
            const CqUnit u = decode_cq_unit(base + pos);
            if (!u.is_valid()) {
                stop = true;
                break;
            }
            if (!u.is_blank_fill()) {
                if (u.phy_offset.value() < last_phy) {
                    spdlog::warn("ConsumeQueue {}-{} recover: unit at byte {} goes back to phy {} "
                                 "after {}; cutting there",
                                 topic_, queue_id_, f->file_from_offset() + pos,
                                 u.phy_offset.value(), last_phy);
                    stop = true;
                    break;
                }
                last_phy = u.phy_offset.value();
                max_phy_end = u.phy_offset.value() + u.size;
            }
        }
        process_offset = f->file_from_offset() + pos;
    }
    COMET_RETURN_IF_ERROR(queue_.truncate_dirty_files(process_offset));
    queue_.set_flushed_where(queue_.max_offset());
    max_physic_offset_.store(max_phy_end, std::memory_order_release);
    const auto first = queue_.first_mapped_file();
    int64_t min = first != nullptr ? first->file_from_offset() : 0;
    // Skip the blank pre-fill of a queue whose first segment began at a non-zero offset.
    if (first != nullptr) {
        for (int64_t pos = 0; pos + kCqStoreUnitSize <= first->wrote_position();
             pos += kCqStoreUnitSize) {
            if (!decode_cq_unit(first->data() + pos).is_blank_fill()) {
                break;
            }
            min = first->file_from_offset() + pos + kCqStoreUnitSize;
        }
    }
    min_logic_offset_.store(min, std::memory_order_release);
    return Status::ok();
}

int64_t ConsumeQueue::first_unit_at_or_beyond(PhysicalOffset phy_offset) const {
    // Binary search over [min, max) units: physical offsets ascend within a queue.
    int64_t lo = min_logic_offset_.load() / kCqStoreUnitSize;
    int64_t hi = max_offset_in_queue().value();
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        const auto u = get_unit(QueueOffset(mid));
        if (u.has_value() && u->phy_offset < phy_offset) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo * kCqStoreUnitSize;
}

Status ConsumeQueue::truncate_dirty_logic_files(PhysicalOffset phy_offset) {
    const int64_t max_bytes = queue_.max_offset();
    const int64_t cut = first_unit_at_or_beyond(phy_offset);
    if (cut < max_bytes) {
        spdlog::info("ConsumeQueue {}-{}: cutting units [{}, {}) that point at or beyond "
                     "CommitLog offset {}",
                     topic_, queue_id_, cut / kCqStoreUnitSize, max_bytes / kCqStoreUnitSize,
                     phy_offset.value());
        COMET_RETURN_IF_ERROR(queue_.truncate_dirty_files(cut));
        if (queue_.flushed_where() > cut) {
            queue_.set_flushed_where(cut);
        }
    }
    // Recompute the end of the last unit.
    const int64_t units = queue_.max_offset() / kCqStoreUnitSize;
    int64_t end = -1;
    if (units > min_logic_offset_.load() / kCqStoreUnitSize) {
        const auto last = get_unit(QueueOffset(units - 1));
        if (last.has_value() && !last->is_blank_fill()) {
            end = last->phy_offset.value() + last->size;
        }
    }
    max_physic_offset_.store(end, std::memory_order_release);
    if (min_logic_offset_.load() > queue_.max_offset()) {
        min_logic_offset_.store(queue_.max_offset());
    }
    return Status::ok();
}

Status ConsumeQueue::put_message_position_info(const CqUnit& unit, QueueOffset cq_offset) {
    COMET_RETURN_IF_ERROR(stage_unit(unit, cq_offset));
    return commit_staged();
}

Status ConsumeQueue::stage_message_position_info(const CqUnit& unit, QueueOffset cq_offset,
                                                 bool* registered) {
    *registered = false;
    COMET_RETURN_IF_ERROR(stage_unit(unit, cq_offset));
    if (!staged_.empty() && !in_pass_) {
        in_pass_ = true;
        *registered = true;
    }
    return Status::ok();
}

Status ConsumeQueue::stage_unit(const CqUnit& unit, QueueOffset cq_offset) {
    const int64_t unit_end = unit.phy_offset.value() + unit.size;
    const int64_t built =
        staged_.empty() ? max_physic_offset_.load(std::memory_order_relaxed) : staged_max_phy_;
    if (unit_end <= built) {
        return Status::ok();  // already built (redispatch after recovery)
    }
    const int64_t expect = cq_offset.value() * kCqStoreUnitSize;
    uint8_t buf[kCqStoreUnitSize];
    encode_cq_unit(unit, buf);
    const std::string_view bytes(reinterpret_cast<const char*>(buf), sizeof(buf));
    if (!staged_.empty()) {
        const int64_t staged_end = staged_from_ + static_cast<int64_t>(staged_.size());
        if (expect == staged_end &&
            expect + kCqStoreUnitSize <= staged_file_->file_from_offset() + mapped_file_size_ &&
            staged_.size() < kMaxStagedBytes) {
            staged_.append(bytes);
            staged_max_phy_ = unit_end;
            return Status::ok();
        }
        // The next segment, a gap or a unit built again: write the run, then check as usual.
        COMET_RETURN_IF_ERROR(commit_staged());
    }
    const bool was_empty = queue_.last_mapped_file() == nullptr;
    COMET_ASSIGN_OR_RETURN(auto file, queue_.get_last_mapped_file(expect, true));
    if (was_empty && expect != 0 && file->wrote_position() == 0) {
        // First segment of a queue that starts late: blank units up to the expected offset.
        min_logic_offset_.store(expect, std::memory_order_release);
        queue_.set_flushed_where(file->file_from_offset());
        uint8_t blank[kCqStoreUnitSize];
        encode_cq_unit(CqUnit{PhysicalOffset(0), INT32_MAX, 0}, blank);
        const std::string_view bv(reinterpret_cast<const char*>(blank), sizeof(blank));
        std::string fill;
        for (int64_t at = file->file_from_offset(); at < expect; at += kCqStoreUnitSize) {
            fill.append(bv);
        }
        COMET_ASSIGN_OR_RETURN(bool fits, file->append_written(fill));
        COMET_CHECK(fits, "blank fill of {}-{} overflowed", topic_, queue_id_);
    }
    const int64_t current = file->file_from_offset() + file->wrote_position();
    if (expect < current) {
        spdlog::warn("ConsumeQueue {}-{}: unit for offset {} built again (current end {}); "
                     "ignored",
                     topic_, queue_id_, cq_offset.value(), current / kCqStoreUnitSize);
        return Status::ok();
    }
    if (expect != current) {
        return Status::error(Errc::kFailedPrecondition,
                             "ConsumeQueue {}-{}: unit for offset {} would leave a gap after {}",
                             topic_, queue_id_, cq_offset.value(), current / kCqStoreUnitSize);
    }
    COMET_CHECK(expect + kCqStoreUnitSize <= file->file_from_offset() + mapped_file_size_,
                "ConsumeQueue {}-{}: unit does not fit in segment", topic_, queue_id_);
    staged_file_ = std::move(file);
    staged_from_ = expect;
    staged_.assign(bytes);
    staged_max_phy_ = unit_end;
    return Status::ok();
}

Status ConsumeQueue::commit_staged() {
    if (staged_.empty()) {
        return Status::ok();
    }
    const auto written = staged_file_->append_written(staged_);
    const int64_t staged_max_phy = staged_max_phy_;
    staged_.clear();
    staged_file_.reset();
    COMET_RETURN_IF_ERROR(written.status());
    COMET_CHECK(written.value(), "ConsumeQueue {}-{}: staged units do not fit in segment",
                topic_, queue_id_);
    max_physic_offset_.store(staged_max_phy, std::memory_order_release);
    return Status::ok();
}

void ConsumeQueue::end_pass() {
    staged_.clear();
    staged_file_.reset();
    in_pass_ = false;
}

std::optional<MappedView> ConsumeQueue::get_index_buffer(QueueOffset start) const {
    const int64_t offset = start.value() * kCqStoreUnitSize;
    if (start.value() < 0 || offset < min_logic_offset_.load(std::memory_order_acquire)) {
        return std::nullopt;
    }
    auto file = queue_.find_mapped_file_by_offset(offset);
    if (file == nullptr) {
        return std::nullopt;
    }
    return file->select(static_cast<int32_t>(offset % mapped_file_size_));
}

std::optional<CqUnit> ConsumeQueue::get_unit(QueueOffset offset) const {
    const int64_t pos = offset.value() * kCqStoreUnitSize;
    if (offset.value() < 0 || pos < min_logic_offset_.load(std::memory_order_acquire)) {
        return std::nullopt;
    }
    auto file = queue_.find_mapped_file_by_offset(pos);
    if (file == nullptr) {
        return std::nullopt;
    }
    auto view = file->select(static_cast<int32_t>(pos % mapped_file_size_), kCqStoreUnitSize);
    if (!view.has_value()) {
        return std::nullopt;
    }
    return decode_cq_unit(view->data);
}

int64_t ConsumeQueue::last_offset() const {
    const auto last = queue_.last_mapped_file();
    if (last == nullptr) {
        return -1;
    }
    const int32_t wrote = last->wrote_position();
    int64_t end = -1;
    for (int32_t pos = std::max(0, wrote - kCqStoreUnitSize); pos + kCqStoreUnitSize <= wrote;
         pos += kCqStoreUnitSize) {
        const CqUnit u = decode_cq_unit(last->data() + pos);
        if (u.phy_offset.value() < 0 || u.size <= 0) {
            break;
        }
        end = u.phy_offset.value() + u.size;
    }
    return end;
}

QueueOffset ConsumeQueue::roll_next_file(QueueOffset offset) const {
    const int64_t units_per_file = mapped_file_size_ / kCqStoreUnitSize;
    return QueueOffset(offset.value() + units_per_file - offset.value() % units_per_file);
}

int ConsumeQueue::delete_expired_file(PhysicalOffset min_phy_offset) {
    const int n = queue_.delete_expired_file_by_offset(min_phy_offset.value(), kCqStoreUnitSize);
    correct_min_offset(min_phy_offset);
    return n;
}

void ConsumeQueue::correct_min_offset(PhysicalOffset min_phy_offset) {
    const auto first = queue_.first_mapped_file();
    if (first == nullptr) {
        return;
    }
    const int64_t current = min_logic_offset_.load();
    const int32_t wrote = first->wrote_position();
    int64_t pos = std::max<int64_t>(0, current - first->file_from_offset());
    pos -= pos % kCqStoreUnitSize;
    for (; pos + kCqStoreUnitSize <= wrote; pos += kCqStoreUnitSize) {
        const CqUnit u = decode_cq_unit(first->data() + pos);
        if (u.is_valid() && !u.is_blank_fill() && u.phy_offset >= min_phy_offset) {
            break;
        }
    }
    const int64_t next = first->file_from_offset() + pos;
    if (next != current) {
        spdlog::info("ConsumeQueue {}-{}: min offset {} -> {} (CommitLog min {})", topic_,
                     queue_id_, current / kCqStoreUnitSize, next / kCqStoreUnitSize,
                     min_phy_offset.value());
        min_logic_offset_.store(next, std::memory_order_release);
    }
}

void ConsumeQueue::destroy() {
    queue_.destroy();
    min_logic_offset_.store(0);
    max_physic_offset_.store(-1);
    std::error_code ec;
    std::filesystem::remove_all(queue_.dir(), ec);
    if (ec) {
        spdlog::warn("ConsumeQueue {}-{}: removing {} failed: {}", topic_, queue_id_, queue_.dir(),
                     ec.message());
    }
}

}  // namespace comet::store
