#pragma once
// Settings of a broker container (RocketMQ 5 BrokerContainerConfig, plus the listenPort of its
// NettyServerConfig) and the per-broker settings the container reads from each broker's own
// properties file. Pure parsing and checks: no threads, no sockets; reading a broker's file is
// the only I/O (load_broker_instance_config).
//
// Container file keys (`mqbrokercontainer -c broker-container.conf`):
//   brokerConfigPaths  each broker's properties file, ':'-separated (RocketMQ's separator)
//   listenPort         the container's own port for ADD_BROKER / REMOVE_BROKER /
//                      GET_BROKER_CONFIG (default 10811, as BrokerContainerStartup)
//   namesrvAddr        when set, every broker registers with these name servers (the inner
//                      brokers of RocketMQ 5 share the container's BrokerOuterAPI)
//   serverSelectorThreads  the I/O threads every broker of the container shares (its
//                      remoting server and HA sockets; RocketMQ's NettyServerConfig key).
//                      0: one per core
//   listenHost, logDir Comet additions: bind address of the admin port, log directory

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/config.h"
#include "base/properties.h"
#include "base/status.h"
#include "broker/metadata/broker_config.h"
#include "store/message_store_config.h"

namespace comet::container {

inline constexpr int32_t kDefaultContainerListenPort = 10811;

struct BrokerContainerConfig {
    std::string broker_config_paths;                    // brokerConfigPaths
    int32_t listen_port = kDefaultContainerListenPort;  // listenPort (admin requests)
    std::string listen_host = "0.0.0.0";                // listenHost (Comet)
    std::string namesrv_addr;                           // namesrvAddr
    std::string log_dir;                                // logDir (empty: ~/logs/comet)
    int32_t server_selector_threads = 0;                // serverSelectorThreads (0: per core)
};

// Binds every key above to `config` (which must outlive the registry) and stores the defaults.
void register_container_config(ConfigRegistry& registry, BrokerContainerConfig* config);

// `key=value` lines, sorted by key: the GET_BROKER_CONFIG body of the container's own port.
std::string container_config_text(const BrokerContainerConfig& config);

// brokerConfigPaths split on ':'; items are trimmed, empty items dropped, order kept.
std::vector<std::string> split_broker_config_paths(std::string_view paths);

// clusterName:brokerName:brokerId, the form `mqadmin removeBroker -b` takes (RocketMQ 5
// BrokerIdentity).
struct InstanceIdentity {
    std::string cluster_name;
    std::string broker_name;
    int64_t broker_id = 0;

    std::string to_string() const;
    bool operator==(const InstanceIdentity&) const = default;
};
// Parses "cluster:name:id". Errors: kInvalidArgument naming the text (missing part, bad or
// negative id).
Result<InstanceIdentity> parse_instance_identity(std::string_view text);

// One broker's settings, read from its file as mqbroker reads its -c file.
struct BrokerInstanceConfig {
    std::string config_path;
    broker::BrokerConfig broker;
    store::MessageStoreConfig store;    // the registry's store keys (make_store_config base)
    std::vector<std::string> warnings;  // unknown keys (file:line), replication warnings

    InstanceIdentity identity() const;
};

// Builds and validates one broker's settings from entries already parsed from `path`:
// BrokerConfig and MessageStoreConfig keys (unknown keys, and logDir and serverSelectorThreads,
// which a container does not take from a broker's file, become warnings), the container's namesrvAddr when set, then BrokerConfig::validate and make_replication_config. Errors
// (kInvalidArgument) start with the path and name the key: "<path>: listenPort ...".
Result<BrokerInstanceConfig> make_broker_instance_config(const std::string& path,
                                                         const std::vector<PropertyEntry>& entries,
                                                         const BrokerContainerConfig& container);
// Reads `path` and calls make_broker_instance_config. Errors also name a missing or unreadable
// file.
Result<BrokerInstanceConfig> load_broker_instance_config(const std::string& path,
                                                         const BrokerContainerConfig& container);

// Why `candidate` cannot run next to the brokers already in the container: the same identity
// (cluster, name, id), the same store directory, or a listen / HA / metrics port that another
// broker or the container's own port (`container_port`, 0 for none) already uses. Ports 0
// (ephemeral) never clash. kAlreadyExists naming both brokers, or OK.
Status check_instance_conflicts(const BrokerInstanceConfig& candidate,
                                const std::vector<const BrokerInstanceConfig*>& running,
                                int32_t container_port);

}  // namespace comet::container
