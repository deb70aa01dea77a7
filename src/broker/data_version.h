#pragma once
// DataVersion: RocketMQ's change counter for a config table ({"counter","stateVersion",
// "timestamp"}). Bumped on every change so the name server and slaves can tell whether a table
// moved. Value type; the owning manager guards it with its own mutex.

#include <rapidjson/document.h>

#include <cstdint>

namespace comet::broker {

struct DataVersion {
    int64_t counter = 0;
    int64_t state_version = 0;
    int64_t timestamp = 0;  // wall ms of the last change

    void next(int64_t wall_millis) {
        ++counter;
        timestamp = wall_millis;
    }
    bool operator==(const DataVersion&) const = default;

    // {"counter":..,"stateVersion":..,"timestamp":..}
    rapidjson::Value to_json(rapidjson::Document::AllocatorType& a) const;
    static DataVersion from_json(const rapidjson::Value& v);
};

}  // namespace comet::broker
