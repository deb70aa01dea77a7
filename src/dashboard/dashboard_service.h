#pragma once
// DashboardService: mqdashboard's process component. A polling thread ("DashPoll") runs the
// Collector every poll_interval, feeds the ChangeHistory and renders the JSON documents; an
// http::Server serves the page (/) and those documents (/api/cluster, /api/topics,
// /api/groups, /api/history) from the last rendering, so a request never waits for a broker.
//
// Owner: main(). Threads: start()/shutdown() from the owner; DashPoll writes `docs_` under mu_;
// the HttpServer thread reads it under mu_. Lock order: mu_ only (leaf; never held across a
// poll or a handler's write).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "dashboard/admin_source.h"
#include "dashboard/change_history.h"
#include "dashboard/collector.h"
#include "http/server.h"

namespace comet::dashboard {

struct DashboardOptions {
    std::string namesrv_addr;  // "host:port;host:port"
    std::string listen_host = "127.0.0.1";
    uint16_t port = 8089;  // 0: ephemeral
    std::chrono::milliseconds poll_interval{1000};
    std::chrono::milliseconds rpc_timeout{1500};  // per admin request; a hung broker costs this
    size_t history_capacity = 200;
};

class DashboardService {
public:
    explicit DashboardService(DashboardOptions options);
    ~DashboardService();
    DashboardService(const DashboardService&) = delete;
    DashboardService& operator=(const DashboardService&) = delete;

    // Starts the admin client, the HTTP server (errors name the address) and the poller.
    Status start();
    // Stops the poller (joins it), the HTTP server and the client. Idempotent.
    void shutdown();
    // The bound port and "http://host:port/" after start().
    uint16_t port() const;
    std::string url() const;

private:
    struct Docs {
        std::string cluster;
        std::string topics;
        std::string groups;
        std::string history;
    };
    void poll_loop();
    http::Response json(std::string Docs::*doc);

    DashboardOptions options_;
    std::vector<std::string> namesrv_addrs_;
    AdminSource source_;
    Collector collector_;
    ChangeHistory history_;  // DashPoll only
    http::Server server_;
    std::thread poller_;
    bool started_ = false;  // owner thread only

    Mutex mu_;
    std::condition_variable_any wake_;
    bool stopping_ GUARDED_BY(mu_) = false;
    Docs docs_ GUARDED_BY(mu_);
};

}  // namespace comet::dashboard
