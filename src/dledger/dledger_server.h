#pragma once
// DLedgerServer: the driver of one Raft peer of a DLedger broker group (docs/dledger.md). It owns
// the RaftNode, carries its effects out (messages over Comet's remoting transport on the peer's
// DLedger port, fsync through the store's flush, commit -> dispatch limit), and is the send
// path's gate: only a leader whose log is committed and dispatched up to its end accepts puts.
//
// Threads: the driver runs on the one I/O thread of the peer's DLedger transport
// ("DLedgerServer_1", which the outbound client shares): inbound messages are decoded there,
// the node steps in rounds posted to that loop (ticks by a timer), and its outbound messages
// are queued there, so a Raft round hands nothing between threads (decision 029). The send
// path (broker I/O threads) calls begin_put/end_put/wait_committed/notify_appended, which post
// a round; "DLedgerFlush" syncs. Waiter callbacks run on the driver (commit, step-down,
// timeout) or the caller's thread (already committed). Locks: mu_ (inbox, wake flag) and
// waiters_mu_ are leaves, never held across a node, store or transport call or a callback.
//
// Send path contract: begin_put() true -> the caller appends to the store, then end_put(), then
// (for a stored record) wait_committed(end). A leader that loses leadership stops accepting at
// once (begin_put false), waits for the puts in progress, cuts the CommitLog bytes it never
// proposed and fails their waiters (kServiceNotAvailable: not stored); waiters of proposed but
// uncommitted entries get kFlushSlaveTimeout (the outcome is unknown: a new leader may commit
// them).

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/inline_function.h"
#include "base/mutex.h"
#include "base/rng.h"
#include "dledger/commit_log_storage.h"
#include "dledger/dledger_config.h"
#include "dledger/entry_log.h"
#include "dledger/inline_sync_policy.h"
#include "net/peer_backoff.h"
#include "net/remoting_client.h"
#include "net/remoting_server.h"
#include "raft/raft_node.h"
#include "store/message_store.h"
#include "store/put_message_status.h"

namespace comet::dledger {

// Comet's request code for one Raft message between DLedger peers (one-way).
inline constexpr int32_t kRaftMessageCode = 60100;

// What recovery must keep and may dispatch, from the DLedger files alone (before the store
// opens). MessageStoreOptions hooks.
Result<store::PhysicalOffset> recovery_keep_end(EntryLog& log, store::PhysicalOffset cl_end);
store::PhysicalOffset committed_end_at_open(const EntryLog& log);

class DLedgerServer {
public:
    struct RoleInfo {
        raft::Role role = raft::Role::kFollower;
        raft::Term term;
        std::string leader_id;  // "" when unknown
        bool writable = false;  // leader, caught up: registered as master
        // Why this peer stopped ("" while its storage works): a failed log read, write or
        // sync. A stopped peer is a follower that neither acknowledges nor votes.
        std::string storage_error;
    };
    using RoleListener = std::function<void(const RoleInfo&)>;
    // A commit waiter's completion, held inline (no allocation per put up to its capacity).
    using CommitDone = InlineFunction<void(store::PutMessageStatus), 640>;

    DLedgerServer(DLedgerConfig config, EntryLog& log, store::MessageStore& store,
                  Clock& clock = SystemClock::instance());
    ~DLedgerServer();
    DLedgerServer(const DLedgerServer&) = delete;
    DLedgerServer& operator=(const DLedgerServer&) = delete;

    // Binds the DLedger port, opens the node and starts the driver. Errors: bind, bad config.
    Status start();
    // Stops the driver and transport; pending waiters get kServiceNotAvailable. Idempotent.
    void shutdown();

    // Listener runs on the driver thread at every role/term/writability change; must not block.
    void set_role_listener(RoleListener listener);
    // Called once on the driver thread, config().storage_failure_exit_delay after the peer
    // stopped on a storage failure (it stepped down at once): the broker exits non-zero there
    // so that a supervisor restarts it and recovery rebuilds the log from disk. Must not block.
    using StorageFailureHandler = std::function<void(const Status&)>;
    void set_storage_failure_handler(StorageFailureHandler handler);
    // Tests only: the log storage fails every later call with kIoError.
    void inject_storage_error_for_test() { storage_.inject_io_error_for_test(); }

    bool begin_put();
    void end_put();
    void notify_appended();
    void wait_committed(int64_t end_offset, CommitDone done);

    // Leader: hands leadership to `peer_id` once it is caught up. Errors: unknown peer, not
    // leader.
    Status transfer_leadership(const std::string& peer_id);

    int64_t committed_offset() const { return committed_end_.load(std::memory_order_acquire); }
    // MessageStoreOptions::retention_floor (decision 040): what this peer committed and
    // dispatched, and on the leader also the lowest CommitLog end any follower is known to hold
    // (0 before every follower answered), followers already left behind by retention excepted.
    // Any thread; moves once a tick.
    int64_t retention_floor() const { return retention_floor_.load(std::memory_order_relaxed); }
    bool writable() const { return writable_.load(); }
    RoleInfo role_info() const;
    const DLedgerConfig& config() const { return config_; }
    // GET_BROKER_RUNTIME_INFO keys (dledger*).
    std::map<std::string, std::string> runtime_info() const;

private:
    struct Waiter {
        int64_t end = 0;
        TimePoint deadline;
        CommitDone done;
    };
    struct PeerStatus {
        std::string id;
        int64_t match_index = 0;
        int64_t match_offset = 0;
    };

    // Posts one driver round to the loop unless one is already queued. Any thread.
    void schedule_round();
    // Driver thread: one round (inbox, tick when due, proposals, ready, role changes).
    void round();
    void arm_tick();
    void run_flusher();
    // Driver thread: CommitLog + entries durable now (a follower's round). False on an I/O error
    // or while inline syncs are off after a slow one (the flush thread takes the round then).
    bool sync_inline();
    void drain_ready();
    // Driver thread, every round: a storage failure (the node's, or the flush thread's) stops
    // this peer: not writable, the reason published, the handler called after the exit delay.
    void check_storage_failure(std::chrono::steady_clock::time_point now);
    // Driver thread, leader, decision 036: true when this persist request may wait (the
    // followers alone are a majority); it is then recorded in lazy_.
    bool defer_leader_sync(const raft::PersistRequest& p, std::chrono::steady_clock::time_point now);
    // Driver thread, every round: hands the deferred requests to the flush thread when a commit
    // may be waiting for the leader's vote, the oldest is 100 ms old, or this peer is no
    // longer leader.
    void release_lazy_syncs(std::chrono::steady_clock::time_point now);
    void request_flush(uint64_t seq);
    void propose_new_bytes();
    void on_role_change(raft::Role was);
    void step_down_writes();
    void maybe_become_writable();
    void publish_commit(raft::LogIndex commit);
    void fail_waiters_above(int64_t offset, store::PutMessageStatus status);
    // Moves the waiters ending above `offset` (all of them: INT64_MIN) into *out, in order.
    void take_waiters_above(int64_t offset, std::vector<Waiter>* out) REQUIRES(waiters_mu_);
    // Drops the answered waiters before waiters_head_ once they are all or half of the vector.
    void compact_waiters() REQUIRES(waiters_mu_);
    void expire_waiters();
    void on_message(std::string body);
    void send(const raft::Message& m);
    // Driver thread, after stepping: when a step truncated the CommitLog, closes the outbound
    // connections at once (their queued frames reference the cut bytes; decision 033).
    void drop_frames_after_truncation();
    void publish_status();

    const DLedgerConfig config_;
    EntryLog& log_;
    store::MessageStore& store_;
    Clock& clock_;
    CommitLogStorage storage_;
    Rng rng_;
    std::unique_ptr<raft::RaftNode> node_;  // driver thread only (after start)
    std::unique_ptr<net::RemotingServer> server_;
    std::unique_ptr<net::RemotingClient> client_;
    std::map<int32_t, net::PeerBackoff> links_;  // by node id; filled in start(), then only looked up

    std::atomic<bool> writable_{false};
    std::atomic<bool> closing_{false};  // shutdown() began: never become writable again
    std::atomic<int64_t> in_flight_puts_{0};
    std::atomic<int64_t> committed_end_{0};
    std::atomic<int64_t> retention_floor_{0};  // keep everything until the first publish
    std::atomic<bool> appended_{false};

    // The loop the driver runs on (the DLedger server's I/O loop 0), set in start().
    asio::io_context* loop_ = nullptr;
    std::unique_ptr<asio::steady_timer> tick_timer_;  // driver thread, after start()
    std::atomic<bool> round_posted_{false};
    // Driver thread only.
    std::chrono::steady_clock::time_point next_tick_;
    std::chrono::steady_clock::time_point next_hard_state_;
    raft::Role last_role_ = raft::Role::kFollower;
    raft::Term last_term_;
    raft::NodeId last_leader_;

    mutable Mutex mu_;
    std::vector<raft::Message> inbox_ GUARDED_BY(mu_);
    bool wake_ GUARDED_BY(mu_) = false;
    bool stop_ GUARDED_BY(mu_) = false;
    RoleListener listener_ GUARDED_BY(mu_);
    StorageFailureHandler failure_handler_ GUARDED_BY(mu_);
    std::string transfer_to_ GUARDED_BY(mu_);
    RoleInfo role_info_ GUARDED_BY(mu_);
    std::vector<PeerStatus> peers_status_ GUARDED_BY(mu_);
    int64_t last_index_pub_ GUARDED_BY(mu_) = 0;
    int64_t commit_index_pub_ GUARDED_BY(mu_) = 0;
    int64_t elections_won_ GUARDED_BY(mu_) = 0;
    int64_t truncated_bytes_ GUARDED_BY(mu_) = 0;      // step-down: never-proposed bytes
    int64_t followers_behind_log_ GUARDED_BY(mu_) = 0;  // leader: raft followers_behind_log()
    std::string storage_error_ GUARDED_BY(mu_);         // "" while the storage works

    Mutex waiters_mu_;
    // Waiting puts in end-offset order, live from waiters_head_ on: they arrive nearly in order
    // (a put on another I/O thread may register a little late and is moved back into place);
    // the vector keeps its capacity, so registering a waiter allocates nothing once grown.
    std::vector<Waiter> waiters_ GUARDED_BY(waiters_mu_);
    size_t waiters_head_ GUARDED_BY(waiters_mu_) = 0;
    bool waiters_closed_ GUARDED_BY(waiters_mu_) = false;
    std::vector<Waiter> committed_batch_;  // driver thread: publish_commit's (capacity kept)

    uint64_t persisted_reported_ = 0;   // driver thread
    // Driver thread: when the storage-failure handler is due (set at the failure), and whether
    // it ran.
    std::chrono::steady_clock::time_point failure_handler_at_;
    bool failure_handled_ = false;
    std::atomic<bool> storage_failed_{false};
    // Driver thread, decision 036: the leader's persist requests not yet handed to the flush
    // thread. lazy_ holds those the followers have not committed yet (oldest first, capacity
    // kept); lazy_seq_ is the highest deferred seq, lazy_oldest_ when the oldest of them came.
    struct DeferredSync {
        uint64_t seq;
        raft::LogIndex last;
        std::chrono::steady_clock::time_point since;
    };
    std::vector<DeferredSync> lazy_;
    uint64_t lazy_seq_ = 0;
    std::chrono::steady_clock::time_point lazy_oldest_;
    // How long the followers take to commit a deferred request (moving average): the leader's
    // own sync is started once a request waited twice that.
    std::chrono::nanoseconds follower_commit_avg_{std::chrono::milliseconds(2)};
    // Deferred requests the followers committed alone, and those handed to the flush thread
    // because a commit may have waited for the leader (runtime_info).
    std::atomic<int64_t> lazy_committed_by_followers_{0};
    std::atomic<int64_t> lazy_released_for_commit_{0};
    // Leader: puts answered by a commit, and the sum of their waits (registration right after
    // the append to the commit that answered them), for GET_BROKER_RUNTIME_INFO.
    std::atomic<int64_t> commit_waits_{0};
    std::atomic<int64_t> commit_wait_us_{0};
    int64_t truncated_seen_ = 0;        // driver thread: storage_.truncated_bytes() last seen
    // Driver thread: whether a follower's round syncs inline or on the flush thread.
    InlineSyncPolicy inline_sync_;
    // Group commit off the driver thread: the driver posts the highest persist seq, the flush
    // thread ("DLedgerFlush") makes CommitLog + entries durable and publishes flushed_seq_.
    Mutex flush_mu_;
    std::condition_variable_any flush_cv_;
    uint64_t flush_want_ GUARDED_BY(flush_mu_) = 0;
    bool flush_stop_ GUARDED_BY(flush_mu_) = false;
    // A failed sync on the flush thread: never retried (the pages it failed to write may be
    // gone, a later sync could succeed without them); the driver stops the node.
    Status flush_error_ GUARDED_BY(flush_mu_);
    std::atomic<bool> flush_failed_{false};
    std::atomic<uint64_t> flushed_seq_{0};
    std::thread flusher_;
    bool started_ = false;
    bool stopped_ = false;
};

}  // namespace comet::dledger
