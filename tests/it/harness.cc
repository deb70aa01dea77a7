#include "harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "fault_proxy.h"
#include "protocol/json_body.h"
#include "protocol/message_ext.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::it {

namespace fs = std::filesystem;

std::string binary_path(const std::string& name) {
    return std::string(COMET_BINARY_DIR) + "/apps/" + name + "/" + name;
}

namespace {

bool can_bind(uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return false;
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    ::close(fd);
    return ok;
}

// An exclusive flock on a per-port file: its descriptor, or -1 when another process holds it.
int claim_fd(uint16_t port) {
    const std::string path = "/tmp/comet-test-port-" + std::to_string(port) + ".lock";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        return -1;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// Holds an exclusive flock on a per-port file for the rest of this process's life, so test
// processes running in parallel never hand out the same port. False when another holds it.
bool claim(uint16_t port) {
    return claim_fd(port) >= 0;  // fd stays open on purpose: the lock ends with the process
}

}  // namespace

// Ports come from 20000-32767, below Linux's ephemeral range (32768-60999), so an outgoing
// connection of another process cannot take one between this call and the server's bind. Each
// port is claimed with its neighbour (a broker listens on port and port+1 for HA), checked
// free, and never handed out twice by any test process running at the same time.
uint16_t free_port() {
    constexpr uint32_t kFirst = 20000;
    constexpr uint32_t kCount = 12768 / 2;  // even ports; p+1 belongs to p
    static std::atomic<uint32_t> next{static_cast<uint32_t>(::getpid()) * 7919u};
    for (uint32_t tries = 0; tries < kCount; ++tries) {
        const auto port = static_cast<uint16_t>(kFirst + 2 * (next.fetch_add(1) % kCount));
        if (!claim(port)) {
            continue;
        }
        if (can_bind(port) && can_bind(static_cast<uint16_t>(port + 1))) {
            return port;
        }
    }
    return 0;
}

uint16_t free_port_range(uint16_t span) {
    constexpr uint32_t kFirst = 20000;
    constexpr uint32_t kLast = 32767;
    const uint32_t pairs = (kLast + 1 - kFirst - span - 1) / 2;  // even bases that fit
    static std::atomic<uint32_t> next{static_cast<uint32_t>(::getpid()) * 104729u};
    for (uint32_t tries = 0; tries < 200; ++tries) {
        const uint32_t base = kFirst + 2 * (next.fetch_add(97) % pairs);
        // free_port() hands out even ports p (with p + 1): claiming every even port of the
        // range keeps all of [base, base + span + 1] away from it and from other ranges.
        std::vector<int> fds;
        bool ok = true;
        for (uint32_t p = base; ok && p <= base + span; p += 2) {
            const int fd = claim_fd(static_cast<uint16_t>(p));
            ok = fd >= 0 && can_bind(static_cast<uint16_t>(p)) &&
                 can_bind(static_cast<uint16_t>(p + 1));
            if (fd >= 0) {
                fds.push_back(fd);
            }
        }
        if (ok) {
            return static_cast<uint16_t>(base);  // the locks stay held for the process's life
        }
        for (int fd : fds) {
            ::close(fd);
        }
    }
    return 0;
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
    std::vector<std::string> argv_s = {options.binary};
    if (options.pass_config) {
        argv_s.push_back("-c");
        argv_s.push_back(conf);
    }
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

int patience() {
    static const int factor = [] {
        const char* v = std::getenv("COMET_TEST_PATIENCE");
        const int f = v != nullptr ? std::atoi(v) : 3;
        return f >= 1 ? f : 1;
    }();
    return factor;
}

milliseconds guard(milliseconds timeout) { return timeout * patience(); }

Status Process::wait_for_port(uint16_t port, milliseconds timeout) {
    timeout = guard(timeout);
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
    return Status::error(Errc::kTimeout, "port {} not open after {} ms: {}", port, timeout.count(),
                         log_tail());
}

Status Process::wait_for_log(const std::string& text, milliseconds timeout) {
    timeout = guard(timeout);
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

Status Process::sigstop_and_wait(milliseconds timeout) {
    timeout = guard(timeout);
    if (reaped_) {
        return Status::error(Errc::kUnavailable, "process {} already exited", pid_);
    }
    ::kill(pid_, SIGSTOP);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        const pid_t r = ::waitpid(pid_, &status, WNOHANG | WUNTRACED);
        if (r == pid_ && WIFSTOPPED(status)) {
            return Status::ok();
        }
        if (r == pid_) {
            reaped_ = true;
            exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            return Status::error(Errc::kUnavailable, "process {} exited ({}) instead of stopping",
                                 pid_, exit_code_);
        }
        std::this_thread::sleep_for(milliseconds(1));
    }
    return Status::error(Errc::kTimeout, "process {} not stopped after {} ms", pid_,
                         timeout.count());
}
void Process::sigterm() { signal(SIGTERM); }

Result<int> Process::wait_exit(milliseconds timeout) {
    timeout = guard(timeout);
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

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        out.push_back(line);
    }
    return out;
}

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
    return client.invoke_sync(addr(port), std::move(req), guard(timeout));
}

bool eventually(const std::function<bool()>& fn, milliseconds timeout) {
    timeout = guard(timeout);
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

namespace {

// SEND_MESSAGE_V2's header (RocketMQ 4.9 SendMessageRequestHeaderV2 field names a..m), which
// SEND_REPLY_MESSAGE_V2 shares; `batch` adds m=false as a Java producer sends it.
protocol::RemotingCommand send_v2_request(int32_t code, const std::string& group,
                                          const std::string& topic, const std::string& body,
                                          int queue,
                                          const std::map<std::string, std::string>& props,
                                          bool batch) {
    protocol::MessageProperties p;
    for (const auto& [k, v] : props) {
        p.set(k, v);
    }
    std::map<std::string, std::string> ext = {{"a", group},
                                              {"b", topic},
                                              {"c", "TBW102"},
                                              {"d", "4"},
                                              {"e", std::to_string(queue)},
                                              {"f", "0"},
                                              {"g", "1700000000000"},
                                              {"h", "0"},
                                              {"i", protocol::message_properties_to_string(p)},
                                              {"j", "0"},
                                              {"k", "false"}};
    if (batch) {
        ext.emplace("m", "false");
    }
    return request(code, std::move(ext), body);
}

}  // namespace

protocol::RemotingCommand send_message_request(const std::string& topic, const std::string& body,
                                               int queue,
                                               std::map<std::string, std::string> props) {
    return send_v2_request(protocol::RequestCode::kSendMessageV2, "PG", topic, body, queue, props,
                           true);
}

protocol::RemotingCommand reply_message_request(const std::string& topic, const std::string& body,
                                                std::map<std::string, std::string> props) {
    return send_v2_request(protocol::RequestCode::kSendReplyMessageV2, "ReplierPG", topic, body, 0,
                           props, false);
}

protocol::RemotingCommand pull_message_request(const std::string& group, const std::string& topic,
                                               int queue, int64_t offset, int max_nums) {
    return request(protocol::RequestCode::kPullMessage,
                   {{"consumerGroup", group},
                    {"topic", topic},
                    {"queueId", std::to_string(queue)},
                    {"queueOffset", std::to_string(offset)},
                    {"maxMsgNums", std::to_string(max_nums)},
                    {"sysFlag", "4"},  // FLAG_SUBSCRIPTION only
                    {"commitOffset", "0"},
                    {"suspendTimeoutMillis", "0"},
                    {"subscription", "*"},
                    {"subVersion", "0"},
                    {"expressionType", "TAG"}});
}

protocol::RemotingCommand create_topic_request(const std::string& topic, int queues) {
    return request(protocol::RequestCode::kUpdateAndCreateTopic,
                   {{"topic", topic},
                    {"defaultTopic", "TBW102"},
                    {"readQueueNums", std::to_string(queues)},
                    {"writeQueueNums", std::to_string(queues)},
                    {"perm", "6"},
                    {"topicFilterType", "SINGLE_TAG"},
                    {"order", "false"}});
}

Result<std::map<std::string, std::string>> runtime_info(net::RemotingClient& client,
                                                        uint16_t port) {
    COMET_ASSIGN_OR_RETURN(auto r,
                           call(client, port, request(protocol::RequestCode::kGetBrokerRuntimeInfo),
                                milliseconds(3000)));
    if (r.code != protocol::ResponseCode::kSuccess) {
        return Status::error(Errc::kUnavailable, "GET_BROKER_RUNTIME_INFO from {}: code {} {}",
                             addr(port), r.code, r.remark.value_or(""));
    }
    COMET_ASSIGN_OR_RETURN(auto doc, protocol::parse_json_body(r.body));
    std::map<std::string, std::string> table;
    if (!doc.IsObject() || !doc.HasMember("table")) {
        return Status::error(Errc::kCorruption, "runtime info from {} has no table", addr(port));
    }
    COMET_RETURN_IF_ERROR(protocol::read_string_map(doc, "table", &table));
    return table;
}

CommandResult run_command(const TempDir& dir, const std::vector<std::string>& argv,
                          milliseconds timeout) {
    timeout = guard(timeout);
    static std::atomic<int> counter{0};
    const std::string stem = dir.sub("cmd-" + std::to_string(++counter));
    CommandResult r;
    if (argv.empty()) {
        r.err = "run_command: empty argv";
        return r;
    }
    std::vector<std::string> args = argv;
    std::vector<char*> cargv;
    for (auto& a : args) {
        cargv.push_back(a.data());
    }
    cargv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        r.err = std::string("fork: ") + std::strerror(errno);
        return r;
    }
    if (pid == 0) {
        const int in = ::open("/dev/null", O_RDONLY);
        const int out = ::open((stem + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = ::open((stem + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in >= 0) {
            ::dup2(in, 0);
        }
        if (out >= 0) {
            ::dup2(out, 1);
        }
        if (err >= 0) {
            ::dup2(err, 2);
        }
        ::setpgid(0, 0);
        ::execv(cargv[0], cargv.data());
        ::_exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (true) {
        if (::waitpid(pid, &status, WNOHANG) == pid) {
            break;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            r.err = "timed out after " + std::to_string(timeout.count()) + " ms\n";
            break;
        }
        std::this_thread::sleep_for(milliseconds(10));
    }
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    auto slurp = [](const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        std::ostringstream ss;
        ss << in.rdbuf();
        return ss.str();
    };
    r.out = slurp(stem + ".out");
    r.err += slurp(stem + ".err");
    return r;
}

Result<std::unique_ptr<BrokerGroup>> BrokerGroup::start(const TempDir& dir,
                                                        const std::string& namesrv_addr,
                                                        BrokerGroupOptions options) {
    std::unique_ptr<BrokerGroup> g(new BrokerGroup(dir, std::move(options)));
    const BrokerGroupOptions& o = g->options_;
    // Ports are only reserved once a process binds them: never hand out one twice, and never
    // let a proxy's ephemeral listen port be one a broker is about to bind.
    std::set<uint16_t> used;
    auto unique_port = [&used]() -> uint16_t {
        for (int attempt = 0; attempt < 100; ++attempt) {
            const uint16_t p = free_port();
            if (p != 0 && used.insert(p).second) {
                return p;
            }
        }
        return 0;
    };
    for (int id = 0; id <= o.slaves; ++id) {
        auto node = std::make_unique<BrokerNode>();
        node->name = o.broker_name + "-" + std::to_string(id);
        node->broker_id = id;
        node->port = unique_port();
        node->ha_port = unique_port();
        if (node->port == 0 || node->ha_port == 0) {
            return Status::error(Errc::kResourceExhausted, "no free 127.0.0.1 ports");
        }
        node->config = {{"brokerName", o.broker_name},
                        {"brokerClusterName", "DefaultCluster"},
                        {"brokerId", std::to_string(id)},
                        {"listenPort", std::to_string(node->port)},
                        {"listenHost", "127.0.0.1"},
                        {"haListenPort", std::to_string(node->ha_port)},
                        {"namesrvAddr", namesrv_addr},
                        {"brokerIP1", "127.0.0.1"},
                        {"brokerIP2", "127.0.0.1"},
                        {"storePathRootDir", dir.sub(node->name + "/store")},
                        {"logDir", dir.sub(node->name + "/logs")},
                        {"mappedFileSizeCommitLog", std::to_string(16 * 1024 * 1024)},
                        {"mappedFileSizeConsumeQueue", std::to_string(30000 * 20)}};
        if (id > 0) {
            node->config["brokerRole"] = "SLAVE";
        }
        for (const auto& [k, v] : o.common_config) {
            node->config[k] = v;
        }
        for (const auto& [k, v] : id == 0 ? o.master_config : o.slave_config) {
            node->config[k] = v;
        }
        g->nodes_.push_back(std::move(node));
    }
    const uint16_t master_ha = g->nodes_[0]->ha_port;
    for (size_t i = 1; i < g->nodes_.size() && o.proxy_ha_links; ++i) {
        std::unique_ptr<FaultProxy>& proxy = g->nodes_[i]->ha_proxy;
        for (int attempt = 0; attempt < 20 && (proxy == nullptr || used.count(proxy->port()) > 0);
             ++attempt) {
            proxy.reset();  // its port collided with a broker's: bind another
            COMET_ASSIGN_OR_RETURN(proxy, FaultProxy::start("127.0.0.1", master_ha));
        }
        if (used.count(proxy->port()) > 0) {
            return Status::error(Errc::kResourceExhausted, "fault proxy: no distinct port");
        }
        used.insert(proxy->port());
        g->nodes_[i]->config["haMasterAddress"] = proxy->address();
    }
    for (auto& node : g->nodes_) {
        COMET_RETURN_IF_ERROR(g->start_node(*node));
    }
    return g;
}

BrokerGroup::~BrokerGroup() {
    for (auto& node : nodes_) {
        node->process.reset();  // SIGCONT + SIGKILL + reap
    }
    for (auto& node : nodes_) {
        if (node->ha_proxy != nullptr) {
            node->ha_proxy->shutdown();
        }
    }
}

std::vector<BrokerNode*> BrokerGroup::nodes() {
    std::vector<BrokerNode*> out;
    for (auto& n : nodes_) {
        out.push_back(n.get());
    }
    return out;
}

Status BrokerGroup::start_node(BrokerNode& node, bool wipe_store) {
    kill_node(node);
    if (wipe_store) {
        std::error_code ec;
        fs::remove_all(dir_.sub(node.name + "/store"), ec);
        if (ec) {
            return Status::error(Errc::kIoError, "wipe store of {}: {}", node.name, ec.message());
        }
    }
    ProcessOptions po;
    po.name = node.name;
    po.binary = binary_path("mqbroker");
    po.config = node.config;
    COMET_ASSIGN_OR_RETURN(node.process, Process::start(po, dir_.path()));
    return node.process->wait_for_port(node.port, options_.start_timeout);
}

void BrokerGroup::kill_node(BrokerNode& node) {
    if (node.process != nullptr) {
        node.process->sigkill();
        (void)node.process->wait_exit(milliseconds(10000));
        // Keep the old log next to the new one: a restart truncates <name>.log.
        std::error_code ec;
        fs::copy_file(node.process->log_path(), node.process->log_path() + ".prev",
                      fs::copy_options::overwrite_existing, ec);
        node.process.reset();
    }
}

}  // namespace comet::it
