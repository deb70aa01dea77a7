#include "dledger/commit_log_storage.h"

#include <sys/stat.h>

namespace comet::dledger {

CommitLogStorage::CommitLogStorage(EntryLog& log, store::MessageStore& store)
    : log_(log), store_(store) {
    struct stat cl {};
    struct stat en {};
    same_device_ = ::stat(store.config().commit_log_dir().c_str(), &cl) == 0 &&
                   ::stat(log.dir().c_str(), &en) == 0 && cl.st_dev == en.st_dev;
}

raft::LogIndex CommitLogStorage::first_index() const {
    const int64_t min = store_.commit_log().min_offset().value();
    if (min <= log_.base_offset()) {
        return raft::LogIndex(1);
    }
    return log_.first_starting_at(min);
}

std::optional<raft::Term> CommitLogStorage::term_at(raft::LogIndex index) const {
    if (index.value() == 0) {
        return raft::Term(0);
    }
    if (index.value() < 0 || index > log_.last_index()) {
        return std::nullopt;
    }
    return log_.at(index).term;
}

Status CommitLogStorage::injected() const {
    if (injected_error_.load(std::memory_order_relaxed)) {
        return Status::error(Errc::kIoError, "injected I/O error (test)");
    }
    return Status::ok();
}

Status CommitLogStorage::append(std::span<const raft::Entry> entries) {
    COMET_RETURN_IF_ERROR(injected());
    store::CommitLog& cl = store_.commit_log();
    for (const raft::Entry& e : entries) {
        if (e.index != log_.last_index() + 1) {
            return Status::error(Errc::kInvalidArgument, "append of entry {} after {}", e.index,
                                 log_.last_index());
        }
        EntryRecord r;
        r.start = log_.end_offset();
        r.size = static_cast<int32_t>(e.payload.size());
        r.type = e.type;
        r.term = e.term;
        if (r.size > 0) {
            const int64_t cl_end = cl.max_offset().value();
            if (leader_mode_) {
                if (cl_end < r.end()) {
                    return Status::error(Errc::kFailedPrecondition,
                                         "leader entry [{}, {}) beyond the CommitLog end {}",
                                         r.start, r.end(), cl_end);
                }
            } else {
                // Made durable by the driver's flush thread (sync_data) before the ack.
                COMET_RETURN_IF_ERROR(cl.append_data(store::PhysicalOffset(r.start),
                                                     e.payload.view(), /*wake_flush=*/false));
            }
        }
        COMET_RETURN_IF_ERROR(log_.append(r));
    }
    return Status::ok();
}

Status CommitLogStorage::truncate_suffix(raft::LogIndex from) {
    COMET_RETURN_IF_ERROR(injected());
    if (from > log_.last_index()) {
        return Status::ok();
    }
    const int64_t cut = log_.at(from).start;
    MutexLock l(io_mu_);
    COMET_RETURN_IF_ERROR(log_.truncate_from(from));
    const int64_t cl_end = store_.commit_log().max_offset().value();
    if (cut < cl_end) {
        COMET_RETURN_IF_ERROR(store_.truncate_log(store::PhysicalOffset(cut)));
        truncated_bytes_.fetch_add(cl_end - cut, std::memory_order_relaxed);
    }
    return Status::ok();
}

Status CommitLogStorage::read(raft::LogIndex lo, raft::LogIndex hi, size_t max_bytes,
                              std::vector<raft::Entry>* out) const {
    COMET_RETURN_IF_ERROR(injected());
    size_t bytes = 0;
    for (raft::LogIndex i = lo; i <= hi; i = i + 1) {
        const EntryRecord& r = log_.at(i);
        raft::Entry e;
        e.term = r.term;
        e.index = i;
        e.type = r.type;
        if (r.size > 0) {
            auto view = store_.commit_log().get_message(store::PhysicalOffset(r.start), r.size);
            if (!view.has_value() || view->size != static_cast<size_t>(r.size)) {
                return Status::error(Errc::kNotFound,
                                     "entry {}: CommitLog bytes [{}, {}) are not readable", i,
                                     r.start, r.end());
            }
            e.payload = raft::SharedBytes(view->file, view->data, view->size);
        }
        bytes += static_cast<size_t>(r.size);
        out->push_back(std::move(e));
        if (bytes >= max_bytes) {
            break;
        }
    }
    return Status::ok();
}

Status CommitLogStorage::save_hard_state(const raft::HardState& hs) {
    log_.set_hard_state(hs);
    return Status::ok();
}

Status CommitLogStorage::sync() {
    COMET_RETURN_IF_ERROR(sync_data());
    return log_.sync_hard_state(false);
}

Status CommitLogStorage::sync_data() {
    COMET_RETURN_IF_ERROR(injected());
    MutexLock l(io_mu_);
    if (same_device_) {
        return store_.commit_log().flush_service().flush_all_then([this] { return log_.sync(); });
    }
    if (!store_.commit_log().flush_service().flush_all()) {
        return Status::error(Errc::kIoError, "CommitLog flush failed");
    }
    return log_.sync();
}

}  // namespace comet::dledger
