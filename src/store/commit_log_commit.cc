// CommitLog commit side (write buffer only): writes the ring's reserved bytes into the
// segments (about 1 MiB per pwritev), publishes them (max_offset(), wrote_position) and
// completes the queued puts in offset order; put batches (begin_put_batch/end_put_batch); the
// append notifications (append listener, async flush wake-up).
// Threads: the commit thread ("CommitRealTime"); a putting thread that finds the log idle
// (try_commit_inline) or closes its put batch (end_put_batch); a put waiting for ring space
// (help_commit: write only, no completions); shutdown() draining. One round at a time under
// commit_round_mu_, never with put_mu_ held while completions run; commit_mu_ only around the
// commit thread's sleep and wake-up. Nothing here takes put_mu_.

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "store/commit_log.h"
#include "store/commit_log_internal.h"

namespace comet::store {

using commit_log_internal::failed;
using commit_log_internal::tls_batch_log;
using commit_log_internal::tls_batch_open;
using commit_log_internal::tls_in_commit;

namespace {

// A put commits inline when the last commit round ended at least this long ago.
constexpr int64_t kInlineCommitGapNs = 50'000;

int64_t steady_nanos() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// From begin_put_batch() to after_put_batch_written(): the log whose append notifications
// (listener, flush wake-up) wait for the batch's replies to be written, and what they owe.
thread_local bool tls_defer_notify = false;
thread_local CommitLog* tls_notify_log = nullptr;
thread_local int64_t tls_notify_end = 0;
thread_local bool tls_notify_flush = false;

}  // namespace

bool CommitLog::help_commit() NO_THREAD_SAFETY_ANALYSIS {
    // A full ring means the commit thread is behind (on a busy machine, often just not
    // scheduled): a waiting put writes the next chunk itself instead of sleeping. Only the
    // write phase: completions (user callbacks) stay on the commit thread, never under put_mu_.
    if (commit_stalled_for_test() || !commit_round_mu_.try_lock()) {
        return false;
    }
    const int64_t before = max_offset_.load();
    const int64_t reached = write_ring_locked();
    commit_round_mu_.unlock();
    if (reached == before) {
        return false;
    }
    {
        MutexLock l(commit_mu_);
        commit_wake_ = true;
    }
    commit_cv_.notify_one();
    return true;
}

bool CommitLog::try_commit_inline() NO_THREAD_SAFETY_ANALYSIS {
    // A put arriving at an idle log (the last round ended a while ago) writes and completes
    // itself: no hand-over to the sleeping commit thread, so a lone put is as fast as through
    // the mapping. Under load rounds follow each other closely and puts hand over instead,
    // which is what batches many puts into one pwritev.
    const int64_t now = steady_nanos();
    if (now - last_round_ns_.load(std::memory_order_relaxed) < kInlineCommitGapNs ||
        commit_stalled_for_test() || !commit_round_mu_.try_lock()) {
        return false;
    }
    tls_in_commit = true;
    (void)commit_round_locked();
    tls_in_commit = false;
    commit_round_mu_.unlock();
    return true;
}

void CommitLog::begin_put_batch(bool defer_notify) {
    COMET_CHECK(!tls_batch_open, "put batches do not nest");
    tls_batch_open = true;
    tls_defer_notify = defer_notify;
}

void CommitLog::after_put_batch_written() {
    tls_defer_notify = false;
    if (CommitLog* log = std::exchange(tls_notify_log, nullptr)) {
        const int64_t end = std::exchange(tls_notify_end, 0);
        log->run_notify(end, std::exchange(tls_notify_flush, false));
    }
}

void CommitLog::notify_appended(int64_t end, bool advanced) {
    if (!tls_defer_notify) {
        run_notify(end, advanced);
        return;
    }
    if (tls_notify_log != nullptr && tls_notify_log != this) {
        // Another log's batch notification (one log per batch is the rule, not a promise):
        // it goes out now rather than be overwritten.
        tls_notify_log->run_notify(tls_notify_end, std::exchange(tls_notify_flush, false));
        tls_notify_end = 0;
    }
    tls_notify_log = this;
    tls_notify_end = std::max(tls_notify_end, end);
    tls_notify_flush = tls_notify_flush || advanced;
}

void CommitLog::run_notify(int64_t end, bool advanced) {
    if (listener_) {
        listener_(PhysicalOffset(end));
    }
    // Only an untimed ASYNC_FLUSH thread is woken by appends: a timed one flushes on its
    // interval (a wake-up would make it flush a few pages at once), and SYNC_FLUSH puts wake
    // it through their waiters.
    if (advanced && config_.flush_disk_type == FlushDiskType::kAsyncFlush &&
        !config_.flush_commit_log_timed) {
        flush_->wakeup_for(end);
    }
}

void CommitLog::end_put_batch() {
    tls_batch_open = false;
    if (CommitLog* log = std::exchange(tls_batch_log, nullptr)) {
        log->commit_deferred();
    }
}

void CommitLog::commit_deferred() {
    if (commit_stalled_for_test()) {
        wake_committer();
        return;
    }
    // Waits for a round held elsewhere (the commit thread, another batch, a ring-space helper):
    // rounds are short (one pwritev into the page cache and their completions), and waiting is
    // cheaper than a hand-over to the commit thread. When this returns, every put of the batch
    // has completed (here or by the round that held the lock), unless the ring needs more
    // than eight rounds (a quarter each), which a socket read never fills.
    MutexLock rl(commit_round_mu_);
    tls_in_commit = true;
    for (int round = 0; round < 8; ++round) {
        if (!commit_round_locked() || reserved_pub_.load() <= max_offset_.load()) {
            tls_in_commit = false;
            return;
        }
    }
    tls_in_commit = false;
    wake_committer();
}

void CommitLog::wake_committer() {
    if (committer_idle_.load()) {  // seq_cst: pairs with reserved_pub_
        {
            MutexLock l(commit_mu_);
            commit_wake_ = true;
        }
        commit_cv_.notify_one();
    }
}

void CommitLog::run_committer() {
    // No spinning: under load the ring refills while a chunk is written (rounds follow each
    // other without sleeping, ~1 MiB per pwritev); at a low rate each put wakes this thread,
    // which costs the put a futex wake but no CPU while idle.
    for (;;) {
        sleep_out_commit_stall_for_test();
        if (commit_once()) {
            continue;
        }
        MutexLock l(commit_mu_);
        if (commit_stop_) {
            if (reserved_pub_.load() <= max_offset_.load() || commit_failed_.load()) {
                break;
            }
            continue;
        }
        committer_idle_.store(true);  // seq_cst, then re-check what puts published
        while (!commit_wake_ && !commit_stop_ && reserved_pub_.load() <= max_offset_.load()) {
            commit_cv_.wait_for(commit_mu_, std::chrono::milliseconds(100));
        }
        commit_wake_ = false;
        committer_idle_.store(false);
    }
    committer_running_.store(false);
    // Puts waiting for ring space must not wait for a thread that is gone.
    MutexLock l(commit_mu_);
    space_cv_.notify_all();
}

void CommitLog::sleep_out_commit_stall_for_test() {
    const int64_t stall_ms = commit_stall_ms_for_test_.load(std::memory_order_relaxed);
    if (stall_ms <= 0 || reserved_pub_.load() <= max_offset_.load()) {
        return;
    }
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(stall_ms);
    MutexLock l(commit_mu_);
    while (!commit_stop_ && commit_stalled_for_test() && std::chrono::steady_clock::now() < until) {
        commit_cv_.wait_until(commit_mu_, until);
    }
}

int64_t CommitLog::write_ring_locked() {
    const int64_t start = max_offset_.load();
    // At most a quarter of the ring per round: puts keep filling the rest meanwhile, and the
    // puts of this round complete (and free their slots) without waiting for a full ring.
    const int64_t target =
        std::min(reserved_pub_.load(), start + static_cast<int64_t>(ring_->capacity() / 4));
    int64_t reached = start;
    if (target > reached && !commit_failed_.load()) {
        Status st;
        while (reached < target) {
            auto file = queue_.find_mapped_file_by_offset(reached);
            if (file == nullptr) {
                st =
                    Status::error(Errc::kInternal, "no CommitLog segment holds offset {}", reached);
                break;
            }
            const int64_t seg_end = file->file_from_offset() + file->file_size();
            const int64_t end = std::min(target, seg_end);
            auto [first, second] = ring_->view(reached, static_cast<size_t>(end - reached));
            st = file->write_at_end(first, second);
            if (!st.is_ok()) {
                break;
            }
            reached = end;
            max_offset_.store(reached);
        }
        if (!st.is_ok()) {
            commit_failure_ = "CommitLog write failed, store is read-only: " + st.message();
            commit_failed_.store(true);
            flags_->set(RunningFlags::kNotWritable);
            spdlog::error("CommitLog commit at {} failed; store is read-only until restart: {}",
                          reached, st.to_string());
        }
    }
    return reached;
}

bool CommitLog::commit_once() {
    MutexLock rl(commit_round_mu_);
    return commit_round_locked();
}

bool CommitLog::commit_round_locked() {
    const int64_t start = max_offset_.load();
    const int64_t reached = write_ring_locked();
    const bool failed_state = commit_failed_.load();
    // Every put whose end <= target took its slot before target was published.
    const int64_t covered = failed_state ? INT64_MAX : reached;
    const uint64_t head = slot_head_.load(std::memory_order_acquire);
    uint64_t tail = slot_tail_.load(std::memory_order_relaxed);
    uint64_t last = tail;
    while (last < head && slots_[last % kPendingSlots].end() <= covered) {
        ++last;
    }
    const bool advanced = reached > start;
    if (advanced) {
        commit_rounds_.fetch_add(1, std::memory_order_relaxed);
    }
    if (!advanced && last == tail) {
        return false;
    }
    notify_appended(reached, advanced);
    for (; tail < last; ++tail) {
        PendingPut& p = slots_[tail % kPendingSlots];
        PutCompletion done = std::move(p.done);
        p.done = nullptr;
        if (p.end() > reached) {
            done(failed(PutMessageStatus::kUnknownError, commit_failure_));
            continue;
        }
        PutMessageResult r =
            appended(p.wrote_offset, p.wrote_bytes, p.store_timestamp, p.logics_offset);
        if (!p.batch) {
            fill_msg_ids(&r, 1, [](size_t) { return int64_t{0}; });
        } else {
            const std::vector<uint32_t>& pos = batch_pos_[tail % kPendingSlots];
            fill_msg_ids(&r, pos.size(), [&](size_t i) { return static_cast<int64_t>(pos[i]); });
        }
        finish_put(r, p.wait_store_msg_ok, done);
    }
    slot_tail_.store(tail, std::memory_order_release);
    if (ring_wait_since_ns_.load(std::memory_order_relaxed) != 0) {
        ring_wait_since_ns_.store(0);  // space was freed: the busy state (if any) ends
    }
    if (space_wanted_.exchange(false)) {
        MutexLock l(commit_mu_);
        space_cv_.notify_all();
    }
    last_round_ns_.store(steady_nanos(), std::memory_order_relaxed);
    return true;
}

}  // namespace comet::store
