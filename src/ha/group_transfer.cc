#include "ha/group_transfer.h"

#include "base/check.h"
#include "raft/ack_quorum.h"

namespace comet::ha {

using store::PutMessageStatus;

GroupTransfer::~GroupTransfer() { shutdown(); }

bool GroupTransfer::covered(const Request& r, std::span<const int64_t> acks) {
    // Master counts as one replica: need_ack_nums - 1 slaves must have acked next_offset.
    size_t k = static_cast<size_t>(r.need_ack_nums - 1);
    if (k == 0) return true;
    if (k > acks.size()) return false;
    return raft::kth_highest(acks, k) >= r.next_offset;
}

void GroupTransfer::put_request(int64_t next_offset, int32_t need_ack_nums, Duration timeout,
                                Completion done) {
    COMET_CHECK(need_ack_nums >= 2, "GroupTransfer::put_request with need_ack_nums {}",
                need_ack_nums);
    Request r{next_offset, need_ack_nums, clock_.now() + timeout, std::move(done)};
    bool stopped = false;
    {
        MutexLock l(mu_);
        stopped = stopped_;
        if (!stopped && !covered(r, last_acks_)) {
            waiting_.push_back(std::move(r));
            return;
        }
    }
    // After shutdown nobody would expire it: a put that reaches a stopped service (the master
    // lost its role meanwhile) fails at once.
    r.done(stopped ? PutMessageStatus::kServiceNotAvailable : PutMessageStatus::kPutOk);
}

void GroupTransfer::on_acks(std::span<const int64_t> slave_ack_offsets) {
    std::vector<Completion> ready;
    {
        MutexLock l(mu_);
        last_acks_.assign(slave_ack_offsets.begin(), slave_ack_offsets.end());
        auto it = waiting_.begin();
        while (it != waiting_.end()) {
            if (covered(*it, last_acks_)) {
                ready.push_back(std::move(it->done));
                it = waiting_.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (auto& d : ready) d(PutMessageStatus::kPutOk);
}

void GroupTransfer::expire() {
    std::vector<Completion> late;
    TimePoint now = clock_.now();
    {
        MutexLock l(mu_);
        auto it = waiting_.begin();
        while (it != waiting_.end()) {
            if (now >= it->deadline) {
                late.push_back(std::move(it->done));
                it = waiting_.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (auto& d : late) d(PutMessageStatus::kFlushSlaveTimeout);
}

void GroupTransfer::shutdown() {
    std::vector<Request> left;
    {
        MutexLock l(mu_);
        stopped_ = true;
        left.swap(waiting_);
    }
    for (auto& r : left) r.done(PutMessageStatus::kServiceNotAvailable);
}

size_t GroupTransfer::pending() const {
    MutexLock l(mu_);
    return waiting_.size();
}

TimePoint GroupTransfer::next_deadline() const {
    MutexLock l(mu_);
    TimePoint t = TimePoint::max();
    for (const auto& r : waiting_) t = std::min(t, r.deadline);
    return t;
}

}  // namespace comet::ha
