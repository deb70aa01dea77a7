#include "store/reput.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <charconv>
#include <chrono>
#include <optional>

#include "base/bytes.h"
#include "base/log_tag.h"
#include "base/progress_log.h"
#include "protocol/message_decoder.h"
#include "protocol/message_ext.h"
#include "store/consume_queue_unit.h"
#include "store/dispatch_hints.h"

namespace comet::store {

std::vector<int64_t> parse_message_delay_level(std::string_view text) {
    std::vector<int64_t> out;
    size_t s = 0;
    while (s < text.size()) {
        size_t e = text.find(' ', s);
        if (e == std::string_view::npos) {
            e = text.size();
        }
        const std::string_view item = text.substr(s, e - s);
        s = e + 1;
        if (item.size() < 2) {
            continue;
        }
        int64_t mult = 0;
        switch (item.back()) {
            case 's':
                mult = 1000;
                break;
            case 'm':
                mult = 60 * 1000;
                break;
            case 'h':
                mult = 60 * 60 * 1000;
                break;
            case 'd':
                mult = 24 * 60 * 60 * 1000;
                break;
            default:
                continue;
        }
        int64_t n = 0;
        const auto r = std::from_chars(item.data(), item.data() + item.size() - 1, n);
        if (r.ec == std::errc() && r.ptr == item.data() + item.size() - 1) {
            out.push_back(n * mult);
        }
    }
    return out;
}

namespace {

// Bounds-checked big-endian reads over one record (the light dispatch decoder).
struct RecordCursor {
    const uint8_t* p;
    size_t size;
    size_t pos = 0;

    bool skip(size_t n) {
        if (size - pos < n) {
            return false;
        }
        pos += n;
        return true;
    }
    bool be16(uint32_t* v) {
        if (size - pos < 2) {
            return false;
        }
        *v = (static_cast<uint32_t>(p[pos]) << 8) | p[pos + 1];
        pos += 2;
        return true;
    }
    bool be32(uint32_t* v) {
        if (size - pos < 4) {
            return false;
        }
        *v = get_be32(p + pos);
        pos += 4;
        return true;
    }
    bool be64(uint64_t* v) {
        if (size - pos < 8) {
            return false;
        }
        *v = get_be64(p + pos);
        pos += 8;
        return true;
    }
    bool bytes(size_t n, std::string_view* out) {
        if (size - pos < n) {
            return false;
        }
        *out = std::string_view(reinterpret_cast<const char*>(p + pos), n);
        pos += n;
        return true;
    }
};

}  // namespace

DispatchProperties scan_dispatch_properties(std::string_view s) {
    namespace prop = protocol::property;
    DispatchProperties out;
    size_t start = 0;
    while (start < s.size()) {
        size_t end = s.find(protocol::kPropertySeparator, start);
        if (end == std::string_view::npos) {
            end = s.size();
        }
        const std::string_view item = s.substr(start, end - start);
        start = end + 1;
        const size_t sep = item.find(protocol::kNameValueSeparator);
        if (sep == std::string_view::npos || sep == 0 || sep + 1 >= item.size()) {
            continue;
        }
        const std::string_view name = item.substr(0, sep);
        const std::string_view value = item.substr(sep + 1);
        if (name == prop::kTags) {
            out.tags = value;
        } else if (name == prop::kKeys) {
            out.keys = value;
        } else if (name == prop::kUniqClientMessageIdKeyIdx) {
            out.uniq_key = value;
        } else if (name == prop::kDelayTimeLevel) {
            out.delay = value;
        }
    }
    return out;
}

CheckResult check_message_and_return_size(const uint8_t* data, size_t len, bool check_crc,
                                          const std::vector<int64_t>& delay_levels_ms,
                                          DispatchRequest* out, int32_t* size, bool read_keys) {
    if (len < 8) {
        return CheckResult::kEnd;
    }
    const auto total = static_cast<int32_t>(get_be32(data));
    const auto magic = static_cast<int32_t>(get_be32(data + 4));
    if (magic == protocol::kBlankMagicCode) {
        return CheckResult::kBlank;
    }
    if (magic != protocol::kMessageMagicCodeV1 && magic != protocol::kMessageMagicCodeV2) {
        return CheckResult::kEnd;
    }
    if (total <= 8 || static_cast<size_t>(total) > len) {
        return CheckResult::kEnd;
    }
    *size = total;
    // Light decode: only the fields the ConsumeQueue, the index and the arrival notification
    // need; the body is skipped (read only to check its CRC) and no message id is formatted.
    RecordCursor r{data, static_cast<size_t>(total), 8};
    uint32_t body_crc = 0;
    uint32_t queue_id = 0;
    uint64_t queue_offset = 0;
    uint64_t phys = 0;
    uint32_t sys_flag = 0;
    uint64_t store_ts = 0;
    uint64_t prepared = 0;
    uint32_t body_len = 0;
    std::string_view body;
    bool ok = r.be32(&body_crc) && r.be32(&queue_id) && r.skip(4) /* FLAG */ &&
              r.be64(&queue_offset) && r.be64(&phys) && r.be32(&sys_flag);
    const auto sflag = static_cast<int32_t>(sys_flag);
    ok = ok && r.skip(8) /* BORNTIMESTAMP */ &&
         r.skip((sflag & protocol::sysflag::kBornHostV6) != 0 ? 20 : 8) && r.be64(&store_ts) &&
         r.skip((sflag & protocol::sysflag::kStoreHostAddressV6) != 0 ? 20 : 8) &&
         r.skip(4) /* RECONSUMETIMES */ && r.be64(&prepared) && r.be32(&body_len) &&
         r.bytes(body_len, &body);
    uint32_t topic_len = 0;
    if (ok && magic == protocol::kMessageMagicCodeV2) {
        ok = r.be16(&topic_len);
    } else if (ok) {
        ok = r.skip(1);
        topic_len = data[r.pos - 1];
        ok = ok && topic_len <= 127;  // Java reads the v1 length byte signed
    }
    std::string_view topic;
    uint32_t props_len = 0;
    std::string_view props;
    ok = ok && r.bytes(topic_len, &topic) && r.be16(&props_len) && r.bytes(props_len, &props) &&
         r.pos == r.size;
    if (!ok) {
        spdlog::error("dispatch: record of {} bytes does not decode (lengths inconsistent)", total);
        return CheckResult::kCorrupt;
    }
    if (check_crc && protocol::body_crc32(body) != static_cast<int32_t>(body_crc)) {
        spdlog::error("dispatch: record of {} bytes has a bad body CRC", total);
        return CheckResult::kCorrupt;
    }
    const DispatchProperties p = scan_dispatch_properties(props);
    out->topic.assign(topic);
    out->queue_id = static_cast<int32_t>(queue_id);
    out->commit_log_offset = PhysicalOffset(static_cast<int64_t>(phys));
    out->msg_size = total;
    out->store_timestamp = static_cast<int64_t>(store_ts);
    out->consume_queue_offset = QueueOffset(static_cast<int64_t>(queue_offset));
    out->sys_flag = sflag;
    out->prepared_transaction_offset = static_cast<int64_t>(prepared);
    if (read_keys) {
        out->keys.assign(p.keys);
        out->uniq_key.assign(p.uniq_key);
    } else {
        out->keys.clear();
        out->uniq_key.clear();
    }
    out->tags_code = tags_string_to_tags_code(p.tags);
    if (out->topic == kScheduleTopic) {
        // Java CommitLog#checkMessageAndReturnSize: tagsCode = delivery timestamp.
        int level = 0;
        if (!p.delay.empty() &&
            std::from_chars(p.delay.data(), p.delay.data() + p.delay.size(), level).ec ==
                std::errc() &&
            level > 0 && !delay_levels_ms.empty()) {
            const size_t idx = std::min(static_cast<size_t>(level), delay_levels_ms.size()) - 1;
            out->tags_code = out->store_timestamp + delay_levels_ms[idx];
        }
    }
    return CheckResult::kMessage;
}

ReputMessageService::ReputMessageService(const CommitLogReader& reader, DispatchFn dispatch,
                                         std::vector<int64_t> delay_levels_ms, PassEndFn pass_end)
    : reader_(reader),
      dispatch_(std::move(dispatch)),
      pass_end_(std::move(pass_end)),
      delay_levels_ms_(std::move(delay_levels_ms)) {}

ReputMessageService::~ReputMessageService() { shutdown(); }

void ReputMessageService::set_reput_from_offset(PhysicalOffset offset) {
    reput_from_offset_.store(offset.value(), std::memory_order_release);
}

int64_t ReputMessageService::behind() const {
    return std::max<int64_t>(0, reader_.dispatchable_max_offset().value() -
                                    reput_from_offset_.load(std::memory_order_acquire));
}

// Records are handed to dispatch_ one by one; what they produce becomes visible at the pass end
// (pass_end_), and only then does reput_from_offset_ move past them: whoever reads the offset (a
// new leader waiting for dispatch before it reloads its queue offsets) finds their ConsumeQueue
// units written.
struct ReputMessageService::Pass {
    int64_t from = 0;                // start of the bytes being read
    int64_t reached = 0;             // where the next record starts (published at the pass end)
    int64_t pending = 0;             // records handed to dispatch_ since the last pass end
    int64_t dispatched = 0;          // records made visible by this call
    DispatchHints* hints = nullptr;  // what the put path appended (null: decode every record)
};

Result<int64_t> ReputMessageService::do_reput() {
    MutexLock l(reput_mu_);
    Pass pass;
    pass.from = pass_start_locked();
    pass.reached = pass.from;
    pass.hints = reader_.hints();
    while (true) {
        const int64_t max = reader_.dispatchable_max_offset().value();
        if (pass.from >= max) {
            break;
        }
        auto view = reader_.read_from(PhysicalOffset(pass.from));
        if (!view.has_value() || view->empty()) {
            break;
        }
        // Never look past the dispatchable end (uncommitted bytes under DLedger).
        const size_t avail = static_cast<size_t>(
            std::min<int64_t>(static_cast<int64_t>(view->size), max - pass.from));
        size_t pos = 0;
        BytesEnd end = BytesEnd::kConsumed;
        COMET_RETURN_IF_ERROR(dispatch_bytes_locked(view->data, avail, pass, &pos, &end));
        if (end == BytesEnd::kFiller) {
            pass.from = reader_.roll_next_file(PhysicalOffset(pass.from)).value();
            pass.reached = pass.from;
            continue;
        }
        pass.from += static_cast<int64_t>(pos);
        if (end == BytesEnd::kNoRecord || pos == 0) {
            break;
        }
    }
    COMET_RETURN_IF_ERROR(end_pass_locked(pass));
    return pass.dispatched;
}

int64_t ReputMessageService::pass_start_locked() {
    int64_t from = reput_from_offset_.load(std::memory_order_acquire);
    const int64_t min = reader_.min_offset().value();
    if (from < min) {
        spdlog::warn("dispatch: reput offset {} is below the CommitLog min {}; jumping ahead", from,
                     min);
        from = min;
        reput_from_offset_.store(from, std::memory_order_release);
    }
    return from;
}

Status ReputMessageService::dispatch_bytes_locked(const uint8_t* data, size_t avail, Pass& pass,
                                                  size_t* pos, BytesEnd* end) {
    constexpr int64_t kRecordsPerPassEnd = 4096;
    while (*pos < avail) {
        int32_t size = 0;
        const int64_t at = pass.from + static_cast<int64_t>(*pos);
        const CheckResult r = next_record_locked(pass, data + *pos, avail - *pos, at,
                                                 pass.from + static_cast<int64_t>(avail), &size);
        if (r == CheckResult::kBlank) {
            *end = BytesEnd::kFiller;
            return Status::ok();
        }
        if (r == CheckResult::kEnd) {
            *end = BytesEnd::kNoRecord;
            return Status::ok();
        }
        if (r == CheckResult::kCorrupt) {
            spdlog::error("dispatch: skipping {} undecodable bytes at CommitLog offset {}", size,
                          at);
            corrupt_skipped_.fetch_add(1, std::memory_order_relaxed);
            *pos += static_cast<size_t>(size);
            pass.reached = pass.from + static_cast<int64_t>(*pos);
            continue;
        }
        DispatchRequest& req = req_;
        if (req.commit_log_offset.value() != at) {
            spdlog::error("dispatch: record at {} says its offset is {}; dispatching by position",
                          at, req.commit_log_offset.value());
            req.commit_log_offset = PhysicalOffset(at);
        }
        const Status st = dispatch_(req);
        if (!st.is_ok()) {
            // The records before this one are kept; this one is retried on the next pass.
            COMET_RETURN_IF_ERROR(end_pass_locked(pass));
            return st;
        }
        ++pass.pending;
        *pos += static_cast<size_t>(size);
        pass.reached = pass.from + static_cast<int64_t>(*pos);
        if (pass.pending >= kRecordsPerPassEnd) {
            COMET_RETURN_IF_ERROR(end_pass_locked(pass));
        }
    }
    return Status::ok();
}

CheckResult ReputMessageService::next_record_locked(const Pass& pass, const uint8_t* data,
                                                    size_t len, int64_t at, int64_t end,
                                                    int32_t* size) {
    if (pass.hints != nullptr && pass.hints->take(at, end, &req_)) {
        // The put path described this record: no read-back, no decode.
        *size = req_.msg_size;
        if (!read_keys_.load(std::memory_order_relaxed)) {
            req_.keys.clear();
            req_.uniq_key.clear();
        }
        return CheckResult::kMessage;
    }
    return check_message_and_return_size(data, len, false, delay_levels_ms_, &req_, size,
                                         read_keys_.load(std::memory_order_relaxed));
}

Status ReputMessageService::end_pass_locked(Pass& pass) {
    if (pass_end_) {
        COMET_RETURN_IF_ERROR(pass_end_());
    }
    reput_from_offset_.store(pass.reached, std::memory_order_release);
    pass.dispatched += pass.pending;
    dispatched_total_.fetch_add(pass.pending, std::memory_order_relaxed);
    pass.pending = 0;
    return Status::ok();
}

void ReputMessageService::start() {
    {
        MutexLock l(wake_mu_);
        stopping_ = false;
    }
    thread_ = tagged_thread([this] { run(); });
}

void ReputMessageService::shutdown() {
    {
        MutexLock l(wake_mu_);
        stopping_ = true;
    }
    wake_cv_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
}

void ReputMessageService::wakeup() {
    urgent_.store(true, std::memory_order_seq_cst);
    wake_pending_.store(true, std::memory_order_seq_cst);
    if (sleep_.load(std::memory_order_seq_cst) == kAwake) {
        return;  // it checks urgent_ before its next sleep
    }
    {
        MutexLock l(wake_mu_);  // orders the flags with the thread's check-then-wait
    }
    wake_calls_.fetch_add(1, std::memory_order_relaxed);
    wake_cv_.notify_one();
}

void ReputMessageService::note_appended() {
    // While a wake-up is already pending (the thread has not started its next pass yet),
    // another one adds nothing: no mutex, no futex call.
    if (wake_pending_.exchange(true, std::memory_order_seq_cst)) {
        return;
    }
    if (busy_interval_.count() > 0 && sleep_.load(std::memory_order_seq_cst) != kIdle) {
        return;  // awake, or pacing: its next pass (within busy_interval_) reads the new end
    }
    { MutexLock l(wake_mu_); }
    wake_calls_.fetch_add(1, std::memory_order_relaxed);
    wake_cv_.notify_one();
}

void ReputMessageService::run() {
    ::pthread_setname_np(::pthread_self(), "ReputMessage");
    spdlog::info("ReputMessageService started at offset {}", reput_from_offset_.load());
    int64_t failures = 0;
    // The start-up catch-up (a store recovered with a long undispatched tail, a follower that
    // was far behind) reports its progress every few seconds until it reaches the end it saw.
    const int64_t catch_up_from = reput_from_offset_.load();
    const int64_t catch_up_to = catch_up_from + behind();
    std::optional<ProgressLog> catch_up;
    if (catch_up_to > catch_up_from) {
        catch_up.emplace("dispatch catch-up (ConsumeQueue and index build)", catch_up_from,
                         catch_up_to, SystemClock::instance());
    }
    while (true) {
        {
            MutexLock l(wake_mu_);
            if (stopping_) {
                break;
            }
        }
        auto r = do_reput();
        if (catch_up.has_value()) {
            const int64_t at = reput_from_offset_.load();
            if (at >= catch_up_to) {
                (void)catch_up->finish(at);
                catch_up.reset();
            } else {
                (void)catch_up->update(at);
            }
        }
        bool idle = true;
        if (!r.is_ok()) {
            if (failures++ % 1000 == 0) {
                spdlog::error("dispatch failed at CommitLog offset {}: {} (retrying)",
                              reput_from_offset_.load(), r.status().to_string());
            }
        } else {
            failures = 0;
            idle = *r == 0;
        }
        MutexLock l(wake_mu_);
        if (!stopping_) {
            // The Mutex itself is the BasicLockable the condition variable releases while
            // waiting. A waker stores its flag, then loads sleep_; we store sleep_, then load
            // the flags: one of the two sees the other, so no wake-up is lost.
            if (idle) {
                // Every append wakes us (MessageStoreOptions::dispatch_idle_wait is only a
                // safety net): an idle broker is not woken 1,000 times a second.
                sleep_.store(kIdle, std::memory_order_seq_cst);
                if (!wake_pending_.load(std::memory_order_seq_cst)) {
                    wake_cv_.wait_for(wake_mu_,
                                      r.is_ok() ? idle_wait_ : std::chrono::milliseconds(100));
                }
            } else if (busy_interval_.count() > 0) {
                // Appends are still coming: pass again after the interval (Java polls every
                // 1 ms), sooner only when someone waits (wakeup()).
                sleep_.store(kPaced, std::memory_order_seq_cst);
                const auto until = std::chrono::steady_clock::now() + busy_interval_;
                while (!urgent_.load(std::memory_order_seq_cst) && !stopping_ &&
                       wake_cv_.wait_until(wake_mu_, until) != std::cv_status::timeout) {
                }
            }
            sleep_.store(kAwake, std::memory_order_seq_cst);
        }
        // Cleared before the next pass reads the write end: a put after this sets them again.
        urgent_.store(false, std::memory_order_seq_cst);
        wake_pending_.store(false, std::memory_order_seq_cst);
    }
    // Java's shutdown waits (bounded) for dispatch to catch up before stopping.
    for (int i = 0; i < 50 && behind() > 0; ++i) {
        auto r = do_reput();
        if (!r.is_ok() || *r == 0) {
            break;
        }
    }
    spdlog::info("ReputMessageService stopped at offset {} (behind {})", reput_from_offset_.load(),
                 behind());
}

}  // namespace comet::store
