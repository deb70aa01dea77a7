#pragma once
// NamesrvConfig (+ the NettyServerConfig keys the name server uses): settings of mqnamesrv, with
// RocketMQ's key names and defaults. register_namesrv_config() binds them into a ConfigRegistry.
// Fields read by request threads after start and changeable by UPDATE_NAMESRV_CONFIG are atomics;
// every other field is fixed once startup is over (ConfigRegistry::seal()).

#include <atomic>
#include <cstdint>
#include <string>

#include "base/config.h"

namespace comet::namesrv {

struct NamesrvConfig {
    // NettyServerConfig
    int32_t listen_port = 9876;
    std::string listen_host;  // bind address ("0.0.0.0")
    int32_t server_selector_threads = 3;
    int32_t server_channel_max_idle_time_seconds = 120;
    // NamesrvConfig
    std::string rocketmq_home;
    std::string kv_config_path;     // default: $HOME/namesrv/kvConfig.json
    std::string config_store_path;  // default: $HOME/namesrv/namesrv.properties (informational)
    std::string product_env_name;
    bool cluster_test = false;
    std::atomic<bool> order_message_enable{false};
    std::atomic<bool> return_order_topic_config_to_broker{true};
    std::atomic<bool> enable_all_topic_list{true};
    int32_t client_request_thread_pool_nums = 8;
    int32_t default_thread_pool_nums = 16;
    int32_t client_request_thread_pool_queue_capacity = 50000;
    int32_t default_thread_pool_queue_capacity = 10000;
    std::atomic<int64_t> scan_not_active_broker_interval{5000};  // ms
    int64_t broker_channel_expired_time = 120000;                // ms
    // RocketMQ 5 acting-master support (both off by default, as in RocketMQ).
    std::atomic<bool> notify_min_broker_id_changed{false};  // send NOTIFY_MIN_BROKER_ID_CHANGE
    std::atomic<bool> support_acting_master{false};  // routes name an acting master as id 0
    // RocketMQ 5: mqnamesrv also runs a controller group member from the controller keys of
    // the same file (apps/mqnamesrv, docs/controller.md). Read once at start.
    bool enable_controller_in_namesrv = false;
    // Metrics (docs/metrics.md): /metrics on metricsPort, or RocketMQ 5's PROM exporter keys.
    int32_t metrics_port = 0;
    std::string metrics_exporter_type;
    int32_t metrics_prom_exporter_port = 5557;
    std::string metrics_prom_exporter_host;
    // Comet logging
    std::string log_dir;  // empty: $HOME/logs/comet
    std::string log_level;
};

// Registers every field with its RocketMQ key, default and bounds.
void register_namesrv_config(ConfigRegistry& registry, NamesrvConfig* config);

// $HOME (or "." when unset).
std::string user_home();

}  // namespace comet::namesrv
