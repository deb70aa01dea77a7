// Prometheus metrics of real processes (docs/metrics.md): mqnamesrv + mqbroker with metricsPort,
// sends and pulls, then /metrics is scraped and its figures checked; promtool checks the format;
// a real prometheus server scrapes the broker and answers a PromQL query about it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <string>

#include "harness.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

using namespace std::chrono_literals;
namespace RequestCode = protocol::RequestCode;
namespace RC = protocol::ResponseCode;

struct HttpReply {
    int status = 0;
    std::string head;
    std::string body;
};

// One GET over a fresh connection ("Connection: close"), read to EOF; every receive waits at
// most 5 s. nullopt when the connection fails or the answer is not HTTP.
std::optional<HttpReply> http_get(uint16_t port, const std::string& path) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return std::nullopt;
    }
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
        ::close(fd);
        return std::nullopt;
    }
    const std::string req =
        "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
        ::close(fd);
        return std::nullopt;
    }
    std::string in;
    char buf[16384];
    for (int i = 0; i < 100000; ++i) {
        const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) {
            break;
        }
        in.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    const size_t end = in.find("\r\n\r\n");
    if (in.rfind("HTTP/1.", 0) != 0 || end == std::string::npos) {
        return std::nullopt;
    }
    HttpReply r;
    r.status = std::atoi(in.c_str() + 9);
    r.head = in.substr(0, end);
    r.body = in.substr(end + 4);
    return r;
}

// The value of the sample `name{...}` whose labels include every `needles` entry (k="v"), or
// nullopt. Parses the text exposition format line by line.
std::optional<double> sample(const std::string& text, const std::string& name,
                             const std::vector<std::string>& needles = {}) {
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos) {
            end = text.size();
        }
        const std::string line = text.substr(pos, end - pos);
        pos = end + 1;
        if (line.empty() || line[0] == '#') {
            continue;
        }
        const size_t name_end = line.find_first_of("{ ");
        if (line.substr(0, name_end) != name) {
            continue;
        }
        const size_t value_at = line.rfind(' ');
        const std::string labels = line.substr(name_end, value_at - name_end);
        bool all = true;
        for (const auto& n : needles) {
            all = all && labels.find(n) != std::string::npos;
        }
        if (all) {
            return std::strtod(line.c_str() + value_at + 1, nullptr);
        }
    }
    return std::nullopt;
}

std::string url_encode(const std::string& s) {
    std::string out;
    for (const unsigned char c : s) {
        if (std::isalnum(c) != 0 || c == '_' || c == '-' || c == '.' || c == '~') {
            out += static_cast<char>(c);
        } else {
            char hex[4];
            std::snprintf(hex, sizeof(hex), "%%%02X", c);
            out += hex;
        }
    }
    return out;
}

class MetricsIt : public ::testing::Test {
protected:
    void SetUp() override {
        namesrv_port_ = free_port();
        namesrv_metrics_port_ = free_port();
        auto ns = start_namesrv(dir_, namesrv_port_,
                                {{"listenHost", "127.0.0.1"},
                                 {"metricsPort", std::to_string(namesrv_metrics_port_)}});
        ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
        namesrv_ = std::move(ns).value();
        ASSERT_TRUE(namesrv_->wait_for_port(namesrv_port_, 10s).is_ok()) << namesrv_->log_tail();
        broker_port_ = free_port();
        broker_metrics_port_ = free_port();
        auto b = start_broker(dir_, broker_port_, addr(namesrv_port_),
                              {{"metricsPort", std::to_string(broker_metrics_port_)},
                               {"brokerClusterName", "MetricsCluster"}});
        ASSERT_TRUE(b.is_ok()) << b.status().to_string();
        broker_ = std::move(b).value();
        ASSERT_TRUE(broker_->wait_for_port(broker_port_, 20s).is_ok()) << broker_->log_tail();
        ASSERT_TRUE(broker_->wait_for_port(broker_metrics_port_, 10s).is_ok())
            << broker_->log_tail();
        client_.start();
    }
    void TearDown() override { client_.shutdown(); }

    protocol::RemotingCommand must(Result<protocol::RemotingCommand> r) {
        EXPECT_TRUE(r.is_ok()) << r.status().to_string();
        return r.is_ok() ? std::move(r).value() : protocol::RemotingCommand{};
    }

    std::string scrape(uint16_t port) {
        auto r = http_get(port, "/metrics");
        EXPECT_TRUE(r.has_value());
        if (!r) {
            return {};
        }
        EXPECT_EQ(r->status, 200) << r->head;
        EXPECT_NE(r->head.find("Content-Type: text/plain; version=0.0.4"), std::string::npos)
            << r->head;
        return r->body;
    }

    // Creates MetricsTopic (2 queues), sends 7 messages to queue 0 and 3 to queue 1, and waits
    // until all are dispatched (a pull of group WARM sees them). Returns the body bytes sent.
    int64_t send_workload() {
        EXPECT_EQ(must(call(client_, broker_port_, create_topic_request("MetricsTopic", 2))).code,
                  RC::kSuccess);
        int64_t bytes = 0;
        for (int i = 0; i < 10; ++i) {
            const std::string body = "metrics-message-" + std::to_string(i);
            bytes += static_cast<int64_t>(body.size());
            auto r = must(call(client_, broker_port_,
                               send_message_request("MetricsTopic", body, i < 7 ? 0 : 1)));
            EXPECT_EQ(r.code, RC::kSuccess) << r.remark.value_or("");
        }
        for (const auto& [queue, count] : {std::pair{0, 7}, std::pair{1, 3}}) {
            EXPECT_TRUE(eventually(
                [&, queue = queue, count = count] {
                    auto r = call(client_, broker_port_,
                                  pull_message_request("WARM", "MetricsTopic", queue, 0));
                    if (!r.is_ok() || r.value().code != RC::kSuccess) {
                        return false;
                    }
                    const std::string* max = r.value().ext("maxOffset");
                    return max != nullptr && *max == std::to_string(count);
                },
                10s))
                << "queue " << queue << " not dispatched";
        }
        return bytes;
    }

    Status commit_offset(const std::string& group, int queue, int64_t offset) {
        auto r = call(client_, broker_port_,
                      request(RequestCode::kUpdateConsumerOffset,
                              {{"consumerGroup", group},
                               {"topic", "MetricsTopic"},
                               {"queueId", std::to_string(queue)},
                               {"commitOffset", std::to_string(offset)}}));
        if (!r.is_ok()) {
            return r.status();
        }
        if (r.value().code != RC::kSuccess) {
            return Status::error(Errc::kInternal, "UPDATE_CONSUMER_OFFSET answered {}",
                                 r.value().code);
        }
        return Status::ok();
    }

    TempDir dir_{"comet_it_metrics"};
    uint16_t namesrv_port_ = 0;
    uint16_t namesrv_metrics_port_ = 0;
    uint16_t broker_port_ = 0;
    uint16_t broker_metrics_port_ = 0;
    std::unique_ptr<Process> namesrv_;
    std::unique_ptr<Process> broker_;
    net::RemotingClient client_{net::RemotingClientConfig{}};
};

TEST_F(MetricsIt, BrokerFiguresMatchTheTraffic) {
    const int64_t bytes = send_workload();
    // One pull of group MG takes queue 0's 7 messages; then MG commits offsets 4 and 1.
    auto pulled = must(call(client_, broker_port_, pull_message_request("MG", "MetricsTopic", 0, 0)));
    ASSERT_EQ(pulled.code, RC::kSuccess);
    ASSERT_TRUE(commit_offset("MG", 0, 4).is_ok());
    ASSERT_TRUE(commit_offset("MG", 1, 1).is_ok());

    const std::string text = scrape(broker_metrics_port_);
    const std::string topic = "topic=\"MetricsTopic\"";
    EXPECT_EQ(sample(text, "rocketmq_messages_in_total",
                     {topic, "cluster=\"MetricsCluster\"", "node_type=\"broker\"",
                      "node_id=\"broker-a\"", "message_type=\"Normal\"", "is_system=\"false\""}),
              10)
        << text;
    EXPECT_EQ(sample(text, "rocketmq_throughput_in_total", {topic}), static_cast<double>(bytes));
    EXPECT_EQ(sample(text, "rocketmq_message_size_count", {topic}), 10);
    EXPECT_EQ(sample(text, "rocketmq_message_size_bucket", {topic, "le=\"1024\""}), 10);
    EXPECT_EQ(sample(text, "rocketmq_messages_out_total", {topic, "consumer_group=\"MG\""}), 7);
    EXPECT_GT(sample(text, "rocketmq_throughput_out_total", {topic, "consumer_group=\"MG\""})
                  .value_or(0),
              static_cast<double>(bytes) * 7 / 10);
    // Lag from committed offsets: queue 0 7-4, queue 1 3-1.
    EXPECT_EQ(sample(text, "rocketmq_consumer_lag_messages", {topic, "consumer_group=\"MG\""}), 5);
    EXPECT_EQ(sample(text, "comet_consumer_queue_lag_messages",
                     {topic, "consumer_group=\"MG\"", "queue_id=\"0\""}),
              3);
    EXPECT_EQ(sample(text, "comet_consumer_offset",
                     {topic, "consumer_group=\"MG\"", "queue_id=\"1\""}),
              1);
    // Every send was one SEND_MESSAGE_V2 RPC answered SUCCESS, and one PUT_OK.
    EXPECT_GE(sample(text, "rocketmq_rpc_latency_count",
                     {"request_code=\"310\"", "response_code=\"0\""})
                  .value_or(0),
              10);
    EXPECT_EQ(sample(text, "comet_put_results_total", {"status=\"PUT_OK\""}), 10);
    EXPECT_EQ(sample(text, "comet_put_latency_seconds_count"), 10);
    EXPECT_GE(sample(text, "comet_pull_read_latency_seconds_count").value_or(0), 3);
    EXPECT_EQ(sample(text, "comet_broker_role", {"role=\"ASYNC_MASTER\""}), 1);
    EXPECT_EQ(sample(text, "comet_disk_full"), 0);
    EXPECT_GT(sample(text, "comet_disk_total_bytes").value_or(0), 0);
    EXPECT_GT(sample(text, "comet_commitlog_max_offset_bytes").value_or(0),
              static_cast<double>(bytes));
    EXPECT_EQ(sample(text, "rocketmq_storage_dispatch_behind_bytes"), 0);
    EXPECT_TRUE(sample(text, "comet_write_buffer_capacity_bytes").has_value()) << text;
    EXPECT_GE(sample(text, "comet_write_buffer_used_bytes").value_or(-1), 0) << text;
    EXPECT_TRUE(sample(text, "comet_ha_need_ack_nums").has_value()) << text;
    // The CommitLog flush thread (ASYNC_FLUSH) reports its msync rounds; they run on a timer.
    EXPECT_TRUE(eventually(
        [&] {
            return sample(scrape(broker_metrics_port_), "comet_flush_bytes_total").value_or(0) >=
                   static_cast<double>(bytes);
        },
        20s));

    // The name server: the broker registered (REGISTER_BROKER = 103) and is alive.
    const std::string ns = scrape(namesrv_metrics_port_);
    EXPECT_EQ(sample(ns, "comet_namesrv_live_brokers", {"node_type=\"nameserver\""}), 1) << ns;
    EXPECT_GE(sample(ns, "rocketmq_rpc_latency_count", {"request_code=\"103\""}).value_or(0), 1);

    // Other paths and methods of the endpoint.
    auto missing = http_get(broker_metrics_port_, "/nope");
    ASSERT_TRUE(missing.has_value());
    EXPECT_EQ(missing->status, 404);
}

TEST_F(MetricsIt, PromtoolAcceptsTheScrapes) {
    send_workload();
    ASSERT_TRUE(commit_offset("MG", 0, 2).is_ok());
    for (const uint16_t port : {broker_metrics_port_, namesrv_metrics_port_}) {
        const std::string file = dir_.sub("scrape-" + std::to_string(port) + ".txt");
        {
            std::ofstream out(file);
            out << scrape(port);
        }
        // promtool check metrics reads stdin; exit 0 and no complaint (lint included).
        const CommandResult r = run_command(
            dir_, {"/bin/sh", "-c", "promtool check metrics < '" + file + "'"}, 30s);
        EXPECT_EQ(r.exit_code, 0) << "promtool on port " << port << ": " << r.out << r.err;
        EXPECT_EQ(r.out + r.err, "") << "port " << port;
    }
}

TEST_F(MetricsIt, PrometheusScrapesTheBrokerAndAnswersPromQl) {
    send_workload();
    const uint16_t prom_port = free_port();
    const std::string conf = dir_.sub("prometheus.yml");
    {
        std::ofstream out(conf);
        out << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
            << "scrape_configs:\n  - job_name: comet\n    static_configs:\n"
            << "      - targets: ['127.0.0.1:" << broker_metrics_port_ << "']\n";
    }
    ProcessOptions o;
    o.name = "prometheus";
    o.binary = "/usr/bin/prometheus";
    o.pass_config = false;
    o.args = {"--config.file=" + conf, "--storage.tsdb.path=" + dir_.sub("prom-data"),
              "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)};
    auto p = Process::start(o, dir_.path());
    ASSERT_TRUE(p.is_ok()) << "prometheus must be installed (package prometheus): "
                           << p.status().to_string();
    auto prom = std::move(p).value();
    ASSERT_TRUE(prom->wait_for_port(prom_port, 30s).is_ok()) << prom->log_tail();

    const std::string query =
        "/api/v1/query?query=" +
        url_encode("sum(rocketmq_messages_in_total{job=\"comet\",topic=\"MetricsTopic\"})");
    std::string last;
    const bool answered = eventually(
        [&] {
            auto r = http_get(prom_port, query);
            if (!r) {
                return false;
            }
            last = r->body;
            return r->status == 200 && last.find("\"status\":\"success\"") != std::string::npos &&
                   last.find(",\"10\"]") != std::string::npos;
        },
        60s);
    EXPECT_TRUE(answered) << "last answer: " << last << "\n" << prom->log_tail();
    // The target is up from Prometheus' point of view.
    auto up = http_get(prom_port, "/api/v1/query?query=" + url_encode("up{job=\"comet\"}"));
    ASSERT_TRUE(up.has_value());
    EXPECT_NE(up->body.find(",\"1\"]"), std::string::npos) << up->body;
}

TEST_F(MetricsIt, RuntimeInfoTpsComesFromTheStoreCounters) {
    send_workload();
    // putTps is "<10 s> <60 s> <600 s>" over samples taken every second: it turns positive once
    // a sample after the sends exists.
    std::string put_tps;
    EXPECT_TRUE(eventually(
        [&] {
            auto info = runtime_info(client_, broker_port_);
            if (!info.is_ok()) {
                return false;
            }
            put_tps = info.value()["putTps"];
            return std::strtod(put_tps.c_str(), nullptr) > 0;
        },
        20s))
        << "putTps " << put_tps;
    auto info = runtime_info(client_, broker_port_);
    ASSERT_TRUE(info.is_ok());
    EXPECT_EQ(std::count(info.value()["getTransferedTps"].begin(),
                         info.value()["getTransferedTps"].end(), ' '),
              2);
}

// A broker without metricsPort but with RocketMQ 5's exporter keys serves /metrics on
// metricsPromExporterPort; an exporter Comet does not have is refused at start.
TEST(MetricsKeys, PromExporterKeysAndUnsupportedExporter) {
    TempDir dir("comet_it_metrics_keys");
    const uint16_t ns_port = free_port();
    auto ns = start_namesrv(dir, ns_port, {{"listenHost", "127.0.0.1"}});
    ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
    ASSERT_TRUE(ns.value()->wait_for_port(ns_port, 10s).is_ok());
    const uint16_t port = free_port();
    const uint16_t prom_port = free_port();
    auto b = start_broker(dir, port, addr(ns_port),
                          {{"metricsExporterType", "PROM"},
                           {"metricsPromExporterPort", std::to_string(prom_port)},
                           {"metricsPromExporterHost", "127.0.0.1"}});
    ASSERT_TRUE(b.is_ok()) << b.status().to_string();
    ASSERT_TRUE(b.value()->wait_for_port(prom_port, 20s).is_ok()) << b.value()->log_tail();
    auto r = http_get(prom_port, "/metrics");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(sample(r->body, "comet_broker_role", {"role=\"ASYNC_MASTER\""}), 1) << r->body;

    auto otlp = start_broker(dir, free_port(), addr(ns_port), {{"metricsExporterType", "OTLP_GRPC"}},
                             "broker-otlp");
    ASSERT_TRUE(otlp.is_ok()) << otlp.status().to_string();
    auto code = otlp.value()->wait_exit(20s);
    ASSERT_TRUE(code.is_ok()) << "a broker with metricsExporterType=OTLP_GRPC kept running";
    EXPECT_NE(code.value(), 0);
    EXPECT_NE(otlp.value()->log().find("metricsExporterType=OTLP_GRPC is not supported"),
              std::string::npos)
        << otlp.value()->log_tail();
}

// A master and one slave: the master reports the slave's ack offset, gap and in-sync state,
// needAckNums and its role; the slave reports its role and HA connection.
TEST(MetricsReplication, MasterReportsPerSlaveState) {
    TempDir dir("comet_it_metrics_ha");
    const uint16_t ns_port = free_port();
    auto ns = start_namesrv(dir, ns_port, {{"listenHost", "127.0.0.1"}});
    ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
    ASSERT_TRUE(ns.value()->wait_for_port(ns_port, 10s).is_ok());
    const uint16_t master_metrics = free_port();
    const uint16_t slave_metrics = free_port();
    BrokerGroupOptions opts;
    opts.slaves = 1;
    opts.common_config = {{"totalReplicas", "2"}, {"inSyncReplicas", "2"}};
    opts.master_config = {{"brokerRole", "SYNC_MASTER"},
                          {"metricsPort", std::to_string(master_metrics)}};
    opts.slave_config = {{"metricsPort", std::to_string(slave_metrics)}};
    auto g = BrokerGroup::start(dir, addr(ns_port), opts);
    ASSERT_TRUE(g.is_ok()) << g.status().to_string();
    auto& group = *g.value();
    net::RemotingClient client{net::RemotingClientConfig{}};
    client.start();
    ASSERT_EQ(call(client, group.master().port, create_topic_request("HaTopic", 1)).value().code,
              RC::kSuccess);
    // A SYNC_MASTER answers once the slave holds the message.
    EXPECT_TRUE(eventually(
        [&] {
            auto r = call(client, group.master().port, send_message_request("HaTopic", "x", 0));
            return r.is_ok() && r.value().code == RC::kSuccess;
        },
        20s));
    std::string text;
    EXPECT_TRUE(eventually(
        [&] {
            auto r = http_get(master_metrics, "/metrics");
            text = r ? r->body : "";
            const auto max = sample(text, "comet_commitlog_max_offset_bytes");
            const auto ack = sample(text, "comet_ha_slave_ack_offset_bytes", {"slave_broker_id="});
            return max && ack && *max > 0 && *ack == *max;
        },
        20s))
        << text;
    EXPECT_EQ(sample(text, "comet_ha_slave_gap_bytes"), 0) << text;
    EXPECT_EQ(sample(text, "comet_ha_slave_in_sync"), 1);
    EXPECT_EQ(sample(text, "comet_ha_slave_behind_seconds"), 0) << text;
    EXPECT_EQ(sample(text, "comet_ha_need_ack_nums"), 2);
    EXPECT_EQ(sample(text, "comet_ha_need_ack_nums_degraded"), 0);
    EXPECT_GE(sample(text, "comet_ha_quorum_acks_total").value_or(0), 1);
    EXPECT_EQ(sample(text, "comet_broker_role", {"role=\"SYNC_MASTER\"", "broker_id=\"0\""}), 1);
    auto slave = http_get(slave_metrics, "/metrics");
    ASSERT_TRUE(slave.has_value());
    EXPECT_EQ(sample(slave->body, "comet_broker_role", {"role=\"SLAVE\"", "broker_id=\"1\""}),
              1)
        << slave->body;
    EXPECT_EQ(sample(slave->body, "comet_ha_client_connected"), 1);
    client.shutdown();
}

// mqcontroller (a one-member group, PROM exporter keys): Raft figures and promtool's approval.
TEST(MetricsKeys, ControllerServesRaftFigures) {
    TempDir dir("comet_it_metrics_ctl");
    const uint16_t port = free_port();
    const uint16_t metrics_port = free_port();
    ProcessOptions o;
    o.name = "ctl-n0";
    o.binary = binary_path("mqcontroller");
    o.config = {{"controllerDLegerGroup", "CtlGroup"},
                {"controllerDLegerPeers", "n0-127.0.0.1:" + std::to_string(port)},
                {"controllerDLegerSelfId", "n0"},
                {"controllerStorePath", dir.sub("ctl/store")},
                {"logDir", dir.sub("ctl/logs")},
                {"metricsPort", std::to_string(metrics_port)}};
    auto p = Process::start(o, dir.path());
    ASSERT_TRUE(p.is_ok()) << p.status().to_string();
    auto ctl = std::move(p).value();
    ASSERT_TRUE(ctl->wait_for_port(metrics_port, 20s).is_ok()) << ctl->log_tail();
    std::string text;
    EXPECT_TRUE(eventually(
        [&] {
            auto r = http_get(metrics_port, "/metrics");
            text = r ? r->body : "";
            return sample(text, "comet_controller_ready").value_or(0) == 1;
        },
        20s))
        << text;
    EXPECT_EQ(sample(text, "comet_controller_role",
                     {"role=\"Leader\"", "node_type=\"controller\"", "node_id=\"n0\""}),
              1)
        << text;
    EXPECT_GE(sample(text, "comet_controller_term").value_or(0), 1);
    const std::string file = dir.sub("ctl-scrape.txt");
    {
        std::ofstream out(file);
        out << text;
    }
    const CommandResult r =
        run_command(dir, {"/bin/sh", "-c", "promtool check metrics < '" + file + "'"}, 30s);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(r.out + r.err, "");
}

}  // namespace
}  // namespace comet::it
