#pragma once
// ConsumerOffsetManager: committed consume offsets, "topic@group" -> {queueId -> offset}
// (Java ConsumerOffsetManager). Persisted to <storeRoot>/config/consumerOffset.json as
// {"offsetTable":{"T@G":{"0":5,"1":7}}} (standard JSON; Java's unquoted-key form is accepted on
// load), atomically (ConfigFile), by BrokerController every flushConsumerOffsetInterval and at
// shutdown; the codec is protocol::ConsumerOffsetSerializeWrapper (GET_ALL_CONSUMER_OFFSET body).
// Thread-safety: any thread; mu_ guards the table; file writes outside it, serialised by the
// ConfigFile.

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "base/mutex.h"
#include "base/status.h"
#include "broker/metadata/config_file.h"

namespace comet::broker {

class ConsumerOffsetManager {
public:
    explicit ConsumerOffsetManager(std::string path) : file_(std::move(path)) {}

    Status load();
    Status persist();

    void commit_offset(const std::string& group, const std::string& topic, int32_t queue_id,
                       int64_t offset);
    // -1 when nothing was committed.
    int64_t query_offset(const std::string& group, const std::string& topic,
                         int32_t queue_id) const;
    std::map<int32_t, int64_t> query_offsets(const std::string& group,
                                             const std::string& topic) const;
    // Topics the group has offsets for; groups with offsets on the topic.
    std::set<std::string> topics_of_group(const std::string& group) const;
    std::set<std::string> groups_of_topic(const std::string& topic) const;
    void remove_topic(const std::string& topic);
    void remove_group(const std::string& group);

    // A copy of the whole table, "topic@group" -> {queueId -> offset}.
    std::map<std::string, std::map<int32_t, int64_t>> table() const;

    // {"offsetTable":{...}} (GET_ALL_CONSUMER_OFFSET body and file content).
    std::string encode(bool pretty) const;
    Status decode(std::string_view json);

private:
    static std::string key(const std::string& topic, const std::string& group) {
        return topic + "@" + group;
    }

    ConfigFile file_;
    mutable Mutex mu_;
    std::map<std::string, std::map<int32_t, int64_t>> table_ GUARDED_BY(mu_);
};

// Encodes / decodes {"offsetTable":{"<int>":<long>,...}} (delayOffset.json: level -> offset).
std::string encode_int_offset_table(const std::map<int32_t, int64_t>& table, bool pretty);
Result<std::map<int32_t, int64_t>> decode_int_offset_table(std::string_view json,
                                                           std::string_view what);

}  // namespace comet::broker
