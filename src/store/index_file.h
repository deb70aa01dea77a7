#pragma once
// IndexFile: one RocketMQ index file (<root>/index/<yyyyMMddHHmmssSSS>), a hash index from
// "topic#key" to CommitLog physical offsets. Byte layout (docs/formats/index.md, reference §5.9),
// all big-endian, file size 40 + slots*4 + entries*20:
//   header 40: beginTimestamp i64, endTimestamp i64, beginPhyOffset i64, endPhyOffset i64,
//              hashSlotCount i32, indexCount i32 (starts at 1: entry 0 is never used)
//   slots:     hash_slot_num x i32, the number of the newest entry whose key hashes there (0: none)
//   entries:   index_num x {keyHash i32, phyOffset i64, timeDiff i32 (s since beginTimestamp),
//              prevIndex i32 (older entry in the same slot, 0: end of chain)}
// Matches Java IndexFile (4.9.x); a torn tail is handled by the owner (IndexService destroys a
// file that may hold unflushed entries and rebuilds it from the CommitLog).
// Thread-safety: none of its own; IndexService serialises every call under its mutex.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/put_message_status.h"

namespace comet::store {

inline constexpr int32_t kIndexHeaderSize = 40;
inline constexpr int32_t kIndexHashSlotSize = 4;
inline constexpr int32_t kIndexEntrySize = 20;
// A file being created carries this suffix until its header is written (see create()).
inline constexpr std::string_view kIndexCreatingSuffix = ".creating";

struct IndexHeader {
    int64_t begin_timestamp = 0;
    int64_t end_timestamp = 0;
    PhysicalOffset begin_phy_offset{0};
    PhysicalOffset end_phy_offset{0};
    int32_t hash_slot_count = 0;
    int32_t index_count = 1;
};

struct IndexEntry {
    int32_t key_hash = 0;
    PhysicalOffset phy_offset{0};
    int32_t time_diff_seconds = 0;
    int32_t prev_index = 0;
};

// abs(Java hashCode) with Integer.MIN_VALUE mapped to 0 (IndexFile#indexKeyHashMethod).
int32_t index_key_hash(std::string_view key);

class IndexFile {
public:
    ~IndexFile();
    IndexFile(const IndexFile&) = delete;
    IndexFile& operator=(const IndexFile&) = delete;

    // Creates a new file (fallocated, then mapped). The header starts with begin/end offset and
    // timestamp = the previous file's end, as Java does. Errors: kIoError, kAlreadyExists.
    static Result<std::unique_ptr<IndexFile>> create(const std::string& path,
                                                     int32_t hash_slot_num, int32_t index_num,
                                                     PhysicalOffset prev_end_phy_offset,
                                                     int64_t prev_end_timestamp);
    // Maps an existing file. Errors: kIoError, kCorruption (size or header does not fit).
    static Result<std::unique_ptr<IndexFile>> load(const std::string& path, int32_t hash_slot_num,
                                                   int32_t index_num);

    // Adds `key` -> phy_offset. False when the file is full (the caller rolls to a new file).
    bool put_key(std::string_view key, PhysicalOffset phy_offset, int64_t store_timestamp);

    // Appends to `out` the offsets of entries whose key hash equals hash(key) and whose time is
    // in [begin_ms, end_ms], newest first, until out->size() >= max_num.
    void select_phy_offsets(std::string_view key, size_t max_num, int64_t begin_ms, int64_t end_ms,
                            std::vector<PhysicalOffset>* out) const;

    // IndexFile#isTimeMatched: does [begin_ms, end_ms] overlap this file's time span?
    bool is_time_matched(int64_t begin_ms, int64_t end_ms) const;
    bool is_write_full() const { return header_.index_count >= index_num_; }

    const IndexHeader& header() const { return header_; }
    IndexEntry entry(int32_t n) const;   // Requires: 0 <= n < index_num
    int32_t slot(int32_t n) const;       // Requires: 0 <= n < hash_slot_num
    const std::string& path() const { return path_; }
    std::string file_name() const;

    // msync of the whole mapping. Errors: kIoError.
    Status flush();
    // Unmaps and unlinks the file. The object must not be used afterwards except destruction.
    Status destroy();

private:
    IndexFile(std::string path, int32_t hash_slot_num, int32_t index_num, uint8_t* base,
              size_t size);
    void write_header();
    void read_header();

    std::string path_;
    int32_t hash_slot_num_;
    int32_t index_num_;
    uint8_t* base_;
    size_t size_;
    IndexHeader header_;
};

}  // namespace comet::store
