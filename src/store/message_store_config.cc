#include "store/message_store_config.h"

#include <cstdlib>

namespace comet::store {

namespace {
std::string root_or_default(const std::string& root) {
    return root.empty() ? default_store_path_root_dir() : root;
}
}  // namespace

std::string default_store_path_root_dir() {
    const char* home = std::getenv("HOME");
    return std::string(home != nullptr ? home : ".") + "/store";
}

std::string MessageStoreConfig::commit_log_dir() const {
    if (!store_path_commit_log.empty()) {
        return store_path_commit_log;
    }
    return root_or_default(store_path_root_dir) + "/commitlog";
}

std::string MessageStoreConfig::checkpoint_path() const {
    return root_or_default(store_path_root_dir) + "/checkpoint";
}

std::string MessageStoreConfig::abort_file_path() const {
    return root_or_default(store_path_root_dir) + "/abort";
}

std::string MessageStoreConfig::consume_queue_dir() const {
    return root_or_default(store_path_root_dir) + "/consumequeue";
}

}  // namespace comet::store
