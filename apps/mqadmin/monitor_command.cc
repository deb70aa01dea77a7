// mqadmin startMonitoring: RocketMQ 4.9.8's MonitorService with its DefaultMonitorListener.
// Every round lists the name server's topics and, for each %RETRY%<group> topic whose group
// has clients online, reports the group's undone messages per topic (GET_CONSUME_STATS plus
// the store time of each queue's last message) and its clients' running info
// (GET_CONSUMER_RUNNING_INFO through the broker), in the listener's "[MONITOR] ..." lines.
// Differences from Java (docs/mqadmin.md): lines go to stdout instead of the tools log; the
// bounded options -r/--rounds, -i/--interval and -d/--delay are Comet additions; each client
// gets one summary line; OFFSET_MOVED_EVENT is not subscribed (Comet's broker never publishes
// it), so no reportDeleteMsgsEvent lines.
// Threads: main only. SIGINT/SIGTERM set a flag that ends the command after the current round.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "client/admin_client.h"
#include "mqadmin/admin_util.h"
#include "mqadmin/commands.h"
#include "mqadmin/running_info.h"
#include "protocol/admin_bodies.h"

namespace comet::mqadmin {
namespace {

using client::AdminClient;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kRetryPrefix = "%RETRY%";
// Java DefaultMonitorListener's LOG_PREFIX and LOG_NOTIFY.
constexpr std::string_view kPrefix = "[MONITOR] ";
constexpr std::string_view kNotify = "[MONITOR]  [NOTIFY] ";
// MQVersion.Version.V3_1_8_SNAPSHOT.ordinal(): older clients cannot answer running info.
constexpr int32_t kV318Snapshot = 62;

// Set by SIGINT/SIGTERM while the command runs (std::atomic<bool> is lock-free: signal safe).
std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }

// Installs the SIGINT/SIGTERM handlers for its lifetime; restores the previous ones.
class StopSignals {
public:
    StopSignals() {
        g_stop.store(false);
        struct sigaction sa {};
        sa.sa_handler = on_stop_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int_);
        sigaction(SIGTERM, &sa, &old_term_);
    }
    ~StopSignals() {
        sigaction(SIGINT, &old_int_, nullptr);
        sigaction(SIGTERM, &old_term_, nullptr);
    }
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

private:
    struct sigaction old_int_ {};
    struct sigaction old_term_ {};
};

// Sleeps until `t` in short slices; false when a stop signal came first.
bool wait_until(Clock::time_point t) {
    while (!g_stop.load()) {
        const auto now = Clock::now();
        if (now >= t) {
            return true;
        }
        std::this_thread::sleep_for(
            std::min<Clock::duration>(t - now, std::chrono::milliseconds(50)));
    }
    return false;
}

// Java UndoneMsgs: one consumer group's backlog on one topic.
struct UndoneMsgs {
    std::string consumer_group;
    std::string topic;
    int64_t total = 0;      // sum of the positive brokerOffset - consumerOffset
    int64_t single_mq = 0;  // the largest single-queue difference
    int64_t delay_ms = 0;   // max over queues: store time of the last message - lastTimestamp

    // Java UndoneMsgs#toString.
    std::string text() const {
        return fmt::format(
            "UndoneMsgs [consumerGroup={}, topic={}, undoneMsgsTotal={}, undoneMsgsSingleMQ={}, "
            "undoneMsgsDelayTimeMills={}]",
            consumer_group, topic, total, single_mq, delay_ms);
    }
};

// Java MonitorService#computeUndoneMsgs over the queues of one topic. The delay reads the
// queue's last message (at brokerOffset - 1, Java asks maxOffset first; the stats carry it).
UndoneMsgs compute_undone(
    AdminClient& admin, const std::string& group, const std::string& topic,
    const std::vector<std::pair<protocol::MessageQueue, protocol::OffsetWrapper>>& queues) {
    UndoneMsgs u{group, topic};
    for (const auto& [mq, w] : queues) {
        const int64_t diff = w.broker_offset - w.consumer_offset;
        u.single_mq = std::max(u.single_mq, diff);
        if (diff > 0) {
            u.total += diff;
        }
        if (w.last_timestamp > 0 && w.broker_offset > 0) {
            // Java ignores every pull failure here; so does this.
            if (auto last = admin.query_msg_by_offset(mq, w.broker_offset - 1); last.is_ok()) {
                u.delay_ms = std::max(u.delay_ms, last->store_timestamp - w.last_timestamp);
            }
        }
    }
    return u;
}

// Java MonitorService#reportUndoneMsgs and #reportConsumerRunningInfo for one group. A group
// without clients online (the connection list fails or is empty) is skipped, as in Java.
void report_group(AdminClient& admin, const std::string& group, std::FILE* out) {
    auto cc = admin.consumer_connection(group, std::string(kRetryPrefix) + group);
    if (!cc.is_ok() || cc->connection_set.empty()) {
        return;
    }
    if (auto cs = admin.consume_stats(group); cs.is_ok()) {
        std::map<std::string,
                 std::vector<std::pair<protocol::MessageQueue, protocol::OffsetWrapper>>>
            by_topic;
        for (const auto& [mq, w] : cs->offset_table) {
            by_topic[mq.topic].emplace_back(mq, w);
        }
        for (const auto& [topic, queues] : by_topic) {
            fmt::print(out, "{}reportUndoneMsgs: {}\n", kPrefix,
                       compute_undone(admin, group, topic, queues).text());
        }
    }
    std::vector<std::string> ids;
    for (const auto& c : cc->connection_set) {
        if (c.version >= kV318Snapshot) {
            ids.push_back(c.client_id);
        }
    }
    const GroupRunningReport report =
        analyze_group_running_info(admin, group, ids, SystemClock::instance().wall_millis());
    if (report.clients.empty()) {
        return;
    }
    const std::string& first_group = report.clients.front().consumer_group;
    if (!report.same_subscription) {
        fmt::print(out, "{}reportConsumerRunningInfo: ConsumerGroup: {}, Subscription different\n",
                   kNotify, first_group);
    }
    for (const auto& c : report.clients) {
        // Comet addition: one line per client that answered (Java logs only problems).
        fmt::print(out,
                   "{}reportConsumerRunningInfo: ConsumerGroup: {}, ClientId: {}, ConsumeType: {}, "
                   "ConsumeOrderly: {}, Subscriptions: [{}], MQs: {}, CachedMsgCount: {}\n",
                   kPrefix, group, c.client_id, c.consume_type, c.consume_orderly,
                   fmt::join(c.subscriptions, ", "), c.mq_count, c.cached_msg_count);
        if (!c.process_queue_report.empty()) {
            std::string text = fmt::format(
                "{}reportConsumerRunningInfo: ConsumerGroup: {}, "
                "ClientId: {}, {}",
                kNotify, first_group, c.client_id, c.process_queue_report);
            if (!text.ends_with('\n')) {
                text += '\n';
            }
            fmt::print(out, "{}", text);
        }
    }
}

// Java MonitorService#doMonitorWork. The groups come from the %RETRY% topics, in name order.
Status monitor_round(AdminClient& admin, std::FILE* out) {
    fmt::print(out, "{}=========================================beginRound\n", kPrefix);
    COMET_ASSIGN_OR_RETURN(auto topics, admin.topic_list());
    std::sort(topics.begin(), topics.end());
    for (const auto& topic : topics) {
        if (g_stop.load()) {
            break;
        }
        if (topic.starts_with(kRetryPrefix)) {
            report_group(admin, topic.substr(kRetryPrefix.size()), out);
        }
    }
    fmt::print(out, "{}=========================================endRound\n", kPrefix);
    return Status::ok();
}

Status cmd_start_monitoring(Context& ctx) {
    COMET_ASSIGN_OR_RETURN(const int64_t rounds, ctx.opts.get_int('r', 0));
    COMET_ASSIGN_OR_RETURN(const int64_t interval_ms, ctx.opts.get_int('i', 60 * 1000));
    COMET_ASSIGN_OR_RETURN(const int64_t delay_ms, ctx.opts.get_int('d', 20 * 1000));
    if (rounds < 0 || interval_ms < 1 || delay_ms < 0) {
        return Status::error(Errc::kInvalidArgument,
                             "need --rounds >= 0 (0: until stopped), --interval >= 1 ms and "
                             "--delay >= 0 ms");
    }
    COMET_ASSIGN_OR_RETURN(auto admin, start_admin(ctx));
    StopSignals signals;
    Status last = Status::ok();
    // Java scheduleAtFixedRate: round k starts at delay + k * interval (late rounds run at once).
    auto next = Clock::now() + std::chrono::milliseconds(delay_ms);
    for (int64_t k = 0; rounds == 0 || k < rounds; ++k) {
        if (!wait_until(next)) {
            break;
        }
        last = monitor_round(*admin, ctx.out);
        if (!last.is_ok()) {
            // Java logs "doMonitorWork Exception" and keeps its schedule.
            fmt::print(stderr, "doMonitorWork Exception: {}\n", last.to_string());
        }
        std::fflush(ctx.out);
        next += std::chrono::milliseconds(interval_ms);
    }
    admin->shutdown();
    return last;
}

}  // namespace

std::vector<Command> monitor_commands() {
    return {
        {"startMonitoring",
         "Start Monitoring",
         {opt('r', "rounds", false,
              "Comet: stop after this many rounds (default 0: until stopped)"),
          opt('i', "interval", false, "Comet: milliseconds between rounds (default 60000)"),
          opt('d', "delay", false, "Comet: milliseconds before the first round (default 20000)")},
         cmd_start_monitoring},
    };
}

}  // namespace comet::mqadmin
