#pragma once
// ConfigFile: the load / persist cycle every JSON config table of the broker shares (Java
// ConfigManager): topics.json, subscriptionGroup.json, consumerOffset.json, delayOffset.json.
//   load():    the file, or <file>.bak when the file is missing or does not parse; neither is a
//              fresh store, not an error.
//   persist(): the table's JSON, indented, written atomically (<file>.tmp, fsync, old file kept
//              as <file>.bak, rename, directory fsync).
// Layout: docs/formats/broker-config-files.md.
// An empty path keeps the table in memory only (tests): both calls do nothing.
// Thread-safety: any thread. persist() calls are serialised (encode runs under persist_mu_, so the
// last snapshot taken is the last one written); the owner guards its table with its own mutex,
// which encode/decode take and release inside the callback.

#include <functional>
#include <string>
#include <string_view>

#include "base/mutex.h"
#include "base/status.h"

namespace comet::broker {

class ConfigFile {
public:
    explicit ConfigFile(std::string path) : path_(std::move(path)) {}

    const std::string& path() const { return path_; }

    // Hands the stored text to `decode`. Errors: the read error, or what `decode` returns.
    Status load(const std::function<Status(std::string_view)>& decode) const;
    // Writes encode()'s compact JSON, indented. Errors: kIoError from the write.
    Status persist(const std::function<std::string()>& encode);

private:
    const std::string path_;
    Mutex persist_mu_;
};

}  // namespace comet::broker
