#include "broker/schedule/schedule_message_service.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <condition_variable>
#include <mutex>
#include <vector>

#include "base/log_tag.h"
#include "broker/metadata/consumer_offset_manager.h"
#include "broker/metadata/json_file.h"
#include "broker/metadata/topic_config.h"

namespace comet::broker {

ScheduleMessageService::ScheduleMessageService(Clock& clock, MessageStorePort& store,
                                               DelayLevels levels, std::string path)
    : clock_(clock), store_(store), levels_(std::move(levels)), file_(std::move(path)) {}

ScheduleMessageService::~ScheduleMessageService() { shutdown(); }

Status ScheduleMessageService::load() {
    return file_.load([this](std::string_view text) -> Status {
        COMET_ASSIGN_OR_RETURN(auto table, decode_int_offset_table(text, file_.path()));
        MutexLock l(mu_);
        offsets_ = std::move(table);
        return Status::ok();
    });
}

Status ScheduleMessageService::persist() {
    return file_.persist([this] { return encode(false); });
}

std::string ScheduleMessageService::encode(bool pretty) const {
    MutexLock l(mu_);
    return encode_int_offset_table(offsets_, pretty);
}

int64_t ScheduleMessageService::offset(int32_t level) const {
    MutexLock l(mu_);
    auto it = offsets_.find(level);
    return it == offsets_.end() ? 0 : it->second;
}

std::map<int32_t, int64_t> ScheduleMessageService::offsets() const {
    MutexLock l(mu_);
    return offsets_;
}

namespace {

// The message a due delayed one becomes: its body (moved out of `msg`), flags and properties on
// REAL_TOPIC / REAL_QID, without DELAY and with WAIT=false.
protocol::MessageExt real_message_of(protocol::MessageExt& msg, const std::string& real_topic,
                                     const std::string& real_qid,
                                     const protocol::HostAddress& store_host) {
    protocol::MessageExt out;
    out.topic = real_topic;
    out.queue_id = std::atoi(real_qid.c_str());
    out.body = std::move(msg.body);
    out.flag = msg.flag;
    out.sys_flag = msg.sys_flag;
    out.born_timestamp = msg.born_timestamp;
    out.born_host = msg.born_host;
    out.store_host = store_host;
    out.reconsume_times = msg.reconsume_times;
    out.properties = msg.properties;
    out.erase_property(protocol::property::kDelayTimeLevel);
    out.set_property(protocol::property::kWaitStoreMsgOk, "false");
    return out;
}

}  // namespace

int64_t ScheduleMessageService::deliver_due() {
    const std::string topic(kScheduleTopic);
    int64_t delivered = 0;
    if (remote_deliver_ && !(remote_active_ && remote_active_())) {
        return 0;  // a slave delivers only while it is the acting master
    }
    for (int32_t level = 1; level <= levels_.max_level(); ++level) {
        delivered += deliver_level(topic, level);
    }
    return delivered;
}

int64_t ScheduleMessageService::deliver_level(const std::string& topic, int32_t level) {
    const int32_t qid = level - 1;
    int64_t next = offset(level);
    const int64_t min = store_.min_offset_in_queue(topic, qid);
    if (next < min) {
        spdlog::warn("schedule level {}: offset {} below queue min {}, skipping ahead", level, next,
                     min);
        next = min;
    }
    const int64_t max = store_.max_offset_in_queue(topic, qid);
    int64_t delivered = 0;
    // Window by window: each puts the due messages it holds at once and then waits for all of
    // them, so a level is not held to one commit round trip per message (DLedger mode).
    for (int round = 0; next < max && round < 1'000'000; ++round) {
        const Window w = deliver_window(topic, level, next, max);
        next = w.next;
        delivered += w.delivered;
        if (w.stopped) {
            break;
        }
    }
    MutexLock l(mu_);
    offsets_[level] = std::max(offsets_[level], next);
    return delivered;
}

ScheduleMessageService::Window ScheduleMessageService::deliver_window(const std::string& topic,
                                                                      int32_t level, int64_t from,
                                                                      int64_t max) {
    const int32_t qid = level - 1;
    // One slot per queue offset of the window: skipped (unreadable), or its put's status.
    struct Slot {
        int64_t physical_offset = 0;
        bool skipped = false;
        std::optional<store::PutMessageStatus> status;
    };
    const size_t window = remote_deliver_ ? 1 : kDeliverWindow;
    std::vector<Slot> slots;
    slots.reserve(window);  // never moves: a put's callback writes its slot from another thread
    std::mutex mu;
    std::condition_variable cv;
    size_t outstanding = 0;
    bool stopped = false;
    for (int64_t o = from; o < max && slots.size() < window; ++o) {
        auto unit = store_.consume_queue_unit(topic, qid, o);
        if (!unit || !is_due(level, unit->tags_code)) {
            stopped = true;
            break;
        }
        slots.push_back(Slot{unit->physical_offset, false, std::nullopt});
        std::optional<protocol::MessageExt> out = read_due_message(level, unit->physical_offset, o);
        if (!out) {
            slots.back().skipped = true;
            continue;
        }
        if (remote_deliver_) {
            slots.back().status = deliver_remote(level, unit->physical_offset, *out);
            continue;
        }
        {
            std::lock_guard<std::mutex> l(mu);
            ++outstanding;
        }
        // The store reads `out` only before put_message returns; the callback may run at once.
        store_.put_message(*out, [&, i = slots.size() - 1](store::PutMessageResult r) {
            std::lock_guard<std::mutex> l(mu);
            slots[i].status = r.status;
            --outstanding;
            cv.notify_all();
        });
    }
    {
        // Every callback refers to this frame: wait for all of them, however long.
        std::unique_lock<std::mutex> l(mu);
        cv.wait(l, [&] { return outstanding == 0; });
    }
    Window w{from, 0, stopped || slots.empty()};
    for (const Slot& s : slots) {
        if (!s.skipped && s.status != store::PutMessageStatus::kPutOk) {
            // Only PUT_OK moves the level on (RocketMQ's rule): in DLedger mode the store here
            // is the ReplicatedStorePort, so that means a majority committed the delivery; one a
            // leader change may still cut is tried again (later ones of the window may then be
            // delivered twice), never skipped.
            if (s.status) {  // a failed escape was logged by deliver_remote
                spdlog::warn(
                    "schedule level {}: re-put of message at {} failed ({}), retrying later", level,
                    s.physical_offset, store::put_message_status_name(*s.status));
            }
            w.stopped = true;
            break;
        }
        ++w.next;
        w.delivered += s.skipped ? 0 : 1;
    }
    return w;
}

bool ScheduleMessageService::is_due(int32_t level, int64_t deliver_at) const {
    const int64_t now = clock_.wall_millis();
    // A delivery time further out than the level allows came from a clock jump: deliver at the
    // level's delay from now at the latest (Java correctDeliverTimestamp).
    if (deliver_at > now + levels_.delay_millis(level)) {
        deliver_at = now;
    }
    return deliver_at <= now;
}

std::optional<protocol::MessageExt> ScheduleMessageService::read_due_message(
    int32_t level, int64_t physical_offset, int64_t queue_offset) {
    auto msg = store_.look_message_by_offset(physical_offset);
    if (!msg) {
        spdlog::error("schedule level {}: message at {} (queue offset {}) unreadable, skipped",
                      level, physical_offset, queue_offset);
        return std::nullopt;
    }
    const std::string* real_topic = msg->property(protocol::property::kRealTopic);
    const std::string* real_qid = msg->property(protocol::property::kRealQueueId);
    if (real_topic == nullptr || real_qid == nullptr) {
        spdlog::error("schedule level {}: message at {} lacks REAL_TOPIC/REAL_QID, skipped", level,
                      physical_offset);
        return std::nullopt;
    }
    return real_message_of(*msg, *real_topic, *real_qid, store_.store_host());
}

std::optional<store::PutMessageStatus> ScheduleMessageService::deliver_remote(
    int32_t level, int64_t physical_offset, const protocol::MessageExt& out) {
    const Status st = remote_deliver_(out);
    if (!st.is_ok()) {
        spdlog::warn("schedule level {}: escape of message at {} failed ({}), retrying later",
                     level, physical_offset, st.message());
        return std::nullopt;
    }
    return store::PutMessageStatus::kPutOk;
}

void ScheduleMessageService::start(Duration tick, Duration persist_every) {
    MutexLock l(mu_);
    if (thread_.joinable()) {
        return;
    }
    stopping_ = false;
    thread_ = tagged_thread([this, tick, persist_every] { run(tick, persist_every); });
}

void ScheduleMessageService::shutdown() {
    {
        MutexLock l(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
        Status st = persist();
        if (!st.is_ok()) {
            spdlog::error("persist {} failed: {}", file_.path(), st.to_string());
        }
    }
}

void ScheduleMessageService::run(Duration tick, Duration persist_every) {
    pthread_setname_np(pthread_self(), "ScheduleMessage");
    TimePoint last_persist = clock_.now();
    while (true) {
        {
            MutexLock l(mu_);
            if (stopping_) {
                return;
            }
        }
        deliver_due();
        if (clock_.now() - last_persist >= persist_every) {
            last_persist = clock_.now();
            Status st = persist();
            if (!st.is_ok()) {
                spdlog::error("persist {} failed: {}", file_.path(), st.to_string());
            }
        }
        MutexLock l(mu_);
        if (stopping_) {
            return;
        }
        std::unique_lock<Mutex> ul(mu_, std::adopt_lock);
        cv_.wait_for(ul, tick);
        ul.release();
    }
}

}  // namespace comet::broker
