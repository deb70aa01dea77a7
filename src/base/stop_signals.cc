#include "base/stop_signals.h"

#include <pthread.h>

namespace comet {

StopSignals::StopSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    signal(SIGPIPE, SIG_IGN);
}

int StopSignals::wait() {
    int sig = 0;
    sigwait(&set_, &sig);
    return sig;
}

}  // namespace comet
