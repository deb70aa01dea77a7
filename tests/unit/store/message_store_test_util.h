#pragma once
// Test support for the MessageStore tests (message_store, get_message, retention, disk_full).

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/clock.h"
#include "protocol/message_ext.h"
#include "store/message_store.h"

namespace comet::store::testing {

// A store config with tiny segments: CommitLog 4 KiB, ConsumeQueue 8 units, small index.
inline MessageStoreConfig tiny_config(const std::string& root) {
    MessageStoreConfig c;
    c.store_path_root_dir = root;
    c.mapped_file_size_commit_log = 4096;
    c.mapped_file_size_consume_queue = 8 * 20;
    c.max_hash_slot_num = 64;
    c.max_index_num = 32;
    c.flush_disk_type = FlushDiskType::kAsyncFlush;
    return c;
}

inline protocol::MessageExt make_message(const std::string& topic, int32_t queue_id,
                                         const std::string& body, const std::string& tags = "",
                                         const std::string& keys = "",
                                         const std::string& uniq = "") {
    protocol::MessageExt m;
    m.topic = topic;
    m.queue_id = queue_id;
    m.body = body;
    m.born_timestamp = 1'700'000'000'000;
    m.born_host = protocol::HostAddress::ipv4(127, 0, 0, 1, 40000);
    if (!tags.empty()) {
        m.properties.set(protocol::property::kTags, tags);
    }
    if (!keys.empty()) {
        m.properties.set(protocol::property::kKeys, keys);
    }
    if (!uniq.empty()) {
        m.properties.set(protocol::property::kUniqClientMessageIdKeyIdx, uniq);
    }
    return m;
}

class StoreDirTest : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = (std::filesystem::temp_directory_path() /
                 ("mstore_" + std::to_string(::getpid()) + "_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() +
                  "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                    .string();
        std::filesystem::remove_all(root_);
    }
    void TearDown() override { std::filesystem::remove_all(root_); }

    std::unique_ptr<MessageStore> open_store(Clock& clock, const MessageStoreConfig& config,
                                             MessageStoreOptions opts = {}) {
        opts.start_scheduler = false;
        auto s = MessageStore::open(config, clock, opts);
        EXPECT_TRUE(s.is_ok()) << s.status().to_string();
        if (!s.is_ok()) {
            return nullptr;
        }
        (*s)->start();  // CommitLog accepts puts only once started
        return std::move(s).value();
    }

    // Puts and waits; returns the result.
    static PutMessageResult put(MessageStore& s, protocol::MessageExt m) {
        return s.put_message(std::move(m)).get();
    }

    std::string root_;
};

}  // namespace comet::store::testing
