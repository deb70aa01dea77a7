#include "store/flush.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "base/log_tag.h"
#include "store/mapped_file_queue.h"
#include "store/store_checkpoint.h"

namespace comet::store {

namespace {
constexpr auto kReaperPeriod = std::chrono::milliseconds(5);
constexpr auto kSyncIdleWait = std::chrono::milliseconds(10);
constexpr int kMaxFlushRounds = 1 << 20;  // bound on segments flushed in one flush_to call
constexpr int64_t kCheckpointFlushIntervalMs = 1000;
}  // namespace

FlushService::FlushService(const MessageStoreConfig& config, MappedFileQueue* queue,
                           Clock* clock, RunningFlags* flags, StoreCheckpoint* checkpoint)
    : config_(config), queue_(queue), clock_(clock), flags_(flags), checkpoint_(checkpoint) {}

FlushService::~FlushService() { shutdown(); }

void FlushService::start() {
    MutexLock l(mu_);
    if (thread_.joinable()) {
        return;
    }
    stopping_ = false;
    if (config_.flush_disk_type == FlushDiskType::kSyncFlush) {
        thread_ = tagged_thread([this] {
            pthread_setname_np(pthread_self(), "FlushCommitLog");
            run_sync();
        });
        reaper_ = tagged_thread([this] {
            pthread_setname_np(pthread_self(), "FlushTimeoutRpr");
            run_reaper();
        });
    } else {
        thread_ = tagged_thread([this] {
            pthread_setname_np(pthread_self(), "FlushCommitLog");
            run_async();
        });
    }
}

void FlushService::shutdown() {
    {
        MutexLock l(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    reaper_cv_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
    if (reaper_.joinable()) {
        reaper_.join();
    }
    // Final flush; then no waiter may remain.
    bool ok = flush_all();
    complete_covered(queue_->flushed_where(), !ok);
    std::list<Waiter> rest;
    {
        MutexLock l(mu_);
        rest.swap(waiters_);
    }
    for (auto& w : rest) {
        w.done(PutMessageStatus::kFlushDiskTimeout, "store shut down before the flush");
    }
    if (checkpoint_ != nullptr) {
        Status st = checkpoint_->flush();
        if (!st.is_ok()) {
            spdlog::error("checkpoint flush at shutdown failed: {}", st.to_string());
        }
    }
}

void FlushService::wait_for_flush(PhysicalOffset end_offset, FlushCompletion done) {
    if (queue_->flushed_where() >= end_offset.value()) {
        done(PutMessageStatus::kPutOk, "");
        return;
    }
    std::string failure;
    bool failed = false;
    {
        MutexLock l(mu_);
        if (failed_) {
            failed = true;
            failure = failure_;
        } else {
            auto timeout = std::chrono::milliseconds(config_.sync_flush_timeout_ms);
            waiters_.push_back(Waiter{end_offset.value(), clock_->now() + timeout,
                                      std::move(done)});
        }
    }
    if (failed) {
        done(PutMessageStatus::kFlushDiskTimeout, failure);
        return;
    }
    cv_.notify_one();
}

void FlushService::wakeup() {
    {
        MutexLock l(mu_);
        wakeup_ = true;
    }
    wakeups_.fetch_add(1, std::memory_order_relaxed);
    cv_.notify_one();
}

void FlushService::wakeup_for(int64_t written_end) {
    const int64_t least = config_.flush_commit_log_least_pages;
    const int64_t segment = queue_->mapped_file_size();
    if (least > 0 && segment > 0) {
        const int64_t flushed = queue_->flushed_where();
        // MappedFile::is_able_to_flush's rule, in absolute offsets (segments start on a page).
        const bool segment_filled =
            written_end > flushed && (written_end - 1) / segment != flushed / segment;
        if (!segment_filled && written_end / kOsPageSize - flushed / kOsPageSize < least) {
            return;
        }
    }
    wakeup();
}

void FlushService::mark_failed(const Status& st) {
    flags_->set(RunningFlags::kNotWritable);
    std::list<Waiter> all;
    std::string remark = "flush failed, store is read-only: " + st.message();
    {
        MutexLock l(mu_);
        if (!failed_) {
            spdlog::error("CommitLog flush failed; store becomes read-only until restart: {}",
                          st.to_string());
        }
        failed_ = true;
        failure_ = remark;
        all.swap(waiters_);
    }
    for (auto& w : all) {
        w.done(PutMessageStatus::kFlushDiskTimeout, remark);
    }
}

bool FlushService::flush_to(int64_t target, int32_t least_pages) {
    MutexLock fl(flush_mu_);
    return flush_to_locked(target, least_pages);
}

bool FlushService::flush_to_locked(int64_t target, int32_t least_pages) {
    auto last = queue_->last_mapped_file();
    int64_t ts = last != nullptr ? last->store_timestamp() : 0;  // read before the max offset
    int64_t max_at_start = queue_->max_offset();
    for (int i = 0; i < kMaxFlushRounds && queue_->flushed_where() < target; ++i) {
        const int64_t before = queue_->flushed_where();
        const auto started = std::chrono::steady_clock::now();
        auto r = queue_->flush(least_pages);
        if (!r.is_ok()) {
            mark_failed(r.status());
            return false;
        }
        if (!r.value()) {
            break;
        }
        count_flush(started, queue_->flushed_where() - before);
    }
    note_checkpoint(ts, max_at_start);
    return true;
}

void FlushService::count_flush(std::chrono::steady_clock::time_point started, int64_t bytes) {
    if (const FlushObserver* o = observer_.load(std::memory_order_acquire); o != nullptr) {
        o->on_flush(std::chrono::steady_clock::now() - started, bytes);
    }
    MutexLock l(mu_);
    ++fsyncs_;
}

void FlushService::note_checkpoint(int64_t store_timestamp, int64_t max_at_start) {
    if (checkpoint_ != nullptr && store_timestamp > 0 &&
        queue_->flushed_where() >= max_at_start) {
        checkpoint_->set_physic_msg_timestamp(store_timestamp);
    }
}

bool FlushService::flush_all() {
    {
        MutexLock l(mu_);
        if (failed_) {
            return false;
        }
    }
    return flush_to(queue_->max_offset(), 0);
}

Status FlushService::flush_all_then(const std::function<Status()>& device_flush) {
    {
        MutexLock l(mu_);
        if (failed_) {
            return Status::error(Errc::kIoError, "the CommitLog flush failed earlier: {}",
                                 failure_);
        }
    }
    MutexLock fl(flush_mu_);
    auto last = queue_->last_mapped_file();
    const int64_t ts = last != nullptr ? last->store_timestamp() : 0;  // before the max offset
    const int64_t max_at_start = queue_->max_offset();
    const int64_t before = queue_->flushed_where();
    const auto started = std::chrono::steady_clock::now();
    auto wrote = queue_->write_back();
    if (!wrote.is_ok()) {
        mark_failed(wrote.status());
        return wrote.status();
    }
    if (!wrote.value().has_value()) {
        if (!flush_to_locked(max_at_start, 0)) {
            return Status::error(Errc::kIoError, "CommitLog flush failed");
        }
        return device_flush();
    }
    COMET_RETURN_IF_ERROR(device_flush());
    const int64_t where = *wrote.value();
    queue_->mark_flushed(where);
    if (where > before) {
        count_flush(started, where - before);
    }
    note_checkpoint(ts, max_at_start);
    return Status::ok();
}

void FlushService::complete_covered(int64_t flushed, bool failed) {
    std::vector<Waiter> ready;
    {
        MutexLock l(mu_);
        for (auto it = waiters_.begin(); it != waiters_.end();) {
            if (it->end_offset <= flushed) {
                ready.push_back(std::move(*it));
                it = waiters_.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (auto& w : ready) {
        w.done(PutMessageStatus::kPutOk, "");
    }
    if (failed) {
        spdlog::warn("flush failed; {} covered waiter(s) completed, others wait for timeout",
                     ready.size());
    }
}

int FlushService::expire_timeouts() {
    std::vector<Waiter> expired;
    TimePoint now = clock_->now();
    {
        MutexLock l(mu_);
        for (auto it = waiters_.begin(); it != waiters_.end();) {
            if (it->deadline <= now) {
                expired.push_back(std::move(*it));
                it = waiters_.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (auto& w : expired) {
        spdlog::warn("sync flush of CommitLog up to offset {} timed out after {} ms",
                     w.end_offset, config_.sync_flush_timeout_ms);
        w.done(PutMessageStatus::kFlushDiskTimeout, "sync flush timed out");
    }
    return static_cast<int>(expired.size());
}

int FlushService::group_commit_once() {
    int64_t target = -1;
    size_t before = 0;
    {
        MutexLock l(mu_);
        for (const auto& w : waiters_) {
            target = std::max(target, w.end_offset);
        }
        before = waiters_.size();
    }
    if (target < 0) {
        return 0;
    }
    if (!flush_to(target, 0)) {
        return static_cast<int>(before);  // mark_failed completed them all
    }
    complete_covered(queue_->flushed_where(), false);
    MutexLock l(mu_);
    return static_cast<int>(before - std::min(before, waiters_.size()));
}

void FlushService::run_sync() {
    int64_t last_checkpoint_ms = clock_->wall_millis();
    for (;;) {
        {
            MutexLock l(mu_);
            if (!stopping_ && waiters_.empty()) {
                cv_.wait_for(mu_, kSyncIdleWait);  // Mutex is the BasicLockable released
            }
            if (stopping_) {
                return;
            }
        }
        group_commit_once();
        int64_t now_ms = clock_->wall_millis();
        if (checkpoint_ != nullptr && now_ms - last_checkpoint_ms >= kCheckpointFlushIntervalMs) {
            last_checkpoint_ms = now_ms;
            Status st = checkpoint_->flush();
            if (!st.is_ok()) {
                spdlog::error("checkpoint flush failed: {}", st.to_string());
            }
        }
    }
}

void FlushService::run_async() {
    int64_t last_thorough_ms = clock_->wall_millis();
    auto interval = std::chrono::milliseconds(std::max(1, config_.flush_interval_commit_log_ms));
    for (;;) {
        {
            MutexLock l(mu_);
            // Timed mode sleeps the interval (an early wake only flushes early); otherwise a
            // wakeup() cuts the wait short.
            if (!stopping_ && (config_.flush_commit_log_timed || !wakeup_)) {
                cv_.wait_for(mu_, interval);
            }
            wakeup_ = false;
            if (stopping_) {
                return;
            }
            if (failed_) {
                continue;
            }
        }
        int32_t least = config_.flush_commit_log_least_pages;
        int64_t now_ms = clock_->wall_millis();
        bool thorough = now_ms - last_thorough_ms >= config_.flush_commit_log_thorough_interval_ms;
        if (thorough) {
            last_thorough_ms = now_ms;
            least = 0;
        }
        flush_to(queue_->max_offset(), least);
        if (thorough && checkpoint_ != nullptr) {
            Status st = checkpoint_->flush();
            if (!st.is_ok()) {
                spdlog::error("checkpoint flush failed: {}", st.to_string());
            }
        }
    }
}

void FlushService::run_reaper() {
    for (;;) {
        {
            MutexLock l(mu_);
            if (!stopping_) {
                reaper_cv_.wait_for(mu_, kReaperPeriod);
            }
            if (stopping_) {
                return;
            }
        }
        expire_timeouts();
    }
}

int64_t FlushService::fsync_count() const {
    MutexLock l(mu_);
    return fsyncs_;
}

size_t FlushService::pending_waiters() const {
    MutexLock l(mu_);
    return waiters_.size();
}

}  // namespace comet::store
