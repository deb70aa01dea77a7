#pragma once
// HaStorePort: what replication needs from the local CommitLog, as a small interface so the
// broker wiring (and tests) can plug any store. CommitLogHaStore adapts store::CommitLog.
// Thread-safety: every method from any thread (CommitLog's own guarantees); append() from one
// replication thread at a time.

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "base/status.h"

namespace comet::store {
class CommitLog;
}

namespace comet::ha {

// Bytes borrowed from the store; `keep` holds the underlying mapping alive.
struct HaChunk {
    std::shared_ptr<const void> keep;
    std::string_view bytes;
};

class HaStorePort {
public:
    virtual ~HaStorePort() = default;
    virtual int64_t min_offset() const = 0;  // first byte still on disk (0 when empty)
    virtual int64_t max_offset() const = 0;  // end of written data
    // Start of the segment file holding max_offset() (RocketMQ `maxOffset - maxOffset %
    // mappedFileSizeCommitLog`), never below min_offset(): where an AutoSwitch slave with
    // isSyncFromLastFile starts. Default min_offset() for ports without segments.
    virtual int64_t last_file_start() const { return min_offset(); }
    // Up to max_bytes from `offset`, never crossing a segment (file) boundary. nullopt when
    // nothing is written at offset yet.
    virtual std::optional<HaChunk> read(int64_t offset, int64_t max_bytes) const = 0;
    // Slave: appends bytes received from the master at `start` (must equal max_offset()).
    virtual Status append(int64_t start, std::string_view bytes) = 0;
};

class CommitLogHaStore final : public HaStorePort {
public:
    explicit CommitLogHaStore(store::CommitLog& log) : log_(log) {}
    int64_t min_offset() const override;
    int64_t max_offset() const override;
    int64_t last_file_start() const override;
    std::optional<HaChunk> read(int64_t offset, int64_t max_bytes) const override;
    Status append(int64_t start, std::string_view bytes) override;

private:
    store::CommitLog& log_;
};

}  // namespace comet::ha
