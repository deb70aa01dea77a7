#pragma once
// GroupTransfer: the waiting room of SYNC_MASTER puts (Java GroupTransferService +
// GroupCommitRequest). A put whose QuorumDecision is kWaitForSlaves registers (next_offset,
// need_ack_nums, deadline, completion); it completes with PUT_OK once need_ack_nums replicas,
// the master counted as one, hold next_offset — i.e. the (need_ack_nums - 1)-th highest slave
// ack offset reaches it — or with FLUSH_SLAVE_TIMEOUT at the deadline. No thread is held per
// waiting put: the HA driver calls on_acks() when a slave acks and expire() periodically.
// Thread-safety: every method from any thread; completions run on the calling thread, after
// the lock is released, never under it. Invariant: each completion runs exactly once (or is
// run with kServiceNotAvailable by shutdown()).

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "store/put_message_status.h"

namespace comet::ha {

class GroupTransfer {
public:
    using Completion = std::function<void(store::PutMessageStatus)>;

    explicit GroupTransfer(Clock& clock) : clock_(clock) {}
    ~GroupTransfer();  // completes anything left with kServiceNotAvailable

    // Requires need_ack_nums >= 2 (1 needs no wait; see QuorumPolicy). next_offset: end of the
    // put's last record. Completes at once when the last acks seen already cover it.
    void put_request(int64_t next_offset, int32_t need_ack_nums, Duration timeout,
                     Completion done);
    // Latest ack offset of every connected slave (one entry each). Completes what is covered.
    void on_acks(std::span<const int64_t> slave_ack_offsets);
    // Fails every request whose deadline has passed with FLUSH_SLAVE_TIMEOUT.
    void expire();
    // Fails every waiting request with SERVICE_NOT_AVAILABLE (store shutting down), and every
    // later one at once.
    void shutdown();

    size_t pending() const;
    // Earliest deadline among waiting requests (TimePoint::max() when none): drivers sleep to it.
    TimePoint next_deadline() const;

private:
    struct Request {
        int64_t next_offset;
        int32_t need_ack_nums;
        TimePoint deadline;
        Completion done;
    };
    // Whether acks (every slave's latest, highest first) cover r.
    static bool covered(const Request& r, std::span<const int64_t> highest_acks);
    // Moves the completions of the waiting puts that satisfy `pred` to *taken, in order, and
    // drops them from waiting_ in one pass.
    template <typename Pred>
    void take_if(std::vector<Completion>* taken, Pred pred) REQUIRES(mu_);

    Clock& clock_;
    mutable Mutex mu_;
    std::vector<Request> waiting_ GUARDED_BY(mu_);
    // The latest ack offset of every connected slave, highest first.
    std::vector<int64_t> highest_acks_ GUARDED_BY(mu_);
    bool stopped_ GUARDED_BY(mu_) = false;
};

}  // namespace comet::ha
