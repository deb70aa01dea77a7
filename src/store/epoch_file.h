#pragma once
// EpochFile: RocketMQ 5's epochFileCheckpoint (EpochFileCache over CheckpointFile): which epoch
// (DLedger: Raft term; controller mode: masterEpoch) wrote which part of the CommitLog. Entry i
// covers [start_i, start_{i+1}); the last one runs to the CommitLog end. Shared by DLedger and
// controller mode (docs/dledger.md, "Files"; ../shared/reference/rocketmq-wire.md §7).
//
// Text format, as RocketMQ writes it: line 1 the entry count, line 2 the CRC32 (masked with
// 0x7FFFFFFF; 0 = unchecked) of the entry lines, then one "<epoch>-<startOffset>" line per entry,
// each ended by '\n'. save() writes "<path>.tmp", fsyncs, keeps the previous file as
// "<path>.bak" and renames; load() falls back to the .bak when the file is missing or corrupt.
// Owner: one thread (not thread-safe).

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace comet::store {

struct EpochEntry {
    int64_t epoch = 0;
    int64_t start_offset = 0;
    bool operator==(const EpochEntry&) const = default;
};

class EpochFile {
public:
    explicit EpochFile(std::string path) : path_(std::move(path)) {}

    // Reads the file (or its .bak). A missing file is an empty list. Errors: both unreadable
    // or corrupt (names the file and the line).
    Status load();
    Status save() const;

    // Starts `epoch` at `start_offset`. Requires epochs and offsets not to go back; a repeated
    // epoch is ignored. Errors: kInvalidArgument.
    Status append(int64_t epoch, int64_t start_offset);
    // Drops every entry that starts at or after `offset` (the CommitLog was cut there).
    void truncate_from(int64_t offset);
    void clear() { entries_.clear(); }

    const std::vector<EpochEntry>& entries() const { return entries_; }
    int64_t last_epoch() const { return entries_.empty() ? 0 : entries_.back().epoch; }
    const std::string& path() const { return path_; }

    // The file body for `entries` (tests and tools).
    static std::string encode(const std::vector<EpochEntry>& entries);
    static Result<std::vector<EpochEntry>> decode(const std::string& text, const std::string& name);

private:
    std::string path_;
    std::vector<EpochEntry> entries_;
};

}  // namespace comet::store
