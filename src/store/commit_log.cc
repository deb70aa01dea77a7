#include "store/commit_log.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>
#include <utility>

#include "base/bytes.h"
#include "base/log_tag.h"
#include "base/progress_log.h"
#include "protocol/message_decoder.h"
#include "protocol/message_id.h"
#include "store/consume_queue_unit.h"
#include "store/fast_crc32.h"
#include "store/store_checkpoint.h"
#include "store/stored_message_encoder.h"

namespace comet::store {

namespace pm = comet::protocol;

namespace {

constexpr int32_t kEndFileMinBlankLength = 8;  // Java END_FILE_MIN_BLANK_LENGTH
constexpr int64_t kMaxRecordOverhead = 64 * 1024;

PutMessageResult failed(PutMessageStatus status, std::string remark) {
    PutMessageResult r;
    r.status = status;
    r.append.status = AppendMessageStatus::kUnknownError;
    r.remark = std::move(remark);
    return r;
}

// A segment could not be created: DISK_FULL when the disk is, CREATE_MAPPED_FILE_FAILED.
PutMessageResult segment_failed(const Status& st, RunningFlags* flags) {
    if (st.code() == Errc::kResourceExhausted) {
        flags->set(RunningFlags::kDiskFull);
    }
    return failed(PutMessageStatus::kCreateMappedFileFailed,
                  "create mapped file failed, server is busy or broken: " + st.message());
}

struct RecordCheck {
    enum Kind { kMessage, kBlank, kEnd } kind = kEnd;
    int32_t size = 0;
    int64_t store_timestamp = 0;
    std::string reason;  // why a kEnd is not a clean end of data; empty for zeros
};

// Java CommitLog#checkMessageAndReturnSize, stricter: the PHYSICALOFFSET field must equal the
// record's position (stale bytes from an older write cannot pass).
RecordCheck check_record(const uint8_t* p, int64_t avail, int64_t expected_phys, bool check_crc) {
    RecordCheck c;
    if (avail < 8) {
        c.reason = avail == 0 ? "" : fmt::format("only {} bytes left in the segment", avail);
        return c;
    }
    auto total = static_cast<int32_t>(get_be32(p));
    auto magic = static_cast<int32_t>(get_be32(p + 4));
    if (total == 0 && magic == 0) {
        return c;  // zeros: the clean end of written data
    }
    if (magic == pm::kBlankMagicCode) {
        if (total != avail) {
            c.reason = fmt::format("blank filler of size {} but {} bytes left", total, avail);
            return c;
        }
        c.kind = RecordCheck::kBlank;
        c.size = total;
        return c;
    }
    if (magic != pm::kMessageMagicCodeV1 && magic != pm::kMessageMagicCodeV2) {
        c.reason = fmt::format("bad magic {:#010x}", static_cast<uint32_t>(magic));
        return c;
    }
    if (total <= 0 || total > avail) {
        c.reason = fmt::format("TOTALSIZE {} does not fit the {} bytes left", total, avail);
        return c;
    }
    auto m = pm::decode_message(
        std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(total)),
        {.read_body = false, .check_crc = check_crc});
    if (!m.is_ok()) {
        c.reason = m.status().message();
        return c;
    }
    if (m.value().commit_log_offset != expected_phys) {
        c.reason = fmt::format("PHYSICALOFFSET {} does not match position {}",
                               m.value().commit_log_offset, expected_phys);
        return c;
    }
    c.kind = RecordCheck::kMessage;
    c.size = total;
    c.store_timestamp = m.value().store_timestamp;
    return c;
}

std::string& tls_buffer() {
    thread_local std::string buf;
    return buf;
}

// "topic-queueId" built into a thread-local buffer (no allocation once warm).
std::string_view tls_queue_key(std::string_view topic, int32_t queue_id) {
    thread_local std::string key;
    key.assign(topic);
    key.push_back('-');
    char digits[16];
    auto r = std::to_chars(digits, digits + sizeof(digits), queue_id);
    key.append(digits, r.ptr);
    return key;
}

// Appends the offset message id (protocol::write_offset_msg_id) without temporaries.
void append_offset_msg_id(OffsetMsgIds* out, const pm::HostAddress& host, int64_t offset) {
    char d[pm::kMaxOffsetMsgIdChars];
    const char* end = pm::write_offset_msg_id(host, offset, d);
    out->append(std::string_view(d, static_cast<size_t>(end - d)));
}

// A put commits inline when the last commit round ended at least this long ago.
constexpr int64_t kInlineCommitGapNs = 50'000;

int64_t steady_nanos() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Set on the commit thread and while a put commits inline: a completion that puts must neither
// wait for ring space (only this thread frees it) nor take commit_round_mu_ again.
thread_local bool tls_in_commit = false;

// An open put batch on this thread (CommitLog::begin_put_batch) and the log whose puts it
// deferred (one log per batch: a put to another log takes the ordinary path).
thread_local bool tls_batch_open = false;
thread_local CommitLog* tls_batch_log = nullptr;
// From begin_put_batch() to after_put_batch_written(): the log whose append notifications
// (listener, flush wake-up) wait for the batch's replies to be written, and what they owe.
thread_local bool tls_defer_notify = false;
thread_local CommitLog* tls_notify_log = nullptr;
thread_local int64_t tls_notify_end = 0;
thread_local bool tls_notify_flush = false;

constexpr int64_t kMinWriteBuffer = 64 * 1024;

size_t ring_capacity(const MessageStoreConfig& config) {
    if (config.commit_log_write_buffer_bytes <= 0) {
        return 0;
    }
    return static_cast<size_t>(std::max(config.commit_log_write_buffer_bytes, kMinWriteBuffer));
}

}  // namespace

int64_t CommitLog::patch_records(uint8_t* base, const std::vector<Slice>& slices, int64_t phys,
                                 int64_t qo, int64_t store_ts) {
    for (const auto& s : slices) {
        uint8_t* rec = base + s.pos;
        int32_t tran = pm::sysflag::transaction_value(s.sys_flag);
        bool counts = tran != pm::sysflag::kTransactionPreparedType &&
                      tran != pm::sysflag::kTransactionRollbackType;
        put_be64(rec + pm::kMsgQueueOffsetPos, static_cast<uint64_t>(counts ? qo : 0));
        put_be64(rec + pm::kMsgPhysicalOffsetPos,
                 static_cast<uint64_t>(phys + static_cast<int64_t>(s.pos)));
        put_be64(rec + pm::store_timestamp_position(s.sys_flag), static_cast<uint64_t>(store_ts));
        if (counts) {
            ++qo;
        }
    }
    return qo;
}

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
    } else {
        // The pre-allocated next segment arrives with its head already faulted in.
        queue_.set_prefault_on_preallocate(
            std::max<int64_t>(config.commit_log_prefault_ahead_bytes, 0));
    }
}

CommitLog::~CommitLog() { shutdown(); }

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
// Put path

void CommitLog::put_message(const pm::MessageExt& msg, PutCompletion done) {
    put_message(msg, msg.body, std::move(done));
}

void CommitLog::put_message(const pm::MessageExt& msg, std::string_view body, PutCompletion done) {
    if (!accepting_.load()) {
        done(failed(PutMessageStatus::kServiceNotAvailable, "message store is not running"));
        return;
    }
    if (!flags_->is_writeable()) {
        done(failed(
            PutMessageStatus::kServiceNotAvailable,
            fmt::format("message store is not writeable, flags {:#x}", flags_->flag_bits())));
        return;
    }
    if (body.size() > static_cast<size_t>(config_.max_message_size)) {
        done(failed(PutMessageStatus::kMessageIllegal,
                    fmt::format("message body size {} exceeds maxMessageSize {}", body.size(),
                                config_.max_message_size)));
        return;
    }
    // Built once per put, into a per-thread buffer (no allocation once it has grown). Only
    // this put reads it: it is copied into the record before any completion can run a put.
    thread_local std::string built_props;
    if (!msg.stored_properties) {
        pm::message_properties_to_string(msg.properties, &built_props);
    }
    const std::string_view props = msg.stored_properties ? *msg.stored_properties : built_props;
    const size_t props_size = props.size();
    if (props_size > static_cast<size_t>(pm::kMaxPropertiesLength)) {
        done(failed(
            PutMessageStatus::kPropertiesSizeExceeded,
            fmt::format("properties size {} exceeds {}", props_size, pm::kMaxPropertiesLength)));
        return;
    }
    if (msg.topic.empty() || msg.topic.size() > 32767 ||
        (msg.topic.size() > 127 && !config_.auto_message_version_on_topic_len)) {
        done(failed(PutMessageStatus::kMessageIllegal,
                    fmt::format("topic length {} is invalid", msg.topic.size())));
        return;
    }
    thread_local std::vector<Slice> slices;
    if (ring_ != nullptr) {
        // Sized now, encoded later straight into the write buffer (no intermediate copy).
        auto layout = layout_stored_message(msg, body, props, store_host_);
        if (!layout.is_ok()) {
            done(failed(PutMessageStatus::kMessageIllegal, layout.status().message()));
            return;
        }
        const int64_t total = layout.value().total;
        if (total > static_cast<int64_t>(config_.max_message_size) + kMaxRecordOverhead ||
            total + kEndFileMinBlankLength > config_.mapped_file_size_commit_log) {
            done(failed(PutMessageStatus::kMessageIllegal,
                        fmt::format("message record of {} bytes is too large", total)));
            return;
        }
        // What dispatch will need beyond the message's own fields, found in the properties
        // while they are in cache (outside the put lock). The schedule topic's tags code
        // depends on the delay table: decoded instead.
        const bool hinted = hints_ != nullptr && msg.topic != kScheduleTopic;
        const DispatchProperties scanned =
            hinted ? scan_dispatch_properties(props) : DispatchProperties{};
        const SingleRecord single{&msg,
                                  body,
                                  props,
                                  layout.value(),
                                  static_cast<uint32_t>(fast_body_crc32(body)),
                                  hinted,
                                  scanned,
                                  hinted ? tags_string_to_tags_code(scanned.tags) : 0};
        slices.assign(1, Slice{0, static_cast<int32_t>(total), layout.value().sys_flag});
        append_and_complete(nullptr, &single, slices, tls_queue_key(msg.topic, msg.queue_id),
                            msg.wait_store_msg_ok(), std::move(done));
        return;
    }
    // QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP are patched at append; STOREHOST is ours.
    std::string& buf = tls_buffer();
    buf.clear();
    Status st = encode_stored_message(msg, body, props, store_host_, &buf);
    if (!st.is_ok()) {
        done(failed(PutMessageStatus::kMessageIllegal, st.message()));
        return;
    }
    int64_t len = static_cast<int64_t>(buf.size());
    if (len > static_cast<int64_t>(config_.max_message_size) + kMaxRecordOverhead ||
        len + kEndFileMinBlankLength > config_.mapped_file_size_commit_log) {
        done(failed(PutMessageStatus::kMessageIllegal,
                    fmt::format("message record of {} bytes is too large", len)));
        return;
    }
    const auto sys_flag = static_cast<int32_t>(
        get_be32(reinterpret_cast<const uint8_t*>(buf.data()) + pm::kMsgSysFlagPos));
    slices.assign(1, Slice{0, static_cast<int32_t>(len), sys_flag});
    append_and_complete(&buf, nullptr, slices, tls_queue_key(msg.topic, msg.queue_id),
                        msg.wait_store_msg_ok(), std::move(done));
}

void CommitLog::put_messages(MessageBatch batch, PutCompletion done) {
    if (!accepting_.load()) {
        done(failed(PutMessageStatus::kServiceNotAvailable, "message store is not running"));
        return;
    }
    if (!flags_->is_writeable()) {
        done(failed(
            PutMessageStatus::kServiceNotAvailable,
            fmt::format("message store is not writeable, flags {:#x}", flags_->flag_bits())));
        return;
    }
    int32_t tran = pm::sysflag::transaction_value(batch.sys_flag);
    if (tran == pm::sysflag::kTransactionPreparedType ||
        tran == pm::sysflag::kTransactionCommitType) {
        done(failed(PutMessageStatus::kMessageIllegal,
                    "batch message does not support transaction"));
        return;
    }
    if (const std::string* delay = batch.properties.get(pm::property::kDelayTimeLevel);
        delay != nullptr && *delay != "0") {
        done(failed(PutMessageStatus::kMessageIllegal,
                    "batch message does not support delay level"));
        return;
    }
    if (batch.topic.empty() || batch.topic.size() > 127) {
        done(failed(PutMessageStatus::kMessageIllegal,
                    fmt::format("batch topic length {} is invalid", batch.topic.size())));
        return;
    }
    // Per-thread scratch, like the encode buffer: a steady stream of batches allocates nothing
    // per message (issue 16).
    struct BatchScratch {
        std::vector<pm::BatchEntry> entries;
        std::string batch_props;
        std::vector<Slice> slices;
        pm::MessageExt m;
    };
    thread_local BatchScratch scratch;
    const std::vector<pm::BatchEntry>& entries = scratch.entries;
    if (Status st = pm::decode_batch_body(batch.body, &scratch.entries); !st.is_ok()) {
        done(failed(PutMessageStatus::kMessageIllegal, st.message()));
        return;
    }
    if (entries.empty()) {
        done(failed(PutMessageStatus::kMessageIllegal, "batch message has no messages"));
        return;
    }
    const std::string& batch_props = scratch.batch_props;
    pm::message_properties_to_string(batch.properties, &scratch.batch_props);
    std::string& buf = tls_buffer();
    buf.clear();
    std::vector<Slice>& slices = scratch.slices;
    slices.clear();
    bool wait_ok = true;
    pm::MessageExt& m = scratch.m;
    if (!m.stored_properties) {
        m.stored_properties.emplace();
    }
    m.topic = batch.topic;
    m.queue_id = batch.queue_id;
    m.sys_flag = batch.sys_flag;
    m.born_timestamp = batch.born_timestamp;
    m.born_host = batch.born_host;
    m.store_host = store_host_;
    for (const auto& e : entries) {
        if (e.body.size() > static_cast<size_t>(config_.max_message_size)) {
            done(failed(PutMessageStatus::kMessageIllegal,
                        fmt::format("batch message body size {} exceeds maxMessageSize {}",
                                    e.body.size(), config_.max_message_size)));
            return;
        }
        // Java MessageExtBatchEncoder: the message's own properties, then the batch's.
        std::string& props = *m.stored_properties;
        props.assign(e.properties);
        if (!props.empty() && !batch_props.empty() && props.back() != pm::kPropertySeparator) {
            props.push_back(pm::kPropertySeparator);
        }
        props += batch_props;
        if (props.size() > static_cast<size_t>(pm::kMaxPropertiesLength)) {
            done(failed(PutMessageStatus::kPropertiesSizeExceeded,
                        fmt::format("batch message properties size {} exceeds {}", props.size(),
                                    pm::kMaxPropertiesLength)));
            return;
        }
        m.flag = e.flag;
        m.body.assign(e.body);
        m.properties.assign_from_string(props);
        wait_ok = wait_ok && m.wait_store_msg_ok();
        size_t pos = buf.size();
        Status st = encode_stored_message(m, *m.stored_properties, store_host_, &buf);
        if (!st.is_ok()) {
            done(failed(PutMessageStatus::kMessageIllegal, st.message()));
            return;
        }
        slices.push_back(
            Slice{pos, static_cast<int32_t>(buf.size() - pos),
                  static_cast<int32_t>(get_be32(reinterpret_cast<const uint8_t*>(buf.data()) + pos +
                                                pm::kMsgSysFlagPos))});
    }
    int64_t len = static_cast<int64_t>(buf.size());
    if (len + kEndFileMinBlankLength > config_.mapped_file_size_commit_log ||
        len > INT32_MAX - kMaxRecordOverhead) {
        done(failed(PutMessageStatus::kMessageIllegal,
                    fmt::format("batch of {} bytes does not fit a CommitLog segment", len)));
        return;
    }
    append_and_complete(&buf, nullptr, slices, tls_queue_key(batch.topic, batch.queue_id), wait_ok,
                        std::move(done));
}

std::future<PutMessageResult> CommitLog::put_message(const pm::MessageExt& msg) {
    auto p = std::make_shared<std::promise<PutMessageResult>>();
    auto f = p->get_future();
    put_message(msg, [p](const PutMessageResult& r) { p->set_value(r); });
    return f;
}

std::future<PutMessageResult> CommitLog::put_messages(MessageBatch batch) {
    auto p = std::make_shared<std::promise<PutMessageResult>>();
    auto f = p->get_future();
    put_messages(std::move(batch), [p](const PutMessageResult& r) { p->set_value(r); });
    return f;
}

PutMessageResult CommitLog::append_locked(const std::string& encoded,
                                          const std::vector<Slice>& slices, std::string_view key) {
    if (!accepting_.load() || !flags_->is_writeable()) {
        return failed(PutMessageStatus::kServiceNotAvailable,
                      "message store is not writeable or not running");
    }
    const auto total = static_cast<int32_t>(encoded.size());
    const int64_t file_size = queue_.mapped_file_size();
    std::shared_ptr<MappedFile> file;
    for (int attempt = 0; attempt < 2; ++attempt) {
        auto r = queue_.get_last_mapped_file(max_offset_.load(), true);
        if (!r.is_ok()) {
            return segment_failed(r.status(), flags_);
        }
        file = r.value();
        int32_t wrote = file->wrote_position();
        int64_t free = file_size - wrote;
        if (total + kEndFileMinBlankLength <= free) {
            break;
        }
        // END_OF_FILE: blank filler, then retry in a fresh segment.
        if (free >= 8) {
            put_be32(file->data() + wrote, static_cast<uint32_t>(free));
            put_be32(file->data() + wrote + 4, static_cast<uint32_t>(pm::kBlankMagicCode));
        }
        file->set_wrote_position(static_cast<int32_t>(file_size));
        max_offset_.store(file->file_from_offset() + file_size);
        file = nullptr;
    }
    COMET_CHECK(file != nullptr, "no room for a {}-byte append after rolling", total);
    const int32_t wrote = file->wrote_position();
    const int64_t phys = file->file_from_offset() + wrote;
    const int64_t store_ts = clock_->wall_millis();
    auto slot = topic_queue_table_.find(key);
    if (slot == topic_queue_table_.end()) {
        slot = topic_queue_table_.emplace(std::string(key), 0).first;
    }
    int64_t& next_queue_offset = slot->second;
    const int64_t first_queue_offset = next_queue_offset;
    uint8_t* dst = file->data() + wrote;
    std::memcpy(dst, encoded.data(), encoded.size());
    next_queue_offset = patch_records(dst, slices, phys, next_queue_offset, store_ts);
    file->set_wrote_position(wrote + total);
    file->set_store_timestamp(store_ts);
    max_offset_.store(phys + total);

    return appended(phys, total, store_ts, first_queue_offset);
}

PutMessageResult CommitLog::appended(int64_t phys, int32_t bytes, int64_t store_ts,
                                     int64_t first_queue_offset) {
    PutMessageResult r;
    r.status = PutMessageStatus::kPutOk;
    r.append.status = AppendMessageStatus::kPutOk;
    r.append.wrote_offset = PhysicalOffset(phys);
    r.append.wrote_bytes = bytes;
    r.append.store_timestamp = store_ts;
    r.append.logics_offset = QueueOffset(first_queue_offset);
    return r;
}

void CommitLog::fill_msg_ids(PutMessageResult* r, size_t count,
                             const std::function<int64_t(size_t)>& start_of) const {
    r->append.msg_num = static_cast<int32_t>(count);
    // count ids and count - 1 commas: a single IPv6 id (56 characters) stays inline.
    r->append.msg_id.reserve(count * ((store_host_.ip_len() + 12) * 2 + 1) - (count > 0 ? 1 : 0));
    for (size_t i = 0; i < count; ++i) {
        if (i > 0) {
            r->append.msg_id.append(",");
        }
        append_offset_msg_id(&r->append.msg_id, store_host_,
                             r->append.wrote_offset.value() + start_of(i));
    }
}

std::optional<PutMessageResult> CommitLog::append_to_ring_locked(
    std::string* encoded, const SingleRecord* single, const std::vector<Slice>& slices,
    std::string_view key, bool wait_store_msg_ok, PutCompletion& done) {
    if (!accepting_.load() || !flags_->is_writeable()) {
        return failed(PutMessageStatus::kServiceNotAvailable,
                      "message store is not writeable or not running");
    }
    const auto total =
        encoded != nullptr ? static_cast<int64_t>(encoded->size()) : single->layout.total;
    // The records as bytes, for the paths that cannot encode in place (wrap, direct write).
    auto materialize = [&]() -> std::string& {
        if (encoded == nullptr) {
            std::string& b = tls_buffer();
            b.resize(static_cast<size_t>(total));
            write_stored_message(reinterpret_cast<uint8_t*>(b.data()), single->layout, *single->msg,
                                 single->body, single->props, store_host_, single->body_crc);
            encoded = &b;
        }
        return *encoded;
    };
    const int64_t file_size = queue_.mapped_file_size();
    int64_t at = reserved_;
    if (write_file_ == nullptr || at < write_file_->file_from_offset() ||
        at >= write_file_->file_from_offset() + file_size) {
        auto fr = queue_.get_mapped_file_for_write(at);
        if (!fr.is_ok()) {
            return segment_failed(fr.status(), flags_);
        }
        write_file_ = std::move(fr).value();
    }
    MappedFile* file = write_file_.get();
    const int64_t free = file_size - (at - file->file_from_offset());
    // END_OF_FILE: the rest of the segment becomes a blank filler and the records go to the
    // next one, which must exist before anything is reserved.
    const int64_t gap = total + kEndFileMinBlankLength <= free ? 0 : free;
    if (gap > 0) {
        auto next = queue_.get_mapped_file_for_write(at + gap);
        if (!next.is_ok()) {
            return segment_failed(next.status(), flags_);
        }
        write_file_ = std::move(next).value();
        file = write_file_.get();
    }
    const bool fits = gap + total <= static_cast<int64_t>(ring_->capacity());
    if (!wait_for_ring_space(fits ? at + gap + total
                                  : at + static_cast<int64_t>(ring_->capacity()))) {
        return failed(PutMessageStatus::kServiceNotAvailable,
                      "CommitLog write buffer: store is not writeable or not started");
    }
    uint8_t filler[8];
    if (gap >= 8) {
        put_be32(filler, static_cast<uint32_t>(gap));
        put_be32(filler + 4, static_cast<uint32_t>(pm::kBlankMagicCode));
    }
    const int64_t phys = at + gap;
    const int64_t store_ts = clock_->wall_millis();
    auto slot = topic_queue_table_.find(key);
    if (slot == topic_queue_table_.end()) {
        slot = topic_queue_table_.emplace(std::string(key), 0).first;
    }
    const int64_t first_queue_offset = slot->second;
    int64_t next_queue_offset = first_queue_offset;
    if (fits) {
        if (gap > 0) {
            ring_->zero(at, static_cast<size_t>(gap));
            if (gap >= 8) {
                ring_->copy_in(at, filler, sizeof(filler));
            }
        }
        uint8_t* dst = ring_->contiguous(phys, static_cast<size_t>(total));
        if (encoded == nullptr && dst != nullptr) {
            // Encoded in place: the body is copied once, from the request into the ring.
            write_stored_message(dst, single->layout, *single->msg, single->body, single->props,
                                 store_host_, single->body_crc);
            next_queue_offset = patch_records(dst, slices, phys, first_queue_offset, store_ts);
        } else {
            std::string& e = materialize();
            next_queue_offset = patch_records(reinterpret_cast<uint8_t*>(e.data()), slices, phys,
                                              first_queue_offset, store_ts);
            ring_->copy_in(phys, e.data(), static_cast<size_t>(total));
        }
    } else {
        std::string& e = materialize();
        next_queue_offset = patch_records(reinterpret_cast<uint8_t*>(e.data()), slices, phys,
                                          first_queue_offset, store_ts);
        // Larger than the ring (a huge batch): the ring is drained, write it here.
        Status st =
            gap >= 8 ? write_direct_locked(at, std::string_view(reinterpret_cast<char*>(filler), 8))
                     : Status::ok();
        if (st.is_ok()) {
            if (gap > 0) {
                auto old = queue_.find_mapped_file_by_offset(at);
                old->set_wrote_position(static_cast<int32_t>(file_size));
                max_offset_.store(phys);
            }
            st = write_direct_locked(phys, e);
        }
        if (!st.is_ok()) {
            flags_->set(RunningFlags::kNotWritable);
            reserved_ = std::max(reserved_, max_offset_.load());  // a written filler stays
            reserved_pub_.store(reserved_);
            spdlog::error("CommitLog write of {} bytes at {} failed; store is read-only: {}", total,
                          phys, st.to_string());
            return failed(PutMessageStatus::kUnknownError,
                          "CommitLog write failed, store is read-only: " + st.message());
        }
    }
    slot->second = next_queue_offset;
    file->set_store_timestamp(store_ts);
    reserved_ = phys + total;

    const uint64_t head = slot_head_.load(std::memory_order_relaxed);
    PendingPut& p = slots_[head % kPendingSlots];
    p.wrote_offset = phys;
    p.store_timestamp = store_ts;
    p.logics_offset = first_queue_offset;
    p.wrote_bytes = static_cast<int32_t>(total);
    p.wait_store_msg_ok = wait_store_msg_ok;
    p.batch = slices.size() > 1;
    if (p.batch) {
        std::vector<uint32_t>& pos = batch_pos_[head % kPendingSlots];
        pos.clear();
        pos.reserve(std::max<size_t>(slices.size(), 32));  // grown once per slot, not by doubling
        for (const Slice& sl : slices) {
            pos.push_back(static_cast<uint32_t>(sl.pos));
        }
    }
    p.done = std::move(done);
    slot_head_.store(head + 1, std::memory_order_release);
    if (single != nullptr && single->hinted) {
        if (DispatchRequest* h = hints_->begin_push()) {
            const int32_t sys_flag = single->layout.sys_flag;
            h->topic.assign(single->msg->topic);
            h->queue_id = single->msg->queue_id;
            h->commit_log_offset = PhysicalOffset(phys);
            h->msg_size = static_cast<int32_t>(total);
            h->tags_code = single->tags_code;
            h->store_timestamp = store_ts;
            // The QUEUEOFFSET patch_records wrote for this one record.
            h->consume_queue_offset = QueueOffset(next_queue_offset > first_queue_offset
                                                      ? first_queue_offset
                                                      : 0);
            h->keys.assign(single->scanned.keys);
            h->uniq_key.assign(single->scanned.uniq_key);
            h->sys_flag = sys_flag;
            h->prepared_transaction_offset = single->msg->prepared_transaction_offset;
            hints_->end_push();
        }
    }
    reserved_pub_.store(reserved_);  // seq_cst: pairs with committer_idle_ in wake_committer
    return std::nullopt;
}

bool CommitLog::wait_for_ring_space(int64_t end) {
    const auto cap = static_cast<int64_t>(ring_->capacity());
    const uint64_t head = slot_head_.load(std::memory_order_relaxed);
    // Fast path on what was seen free last time: no read of the commit thread's cache lines.
    if (end <= ring_room_end_ && head < slot_room_end_) {
        return true;
    }
    auto full = [&] {
        ring_room_end_ = max_offset_.load() + cap;
        slot_room_end_ = slot_tail_.load() + kPendingSlots;
        return end > ring_room_end_ || head >= slot_room_end_;
    };
    while (full()) {
        if (!flags_->is_writeable() || commit_failed_.load() || !committer_running_.load() ||
            tls_in_commit) {
            return false;
        }
        if (help_commit()) {
            continue;  // wrote part of the ring on this thread; the commit thread completes
        }
        MutexLock l(commit_mu_);
        space_wanted_.store(true);
        commit_wake_ = true;
        commit_cv_.notify_one();
        if (full()) {
            space_cv_.wait_for(commit_mu_, std::chrono::milliseconds(1));
        }
    }
    return true;
}

bool CommitLog::help_commit() NO_THREAD_SAFETY_ANALYSIS {
    // A full ring means the commit thread is behind (on a busy machine, often just not
    // scheduled): a waiting put writes the next chunk itself instead of sleeping. Only the
    // write phase: completions (user callbacks) stay on the commit thread, never under put_mu_.
    if (!commit_round_mu_.try_lock()) {
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

Status CommitLog::write_direct_locked(int64_t at, std::string_view bytes) {
    COMET_CHECK(at >= max_offset_.load(), "direct write at {} behind max offset {}", at,
                max_offset_.load());
    auto fr = queue_.get_mapped_file_for_write(at);
    if (!fr.is_ok()) {
        return fr.status();
    }
    auto file = std::move(fr).value();
    COMET_CHECK(file->file_from_offset() + file->wrote_position() == at,
                "direct write at {} but {} ends at {}", at, file->file_name(),
                file->file_from_offset() + file->wrote_position());
    COMET_RETURN_IF_ERROR(file->write_at_end(bytes));
    max_offset_.store(at + static_cast<int64_t>(bytes.size()));
    return Status::ok();
}

void CommitLog::finish_put(PutMessageResult& r, bool wait_store_msg_ok, PutCompletion& done) {
    if (config_.flush_disk_type == FlushDiskType::kSyncFlush && wait_store_msg_ok) {
        const PhysicalOffset end_offset = r.append.end_offset();
        // SYNC_FLUSH waits in FlushService's (copyable) completion: the put's is shared.
        flush_->wait_for_flush(end_offset,
                               [r = std::move(r), done = std::make_shared<PutCompletion>(
                                                      std::move(done))](
                                   PutMessageStatus status, const std::string& remark) mutable {
                                   r.status = status;
                                   r.remark = remark;
                                   (*done)(std::move(r));
                               });
        return;
    }
    done(std::move(r));
}

void CommitLog::append_and_complete(std::string* encoded, const SingleRecord* single,
                                    const std::vector<Slice>& slices, std::string_view key,
                                    bool wait_store_msg_ok, PutCompletion done) {
    if (ring_ != nullptr) {
        std::optional<PutMessageResult> failure;
        {
            // A plain mutex: spinning before sleeping (16 or 64 tries) cost 4 writers on 2 cores
            // more CPU than the occasional futex sleep (bench/store/run.sh, 2026-12-01).
            MutexLock l(put_mu_);
            failure = append_to_ring_locked(encoded, single, slices, key, wait_store_msg_ok, done);
        }
        if (failure) {
            done(std::move(*failure));
            return;
        }
        if (tls_batch_open && !tls_in_commit &&
            (tls_batch_log == nullptr || tls_batch_log == this)) {
            tls_batch_log = this;  // end_put_batch() commits and completes it
            return;
        }
        if (committer_idle_.load() && !tls_in_commit && try_commit_inline()) {
            return;
        }
        wake_committer();
        return;
    }
    PutMessageResult r;
    {
        MutexLock l(put_mu_);
        r = append_locked(*encoded, slices, key);  // the mapping path always has the bytes
    }
    if (!r.ok()) {
        done(std::move(r));
        return;
    }
    fill_msg_ids(&r, slices.size(), [&](size_t i) {  // outside the lock
        return static_cast<int64_t>(slices[i].pos);
    });
    const int64_t end = r.append.end_offset().value();
    if (prefault_.wants(end)) {
        if (auto file = queue_.find_mapped_file_by_offset(end - 1)) {
            prefault_.request(file, static_cast<int32_t>(end - file->file_from_offset()));
        }
    }
    notify_appended(r.append.end_offset().value(), /*advanced=*/true);
    finish_put(r, wait_store_msg_ok, done);
}

// ---------------------------------------------------------------------------------------------
// Commit thread (write buffer)

bool CommitLog::try_commit_inline() NO_THREAD_SAFETY_ANALYSIS {
    // A put arriving at an idle log (the last round ended a while ago) writes and completes
    // itself: no hand-over to the sleeping commit thread, so a lone put is as fast as through
    // the mapping. Under load rounds follow each other closely and puts hand over instead,
    // which is what batches many puts into one pwritev.
    const int64_t now = steady_nanos();
    if (now - last_round_ns_.load(std::memory_order_relaxed) < kInlineCommitGapNs ||
        !commit_round_mu_.try_lock()) {
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
    if (space_wanted_.exchange(false)) {
        MutexLock l(commit_mu_);
        space_cv_.notify_all();
    }
    last_round_ns_.store(steady_nanos(), std::memory_order_relaxed);
    return true;
}

void CommitLog::hint_replicated_locked(int64_t start, std::string_view data) {
    if (hints_ == nullptr || data.empty()) {
        return;
    }
    const int64_t seg = config_.mapped_file_size_commit_log;
    const int64_t end = start + static_cast<int64_t>(data.size());
    int64_t at = start;
    size_t pos = 0;
    const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
    // TOTALSIZE and magic of a record starting at `rec`: where the record after it starts, or
    // -1 when they do not describe a message that ends within its segment.
    const auto next_record = [seg](int64_t rec, const uint8_t* head) -> int64_t {
        const auto total = static_cast<int32_t>(get_be32(head));
        const auto magic = static_cast<int32_t>(get_be32(head + 4));
        const bool message =
            magic == protocol::kMessageMagicCodeV1 || magic == protocol::kMessageMagicCodeV2;
        if (!message || total < 8 || (seg > 0 && rec / seg != (rec + total - 1) / seg)) {
            return -1;
        }
        return rec + total;
    };
    if (hint_lost_ && hint_carry_len_ > 0) {
        // The earlier chunk ended within a record's first 8 bytes: complete them.
        const size_t need = 8 - hint_carry_len_;
        if (start == hint_carry_at_ + static_cast<int64_t>(hint_carry_len_) &&
            data.size() >= need) {
            uint8_t head[8];
            std::memcpy(head, hint_carry_.data(), hint_carry_len_);
            std::memcpy(head + hint_carry_len_, bytes, need);
            hint_resume_at_ = next_record(hint_carry_at_, head);
        }
        hint_carry_len_ = 0;
    }
    if (hint_lost_) {
        // An earlier chunk ended inside a record (HA chunks are cut anywhere). Resume at the
        // record after it when its size was read, else at the next segment start.
        if (hint_resume_at_ >= start && hint_resume_at_ < end) {
            at = hint_resume_at_;
            pos = static_cast<size_t>(at - start);
        } else if (hint_resume_at_ >= end) {
            return;  // that record covers this whole chunk
        } else if (seg <= 0 || start % seg != 0) {
            return;
        }
    }
    hint_lost_ = false;
    hint_resume_at_ = -1;
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
            // A record continues in the next chunk (or bad bytes): its TOTALSIZE and magic,
            // when this chunk holds them, say where the next record starts.
            hint_lost_ = true;
            hint_resume_at_ = -1;
            const size_t left = data.size() - pos;
            if (left >= 8) {
                hint_resume_at_ = next_record(at, bytes + pos);
            } else {
                std::memcpy(hint_carry_.data(), bytes + pos, left);
                hint_carry_len_ = left;
                hint_carry_at_ = at;
            }
            return;
        }
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
        if (!wait_for_ring_space(reserved_ + static_cast<int64_t>(ring_->capacity()))) {
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
    if (ring_ != nullptr &&
        !wait_for_ring_space(reserved_ + static_cast<int64_t>(ring_->capacity()))) {
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

// ---------------------------------------------------------------------------------------------
// Recovery

Result<RecoveryResult> CommitLog::recover_normally() {
    size_t n = queue_.file_count();
    size_t first = n > 3 ? n - 3 : 0;  // Java: start from the third-last segment
    return recover_from(first, config_.check_crc_on_recover);
}

Result<RecoveryResult> CommitLog::recover_abnormally() {
    auto files = queue_.files();
    size_t first = 0;
    if (checkpoint_ != nullptr && !files.empty()) {
        int64_t min_ts = checkpoint_->min_timestamp();
        for (size_t i = files.size(); i-- > 0;) {
            const auto& f = files[i];
            RecordCheck c = check_record(f->data(), f->file_size(), f->file_from_offset(), false);
            if (c.kind == RecordCheck::kMessage && c.store_timestamp != 0 &&
                c.store_timestamp <= min_ts) {
                first = i;
                spdlog::info("abnormal recovery: checkpoint min timestamp {} -> start at {}",
                             min_ts, f->file_name());
                break;
            }
        }
    }
    return recover_from(first, config_.check_crc_on_recover);
}

Result<RecoveryResult> CommitLog::recover_from(size_t first_index, bool check_crc) {
    auto files = queue_.files();
    RecoveryResult res;
    if (files.empty()) {
        max_offset_.store(0);
        {
            MutexLock l(put_mu_);
            reserved_ = 0;
            reserved_pub_.store(0);
            write_file_.reset();
            ring_room_end_ = 0;
            slot_room_end_ = 0;
        }
        queue_.set_flushed_where(0);
        spdlog::info("CommitLog recovery: no segments in {}", queue_.dir());
        return res;
    }
    first_index = std::min(first_index, files.size() - 1);
    int64_t process = files[first_index]->file_from_offset();
    res.scan_from = PhysicalOffset(process);
    bool stopped = false;
    // A long scan (many segments, CRC on) reports its progress every few seconds.
    ProgressLog progress("CommitLog recovery scan", process,
                         files.back()->file_from_offset() + files.back()->file_size(), *clock_);
    for (size_t i = first_index; i < files.size() && !stopped; ++i) {
        const auto& f = files[i];
        const int64_t size = f->file_size();
        int64_t pos = 0;
        for (;;) {
            RecordCheck c =
                check_record(f->data() + pos, size - pos, f->file_from_offset() + pos, check_crc);
            if (c.kind == RecordCheck::kMessage) {
                pos += c.size;
                ++res.records_scanned;
                if ((res.records_scanned & 4095) == 0) {
                    (void)progress.update(f->file_from_offset() + pos);
                }
                continue;
            }
            if (c.kind == RecordCheck::kBlank) {
                pos = size;
                break;
            }
            stopped = true;
            res.cut_reason = c.reason;
            break;
        }
        process = f->file_from_offset() + pos;
    }
    (void)progress.finish(process);
    res.max_offset = PhysicalOffset(process);
    int64_t on_disk_end = files.back()->file_from_offset() + files.back()->file_size();
    res.bytes_truncated = on_disk_end - process;
    if (!res.cut_reason.empty()) {
        spdlog::warn("CommitLog recovery: cut at offset {}: {} (scanned {} records from {})",
                     process, res.cut_reason, res.records_scanned, res.scan_from);
    } else {
        spdlog::info("CommitLog recovery: valid data ends at {} ({} records scanned from {})",
                     process, res.records_scanned, res.scan_from);
    }
    COMET_RETURN_IF_ERROR(queue_.truncate_dirty_files(process));
    queue_.set_flushed_where(process);
    max_offset_.store(process);
    {
        MutexLock l(put_mu_);
        reserved_ = process;
        reserved_pub_.store(process);
        write_file_.reset();
        ring_room_end_ = 0;
        slot_room_end_ = 0;
    }
    return res;
}

void CommitLog::check_invariants() const {
    queue_.check_invariants();
    COMET_CHECK(queue_.flushed_where() <= std::max<int64_t>(max_offset_.load(), 0) ||
                    queue_.file_count() == 0,
                "flushed {} beyond max offset {}", queue_.flushed_where(), max_offset_.load());
}

}  // namespace comet::store
