#include "dashboard/dashboard_service.h"

#include <pthread.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "dashboard/json_view.h"
#include "dashboard/page.h"

namespace comet::dashboard {

namespace {

client::ClientConfig admin_config(const DashboardOptions& o) {
    client::ClientConfig c;
    c.namesrv_addr = o.namesrv_addr;
    c.instance_name = fmt::format("mqdashboard-{}", ::getpid());
    c.rpc_timeout = o.rpc_timeout;
    return c;
}

int64_t wall_millis() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace

DashboardService::DashboardService(DashboardOptions options)
    : options_(std::move(options)),
      namesrv_addrs_(client::split_namesrv_addr(options_.namesrv_addr)),
      source_(admin_config(options_)),
      collector_(source_),
      history_(options_.history_capacity),
      server_(options_.listen_host, options_.port) {
    const ClusterSnapshot empty;
    docs_.cluster = cluster_json(empty, namesrv_addrs_);
    docs_.topics = topics_json(empty);
    docs_.groups = groups_json(empty);
    docs_.history = history_json({}, 0);
}

DashboardService::~DashboardService() { shutdown(); }

http::Response DashboardService::json(std::string Docs::*doc) {
    http::Response r;
    r.content_type = "application/json; charset=utf-8";
    MutexLock l(mu_);
    r.body = docs_.*doc;
    return r;
}

Status DashboardService::start() {
    if (namesrv_addrs_.empty()) {
        return Status::error(Errc::kInvalidArgument,
                             "no name server: pass -n host:port[;host:port] or set NAMESRV_ADDR");
    }
    COMET_RETURN_IF_ERROR(source_.start());
    server_.route("/", [](const http::Request&) {
        http::Response r;
        r.content_type = "text/html; charset=utf-8";
        r.body = std::string(page_html());
        return r;
    });
    server_.route("/api/cluster", [this](const http::Request&) { return json(&Docs::cluster); });
    server_.route("/api/topics", [this](const http::Request&) { return json(&Docs::topics); });
    server_.route("/api/groups", [this](const http::Request&) { return json(&Docs::groups); });
    server_.route("/api/history", [this](const http::Request&) { return json(&Docs::history); });
    if (Status st = server_.start(); !st.is_ok()) {
        source_.shutdown();
        return st;
    }
    started_ = true;
    poller_ = std::thread([this] {
        pthread_setname_np(pthread_self(), "DashPoll");
        poll_loop();
    });
    return Status::ok();
}

void DashboardService::poll_loop() {
    for (;;) {
        ClusterSnapshot snap = collector_.collect(wall_millis());
        history_.observe(snap);
        Docs fresh;
        fresh.cluster = cluster_json(snap, namesrv_addrs_);
        fresh.topics = topics_json(snap);
        fresh.groups = groups_json(snap);
        fresh.history = history_json(history_.events(), history_.dropped());
        std::unique_lock<Mutex> l(mu_);
        docs_ = std::move(fresh);
        if (wake_.wait_for(l, options_.poll_interval,
                           [this]() REQUIRES(mu_) { return stopping_; })) {
            return;
        }
    }
}

void DashboardService::shutdown() {
    if (!started_) {
        return;
    }
    started_ = false;
    {
        MutexLock l(mu_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (poller_.joinable()) {
        poller_.join();
    }
    server_.stop();
    source_.shutdown();
}

uint16_t DashboardService::port() const { return server_.port(); }

std::string DashboardService::url() const {
    const bool v6 = options_.listen_host.find(':') != std::string::npos;
    return fmt::format("http://{}{}{}:{}/", v6 ? "[" : "", options_.listen_host, v6 ? "]" : "",
                       port());
}

}  // namespace comet::dashboard
