// MetricsConfig key handling and listen resolution; RpcMetrics' histogram children.
#include "metrics/endpoint.h"

#include <gtest/gtest.h>

namespace comet::metrics {
namespace {

TEST(MetricsConfig, MetricsPortWinsOverPromKeys) {
    MetricsConfig c;
    EXPECT_FALSE(c.listen("127.0.0.1").has_value());  // off by default
    ASSERT_TRUE(c.set("metricsExporterType", "PROM").value());
    auto prom = c.listen("10.0.0.1");
    ASSERT_TRUE(prom.has_value());
    EXPECT_EQ(prom->host, "10.0.0.1");
    EXPECT_EQ(prom->port, 5557);
    ASSERT_TRUE(c.set("metricsPromExporterHost", "127.0.0.2").value());
    ASSERT_TRUE(c.set("metricsPromExporterPort", "6000").value());
    EXPECT_EQ(c.listen("10.0.0.1")->host, "127.0.0.2");
    EXPECT_EQ(c.listen("10.0.0.1")->port, 6000);
    ASSERT_TRUE(c.set("metricsPort", "7000").value());
    EXPECT_EQ(c.listen("10.0.0.1")->host, "10.0.0.1");
    EXPECT_EQ(c.listen("10.0.0.1")->port, 7000);
    EXPECT_TRUE(c.validate().is_ok());
}

TEST(MetricsConfig, BadValuesAndUnknownKeys) {
    MetricsConfig c;
    EXPECT_FALSE(c.set("listenPort", "1").value());
    EXPECT_EQ(c.set("metricsPort", "x1").status().code(), Errc::kInvalidArgument);
    ASSERT_TRUE(c.set("metricsPort", "70000").value());
    EXPECT_EQ(c.validate().code(), Errc::kInvalidArgument);
    c.metrics_port = 0;
    c.exporter_type = "OTLP_GRPC";
    const Status st = c.validate();
    EXPECT_EQ(st.code(), Errc::kUnsupported);
    EXPECT_NE(st.message().find("OTLP_GRPC"), std::string::npos);
    std::map<std::string, std::string> props;
    c.to_properties(&props);
    EXPECT_EQ(props["metricsExporterType"], "OTLP_GRPC");
    EXPECT_EQ(props["metricsPromExporterPort"], "5557");
}

TEST(RpcMetrics, OneChildPerCodePair) {
    Registry reg;
    RpcMetrics rpc(&reg);
    rpc.on_rpc(310, 0, std::chrono::microseconds(500));
    rpc.on_rpc(310, 0, std::chrono::milliseconds(4));
    rpc.on_rpc(310, 14, std::chrono::milliseconds(2000));
    const std::string text = reg.render();
    EXPECT_NE(text.find("rocketmq_rpc_latency_count{protocol_type=\"remoting\",request_code=\"310\","
                        "response_code=\"0\"} 2\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("rocketmq_rpc_latency_bucket{protocol_type=\"remoting\",request_code="
                        "\"310\",response_code=\"0\",le=\"1\"} 1\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("request_code=\"310\",response_code=\"14\",le=\"3000\"} 1\n"),
              std::string::npos)
        << text;
}

}  // namespace
}  // namespace comet::metrics
