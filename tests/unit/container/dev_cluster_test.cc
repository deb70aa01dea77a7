// Dev mode's pure parts (src/container/dev_cluster.h): its arguments, the port and path layout,
// the generated broker files (checked exactly as the container checks a broker file) and the
// banner.

#include "container/dev_cluster.h"

#include <gtest/gtest.h>

#include <set>

#include "base/properties.h"
#include "container/container_config.h"

namespace comet::container {
namespace {

Result<DevArgs> parse(std::vector<std::string> args) { return parse_dev_args(args); }

TEST(DevArgs, WithoutDevFlagsTheContainerStartsAsUsual) {
    auto r = parse({"-c", "broker-container.conf", "--listenPort=10812"});
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    EXPECT_FALSE(r->dev);
}

TEST(DevArgs, DevTakesADirAndABasePortInBothSpellings) {
    auto plain = parse({"--dev"});
    ASSERT_TRUE(plain.is_ok());
    EXPECT_TRUE(plain->dev);
    EXPECT_EQ(plain->options.dir, "./data/dev");
    EXPECT_EQ(plain->options.base_port, 9876);

    auto spaced = parse({"--dev", "--dev-dir", "/tmp/x", "--dev-port", "20000"});
    ASSERT_TRUE(spaced.is_ok()) << spaced.status().message();
    EXPECT_EQ(spaced->options.dir, "/tmp/x");
    EXPECT_EQ(spaced->options.base_port, 20000);

    // --dev-dir / --dev-port imply --dev.
    auto joined = parse({"--dev-dir=/tmp/y", "--dev-port=30000"});
    ASSERT_TRUE(joined.is_ok()) << joined.status().message();
    EXPECT_TRUE(joined->dev);
    EXPECT_EQ(joined->options.dir, "/tmp/y");
    EXPECT_EQ(joined->options.base_port, 30000);
}

TEST(DevArgs, BadValuesAndOtherArgumentsAreRefusedByName) {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"--dev-port", "0"},
             {"--dev-port", "65504"},  // base + 32 would pass 65535
             {"--dev-port", "98x"},
             {"--dev-port="},
         }) {
        auto r = parse(args);
        ASSERT_FALSE(r.is_ok()) << args[0];
        EXPECT_NE(r.status().message().find("--dev-port"), std::string::npos)
            << r.status().message();
    }
    auto ok = parse({"--dev-port", "65503"});
    EXPECT_TRUE(ok.is_ok());

    auto missing = parse({"--dev", "--dev-dir"});
    ASSERT_FALSE(missing.is_ok());
    EXPECT_NE(missing.status().message().find("--dev-dir needs a value"), std::string::npos);

    auto mixed = parse({"--dev", "-c", "x.conf"});
    ASSERT_FALSE(mixed.is_ok());
    EXPECT_NE(mixed.status().message().find("\"-c\""), std::string::npos)
        << mixed.status().message();
}

TEST(DevLayout, PortsAndPathsFollowTheBase) {
    DevClusterOptions o;
    o.dir = "/var/tmp/dev/";
    o.base_port = 9876;
    const DevLayout l = make_dev_layout(o);
    EXPECT_EQ(l.dir, "/var/tmp/dev");
    EXPECT_EQ(l.namesrv_port, 9876);
    EXPECT_EQ(l.container_port, 9877);
    EXPECT_EQ(l.namesrv_addr(), "127.0.0.1:9876");
    const int32_t listen[] = {9886, 9896, 9906};
    for (size_t i = 0; i < 3; ++i) {
        const DevPeer& p = l.peers[i];
        EXPECT_EQ(p.id, "n" + std::to_string(i));
        EXPECT_EQ(p.broker_id, static_cast<int64_t>(i) + 1);
        EXPECT_EQ(p.listen_port, listen[i]);
        EXPECT_EQ(p.dledger_port, listen[i] + 2);
        EXPECT_EQ(p.config_path, "/var/tmp/dev/broker-n" + std::to_string(i) + ".properties");
        EXPECT_EQ(p.store_dir, "/var/tmp/dev/broker-dev-n" + std::to_string(i));
        EXPECT_LE(p.dledger_port, o.base_port + kDevPortSpan);
    }
    EXPECT_EQ(l.peer_addr(1), "127.0.0.1:9896");

    // A relative directory becomes absolute (the stores must not depend on a later chdir).
    o.dir = "data/dev";
    EXPECT_EQ(make_dev_layout(o).dir.front(), '/');
}

// The generated files pass the container's own checks (the broker keys, DLedger validation,
// the replication config) and do not conflict with each other or the container's port.
TEST(DevLayout, GeneratedBrokerFilesAreValidAndConflictFree) {
    DevClusterOptions o;
    o.dir = "/var/tmp/dev";
    o.base_port = 20000;
    const DevLayout l = make_dev_layout(o);
    BrokerContainerConfig container;
    container.listen_port = l.container_port;
    container.namesrv_addr = l.namesrv_addr();
    std::vector<BrokerInstanceConfig> configs;
    std::set<std::string> peer_lists;
    for (size_t i = 0; i < 3; ++i) {
        const std::string text = dev_broker_properties(l, i);
        auto entries = parse_properties(text, l.peers[i].config_path);
        ASSERT_TRUE(entries.is_ok());
        auto cfg = make_broker_instance_config(l.peers[i].config_path, *entries, container);
        ASSERT_TRUE(cfg.is_ok()) << cfg.status().message() << "\n" << text;
        EXPECT_TRUE(cfg->warnings.empty()) << cfg->warnings.front();
        EXPECT_TRUE(cfg->broker.enable_dleger_commit_log);
        EXPECT_EQ(cfg->broker.dleger_self_id, l.peers[i].id);
        EXPECT_EQ(cfg->broker.listen_port, l.peers[i].listen_port);
        EXPECT_EQ(cfg->broker.namesrv_addr, "127.0.0.1:20000");
        EXPECT_EQ(cfg->broker.store_path_root_dir, l.peers[i].store_dir);
        EXPECT_EQ(cfg->identity().to_string(),
                  "DefaultCluster:broker-dev:" + std::to_string(i + 1));
        peer_lists.insert(cfg->broker.dleger_peers);
        configs.push_back(std::move(cfg).value());
    }
    // The same peer list, in the same order, on every peer (docs/dledger.md).
    ASSERT_EQ(peer_lists.size(), 1u);
    EXPECT_EQ(*peer_lists.begin(), "n0-127.0.0.1:20012;n1-127.0.0.1:20022;n2-127.0.0.1:20032");
    std::vector<const BrokerInstanceConfig*> running;
    for (const BrokerInstanceConfig& c : configs) {
        Status st = check_instance_conflicts(c, running, l.container_port);
        EXPECT_TRUE(st.is_ok()) << st.message();
        running.push_back(&c);
    }
}

TEST(DevBanner, StatesAddressContractAndHowToStop) {
    DevClusterOptions o;
    o.dir = "/d";
    const DevLayout l = make_dev_layout(o);
    const std::string b = dev_banner(l, 1, "build/release/apps");
    EXPECT_EQ(b.rfind("Comet dev mode is ready", 0), 0u) << b;
    EXPECT_NE(b.find("export NAMESRV_ADDR=127.0.0.1:9876\n"), std::string::npos) << b;
    EXPECT_NE(b.find("n1 127.0.0.1:9896 (leader)"), std::string::npos) << b;
    EXPECT_NE(b.find("A send is acknowledged once a majority (2 of 3 peers, the leader counted) "
                     "has it on disk"),
              std::string::npos)
        << b;
    EXPECT_NE(b.find("share this process and this disk"), std::string::npos) << b;
    EXPECT_NE(b.find("build/release/apps/mqadmin/mqadmin sendMessage -n 127.0.0.1:9876"),
              std::string::npos)
        << b;
    EXPECT_NE(b.find("build/release/apps/mqbench/mqbench producer"), std::string::npos) << b;
    EXPECT_NE(b.find("removeBroker -c 127.0.0.1:9877"), std::string::npos) << b;
    EXPECT_NE(b.find("Ctrl-C"), std::string::npos) << b;
    EXPECT_NE(dev_banner(l, 0, "").find("  try it       mqadmin sendMessage"), std::string::npos);
}

}  // namespace
}  // namespace comet::container
