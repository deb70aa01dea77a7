#include "namesrv/namesrv_config.h"

#include <cstdlib>

namespace comet::namesrv {

std::string user_home() {
    const char* home = std::getenv("HOME");
    return home != nullptr && *home != '\0' ? std::string(home) : std::string(".");
}

void register_namesrv_config(ConfigRegistry& r, NamesrvConfig* c) {
    const std::string home = user_home();
    const char* env_home = std::getenv("ROCKETMQ_HOME");
    r.add_int("listenPort", &c->listen_port, 9876, "TCP port the name server listens on")
        .important()
        .range(0, 65535);
    r.add_string("listenHost", &c->listen_host, "0.0.0.0", "address to bind (Comet extension)");
    r.add_int("serverSelectorThreads", &c->server_selector_threads, 3, "network I/O threads")
        .range(1, 64);
    r.add_int("serverChannelMaxIdleTimeSeconds", &c->server_channel_max_idle_time_seconds, 120,
              "close connections idle this long (0: never)")
        .non_negative();
    r.add_string("rocketmqHome", &c->rocketmq_home, env_home != nullptr ? env_home : "",
                 "installation directory (ROCKETMQ_HOME)")
        .important();
    r.add_string("kvConfigPath", &c->kv_config_path, home + "/namesrv/kvConfig.json",
                 "file holding the KV config table")
        .important();
    r.add_string("configStorePath", &c->config_store_path, home + "/namesrv/namesrv.properties",
                 "where RocketMQ stores updated config (kept for compatibility)");
    r.add_string("productEnvName", &c->product_env_name, "center", "environment name");
    r.add_bool("clusterTest", &c->cluster_test, false, "cluster test mode");
    r.add_bool("orderMessageEnable", &c->order_message_enable, false,
               "add orderTopicConf from the ORDER_TOPIC_CONFIG namespace to routes");
    r.add_bool("returnOrderTopicConfigToBroker", &c->return_order_topic_config_to_broker, true,
               "answer REGISTER_BROKER with the ORDER_TOPIC_CONFIG KV table");
    r.add_bool("enableAllTopicList", &c->enable_all_topic_list, true,
               "serve GET_ALL_TOPIC_LIST_FROM_NAMESERVER");
    r.add_int("clientRequestThreadPoolNums", &c->client_request_thread_pool_nums, 8,
              "threads answering route queries")
        .range(1, 256);
    r.add_int("defaultThreadPoolNums", &c->default_thread_pool_nums, 16,
              "threads for broker registration and admin requests")
        .range(1, 256);
    r.add_int("clientRequestThreadPoolQueueCapacity",
              &c->client_request_thread_pool_queue_capacity, 50000,
              "queued route queries before SYSTEM_BUSY")
        .positive();
    r.add_int("defaultThreadPoolQueueCapacity", &c->default_thread_pool_queue_capacity, 10000,
              "queued admin requests before SYSTEM_BUSY")
        .positive();
    r.add_int64("scanNotActiveBrokerInterval", &c->scan_not_active_broker_interval, 5000,
                "ms between scans for expired brokers")
        .range(10, 3600 * 1000);
    r.add_int64("brokerChannelExpiredTime", &c->broker_channel_expired_time, 120000,
                "ms without heartbeat after which a broker is removed (unless it sent its own "
                "heartbeatTimeoutMillis)")
        .important()
        .range(1, 24LL * 3600 * 1000);
    r.add_bool("notifyMinBrokerIdChanged", &c->notify_min_broker_id_changed, false,
               "send NOTIFY_MIN_BROKER_ID_CHANGE to an acting-master group when its smallest "
               "brokerId changes");
    r.add_bool("supportActingMaster", &c->support_acting_master, false,
               "routes of a group without master name its smallest brokerId as the master");
    r.add_bool("enableControllerInNamesrv", &c->enable_controller_in_namesrv, false,
               "also run a controller (controller mode) from the controller keys of this file; "
               "it serves on its controllerDLegerPeers port")
        .important();
    r.add_int("metricsPort", &c->metrics_port, 0,
              "serve Prometheus /metrics on this port of listenHost (0: off; Comet)")
        .range(0, 65535);
    r.add_string("metricsExporterType", &c->metrics_exporter_type, "DISABLE",
                 "RocketMQ 5: PROM serves /metrics on metricsPromExporterPort (DISABLE: off)");
    r.add_int("metricsPromExporterPort", &c->metrics_prom_exporter_port, 5557,
              "RocketMQ 5: /metrics port with metricsExporterType=PROM")
        .range(0, 65535);
    r.add_string("metricsPromExporterHost", &c->metrics_prom_exporter_host, "",
                 "RocketMQ 5: /metrics bind address (empty: listenHost)");
    r.add_string("logDir", &c->log_dir, "", "log directory (empty: ~/logs/comet)");
    r.add_enum("logLevel", &c->log_level, "info",
               {"trace", "debug", "info", "warn", "error", "critical", "off"}, "log level");
}

}  // namespace comet::namesrv
