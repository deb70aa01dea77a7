// mqbench against a real mqnamesrv + mqbroker: a consumer process, then a ~3 s producer run;
// the producer's JSON summary must show sends and zero failures, and the consumer must receive
// them. Every process wait is bounded.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "client/admin_client.h"
#include "harness.h"

extern char** environ;

namespace comet::it {
namespace {

using namespace std::chrono_literals;

// A child process with stdout+stderr in a file; killed on destruction if still running.
class Child {
public:
    Child(const std::vector<std::string>& args, const std::string& out_path) : out_(out_path) {
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                         0644);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
        std::vector<char*> argv;
        for (const auto& a : args) {
            argv.push_back(const_cast<char*>(a.c_str()));
        }
        argv.push_back(nullptr);
        if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ) != 0) {
            pid_ = -1;
        }
        posix_spawn_file_actions_destroy(&fa);
    }
    ~Child() {
        if (pid_ > 0 && !reaped_) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
    }
    // Exit code, or -1 on timeout.
    int wait(std::chrono::milliseconds timeout) {
        const auto end = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < end) {
            int st = 0;
            if (::waitpid(pid_, &st, WNOHANG) == pid_) {
                reaped_ = true;
                return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            }
            std::this_thread::sleep_for(20ms);
        }
        return -1;
    }
    std::string output() const {
        std::ifstream in(out_);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }
    // The last line that starts with '{'.
    std::string json_line() const {
        std::istringstream in(output());
        std::string line, last;
        while (std::getline(in, line)) {
            if (!line.empty() && line[0] == '{') {
                last = line;
            }
        }
        return last;
    }
    bool started() const { return pid_ > 0; }

private:
    pid_t pid_ = -1;
    bool reaped_ = false;
    std::string out_;
};

// The integer value of "key": in a flat JSON line; -1 when absent.
long long json_int(const std::string& json, const std::string& key) {
    const auto pos = json.find("\"" + key + "\":");
    if (pos == std::string::npos) {
        return -1;
    }
    return std::stoll(json.substr(pos + key.size() + 3));
}

TEST(MqbenchIt, ProducerThenConsumerSummaries) {
    TempDir dir("comet_it_mqbench");
    const uint16_t ns_port = free_port();
    const uint16_t broker_port = free_port();
    auto ns = start_namesrv(dir, ns_port);
    ASSERT_TRUE(ns.is_ok());
    ASSERT_TRUE((*ns)->wait_for_port(ns_port, 10s).is_ok());
    auto broker = start_broker(dir, broker_port, addr(ns_port));
    ASSERT_TRUE(broker.is_ok());
    ASSERT_TRUE((*broker)->wait_for_port(broker_port, 20s).is_ok());
    // Creates a 4-queue topic and waits until the name server routes it.
    auto create_topic = [&](const std::string& topic) {
        client::ClientConfig cc;
        cc.namesrv_addr = addr(ns_port);
        client::AdminClient admin(cc);
        ASSERT_TRUE(admin.start().is_ok());
        client::TopicCreateOptions o;
        o.read_queue_nums = 4;
        o.write_queue_nums = 4;
        ASSERT_TRUE(admin.create_topic(addr(broker_port), topic, o).is_ok());
        ASSERT_TRUE(eventually([&] { return admin.topic_route(topic).is_ok(); }, 10s));
    };
    ASSERT_NO_FATAL_FAILURE(create_topic("BenchTopic"));
    const std::string bench = binary_path("mqbench");
    // Producer and consumer run together; both stop on a count (not on a time budget), so a
    // slow machine only makes the test take longer.
    constexpr int kMessages = 3000;
    Child consumer({bench, "consumer", "-n", addr(ns_port), "-t", "BenchTopic", "--count",
                    std::to_string(kMessages), "--from-first", "--json"},
                   dir.sub("consumer.out"));
    ASSERT_TRUE(consumer.started());
    Child producer(
        {bench, "producer", "-n", addr(ns_port), "-t", "BenchTopic", "-s", "256", "--threads", "2",
         "--window", "8", "--count", std::to_string(kMessages), "--keys", "--json"},
        dir.sub("producer.out"));
    ASSERT_TRUE(producer.started());
    const int prc = producer.wait(guard(60s));
    const std::string pj = producer.json_line();
    EXPECT_EQ(prc, 0) << producer.output();
    EXPECT_EQ(json_int(pj, "ok"), kMessages) << pj;
    EXPECT_EQ(json_int(pj, "failed"), 0) << pj;
    EXPECT_NE(producer.output().find("Summary producer: ok 3000 failed 0"), std::string::npos)
        << producer.output();
    EXPECT_NE(pj.find("\"p999_ms\":"), std::string::npos);
    EXPECT_NE(pj.find("\"not_send_ok\":{}"), std::string::npos) << pj;

    EXPECT_EQ(consumer.wait(guard(60s)), 0) << consumer.output();
    const std::string cj = consumer.json_line();
    EXPECT_GE(json_int(cj, "ok"), json_int(pj, "ok")) << cj << "\n" << pj;
    EXPECT_NE(consumer.output().find("Summary consumer: ok"), std::string::npos)
        << consumer.output();

    // Runs of a fixed duration print one line per elapsed second: a 2 s run prints at least one.
    Child timed_producer({bench, "producer", "-n", addr(ns_port), "-t", "BenchTopic", "-s", "64",
                          "--duration", "2", "--json"},
                         dir.sub("timed_producer.out"));
    EXPECT_EQ(timed_producer.wait(guard(60s)), 0) << timed_producer.output();
    EXPECT_NE(timed_producer.output().find("Send TPS:"), std::string::npos)
        << timed_producer.output();
    Child timed_consumer({bench, "consumer", "-n", addr(ns_port), "-t", "BenchTopic", "-g",
                          "timed_consumer", "--duration", "2", "--from-first", "--json"},
                         dir.sub("timed_consumer.out"));
    EXPECT_EQ(timed_consumer.wait(guard(60s)), 0) << timed_consumer.output();
    EXPECT_NE(timed_consumer.output().find("Receive TPS:"), std::string::npos)
        << timed_consumer.output();

    // A batch run: counts are exact.
    Child batch({bench, "producer", "-n", addr(ns_port), "-t", "BenchTopic", "--count", "200",
                 "--batch", "10", "--json"},
                dir.sub("batch.out"));
    EXPECT_EQ(batch.wait(guard(30s)), 0) << batch.output();
    EXPECT_EQ(json_int(batch.json_line(), "ok"), 200) << batch.output();

    // -b: straight to the broker, windows run on the client I/O thread (decision 031), then
    // synchronous sends; a consumer of the topic reads every one of them back.
    ASSERT_NO_FATAL_FAILURE(create_topic("DirectTopic"));
    Child direct({bench, "producer", "-b", addr(broker_port), "-t", "DirectTopic", "-s", "300",
                  "--threads", "3", "--window", "16", "--count", "2000", "--json"},
                 dir.sub("direct.out"));
    EXPECT_EQ(direct.wait(guard(60s)), 0) << direct.output();
    EXPECT_EQ(json_int(direct.json_line(), "ok"), 2000) << direct.output();
    EXPECT_EQ(json_int(direct.json_line(), "failed"), 0) << direct.output();
    Child direct_sync({bench, "producer", "-b", addr(broker_port), "-t", "DirectTopic",
                       "--connections", "2", "--threads", "2", "--count", "50", "--json"},
                      dir.sub("direct_sync.out"));
    EXPECT_EQ(direct_sync.wait(guard(60s)), 0) << direct_sync.output();
    EXPECT_EQ(json_int(direct_sync.json_line(), "ok"), 50) << direct_sync.output();
    Child direct_consumer({bench, "consumer", "-n", addr(ns_port), "-t", "DirectTopic", "-g",
                           "direct_consumer", "--count", "2050", "--from-first", "--json"},
                          dir.sub("direct_consumer.out"));
    EXPECT_EQ(direct_consumer.wait(guard(60s)), 0) << direct_consumer.output();
    EXPECT_GE(json_int(direct_consumer.json_line(), "ok"), 2050) << direct_consumer.output();

    // A bad name server address fails with a non-zero status instead of hanging.
    Child bad({bench, "producer", "-n", "127.0.0.1:1", "-t", "BenchTopic", "--count", "1",
               "--send-timeout", "1000"},
              dir.sub("bad.out"));
    EXPECT_EQ(bad.wait(guard(30s)), 1) << bad.output();
}

// A SYNC_MASTER that needs a slave (inSyncReplicas=2) but has none answers SLAVE_NOT_AVAILABLE:
// mqbench must count those replies as failed, per status, and exit 1 — never as throughput.
TEST(MqbenchIt, RepliesOtherThanSendOkCountAsFailed) {
    TempDir dir("comet_it_mqbench_sync");
    const uint16_t ns_port = free_port();
    const uint16_t broker_port = free_port();
    auto ns = start_namesrv(dir, ns_port);
    ASSERT_TRUE(ns.is_ok());
    ASSERT_TRUE((*ns)->wait_for_port(ns_port, 10s).is_ok());
    auto broker = start_broker(
        dir, broker_port, addr(ns_port),
        {{"brokerRole", "SYNC_MASTER"}, {"totalReplicas", "2"}, {"inSyncReplicas", "2"}});
    ASSERT_TRUE(broker.is_ok());
    ASSERT_TRUE((*broker)->wait_for_port(broker_port, 20s).is_ok());
    {
        client::ClientConfig cc;
        cc.namesrv_addr = addr(ns_port);
        client::AdminClient admin(cc);
        ASSERT_TRUE(admin.start().is_ok());
        client::TopicCreateOptions o;
        o.read_queue_nums = 2;
        o.write_queue_nums = 2;
        ASSERT_TRUE(admin.create_topic(addr(broker_port), "SyncTopic", o).is_ok());
        ASSERT_TRUE(eventually([&] { return admin.topic_route("SyncTopic").is_ok(); }, 10s));
    }
    const std::string bench = binary_path("mqbench");
    Child producer({bench, "producer", "-n", addr(ns_port), "-t", "SyncTopic", "-s", "64",
                    "--count", "7", "--json"},
                   dir.sub("producer.out"));
    ASSERT_TRUE(producer.started());
    EXPECT_EQ(producer.wait(guard(30s)), 1) << producer.output();
    const std::string pj = producer.json_line();
    EXPECT_EQ(json_int(pj, "ok"), 0) << pj;
    EXPECT_EQ(json_int(pj, "failed"), 7) << pj;
    EXPECT_NE(pj.find("\"not_send_ok\":{\"SLAVE_NOT_AVAILABLE\":7}"), std::string::npos) << pj;
    EXPECT_NE(producer.output().find("Replies not SEND_OK (counted as failed)"), std::string::npos)
        << producer.output();

    // The same through -b, with a window (completions on the client I/O thread).
    Child direct({bench, "producer", "-b", addr(broker_port), "-t", "SyncTopic", "-s", "64",
                  "--queues", "2", "--window", "4", "--count", "7", "--json"},
                 dir.sub("direct.out"));
    EXPECT_EQ(direct.wait(guard(30s)), 1) << direct.output();
    const std::string dj = direct.json_line();
    EXPECT_EQ(json_int(dj, "ok"), 0) << dj;
    EXPECT_EQ(json_int(dj, "failed"), 7) << dj;
    EXPECT_NE(dj.find("\"not_send_ok\":{\"SLAVE_NOT_AVAILABLE\":7}"), std::string::npos) << dj;
}

}  // namespace
}  // namespace comet::it
