// BrokerContainer in one process (src/container/broker_container.h): brokers on ephemeral ports
// with no name server, added and removed directly and through the admin port.

#include "container/broker_container.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "net/remoting_client.h"
#include "protocol/admin_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::container {
namespace broker_container_test {

namespace fs = std::filesystem;
namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using namespace std::chrono_literals;

class BrokerContainerTest : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() /
                ("comet-container-" + std::to_string(::getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root_);
        fs::create_directories(root_);
        client_.start();
    }
    void TearDown() override {
        client_.shutdown();
        fs::remove_all(root_);
    }

    // A master of group `name` on ephemeral ports, registering nowhere.
    std::string write_broker(const std::string& name) {
        const std::string path = (root_ / (name + ".conf")).string();
        std::ofstream out(path);
        out << "brokerClusterName=UnitCluster\nbrokerName=" << name
            << "\nlistenPort=0\nhaListenPort=0\nlistenHost=127.0.0.1\n"
            << "storePathRootDir=" << store(name) << "\nmappedFileSizeCommitLog=1048576\n";
        return path;
    }
    std::string store(const std::string& name) const { return (root_ / name / "store").string(); }

    static BrokerContainerConfig container_config() {
        BrokerContainerConfig c;
        c.listen_port = 0;
        c.listen_host = "127.0.0.1";
        return c;
    }

    protocol::RemotingCommand call(uint16_t port, protocol::RemotingCommand req) {
        auto r = client_.invoke_sync("127.0.0.1:" + std::to_string(port), std::move(req), 10s);
        EXPECT_TRUE(r.is_ok()) << r.status().to_string();
        return r.is_ok() ? std::move(r).value() : protocol::RemotingCommand{};
    }

    fs::path root_;
    net::RemotingClient client_{net::RemotingClientConfig{}};
};

TEST_F(BrokerContainerTest, AddsListsRemovesAndStopsBrokers) {
    BrokerContainer box(container_config());
    ASSERT_TRUE(box.start().is_ok());
    EXPECT_GT(box.port(), 0);
    const std::string a = write_broker("ua");
    const std::string b = write_broker("ub");
    auto ia = box.add_broker(a);
    ASSERT_TRUE(ia.is_ok()) << ia.status().to_string();
    EXPECT_GT(ia->port, 0);
    EXPECT_EQ(ia->identity.to_string(), "UnitCluster:ua:0");
    EXPECT_EQ(ia->config_path, a);
    EXPECT_EQ(ia->role, "ASYNC_MASTER");
    auto ib = box.add_broker(b);
    ASSERT_TRUE(ib.is_ok()) << ib.status().to_string();
    const auto listed = box.list();
    ASSERT_EQ(listed.size(), 2u);
    EXPECT_EQ(listed[0].identity.broker_name, "ua");
    EXPECT_EQ(listed[1].identity.broker_name, "ub");

    // The same broker twice is refused before anything opens.
    auto again = box.add_broker(a);
    ASSERT_FALSE(again.is_ok());
    EXPECT_EQ(again.status().code(), Errc::kAlreadyExists);
    EXPECT_EQ(box.list().size(), 2u);

    // Each broker answers on its own port.
    auto cfg = call(ib->port, protocol::RemotingCommand::request(Req::kGetBrokerConfig));
    EXPECT_EQ(cfg.code, RC::kSuccess);
    EXPECT_NE(cfg.body.find("brokerName=ub\n"), std::string::npos);

    ASSERT_TRUE(box.remove_broker(ib->identity).is_ok());
    EXPECT_EQ(box.list().size(), 1u);
    EXPECT_FALSE(fs::exists(store("ub") + "/abort"));
    EXPECT_EQ(box.remove_broker(ib->identity).code(), Errc::kNotFound);

    // The same broker again in the same process: nothing of its first run is left behind.
    auto back = box.add_broker(b);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    cfg = call(back->port, protocol::RemotingCommand::request(Req::kGetBrokerConfig));
    EXPECT_EQ(cfg.code, RC::kSuccess);
    ASSERT_TRUE(box.remove_broker(back->identity).is_ok());

    box.shutdown();
    EXPECT_TRUE(box.list().empty());
    EXPECT_FALSE(fs::exists(store("ua") + "/abort"));
    EXPECT_TRUE(fs::exists(store("ua") + "/checkpoint"));
    auto late = box.add_broker(b);
    ASSERT_FALSE(late.is_ok());
    EXPECT_EQ(late.status().code(), Errc::kFailedPrecondition);
    box.shutdown();  // idempotent
}

// Threads of this process whose name starts with `prefix` (/proc/self/task/*/comm).
size_t threads_named(const std::string& prefix) {
    size_t n = 0;
    for (const auto& task : fs::directory_iterator("/proc/self/task")) {
        std::ifstream comm(task.path() / "comm");
        std::string name;
        std::getline(comm, name);
        n += name.rfind(prefix, 0) == 0 ? 1 : 0;
    }
    return n;
}

TEST_F(BrokerContainerTest, BrokersShareTheContainersIoThreadsAndNameServerClient) {
    BrokerContainerConfig c = container_config();
    c.server_selector_threads = 2;
    BrokerContainer box(c);
    ASSERT_TRUE(box.start().is_ok());
    auto ia = box.add_broker(write_broker("sa"));
    ASSERT_TRUE(ia.is_ok()) << ia.status().to_string();
    auto ib = box.add_broker(write_broker("sb"));
    ASSERT_TRUE(ib.is_ok()) << ib.status().to_string();
    // Two brokers and the admin port on the container's two I/O threads; no broker runs
    // remoting threads or a name server client of its own.
    EXPECT_EQ(threads_named("BrokerServer_"), 2u);
    EXPECT_EQ(threads_named("ContainerServer"), 0u);
    EXPECT_EQ(threads_named("BrokerOuterAPI"), 0u);
    EXPECT_EQ(threads_named("ContainerOuterA"), 0u);  // runs on the shared threads too

    // Both serve; removing one leaves the shared threads to the other, which keeps serving,
    // and a broker added again runs on them as well.
    for (uint16_t port : {ia->port, ib->port}) {
        EXPECT_EQ(call(port, protocol::RemotingCommand::request(Req::kGetBrokerConfig)).code,
                  RC::kSuccess);
    }
    ASSERT_TRUE(box.remove_broker(ia->identity).is_ok());
    EXPECT_EQ(threads_named("BrokerServer_"), 2u);
    EXPECT_EQ(call(ib->port, protocol::RemotingCommand::request(Req::kGetBrokerConfig)).code,
              RC::kSuccess);
    EXPECT_EQ(call(box.port(), protocol::RemotingCommand::request(Req::kGetBrokerConfig)).code,
              RC::kSuccess);
    auto again = box.add_broker(write_broker("sa"));
    ASSERT_TRUE(again.is_ok()) << again.status().to_string();
    EXPECT_EQ(call(again->port, protocol::RemotingCommand::request(Req::kGetBrokerConfig)).code,
              RC::kSuccess);
    EXPECT_EQ(threads_named("BrokerServer_"), 2u);

    box.shutdown();
    EXPECT_EQ(threads_named("BrokerServer_"), 0u);
    EXPECT_FALSE(fs::exists(store("sa") + "/abort"));
    EXPECT_FALSE(fs::exists(store("sb") + "/abort"));
}

TEST_F(BrokerContainerTest, FailedBrokerLeavesNothingRunningAndNoAbortFile) {
    BrokerContainer box(container_config());
    ASSERT_TRUE(box.start().is_ok());
    // A port held by a socket outside the container.
    const int holder = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(holder, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
    ASSERT_EQ(::listen(holder, 1), 0);
    socklen_t len = sizeof(sa);
    ASSERT_EQ(::getsockname(holder, reinterpret_cast<sockaddr*>(&sa), &len), 0);
    const int held = ntohs(sa.sin_port);
    const std::string path = (root_ / "taken.conf").string();
    auto write = [&](const std::string& extra) {
        std::ofstream out(path);
        out << "brokerName=taken\nhaListenPort=0\nlistenHost=127.0.0.1\nstorePathRootDir="
            << store("taken") << "\nmappedFileSizeCommitLog=1048576\n"
            << extra;
    };

    // As listenPort: refused before the store opens.
    write("listenPort=" + std::to_string(held) + "\n");
    auto r = box.add_broker(path);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().message().rfind(path + ": ", 0), 0u) << r.status().message();
    EXPECT_NE(r.status().message().find("listenPort " + std::to_string(held) + " cannot be bound"),
              std::string::npos)
        << r.status().message();
    EXPECT_FALSE(fs::exists(store("taken")));

    // As metricsPort: bound last in start(), after the store opened and the broker's port was
    // bound; the broker is closed again, its store cleanly.
    write("listenPort=0\nmetricsPort=" + std::to_string(held) + "\n");
    r = box.add_broker(path);
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("start failed"), std::string::npos) << r.status().message();
    EXPECT_TRUE(box.list().empty());
    EXPECT_TRUE(fs::exists(store("taken") + "/checkpoint"));  // the store did open
    EXPECT_FALSE(fs::exists(store("taken") + "/abort"));
    ::close(holder);

    // The name is free again: a corrected file is accepted.
    write("listenPort=0\n");
    ASSERT_TRUE(box.add_broker(path).is_ok());
    EXPECT_EQ(box.list().size(), 1u);
}

TEST_F(BrokerContainerTest, ContainerPortIsRefusedBeforeAnythingOpens) {
    BrokerContainer box(container_config());
    ASSERT_TRUE(box.start().is_ok());
    const std::string path = (root_ / "own.conf").string();
    {
        std::ofstream out(path);
        out << "brokerName=own\nlistenPort=" << box.port() << "\nhaListenPort=0\n"
            << "storePathRootDir=" << store("own") << "\n";
    }
    auto r = box.add_broker(path);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Errc::kAlreadyExists);
    EXPECT_NE(r.status().message().find("container's own listenPort"), std::string::npos);
    EXPECT_FALSE(fs::exists(store("own")));
}

TEST_F(BrokerContainerTest, AdminPortAnswersAddRemoveAndConfig) {
    BrokerContainerConfig cfg = container_config();
    cfg.broker_config_paths = "/nowhere.conf";
    BrokerContainer box(cfg);
    ASSERT_TRUE(box.start().is_ok());
    const std::string a = write_broker("ua");

    protocol::AddBrokerRequestHeader add;
    add.config_path = a;
    auto req = protocol::RemotingCommand::request(Req::kAddBroker);
    add.to_ext(req);
    auto resp = call(box.port(), std::move(req));
    EXPECT_EQ(resp.code, RC::kSuccess) << resp.remark.value_or("");
    ASSERT_EQ(box.list().size(), 1u);

    // No path, a missing file.
    resp = call(box.port(), protocol::RemotingCommand::request(Req::kAddBroker));
    EXPECT_EQ(resp.code, RC::kSystemError);
    EXPECT_EQ(resp.remark.value_or(""), "addBroker config path is empty");
    add.config_path = (root_ / "missing.conf").string();
    req = protocol::RemotingCommand::request(Req::kAddBroker);
    add.to_ext(req);
    resp = call(box.port(), std::move(req));
    EXPECT_EQ(resp.code, RC::kSystemError);
    EXPECT_NE(resp.remark.value_or("").find("missing.conf"), std::string::npos);

    resp = call(box.port(), protocol::RemotingCommand::request(Req::kGetBrokerConfig));
    EXPECT_EQ(resp.code, RC::kSuccess);
    EXPECT_NE(resp.body.find("brokerConfigPaths=/nowhere.conf\n"), std::string::npos) << resp.body;
    EXPECT_NE(resp.ext("version"), nullptr);

    resp = call(box.port(), protocol::RemotingCommand::request(Req::kUpdateBrokerConfig));
    EXPECT_EQ(resp.code, RC::kRequestCodeNotSupported);

    protocol::RemoveBrokerRequestHeader rm;
    rm.broker_cluster_name = "UnitCluster";
    rm.broker_name = "ua";
    rm.broker_id = 0;
    req = protocol::RemotingCommand::request(Req::kRemoveBroker);
    rm.to_ext(req);
    resp = call(box.port(), std::move(req));
    EXPECT_EQ(resp.code, RC::kSuccess) << resp.remark.value_or("");
    EXPECT_TRUE(box.list().empty());
    req = protocol::RemotingCommand::request(Req::kRemoveBroker);
    rm.to_ext(req);
    resp = call(box.port(), std::move(req));
    EXPECT_EQ(resp.code, RC::kBrokerNotExist);
    EXPECT_EQ(resp.remark.value_or(""), "Broker not exist");
    // A header without the required fields.
    resp = call(box.port(), protocol::RemotingCommand::request(Req::kRemoveBroker));
    EXPECT_EQ(resp.code, RC::kSystemError);
    box.shutdown();
}

}  // namespace broker_container_test
}  // namespace comet::container
