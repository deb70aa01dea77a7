#include "store/reput.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <charconv>
#include <chrono>

#include "base/bytes.h"
#include "protocol/message_decoder.h"
#include "protocol/message_ext.h"
#include "store/consume_queue_unit.h"

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

CheckResult check_message_and_return_size(const uint8_t* data, size_t len, bool check_crc,
                                          const std::vector<int64_t>& delay_levels_ms,
                                          DispatchRequest* out, int32_t* size) {
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
    protocol::DecodeOptions opts;
    opts.read_body = check_crc;
    opts.check_crc = check_crc;
    auto msg = protocol::decode_message(
        std::string_view(reinterpret_cast<const char*>(data), static_cast<size_t>(total)), opts);
    if (!msg.is_ok()) {
        spdlog::error("dispatch: record of {} bytes does not decode: {}", total,
                      msg.status().to_string());
        return CheckResult::kCorrupt;
    }
    out->topic = std::move(msg->topic);
    out->queue_id = msg->queue_id;
    out->commit_log_offset = PhysicalOffset(msg->commit_log_offset);
    out->msg_size = total;
    out->store_timestamp = msg->store_timestamp;
    out->consume_queue_offset = QueueOffset(msg->queue_offset);
    out->sys_flag = msg->sys_flag;
    out->prepared_transaction_offset = msg->prepared_transaction_offset;
    out->keys = msg->keys();
    const std::string* uniq = msg->property(protocol::property::kUniqClientMessageIdKeyIdx);
    out->uniq_key = uniq != nullptr ? *uniq : std::string();
    out->tags_code = tags_string_to_tags_code(msg->tags());
    if (out->topic == kScheduleTopic) {
        // Java CommitLog#checkMessageAndReturnSize: tagsCode = delivery timestamp.
        const std::string* delay = msg->property(protocol::property::kDelayTimeLevel);
        int level = 0;
        if (delay != nullptr &&
            std::from_chars(delay->data(), delay->data() + delay->size(), level).ec ==
                std::errc() &&
            level > 0 && !delay_levels_ms.empty()) {
            const size_t idx = std::min(static_cast<size_t>(level), delay_levels_ms.size()) - 1;
            out->tags_code = out->store_timestamp + delay_levels_ms[idx];
        }
    }
    return CheckResult::kMessage;
}

ReputMessageService::ReputMessageService(const CommitLogReader& reader, DispatchFn dispatch,
                                         std::vector<int64_t> delay_levels_ms)
    : reader_(reader), dispatch_(std::move(dispatch)), delay_levels_ms_(std::move(delay_levels_ms)) {}

ReputMessageService::~ReputMessageService() { shutdown(); }

void ReputMessageService::set_reput_from_offset(PhysicalOffset offset) {
    reput_from_offset_.store(offset.value(), std::memory_order_release);
}

int64_t ReputMessageService::behind() const {
    return std::max<int64_t>(0, reader_.dispatchable_max_offset().value() -
                                    reput_from_offset_.load(std::memory_order_acquire));
}

Result<int64_t> ReputMessageService::do_reput() {
    MutexLock l(reput_mu_);
    int64_t dispatched = 0;
    int64_t from = reput_from_offset_.load(std::memory_order_acquire);
    const int64_t min = reader_.min_offset().value();
    if (from < min) {
        spdlog::warn("dispatch: reput offset {} is below the CommitLog min {}; jumping ahead", from,
                     min);
        from = min;
        reput_from_offset_.store(from, std::memory_order_release);
    }
    DispatchRequest req;
    while (true) {
        const int64_t max = reader_.dispatchable_max_offset().value();
        if (from >= max) {
            break;
        }
        auto view = reader_.read_from(PhysicalOffset(from));
        if (!view.has_value() || view->empty()) {
            break;
        }
        // Never look past the dispatchable end (uncommitted bytes under DLedger).
        const size_t avail = static_cast<size_t>(std::min<int64_t>(
            static_cast<int64_t>(view->size), max - from));
        size_t pos = 0;
        bool roll = false;
        bool stop = false;
        while (pos < avail) {
            int32_t size = 0;
            const CheckResult r = check_message_and_return_size(
                view->data + pos, avail - pos, false, delay_levels_ms_, &req, &size);
            if (r == CheckResult::kBlank) {
                roll = true;
                break;
            }
            if (r == CheckResult::kEnd) {
                stop = true;
                break;
            }
            if (r == CheckResult::kCorrupt) {
                spdlog::error("dispatch: skipping {} undecodable bytes at CommitLog offset {}",
                              size, from + static_cast<int64_t>(pos));
                corrupt_skipped_.fetch_add(1, std::memory_order_relaxed);
                pos += static_cast<size_t>(size);
                continue;
            }
            if (req.commit_log_offset.value() != from + static_cast<int64_t>(pos)) {
                spdlog::error("dispatch: record at {} says its offset is {}; dispatching by "
                              "position",
                              from + static_cast<int64_t>(pos), req.commit_log_offset.value());
                req.commit_log_offset = PhysicalOffset(from + static_cast<int64_t>(pos));
            }
            const Status st = dispatch_(req);
            if (!st.is_ok()) {
                reput_from_offset_.store(from + static_cast<int64_t>(pos),
                                         std::memory_order_release);
                return st;
            }
            ++dispatched;
            dispatched_total_.fetch_add(1, std::memory_order_relaxed);
            pos += static_cast<size_t>(size);
            reput_from_offset_.store(from + static_cast<int64_t>(pos), std::memory_order_release);
        }
        if (roll) {
            from = reader_.roll_next_file(PhysicalOffset(from)).value();
            reput_from_offset_.store(from, std::memory_order_release);
            continue;
        }
        from += static_cast<int64_t>(pos);
        if (stop || pos == 0) {
            break;
        }
    }
    return dispatched;
}

void ReputMessageService::start() {
    {
        MutexLock l(wake_mu_);
        stopping_ = false;
    }
    thread_ = std::thread([this] { run(); });
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
    {
        MutexLock l(wake_mu_);
        wake_pending_ = true;
    }
    wake_cv_.notify_one();
}

void ReputMessageService::run() {
    ::pthread_setname_np(::pthread_self(), "ReputMessage");
    spdlog::info("ReputMessageService started at offset {}", reput_from_offset_.load());
    int64_t failures = 0;
    while (true) {
        {
            MutexLock l(wake_mu_);
            if (stopping_) {
                break;
            }
        }
        auto r = do_reput();
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
        if (idle && !wake_pending_ && !stopping_) {
            // Java sleeps 1 ms between passes; puts wake us earlier. The Mutex itself is the
            // BasicLockable the condition variable releases while waiting.
            wake_cv_.wait_for(wake_mu_, std::chrono::milliseconds(r.is_ok() ? 1 : 100));
        }
        wake_pending_ = false;
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
