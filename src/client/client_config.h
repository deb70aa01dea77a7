#pragma once
// Settings shared by producers, consumers and the admin client (Java ClientConfig).

#include <chrono>
#include <string>
#include <vector>

namespace comet::client {

struct ClientConfig {
    // Name server addresses, "host:port;host:port" (Java namesrvAddr).
    std::string namesrv_addr;
    // Address the client announces in BORNHOST and its client id (Java clientIP).
    std::string client_ip = "127.0.0.1";
    // Empty: "<pid>#<nanos>" like Java 4.9 when instanceName is DEFAULT.
    std::string instance_name;
    std::chrono::milliseconds poll_name_server_interval{30000};
    std::chrono::milliseconds heartbeat_broker_interval{30000};
    std::chrono::milliseconds persist_consumer_offset_interval{5000};
    std::chrono::milliseconds rpc_timeout{3000};  // admin / route / offset RPCs
    size_t io_threads = 1;
};

// Splits "a;b" (also accepts ',') into addresses, dropping blanks.
std::vector<std::string> split_namesrv_addr(const std::string& addrs);

}  // namespace comet::client
