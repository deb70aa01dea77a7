// raft_sim: runs RaftSim for one seed or many.
//   raft_sim --seed=N --nodes=K --trace     replay one seed with a readable trace
//   raft_sim --seeds=2000 --nodes=3         soak: seeds 1..2000 (or from --first-seed)
// A failing seed prints its replay command and the tail of its trace, and exits 1.
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>

#include "raft_sim.h"

namespace comet::raft::sim {
extern int64_t g_virtual_now_ms;
}  // namespace comet::raft::sim

namespace {

using comet::raft::sim::RaftSim;
using comet::raft::sim::SimOptions;
using comet::raft::sim::SimResult;

// Log sink that prefixes virtual time and keeps the last `cap` lines (or prints them at once).
class TraceSink final : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
public:
    TraceSink(size_t cap, bool echo) : cap_(cap), echo_(echo) {}
    std::deque<std::string>& lines() { return lines_; }

protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
        std::string line = fmt::format("[{:>6}ms] {}", comet::raft::sim::g_virtual_now_ms,
                                       std::string_view(msg.payload.data(), msg.payload.size()));
        if (echo_) {
            std::fprintf(stdout, "%s\n", line.c_str());
            return;
        }
        lines_.push_back(std::move(line));
        if (lines_.size() > cap_) {
            lines_.pop_front();
        }
    }
    void flush_() override { std::fflush(stdout); }

private:
    size_t cap_;
    bool echo_;
    std::deque<std::string> lines_;
};

char g_replay[256] = "";

void on_abort(int) {
    // A COMET_CHECK in the core aborted: say how to replay before dying.
    const char* prefix = "\nraft_sim aborted; replay with: ";
    (void)!write(2, prefix, std::strlen(prefix));
    (void)!write(2, g_replay, std::strlen(g_replay));
    (void)!write(2, "\n", 1);
    std::signal(SIGABRT, SIG_DFL);
    std::abort();
}

void use_logger(std::shared_ptr<TraceSink> sink, bool enabled) {
    auto logger = std::make_shared<spdlog::logger>("raft_sim", sink);
    logger->set_level(enabled ? spdlog::level::info : spdlog::level::off);
    spdlog::set_default_logger(logger);
}

bool parse_flag(const std::string& arg, const char* name, std::string* value) {
    const std::string prefix = std::string("--") + name + "=";
    if (arg.rfind(prefix, 0) == 0) {
        *value = arg.substr(prefix.size());
        return true;
    }
    return false;
}

int usage() {
    std::fprintf(stderr,
                 "usage: raft_sim [--seed=N | --seeds=N [--first-seed=S]] [--nodes=3|5] "
                 "[--trace] [--fault-ms=MS] [--plain] [--compact=seed|never|always]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    uint64_t first = 1;
    uint64_t count = 1;
    int nodes = 3;
    bool trace = false;
    bool plain = false;
    int compact = -1;
    int64_t fault_ms = SimOptions{}.fault_ms;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        std::string v;
        // Accept "--flag value" as well as "--flag=value".
        if (arg.rfind("--", 0) == 0 && arg.find('=') == std::string::npos && i + 1 < argc &&
            arg != "--trace" && arg != "--plain") {
            arg += "=" + std::string(argv[++i]);
        }
        try {
            if (parse_flag(arg, "seed", &v)) {
                first = std::stoull(v);
                count = 1;
            } else if (parse_flag(arg, "seeds", &v)) {
                count = std::stoull(v);
            } else if (parse_flag(arg, "first-seed", &v)) {
                first = std::stoull(v);
            } else if (parse_flag(arg, "nodes", &v)) {
                nodes = std::stoi(v);
            } else if (parse_flag(arg, "fault-ms", &v)) {
                fault_ms = std::stoll(v);
            } else if (parse_flag(arg, "compact", &v)) {
                if (v != "seed" && v != "never" && v != "always") {
                    return usage();
                }
                compact = v == "seed" ? -1 : v == "never" ? 0 : 1;
            } else if (arg == "--trace") {
                trace = true;
            } else if (arg == "--plain") {
                plain = true;
            } else {
                return usage();
            }
        } catch (const std::exception&) {
            return usage();
        }
    }
    if (nodes < 1 || nodes > 9 || count == 0) {
        return usage();
    }
    std::signal(SIGABRT, on_abort);
    auto sink = std::make_shared<TraceSink>(400, trace);
    use_logger(sink, trace);

    const auto start = std::chrono::steady_clock::now();
    uint64_t events = 0;
    uint64_t commits = 0;
    uint64_t acked = 0;
    uint64_t compactions = 0;
    uint64_t installed = 0;
    int64_t worst_heal = 0;
    int64_t worst_leader = 0;
    for (uint64_t seed = first; seed < first + count; ++seed) {
        std::snprintf(g_replay, sizeof(g_replay), "raft_sim --seed=%llu --nodes=%d%s%s --trace",
                      static_cast<unsigned long long>(seed), nodes, plain ? " --plain" : "",
                      compact < 0    ? ""
                      : compact == 0 ? " --compact=never"
                                     : " --compact=always");
        SimOptions opt;
        opt.seed = seed;
        opt.nodes = nodes;
        opt.trace = trace;
        opt.fault_ms = fault_ms;
        opt.force_plain = plain;
        opt.compact = compact;
        SimResult r = RaftSim(opt).run();
        events += r.events;
        commits += r.commits;
        acked += r.acked;
        compactions += r.compactions;
        installed += r.snapshots_installed;
        worst_heal = std::max(worst_heal, r.heal_to_commit_ms);
        worst_leader = std::max(worst_leader, r.heal_to_leader_ms);
        if (!r.ok) {
            if (!trace) {
                // Replay the same seed with tracing on; print the tail of the trace.
                sink->lines().clear();
                use_logger(sink, true);
                opt.trace = true;
                (void)RaftSim(opt).run();
                for (const std::string& line : sink->lines()) {
                    std::fprintf(stdout, "%s\n", line.c_str());
                }
            }
            std::fprintf(stdout, "FAIL seed=%llu nodes=%d: %s\nreplay: %s\n",
                         static_cast<unsigned long long>(seed), nodes, r.failure.c_str(), g_replay);
            return 1;
        }
        if (trace) {
            std::fprintf(stdout,
                         "seed %llu ok: %llu events, %llu committed entries, %llu acked, "
                         "max term %d, heal->commit %lld ms\n",
                         static_cast<unsigned long long>(seed),
                         static_cast<unsigned long long>(r.events),
                         static_cast<unsigned long long>(r.commits),
                         static_cast<unsigned long long>(r.acked), r.max_term,
                         static_cast<long long>(r.heal_to_commit_ms));
        }
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stdout,
                 "raft_sim: %llu seeds x %d nodes passed in %.1fs: %llu events, %llu committed "
                 "entries, %llu acknowledged proposals, %llu compactions, %llu snapshots "
                 "installed, worst heal->leader %lld ms, heal->commit everywhere %lld ms\n",
                 static_cast<unsigned long long>(count), nodes, secs,
                 static_cast<unsigned long long>(events), static_cast<unsigned long long>(commits),
                 static_cast<unsigned long long>(acked),
                 static_cast<unsigned long long>(compactions),
                 static_cast<unsigned long long>(installed), static_cast<long long>(worst_leader),
                 static_cast<long long>(worst_heal));
    return 0;
}
