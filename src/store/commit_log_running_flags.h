#pragma once
// RunningFlags: the store's health bits (Java org.apache.rocketmq.store.RunningFlags). Once a
// write, fsync or msync fails the store is marked not writable until restart; a nearly full
// disk sets kDiskFull. Thread-safe (one atomic word); any thread may read or set bits.

#include <atomic>
#include <cstdint>

namespace comet::store {

class RunningFlags {
public:
    static constexpr uint32_t kNotReadable = 1;
    static constexpr uint32_t kNotWritable = 2;
    static constexpr uint32_t kWriteLogicsQueueError = 4;
    static constexpr uint32_t kWriteIndexFileError = 8;
    static constexpr uint32_t kDiskFull = 16;

    uint32_t flag_bits() const { return bits_.load(std::memory_order_acquire); }
    void set(uint32_t bits) { bits_.fetch_or(bits, std::memory_order_acq_rel); }
    void clear(uint32_t bits) { bits_.fetch_and(~bits, std::memory_order_acq_rel); }

    // Java isWriteable: no error bit at all.
    bool is_writeable() const {
        return (flag_bits() & (kNotWritable | kDiskFull | kWriteLogicsQueueError |
                               kWriteIndexFileError)) == 0;
    }
    // Java isCQWriteable.
    bool is_cq_writeable() const {
        return (flag_bits() & (kNotWritable | kWriteLogicsQueueError)) == 0;
    }
    bool is_readable() const { return (flag_bits() & kNotReadable) == 0; }

private:
    std::atomic<uint32_t> bits_{0};
};

}  // namespace comet::store
