#pragma once
// ReputMessageService: the dispatch thread ("ReputMessageService"). It reads CommitLog records
// from reput_from_offset up to the CommitLog's *dispatchable* max offset (the write end, or in
// DLedger/controller mode the committed/confirmed end), turns each into a DispatchRequest and
// hands it to the store's dispatch function (ConsumeQueue unit, index keys, arrival
// notification). Mirrors Java DefaultMessageStore.ReputMessageService + checkMessageAndReturnSize.
//
// Owner: MessageStore. Threads: its own thread after start(); before start() (recovery) the
// owner may call do_reput() directly. do_reput() is serialised by reput_mu_.
// Invariant: reput_from_offset only grows, except set_reput_from_offset() by the owner while
// the thread is stopped (recovery, truncation).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "store/mapped_file.h"
#include "store/put_message_status.h"

namespace comet::store {

class DispatchHints;

// The CommitLog as the dispatcher sees it (implemented by MessageStore over CommitLog).
class CommitLogReader {
public:
    virtual ~CommitLogReader() = default;
    // End of what may be dispatched (write end; committed end under DLedger).
    virtual PhysicalOffset dispatchable_max_offset() const = 0;
    // Bytes from `offset` to the end of written data in the segment holding it; nullopt when
    // there is no such segment (deleted, or offset at the very end).
    virtual std::optional<MappedView> read_from(PhysicalOffset offset) const = 0;
    // Start of the segment after the one holding `offset`.
    virtual PhysicalOffset roll_next_file(PhysicalOffset offset) const = 0;
    // First offset still present in the CommitLog.
    virtual PhysicalOffset min_offset() const = 0;
    // What the put path knew about the records it appended (null: decode every record).
    virtual DispatchHints* hints() const { return nullptr; }
};

// One CommitLog record as dispatch sees it (Java DispatchRequest).
struct DispatchRequest {
    std::string topic;
    int32_t queue_id = 0;
    PhysicalOffset commit_log_offset{0};
    int32_t msg_size = 0;
    int64_t tags_code = 0;
    int64_t store_timestamp = 0;
    QueueOffset consume_queue_offset{0};
    std::string keys;
    std::string uniq_key;
    int32_t sys_flag = 0;
    int64_t prepared_transaction_offset = 0;
};

// Delay levels in ms, parsed from messageDelayLevel ("1s 5s 10s 30s 1m ... 2h").
std::vector<int64_t> parse_message_delay_level(std::string_view text);
inline constexpr std::string_view kDefaultMessageDelayLevel =
    "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h";
inline constexpr std::string_view kScheduleTopic = "SCHEDULE_TOPIC_XXXX";

// The property values dispatch needs, found by one scan of the properties string (§5.3)
// without building a map. Same leniency as string_to_message_properties: items without a
// separator, with an empty name or an empty value are ignored; a later duplicate wins.
struct DispatchProperties {
    std::string_view tags;
    std::string_view keys;
    std::string_view uniq_key;
    std::string_view delay;
};
DispatchProperties scan_dispatch_properties(std::string_view props);

enum class CheckResult {
    kMessage,  // a complete record: *out filled, size = its TOTALSIZE
    kBlank,    // the end-of-segment filler: continue in the next segment
    kCorrupt,  // bad magic/CRC/lengths with a plausible TOTALSIZE: size bytes can be skipped
    kEnd,      // no complete record here (end of data)
};

// Parses the record at data[0] (at most `len` bytes available) like Java
// CommitLog#checkMessageAndReturnSize. On kMessage/kCorrupt sets *size to TOTALSIZE.
// The tagsCode of a SCHEDULE_TOPIC_XXXX record with DELAY > 0 is its delivery time.
// A light decoder: reads only the fields of DispatchRequest (the body only to check its CRC,
// keys and UNIQ_KEY only when read_keys), builds no property map and formats no message id.
CheckResult check_message_and_return_size(const uint8_t* data, size_t len, bool check_crc,
                                          const std::vector<int64_t>& delay_levels_ms,
                                          DispatchRequest* out, int32_t* size,
                                          bool read_keys = true);

class ReputMessageService {
public:
    // dispatch: applied to every record in CommitLog order; a non-OK status stops the pass at
    // that record (retried on the next pass).
    using DispatchFn = std::function<Status(const DispatchRequest&)>;
    // Called after the records of a pass (or of each chunk of a long one) were handed to
    // dispatch, before reput_from_offset() moves past them: makes what they produced visible
    // (MessageStore writes the staged ConsumeQueue units). A non-OK status leaves the offset
    // where the previous call left it, so those records are dispatched again.
    using PassEndFn = std::function<Status()>;

    ReputMessageService(const CommitLogReader& reader, DispatchFn dispatch,
                        std::vector<int64_t> delay_levels_ms, PassEndFn pass_end = {});
    ~ReputMessageService();

    void set_reput_from_offset(PhysicalOffset offset);
    PhysicalOffset reput_from_offset() const {
        return PhysicalOffset(reput_from_offset_.load(std::memory_order_acquire));
    }
    // Bytes written but not yet dispatched.
    int64_t behind() const;

    // Dispatches every available record now. Returns how many were dispatched, or the
    // dispatch function's error (progress up to the failing record is kept).
    Result<int64_t> do_reput();

    void start();
    void shutdown();
    // Wakes the thread now: someone waits for what it dispatches (a held pull, a raised
    // dispatch limit that a leader hand-over waits on).
    void wakeup();
    // Bytes were appended and no one waits for them: wakes the thread only when it sleeps idle
    // (the first append after a quiet spell is dispatched at once). While appends keep coming
    // the thread passes every busy interval instead, as Java's ReputMessageService polls every
    // 1 ms, so an append costs no futex call and the dispatcher one wake-up per interval, not
    // one per read batch (issue 16).
    void note_appended();

    // Whether DispatchRequest.keys / uniq_key are filled (only the index needs them).
    void set_read_keys(bool read) { read_keys_.store(read, std::memory_order_relaxed); }
    // Sleep after a pass that dispatched nothing, unless woken (before start()).
    void set_idle_wait(std::chrono::milliseconds wait) { idle_wait_ = wait; }
    // Pause after a pass that dispatched something, ended early only by wakeup(); 0: none,
    // every note_appended() wakes the thread (before start()).
    void set_busy_interval(std::chrono::microseconds interval) { busy_interval_ = interval; }
    // Condition-variable notifications wakeup()/note_appended() issued (tests, bench).
    int64_t wake_calls() const { return wake_calls_.load(std::memory_order_relaxed); }

    int64_t dispatched_total() const { return dispatched_total_.load(std::memory_order_relaxed); }
    int64_t corrupt_skipped() const { return corrupt_skipped_.load(std::memory_order_relaxed); }

private:
    struct Pass;  // one do_reput() call's progress (reput.cc)
    // How a run of bytes ended: all dispatched, at a segment's blank filler (continue in the
    // next segment), or without a complete record (end of data).
    enum class BytesEnd { kConsumed, kFiller, kNoRecord };

    void run();
    // Where a pass starts: reput_from_offset_, moved up to the CommitLog's min when it is below.
    int64_t pass_start_locked() REQUIRES(reput_mu_);
    // Dispatches the records in data[0, avail), which starts at pass.from; *pos: bytes consumed.
    // A dispatch error ends the pass (the records before it are kept) and comes back.
    Status dispatch_bytes_locked(const uint8_t* data, size_t avail, Pass& pass, size_t* pos,
                                 BytesEnd* end) REQUIRES(reput_mu_);
    // The record at log offset `at` (bytes data[0, len), dispatchable bytes end at `end`) into
    // req_: from the put path's hint when there is one, else decoded. Inline (defined in
    // reput.cc, its only user): it runs once per record.
    inline CheckResult next_record_locked(const Pass& pass, const uint8_t* data, size_t len,
                                          int64_t at, int64_t end, int32_t* size)
        REQUIRES(reput_mu_);
    // Makes what the pass's pending records produced visible (pass_end_), then moves
    // reput_from_offset_ past them. On error the offset stays where the last pass end left it.
    Status end_pass_locked(Pass& pass) REQUIRES(reput_mu_);

    const CommitLogReader& reader_;
    const DispatchFn dispatch_;
    const PassEndFn pass_end_;
    const std::vector<int64_t> delay_levels_ms_;
    Mutex reput_mu_;  // serialises do_reput()
    // The record being dispatched, kept across passes: hints are swapped with it (strings keep
    // their capacity on both sides), so neither the put path's hint slots nor this lose their
    // buffers to a fresh request per pass (issue 16).
    DispatchRequest req_ GUARDED_BY(reput_mu_);
    std::atomic<int64_t> reput_from_offset_{0};
    std::chrono::milliseconds idle_wait_{1};
    std::atomic<int64_t> dispatched_total_{0};
    std::atomic<int64_t> corrupt_skipped_{0};
    std::atomic<bool> read_keys_{true};

    std::chrono::microseconds busy_interval_{1000};
    std::atomic<int64_t> wake_calls_{0};

    // How the thread waits; wakers read it to decide whether to notify (Dekker pairing with
    // wake_pending_: both sides store, then load the other's flag, seq_cst).
    enum Sleep : int { kAwake = 0, kPaced = 1, kIdle = 2 };
    Mutex wake_mu_;
    std::condition_variable_any wake_cv_;
    std::atomic<bool> wake_pending_{
        false};                        // set by wakeup()/note_appended(), cleared by the thread
    std::atomic<bool> urgent_{false};  // set by wakeup(): ends a paced sleep
    std::atomic<int> sleep_{kAwake};
    bool stopping_ GUARDED_BY(wake_mu_) = false;
    std::thread thread_;
};

}  // namespace comet::store
