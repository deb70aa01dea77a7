#pragma once
// IndexService: the list of IndexFiles in <root>/index/ (one file per yyyyMMddHHmmssSSS name),
// fed by the dispatch thread and queried by QUERY_MESSAGE / query by unique key. Mirrors Java
// org.apache.rocketmq.store.index.IndexService.
//
// Keys: "topic#UNIQ_KEY" and "topic#k" for each space-separated k in KEYS; rollback
// transaction records are not indexed. A record below the last file's endPhyOffset was
// already indexed and is skipped, so redispatch after recovery is idempotent.
//
// Owner: MessageStore. Threads: build_index() from the dispatch thread; query_offset() from any
// thread; flush()/delete_expired_file() from the flush/clean threads. mu_ guards the file list
// and every file's bytes; it is held while msync'ing an index file only in flush(), which is
// short compared to the 1 s flush period and blocks only other index users.

#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "store/index_file.h"

namespace comet::store {

struct IndexDispatchRecord {
    std::string_view topic;
    std::string_view keys;      // KEYS property ("" if none)
    std::string_view uniq_key;  // UNIQ_KEY property ("" if none)
    PhysicalOffset commit_log_offset{0};
    int64_t store_timestamp = 0;
    int32_t sys_flag = 0;
};

struct QueryOffsetResult {
    std::vector<PhysicalOffset> phy_offsets;  // newest first
    int64_t index_last_update_timestamp = 0;
    PhysicalOffset index_last_update_phy_offset{0};
};

class IndexService {
public:
    IndexService(std::string dir, int32_t hash_slot_num, int32_t index_num, const Clock& clock);
    ~IndexService();

    // Maps the files in dir (creating dir). With last_exit_ok false, files whose end
    // timestamp is newer than the checkpoint's index timestamp may hold unflushed or torn
    // entries (which would break hash chains) and are destroyed, as Java does. Returns the
    // CommitLog offset from which dispatch must rebuild what was destroyed (INT64_MAX when
    // nothing was). Errors: kIoError, kCorruption.
    Result<int64_t> load(bool last_exit_ok, int64_t index_checkpoint_timestamp);

    // Indexes one record. Errors: an index file cannot be created (disk full, I/O).
    Status build_index(const IndexDispatchRecord& rec);

    // Offsets of messages with `key` in `topic` stored within [begin_ms, end_ms], newest
    // first, at most min(max_num, 64) (Java maxMsgsNumBatch).
    QueryOffsetResult query_offset(std::string_view topic, std::string_view key, size_t max_num,
                                   int64_t begin_ms, int64_t end_ms) const;

    // msync of every file with new entries since the last flush. Errors: kIoError.
    Status flush();
    // Destroys files whose every entry points below min_phy_offset (never the last one).
    int delete_expired_file(PhysicalOffset min_phy_offset);
    // Removes every index file (tests, full reset).
    void destroy();

    size_t file_count() const;
    PhysicalOffset end_phy_offset() const;  // of the last file; 0 when none

    static std::string build_key(std::string_view topic, std::string_view key);
    // The same key into *out (its capacity is reused).
    static void build_key(std::string_view topic, std::string_view key, std::string* out);

private:
    Result<IndexFile*> last_writable_file() REQUIRES(mu_);
    Status put_key(std::string_view key, const IndexDispatchRecord& rec) REQUIRES(mu_);
    std::string new_file_path() REQUIRES(mu_);

    const std::string dir_;
    const int32_t hash_slot_num_;
    const int32_t index_num_;
    const Clock& clock_;
    mutable Mutex mu_;
    std::vector<std::unique_ptr<IndexFile>> files_ GUARDED_BY(mu_);
    std::vector<bool> dirty_ GUARDED_BY(mu_);
    // Highest CommitLog offset already indexed (-1: none). Records at or below it are skipped,
    // so redispatch never duplicates entries (Java compares with '<' and re-adds the last one).
    int64_t last_indexed_phy_ GUARDED_BY(mu_) = -1;
    // build_index's "topic#key", kept so that indexing a message allocates nothing (issue 16).
    std::string key_buf_ GUARDED_BY(mu_);
};

// yyyyMMddHHmmssSSS in local time (Java UtilAll.timeMillisToHumanString).
std::string time_millis_to_human_string(int64_t millis);

}  // namespace comet::store
