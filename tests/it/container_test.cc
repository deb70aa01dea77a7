// Integration tests of mqbrokercontainer (several brokers in one process, RocketMQ 5 RIP-31)
// with real mqnamesrv / mqbrokercontainer / mqadmin processes on 127.0.0.1 and ephemeral
// ports. Each test starts its own name server and container. Every wait is bounded.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "client/admin_client.h"
#include "client/producer.h"
#include "client/pull_consumer.h"
#include "client_helpers.h"
#include "controller_group.h"
#include "harness.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

using namespace std::chrono_literals;
using namespace comet::client;
namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;

constexpr const char* kCluster = "CtrCluster";

// One broker's properties file, written by the test.
struct BrokerFile {
    std::string name;  // brokerName
    std::string path;  // the file
    uint16_t port = 0;
    std::string store;
};

class ContainerIt : public ::testing::Test {
protected:
    void SetUp() override {
        ns_port_ = free_port();
        auto ns = start_namesrv(dir_, ns_port_);
        ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
        ns_ = std::move(ns).value();
        ASSERT_TRUE(ns_->wait_for_port(ns_port_, 10s).is_ok()) << ns_->log_tail();
    }

    // Writes <dir>/<name>.conf for a master of group `name` (or what `extra` makes of it).
    BrokerFile broker_file(const std::string& name, std::map<std::string, std::string> extra = {}) {
        BrokerFile f;
        f.name = name;
        f.path = dir_.sub(name + ".conf");
        f.port = free_port();
        f.store = dir_.sub(name + "/store");
        std::map<std::string, std::string> kv = {
            {"brokerClusterName", kCluster},
            {"brokerName", name},
            {"brokerId", "0"},
            {"listenPort", std::to_string(f.port)},
            {"listenHost", "127.0.0.1"},
            {"haListenPort", std::to_string(free_port())},
            {"brokerIP1", "127.0.0.1"},
            {"storePathRootDir", f.store},
            {"mappedFileSizeCommitLog", std::to_string(4 * 1024 * 1024)},
            {"mappedFileSizeConsumeQueue", std::to_string(30000 * 20)},
        };
        for (auto& [k, v] : extra) {
            kv[k] = v;
        }
        std::ofstream out(f.path);
        for (const auto& [k, v] : kv) {
            out << k << "=" << v << "\n";
        }
        return f;
    }

    // Starts the container on a fresh port with `files` as brokerConfigPaths.
    std::unique_ptr<Process> start_container(const std::vector<std::string>& files,
                                             const std::string& name = "container",
                                             std::map<std::string, std::string> extra = {}) {
        std::string paths;
        for (const std::string& f : files) {
            paths += (paths.empty() ? "" : ":") + f;
        }
        if (container_port_ == 0) {
            container_port_ = free_port();
        }
        ProcessOptions o;
        o.name = name;
        o.binary = binary_path("mqbrokercontainer");
        o.config = {{"brokerConfigPaths", paths},
                    {"listenPort", std::to_string(container_port_)},
                    {"listenHost", "127.0.0.1"},
                    {"namesrvAddr", addr(ns_port_)},
                    {"logDir", dir_.sub(name + "-logs")}};
        for (auto& [k, v] : extra) {
            o.config[k] = v;
        }
        auto p = Process::start(o, dir_.path());
        EXPECT_TRUE(p.is_ok()) << p.status().to_string();
        return p.is_ok() ? std::move(p).value() : nullptr;
    }

    // One SEND_MESSAGE_V2 to `port` that must be acknowledged (SUCCESS).
    static void expect_sent(net::RemotingClient& client, uint16_t port, const std::string& topic,
                            const std::string& body, int queue = 0) {
        auto r = call(client, port, send_message_request(topic, body, queue));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        EXPECT_EQ(r->code, RC::kSuccess) << r->remark.value_or("");
    }

    // SIGTERM, then the container must exit 0 (every broker stopped gracefully).
    static void expect_clean_exit(Process& box) {
        box.sigterm();
        auto code = box.wait_exit(guard(20s));
        ASSERT_TRUE(code.is_ok()) << box.log_tail();
        EXPECT_EQ(*code, 0) << box.log_tail();
    }

    // Waits for every broker of `files` to listen; false (with the log in the failure) if one
    // does not.
    static bool wait_listening(Process& box, const std::vector<const BrokerFile*>& files) {
        for (const BrokerFile* f : files) {
            if (!box.wait_for_port(f->port, guard(10s)).is_ok()) {
                ADD_FAILURE() << f->name << " does not listen\n" << box.log_tail();
                return false;
            }
        }
        return true;
    }

    ClientConfig client_config() const {
        ClientConfig c;
        c.namesrv_addr = addr(ns_port_);
        return c;
    }

    // Creates `topic` on each broker and waits until the name server routes it to all of them.
    void create_topic(const std::string& topic, const std::vector<const BrokerFile*>& brokers,
                      int queues) {
        AdminClient admin(client_config());
        ASSERT_TRUE(admin.start().is_ok());
        TopicCreateOptions o;
        o.read_queue_nums = queues;
        o.write_queue_nums = queues;
        for (const BrokerFile* b : brokers) {
            Status st = admin.create_topic(addr(b->port), topic, o);
            ASSERT_TRUE(st.is_ok()) << st.to_string();
        }
        ASSERT_TRUE(eventually(
            [&] {
                auto r = admin.topic_route(topic);
                return r.is_ok() && r->broker_datas.size() == brokers.size();
            },
            guard(10s)));
    }

    // Brokers the name server lists for kCluster.
    std::set<std::string> registered_brokers() {
        AdminClient admin(client_config());
        if (!admin.start().is_ok()) {
            return {};
        }
        auto info = admin.cluster_info();
        if (!info.is_ok()) {
            return {};
        }
        std::set<std::string> out;
        for (const auto& [name, data] : info->broker_addr_table) {
            if (data.cluster == kCluster && !data.broker_addrs.empty()) {
                out.insert(name);
            }
        }
        return out;
    }

    // Every message body of `topic` on every queue, pulled from offset 0 until `want` are all
    // there (bounded).
    std::set<std::string> pull_all(const std::string& topic, const std::set<std::string>& want) {
        return pull_bodies(client_config(), "CtrPull" + topic, topic, want, guard(15s));
    }

    CommandResult mqadmin(const std::vector<std::string>& args) {
        std::vector<std::string> argv{binary_path("mqadmin")};
        argv.insert(argv.end(), args.begin(), args.end());
        return run_command(dir_, argv, guard(60s));
    }

    Result<protocol::RemotingCommand> get_config(uint16_t port) {
        net::RemotingClient client{net::RemotingClientConfig{}};
        client.start();
        auto r = call(client, port, request(Req::kGetBrokerConfig));
        client.shutdown();
        return r;
    }

    TempDir dir_{"comet_it_container"};
    uint16_t ns_port_ = 0;
    uint16_t container_port_ = 0;
    std::unique_ptr<Process> ns_;
};

// Two groups in one process: a client sends to and consumes from both; each broker answers
// GET_BROKER_CONFIG for itself on its own port, the container for itself on its port.
TEST_F(ContainerIt, TwoBrokersServeClientsAndAnswerTheirOwnConfig) {
    const BrokerFile a = broker_file("ctr-a");
    const BrokerFile b = broker_file("ctr-b");
    auto box = start_container({a.path, b.path});
    ASSERT_NE(box, nullptr);
    ASSERT_TRUE(box->wait_for_port(container_port_, guard(10s)).is_ok()) << box->log_tail();
    ASSERT_TRUE(wait_listening(*box, {&a, &b}));
    ASSERT_TRUE(eventually(
        [&] {
            return registered_brokers() == std::set<std::string>{"ctr-a", "ctr-b"};
        },
        guard(10s)));

    create_topic("CtrBoth", {&a, &b}, 2);
    ProducerConfig pc;
    pc.client = client_config();
    DefaultMqProducer producer(pc);
    ASSERT_TRUE(producer.start().is_ok());
    std::set<std::string> want;
    std::set<std::string> brokers_hit;
    for (int i = 0; i < 16; ++i) {
        const std::string body = "both-" + std::to_string(i);
        auto r = producer.send(Message("CtrBoth", body));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        EXPECT_EQ(r->status, SendStatus::kSendOk);
        brokers_hit.insert(r->message_queue.broker_name);
        want.insert(body);
    }
    producer.shutdown();
    EXPECT_EQ(brokers_hit, (std::set<std::string>{"ctr-a", "ctr-b"}));
    EXPECT_EQ(pull_all("CtrBoth", want), want);

    for (const BrokerFile* f : {&a, &b}) {
        auto cfg = get_config(f->port);
        ASSERT_TRUE(cfg.is_ok()) << cfg.status().to_string();
        EXPECT_EQ(cfg->code, RC::kSuccess);
        EXPECT_NE(cfg->body.find("brokerName=" + f->name + "\n"), std::string::npos) << cfg->body;
        EXPECT_NE(cfg->body.find("listenPort=" + std::to_string(f->port) + "\n"),
                  std::string::npos);
    }
    auto own = get_config(container_port_);
    ASSERT_TRUE(own.is_ok()) << own.status().to_string();
    EXPECT_EQ(own->code, RC::kSuccess);
    EXPECT_NE(own->body.find("brokerConfigPaths=" + a.path + ":" + b.path + "\n"),
              std::string::npos)
        << own->body;
    EXPECT_NE(own->body.find("listenPort=" + std::to_string(container_port_) + "\n"),
              std::string::npos);
    EXPECT_NE(own->body.find("namesrvAddr=" + addr(ns_port_) + "\n"), std::string::npos);
    // In the shared log, each broker's lines carry its identity: from its own threads (the
    // admin executor created the topic) and from its requests on the shared I/O threads.
    for (const BrokerFile* f : {&a, &b}) {
        const std::string tag = std::string("[") + kCluster + ":" + f->name + ":0] ";
        EXPECT_TRUE(box->wait_for_log(tag + "update topic CtrBoth", guard(5s)).is_ok())
            << box->log_tail();
    }

    // The container's port is not a broker: a broker request is refused, naming the code.
    net::RemotingClient client{net::RemotingClientConfig{}};
    client.start();
    auto refused = call(client, container_port_, send_message_request("CtrBoth", "x"));
    ASSERT_TRUE(refused.is_ok()) << refused.status().to_string();
    EXPECT_EQ(refused->code, RC::kRequestCodeNotSupported);
    EXPECT_NE(refused->remark.value_or("").find("broker container"), std::string::npos);
    client.shutdown();
}

// ADD_BROKER / REMOVE_BROKER through mqadmin while a producer keeps sending to another broker
// of the same container: no send fails; the removed broker unregisters and closes its store
// cleanly; a broker whose store cannot open is refused without touching the running one.
TEST_F(ContainerIt, AddAndRemoveBrokersWhileAnotherServes) {
    const BrokerFile a = broker_file("ctr-a");
    const BrokerFile b = broker_file("ctr-b");
    // Its storePathRootDir is a regular file: the store cannot open.
    const std::string not_a_dir = dir_.sub("not-a-dir");
    std::ofstream(not_a_dir) << "x";
    const BrokerFile broken = broker_file("ctr-broken", {{"storePathRootDir", not_a_dir}});
    auto box = start_container({a.path});
    ASSERT_NE(box, nullptr);
    ASSERT_TRUE(box->wait_for_port(a.port, guard(10s)).is_ok()) << box->log_tail();
    ASSERT_TRUE(box->wait_for_port(container_port_, guard(10s)).is_ok()) << box->log_tail();
    create_topic("CtrLive", {&a}, 4);

    ProducerConfig pc;
    pc.client = client_config();
    pc.retry_times_when_send_failed = 0;  // every failure counts
    DefaultMqProducer producer(pc);
    ASSERT_TRUE(producer.start().is_ok());
    std::atomic<bool> stop{false};
    std::atomic<int> ok{0};
    std::atomic<int> failed{0};
    std::string first_failure;
    std::thread sender([&] {
        for (int i = 0; i < 200000 && !stop.load(); ++i) {
            auto r = producer.send(Message("CtrLive", "live-" + std::to_string(i)));
            if (r.is_ok() && r->status == SendStatus::kSendOk) {
                ok.fetch_add(1);
            } else {
                if (failed.fetch_add(1) == 0) {
                    first_failure = r.is_ok() ? "status not SEND_OK" : r.status().to_string();
                }
            }
        }
    });
    ASSERT_TRUE(eventually([&] { return ok.load() >= 20; }, guard(10s)));
    const int before = ok.load();

    auto added = mqadmin({"addBroker", "-c", addr(container_port_), "-b", b.path});
    EXPECT_EQ(added.exit_code, 0) << added.out << added.err;
    EXPECT_NE(added.out.find("add broker to " + addr(container_port_) + " success"),
              std::string::npos)
        << added.out;
    ASSERT_TRUE(eventually([&] { return registered_brokers().count("ctr-b") == 1; }, guard(10s)));
    create_topic("CtrAdded", {&b}, 1);
    {
        net::RemotingClient client{net::RemotingClientConfig{}};
        client.start();
        expect_sent(client, b.port, "CtrAdded", "to-b");
        client.shutdown();
    }

    // The same identity twice, and a broker whose store cannot open: refused with the reason.
    auto twice = mqadmin({"addBroker", "-c", addr(container_port_), "-b", b.path});
    EXPECT_NE(twice.exit_code, 0);
    EXPECT_NE((twice.out + twice.err).find("already been added"), std::string::npos)
        << twice.out << twice.err;
    auto bad = mqadmin({"addBroker", "-c", addr(container_port_), "-b", broken.path});
    EXPECT_NE(bad.exit_code, 0);
    EXPECT_NE((bad.out + bad.err).find(broken.path), std::string::npos) << bad.out << bad.err;

    auto removed = mqadmin(
        {"removeBroker", "-c", addr(container_port_), "-b", std::string(kCluster) + ":ctr-b:0"});
    EXPECT_EQ(removed.exit_code, 0) << removed.out << removed.err;
    EXPECT_NE(removed.out.find("remove broker from"), std::string::npos) << removed.out;
    // Unregistered at once (not after the name server's 120 s expiry), store closed cleanly.
    ASSERT_TRUE(eventually([&] { return registered_brokers().count("ctr-b") == 0; }, guard(5s)));
    EXPECT_FALSE(std::filesystem::exists(b.store + "/abort"));
    EXPECT_TRUE(std::filesystem::exists(b.store + "/checkpoint"));
    auto gone = mqadmin(
        {"removeBroker", "-c", addr(container_port_), "-b", std::string(kCluster) + ":ctr-b:0"});
    EXPECT_NE(gone.exit_code, 0);
    EXPECT_NE((gone.out + gone.err).find("211"), std::string::npos) << gone.out << gone.err;

    // Added again: the store it closed is recovered with what it held.
    auto back = mqadmin({"addBroker", "-c", addr(container_port_), "-b", b.path});
    EXPECT_EQ(back.exit_code, 0) << back.out << back.err;
    EXPECT_EQ(pull_all("CtrAdded", {"to-b"}), std::set<std::string>{"to-b"});

    ASSERT_TRUE(eventually([&] { return ok.load() >= before + 20; }, guard(10s)));
    stop.store(true);
    sender.join();
    producer.shutdown();
    EXPECT_EQ(failed.load(), 0) << first_failure;
    EXPECT_GT(ok.load(), before);
    EXPECT_TRUE(box->running());
    EXPECT_TRUE(registered_brokers().count("ctr-a") == 1);
}

// A broker whose file is wrong (bad value, port taken, store unusable) is reported with its
// file and reason and left out; the others serve; SIGTERM stops all cleanly (no abort file).
TEST_F(ContainerIt, BrokenBrokersAreReportedTheOthersServeAndSigtermIsClean) {
    const BrokerFile a = broker_file("ctr-a");
    const BrokerFile b = broker_file("ctr-b");
    const BrokerFile bad_value = broker_file("ctr-bad", {{"listenPort", "not-a-port"}});
    const BrokerFile clash = broker_file("ctr-clash", {{"listenPort", std::to_string(a.port)}});
    const std::string not_a_dir = dir_.sub("not-a-dir");
    std::ofstream(not_a_dir) << "x";
    const BrokerFile no_store = broker_file("ctr-nostore", {{"storePathRootDir", not_a_dir}});
    // Ports another process holds (the name server's): as listenPort it is refused before the
    // store opens; as metricsPort (bound last) the start fails after the store opened, which
    // must be closed again cleanly.
    const BrokerFile port_taken =
        broker_file("ctr-taken", {{"listenPort", std::to_string(ns_port_)}});
    const BrokerFile metrics_taken =
        broker_file("ctr-metrics", {{"metricsPort", std::to_string(ns_port_)}});
    // A corrupt store: its topic table does not parse (and has no backup).
    const BrokerFile corrupt = broker_file("ctr-corrupt");
    std::filesystem::create_directories(corrupt.store + "/config");
    std::ofstream(corrupt.store + "/config/topics.json") << "{\"topicConfigTable\": {broken";
    auto box = start_container({a.path, bad_value.path, clash.path, no_store.path, port_taken.path,
                                metrics_taken.path, corrupt.path, b.path});
    ASSERT_NE(box, nullptr);
    ASSERT_TRUE(wait_listening(*box, {&a, &b}));
    ASSERT_TRUE(box->wait_for_log("Broker [ctr-b-0] boot success", guard(10s)).is_ok())
        << box->log_tail();
    const std::vector<std::string> log = lines_of(box->log());
    auto reported = [&](const std::string& path, const std::string& reason) {
        for (const std::string& l : log) {
            if (l.rfind("ERROR: broker not started: " + path, 0) == 0 &&
                l.find(reason) != std::string::npos) {
                return true;
            }
        }
        return false;
    };
    EXPECT_TRUE(reported(bad_value.path, "listenPort")) << box->log_tail();
    EXPECT_TRUE(reported(clash.path, "listenPort " + std::to_string(a.port))) << box->log_tail();
    EXPECT_TRUE(reported(no_store.path, not_a_dir)) << box->log_tail();
    EXPECT_TRUE(
        reported(port_taken.path, "listenPort " + std::to_string(ns_port_) + " cannot be bound"))
        << box->log_tail();
    EXPECT_FALSE(std::filesystem::exists(port_taken.store));
    EXPECT_TRUE(reported(corrupt.path, "topics.json")) << box->log_tail();
    EXPECT_TRUE(reported(metrics_taken.path, "start failed")) << box->log_tail();
    EXPECT_TRUE(std::filesystem::exists(metrics_taken.store + "/checkpoint"));
    EXPECT_FALSE(std::filesystem::exists(metrics_taken.store + "/abort"));

    create_topic("CtrSurvivors", {&a, &b}, 2);
    ProducerConfig pc;
    pc.client = client_config();
    DefaultMqProducer producer(pc);
    ASSERT_TRUE(producer.start().is_ok());
    std::set<std::string> hit;
    for (int i = 0; i < 8; ++i) {
        auto r = producer.send(Message("CtrSurvivors", "s-" + std::to_string(i)));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        hit.insert(r->message_queue.broker_name);
    }
    producer.shutdown();
    EXPECT_EQ(hit, (std::set<std::string>{"ctr-a", "ctr-b"}));

    expect_clean_exit(*box);
    for (const BrokerFile* f : {&a, &b}) {
        EXPECT_TRUE(std::filesystem::exists(f->store + "/checkpoint")) << f->store;
        EXPECT_FALSE(std::filesystem::exists(f->store + "/abort")) << f->store;
    }
    EXPECT_TRUE(eventually([&] { return registered_brokers().empty(); }, guard(5s)));

    // A container none of whose brokers can start exits 1.
    container_port_ = 0;
    auto none = start_container({bad_value.path, no_store.path}, "container-none");
    ASSERT_NE(none, nullptr);
    auto none_code = none->wait_exit(guard(20s));
    ASSERT_TRUE(none_code.is_ok()) << none->log_tail();
    EXPECT_EQ(*none_code, 1) << none->log_tail();
    EXPECT_NE(none->log().find("ERROR: no broker could start"), std::string::npos);
}

// kill -9 of the container, then a restart from the same files: every message acknowledged
// by a SYNC_FLUSH broker is there after recovery, on both brokers.
TEST_F(ContainerIt, KillNineAndRestartLosesNoAcknowledgedMessage) {
    const BrokerFile a = broker_file("ctr-a", {{"flushDiskType", "SYNC_FLUSH"}});
    const BrokerFile b = broker_file("ctr-b", {{"flushDiskType", "SYNC_FLUSH"}});
    auto box = start_container({a.path, b.path});
    ASSERT_NE(box, nullptr);
    ASSERT_TRUE(wait_listening(*box, {&a, &b}));
    create_topic("CtrDurable", {&a, &b}, 2);

    std::set<std::string> acked;
    {
        ProducerConfig pc;
        pc.client = client_config();
        DefaultMqProducer producer(pc);
        ASSERT_TRUE(producer.start().is_ok());
        for (int i = 0; i < 40; ++i) {
            const std::string body = "durable-" + std::to_string(i);
            auto r = producer.send(Message("CtrDurable", body));
            if (r.is_ok() && r->status == SendStatus::kSendOk) {
                acked.insert(body);
            }
        }
        producer.shutdown();
    }
    ASSERT_EQ(acked.size(), 40u);
    box->sigkill();
    ASSERT_TRUE(box->wait_exit(guard(10s)).is_ok());
    EXPECT_TRUE(std::filesystem::exists(a.store + "/abort"));
    EXPECT_TRUE(std::filesystem::exists(b.store + "/abort"));

    auto again = start_container({a.path, b.path}, "container-again");
    ASSERT_NE(again, nullptr);
    ASSERT_TRUE(again->wait_for_port(a.port, guard(20s)).is_ok()) << again->log_tail();
    ASSERT_TRUE(again->wait_for_port(b.port, guard(20s)).is_ok()) << again->log_tail();
    const std::set<std::string> got = pull_all("CtrDurable", acked);
    EXPECT_TRUE(std::includes(got.begin(), got.end(), acked.begin(), acked.end()))
        << "got " << got.size() << " of " << acked.size();
}

// One broker's store fails at run time (its ConsumeQueue directory is replaced by a file, so
// the queue of a new topic cannot be created and the store turns read-only): that broker refuses
// sends, the other broker of the container keeps serving, and the process keeps running.
TEST_F(ContainerIt, OneFailingStoreLeavesTheOtherBrokerServing) {
    const BrokerFile a = broker_file("ctr-a");
    const BrokerFile b = broker_file("ctr-b");
    auto box = start_container({a.path, b.path});
    ASSERT_NE(box, nullptr);
    ASSERT_TRUE(wait_listening(*box, {&a, &b}));
    net::RemotingClient client{net::RemotingClientConfig{}};
    client.start();
    for (const BrokerFile* f : {&a, &b}) {
        auto created = call(client, f->port, create_topic_request("CtrIso", 1));
        ASSERT_TRUE(created.is_ok() && created->code == RC::kSuccess);
        expect_sent(client, f->port, "CtrIso", "before");
    }

    // Once b's queue file of CtrIso exists (its dispatch is done), its ConsumeQueue directory
    // is moved away and replaced by a file. Renaming is atomic; the loop is for a directory the
    // store might create again in between.
    const std::string cq = b.store + "/consumequeue";
    ASSERT_TRUE(eventually(
        [&] { return std::filesystem::exists(cq + "/CtrIso/0/00000000000000000000"); }, guard(5s)));
    for (int i = 0; i < 20 && !std::filesystem::is_regular_file(cq); ++i) {
        std::error_code ec;
        std::filesystem::rename(cq, cq + ".moved-" + std::to_string(i), ec);
        std::ofstream(cq) << "not a directory";
    }
    ASSERT_TRUE(std::filesystem::is_regular_file(cq));
    auto created = call(client, b.port, create_topic_request("CtrIsoNew", 1));
    ASSERT_TRUE(created.is_ok() && created->code == RC::kSuccess);
    int32_t last_code = RC::kSuccess;
    ASSERT_TRUE(eventually(
        [&] {
            auto r = call(client, b.port, send_message_request("CtrIsoNew", "after"));
            last_code = r.is_ok() ? r->code : -1;
            return r.is_ok() && r->code != RC::kSuccess;
        },
        guard(10s)))
        << "broker b still accepts sends, last code " << last_code << "\n"
        << box->log_tail(8000);
    EXPECT_EQ(last_code, RC::kServiceNotAvailable);
    // The refusal is logged naming that store (the log is shared by every broker).
    EXPECT_TRUE(
        box->wait_for_log("message store " + b.store + " is not writeable", guard(5s)).is_ok())
        << box->log_tail();

    for (int i = 0; i < 20; ++i) {
        expect_sent(client, a.port, "CtrIso", "a-" + std::to_string(i));
    }
    client.shutdown();
    EXPECT_TRUE(box->running());

    expect_clean_exit(*box);
    EXPECT_FALSE(std::filesystem::exists(a.store + "/abort"));
}

// Cross deployment: container 1 runs the master of ctr-ga and a slave of ctr-gb, container 2
// the master of ctr-gb and a slave of ctr-ga. Each slave copies its master across containers;
// after kill -9 of container 1, ctr-gb keeps serving sends and ctr-ga's slave stays registered.
TEST_F(ContainerIt, CrossDeploymentSurvivesLosingOneContainer) {
    const std::map<std::string, std::string> slave = {{"brokerRole", "SLAVE"}, {"brokerId", "1"}};
    BrokerFile a0 = broker_file("ctr-ga");
    BrokerFile b0 = broker_file("ctr-gb");
    std::map<std::string, std::string> a1_cfg = slave;
    a1_cfg["brokerName"] = "ctr-ga";
    a1_cfg["storePathRootDir"] = dir_.sub("ctr-ga-1/store");
    const BrokerFile a1 = broker_file("ctr-ga-1", a1_cfg);
    std::map<std::string, std::string> b1_cfg = slave;
    b1_cfg["brokerName"] = "ctr-gb";
    b1_cfg["storePathRootDir"] = dir_.sub("ctr-gb-1/store");
    const BrokerFile b1 = broker_file("ctr-gb-1", b1_cfg);

    auto one = start_container({a0.path, b1.path}, "container-1");
    ASSERT_NE(one, nullptr);
    container_port_ = 0;  // the second container gets its own admin port
    auto two = start_container({b0.path, a1.path}, "container-2");
    ASSERT_NE(two, nullptr);
    for (auto [p, port] : {std::pair{one.get(), a0.port}, std::pair{one.get(), b1.port},
                           std::pair{two.get(), b0.port}, std::pair{two.get(), a1.port}}) {
        ASSERT_TRUE(p->wait_for_port(port, guard(10s)).is_ok()) << p->log_tail();
    }
    auto group_ids = [&](const std::string& group) {
        std::set<int64_t> ids;
        AdminClient admin(client_config());
        if (!admin.start().is_ok()) {
            return ids;
        }
        auto info = admin.cluster_info();
        if (info.is_ok()) {
            auto it = info->broker_addr_table.find(group);
            if (it != info->broker_addr_table.end()) {
                for (const auto& [id, address] : it->second.broker_addrs) {
                    ids.insert(id);
                }
            }
        }
        return ids;
    };
    ASSERT_TRUE(eventually(
        [&] {
            return group_ids("ctr-ga") == std::set<int64_t>{0, 1};
        },
        guard(10s)));
    ASSERT_TRUE(eventually(
        [&] {
            return group_ids("ctr-gb") == std::set<int64_t>{0, 1};
        },
        guard(10s)));

    net::RemotingClient client{net::RemotingClientConfig{}};
    client.start();
    for (const BrokerFile* m : {&a0, &b0}) {
        auto created = call(client, m->port, create_topic_request("CtrCross", 1));
        ASSERT_TRUE(created.is_ok() && created->code == RC::kSuccess);
        for (int i = 0; i < 5; ++i) {
            expect_sent(client, m->port, "CtrCross", "x");
        }
    }
    // Each slave catches up with its master in the other container.
    auto max_offset = [&](uint16_t port) -> int64_t {
        auto info = runtime_info(client, port);
        if (!info.is_ok() || info->count("commitLogMaxOffset") == 0) {
            return -1;
        }
        return std::stoll(info->at("commitLogMaxOffset"));
    };
    for (auto [master, slave_port] : {std::pair{&a0, a1.port}, std::pair{&b0, b1.port}}) {
        const int64_t want = max_offset(master->port);
        ASSERT_GT(want, 0);
        EXPECT_TRUE(eventually([&] { return max_offset(slave_port) == want; }, guard(10s)))
            << master->name << " slave at " << max_offset(slave_port) << " of " << want;
    }

    one->sigkill();
    ASSERT_TRUE(one->wait_exit(guard(10s)).is_ok());
    for (int i = 0; i < 10; ++i) {
        expect_sent(client, b0.port, "CtrCross", "after-" + std::to_string(i));
    }
    auto slave_info = runtime_info(client, a1.port);
    ASSERT_TRUE(slave_info.is_ok()) << slave_info.status().to_string();
    EXPECT_EQ(slave_info->at("brokerRole"), "SLAVE");
    client.shutdown();
    EXPECT_TRUE(two->running());
    EXPECT_TRUE(group_ids("ctr-ga").count(1) == 1);
}

// The brokers of a container share its I/O threads (one here). A SYNC_MASTER whose only slave
// hangs (SIGSTOP) waits for the slave without holding that thread: the other broker answers
// every send meanwhile, within a client timeout shorter than the hung master's wait, and the
// hung master's own sends end with RocketMQ's status instead of hanging.
TEST_F(ContainerIt, AHungSlaveOfOneBrokerDoesNotStallTheOtherOnTheSharedThread) {
    const BrokerFile a = broker_file("ctr-ha", {{"brokerRole", "SYNC_MASTER"},
                                                {"totalReplicas", "2"},
                                                {"inSyncReplicas", "2"},
                                                {"syncFlushTimeout", "4000"}});
    const BrokerFile b = broker_file("ctr-hb");
    auto box = start_container({a.path, b.path}, "container", {{"serverSelectorThreads", "1"}});
    ASSERT_NE(box, nullptr);
    ASSERT_TRUE(wait_listening(*box, {&a, &b}));
    auto slave = start_broker(dir_, free_port(), addr(ns_port_),
                              {{"brokerClusterName", kCluster},
                               {"brokerName", "ctr-ha"},
                               {"brokerId", "1"},
                               {"brokerRole", "SLAVE"},
                               {"haListenPort", std::to_string(free_port())}},
                              "ctr-ha-slave");
    ASSERT_TRUE(slave.is_ok()) << slave.status().to_string();

    net::RemotingClient client{net::RemotingClientConfig{}};
    client.start();
    for (const BrokerFile* f : {&a, &b}) {
        auto created = call(client, f->port, create_topic_request("CtrHung", 1));
        ASSERT_TRUE(created.is_ok() && created->code == RC::kSuccess);
    }
    // The master acknowledges once its slave has connected and copied.
    int32_t last = -1;
    ASSERT_TRUE(eventually(
        [&] {
            auto r = call(client, a.port, send_message_request("CtrHung", "with-slave"));
            last = r.is_ok() ? r->code : -1;
            return last == RC::kSuccess;
        },
        guard(20s)))
        << "last code " << last << "\n"
        << box->log_tail();

    ASSERT_TRUE((*slave)->sigstop_and_wait().is_ok());
    // Three sends to the hung master in flight at once, each waiting up to syncFlushTimeout.
    std::mutex mu;
    std::condition_variable cv;
    std::vector<int32_t> hung_codes;
    for (int i = 0; i < 3; ++i) {
        client.invoke_async(addr(a.port),
                            send_message_request("CtrHung", "hung-" + std::to_string(i)),
                            guard(30s), [&](Result<protocol::RemotingCommand> r) {
                                std::lock_guard<std::mutex> l(mu);
                                hung_codes.push_back(r.is_ok() ? r->code : -1);
                                cv.notify_all();
                            });
    }
    // Meanwhile broker b, on the same single I/O thread, answers each send within 2 s.
    for (int i = 0; i < 20; ++i) {
        auto r =
            call(client, b.port, send_message_request("CtrHung", "b-" + std::to_string(i)), 2000ms);
        ASSERT_TRUE(r.is_ok()) << "send " << i << " to b: " << r.status().to_string();
        EXPECT_EQ(r->code, RC::kSuccess) << r->remark.value_or("");
    }
    {
        std::unique_lock<std::mutex> l(mu);
        ASSERT_TRUE(cv.wait_for(l, guard(30s), [&] { return hung_codes.size() == 3; }))
            << box->log_tail();
        for (int32_t code : hung_codes) {
            EXPECT_TRUE(code == RC::kFlushSlaveTimeout || code == RC::kSlaveNotAvailable)
                << "code " << code;
        }
    }
    (*slave)->sigcont();
    client.shutdown();
    expect_clean_exit(*box);
}

// A flood of sends at one broker (two connections, thousands in flight) is served on the shared
// I/O thread in turn with the other broker's requests: every one of the other broker's sends
// is answered (within a 2 s client timeout) while the flood runs, and every flooding send gets
// an answer too.
TEST_F(ContainerIt, AFloodAtOneBrokerLeavesTheOtherServing) {
    const BrokerFile a = broker_file("ctr-fa");
    const BrokerFile b = broker_file("ctr-fb");
    auto box = start_container({a.path, b.path}, "container", {{"serverSelectorThreads", "1"}});
    ASSERT_NE(box, nullptr);
    ASSERT_TRUE(wait_listening(*box, {&a, &b}));
    net::RemotingClient client{net::RemotingClientConfig{}};
    client.start();
    for (const BrokerFile* f : {&a, &b}) {
        auto created = call(client, f->port, create_topic_request("CtrFlood", 4));
        ASSERT_TRUE(created.is_ok() && created->code == RC::kSuccess);
    }
    constexpr int kFloodClients = 2;
    constexpr int kFloodPerClient = 3000;
    const std::string body(1024, 'f');
    std::atomic<int> answered{0};
    std::atomic<int> ok{0};
    std::vector<std::unique_ptr<net::RemotingClient>> flooders;
    for (int c = 0; c < kFloodClients; ++c) {
        flooders.push_back(std::make_unique<net::RemotingClient>(net::RemotingClientConfig{}));
        flooders.back()->start();
    }
    std::thread flood([&] {
        for (int i = 0; i < kFloodPerClient; ++i) {
            for (auto& f : flooders) {
                f->invoke_async(addr(a.port), send_message_request("CtrFlood", body, i % 4),
                                guard(60s), [&](Result<protocol::RemotingCommand> r) {
                                    ok += r.is_ok() && r->code == RC::kSuccess ? 1 : 0;
                                    ++answered;
                                });
            }
        }
    });
    for (int i = 0; i < 30; ++i) {
        auto r = call(client, b.port, send_message_request("CtrFlood", "b-" + std::to_string(i)),
                      2000ms);
        ASSERT_TRUE(r.is_ok()) << "send " << i << " to b: " << r.status().to_string();
        EXPECT_EQ(r->code, RC::kSuccess) << r->remark.value_or("");
    }
    flood.join();
    const int total = kFloodClients * kFloodPerClient;
    EXPECT_TRUE(eventually([&] { return answered.load() == total; }, guard(60s)))
        << answered.load() << " of " << total << " flooding sends answered";
    EXPECT_EQ(ok.load(), total);
    for (auto& f : flooders) {
        f->shutdown();
    }
    // Broker a still serves after its flood.
    auto r = call(client, a.port, send_message_request("CtrFlood", "after"));
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->code, RC::kSuccess);
    client.shutdown();
    expect_clean_exit(*box);
}

// One broker's disk fills up (its store on a small tmpfs the test mounts): that broker refuses
// sends, the other broker of the container keeps accepting them,
// and the container stops cleanly. Needs root to mount (CI runs as root and must run it).
TEST_F(ContainerIt, OneFullDiskLeavesTheOtherBrokerServing) {
    if (::geteuid() != 0) {
        ASSERT_EQ(std::getenv("CI"), nullptr) << "CI must run as root to mount the tmpfs";
        GTEST_SKIP() << "not root: cannot mount a tmpfs";
    }
    const std::string small = dir_.sub("small-disk");
    std::filesystem::create_directories(small);
    if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=3m") != 0) {
        ASSERT_EQ(std::getenv("CI"), nullptr)
            << "tmpfs mount failed in CI: " << std::strerror(errno);
        GTEST_SKIP() << "tmpfs mount failed: " << std::strerror(errno);
    }
    struct Unmount {
        std::string path;
        ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
    } unmount{small};
    const BrokerFile a = broker_file("ctr-da", {{"storePathRootDir", small + "/store"},
                                                {"mappedFileSizeCommitLog", "1048576"},
                                                {"mappedFileSizeConsumeQueue", "60000"},
                                                {"messageIndexEnable", "false"}});
    const BrokerFile b = broker_file("ctr-db");
    auto box = start_container({a.path, b.path});
    ASSERT_NE(box, nullptr);
    ASSERT_TRUE(wait_listening(*box, {&a, &b}));
    net::RemotingClient client{net::RemotingClientConfig{}};
    client.start();
    for (const BrokerFile* f : {&a, &b}) {
        auto created = call(client, f->port, create_topic_request("CtrFull", 1));
        ASSERT_TRUE(created.is_ok() && created->code == RC::kSuccess);
    }
    // 3 MiB hold fewer than 3,000 messages of 1 KiB: sends to a fail before the loop ends.
    const std::string body(1024, 'd');
    int32_t code = RC::kSuccess;
    std::string remark;
    int accepted = 0;
    for (int i = 0; i < 6000 && code == RC::kSuccess; ++i) {
        auto r = call(client, a.port, send_message_request("CtrFull", body));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        code = r->code;
        remark = r->remark.value_or("");
        accepted += code == RC::kSuccess ? 1 : 0;
        if (i % 100 == 0) {
            expect_sent(client, b.port, "CtrFull", "b");
        }
    }
    EXPECT_GT(accepted, 0);
    // The segment that does not fit fails as RocketMQ's CREATE_MAPEDFILE_FAILED (SYSTEM_ERROR
    // "create mapped file failed..."); once the disk check has run, the store refuses every put
    // as SERVICE_NOT_AVAILABLE.
    EXPECT_TRUE(code == RC::kSystemError || code == RC::kServiceNotAvailable)
        << code << " " << remark << " after " << accepted << "\n"
        << box->log_tail(3000);
    // a keeps refusing; b keeps accepting.
    for (int i = 0; i < 10; ++i) {
        auto r = call(client, a.port, send_message_request("CtrFull", body));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        EXPECT_NE(r->code, RC::kSuccess);
        expect_sent(client, b.port, "CtrFull", "b-after");
    }
    client.shutdown();
    EXPECT_TRUE(box->running());
    expect_clean_exit(*box);
    EXPECT_FALSE(std::filesystem::exists(b.store + "/abort"));
}

// Controller mode inside containers: three mqcontroller processes elect the master of group
// ctr-c, whose two replicas run in two containers (the first also hosts an ordinary master).
// After kill -9 of the container holding the master, the controllers elect the replica in the
// other container, which accepts sends, and every message acknowledged before the kill
// (allAckInSyncStateSet: on both replicas) is read back from it.
TEST_F(ContainerIt, ControllerModeReplicasFailOverAcrossContainers) {
    ControllerGroup controllers(dir_);
    ASSERT_TRUE(controllers.start_all().is_ok()) << controllers.logs();
    std::vector<BrokerFile> replicas;
    for (int i = 0; i < 2; ++i) {
        replicas.push_back(
            broker_file("ctr-c-" + std::to_string(i), {{"brokerName", "ctr-c"},
                                                       {"brokerId", "-1"},
                                                       {"brokerRole", "SLAVE"},
                                                       {"enableControllerMode", "true"},
                                                       {"controllerAddr", controllers.addrs()},
                                                       {"allAckInSyncStateSet", "true"},
                                                       {"syncBrokerMetadataPeriod", "500"},
                                                       {"checkSyncStateSetPeriod", "500"},
                                                       {"haSendHeartbeatInterval", "200"}}));
    }
    const BrokerFile other = broker_file("ctr-x");
    auto one = start_container({replicas[0].path, other.path}, "container-1");
    ASSERT_NE(one, nullptr);
    container_port_ = 0;
    auto two = start_container({replicas[1].path}, "container-2");
    ASSERT_NE(two, nullptr);
    ASSERT_TRUE(wait_listening(*one, {&replicas[0], &other}));
    ASSERT_TRUE(wait_listening(*two, {&replicas[1]}));

    net::RemotingClient client{net::RemotingClientConfig{}};
    client.start();
    auto info = [&](const BrokerFile& f) {
        auto r = runtime_info(client, f.port);
        return r.is_ok() ? *r : std::map<std::string, std::string>{};
    };
    // The replica the controllers made master, once both are in its SyncStateSet.
    auto wait_master = [&](std::vector<size_t> candidates, size_t members) {
        int master = -1;
        eventually(
            [&] {
                for (size_t i : candidates) {
                    auto m = info(replicas[i]);
                    const std::string& set = m["syncStateSet"];
                    if (m["controllerMaster"] == "true" &&
                        static_cast<size_t>(std::count(set.begin(), set.end(), ',')) + 1 ==
                            members) {
                        master = static_cast<int>(i);
                        return true;
                    }
                }
                return false;
            },
            guard(20s));
        return master;
    };
    const int first = wait_master({0, 1}, 2);
    ASSERT_GE(first, 0) << controllers.logs() << one->log_tail() << two->log_tail();
    for (const BrokerFile* f : std::vector<const BrokerFile*>{&replicas[0], &replicas[1], &other}) {
        auto created = call(client, f->port, create_topic_request("CtrCtl", 2));
        ASSERT_TRUE(created.is_ok() && created->code == RC::kSuccess);
    }
    std::set<std::string> acked;
    for (int i = 0; i < 20; ++i) {
        const std::string body = "ctl-" + std::to_string(i);
        auto r = call(client, replicas[static_cast<size_t>(first)].port,
                      send_message_request("CtrCtl", body, i % 2));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_EQ(r->code, RC::kSuccess) << r->remark.value_or("");
        acked.insert(body);
    }
    // The ordinary master beside the replica serves as well.
    auto x = call(client, other.port, send_message_request("CtrCtl", "x"));
    ASSERT_TRUE(x.is_ok() && x->code == RC::kSuccess);

    // Lose the container that holds the master.
    Process& lost = first == 0 ? *one : *two;
    const size_t survivor = first == 0 ? 1 : 0;
    lost.sigkill();
    ASSERT_TRUE(lost.wait_exit(guard(10s)).is_ok());
    ASSERT_EQ(wait_master({survivor}, 1), static_cast<int>(survivor))
        << controllers.logs() << (first == 0 ? two : one)->log_tail();
    int32_t last = -1;
    ASSERT_TRUE(eventually(
        [&] {
            auto r =
                call(client, replicas[survivor].port, send_message_request("CtrCtl", "after", 0));
            last = r.is_ok() ? r->code : -1;
            return last == RC::kSuccess;
        },
        guard(20s)))
        << "last code " << last;
    acked.insert("after");
    // Everything acknowledged is on the new master (the name server routes the group to it).
    const std::set<std::string> got = pull_all("CtrCtl", acked);
    EXPECT_TRUE(std::includes(got.begin(), got.end(), acked.begin(), acked.end()))
        << got.size() << " of " << acked.size();
    client.shutdown();
}

}  // namespace
}  // namespace comet::it
