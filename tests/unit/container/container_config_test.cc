// Container settings and the per-broker file checks (src/container/container_config.h).

#include "container/container_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace comet::container {
namespace {

std::vector<PropertyEntry> entries_of(const std::string& text, const std::string& source) {
    auto e = parse_properties(text, source);
    EXPECT_TRUE(e.is_ok()) << e.status().message();
    return e.is_ok() ? e.value() : std::vector<PropertyEntry>{};
}

BrokerInstanceConfig instance(const std::string& text, const std::string& path = "b.conf") {
    auto r = make_broker_instance_config(path, entries_of(text, path), {});
    EXPECT_TRUE(r.is_ok()) << r.status().message();
    return r.is_ok() ? std::move(r).value() : BrokerInstanceConfig{};
}

TEST(ContainerConfig, DefaultsFollowBrokerContainerStartup) {
    BrokerContainerConfig c;
    ConfigRegistry r;
    register_container_config(r, &c);
    EXPECT_EQ(c.listen_port, 10811);
    EXPECT_TRUE(c.broker_config_paths.empty());
    EXPECT_TRUE(r.contains("brokerConfigPaths"));
    EXPECT_TRUE(r.contains("namesrvAddr"));
    ASSERT_TRUE(r.update(entries_of("brokerConfigPaths=/a.conf:/b.conf\nlistenPort=20811\n"
                                    "namesrvAddr=127.0.0.1:9876\n",
                                    "container.conf"),
                         nullptr)
                    .is_ok());
    EXPECT_EQ(c.listen_port, 20811);
    EXPECT_EQ(c.broker_config_paths, "/a.conf:/b.conf");
    EXPECT_EQ(c.namesrv_addr, "127.0.0.1:9876");
}

TEST(ContainerConfig, BadListenPortIsRefusedNamingTheKey) {
    BrokerContainerConfig c;
    ConfigRegistry r;
    register_container_config(r, &c);
    Status st = r.update(entries_of("listenPort=70000\n", "container.conf"), nullptr);
    ASSERT_FALSE(st.is_ok());
    EXPECT_NE(st.message().find("listenPort"), std::string::npos) << st.message();
}

TEST(ContainerConfig, ConfigTextListsEveryKeySorted) {
    BrokerContainerConfig c;
    c.broker_config_paths = "/x.conf";
    c.namesrv_addr = "n:1";
    EXPECT_EQ(container_config_text(c),
              "brokerConfigPaths=/x.conf\nlistenHost=0.0.0.0\nlistenPort=10811\nlogDir=\n"
              "namesrvAddr=n:1\nserverSelectorThreads=0\n");
}

TEST(ContainerConfig, SplitsPathsOnColonsAndDropsEmptyItems) {
    EXPECT_EQ(split_broker_config_paths("/a.conf:/b.conf"),
              (std::vector<std::string>{"/a.conf", "/b.conf"}));
    EXPECT_EQ(split_broker_config_paths(" /a.conf : :/b.conf:"),
              (std::vector<std::string>{"/a.conf", "/b.conf"}));
    EXPECT_TRUE(split_broker_config_paths("").empty());
    EXPECT_TRUE(split_broker_config_paths(":::").empty());
    EXPECT_EQ(split_broker_config_paths("one.conf"), (std::vector<std::string>{"one.conf"}));
}

TEST(ContainerConfig, ParsesBrokerIdentity) {
    auto id = parse_instance_identity("DefaultCluster:broker-a:0");
    ASSERT_TRUE(id.is_ok()) << id.status().message();
    EXPECT_EQ(id->cluster_name, "DefaultCluster");
    EXPECT_EQ(id->broker_name, "broker-a");
    EXPECT_EQ(id->broker_id, 0);
    EXPECT_EQ(id->to_string(), "DefaultCluster:broker-a:0");
    EXPECT_TRUE(parse_instance_identity(" c : b : 2 ").is_ok());
    EXPECT_FALSE(parse_instance_identity("c:b").is_ok());
    EXPECT_FALSE(parse_instance_identity("c:b:x").is_ok());
    EXPECT_FALSE(parse_instance_identity("c:b:-1").is_ok());
    EXPECT_FALSE(parse_instance_identity("c::1").is_ok());
    EXPECT_FALSE(parse_instance_identity("c:b:1:2").is_ok());
}

TEST(ContainerConfig, BrokerFileGivesBrokerAndStoreSettings) {
    const BrokerInstanceConfig b = instance(
        "brokerClusterName=C\nbrokerName=ga\nbrokerId=0\nlistenPort=20911\n"
        "storePathRootDir=/tmp/x/ga\nflushDiskType=SYNC_FLUSH\nmappedFileSizeCommitLog=1048576\n");
    EXPECT_EQ(b.config_path, "b.conf");
    EXPECT_EQ(b.identity().to_string(), "C:ga:0");
    EXPECT_EQ(b.broker.listen_port, 20911);
    EXPECT_EQ(b.broker.flush_disk_type, "SYNC_FLUSH");
    EXPECT_EQ(b.store.mapped_file_size_commit_log, 1048576);
}

TEST(ContainerConfig, UnknownKeyIsAWarningNamingFileAndLine) {
    const BrokerInstanceConfig b = instance("brokerName=ga\nnoSuchKey=1\n", "/etc/ga.conf");
    ASSERT_EQ(b.warnings.size(), 1u);
    EXPECT_NE(b.warnings[0].find("noSuchKey"), std::string::npos) << b.warnings[0];
    EXPECT_NE(b.warnings[0].find("/etc/ga.conf:2"), std::string::npos) << b.warnings[0];
}

TEST(ContainerConfig, BrokerLogDirIsAWarning) {
    const BrokerInstanceConfig b = instance("brokerName=ga\nlogDir=/var/log/ga\n", "ga.conf");
    ASSERT_EQ(b.warnings.size(), 1u);
    EXPECT_NE(b.warnings[0].find("ga.conf:2: logDir is not used"), std::string::npos)
        << b.warnings[0];
}

TEST(ContainerConfig, BrokerServerSelectorThreadsIsAWarning) {
    // The brokers of a container share its I/O threads: a broker file's count is not used.
    const BrokerInstanceConfig b =
        instance("brokerName=ga\nserverSelectorThreads=8\n", "ga.conf");
    ASSERT_EQ(b.warnings.size(), 1u);
    EXPECT_NE(b.warnings[0].find("ga.conf:2: serverSelectorThreads is not used"),
              std::string::npos)
        << b.warnings[0];
}

TEST(ContainerConfig, BadValueIsRefusedNamingFileAndKey) {
    auto r = make_broker_instance_config(
        "/etc/bad.conf", entries_of("brokerName=ga\nlistenPort=abc\n", "/etc/bad.conf"), {});
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().message().rfind("/etc/bad.conf: ", 0), 0u) << r.status().message();
    EXPECT_NE(r.status().message().find("listenPort"), std::string::npos);
}

TEST(ContainerConfig, InvalidCombinationIsRefusedNamingTheKey) {
    // A slave needs brokerId > 0 (BrokerConfig::validate, as mqbroker checks it).
    auto r = make_broker_instance_config(
        "s.conf", entries_of("brokerName=ga\nbrokerRole=SLAVE\nbrokerId=0\n", "s.conf"), {});
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("brokerId"), std::string::npos) << r.status().message();
    // Replication keys that cannot hold (make_replication_config).
    auto q = make_broker_instance_config(
        "q.conf", entries_of("brokerName=ga\ntotalReplicas=1\ninSyncReplicas=3\n", "q.conf"), {});
    ASSERT_FALSE(q.is_ok());
    EXPECT_EQ(q.status().message().rfind("q.conf: ", 0), 0u) << q.status().message();
}

TEST(ContainerConfig, ContainerNamesrvAddrReplacesTheFilesOne) {
    BrokerContainerConfig c;
    c.namesrv_addr = "127.0.0.1:1";
    auto r = make_broker_instance_config(
        "a.conf", entries_of("brokerName=ga\nnamesrvAddr=127.0.0.1:2\n", "a.conf"), c);
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    EXPECT_EQ(r->broker.namesrv_addr, "127.0.0.1:1");
    ASSERT_FALSE(r->warnings.empty());
    EXPECT_NE(r->warnings.back().find("127.0.0.1:2"), std::string::npos);
    // Without a container namesrvAddr the file's own stays.
    auto own = make_broker_instance_config(
        "a.conf", entries_of("brokerName=ga\nnamesrvAddr=127.0.0.1:2\n", "a.conf"), {});
    ASSERT_TRUE(own.is_ok());
    EXPECT_EQ(own->broker.namesrv_addr, "127.0.0.1:2");
}

TEST(ContainerConfig, LoadNamesAMissingFile) {
    auto r = load_broker_instance_config("/nonexistent/comet/broker.conf", {});
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("/nonexistent/comet/broker.conf"), std::string::npos);
}

TEST(ContainerConfig, LoadReadsTheFile) {
    const std::string path =
        (std::filesystem::temp_directory_path() / "comet_container_config_test.conf").string();
    {
        std::ofstream f(path);
        f << "brokerName=from-file\nlistenPort=20999\n";
    }
    auto r = load_broker_instance_config(path, {});
    std::filesystem::remove(path);
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    EXPECT_EQ(r->broker.broker_name, "from-file");
    EXPECT_EQ(r->broker.listen_port, 20999);
}

TEST(ContainerConflicts, DistinctBrokersFit) {
    const auto a = instance("brokerName=ga\nlistenPort=20911\nstorePathRootDir=/s/ga\n");
    const auto b = instance("brokerName=gb\nlistenPort=20921\nstorePathRootDir=/s/gb\n");
    EXPECT_TRUE(check_instance_conflicts(b, {&a}, 10811).is_ok());
    EXPECT_TRUE(check_instance_conflicts(a, {}, 10811).is_ok());
}

TEST(ContainerConflicts, SameIdentityIsRefused) {
    const auto a = instance("brokerName=ga\nlistenPort=20911\nstorePathRootDir=/s/1\n", "a.conf");
    const auto again =
        instance("brokerName=ga\nlistenPort=20921\nstorePathRootDir=/s/2\n", "again.conf");
    Status st = check_instance_conflicts(again, {&a}, 0);
    ASSERT_EQ(st.code(), Errc::kAlreadyExists);
    EXPECT_NE(st.message().find("already been added"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("a.conf"), std::string::npos) << st.message();
}

TEST(ContainerConflicts, SharedStoreDirectoryIsRefused) {
    const auto a = instance("brokerName=ga\nlistenPort=20911\nstorePathRootDir=/s/x\n");
    const auto b = instance("brokerName=gb\nlistenPort=20921\nstorePathRootDir=/s/y/../x/\n");
    Status st = check_instance_conflicts(b, {&a}, 0);
    ASSERT_EQ(st.code(), Errc::kAlreadyExists);
    EXPECT_NE(st.message().find("storePathRootDir"), std::string::npos) << st.message();
}

TEST(ContainerConflicts, PortClashesAreRefusedNamingBothKeys) {
    const auto a = instance("brokerName=ga\nlistenPort=20911\nstorePathRootDir=/s/a\n");
    // Its default HA port (listenPort + 1) is a's listenPort.
    const auto b = instance("brokerName=gb\nlistenPort=20910\nstorePathRootDir=/s/b\n");
    Status st = check_instance_conflicts(b, {&a}, 0);
    ASSERT_EQ(st.code(), Errc::kAlreadyExists);
    EXPECT_NE(st.message().find("haListenPort 20911"), std::string::npos) << st.message();
    // The container's own port.
    const auto c = instance("brokerName=gc\nlistenPort=10811\nstorePathRootDir=/s/c\n");
    EXPECT_EQ(check_instance_conflicts(c, {}, 10811).code(), Errc::kAlreadyExists);
    // Metrics ports.
    const auto m1 = instance(
        "brokerName=m1\nlistenPort=21001\nmetricsPort=21500\n"
        "storePathRootDir=/s/m1\n");
    const auto m2 = instance(
        "brokerName=m2\nlistenPort=21011\nmetricsPort=21500\n"
        "storePathRootDir=/s/m2\n");
    EXPECT_EQ(check_instance_conflicts(m2, {&m1}, 0).code(), Errc::kAlreadyExists);
    // A broker's own two ports.
    const auto self = instance(
        "brokerName=gs\nlistenPort=21101\nhaListenPort=21101\n"
        "storePathRootDir=/s/s\n");
    EXPECT_EQ(check_instance_conflicts(self, {}, 0).code(), Errc::kAlreadyExists);
}

TEST(ContainerConflicts, EphemeralPortsNeverClash) {
    const auto a = instance("brokerName=ga\nlistenPort=0\nstorePathRootDir=/s/a\n");
    const auto b = instance("brokerName=gb\nlistenPort=0\nstorePathRootDir=/s/b\n");
    EXPECT_TRUE(check_instance_conflicts(b, {&a}, 0).is_ok());
}

// The sample files under conf/container are valid and fit together in one container.
TEST(ContainerConfig, SampleFilesLoadAndDoNotConflict) {
    const std::string dir = COMET_SOURCE_DIR "/conf/container/";
    auto entries = load_properties_file(dir + "broker-container.conf");
    ASSERT_TRUE(entries.is_ok()) << entries.status().message();
    BrokerContainerConfig c;
    ConfigRegistry r;
    register_container_config(r, &c);
    std::vector<std::string> warnings;
    ASSERT_TRUE(r.update(entries.value(), &warnings).is_ok());
    EXPECT_TRUE(warnings.empty());
    const std::vector<std::string> paths = split_broker_config_paths(c.broker_config_paths);
    ASSERT_EQ(paths.size(), 2u);
    std::vector<BrokerInstanceConfig> brokers;
    for (const std::string& p : paths) {
        // The listed paths are relative to the repository root.
        auto b = load_broker_instance_config(COMET_SOURCE_DIR "/" + p, c);
        ASSERT_TRUE(b.is_ok()) << b.status().message();
        EXPECT_TRUE(b->warnings.empty()) << b->warnings.front();
        EXPECT_EQ(b->broker.namesrv_addr, c.namesrv_addr);
        brokers.push_back(std::move(b).value());
    }
    EXPECT_EQ(brokers[0].broker.broker_role, "ASYNC_MASTER");
    EXPECT_EQ(brokers[1].broker.broker_role, "SLAVE");
    EXPECT_NE(brokers[0].broker.broker_name, brokers[1].broker.broker_name);
    EXPECT_TRUE(check_instance_conflicts(brokers[1], {&brokers[0]}, c.listen_port).is_ok());
}

}  // namespace
}  // namespace comet::container
