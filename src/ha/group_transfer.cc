#include "ha/group_transfer.h"

#include <algorithm>
#include <functional>

#include "base/check.h"

namespace comet::ha {

using store::PutMessageStatus;

GroupTransfer::~GroupTransfer() { shutdown(); }

bool GroupTransfer::covered(const Request& r, std::span<const int64_t> highest_acks) {
    // Master counts as one replica: need_ack_nums - 1 slaves must have acked next_offset.
    const auto k = static_cast<size_t>(r.need_ack_nums - 1);
    return k == 0 || (k <= highest_acks.size() && highest_acks[k - 1] >= r.next_offset);
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
        if (!stopped && !covered(r, highest_acks_)) {
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
        // Sorted once per report (a handful of slaves): the k-th highest ack is then an index.
        highest_acks_.assign(slave_ack_offsets.begin(), slave_ack_offsets.end());
        std::sort(highest_acks_.begin(), highest_acks_.end(), std::greater<>());
        ready.reserve(waiting_.size());
        const std::span<const int64_t> acks = highest_acks_;
        take_if(&ready, [acks](const Request& r) { return covered(r, acks); });
    }
    for (auto& d : ready) d(PutMessageStatus::kPutOk);
}

void GroupTransfer::expire() {
    std::vector<Completion> late;
    TimePoint now = clock_.now();
    {
        MutexLock l(mu_);
        take_if(&late, [&](const Request& r) { return now >= r.deadline; });
    }
    for (auto& d : late) d(PutMessageStatus::kFlushSlaveTimeout);
}

template <typename Pred>
void GroupTransfer::take_if(std::vector<Completion>* taken, Pred pred) {
    // One pass, order kept: a put per erase would move every later one (hundreds in flight,
    // a report completing a few each time).
    size_t kept = 0;
    for (size_t i = 0; i < waiting_.size(); ++i) {
        if (pred(waiting_[i])) {
            taken->push_back(std::move(waiting_[i].done));
        } else {
            if (kept != i) {
                waiting_[kept] = std::move(waiting_[i]);
            }
            ++kept;
        }
    }
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(kept), waiting_.end());
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
