#pragma once
// Codec of RocketMQ 5's AutoSwitch HA byte stream (controller mode; Java AutoSwitchHAClient /
// AutoSwitchHAConnection, rocketmq-wire.md §7.5, docs/formats/ha.md "AutoSwitch"). Every message
// starts with an int32 HAConnectionState ordinal; all integers big-endian:
//   slave -> master handshake (16): int32 1, int16 isSyncFromLastFile, int16 isAsyncLearner,
//                                   int64 slave brokerControllerId
//   slave -> master report    (12): int32 2, int64 slave max physical offset
//   master -> slave handshake (20 + 12n): int32 1, int32 bodySize = 12n, int64 master max offset,
//                                   int32 master last epoch; n x (int32 epoch, int64 startOffset)
//   master -> slave transfer  (36 + b): int32 2, int32 bodySize b, int64 offset, int32 epoch,
//                                   int64 epochStartOffset, int64 confirmOffset; b bytes (0 =
//                                   heartbeat)
// Also the pure consistent-point rule the slave applies to the two epoch lists.
// Pure; decoders are single-threaded (one per connection).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ha/stream_buffer.h"
#include "store/epoch_file.h"

namespace comet::ha {

// Java HAConnectionState ordinals; only kHandshake and kTransfer appear on the wire.
enum class HaConnectionState : int32_t {
    kReady = 0,
    kHandshake = 1,
    kTransfer = 2,
    kSuspend = 3,
    kShutdown = 4,
};

inline constexpr size_t kAutoSwitchSlaveHandshakeSize = 16;
inline constexpr size_t kAutoSwitchReportSize = 12;
inline constexpr size_t kAutoSwitchMasterHandshakeHeaderSize = 20;
inline constexpr size_t kAutoSwitchTransferHeaderSize = 36;
inline constexpr size_t kAutoSwitchEpochEntrySize = 12;

struct AutoSwitchSlaveHandshake {
    bool sync_from_last_file = false;  // syncFromLastFile
    bool async_learner = false;        // asyncLearner
    int64_t broker_id = 0;             // the slave's brokerControllerId
};

struct AutoSwitchMasterHandshake {
    int64_t max_offset = 0;                 // master CommitLog max offset
    int32_t last_epoch = 0;                 // epoch of the last entry (0 without entries)
    std::vector<store::EpochEntry> epochs;  // oldest first; epochs fit in int32 on the wire
};

struct AutoSwitchTransferHeader {
    int64_t offset = 0;              // physical offset of the first data byte
    int32_t epoch = 0;               // epoch that wrote the data
    int64_t epoch_start_offset = 0;  // where that epoch starts
    int64_t confirm_offset = 0;      // master's confirmOffset; -1 = not known yet
};

std::string encode_autoswitch_slave_handshake(const AutoSwitchSlaveHandshake& hs);
std::string encode_autoswitch_report(int64_t max_offset);
std::string encode_autoswitch_master_handshake(const AutoSwitchMasterHandshake& hs);
std::string encode_autoswitch_transfer_header(const AutoSwitchTransferHeader& h, int32_t body_size);

// Master side: slave -> master stream. feed() bytes as they arrive, then next() until empty.
// Order rules (handshake first, once) are the connection's business, not the decoder's.
class AutoSwitchSlaveStreamDecoder {
public:
    struct Event {
        enum class Kind { kHandshake, kReport } kind;
        AutoSwitchSlaveHandshake handshake;  // kHandshake
        int64_t offset = 0;                  // kReport
    };
    void feed(std::string_view bytes) { buf_.append(bytes); }
    // Next complete event, nullopt when more bytes are needed. Errors (kCorruption): a state
    // other than HANDSHAKE/TRANSFER, a flag other than 0/1, a negative report offset. After an
    // error the stream is unusable.
    Result<std::optional<Event>> next();

private:
    std::string buf_;
    size_t pos_ = 0;
};

// Slave side: master -> slave stream (one handshake, then transfer frames).
class AutoSwitchMasterStreamDecoder {
public:
    struct Message {
        enum class Kind { kHandshake, kTransfer } kind;
        AutoSwitchMasterHandshake handshake;  // kHandshake
        AutoSwitchTransferHeader header;      // kTransfer
        std::string data;                     // kTransfer, next() only; empty = heartbeat
        // kTransfer: the data as a view of the decoder's buffer (next() and next_view()),
        // valid until the next feed() / prepare().
        std::string_view body;
    };
    explicit AutoSwitchMasterStreamDecoder(int32_t max_body_bytes = 64 * 1024 * 1024)
        : max_body_bytes_(max_body_bytes) {}
    void feed(std::string_view bytes) { buf_.append(bytes); }
    // Without a copy: read the socket into prepare(n), then commit(read).
    char* prepare(size_t n) { return buf_.prepare(n); }
    void commit(size_t n) { buf_.commit(n); }
    // Errors (kCorruption): a state other than HANDSHAKE/TRANSFER; a negative or oversized body
    // (handshake: also not a multiple of 12); a negative offset, max offset, epoch start offset
    // or entry start offset; a confirm offset below -1.
    Result<std::optional<Message>> next();
    // As next() without copying a frame's data (`data` stays empty; use `body`).
    Result<std::optional<Message>> next_view();
    size_t buffered() const { return buf_.size(); }

private:
    StreamBuffer buf_;
    int32_t max_body_bytes_;
};

// Where a slave's log stops agreeing with the master's (Java EpochFileCache#findConsistentPoint
// as AutoSwitchHAClient#doTruncate uses it): walk the local epochs newest to oldest, take the
// first one the master has with the same start offset; the point is min(its end locally, its
// end on the master). Entry i ends where entry i+1 starts, the last one at the list's max
// offset. An empty local list gives 0 (a new replica copies from the start); no epoch in common
// gives nullopt (the slave must not copy from this master). Lists are oldest first.
std::optional<int64_t> compute_consistent_point(const std::vector<store::EpochEntry>& local,
                                                int64_t local_max_offset,
                                                const std::vector<store::EpochEntry>& master,
                                                int64_t master_max_offset);

// "[1@0, 3@4096]" for logs.
std::string format_epochs(const std::vector<store::EpochEntry>& epochs);

}  // namespace comet::ha
