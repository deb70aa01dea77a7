// comet_faultproxy: the FaultProxy as a standalone process, for benchmark scripts and manual
// fault injection between Comet processes.
//   comet_faultproxy --listen 127.0.0.1:P --target 127.0.0.1:Q [--delay-ms N] [--rate BPS]
// Prints "listening on 127.0.0.1:<port>" once ready (P may be 0 for an ephemeral port), then
// forwards until SIGINT/SIGTERM. Optional runtime commands, one per line on stdin:
//   delay <ms> | delay-up <ms> | delay-down <ms> | rate <bps> | pause | resume | drop | heal | stats

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "fault_proxy.h"

namespace {

bool split_host_port(const std::string& s, std::string* host, uint16_t* port) {
    const size_t colon = s.rfind(':');
    if (colon == std::string::npos || colon == 0) {
        return false;
    }
    *host = s.substr(0, colon);
    try {
        const unsigned long p = std::stoul(s.substr(colon + 1));
        if (p > 65535) {
            return false;
        }
        *port = static_cast<uint16_t>(p);
    } catch (const std::exception&) {
        return false;
    }
    return true;
}

// Applies one stdin command; returns a reply line.
std::string apply_command(comet::it::FaultProxy& proxy, const std::string& line) {
    using comet::it::ProxyDirection;
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    long long value = -1;
    in >> value;
    const bool has_value = value >= 0;
    if (cmd == "delay" && has_value) {
        proxy.set_delay(std::chrono::milliseconds(value));
    } else if (cmd == "delay-up" && has_value) {
        proxy.set_delay(ProxyDirection::kUpstream, std::chrono::milliseconds(value));
    } else if (cmd == "delay-down" && has_value) {
        proxy.set_delay(ProxyDirection::kDownstream, std::chrono::milliseconds(value));
    } else if (cmd == "rate" && has_value) {
        proxy.set_rate(static_cast<uint64_t>(value));
    } else if (cmd == "pause") {
        proxy.pause();
    } else if (cmd == "resume") {
        proxy.resume();
    } else if (cmd == "drop") {
        proxy.drop();
    } else if (cmd == "heal") {
        proxy.heal();
    } else if (cmd == "stats") {
        const auto s = proxy.stats();
        return "accepted=" + std::to_string(s.accepted) + " active=" + std::to_string(s.active) +
               " upstream_bytes=" + std::to_string(s.upstream_bytes) +
               " downstream_bytes=" + std::to_string(s.downstream_bytes);
    } else if (!cmd.empty()) {
        return "error: unknown command '" + line + "'";
    }
    return cmd.empty() ? "" : "ok";
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"comet_faultproxy: TCP proxy with added latency, throttle, pause and drop"};
    std::string listen = "127.0.0.1:0";
    std::string target;
    int64_t delay_ms = 0;
    uint64_t rate = 0;
    app.add_option("--listen", listen, "listen address host:port (port 0 = ephemeral)");
    app.add_option("--target", target, "target address host:port")->required();
    app.add_option("--delay-ms", delay_ms, "added one-way latency in each direction (ms)")
        ->check(CLI::Range(int64_t{0}, int64_t{600000}));
    app.add_option("--rate", rate, "bandwidth limit per direction per connection, bytes/s (0: none)");
    CLI11_PARSE(app, argc, argv);

    std::string listen_host;
    std::string target_host;
    uint16_t listen_port = 0;
    uint16_t target_port = 0;
    if (!split_host_port(listen, &listen_host, &listen_port)) {
        std::cerr << "comet_faultproxy: bad --listen '" << listen << "' (want host:port)\n";
        return 2;
    }
    if (!split_host_port(target, &target_host, &target_port) || target_port == 0) {
        std::cerr << "comet_faultproxy: bad --target '" << target << "' (want host:port)\n";
        return 2;
    }

    // Block the stop signals in every thread; the main loop collects them with sigtimedwait.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    ::signal(SIGPIPE, SIG_IGN);

    auto started = comet::it::FaultProxy::start(target_host, target_port, listen_port, listen_host);
    if (!started.is_ok()) {
        std::cerr << "comet_faultproxy: " << started.status().to_string() << "\n";
        return 1;
    }
    auto proxy = std::move(started).value();
    proxy->set_delay(std::chrono::milliseconds(delay_ms));
    proxy->set_rate(rate);
    std::cout << "listening on " << listen_host << ":" << proxy->port() << " -> " << target_host
              << ":" << target_port << " delay_ms=" << delay_ms << " rate=" << rate << std::endl;

    bool stdin_open = true;
    std::string pending;
    while (true) {
        const timespec zero{0, 0};
        if (sigtimedwait(&stop_signals, nullptr, &zero) > 0) {
            break;
        }
        if (!stdin_open) {
            const timespec wait{0, 200 * 1000 * 1000};
            if (sigtimedwait(&stop_signals, nullptr, &wait) > 0) {
                break;
            }
            continue;
        }
        pollfd p{STDIN_FILENO, POLLIN, 0};
        if (::poll(&p, 1, 200) <= 0) {
            continue;
        }
        char buf[512];
        const ssize_t n = ::read(STDIN_FILENO, buf, sizeof(buf));
        if (n <= 0) {
            stdin_open = false;  // no controller: keep forwarding until a signal
            continue;
        }
        pending.append(buf, static_cast<size_t>(n));
        size_t nl;
        while ((nl = pending.find('\n')) != std::string::npos) {
            const std::string reply = apply_command(*proxy, pending.substr(0, nl));
            pending.erase(0, nl + 1);
            if (!reply.empty()) {
                std::cout << reply << std::endl;
            }
        }
    }
    proxy->shutdown();
    const auto s = proxy->stats();
    std::cout << "stopped: accepted=" << s.accepted << " upstream_bytes=" << s.upstream_bytes
              << " downstream_bytes=" << s.downstream_bytes << std::endl;
    return 0;
}
