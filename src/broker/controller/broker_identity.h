#pragma once
// The broker identity files of controller mode (RocketMQ 5 BrokerMetadata / TempBrokerMetadata,
// rocketmq-wire.md §7.1): `<storePathBrokerIdentity>` holds "clusterName#brokerName#brokerId"
// once the controller granted the id; `<same path>-temp` holds
// "clusterName#brokerName#brokerId#registerCheckCode" while APPLY_BROKER_ID is in flight, so a
// broker killed between the grant and the final file re-applies the same id with the same check
// code (the controller treats that as an idempotent retry). Both are replaced durably
// (base/file_io). Pure file I/O, no threads.

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"

namespace comet::broker {

struct BrokerIdentity {
    std::string cluster_name;
    std::string broker_name;
    int64_t broker_id = 0;
    std::string register_check_code;  // temp file only
    bool operator==(const BrokerIdentity&) const = default;
};

// nullopt when the file does not exist. Errors: unreadable, or content that does not parse
// (names the file), or a cluster/broker name other than `cluster`/`broker` (the store belongs
// to another broker).
Result<std::optional<BrokerIdentity>> load_broker_identity(const std::string& path, bool temp,
                                                           const std::string& cluster,
                                                           const std::string& broker);
Status save_broker_identity(const std::string& path, bool temp, const BrokerIdentity& id);
Status remove_broker_identity(const std::string& path);

}  // namespace comet::broker
