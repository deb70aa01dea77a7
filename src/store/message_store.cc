#include "store/message_store.h"

#include <fcntl.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "base/bytes.h"
#include "base/log_tag.h"
#include "protocol/message_decoder.h"
#include "protocol/message_id.h"
#include "store/mapped_file_allocator.h"
#include "store/store_checkpoint.h"

namespace comet::store {

namespace fs = std::filesystem;

namespace {

constexpr int32_t kMaxFilterBytes = 16000;  // Java: 800 units scanned per get at least

std::string root_dir_of(const MessageStoreConfig& c) {
    return c.store_path_root_dir.empty() ? default_store_path_root_dir() : c.store_path_root_dir;
}

std::string human_bytes(uint64_t b) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(b);
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        ++u;
    }
    return fmt::format("{:.2f} {}", v, units[u]);
}

PutMessageResult status_result(PutMessageStatus s, std::string remark) {
    PutMessageResult r;
    r.status = s;
    r.remark = std::move(remark);
    return r;
}

}  // namespace

// The CommitLog as the dispatcher reads it, bounded by the dispatch limit.
class MessageStore::Reader final : public CommitLogReader {
public:
    explicit Reader(MessageStore& store) : store_(store) {}
    PhysicalOffset dispatchable_max_offset() const override {
        const PhysicalOffset max = store_.commit_log_->max_offset();
        std::shared_ptr<const std::function<PhysicalOffset()>> limit;
        {
            MutexLock l(store_.dispatch_limit_mu_);
            limit = store_.dispatch_limit_;
        }
        if (!limit || !*limit) {
            return max;
        }
        return std::min(max, (*limit)());
    }
    std::optional<MappedView> read_from(PhysicalOffset offset) const override {
        return store_.commit_log_->get_data(offset);
    }
    PhysicalOffset roll_next_file(PhysicalOffset offset) const override {
        return store_.commit_log_->roll_next_file(offset);
    }
    PhysicalOffset min_offset() const override { return store_.commit_log_->min_offset(); }
    DispatchHints* hints() const override { return store_.commit_log_->dispatch_hints(); }

private:
    MessageStore& store_;
};

MessageStore::MessageStore(const MessageStoreConfig& config, Clock& clock,
                           MessageStoreOptions options)
    : config_(config),
      clock_(clock),
      options_(options),
      probe_(options.disk_probe != nullptr ? *options.disk_probe
                                           : StatvfsDiskUsageProbe::instance()),
      stats_(clock) {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGESIZE);
    total_physical_memory_ = pages > 0 && page_size > 0 ? int64_t{pages} * page_size : 0;
    if (options.physical_memory_bytes > 0) {
        total_physical_memory_ = options.physical_memory_bytes;
    }
}

Result<std::unique_ptr<MessageStore>> MessageStore::open(const MessageStoreConfig& config,
                                                         Clock& clock,
                                                         MessageStoreOptions options) {
    if (config.mapped_file_size_consume_queue <= 0 ||
        config.mapped_file_size_consume_queue % kCqStoreUnitSize != 0) {
        return Status::error(Errc::kInvalidArgument,
                             "mappedFileSizeConsumeQueue {} is not a positive multiple of 20",
                             config.mapped_file_size_consume_queue);
    }
    if (config.max_hash_slot_num <= 0 || config.max_index_num <= 1) {
        return Status::error(Errc::kInvalidArgument, "bad index geometry: slots {} entries {}",
                             config.max_hash_slot_num, config.max_index_num);
    }
    std::unique_ptr<MessageStore> store(new MessageStore(config, clock, options));
    COMET_RETURN_IF_ERROR(store->load_and_recover());
    return store;
}

MessageStore::~MessageStore() {
    // A store whose open() failed half-way has nothing running and must not touch `abort`.
    if (opened_ && !shutdown_.load()) {
        shutdown();
    }
}

Status MessageStore::load_and_recover() {
    COMET_ASSIGN_OR_RETURN(const int64_t index_rebuild_from, load_components());
    COMET_RETURN_IF_ERROR(recover_components());
    COMET_RETURN_IF_ERROR(redispatch_after_recovery(index_rebuild_from));
    create_clean_service();
    if (!options_.only_limit_raises_wake_dispatch) {
        commit_log_->set_append_listener([this](PhysicalOffset) { note_dispatchable(); });
    }
    COMET_RETURN_IF_ERROR(create_abort_file());
    opened_ = true;
    return Status::ok();
}

Result<int64_t> MessageStore::load_components() {
    const std::string root = root_dir_of(config_);
    std::error_code ec;
    fs::create_directories(root, ec);
    if (ec) {
        return Status::error(Errc::kIoError, "create store root {}: {}", root, ec.message());
    }
    last_exit_ok_ = !fs::exists(config_.abort_file_path());
    spdlog::info("message store {}: last shutdown was {}", root,
                 last_exit_ok_ ? "clean" : "ABNORMAL (abort file present)");

    COMET_ASSIGN_OR_RETURN(checkpoint_, StoreCheckpoint::open(config_.checkpoint_path()));
    allocator_ = std::make_unique<AllocateMappedFileService>(config_.warm_mapped_file_enable);
    COMET_ASSIGN_OR_RETURN(commit_log_, CommitLog::open(config_, &clock_, allocator_.get(),
                                                        checkpoint_.get(), &flags_));
    cqs_ = std::make_unique<ConsumeQueueStore>(config_.consume_queue_dir(),
                                               config_.mapped_file_size_consume_queue);
    COMET_RETURN_IF_ERROR(cqs_->load());
    index_ = std::make_unique<IndexService>(root + "/index", config_.max_hash_slot_num,
                                            config_.max_index_num, clock_);
    return index_->load(last_exit_ok_, checkpoint_->index_msg_timestamp());
}

Status MessageStore::recover_components() {
    COMET_RETURN_IF_ERROR(cqs_->recover());
    auto recovered =
        last_exit_ok_ ? commit_log_->recover_normally() : commit_log_->recover_abnormally();
    if (!recovered.is_ok()) {
        return recovered.status();
    }
    recovery_ = std::move(recovered).value();
    if (options_.recovery_keep_end) {
        COMET_RETURN_IF_ERROR(cut_to_kept_end());
    }
    COMET_RETURN_IF_ERROR(cqs_->truncate_dirty(recovery_.max_offset));
    if (options_.dispatch_limit) {
        // ConsumeQueue units past the limit (written before the limit existed) are cut too.
        const PhysicalOffset limit = std::min(recovery_.max_offset, options_.dispatch_limit());
        COMET_RETURN_IF_ERROR(cqs_->truncate_dirty(limit));
        set_dispatch_limit(options_.dispatch_limit);
    }
    return Status::ok();
}

Status MessageStore::cut_to_kept_end() {
    COMET_ASSIGN_OR_RETURN(const PhysicalOffset keep,
                           options_.recovery_keep_end(recovery_.max_offset));
    if (keep > recovery_.max_offset) {
        return Status::error(Errc::kCorruption,
                             "recovery: the log must keep {} bytes but the CommitLog ends at {}",
                             keep, recovery_.max_offset);
    }
    if (keep < recovery_.max_offset) {
        spdlog::warn("recovery: cutting the CommitLog from {} to {} (not in the replicated log)",
                     recovery_.max_offset, keep);
        COMET_RETURN_IF_ERROR(commit_log_->truncate_to(keep));
        recovery_.bytes_truncated += recovery_.max_offset.value() - keep.value();
        recovery_.max_offset = keep;
    }
    return Status::ok();
}

Status MessageStore::redispatch_after_recovery(int64_t index_rebuild_from) {
    const int64_t cl_min = commit_log_->min_offset().value();
    const int64_t cl_max = commit_log_->max_offset().value();
    int64_t from = std::max(cqs_->max_physic_offset().value(), cl_min);
    if (!last_exit_ok_) {
        from = std::min(from, recovery_.scan_from.value());
    }
    from = std::min(from, index_rebuild_from);
    from = std::clamp(from, cl_min, std::max(cl_min, cl_max));

    create_reput_service();
    reput_->set_reput_from_offset(PhysicalOffset(from));
    auto dispatched = reput_->do_reput();
    if (!dispatched.is_ok()) {
        return Status::error(dispatched.status().code(), "redispatch after recovery from {}: {}",
                             from, dispatched.status().message());
    }
    spdlog::info(
        "message store recovered: CommitLog [{}, {}), redispatched {} record(s) from {}, "
        "{} ConsumeQueue(s)",
        cl_min, cl_max, *dispatched, from, cqs_->queues().size());

    reload_queue_offsets();
    cqs_->correct_min_offsets(PhysicalOffset(cl_min));
    return Status::ok();
}

void MessageStore::create_reput_service() {
    reader_ = std::make_unique<Reader>(*this);
    reput_ = std::make_unique<ReputMessageService>(
        *reader_, [this](const DispatchRequest& req) { return dispatch(req); },
        parse_message_delay_level(config_.message_delay_level),
        [this] { return end_dispatch_pass(); });
    reput_->set_read_keys(config_.message_index_enable);
    reput_->set_idle_wait(options_.dispatch_idle_wait);
    reput_->set_busy_interval(options_.dispatch_busy_interval);
}

void MessageStore::create_clean_service() {
    CleanService::Hooks hooks;
    hooks.delete_commit_log_files = [this](int64_t expired_ms, bool clean_immediately,
                                           int max_files) {
        // A full disk outranks the floor: a lagging replica is then left behind.
        const int64_t keep_from = options_.retention_floor && !clean_immediately
                                      ? options_.retention_floor().value()
                                      : INT64_MAX;
        return commit_log_->mapped_file_queue().delete_expired_file_by_time(
            expired_ms, clock_.wall_millis(), clean_immediately, max_files, keep_from);
    };
    hooks.commit_log_min_offset = [this] { return commit_log_->min_offset(); };
    clean_ = std::make_unique<CleanService>(config_, clock_, flags_, probe_, std::move(hooks),
                                            *cqs_, *index_);
}

Status MessageStore::create_abort_file() {
    const std::string path = config_.abort_file_path();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        return Status::error(Errc::kIoError, "create abort file {}: {}", path,
                             std::strerror(errno));
    }
    ::fsync(fd);
    ::close(fd);
    const int dfd = ::open(root_dir_of(config_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    return Status::ok();
}

void MessageStore::start() {
    if (running_.exchange(true)) {
        return;
    }
    allocator_->start();
    commit_log_->start();
    reput_->start();
    if (options_.start_scheduler) {
        {
            MutexLock l(sched_mu_);
            sched_stop_ = false;
        }
        scheduler_ = tagged_thread([this] { scheduler_loop(); });
    }
    spdlog::info("message store started: dispatch from {}, CommitLog max {}",
                 reput_->reput_from_offset().value(), commit_log_->max_offset().value());
}

void MessageStore::shutdown() {
    if (shutdown_.exchange(true)) {
        return;
    }
    {
        MutexLock l(sched_mu_);
        sched_stop_ = true;
    }
    sched_cv_.notify_all();
    if (scheduler_.joinable()) {
        scheduler_.join();
    }
    commit_log_->shutdown();
    reput_->shutdown();
    // Dispatch whatever is left (the thread may not have been started).
    for (int i = 0; i < 100 && reput_->behind() > 0; ++i) {
        auto r = reput_->do_reput();
        if (!r.is_ok() || *r == 0) {
            break;
        }
    }
    waiters_.cancel_all();
    const Status st = flush_consume_queues(0);
    allocator_->shutdown();
    const uint32_t bad = RunningFlags::kNotWritable | RunningFlags::kWriteLogicsQueueError |
                         RunningFlags::kWriteIndexFileError;
    const int64_t behind = reput_->behind();
    if (st.is_ok() && (flags_.flag_bits() & bad) == 0 && behind == 0) {
        std::error_code ec;
        fs::remove(config_.abort_file_path(), ec);
        spdlog::info("message store shut down cleanly (CommitLog max {})",
                     commit_log_->max_offset().value());
    } else {
        spdlog::warn(
            "message store shut down with flags {:#x}, dispatch behind {} bytes, flush "
            "{}: abort file kept, next start recovers abnormally",
            flags_.flag_bits(), behind, st.to_string());
    }
    running_.store(false);
}

void MessageStore::halt_for_test() {
    if (shutdown_.exchange(true)) {
        return;
    }
    {
        MutexLock l(sched_mu_);
        sched_stop_ = true;
    }
    sched_cv_.notify_all();
    if (scheduler_.joinable()) {
        scheduler_.join();
    }
    reput_->shutdown();
    commit_log_->shutdown();
    allocator_->shutdown();
    waiters_.cancel_all();
    running_.store(false);
}

void MessageStore::scheduler_loop() {
    ::pthread_setname_np(::pthread_self(), "StoreScheduler");
    TimePoint last_sample = clock_.now();
    TimePoint last_flush = last_sample;
    TimePoint last_full_flush = last_sample;
    TimePoint last_clean = last_sample;
    while (true) {
        {
            MutexLock l(sched_mu_);
            if (sched_stop_) {
                break;
            }
            sched_cv_.wait_for(sched_mu_, std::chrono::milliseconds(100));
            if (sched_stop_) {
                break;
            }
        }
        const TimePoint now = clock_.now();
        waiters_.expire(now);
        if (now - last_sample >= std::chrono::seconds(1)) {
            stats_.sample(reput_->behind());
            last_sample = now;
        }
        if (now - last_full_flush >= std::chrono::seconds(10)) {
            (void)flush_consume_queues(0);
            last_full_flush = last_flush = now;
        } else if (now - last_flush >=
                   std::chrono::milliseconds(config_.flush_interval_consume_queue_ms)) {
            (void)flush_consume_queues(config_.flush_consume_queue_least_pages);
            last_flush = now;
        }
        if (now - last_clean >= std::chrono::milliseconds(config_.clean_resource_interval_ms)) {
            clean_->run_once();
            last_clean = now;
        }
    }
}

Status MessageStore::flush_consume_queues(int32_t least_pages) {
    const int64_t ts = last_dispatched_store_ts_.load();
    auto r = cqs_->flush(least_pages);
    if (!r.is_ok()) {
        flags_.set(RunningFlags::kWriteLogicsQueueError);
        spdlog::error("ConsumeQueue flush failed: {}; store marked not writable",
                      r.status().to_string());
        return r.status();
    }
    // The index is flushed only with the checkpoint that records how far it is durable: its
    // recovery trusts no file past that checkpoint (IndexService::load rebuilds such a file
    // from the CommitLog), so a flush between checkpoints bought nothing, and msync-ing its
    // randomly written hash slots every second cost a write-protect fault and a TLB shootdown
    // per slot page (~4 % of the broker's CPU at full send rate, issue 16).
    const Status ist = least_pages == 0 ? index_->flush() : Status::ok();
    if (!ist.is_ok()) {
        flags_.set(RunningFlags::kWriteIndexFileError);
        spdlog::error("index flush failed: {}; store marked not writable", ist.to_string());
        return ist;
    }
    if (least_pages == 0 && ts > 0) {
        checkpoint_->set_logics_msg_timestamp(ts);
        checkpoint_->set_index_msg_timestamp(ts);
        return checkpoint_->flush();
    }
    return Status::ok();
}

Status MessageStore::dispatch(const DispatchRequest& req) {
    ConsumeQueue* cq = nullptr;
    const Status st = cqs_->stage_message_position_info(req, &cq);
    if (!st.is_ok()) {
        if (st.code() == Errc::kInvalidArgument) {
            // A record whose topic cannot be a queue directory: skip it, never stall dispatch.
            spdlog::error("dispatch: skipping record at {}: {}", req.commit_log_offset.value(),
                          st.to_string());
            return Status::ok();
        }
        flags_.set(RunningFlags::kWriteLogicsQueueError);
        return st;
    }
    if (config_.message_index_enable) {
        const Status ist =
            index_->build_index({req.topic, req.keys, req.uniq_key, req.commit_log_offset,
                                 req.store_timestamp, req.sys_flag});
        if (!ist.is_ok()) {
            if ((flags_.flag_bits() & RunningFlags::kWriteIndexFileError) == 0) {
                spdlog::error("index: building keys of {} failed: {}; mark index error",
                              req.commit_log_offset.value(), ist.to_string());
            }
            flags_.set(RunningFlags::kWriteIndexFileError);
        }
    }
    pass_store_ts_ = req.store_timestamp;
    if (cq != nullptr) {
        // Told once the unit is written (end_dispatch_pass).
        pass_arrivals_.push_back(
            {cq, req.consume_queue_offset + 1, req.tags_code, req.store_timestamp});
    }
    return Status::ok();
}

Status MessageStore::end_dispatch_pass() {
    const Status st = cqs_->commit_staged();
    if (!st.is_ok()) {
        // The runs not written are dropped and the pass's records dispatched again.
        cqs_->end_pass();
        pass_arrivals_.clear();
        flags_.set(RunningFlags::kWriteLogicsQueueError);
        return st;
    }
    if (pass_store_ts_ != 0) {
        // Only units already written count for the checkpoint's logics timestamp.
        last_dispatched_store_ts_.store(pass_store_ts_, std::memory_order_relaxed);
    }
    MessageArrivingListener* const l = listener_.load(std::memory_order_acquire);
    for (const PassArrival& a : pass_arrivals_) {
        if (l != nullptr) {
            l->arriving(a.cq->topic(), a.cq->queue_id(), a.next, a.tags_code, a.store_timestamp);
        }
        waiters_.arriving(a.cq->topic(), a.cq->queue_id(), a.next, a.tags_code, a.store_timestamp);
    }
    pass_arrivals_.clear();
    cqs_->end_pass();
    return Status::ok();
}

Result<int64_t> MessageStore::dispatch_now() { return reput_->do_reput(); }

void MessageStore::note_dispatchable() {
    const std::atomic<int64_t>* held = dispatch_waiters_.load(std::memory_order_acquire);
    if ((held != nullptr && held->load(std::memory_order_relaxed) > 0) || waiters_.any()) {
        reput_->wakeup();
    } else {
        reput_->note_appended();
    }
}

int64_t MessageStore::checkpoint_confirm_offset() const {
    return checkpoint_ ? checkpoint_->confirm_phy_offset() : 0;
}

void MessageStore::set_checkpoint_confirm_offset(int64_t offset) {
    if (checkpoint_) {
        checkpoint_->set_confirm_phy_offset(offset);
    }
}

void MessageStore::set_dispatch_limit(std::function<PhysicalOffset()> limit) {
    auto shared = std::make_shared<const std::function<PhysicalOffset()>>(std::move(limit));
    {
        MutexLock l(dispatch_limit_mu_);
        dispatch_limit_ = std::move(shared);
    }
    if (reput_ != nullptr) {
        reput_->wakeup();  // the new limit may be higher
    }
}

Status MessageStore::truncate_log(PhysicalOffset end) {
    const PhysicalOffset dispatched = reput_->reput_from_offset();
    if (end < dispatched) {
        return Status::error(Errc::kFailedPrecondition,
                             "truncate at {}: records up to {} are already dispatched", end,
                             dispatched);
    }
    const int64_t from = commit_log_->max_offset().value();
    const TimePoint began = clock_.now();
    spdlog::info("truncating the CommitLog from {} to {} ({} bytes) and the queues above it", from,
                 end.value(), from - end.value());
    COMET_RETURN_IF_ERROR(commit_log_->truncate_to(end));
    COMET_RETURN_IF_ERROR(cqs_->truncate_dirty(end));
    spdlog::info(
        "truncated the CommitLog to {} in {} ms", end.value(),
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_.now() - began).count());
    return Status::ok();
}

void MessageStore::reload_queue_offsets() {
    std::unordered_map<std::string, int64_t> table;
    for (const auto& [topic, queues] : cqs_->max_offsets()) {
        for (const auto& [qid, max] : queues) {
            table[CommitLog::queue_key(topic, qid)] = max;
        }
    }
    commit_log_->set_topic_queue_table(std::move(table));
}

void MessageStore::set_message_arriving_listener(MessageArrivingListener* listener) {
    listener_.store(listener, std::memory_order_release);
}

std::optional<PutMessageResult> MessageStore::check_store_status() const {
    if (shutdown_.load()) {
        return status_result(PutMessageStatus::kServiceNotAvailable, "message store has shut down");
    }
    if (config_.slave_role) {
        return status_result(PutMessageStatus::kServiceNotAvailable,
                             "message store is in slave mode, so putMessage is forbidden");
    }
    const uint32_t bits = flags_.flag_bits();
    if (!flags_.is_writeable()) {
        if (refused_puts_.fetch_add(1, std::memory_order_relaxed) % 10000 == 0) {
            spdlog::warn(
                "message store {} is not writeable (flags {:#x}{}), so putMessage is "
                "forbidden",
                config_.store_path_root_dir, bits,
                (bits & RunningFlags::kDiskFull) != 0 ? ": disk full" : "");
        }
        return status_result(
            PutMessageStatus::kServiceNotAvailable,
            (bits & RunningFlags::kDiskFull) != 0
                ? fmt::format("disk full: {:.1f}% of the CommitLog disk is used; the store "
                              "refuses new messages until retention frees space",
                              clean_->last_commit_log_disk_ratio() * 100)
                : fmt::format("message store is not writeable (flags {:#x})", bits));
    }
    return std::nullopt;
}

CommitLog::PutCompletion MessageStore::wrap_completion(PutCompletion done, TimePoint begin) {
    auto wrapped = [this, done = std::move(done), begin](PutMessageResult&& r) {
        if (is_stored(r.status)) {
            const int64_t elapsed_ms =
                std::chrono::duration_cast<std::chrono::milliseconds>(clock_.now() - begin).count();
            const int32_t n = std::max(1, r.append.msg_num);
            for (int32_t i = 0; i < n; ++i) {
                stats_.on_put(r.append.wrote_bytes / n);
            }
            stats_.on_put_latency(elapsed_ms);  // once per put call, as Java
        } else {
            stats_.on_put_failed();
        }
        done(std::move(r));
    };
    static_assert(CommitLog::PutCompletion::fits_inline<decltype(wrapped)>(),
                  "a put's completion with its statistics must fit inline (no allocation)");
    return wrapped;
}

void MessageStore::put_message(const protocol::MessageExt& msg, PutCompletion done) {
    put_message(msg, msg.body, std::move(done));
}

void MessageStore::put_message(const protocol::MessageExt& msg, std::string_view body,
                               PutCompletion done) {
    if (auto refused = check_store_status()) {
        stats_.on_put_failed();
        done(std::move(*refused));
        return;
    }
    commit_log_->put_message(msg, body, wrap_completion(std::move(done), clock_.now()));
}

void MessageStore::put_messages(MessageBatch batch, PutCompletion done) {
    if (auto refused = check_store_status()) {
        stats_.on_put_failed();
        done(std::move(*refused));
        return;
    }
    commit_log_->put_messages(std::move(batch), wrap_completion(std::move(done), clock_.now()));
}

std::future<PutMessageResult> MessageStore::put_message(const protocol::MessageExt& msg) {
    auto p = std::make_shared<std::promise<PutMessageResult>>();
    auto f = p->get_future();
    put_message(msg, [p](const PutMessageResult& r) { p->set_value(r); });
    return f;
}

std::future<PutMessageResult> MessageStore::put_messages(MessageBatch batch) {
    auto p = std::make_shared<std::promise<PutMessageResult>>();
    auto f = p->get_future();
    put_messages(std::move(batch), [p](const PutMessageResult& r) { p->set_value(r); });
    return f;
}

QueueOffset MessageStore::next_offset_correction(QueueOffset old_offset,
                                                 QueueOffset new_offset) const {
    if (!config_.slave_role || config_.offset_check_in_slave) {
        return new_offset;
    }
    return old_offset;
}

bool MessageStore::is_in_memory(int64_t phy_offset) const {
    return !is_in_disk(phy_offset, commit_log_->max_offset().value());
}

bool MessageStore::is_in_disk(int64_t phy_offset, int64_t max_phy) const {
    const auto memory = static_cast<int64_t>(static_cast<double>(total_physical_memory_) *
                                             config_.access_message_in_memory_max_ratio / 100.0);
    return max_phy - phy_offset > memory;
}

GetMessageResult MessageStore::get_message(std::string_view group, std::string_view topic,
                                           int32_t queue_id, QueueOffset offset,
                                           int32_t max_msg_nums, int64_t max_total_bytes,
                                           const MessageFilter* filter) {
    (void)group;  // kept for the Java signature (per-group stats, filters)
    // getMessageEntireTimeMax: one clock read per get call, as Java's getMessage.
    const TimePoint begin = clock_.now();
    GetMessageResult r;
    const GetRequest req{offset,
                         max_msg_nums,
                         max_total_bytes,
                         filter,
                         /*schedule_topic=*/topic == kScheduleTopic,
                         /*max_phy=*/commit_log_->max_offset().value()};
    auto cq = cqs_->find(topic, queue_id);
    if (cq == nullptr) {
        r.status = GetMessageStatus::kNoMatchedLogicQueue;
        r.next_begin_offset = next_offset_correction(offset, QueueOffset(0));
    } else if (auto units = queue_units_at(*cq, topic, queue_id, offset, r); units.has_value()) {
        read_queue_units(*units, req, r);
    }
    stats_.on_get(r.status == GetMessageStatus::kFound, r.message_count());
    stats_.on_get_latency(
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_.now() - begin).count());
    return r;
}

std::optional<MappedView> MessageStore::queue_units_at(const ConsumeQueue& cq,
                                                       std::string_view topic, int32_t queue_id,
                                                       QueueOffset offset,
                                                       GetMessageResult& r) const {
    r.min_offset = cq.min_offset_in_queue();
    r.max_offset = cq.max_offset_in_queue();
    if (r.max_offset.value() == 0) {
        r.status = GetMessageStatus::kNoMessageInQueue;
        r.next_begin_offset = next_offset_correction(offset, QueueOffset(0));
    } else if (offset < r.min_offset) {
        r.status = GetMessageStatus::kOffsetTooSmall;
        r.next_begin_offset = next_offset_correction(offset, r.min_offset);
    } else if (offset == r.max_offset) {
        r.status = GetMessageStatus::kOffsetOverflowOne;
        r.next_begin_offset = next_offset_correction(offset, offset);
    } else if (offset > r.max_offset) {
        r.status = GetMessageStatus::kOffsetOverflowBadly;
        // 4.9.8 DefaultMessageStore#getMessage: corrected to maxOffset (older releases went
        // back to minOffset when it was 0).
        r.next_begin_offset = next_offset_correction(offset, r.max_offset);
    } else if (auto units = cq.get_index_buffer(offset); !units.has_value()) {
        r.status = GetMessageStatus::kOffsetFoundNull;
        r.next_begin_offset = next_offset_correction(offset, cq.roll_next_file(offset));
        spdlog::warn("get: ConsumeQueue segment missing for {}-{} offset {} (min {} max {})", topic,
                     queue_id, offset.value(), r.min_offset.value(), r.max_offset.value());
    } else {
        return units;
    }
    return std::nullopt;
}

void MessageStore::read_queue_units(const MappedView& units, const GetRequest& req,
                                    GetMessageResult& r) const {
    r.status = GetMessageStatus::kNoMatchedMessage;
    int64_t next_phy_file_start = INT64_MIN;
    int64_t max_phy_pulling = 0;
    const size_t max_filter = static_cast<size_t>(
        std::max<int64_t>(kMaxFilterBytes, int64_t{req.max_msg_nums} * kCqStoreUnitSize));
    size_t i = 0;
    for (; i + kCqStoreUnitSize <= units.size && i < max_filter; i += kCqStoreUnitSize) {
        const CqUnit u = decode_cq_unit(units.data + i);
        max_phy_pulling = u.phy_offset.value();
        if (next_phy_file_start != INT64_MIN && u.phy_offset.value() < next_phy_file_start) {
            continue;
        }
        if (batch_full(r, u.size, is_in_disk(u.phy_offset.value(), req.max_phy), req)) {
            break;
        }
        const std::optional<int64_t> tags =
            req.schedule_topic ? std::nullopt : std::optional<int64_t>(u.tags_code);
        if (req.filter != nullptr && !req.filter->is_matched_by_consume_queue(tags)) {
            if (r.buffer_total_size == 0) {
                r.status = GetMessageStatus::kNoMatchedMessage;
            }
            continue;
        }
        auto msg = commit_log_->get_message(u.phy_offset, u.size);
        if (!msg.has_value()) {
            if (r.buffer_total_size == 0) {
                r.status = GetMessageStatus::kMessageWasRemoving;
            }
            next_phy_file_start = commit_log_->roll_next_file(u.phy_offset).value();
            continue;
        }
        if (req.filter != nullptr && !req.filter->is_matched_by_commit_log(msg->bytes())) {
            if (r.buffer_total_size == 0) {
                r.status = GetMessageStatus::kNoMatchedMessage;
            }
            continue;
        }
        r.add_message(std::move(*msg), req.offset + static_cast<int64_t>(i / kCqStoreUnitSize));
        r.status = GetMessageStatus::kFound;
        next_phy_file_start = INT64_MIN;
    }
    r.next_begin_offset = req.offset + static_cast<int64_t>(i / kCqStoreUnitSize);
    // A slave is suggested once the last unit looked at points out of memory (is_in_disk).
    r.suggest_pulling_from_slave = is_in_disk(max_phy_pulling, req.max_phy);
}

bool MessageStore::batch_full(const GetMessageResult& r, int32_t next_size, bool in_disk,
                              const GetRequest& req) const {
    // Java isTheBatchFull; the first message always goes.
    if (r.buffer_total_size == 0 || r.message_count() == 0) {
        return false;
    }
    if (req.max_msg_nums <= r.message_count()) {
        return true;
    }
    const int64_t next_total = r.buffer_total_size + next_size;
    if (req.max_total_bytes > 0 && next_total > req.max_total_bytes) {
        return true;
    }
    const int64_t cap_bytes = in_disk ? config_.max_transfer_bytes_on_message_in_disk
                                      : config_.max_transfer_bytes_on_message_in_memory;
    const int32_t cap_count = in_disk ? config_.max_transfer_count_on_message_in_disk
                                      : config_.max_transfer_count_on_message_in_memory;
    return next_total > cap_bytes || r.message_count() > cap_count - 1;
}

QueueOffset MessageStore::get_max_offset_in_queue(std::string_view topic, int32_t queue_id) const {
    auto cq = cqs_->find(topic, queue_id);
    return cq == nullptr ? QueueOffset(0) : cq->max_offset_in_queue();
}

QueueOffset MessageStore::get_min_offset_in_queue(std::string_view topic, int32_t queue_id) const {
    auto cq = cqs_->find(topic, queue_id);
    return cq == nullptr ? QueueOffset(0) : cq->min_offset_in_queue();
}

PhysicalOffset MessageStore::get_commit_log_offset_in_queue(std::string_view topic,
                                                            int32_t queue_id,
                                                            QueueOffset offset) const {
    auto cq = cqs_->find(topic, queue_id);
    if (cq == nullptr) {
        return PhysicalOffset(0);
    }
    auto u = cq->get_unit(offset);
    return u.has_value() ? u->phy_offset : PhysicalOffset(0);
}

int64_t MessageStore::store_time_of(const CqUnit& unit) const {
    auto view = commit_log_->get_message(unit.phy_offset, unit.size);
    if (!view.has_value() || view->size < static_cast<size_t>(protocol::kMsgSysFlagPos + 4)) {
        return -1;
    }
    const auto sys_flag = static_cast<int32_t>(get_be32(view->data + protocol::kMsgSysFlagPos));
    const auto pos = static_cast<size_t>(protocol::store_timestamp_position(sys_flag));
    if (view->size < pos + 8) {
        return -1;
    }
    return static_cast<int64_t>(get_be64(view->data + pos));
}

QueueOffset MessageStore::get_offset_in_queue_by_time(std::string_view topic, int32_t queue_id,
                                                      int64_t timestamp_ms,
                                                      BoundaryType boundary) const {
    if (boundary == BoundaryType::kNearest) {
        return offset_in_queue_by_time_nearest(topic, queue_id, timestamp_ms);
    }
    auto cq = cqs_->find(topic, queue_id);
    if (cq == nullptr) {
        return QueueOffset(0);
    }
    const int64_t min = cq->min_offset_in_queue().value();
    const int64_t max = cq->max_offset_in_queue().value();
    if (min >= max) {
        return QueueOffset(max);
    }
    auto time_at = [&](int64_t off) {
        auto u = cq->get_unit(QueueOffset(off));
        return u.has_value() ? store_time_of(*u) : -1;  // removed: older than anything
    };
    if (boundary == BoundaryType::kLower) {
        // First offset with time >= timestamp.
        int64_t lo = min;
        int64_t hi = max;
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (time_at(mid) < timestamp_ms) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return QueueOffset(lo);
    }
    // Last offset with time <= timestamp.
    int64_t lo = min;
    int64_t hi = max;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (time_at(mid) <= timestamp_ms) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return QueueOffset(lo == min ? min : lo - 1);
}

QueueOffset MessageStore::offset_in_queue_by_time_nearest(std::string_view topic, int32_t queue_id,
                                                          int64_t timestamp_ms) const {
    auto cq = cqs_->find(topic, queue_id);
    if (cq == nullptr) {
        return QueueOffset(0);
    }
    // Java MappedFileQueue#getMappedFileByTime.
    const auto files = cq->mapped_file_queue().files();
    if (files.empty()) {
        return QueueOffset(0);
    }
    std::shared_ptr<MappedFile> file = files.back();
    for (const auto& f : files) {
        if (f->last_modified_millis() >= timestamp_ms) {
            file = f;
            break;
        }
    }
    const int64_t from = file->file_from_offset();
    const int64_t min_logic = cq->min_offset_in_queue().value() * kCqStoreUnitSize;
    int64_t low = min_logic > from ? min_logic - from : 0;
    int64_t high = int64_t{file->wrote_position()} - kCqStoreUnitSize;
    int64_t target = -1;
    int64_t left = -1;
    int64_t right = -1;
    int64_t left_time = -1;
    int64_t right_time = -1;
    const int64_t min_phy = commit_log_->min_offset().value();
    while (high >= low) {
        const int64_t mid = (low + high) / (2 * kCqStoreUnitSize) * kCqStoreUnitSize;
        const CqUnit u = decode_cq_unit(file->data() + mid);
        if (u.phy_offset.value() < min_phy) {
            low = mid + kCqStoreUnitSize;
            left = mid;
            continue;
        }
        const int64_t store_time = store_time_of(u);  // Java CommitLog#pickupStoreTimestamp
        if (store_time < 0) {
            return QueueOffset(0);
        }
        if (store_time == timestamp_ms) {
            target = mid;
            break;
        }
        if (store_time > timestamp_ms) {
            high = mid - kCqStoreUnitSize;
            right = mid;
            right_time = store_time;
        } else {
            low = mid + kCqStoreUnitSize;
            left = mid;
            left_time = store_time;
        }
    }
    int64_t offset = 0;
    if (target != -1) {
        offset = target;
    } else if (left_time == -1) {
        offset = right;
    } else if (right_time == -1) {
        offset = left;
    } else {
        offset =
            std::abs(timestamp_ms - left_time) > std::abs(timestamp_ms - right_time) ? right : left;
    }
    // Integer division truncating toward zero, as Java's (an empty file gives offset -1 -> 0).
    return QueueOffset((from + offset) / kCqStoreUnitSize);
}

int64_t MessageStore::get_earliest_message_time(std::string_view topic, int32_t queue_id) const {
    auto cq = cqs_->find(topic, queue_id);
    if (cq == nullptr) {
        return -1;
    }
    auto u = cq->get_unit(cq->min_offset_in_queue());
    return u.has_value() ? store_time_of(*u) : -1;
}

int64_t MessageStore::get_earliest_message_time() const {
    auto view = commit_log_->get_data(commit_log_->min_offset());
    if (!view.has_value()) {
        return -1;
    }
    DispatchRequest req;
    int32_t size = 0;
    if (check_message_and_return_size(view->data, view->size, false, {}, &req, &size) !=
        CheckResult::kMessage) {
        return -1;
    }
    return req.store_timestamp;
}

int64_t MessageStore::get_message_store_timestamp(std::string_view topic, int32_t queue_id,
                                                  QueueOffset offset) const {
    auto cq = cqs_->find(topic, queue_id);
    if (cq == nullptr) {
        return -1;
    }
    auto u = cq->get_unit(offset);
    return u.has_value() ? store_time_of(*u) : -1;
}

std::optional<MappedView> MessageStore::select_one_message_by_offset(PhysicalOffset offset) const {
    auto head = commit_log_->get_data(offset, 8);
    if (!head.has_value() || head->size < 8) {
        return std::nullopt;
    }
    const auto size = static_cast<int32_t>(get_be32(head->data));
    const auto magic = static_cast<int32_t>(get_be32(head->data + 4));
    if (size <= 0 ||
        (magic != protocol::kMessageMagicCodeV1 && magic != protocol::kMessageMagicCodeV2)) {
        return std::nullopt;
    }
    return commit_log_->get_message(offset, size);
}

Result<protocol::MessageExt> MessageStore::look_message_by_offset(PhysicalOffset offset) const {
    return commit_log_->lookup_message(offset);
}

Result<protocol::MessageExt> MessageStore::look_message_by_msg_id(
    std::string_view offset_msg_id) const {
    COMET_ASSIGN_OR_RETURN(auto id, protocol::decode_offset_msg_id(offset_msg_id));
    return commit_log_->lookup_message(PhysicalOffset(id.physical_offset));
}

QueryMessageResult MessageStore::query_message(std::string_view topic, std::string_view key,
                                               int32_t max_num, int64_t begin_ms,
                                               int64_t end_ms) const {
    QueryMessageResult out;
    const auto q = index_->query_offset(topic, key, static_cast<size_t>(std::max(0, max_num)),
                                        begin_ms, end_ms);
    out.index_last_update_timestamp = q.index_last_update_timestamp;
    out.index_last_update_phy_offset = q.index_last_update_phy_offset;
    std::set<int64_t> seen;
    for (const PhysicalOffset off : q.phy_offsets) {
        if (!seen.insert(off.value()).second) {
            continue;
        }
        auto view = select_one_message_by_offset(off);
        if (!view.has_value()) {
            continue;  // deleted by retention
        }
        // The index stores hashes only: drop collisions (Java leaves that to the client).
        auto msg = protocol::decode_message(view->bytes(), {.read_body = false});
        if (!msg.is_ok() || msg->topic != topic) {
            continue;
        }
        bool match = false;
        if (const std::string* uniq =
                msg->property(protocol::property::kUniqClientMessageIdKeyIdx)) {
            match = *uniq == key;
        }
        const std::string keys = msg->keys();
        for (size_t s = 0; !match && s < keys.size();) {
            size_t e = keys.find(' ', s);
            if (e == std::string::npos) {
                e = keys.size();
            }
            match = std::string_view(keys).substr(s, e - s) == key;
            s = e + 1;
        }
        if (match) {
            out.buffer_total_size += static_cast<int64_t>(view->size);
            out.messages.push_back(std::move(*view));
        }
    }
    return out;
}

PhysicalOffset MessageStore::get_min_phy_offset() const { return commit_log_->min_offset(); }
PhysicalOffset MessageStore::get_max_phy_offset() const { return commit_log_->max_offset(); }

int MessageStore::delete_topics(const std::set<std::string>& topics) {
    int n = 0;
    const auto offsets = cqs_->max_offsets();
    for (const auto& t : topics) {
        auto it = offsets.find(t);
        if (it != offsets.end()) {
            for (const auto& [qid, max] : it->second) {
                commit_log_->remove_queue_from_topic_queue_table(t, qid);
            }
        }
        n += cqs_->destroy_topic(t);
    }
    return n;
}

int MessageStore::clean_expired_consumer_queues() {
    const PhysicalOffset min = commit_log_->min_offset();
    if (min.value() < 0) {
        return 0;
    }
    return cqs_->clean_expired(min, [this](const std::string& topic, int32_t queue_id) {
        commit_log_->remove_queue_from_topic_queue_table(topic, queue_id);
    });
}

int MessageStore::clean_unused_topics(const std::set<std::string>& keep) {
    std::set<std::string> unused;
    for (const auto& [topic, queues] : cqs_->max_offsets()) {
        if (keep.count(topic) == 0) {
            unused.insert(topic);
        }
    }
    return delete_topics(unused);
}

std::map<std::string, std::string> MessageStore::runtime_info() const {
    auto m = stats_.runtime_info();
    const std::string cl_dir = config_.commit_log_dir();
    struct statvfs st {};
    if (::statvfs(cl_dir.c_str(), &st) == 0) {
        const uint64_t total = uint64_t{st.f_blocks} * st.f_frsize;
        const uint64_t free = uint64_t{st.f_bfree} * st.f_frsize;
        m["commitLogDirCapacity"] =
            fmt::format("Total : {}, Free : {}.", human_bytes(total), human_bytes(free));
    }
    m["commitLogDiskRatio"] = fmt::format("{}", probe_.used_ratio(cl_dir));
    // 4.9.8 adds one key per CommitLog path (storePathCommitLog may list several there; one
    // here), then the smallest ratio as commitLogDiskRatio.
    m["commitLogDiskRatio_" + cl_dir] = m["commitLogDiskRatio"];
    m["consumeQueueDiskRatio"] = fmt::format("{}", probe_.used_ratio(config_.consume_queue_dir()));
    m["commitLogMinOffset"] = std::to_string(commit_log_->min_offset().value());
    m["commitLogMaxOffset"] = std::to_string(commit_log_->max_offset().value());
    m["dispatchBehindBytes"] = std::to_string(reput_->behind());
    // The append in the put lock (Java lockTimeMills), or a put waiting for write-buffer space,
    // whichever has waited longer: both are a stalled page cache to an operator.
    m["pageCacheLockTimeMills"] =
        std::to_string(std::max(commit_log_->lock_time_ms(), commit_log_->ring_wait_millis()));
    m["dispatchedOffset"] = std::to_string(reput_->reput_from_offset().value());
    m["remainHowManyDataToFlush"] =
        std::to_string(commit_log_->max_offset().value() - commit_log_->flushed_offset().value());
    m["earliestMessageTimeStamp"] = std::to_string(get_earliest_message_time());
    m["diskFull"] = is_disk_full() ? "true" : "false";
    return m;
}

void MessageStore::check_invariants() const {
    commit_log_->check_invariants();
    const int64_t dispatched = reput_->reput_from_offset().value();
    COMET_CHECK(dispatched <= commit_log_->max_offset().value(),
                "dispatched {} beyond CommitLog max {}", dispatched,
                commit_log_->max_offset().value());
    for (const auto& cq : cqs_->queues()) {
        COMET_CHECK(cq->min_offset_in_queue() <= cq->max_offset_in_queue(),
                    "ConsumeQueue {}-{}: min {} > max {}", cq->topic(), cq->queue_id(),
                    cq->min_offset_in_queue().value(), cq->max_offset_in_queue().value());
    }
}

}  // namespace comet::store
