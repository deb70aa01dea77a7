// CommitLog: construction and lifecycle (open, start, shutdown), reads and the
// topicQueueTable. The put path is in commit_log_append.cc, the commit thread in
// commit_log_commit.cc, replicated appends and truncation in commit_log_replica.cc, recovery in
// commit_log_recovery.cc.
// Threads: open() and start() on the owner's thread; shutdown() on the owner's thread, taking
// put_mu_ only to let an append in progress leave, then joining the commit thread. Reads
// (get_data, get_message, lookup_message, for_each_record) on any thread, without a lock: they
// only see published bytes (max_offset(), each segment's wrote_position). The topicQueueTable
// accessors take put_mu_.

#include "store/commit_log.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "base/bytes.h"
#include "base/log_tag.h"
#include "protocol/message_decoder.h"
#include "store/commit_log_internal.h"

namespace comet::store {

namespace pm = comet::protocol;
using commit_log_internal::tls_in_commit;
using commit_log_internal::tls_queue_key;

namespace {

constexpr int64_t kMinWriteBuffer = 64 * 1024;

size_t ring_capacity(const MessageStoreConfig& config) {
    if (config.commit_log_write_buffer_bytes <= 0) {
        return 0;
    }
    return static_cast<size_t>(std::max(config.commit_log_write_buffer_bytes, kMinWriteBuffer));
}

}  // namespace

std::string CommitLog::queue_key(std::string_view topic, int32_t queue_id) {
    return fmt::format("{}-{}", topic, queue_id);
}

Result<std::unique_ptr<CommitLog>> CommitLog::open(const MessageStoreConfig& config, Clock* clock,
                                                   AllocateMappedFileService* allocator,
                                                   StoreCheckpoint* checkpoint,
                                                   RunningFlags* flags) {
    if (config.mapped_file_size_commit_log < 4096 ||
        config.mapped_file_size_commit_log > INT32_MAX) {
        return Status::error(Errc::kInvalidArgument, "mappedFileSizeCommitLog {} out of range",
                             config.mapped_file_size_commit_log);
    }
    if (config.max_message_size <= 0) {
        return Status::error(Errc::kInvalidArgument, "maxMessageSize {} must be positive",
                             config.max_message_size);
    }
    COMET_ASSIGN_OR_RETURN(pm::HostAddress host, pm::parse_host_address(config.store_host));
    std::unique_ptr<CommitLog> log(
        new CommitLog(config, clock, allocator, checkpoint, flags, host));
    log->queue_.set_zero_fill(config.zero_fill_commit_log);
    COMET_RETURN_IF_ERROR(log->queue_.load());
    log->max_offset_.store(log->queue_.max_offset());
    {
        MutexLock l(log->put_mu_);
        log->reserved_ = log->max_offset_.load();
        log->reserved_pub_.store(log->reserved_);
    }
    return log;
}

CommitLog::CommitLog(const MessageStoreConfig& config, Clock* clock,
                     AllocateMappedFileService* allocator, StoreCheckpoint* checkpoint,
                     RunningFlags* flags, pm::HostAddress store_host)
    : config_(config),
      clock_(clock),
      checkpoint_(checkpoint),
      flags_(flags),
      store_host_(store_host),
      queue_(config.commit_log_dir(), config.mapped_file_size_commit_log, allocator),
      prefault_(ring_capacity(config) > 0 ? 0
                                          : std::min(config.commit_log_prefault_ahead_bytes,
                                                     config.mapped_file_size_commit_log)) {
    flush_ = std::make_unique<FlushService>(config_, &queue_, clock_, flags_, checkpoint_);
    if (const size_t cap = ring_capacity(config); cap > 0) {
        // Segments are written with pwritev(), never through the mapping: nothing to fault in.
        ring_ = std::make_unique<WriteRing>(cap);
        hints_ = std::make_unique<DispatchHints>();
        slots_ = std::make_unique<PendingPut[]>(kPendingSlots);
        batch_pos_ = std::make_unique<std::vector<uint32_t>[]>(kPendingSlots);
        commit_stall_ms_for_test_.store(std::max<int64_t>(config.commit_stall_ms_for_test, 0));
    } else {
        // The pre-allocated next segment arrives with its head already faulted in.
        queue_.set_prefault_on_preallocate(
            std::max<int64_t>(config.commit_log_prefault_ahead_bytes, 0));
    }
}

CommitLog::~CommitLog() { shutdown(); }

void CommitLog::set_commit_stall_for_test(std::chrono::milliseconds stall) {
    commit_stall_ms_for_test_.store(stall.count());
    {
        MutexLock l(commit_mu_);
        commit_wake_ = true;
    }
    commit_cv_.notify_all();
}

void CommitLog::start() {
    flush_->start();
    prefault_.start();
    if (ring_ != nullptr && !committer_.joinable()) {
        {
            MutexLock l(commit_mu_);
            commit_stop_ = false;
        }
        committer_running_.store(true);
        committer_ = tagged_thread([this] {
            ::pthread_setname_np(::pthread_self(), "CommitRealTime");
            tls_in_commit = true;
            run_committer();
        });
    }
}

void CommitLog::shutdown() {
    if (flush_ == nullptr) {
        return;
    }
    accepting_.store(false);
    {
        // Wait for an append in progress to leave the critical section.
        MutexLock l(put_mu_);
    }
    if (ring_ != nullptr) {
        {
            MutexLock l(commit_mu_);
            commit_stop_ = true;
        }
        commit_cv_.notify_all();
        if (committer_.joinable()) {
            committer_.join();  // the thread drains the ring before it leaves
        }
        committer_running_.store(false);
        while (commit_once()) {
            // never started (or stopped early): drain here so no queued put is left behind
        }
    }
    flush_->shutdown();
    prefault_.shutdown();
}

void CommitLog::set_append_listener(AppendListener listener) { listener_ = std::move(listener); }

// ---------------------------------------------------------------------------------------------
// Reads

PhysicalOffset CommitLog::min_offset() const {
    auto first = queue_.first_mapped_file();
    return PhysicalOffset(first != nullptr ? first->file_from_offset() : 0);
}

std::optional<MappedView> CommitLog::get_data(PhysicalOffset offset, int64_t max_bytes) const {
    auto file = queue_.find_mapped_file_by_offset(offset.value(), offset.value() == 0);
    if (file == nullptr || offset.value() < file->file_from_offset()) {
        return std::nullopt;
    }
    auto pos = static_cast<int32_t>(offset.value() - file->file_from_offset());
    auto v = file->select(pos);
    if (!v || v->size == 0) {
        return std::nullopt;
    }
    if (max_bytes >= 0 && static_cast<int64_t>(v->size) > max_bytes) {
        v->size = static_cast<size_t>(max_bytes);
    }
    return v;
}

std::optional<MappedView> CommitLog::get_message(PhysicalOffset offset, int32_t size) const {
    auto file = queue_.find_mapped_file_by_offset(offset.value());
    if (file == nullptr) {
        return std::nullopt;
    }
    return file->select(static_cast<int32_t>(offset.value() - file->file_from_offset()), size);
}

Result<pm::MessageExt> CommitLog::lookup_message(PhysicalOffset offset, bool read_body) const {
    auto v = get_data(offset);
    if (!v || v->size < 8) {
        return Status::error(Errc::kNotFound, "no CommitLog record at offset {}", offset);
    }
    return pm::decode_message(v->bytes(), {.read_body = read_body, .check_crc = false});
}

PhysicalOffset CommitLog::roll_next_file(PhysicalOffset offset) const {
    int64_t size = queue_.mapped_file_size();
    return PhysicalOffset(offset.value() + size - offset.value() % size);
}

Status CommitLog::for_each_record(
    PhysicalOffset from, const std::function<bool(PhysicalOffset, std::string_view)>& fn) const {
    int64_t pos = from.value();
    const int64_t end = max_offset_.load();
    while (pos < end) {
        auto v = get_data(PhysicalOffset(pos));
        if (!v) {
            pos = roll_next_file(PhysicalOffset(pos)).value();
            continue;
        }
        if (v->size < 8) {
            return Status::error(Errc::kCorruption, "CommitLog ends mid-record at {}", pos);
        }
        auto total = static_cast<int32_t>(get_be32(v->data));
        auto magic = static_cast<int32_t>(get_be32(v->data + 4));
        if (magic == pm::kBlankMagicCode) {
            pos = roll_next_file(PhysicalOffset(pos)).value();
            continue;
        }
        if ((magic != pm::kMessageMagicCodeV1 && magic != pm::kMessageMagicCodeV2) || total <= 8 ||
            static_cast<size_t>(total) > v->size) {
            return Status::error(Errc::kCorruption, "bad CommitLog record at {} (magic {:#x})", pos,
                                 static_cast<uint32_t>(magic));
        }
        if (!fn(PhysicalOffset(pos), v->bytes().substr(0, static_cast<size_t>(total)))) {
            return Status::ok();
        }
        pos += total;
    }
    return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// topicQueueTable

QueueOffset CommitLog::next_queue_offset(std::string_view topic, int32_t queue_id) const {
    MutexLock l(put_mu_);
    auto it = topic_queue_table_.find(tls_queue_key(topic, queue_id));
    return QueueOffset(it == topic_queue_table_.end() ? 0 : it->second);
}

void CommitLog::set_topic_queue_table(std::unordered_map<std::string, int64_t> table) {
    QueueTable t(table.begin(), table.end());
    MutexLock l(put_mu_);
    topic_queue_table_ = std::move(t);
}

std::unordered_map<std::string, int64_t> CommitLog::topic_queue_table() const {
    MutexLock l(put_mu_);
    return {topic_queue_table_.begin(), topic_queue_table_.end()};
}

void CommitLog::remove_queue_from_topic_queue_table(std::string_view topic, int32_t queue_id) {
    MutexLock l(put_mu_);
    auto it = topic_queue_table_.find(tls_queue_key(topic, queue_id));
    if (it != topic_queue_table_.end()) {
        topic_queue_table_.erase(it);
    }
}

Status CommitLog::rebuild_topic_queue_table() {
    std::unordered_map<std::string, int64_t> table;
    Status st = for_each_record(min_offset(), [&](PhysicalOffset, std::string_view rec) {
        auto m = pm::decode_message(rec, {.read_body = false, .check_crc = false});
        if (!m.is_ok()) {
            return false;
        }
        int32_t tran = pm::sysflag::transaction_value(m.value().sys_flag);
        if (tran == pm::sysflag::kTransactionPreparedType ||
            tran == pm::sysflag::kTransactionRollbackType) {
            return true;
        }
        table[queue_key(m.value().topic, m.value().queue_id)] = m.value().queue_offset + 1;
        return true;
    });
    COMET_RETURN_IF_ERROR(st);
    set_topic_queue_table(std::move(table));
    return Status::ok();
}

void CommitLog::check_invariants() const {
    queue_.check_invariants();
    COMET_CHECK(queue_.flushed_where() <= std::max<int64_t>(max_offset_.load(), 0) ||
                    queue_.file_count() == 0,
                "flushed {} beyond max offset {}", queue_.flushed_where(), max_offset_.load());
}

}  // namespace comet::store
