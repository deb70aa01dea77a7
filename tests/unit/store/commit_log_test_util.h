#pragma once
// Shared helpers for the store unit tests (temp dirs, small configs, sample messages).

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
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

// The segment size most store tests use (small, so tests cross segments quickly).
inline constexpr int64_t kSeg = 64 * 1024;

// RocketMQ 4.9.8's store files captured for golden tests (../shared/reference/vectors/store,
// or beside COMET_VECTORS_DIR).
inline std::string store_vectors_dir() {
    if (const char* env = std::getenv("COMET_VECTORS_DIR")) {
        return std::string(env) + "/../store";
    }
    return COMET_SOURCE_DIR "/../shared/reference/vectors/store";
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

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
