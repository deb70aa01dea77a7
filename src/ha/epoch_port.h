#pragma once
// EpochPort: what the AutoSwitch HA protocol (controller mode, rocketmq-wire.md §7.5) needs from
// the broker beyond HaStorePort's bytes: the epoch file (masterEpoch -> first CommitLog offset),
// the confirm offset, and the slave's truncation to the consistent point. The broker implements
// it over store::MessageStore + store::EpochFile (broker/controller/replicas_manager); tests over a fake.
// Thread-safety: every method from any thread (HA threads call it); implementations lock.

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "store/epoch_file.h"

namespace comet::ha {

class EpochPort {
public:
    virtual ~EpochPort() = default;
    // The epoch entries, oldest first; the last one runs to the CommitLog's max offset.
    virtual std::vector<store::EpochEntry> epochs() const = 0;
    // Master: the confirm offset sent in every transfer frame (§7.6).
    virtual int64_t confirm_offset() const = 0;

    // Slave: cut the CommitLog (and what was built from it) at `end` and drop epoch entries that
    // start at or beyond it; the next append starts at `end`. Errors: I/O, or `end` below what
    // consumers may already have seen.
    virtual Status truncate_to(int64_t end) = 0;
    // Slave: data of `epoch` starts at `start_offset` (a frame of a new epoch arrived).
    virtual Status begin_epoch(int64_t epoch, int64_t start_offset) = 0;
    // Slave: the master's confirm offset, already capped at the local max offset.
    virtual void set_confirm_offset(int64_t offset) = 0;
};

}  // namespace comet::ha
