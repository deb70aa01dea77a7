#include <gtest/gtest.h>

#include "base/config.h"
#include "broker/context/store_adapter.h"
#include "broker/metadata/broker_config.h"

namespace comet::broker {
namespace {

TEST(BrokerRegistry, BrokerAndStoreKeysThroughTheSharedRegistry) {
    BrokerConfig cfg;
    store::MessageStoreConfig store_cfg;
    ConfigRegistry r;
    register_broker_config(r, &cfg);
    register_store_config(r, &store_cfg);
    ASSERT_TRUE(r.set("listenPort", "20911", "test").is_ok());
    ASSERT_TRUE(r.set("autoCreateTopicEnable", "false", "test").is_ok());
    ASSERT_TRUE(r.set("mapedFileSizeCommitLog", "1048576", "test").is_ok());
    ASSERT_TRUE(r.set("flushDiskType", "SYNC_FLUSH", "test").is_ok());
    EXPECT_EQ(store_cfg.commit_log_write_buffer_bytes, 4 * 1024 * 1024);  // Comet default
    ASSERT_TRUE(r.set("commitLogWriteBufferSize", "0", "test").is_ok());
    EXPECT_EQ(store_cfg.commit_log_write_buffer_bytes, 0);
    EXPECT_FALSE(r.set("commitLogWriteBufferSize", "-1", "test").is_ok());
    EXPECT_FALSE(r.set("brokerId", "x", "test").is_ok());
    EXPECT_EQ(cfg.listen_port, 20911);
    EXPECT_FALSE(cfg.auto_create_topic_enable);
    EXPECT_NE(r.important_properties_text().find("brokerName=broker-a"), std::string::npos);

    cfg.store_path_root_dir = "/tmp/x";
    auto sc = make_store_config(cfg, store_cfg);
    ASSERT_TRUE(sc.is_ok()) << sc.status().to_string();
    EXPECT_EQ(sc->mapped_file_size_commit_log, 1048576);
    EXPECT_EQ(sc->flush_disk_type, store::FlushDiskType::kSyncFlush);
    EXPECT_EQ(sc->store_path_root_dir, "/tmp/x");
    EXPECT_EQ(sc->store_host, "127.0.0.1:20911");

    cfg.flush_disk_type = "SOMETIMES";
    EXPECT_FALSE(make_store_config(cfg, store_cfg).is_ok());
    cfg.flush_disk_type = "ASYNC_FLUSH";
    cfg.extra["fileReservedTime"] = "nope";
    EXPECT_FALSE(make_store_config(cfg, store_cfg).is_ok());
}

// Decision 035: commitLogZeroFill=auto zero-fills in DLedger mode only.
TEST(BrokerRegistry, CommitLogZeroFillAutoFollowsTheDurabilityMode) {
    BrokerConfig cfg;
    store::MessageStoreConfig store_cfg;
    ConfigRegistry r;
    register_broker_config(r, &cfg);
    register_store_config(r, &store_cfg);
    auto resolved = [&] {
        auto sc = make_store_config(cfg, store_cfg);
        EXPECT_TRUE(sc.is_ok()) << sc.status().to_string();
        return sc.is_ok() && sc->zero_fill_commit_log;
    };
    EXPECT_FALSE(resolved()) << "ASYNC_FLUSH master-slave: no sync per acknowledgement";
    cfg.flush_disk_type = "SYNC_FLUSH";
    EXPECT_FALSE(resolved()) << "a group commit batches enough: the zeros would cost more";
    cfg.flush_disk_type = "ASYNC_FLUSH";
    cfg.enable_dleger_commit_log = true;
    EXPECT_TRUE(resolved());
    ASSERT_TRUE(r.set("commitLogZeroFill", "false", "test").is_ok());
    EXPECT_FALSE(resolved());
    cfg.enable_dleger_commit_log = false;
    ASSERT_TRUE(r.set("commitLogZeroFill", "true", "test").is_ok());
    EXPECT_TRUE(resolved());
    ASSERT_TRUE(r.set("commitLogZeroFill", "sometimes", "test").is_ok());
    auto bad = make_store_config(cfg, store_cfg);
    ASSERT_FALSE(bad.is_ok());
    EXPECT_NE(bad.status().to_string().find("commitLogZeroFill"), std::string::npos);
}

}  // namespace
}  // namespace comet::broker
