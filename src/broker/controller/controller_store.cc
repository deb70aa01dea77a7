#include "broker/controller/controller_store.h"

#include <thread>

#include "base/logging.h"

namespace comet::broker {

ControllerStore::ControllerStore(store::MessageStore& store, std::string epoch_file_path,
                                 bool all_ack)
    : store_(store), all_ack_(all_ack), epoch_file_(std::move(epoch_file_path)) {
    slave_confirm_.store(store_.checkpoint_confirm_offset());
}

Status ControllerStore::load() {
    MutexLock l(mu_);
    COMET_RETURN_IF_ERROR(epoch_file_.load());
    const int64_t max = max_offset();
    if (!epoch_file_.entries().empty() || max == 0) {
        return Status::ok();
    }
    // A store from before controller mode (master-slave mode wrote it): its bytes are epoch 0,
    // an epoch no controller ever assigns, and confirmed (consumers may have read them). A
    // master then labels them epoch 0 to its slaves; a slave keeps the part its master has too.
    COMET_RETURN_IF_ERROR(epoch_file_.append(kPreControllerEpoch, 0));
    COMET_RETURN_IF_ERROR(epoch_file_.save());
    slave_confirm_.store(max);
    store_.set_checkpoint_confirm_offset(max);
    spdlog::info(
        "controller mode: {} bytes from before controller mode (no epoch file {}): "
        "epoch {} from offset 0, confirmed",
        max, epoch_file_.path(), kPreControllerEpoch);
    return Status::ok();
}

Result<bool> ControllerStore::before_controller_mode(const std::string& epoch_file_path) {
    store::EpochFile f(epoch_file_path);
    COMET_RETURN_IF_ERROR(f.load());
    return f.entries().empty();
}

std::vector<store::EpochEntry> ControllerStore::epochs() const {
    MutexLock l(mu_);
    return epoch_file_.entries();
}

int64_t ControllerStore::last_epoch() const {
    MutexLock l(mu_);
    return epoch_file_.last_epoch();
}

int64_t ControllerStore::current_epoch_start() const {
    MutexLock l(mu_);
    return epoch_file_.entries().empty() ? 0 : epoch_file_.entries().back().start_offset;
}

int64_t ControllerStore::confirm_offset() const {
    const int64_t max = max_offset();
    if (!master_.load()) {
        return std::min(slave_confirm_.load(), max);
    }
    std::set<int64_t> set;
    {
        MutexLock l(mu_);
        if (!all_ack_ || sync_state_set_.size() <= 1) {
            return max;
        }
        set = sync_state_set_;
    }
    return broker::confirm_offset(max, set, my_id_.load(), progress(), all_ack_);
}

Status ControllerStore::truncate_to(int64_t end) {
    const int64_t max = max_offset();
    if (end < max) {
        spdlog::warn("controller mode: cutting the CommitLog from {} to the consistent point {} "
                     "({} bytes the master does not have)",
                     max, end, max - end);
        COMET_RETURN_IF_ERROR(store_.truncate_log(store::PhysicalOffset(end)));
        truncated_bytes_.fetch_add(max - end, std::memory_order_relaxed);
    }
    MutexLock l(mu_);
    epoch_file_.truncate_from(end);
    return epoch_file_.save();
}

Status ControllerStore::begin_epoch(int64_t epoch, int64_t start_offset) {
    MutexLock l(mu_);
    if (!epoch_file_.entries().empty() && epoch <= epoch_file_.last_epoch()) {
        return Status::ok();  // epoch 0 (kPreControllerEpoch) is a real first entry
    }
    COMET_RETURN_IF_ERROR(epoch_file_.append(epoch, start_offset));
    return epoch_file_.save();
}

void ControllerStore::set_confirm_offset(int64_t offset) {
    const int64_t capped = std::min(offset, max_offset());
    if (capped > slave_confirm_.load()) {
        slave_confirm_.store(capped);
        store_.set_checkpoint_confirm_offset(capped);
        store_.note_dispatchable();
    }
}

Status ControllerStore::become_master_store(int32_t epoch, int64_t my_id, Duration dispatch_wait) {
    // Bytes past the last whole record: a torn frame from replication. Everything below the
    // dispatched offset is whole records already.
    const int64_t from = store_.dispatched_offset().value();
    const int64_t max = max_offset();
    int64_t valid_end = from;
    Status scan = store_.commit_log().for_each_record(
        store::PhysicalOffset(from), [&](store::PhysicalOffset at, std::string_view rec) {
            valid_end = at.value() + static_cast<int64_t>(rec.size());
            return true;
        });
    if (scan.is_ok()) {
        valid_end = max;
    }
    if (valid_end < max) {
        spdlog::warn("controller mode: to master at epoch {}: cutting {} bytes of an incomplete "
                     "record at {} ({})",
                     epoch, max - valid_end, valid_end, scan.message());
        COMET_RETURN_IF_ERROR(store_.truncate_log(store::PhysicalOffset(valid_end)));
    }
    {
        MutexLock l(mu_);
        if (epoch_file_.last_epoch() > epoch) {
            return Status::error(Errc::kFailedPrecondition,
                                 "epoch file {} already holds epoch {} above the new master "
                                 "epoch {}: refusing to lead with an older epoch",
                                 epoch_file_.path(), epoch_file_.last_epoch(), epoch);
        }
        epoch_file_.truncate_from(valid_end);
        if (epoch_file_.last_epoch() < epoch) {
            COMET_RETURN_IF_ERROR(epoch_file_.append(epoch, valid_end));
        }
        COMET_RETURN_IF_ERROR(epoch_file_.save());
        sync_state_set_ = {my_id};
        sync_state_set_size_.store(1, std::memory_order_release);
        remembered_acks_.clear();
    }
    my_id_.store(my_id);
    master_.store(true);
    store_.set_checkpoint_confirm_offset(valid_end);
    store_.wake_dispatch();
    // Consumers of the new master must see everything it holds before producers add to it.
    const TimePoint deadline = std::chrono::steady_clock::now() + dispatch_wait;
    while (store_.dispatched_offset().value() < valid_end) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return Status::error(Errc::kTimeout,
                                 "dispatch reached {} of {} within {} ms after the role change",
                                 store_.dispatched_offset().value(), valid_end,
                                 std::chrono::duration_cast<std::chrono::milliseconds>(
                                     dispatch_wait)
                                     .count());
        }
        store_.wake_dispatch();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    store_.reload_queue_offsets();
    return Status::ok();
}

void ControllerStore::become_slave_store(int64_t my_id) {
    my_id_.store(my_id);
    slave_confirm_.store(std::min(slave_confirm_.load(), store_.dispatched_offset().value()));
    master_.store(false);
    MutexLock l(mu_);
    sync_state_set_.clear();
    sync_state_set_size_.store(0, std::memory_order_release);
    remembered_acks_.clear();
}

void ControllerStore::set_sync_state_set(std::set<int64_t> set) {
    {
        MutexLock l(mu_);
        sync_state_set_ = std::move(set);
        sync_state_set_size_.store(sync_state_set_.size(), std::memory_order_release);
    }
    store_.wake_dispatch();  // a smaller set can raise the confirm offset
}

std::set<int64_t> ControllerStore::sync_state_set() const {
    MutexLock l(mu_);
    return sync_state_set_;
}

bool ControllerStore::in_sync_state_set(int64_t broker_id) const {
    MutexLock l(mu_);
    return sync_state_set_.count(broker_id) != 0;
}

void ControllerStore::set_progress_source(ProgressFn fn) {
    MutexLock l(mu_);
    progress_fn_ = std::move(fn);
}

std::vector<ReplicaProgress> ControllerStore::progress() const {
    ProgressFn fn;
    {
        MutexLock l(mu_);
        fn = progress_fn_;
    }
    std::vector<ReplicaProgress> out = fn ? fn() : std::vector<ReplicaProgress>{};
    MutexLock l(mu_);
    for (const ReplicaProgress& p : out) {
        int64_t& r = remembered_acks_[p.broker_id];
        r = std::max(r, p.ack_offset);
    }
    for (int64_t id : sync_state_set_) {
        if (id == my_id_.load()) {
            continue;
        }
        bool seen = false;
        for (const ReplicaProgress& p : out) {
            seen = seen || p.broker_id == id;
        }
        if (!seen) {
            auto it = remembered_acks_.find(id);
            ReplicaProgress gone;
            gone.broker_id = id;
            gone.ack_offset = it != remembered_acks_.end() ? it->second : 0;
            gone.connected = false;
            out.push_back(gone);
        }
    }
    return out;
}

}  // namespace comet::broker
