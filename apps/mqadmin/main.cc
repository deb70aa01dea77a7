// mqadmin: RocketMQ-style admin tool for Comet (and RocketMQ) clusters. Usage:
//   mqadmin <command> [-n namesrvAddr] [options]      mqadmin help [command]
// The name server address comes from -n, else $NAMESRV_ADDR.

#include <csignal>
#include <cstdio>

#include "mqadmin/commands.h"

int main(int argc, char** argv) {
    std::signal(SIGPIPE, SIG_IGN);
    return comet::mqadmin::run_mqadmin(argc, argv, stdout, stderr);
}
