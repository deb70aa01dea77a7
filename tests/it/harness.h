#pragma once
// Process harness for integration tests: starts a built binary (mqnamesrv, mqbroker, ...) with a
// generated properties file in a temporary directory, captures its stdout/stderr to a log file,
// waits (bounded) for its port, sends it signals, and always kills it on teardown. Plus small
// client helpers over net::RemotingClient.
// Threads: a Process is owned by one test thread. Every wait is bounded by a timeout.

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "fault_proxy.h"
#include "net/remoting_client.h"
#include "protocol/remoting_command.h"

namespace comet::it {

using std::chrono::milliseconds;

// Every timeout a test passes to a wait of this harness is a hang guard, never a measurement:
// the waits stretch it by patience() (env COMET_TEST_PATIENCE, default 3), so a loaded machine
// only makes a failing test fail later. Durations are measured by benchmarks (bench/).
int patience();
milliseconds guard(milliseconds timeout);  // timeout * patience()

// <build>/apps/<name>/<name>.
std::string binary_path(const std::string& name);

// A port that was free a moment ago on 127.0.0.1 (bind port 0, read it, close).
uint16_t free_port();
// An even base such that every port of [base, base + span + 1] was free a moment ago on
// 127.0.0.1 and is claimed for this process as free_port()'s ports are (for a server that
// derives several fixed ports from one base, such as `mqbrokercontainer --dev`). 0 when none.
uint16_t free_port_range(uint16_t span);

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
public:
    explicit TempDir(const std::string& prefix = "comet_it");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string sub(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

struct ProcessOptions {
    std::string name;                           // log/config file stem, e.g. "broker-a"
    std::string binary;                         // absolute path
    std::map<std::string, std::string> config;  // written to <dir>/<name>.conf, passed as -c
    std::vector<std::string> args;              // extra arguments after -c
    // false: a foreign binary (prometheus) that takes no "-c <conf>"; `config` is not written.
    bool pass_config = true;
};

class Process {
public:
    // Forks and execs; stdout+stderr go to <dir>/<name>.log. Errors: kIoError.
    static Result<std::unique_ptr<Process>> start(const ProcessOptions& options,
                                                  const std::string& dir);
    ~Process();  // SIGKILL (and SIGCONT first, if stopped) + reap, if still running
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;

    pid_t pid() const { return pid_; }
    bool running();
    // Waits until 127.0.0.1:port accepts a connection. kTimeout with the log tail otherwise;
    // kUnavailable when the process exited meanwhile.
    Status wait_for_port(uint16_t port, milliseconds timeout);
    // Waits until the log contains `text`. kTimeout otherwise.
    Status wait_for_log(const std::string& text, milliseconds timeout);
    void signal(int sig);
    void sigkill();
    void sigstop();  // returns at once; the process may still run for a moment
    // SIGSTOP and wait (bounded) until every thread of the process is stopped (waitpid
    // WUNTRACED), so nothing it does afterwards can be mistaken for work done while hung.
    Status sigstop_and_wait(milliseconds timeout = milliseconds(5000));
    void sigcont();
    void sigterm();
    // Waits for exit; the exit code (128+signal when killed), or kTimeout.
    Result<int> wait_exit(milliseconds timeout);
    std::string log() const;
    std::string log_tail(size_t bytes = 4000) const;
    const std::string& log_path() const { return log_path_; }

private:
    Process(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
    pid_t pid_;
    std::string log_path_;
    bool reaped_ = false;
    int exit_code_ = 0;
};

// Starts mqnamesrv on `port` with extra properties.
Result<std::unique_ptr<Process>> start_namesrv(const TempDir& dir, uint16_t port,
                                               std::map<std::string, std::string> extra = {},
                                               const std::string& name = "namesrv");
// Starts mqbroker on `port` with its store under dir/<name>, registering with `namesrv_addr`.
Result<std::unique_ptr<Process>> start_broker(const TempDir& dir, uint16_t port,
                                              const std::string& namesrv_addr,
                                              std::map<std::string, std::string> extra = {},
                                              const std::string& name = "broker-a");

// Client helpers.
std::string addr(uint16_t port);  // "127.0.0.1:<port>"
// The lines of a command's output, without their line ends.
std::vector<std::string> lines_of(const std::string& text);
protocol::RemotingCommand request(int32_t code, std::map<std::string, std::string> ext = {},
                                  std::string body = {});
// invoke_sync that turns transport errors into a gtest-friendly Result.
Result<protocol::RemotingCommand> call(net::RemotingClient& client, uint16_t port,
                                       protocol::RemotingCommand req,
                                       milliseconds timeout = milliseconds(5000));
// Polls `fn` every 20 ms until it returns true or `timeout` passes. Returns the last value.
bool eventually(const std::function<bool()>& fn, milliseconds timeout);

// Request builders shared by the process tests (RocketMQ 4.9 Java client field names).
// SEND_MESSAGE_V2 from producer group "PG"; queue -1 lets the broker pick.
protocol::RemotingCommand send_message_request(const std::string& topic, const std::string& body,
                                               int queue = 0,
                                               std::map<std::string, std::string> props = {});
// SEND_REPLY_MESSAGE_V2 from producer group "ReplierPG" to queue 0 (the reply's properties, e.g.
// CORRELATION_ID and REPLY_TO_CLIENT, in `props`).
protocol::RemotingCommand reply_message_request(const std::string& topic, const std::string& body,
                                                std::map<std::string, std::string> props);
// PULL_MESSAGE with its subscription ("*"), no commit, no suspension (sysFlag 4).
protocol::RemotingCommand pull_message_request(const std::string& group, const std::string& topic,
                                               int queue, int64_t offset, int max_nums = 32);
// UPDATE_AND_CREATE_TOPIC, read/write queues = `queues`, perm 6.
protocol::RemotingCommand create_topic_request(const std::string& topic, int queues);
// GET_BROKER_RUNTIME_INFO's table. Errors: transport, non-SUCCESS code, bad JSON.
Result<std::map<std::string, std::string>> runtime_info(net::RemotingClient& client, uint16_t port);

// Runs `argv` (argv[0] = absolute binary path) to completion with stdin from /dev/null,
// killing it after `timeout`. exit_code is 128+signal when killed, -1 when it could not start.
struct CommandResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};
CommandResult run_command(const TempDir& dir, const std::vector<std::string>& argv,
                          milliseconds timeout = milliseconds(30000));

// One broker process of a group, with its fixed ports and config (restartable in place).
struct BrokerNode {
    std::string name;  // process/dir name, e.g. "broker-a-0" (master), "broker-a-2" (slave 2)
    int64_t broker_id = 0;
    uint16_t port = 0;
    uint16_t ha_port = 0;
    std::map<std::string, std::string> config;  // the full properties file
    std::unique_ptr<Process> process;
    // Slaves started with proxied HA links: slave → proxy → master haListenPort.
    std::unique_ptr<FaultProxy> ha_proxy;
    std::string address() const { return addr(port); }
};

struct BrokerGroupOptions {
    std::string broker_name = "broker-a";
    int slaves = 2;
    std::map<std::string, std::string> common_config;  // every node
    std::map<std::string, std::string> master_config;  // master only (brokerRole etc.)
    std::map<std::string, std::string> slave_config;   // every slave
    // true: each slave's haMasterAddress points to its own FaultProxy in front of the master's
    // HA port; false: slaves learn the HA address from the name server's register result.
    bool proxy_ha_links = false;
    milliseconds start_timeout = milliseconds(20000);
};

// A master (brokerId 0) and N slaves sharing brokerName, on 127.0.0.1 with ephemeral ports,
// stores under dir/<node name>/store. Owned by one test thread; the destructor kills every
// process (SIGCONT first) and stops the proxies.
class BrokerGroup {
public:
    static Result<std::unique_ptr<BrokerGroup>> start(const TempDir& dir,
                                                      const std::string& namesrv_addr,
                                                      BrokerGroupOptions options);
    ~BrokerGroup();
    BrokerGroup(const BrokerGroup&) = delete;
    BrokerGroup& operator=(const BrokerGroup&) = delete;

    BrokerNode& master() { return *nodes_[0]; }
    BrokerNode& slave(size_t i) { return *nodes_[i + 1]; }  // i = 0 → brokerId 1
    size_t slave_count() const { return nodes_.size() - 1; }
    std::vector<BrokerNode*> nodes();

    // (Re)starts a node's process with its config and waits for its port. wipe_store removes
    // its store directory first (an empty slave must copy everything again).
    Status start_node(BrokerNode& node, bool wipe_store = false);
    // SIGKILL (after SIGCONT) and reap.
    void kill_node(BrokerNode& node);

private:
    BrokerGroup(const TempDir& dir, BrokerGroupOptions options)
        : dir_(dir), options_(std::move(options)) {}
    const TempDir& dir_;
    BrokerGroupOptions options_;
    std::vector<std::unique_ptr<BrokerNode>> nodes_;
};

}  // namespace comet::it
