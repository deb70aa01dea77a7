#pragma once
// ConsumeQueueStore: the table of every ConsumeQueue (Java DefaultMessageStore's
// consumeQueueTable plus the loops over it): load/recover/truncate all queues, find or create a
// queue for dispatch, flush, retention, topic deletion.
//
// Owner: MessageStore. Threads: find()/queues() from any thread; find_or_create() and
// put_message_position_info() from the dispatch thread (and recovery); flush() from the flush
// thread; delete_* from the clean thread or an admin request. mu_ guards only the table (never
// held during file I/O); ConsumeQueue objects are shared_ptr so a reader keeps a deleted queue
// alive until it is done.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "store/consume_queue.h"
#include "store/reput.h"

namespace comet::store {

// Java TopicValidator: [%|a-zA-Z0-9_-]+, at most 255 bytes (also keeps paths safe).
bool is_valid_topic_name(std::string_view topic);

class ConsumeQueueStore {
public:
    // root_dir: <storePathRootDir>/consumequeue.
    ConsumeQueueStore(std::string root_dir, int64_t mapped_file_size,
                      AllocateMappedFileService* allocator = nullptr);

    // Maps every <topic>/<queueId> directory. Errors: a queue that fails to load.
    Status load();
    // ConsumeQueue::recover on every queue.
    Status recover();
    // Cuts every queue's units pointing at or beyond phy_offset.
    Status truncate_dirty(PhysicalOffset phy_offset);
    // Largest end (offset + size) of any queue's last unit; -1 when no queue has units.
    PhysicalOffset max_physic_offset() const;

    std::shared_ptr<ConsumeQueue> find(std::string_view topic, int32_t queue_id) const;
    // Creation is serialised (create_mu_): two threads asking for the same new queue get the
    // same object, and only one of them touches its directory.
    Result<std::shared_ptr<ConsumeQueue>> find_or_create(std::string_view topic,
                                                         int32_t queue_id);
    std::vector<std::shared_ptr<ConsumeQueue>> queues() const;
    // topic -> queueId -> max offset (the next queue offset CommitLog must assign).
    std::map<std::string, std::map<int32_t, int64_t>> max_offsets() const;

    // Builds the unit for one dispatched record (skips prepared/rollback transaction records,
    // as Java CommitLogDispatcherBuildConsumeQueue). Errors: invalid topic, file creation.
    Status put_message_position_info(const DispatchRequest& req);
    // The same for a dispatch pass: the unit is staged (ConsumeQueue::
    // stage_message_position_info) and becomes visible with commit_staged(). *cq is set to
    // the queue when the unit was staged (null when skipped: a transaction record, a unit
    // already built); it stays valid until end_pass(). Dispatch thread only.
    Status stage_message_position_info(const DispatchRequest& req, ConsumeQueue** cq);
    // Writes every queue's staged run (one pwrite() each). On error the runs not written are
    // dropped; the caller re-dispatches from where its last commit ended.
    Status commit_staged();
    // Ends the pass: forgets the staged queues (after commit_staged(), or after its error).
    void end_pass();

    // Flushes every queue. Returns true when anything became durable. Errors: kIoError.
    Result<bool> flush(int32_t least_pages);
    // Retention: drop segments below the CommitLog min and move min offsets.
    int delete_expired_files(PhysicalOffset min_phy_offset);
    void correct_min_offsets(PhysicalOffset min_phy_offset);
    // Removes every queue of `topic` (files and directory). Returns queues removed.
    int destroy_topic(std::string_view topic);
    // Java DefaultMessageStore#cleanExpiredConsumerQueue: removes every queue (except those of
    // SCHEDULE_TOPIC_XXXX) whose last unit ends below min_phy_offset, files included; a topic
    // left without queues leaves the table. `removed(topic, queue_id)` runs for each, before
    // its files go. Returns queues removed.
    int clean_expired(PhysicalOffset min_phy_offset,
                      const std::function<void(const std::string&, int32_t)>& removed);
    // Removes queues of topics not in `keep` (Java cleanUnusedTopic). Returns queues removed.
    int clean_unused_topics(const std::vector<std::string>& keep);

    const std::string& root_dir() const { return root_dir_; }

private:
    const std::string root_dir_;
    const int64_t mapped_file_size_;
    AllocateMappedFileService* const allocator_;
    // Queues with units staged in the current dispatch pass (dispatch thread only); also the
    // pass's lookup cache, so most units find their queue without taking mu_.
    std::vector<std::shared_ptr<ConsumeQueue>> staged_;
    Mutex create_mu_;  // serialises queue creation (held during its I/O; taken before mu_)
    mutable Mutex mu_;
    std::map<std::string, std::map<int32_t, std::shared_ptr<ConsumeQueue>>, std::less<>> table_
        GUARDED_BY(mu_);
};

}  // namespace comet::store
