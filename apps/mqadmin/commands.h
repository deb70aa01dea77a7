#pragma once
// mqadmin sub-commands: RocketMQ's names, flags and table layouts, run over client::AdminClient,
// the producer and the pull consumer. Each command writes its result to `out` and returns a
// Status; the caller prints a failed Status to stderr and exits non-zero.
// Threads: called from main only; the client objects a command creates are shut down before it
// returns.

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "mqadmin/options.h"

namespace comet::mqadmin {

struct Context {
    const ParsedOptions& opts;
    std::string namesrv_addr;  // -n, else $NAMESRV_ADDR
    std::FILE* out;
};

struct Command {
    std::string name;
    std::string summary;
    std::vector<OptionSpec> options;
    std::function<Status(Context&)> run;
};

// The controller-mode commands (controller_commands.cc).
std::vector<Command> controller_commands();
// explainDurability (durability_commands.cc).
std::vector<Command> durability_commands();
// RocketMQ 4.9.8's broker-permission and client/offset commands (client_commands.cc):
// wipeWritePerm, addWritePerm, consumerConnection, producerConnection, brokerConsumeStats,
// resetOffsetByTime, cloneGroupOffset, statsAll.
std::vector<Command> client_admin_commands();
// RocketMQ 4.9.8's operation commands (ops_commands.cc): deleteSubGroup, updateTopicPerm,
// topicClusterList, queryMsgByUniqueKey, printMsg, name server and KV config commands.
std::vector<Command> ops_commands();
// RocketMQ 4.9.8's queue and consumer inspection commands (queue_commands.cc): queryCq,
// cleanExpiredCQ, consumerStatus, queryMsgTraceById.
std::vector<Command> queue_commands();
// RocketMQ 5's broker container commands (container_commands.cc): addBroker, removeBroker.
std::vector<Command> container_commands();
// RocketMQ 4.9.8's startMonitoring (monitor_command.cc).
std::vector<Command> monitor_commands();

// Moves the commands of `more` to the end of *to, in order (command groups are built one
// list each and joined).
void append_commands(std::vector<Command>* to, std::vector<Command> more);

// Every command, in the order `mqadmin help` lists them.
const std::vector<Command>& commands();
const Command* find_command(const std::string& name);

// The whole tool: argv as main gets it. Exit code 0 ok, 1 the command failed, 2 bad usage.
int run_mqadmin(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace comet::mqadmin
