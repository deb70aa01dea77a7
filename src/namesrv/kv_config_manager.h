#pragma once
// KvConfigManager: the name server's namespaced key/value store (Java KVConfigManager), used
// for PUT/GET/DELETE_KV_CONFIG and GET_KVLIST_BY_NAMESPACE (e.g. ORDER_TOPIC_CONFIG).
//
// Persistence: the whole table as KVConfigSerializeWrapper JSON at `kvConfigPath`
//   {"configTable":{"<namespace>":{"<key>":"<value>",...},...}}
// rewritten after every change through a temp file + fsync + rename (+ directory fsync), so a
// crash leaves either the old or the new file, never a torn one. A missing file is an empty
// table; an unparsable one is an error at load() (the operator must look, as we never overwrite
// data we could not read).
//
// Owner: NamesrvController. Threads: any. Locks: mu_ guards the table and is never held across
// I/O; persist_mu_ serialises file writes (lock order: persist_mu_ then mu_, mu_ only to snapshot),
// so the last write always carries the newest table.

#include <map>
#include <optional>
#include <string>

#include "base/mutex.h"
#include "base/status.h"

namespace comet::namesrv {

class KvConfigManager {
public:
    // `path` empty: in-memory only (tests).
    explicit KvConfigManager(std::string path);

    // Loads the file if present. Errors: kCorruption (bad JSON, naming the path), kIoError.
    Status load();

    // Each change is persisted before returning; errors: kIoError naming the path (the in-memory
    // change stays, as in RocketMQ).
    Status put(const std::string& ns, const std::string& key, const std::string& value);
    Status remove(const std::string& ns, const std::string& key);

    std::optional<std::string> get(const std::string& ns, const std::string& key) const;
    // All pairs of a namespace; nullopt when the namespace has none.
    std::optional<std::map<std::string, std::string>> list(const std::string& ns) const;

    const std::string& path() const { return path_; }

private:
    using Table = std::map<std::string, std::map<std::string, std::string>>;
    Status persist() EXCLUDES(mu_);

    const std::string path_;
    Mutex persist_mu_;
    mutable Mutex mu_;
    Table table_ GUARDED_BY(mu_);
};

// Writes `content` to `path` atomically (temp file in the same directory, fsync, rename, fsync
// of the directory). Creates missing parent directories. Errors: kIoError naming the path.
Status write_file_atomically(const std::string& path, const std::string& content);

}  // namespace comet::namesrv
