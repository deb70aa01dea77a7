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
#include "net/remoting_client.h"
#include "protocol/remoting_command.h"

namespace comet::it {

using std::chrono::milliseconds;

// <build>/apps/<name>/<name>.
std::string binary_path(const std::string& name);

// A port that was free a moment ago on 127.0.0.1 (bind port 0, read it, close).
uint16_t free_port();

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
    std::string name;    // log/config file stem, e.g. "broker-a"
    std::string binary;  // absolute path
    std::map<std::string, std::string> config;  // written to <dir>/<name>.conf, passed as -c
    std::vector<std::string> args;              // extra arguments after -c
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
    void sigstop();
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
protocol::RemotingCommand request(int32_t code,
                                  std::map<std::string, std::string> ext = {},
                                  std::string body = {});
// invoke_sync that turns transport errors into a gtest-friendly Result.
Result<protocol::RemotingCommand> call(net::RemotingClient& client, uint16_t port,
                                       protocol::RemotingCommand req,
                                       milliseconds timeout = milliseconds(5000));
// Polls `fn` every 20 ms until it returns true or `timeout` passes. Returns the last value.
bool eventually(const std::function<bool()>& fn, milliseconds timeout);

}  // namespace comet::it
