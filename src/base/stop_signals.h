#pragma once
// StopSignals: how a server process waits to be stopped. The constructor blocks SIGINT and
// SIGTERM in the calling thread (every thread started afterwards inherits the mask, so the
// signals reach only wait()) and ignores SIGPIPE (a peer that closes its socket must not kill
// the process). Construct it in main() before starting any thread.

#include <signal.h>

namespace comet {

class StopSignals {
public:
    StopSignals();
    // Blocks until SIGINT or SIGTERM arrives; returns its number.
    int wait();

private:
    sigset_t set_;
};

}  // namespace comet
