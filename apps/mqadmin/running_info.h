#pragma once
// Consumer running info as consumerStatus analyses it (queue_commands.cc), offered to other
// commands: startMonitoring (monitor_command.cc) reports it the way RocketMQ 4.9.8's
// DefaultMonitorListener#reportConsumerRunningInfo does.
// Threads: the caller's; the admin client must be started.

#include <cstdint>
#include <string>
#include <vector>

#include "client/admin_client.h"

namespace comet::mqadmin {

// One client's GET_CONSUMER_RUNNING_INFO answer, summarised.
struct ClientRunningSummary {
    std::string client_id;
    std::string consumer_group;              // its "consumerGroup" property ("" when absent)
    std::string consume_type;                // PROP_CONSUME_TYPE, e.g. CONSUME_PASSIVELY
    bool consume_orderly = false;            // PROP_CONSUMEORDERLY
    std::vector<std::string> subscriptions;  // "topic@subString", Java TreeSet order
    size_t mq_count = 0;                     // queues in its mqTable
    int64_t cached_msg_count = 0;            // sum of cachedMsgCount over the mqTable
    std::string process_queue_report;  // Java ConsumerRunningInfo#analyzeProcessQueue; "" = fine
};

// The running info of a group's clients and Java's analyses of it.
struct GroupRunningReport {
    bool same_subscription = true;              // Java ConsumerRunningInfo#analyzeSubscription
    std::vector<ClientRunningSummary> clients;  // by client id; empty when none answered
};

// GET_CONSUMER_RUNNING_INFO (no jstack) of each of `client_ids` through the broker of the group's
// retry topic. A client that does not answer is left out, as Java's MonitorService does.
// `now_ms` (wall clock) is the time the analyses measure against.
GroupRunningReport analyze_group_running_info(client::AdminClient& admin, const std::string& group,
                                              const std::vector<std::string>& client_ids,
                                              int64_t now_ms);

}  // namespace comet::mqadmin
