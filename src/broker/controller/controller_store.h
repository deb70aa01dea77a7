#pragma once
// ControllerStore: the replica state of controller mode that the store, the HA threads and the
// send path read at once, and the ha::EpochPort over store::MessageStore + store::EpochFile.
//  - Role and ids: master or slave, this broker's controller id, the SyncStateSet in effect.
//  - Confirm offset (rocketmq-wire.md §7.6): the dispatch limit of the store in controller
//    mode, so consumers read only what every in-set replica holds. Master: computed from the
//    slaves' progress (sync_state_policy); slave: the master's, capped at the local end. The
//    checkpoint keeps it (confirmPhyOffset) for the next start.
//  - Epoch file (epochFileCheckpoint): appended on every mastership, cut with the log.
//  - become_master_store(): the to-master store steps (cut the invalid tail, epoch entry,
//    dispatch catch-up). truncate_to(): the slave's cut to the consistent point.
// Threads: any. mu_ is a leaf (never held across a store call that waits on another thread
// holding it: the dispatch thread reads only atomics and progress_ under mu_).

#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "broker/controller/sync_state_policy.h"
#include "ha/epoch_port.h"
#include "store/epoch_file.h"
#include "store/message_store.h"

namespace comet::broker {

class ControllerStore final : public ha::EpochPort {
public:
    using ProgressFn = std::function<std::vector<ReplicaProgress>()>;

    ControllerStore(store::MessageStore& store, std::string epoch_file_path, bool all_ack);

    // The epoch of the bytes a store held before it first ran in controller mode.
    static constexpr int64_t kPreControllerEpoch = 0;

    // Loads the epoch file. A store with data but no epoch file (written in master-slave mode)
    // gets epoch kPreControllerEpoch from offset 0 and its whole log confirmed (docs/
    // controller.md, "From master-slave mode"). Errors: both the file and its .bak unreadable
    // (names them), I/O.
    Status load();
    // Whether load() will take the store at `epoch_file_path` for one from before controller
    // mode: its epoch file holds no entry (or does not exist). Read before the store opens,
    // to pick the recovery dispatch limit. Errors: as load().
    static Result<bool> before_controller_mode(const std::string& epoch_file_path);

    // --- ha::EpochPort ---
    std::vector<store::EpochEntry> epochs() const override;
    int64_t confirm_offset() const override;
    Status truncate_to(int64_t end) override;
    Status begin_epoch(int64_t epoch, int64_t start_offset) override;
    void set_confirm_offset(int64_t offset) override;

    // The store's dispatch limit: the confirm offset (master and slave alike).
    int64_t dispatch_limit() const { return confirm_offset(); }
    // Every change that can raise dispatch_limit() calls this (the store's dispatcher waits
    // for wake-ups, MessageStoreOptions::dispatch_idle_wait).
    void wake_dispatch() { store_.wake_dispatch(); }
    // The confirm offset may have risen (a slave's ack): dispatch paces unless a consumer
    // waits (MessageStore::note_dispatchable).
    void note_dispatchable() { store_.note_dispatchable(); }

    // To master at `epoch`: cuts bytes after the last whole record (a torn tail from
    // replication), drops epoch entries from that point, starts `epoch` there unless it is
    // already the last one, then waits (bounded by `dispatch_wait`) until dispatch reached the
    // end and sets the queues' next offsets. Puts must be stopped. Errors: I/O, an epoch file
    // with an epoch above `epoch` (this broker saw a newer master: refuse), dispatch not
    // caught up in time.
    Status become_master_store(int32_t epoch, int64_t my_id, Duration dispatch_wait);
    // To slave: the confirm offset now comes from the master.
    void become_slave_store(int64_t my_id);

    // The SyncStateSet in effect (master): acks and the confirm offset count its members.
    void set_sync_state_set(std::set<int64_t> set);
    std::set<int64_t> sync_state_set() const;
    // Its size, without the lock or a copy (the put path asks for every send).
    size_t sync_state_set_size() const {
        return sync_state_set_size_.load(std::memory_order_acquire);
    }
    bool in_sync_state_set(int64_t broker_id) const;
    // Where the slaves' progress comes from (the master's HaService).
    void set_progress_source(ProgressFn fn);
    // Connected slaves plus the remembered last ack of in-set members that are not connected.
    std::vector<ReplicaProgress> progress() const;

    bool is_master() const { return master_.load(); }
    int64_t last_epoch() const;
    // Start offset of the current (last) epoch; 0 when none.
    int64_t current_epoch_start() const;
    int64_t max_offset() const { return store_.get_max_phy_offset().value(); }
    // CommitLog bytes cut by truncate_to() since start (runtime info controllerTruncatedBytes).
    int64_t truncated_bytes() const { return truncated_bytes_.load(std::memory_order_relaxed); }

private:
    store::MessageStore& store_;
    const bool all_ack_;
    std::atomic<bool> master_{false};
    std::atomic<int64_t> my_id_{0};
    std::atomic<int64_t> slave_confirm_{0};
    std::atomic<size_t> sync_state_set_size_{0};  // sync_state_set_.size(), written under mu_
    std::atomic<int64_t> truncated_bytes_{0};

    mutable Mutex mu_;
    store::EpochFile epoch_file_ GUARDED_BY(mu_);
    std::set<int64_t> sync_state_set_ GUARDED_BY(mu_);
    ProgressFn progress_fn_ GUARDED_BY(mu_);
    mutable std::map<int64_t, int64_t> remembered_acks_ GUARDED_BY(mu_);
};

}  // namespace comet::broker
