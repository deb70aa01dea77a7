// CommitLog put path: checks and encoding outside any lock, then one short critical section
// under put_mu_ (the *_locked functions) that assigns the queue and physical offsets and places
// the records: copied (or encoded in place) into the write ring and queued for the commit
// thread, or, without a write buffer, copied into the mapping and completed at once.
// Threads: any putting thread (server I/O threads, broker services, a completion that puts
// again, on the commit thread). Completions and finish_put run with no lock held. A put that
// waits for ring space may write a chunk of the ring itself (help_commit, commit_log_commit.cc:
// commit_round_mu_ try-locked under put_mu_, no completions).

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <future>
#include <utility>

#include "base/bytes.h"
#include "protocol/message_decoder.h"
#include "protocol/message_id.h"
#include "store/commit_log.h"
#include "store/commit_log_internal.h"
#include "store/consume_queue_unit.h"
#include "store/fast_crc32.h"
#include "store/stored_message_encoder.h"

namespace comet::store {

namespace pm = comet::protocol;
using commit_log_internal::failed;
using commit_log_internal::tls_batch_log;
using commit_log_internal::tls_batch_open;
using commit_log_internal::tls_in_commit;
using commit_log_internal::tls_queue_key;

namespace {

constexpr int32_t kEndFileMinBlankLength = 8;  // Java END_FILE_MIN_BLANK_LENGTH
constexpr int64_t kMaxRecordOverhead = 64 * 1024;

// A segment could not be created: DISK_FULL when the disk is, CREATE_MAPPED_FILE_FAILED.
PutMessageResult segment_failed(const Status& st, RunningFlags* flags) {
    if (st.code() == Errc::kResourceExhausted) {
        flags->set(RunningFlags::kDiskFull);
    }
    return failed(PutMessageStatus::kCreateMappedFileFailed,
                  "create mapped file failed, server is busy or broken: " + st.message());
}

std::string& tls_buffer() {
    thread_local std::string buf;
    return buf;
}

// Appends the offset message id (protocol::write_offset_msg_id) without temporaries.
void append_offset_msg_id(OffsetMsgIds* out, const pm::HostAddress& host, int64_t offset) {
    char d[pm::kMaxOffsetMsgIdChars];
    const char* end = pm::write_offset_msg_id(host, offset, d);
    out->append(std::string_view(d, static_cast<size_t>(end - d)));
}

// The END_OF_FILE filler's head at `out`: [int32 gap][int32 BLANK_MAGIC_CODE]. Requires gap >= 8.
void write_blank_filler(uint8_t* out, int64_t gap) {
    put_be32(out, static_cast<uint32_t>(gap));
    put_be32(out + 4, static_cast<uint32_t>(pm::kBlankMagicCode));
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

void CommitLog::put_message(const pm::MessageExt& msg, PutCompletion done) {
    put_message(msg, msg.body, std::move(done));
}

void CommitLog::put_message(const pm::MessageExt& msg, std::string_view body, PutCompletion done) {
    if (std::optional<PutMessageResult> refused = refuse_put()) {
        done(std::move(*refused));
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
    if (std::optional<PutMessageResult> illegal = check_properties_and_topic(msg, props)) {
        done(std::move(*illegal));
        return;
    }
    thread_local std::vector<Slice> slices;
    if (ring_ != nullptr) {
        put_single_to_ring(msg, body, props, slices, done);
        return;
    }
    put_single_encoded(msg, body, props, slices, done);
}

std::optional<PutMessageResult> CommitLog::refuse_put() const {
    if (!accepting_.load()) {
        return failed(PutMessageStatus::kServiceNotAvailable, "message store is not running");
    }
    if (!flags_->is_writeable()) {
        return failed(
            PutMessageStatus::kServiceNotAvailable,
            fmt::format("message store is not writeable, flags {:#x}", flags_->flag_bits()));
    }
    // Java checkStoreStatus: refused before the put lock while the page cache is busy.
    if (is_os_page_cache_busy()) {
        return failed(PutMessageStatus::kOsPageCacheBusy,
                      "CommitLog write buffer full for longer than osPageCacheBusyTimeOutMills");
    }
    return std::nullopt;
}

std::optional<PutMessageResult> CommitLog::check_properties_and_topic(
    const pm::MessageExt& msg, std::string_view props) const {
    const size_t props_size = props.size();
    if (props_size > static_cast<size_t>(pm::kMaxPropertiesLength)) {
        return failed(
            PutMessageStatus::kPropertiesSizeExceeded,
            fmt::format("properties size {} exceeds {}", props_size, pm::kMaxPropertiesLength));
    }
    if (msg.topic.empty() || msg.topic.size() > 32767 ||
        (msg.topic.size() > 127 && !config_.auto_message_version_on_topic_len)) {
        return failed(PutMessageStatus::kMessageIllegal,
                      fmt::format("topic length {} is invalid", msg.topic.size()));
    }
    return std::nullopt;
}

bool CommitLog::record_too_large(int64_t total) const {
    return total > static_cast<int64_t>(config_.max_message_size) + kMaxRecordOverhead ||
           total + kEndFileMinBlankLength > config_.mapped_file_size_commit_log;
}

void CommitLog::put_single_to_ring(const pm::MessageExt& msg, std::string_view body,
                                   std::string_view props, std::vector<Slice>& slices,
                                   PutCompletion& done) {
    // Sized now, encoded later straight into the write buffer (no intermediate copy).
    auto layout = layout_stored_message(msg, body, props, store_host_);
    if (!layout.is_ok()) {
        done(failed(PutMessageStatus::kMessageIllegal, layout.status().message()));
        return;
    }
    const int64_t total = layout.value().total;
    if (record_too_large(total)) {
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
}

void CommitLog::put_single_encoded(const pm::MessageExt& msg, std::string_view body,
                                   std::string_view props, std::vector<Slice>& slices,
                                   PutCompletion& done) {
    // QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP are patched at append; STOREHOST is ours.
    std::string& buf = tls_buffer();
    buf.clear();
    Status st = encode_stored_message(msg, body, props, store_host_, &buf);
    if (!st.is_ok()) {
        done(failed(PutMessageStatus::kMessageIllegal, st.message()));
        return;
    }
    int64_t len = static_cast<int64_t>(buf.size());
    if (record_too_large(len)) {
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

// Per-thread scratch, like the encode buffer: a steady stream of batches allocates nothing per
// message (issue 16).
struct CommitLog::BatchScratch {
    std::vector<pm::BatchEntry> entries;
    std::string batch_props;
    std::vector<Slice> slices;
    pm::MessageExt m;
};

void CommitLog::put_messages(MessageBatch batch, PutCompletion done) {
    if (std::optional<PutMessageResult> refused = refuse_put()) {
        done(std::move(*refused));
        return;
    }
    if (std::optional<PutMessageResult> illegal = check_batch(batch)) {
        done(std::move(*illegal));
        return;
    }
    thread_local BatchScratch scratch;
    if (Status st = pm::decode_batch_body(batch.body, &scratch.entries); !st.is_ok()) {
        done(failed(PutMessageStatus::kMessageIllegal, st.message()));
        return;
    }
    if (scratch.entries.empty()) {
        done(failed(PutMessageStatus::kMessageIllegal, "batch message has no messages"));
        return;
    }
    pm::message_properties_to_string(batch.properties, &scratch.batch_props);
    std::string& buf = tls_buffer();
    buf.clear();
    scratch.slices.clear();
    bool wait_ok = true;
    if (std::optional<PutMessageResult> illegal = encode_batch(batch, scratch, buf, &wait_ok)) {
        done(std::move(*illegal));
        return;
    }
    int64_t len = static_cast<int64_t>(buf.size());
    if (len + kEndFileMinBlankLength > config_.mapped_file_size_commit_log ||
        len > INT32_MAX - kMaxRecordOverhead) {
        done(failed(PutMessageStatus::kMessageIllegal,
                    fmt::format("batch of {} bytes does not fit a CommitLog segment", len)));
        return;
    }
    append_and_complete(&buf, nullptr, scratch.slices, tls_queue_key(batch.topic, batch.queue_id),
                        wait_ok, std::move(done));
}

std::optional<PutMessageResult> CommitLog::check_batch(const MessageBatch& batch) {
    int32_t tran = pm::sysflag::transaction_value(batch.sys_flag);
    if (tran == pm::sysflag::kTransactionPreparedType ||
        tran == pm::sysflag::kTransactionCommitType) {
        return failed(PutMessageStatus::kMessageIllegal,
                      "batch message does not support transaction");
    }
    if (const std::string* delay = batch.properties.get(pm::property::kDelayTimeLevel);
        delay != nullptr && *delay != "0") {
        return failed(PutMessageStatus::kMessageIllegal,
                      "batch message does not support delay level");
    }
    if (batch.topic.empty() || batch.topic.size() > 127) {
        return failed(PutMessageStatus::kMessageIllegal,
                      fmt::format("batch topic length {} is invalid", batch.topic.size()));
    }
    return std::nullopt;
}

std::optional<PutMessageResult> CommitLog::encode_batch(const MessageBatch& batch,
                                                        BatchScratch& scratch, std::string& buf,
                                                        bool* wait_ok) const {
    const std::string& batch_props = scratch.batch_props;
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
    for (const auto& e : scratch.entries) {
        if (e.body.size() > static_cast<size_t>(config_.max_message_size)) {
            return failed(PutMessageStatus::kMessageIllegal,
                          fmt::format("batch message body size {} exceeds maxMessageSize {}",
                                      e.body.size(), config_.max_message_size));
        }
        // Java MessageExtBatchEncoder: the message's own properties, then the batch's.
        std::string& props = *m.stored_properties;
        props.assign(e.properties);
        if (!props.empty() && !batch_props.empty() && props.back() != pm::kPropertySeparator) {
            props.push_back(pm::kPropertySeparator);
        }
        props += batch_props;
        if (props.size() > static_cast<size_t>(pm::kMaxPropertiesLength)) {
            return failed(PutMessageStatus::kPropertiesSizeExceeded,
                          fmt::format("batch message properties size {} exceeds {}", props.size(),
                                      pm::kMaxPropertiesLength));
        }
        m.flag = e.flag;
        m.body.assign(e.body);
        m.properties.assign_from_string(props);
        *wait_ok = *wait_ok && m.wait_store_msg_ok();
        size_t pos = buf.size();
        Status st = encode_stored_message(m, *m.stored_properties, store_host_, &buf);
        if (!st.is_ok()) {
            return failed(PutMessageStatus::kMessageIllegal, st.message());
        }
        scratch.slices.push_back(
            Slice{pos, static_cast<int32_t>(buf.size() - pos),
                  static_cast<int32_t>(get_be32(reinterpret_cast<const uint8_t*>(buf.data()) + pos +
                                                pm::kMsgSysFlagPos))});
    }
    return std::nullopt;
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
            write_blank_filler(file->data() + wrote, free);
        }
        file->set_wrote_position(static_cast<int32_t>(file_size));
        max_offset_.store(file->file_from_offset() + file_size);
        file = nullptr;
    }
    COMET_CHECK(file != nullptr, "no room for a {}-byte append after rolling", total);
    const int32_t wrote = file->wrote_position();
    const int64_t phys = file->file_from_offset() + wrote;
    const int64_t store_ts = clock_->wall_millis();
    begin_in_lock_ms_.store(store_ts, std::memory_order_relaxed);  // pageCacheLockTimeMills
    int64_t& next_queue_offset = queue_offset_slot_locked(key);
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

int64_t& CommitLog::queue_offset_slot_locked(std::string_view key) {
    auto slot = topic_queue_table_.find(key);
    if (slot == topic_queue_table_.end()) {
        slot = topic_queue_table_.emplace(std::string(key), 0).first;
    }
    return slot->second;
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
    const int64_t at = reserved_;
    int64_t gap = 0;
    if (Status st = select_ring_segment_locked(at, total, &gap); !st.is_ok()) {
        return segment_failed(st, flags_);
    }
    const auto capacity = static_cast<int64_t>(ring_->capacity());
    const bool fits = gap + total <= capacity;
    const RingSpace space = wait_for_ring_space(fits ? at + gap + total : at + capacity, true);
    if (space == RingSpace::kBusy) {
        return failed(PutMessageStatus::kOsPageCacheBusy,
                      "CommitLog write buffer full for longer than osPageCacheBusyTimeOutMills");
    }
    if (space != RingSpace::kFree) {
        return failed(PutMessageStatus::kServiceNotAvailable,
                      "CommitLog write buffer: store is not writeable or not started");
    }
    // Only now (the put goes ahead) past END_OF_FILE: a refused put leaves write_file_ at the
    // segment holding reserved_, where the next put looks for it.
    if (gap > 0) {
        auto next = queue_.get_mapped_file_for_write(at + gap);
        if (!next.is_ok()) {
            return segment_failed(next.status(), flags_);
        }
        write_file_ = std::move(next).value();
    }
    const int64_t store_ts = clock_->wall_millis();
    begin_in_lock_ms_.store(store_ts, std::memory_order_relaxed);  // pageCacheLockTimeMills
    int64_t& next_queue_offset = queue_offset_slot_locked(key);
    const RingPlacement place{at, gap, total, store_ts, next_queue_offset};
    int64_t next = 0;
    if (fits) {
        next = copy_into_ring_locked(encoded, single, slices, place);
    } else if (std::optional<PutMessageResult> failure =
                   write_past_ring_locked(encoded, single, slices, place, &next)) {
        return failure;
    }
    next_queue_offset = next;
    write_file_->set_store_timestamp(store_ts);
    reserved_ = place.phys() + total;
    queue_pending_put_locked(place, slices, wait_store_msg_ok, done);
    if (single != nullptr && single->hinted) {
        push_put_hint_locked(*single, place, next);
    }
    reserved_pub_.store(reserved_);  // seq_cst: pairs with committer_idle_ in wake_committer
    return std::nullopt;
}

Status CommitLog::select_ring_segment_locked(int64_t at, int64_t total, int64_t* gap) {
    const int64_t file_size = queue_.mapped_file_size();
    if (write_file_ == nullptr || at < write_file_->file_from_offset() ||
        at >= write_file_->file_from_offset() + file_size) {
        auto fr = queue_.get_mapped_file_for_write(at);
        if (!fr.is_ok()) {
            return fr.status();
        }
        write_file_ = std::move(fr).value();
    }
    const int64_t free = file_size - (at - write_file_->file_from_offset());
    // END_OF_FILE: the rest of the segment becomes a blank filler and the records go to the
    // next one, which the caller creates (before anything is reserved) once the put goes ahead.
    *gap = total + kEndFileMinBlankLength <= free ? 0 : free;
    return Status::ok();
}

std::string& CommitLog::records_bytes(std::string* encoded, const SingleRecord* single,
                                      int64_t total) const {
    if (encoded != nullptr) {
        return *encoded;
    }
    std::string& b = tls_buffer();
    b.resize(static_cast<size_t>(total));
    write_stored_message(reinterpret_cast<uint8_t*>(b.data()), single->layout, *single->msg,
                         single->body, single->props, store_host_, single->body_crc);
    return b;
}

int64_t CommitLog::copy_into_ring_locked(std::string* encoded, const SingleRecord* single,
                                         const std::vector<Slice>& slices,
                                         const RingPlacement& place) {
    if (place.gap > 0) {
        ring_->zero(place.at, static_cast<size_t>(place.gap));
        if (place.gap >= 8) {
            uint8_t filler[8];
            write_blank_filler(filler, place.gap);
            ring_->copy_in(place.at, filler, sizeof(filler));
        }
    }
    const int64_t phys = place.phys();
    uint8_t* dst = ring_->contiguous(phys, static_cast<size_t>(place.total));
    if (encoded == nullptr && dst != nullptr) {
        // Encoded in place: the body is copied once, from the request into the ring.
        write_stored_message(dst, single->layout, *single->msg, single->body, single->props,
                             store_host_, single->body_crc);
        return patch_records(dst, slices, phys, place.first_queue_offset, place.store_ts);
    }
    std::string& e = records_bytes(encoded, single, place.total);
    const int64_t next = patch_records(reinterpret_cast<uint8_t*>(e.data()), slices, phys,
                                       place.first_queue_offset, place.store_ts);
    ring_->copy_in(phys, e.data(), static_cast<size_t>(place.total));
    return next;
}

std::optional<PutMessageResult> CommitLog::write_past_ring_locked(std::string* encoded,
                                                                  const SingleRecord* single,
                                                                  const std::vector<Slice>& slices,
                                                                  const RingPlacement& place,
                                                                  int64_t* next_queue_offset) {
    std::string& e = records_bytes(encoded, single, place.total);
    const int64_t phys = place.phys();
    *next_queue_offset = patch_records(reinterpret_cast<uint8_t*>(e.data()), slices, phys,
                                       place.first_queue_offset, place.store_ts);
    Status st = Status::ok();
    if (place.gap >= 8) {
        uint8_t filler[8];
        write_blank_filler(filler, place.gap);
        st = write_direct_locked(place.at, std::string_view(reinterpret_cast<char*>(filler), 8));
    }
    if (st.is_ok()) {
        if (place.gap > 0) {
            auto old = queue_.find_mapped_file_by_offset(place.at);
            old->set_wrote_position(static_cast<int32_t>(queue_.mapped_file_size()));
            max_offset_.store(phys);
        }
        st = write_direct_locked(phys, e);
    }
    if (!st.is_ok()) {
        flags_->set(RunningFlags::kNotWritable);
        reserved_ = std::max(reserved_, max_offset_.load());  // a written filler stays
        reserved_pub_.store(reserved_);
        spdlog::error("CommitLog write of {} bytes at {} failed; store is read-only: {}",
                      place.total, phys, st.to_string());
        return failed(PutMessageStatus::kUnknownError,
                      "CommitLog write failed, store is read-only: " + st.message());
    }
    return std::nullopt;
}

void CommitLog::queue_pending_put_locked(const RingPlacement& place,
                                         const std::vector<Slice>& slices, bool wait_store_msg_ok,
                                         PutCompletion& done) {
    const uint64_t head = slot_head_.load(std::memory_order_relaxed);
    PendingPut& p = slots_[head % kPendingSlots];
    p.wrote_offset = place.phys();
    p.store_timestamp = place.store_ts;
    p.logics_offset = place.first_queue_offset;
    p.wrote_bytes = static_cast<int32_t>(place.total);
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
}

void CommitLog::push_put_hint_locked(const SingleRecord& single, const RingPlacement& place,
                                     int64_t next_queue_offset) {
    DispatchRequest* h = hints_->begin_push();
    if (h == nullptr) {
        return;  // the hint ring is full: the dispatcher decodes this record
    }
    h->topic.assign(single.msg->topic);
    h->queue_id = single.msg->queue_id;
    h->commit_log_offset = PhysicalOffset(place.phys());
    h->msg_size = static_cast<int32_t>(place.total);
    h->tags_code = single.tags_code;
    h->store_timestamp = place.store_ts;
    // The QUEUEOFFSET patch_records wrote for this one record.
    h->consume_queue_offset =
        QueueOffset(next_queue_offset > place.first_queue_offset ? place.first_queue_offset : 0);
    h->keys.assign(single.scanned.keys);
    h->uniq_key.assign(single.scanned.uniq_key);
    h->sys_flag = single.layout.sys_flag;
    h->prepared_transaction_offset = single.msg->prepared_transaction_offset;
    hints_->end_push();
}

CommitLog::RingSpace CommitLog::wait_for_ring_space(int64_t end, bool bounded) {
    const auto cap = static_cast<int64_t>(ring_->capacity());
    const uint64_t head = slot_head_.load(std::memory_order_relaxed);
    // Fast path on what was seen free last time: no read of the commit thread's cache lines.
    if (end <= ring_room_end_ && head < slot_room_end_) {
        return RingSpace::kFree;
    }
    auto full = [&] {
        ring_room_end_ = max_offset_.load() + cap;
        slot_room_end_ = slot_tail_.load() + kPendingSlots;
        return end > ring_room_end_ || head >= slot_room_end_;
    };
    const int64_t timeout_ns = int64_t{config_.os_page_cache_busy_timeout_ms} * 1'000'000;
    int64_t waiting_from = 0;  // this put's first wait
    while (full()) {
        if (!flags_->is_writeable() || commit_failed_.load() || !committer_running_.load() ||
            tls_in_commit) {
            return RingSpace::kUnavailable;
        }
        if (help_commit()) {
            continue;  // wrote part of the ring on this thread; the commit thread completes
        }
        if (bounded) {
            // Java refuses puts once the put lock was held longer than the timeout: a put
            // holding put_mu_ here holds every other put (and its I/O thread) behind it.
            const int64_t now = std::max<int64_t>(1, clock_->now().time_since_epoch().count());
            waiting_from = waiting_from == 0 ? now : waiting_from;
            int64_t since = ring_wait_since_ns_.load();
            if (since == 0) {
                ring_wait_since_ns_.store(waiting_from);
                since = waiting_from;
            }
            if (now - since > timeout_ns) {
                return RingSpace::kBusy;  // the busy state stays until a round frees space
            }
        }
        MutexLock l(commit_mu_);
        space_wanted_.store(true);
        commit_wake_ = true;
        commit_cv_.notify_one();
        if (full()) {
            space_cv_.wait_for(commit_mu_, std::chrono::milliseconds(1));
        }
    }
    if (waiting_from != 0) {
        ring_wait_since_ns_.store(0);
    }
    return RingSpace::kFree;
}

bool CommitLog::is_os_page_cache_busy() const {
    const int64_t since = ring_wait_since_ns_.load(std::memory_order_relaxed);
    if (since == 0) {
        return false;
    }
    const int64_t waited = clock_->now().time_since_epoch().count() - since;
    return waited > int64_t{config_.os_page_cache_busy_timeout_ms} * 1'000'000;
}

int64_t CommitLog::ring_wait_millis() const {
    const int64_t since = ring_wait_since_ns_.load(std::memory_order_relaxed);
    if (since == 0) {
        return 0;
    }
    return std::max<int64_t>(0, clock_->now().time_since_epoch().count() - since) / 1'000'000;
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
        flush_->wait_for_flush(
            end_offset, [r = std::move(r), done = std::make_shared<PutCompletion>(std::move(done))](
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
            begin_in_lock_ms_.store(0, std::memory_order_relaxed);
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
        begin_in_lock_ms_.store(0, std::memory_order_relaxed);
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
}  // namespace comet::store
