#pragma once
// Shared helpers for the store unit tests (temp dirs, small configs, sample messages).

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "protocol/message_ext.h"
#include "store/message_store_config.h"

namespace comet::store::testing {

class TempDir {
public:
    TempDir() {
        std::string tmpl =
            (std::filesystem::temp_directory_path() / "comet-store-XXXXXX").string();
        char* p = ::mkdtemp(tmpl.data());
        path_ = p != nullptr ? tmpl : std::string();
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

inline MessageStoreConfig small_config(const std::string& root, int64_t segment = 64 * 1024) {
    MessageStoreConfig c;
    c.store_path_root_dir = root;
    c.mapped_file_size_commit_log = segment;
    c.max_message_size = 16 * 1024;
    c.flush_interval_commit_log_ms = 10;
    return c;
}

inline protocol::MessageExt sample_message(const std::string& topic, int32_t queue_id,
                                           std::string body) {
    protocol::MessageExt m;
    m.topic = topic;
    m.queue_id = queue_id;
    m.body = std::move(body);
    m.born_timestamp = 1'700'000'000'000;
    m.born_host = protocol::HostAddress::ipv4(10, 0, 0, 9, 50000);
    m.set_property("TAGS", "tag");
    return m;
}

}  // namespace comet::store::testing
