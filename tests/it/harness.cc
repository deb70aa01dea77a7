#include "harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace comet::it {

namespace fs = std::filesystem;

std::string binary_path(const std::string& name) {
    return std::string(COMET_BINARY_DIR) + "/apps/" + name + "/" + name;
}

uint16_t free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return 0;
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    uint16_t port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
        socklen_t len = sizeof(a);
        if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
            port = ntohs(a.sin_port);
        }
    }
    ::close(fd);
    return port;
}

TempDir::TempDir(const std::string& prefix) {
    const char* tmp = std::getenv("TMPDIR");
    std::string base = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
    std::string templ = base + "/" + prefix + "_XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    const char* made = ::mkdtemp(buf.data());
    path_ = made != nullptr ? made : templ;
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

Result<std::unique_ptr<Process>> Process::start(const ProcessOptions& options,
                                                 const std::string& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    const std::string conf = dir + "/" + options.name + ".conf";
    {
        std::ofstream out(conf, std::ios::trunc);
        for (const auto& [k, v] : options.config) {
            out << k << "=" << v << "\n";
        }
        if (!out) {
            return Status::error(Errc::kIoError, "write {}", conf);
        }
    }
    if (::access(options.binary.c_str(), X_OK) != 0) {
        return Status::error(Errc::kNotFound, "binary {} is not built", options.binary);
    }
    const std::string log_path = dir + "/" + options.name + ".log";
    std::vector<std::string> argv_s = {options.binary, "-c", conf};
    argv_s.insert(argv_s.end(), options.args.begin(), options.args.end());
    std::vector<char*> argv;
    for (auto& s : argv_s) {
        argv.push_back(s.data());
    }
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        return Status::error(Errc::kIoError, "fork: {}", std::strerror(errno));
    }
    if (pid == 0) {
        const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            ::dup2(fd, 1);
            ::dup2(fd, 2);
            ::close(fd);
        }
        // The child gets its own process group so a test's SIGSTOP never hits the runner.
        ::setpgid(0, 0);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    return std::unique_ptr<Process>(new Process(pid, log_path));
}

Process::~Process() {
    if (running()) {
        ::kill(pid_, SIGCONT);
        ::kill(pid_, SIGKILL);
    }
    if (!reaped_) {
        int status = 0;
        ::waitpid(pid_, &status, 0);
        reaped_ = true;
    }
}

bool Process::running() {
    if (reaped_) {
        return false;
    }
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
        reaped_ = true;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return false;
    }
    return true;
}

Status Process::wait_for_port(uint16_t port, milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (!running()) {
            return Status::error(Errc::kUnavailable, "process {} exited ({}) before port {}: {}",
                                 pid_, exit_code_, port, log_tail());
        }
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(port);
        const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
        ::close(fd);
        if (ok) {
            return Status::ok();
        }
        std::this_thread::sleep_for(milliseconds(20));
    }
    return Status::error(Errc::kTimeout, "port {} not open after {} ms: {}", port,
                         timeout.count(), log_tail());
}

Status Process::wait_for_log(const std::string& text, milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (log().find(text) != std::string::npos) {
            return Status::ok();
        }
        std::this_thread::sleep_for(milliseconds(20));
    }
    return Status::error(Errc::kTimeout, "'{}' not in log after {} ms: {}", text, timeout.count(),
                         log_tail());
}

void Process::signal(int sig) {
    if (!reaped_) {
        ::kill(pid_, sig);
    }
}
void Process::sigkill() {
    signal(SIGCONT);
    signal(SIGKILL);
}
void Process::sigstop() { signal(SIGSTOP); }
void Process::sigcont() { signal(SIGCONT); }
void Process::sigterm() { signal(SIGTERM); }

Result<int> Process::wait_exit(milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (!running()) {
            return exit_code_;
        }
        std::this_thread::sleep_for(milliseconds(10));
    }
    return Status::error(Errc::kTimeout, "process {} still running after {} ms", pid_,
                         timeout.count());
}

std::string Process::log() const {
    std::ifstream in(log_path_, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string Process::log_tail(size_t bytes) const {
    const std::string all = log();
    return all.size() <= bytes ? all : all.substr(all.size() - bytes);
}

Result<std::unique_ptr<Process>> start_namesrv(const TempDir& dir, uint16_t port,
                                               std::map<std::string, std::string> extra,
                                               const std::string& name) {
    ProcessOptions o;
    o.name = name;
    o.binary = binary_path("mqnamesrv");
    o.config = {{"listenPort", std::to_string(port)},
                {"listenHost", "127.0.0.1"},
                {"kvConfigPath", dir.sub(name + "/kvConfig.json")},
                {"logDir", dir.sub(name + "/logs")}};
    for (auto& [k, v] : extra) {
        o.config[k] = v;
    }
    return Process::start(o, dir.path());
}

Result<std::unique_ptr<Process>> start_broker(const TempDir& dir, uint16_t port,
                                              const std::string& namesrv_addr,
                                              std::map<std::string, std::string> extra,
                                              const std::string& name) {
    ProcessOptions o;
    o.name = name;
    o.binary = binary_path("mqbroker");
    o.config = {{"brokerName", name},
                {"listenPort", std::to_string(port)},
                {"listenHost", "127.0.0.1"},
                {"haListenPort", std::to_string(free_port())},
                {"namesrvAddr", namesrv_addr},
                {"brokerIP1", "127.0.0.1"},
                {"storePathRootDir", dir.sub(name + "/store")},
                {"logDir", dir.sub(name + "/logs")},
                {"mappedFileSizeCommitLog", std::to_string(16 * 1024 * 1024)},
                {"mappedFileSizeConsumeQueue", std::to_string(30000 * 20)}};
    for (auto& [k, v] : extra) {
        o.config[k] = v;
    }
    return Process::start(o, dir.path());
}

std::string addr(uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

protocol::RemotingCommand request(int32_t code, std::map<std::string, std::string> ext,
                                  std::string body) {
    protocol::RemotingCommand r = protocol::RemotingCommand::request(code);
    r.language = protocol::LanguageCode::kJava;
    r.version = 401;
    r.ext_fields = std::move(ext);
    r.body = std::move(body);
    return r;
}

Result<protocol::RemotingCommand> call(net::RemotingClient& client, uint16_t port,
                                       protocol::RemotingCommand req, milliseconds timeout) {
    return client.invoke_sync(addr(port), std::move(req), timeout);
}

bool eventually(const std::function<bool()>& fn, milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        if (fn()) {
            return true;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(milliseconds(20));
    }
}

}  // namespace comet::it
