#pragma once
// MessageStorePort: what the broker needs from the message store, in one interface. The
// production implementation forwards to store::MessageStore (store_adapter.h); unit tests use an
// in-memory fake. Keeping processors on this seam lets every RocketMQ status path be tested
// without disks or sockets.
// Threads: every method may be called from any thread; put completions may run on store threads
// and must not block.

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/message_ext.h"
#include "store/get_message_result.h"
#include "store/put_message_status.h"

namespace comet::broker {

class MessageStorePort {
public:
    using PutCallback = store::PutCompletion;
    // A unit was appended to a ConsumeQueue (dispatch thread): topic, queue id, new max offset
    // (next offset to write), tagsCode of the unit.
    using ArrivalListener = std::function<void(const std::string&, int32_t, int64_t, int64_t)>;

    virtual ~MessageStorePort() = default;

    // Appends one message (topic/queue/properties/flags/hosts/born time filled in by the
    // caller) whose body is `body` (msg.body is not read). `done` runs once with the final
    // result (after flush/replication waits). msg and body are read only before this returns:
    // the caller may reuse them at once (the send path's per-thread message, its body still in
    // the request's frame: issue 16), and `done` must not refer to them.
    virtual void put_message(const protocol::MessageExt& msg, std::string_view body,
                             PutCallback done) = 0;
    // Same, with the body msg.body.
    void put_message(const protocol::MessageExt& msg, PutCallback done) {
        put_message(msg, msg.body, std::move(done));
    }
    // Appends a batch: `msg.body` holds the §5.7 batch encoding; topic/queue/hosts as above.
    virtual void put_messages(protocol::MessageExt batch, PutCallback done) = 0;
    // Whether a put that ended with `status` may be treated as done by a write the broker makes
    // on a client's behalf (a send-back, a delivery, a transaction commit): RocketMQ accepts the
    // stored-but-degraded statuses in master-slave mode; a DLedger group only PUT_OK, since an
    // uncommitted entry may be cut at the next leader change (ReplicatedStorePort).
    virtual bool put_acknowledged(store::PutMessageStatus status) const {
        return store::is_stored(status);
    }

    // Up to max_msg_nums messages from topic/queue at `offset` that pass `filter` (nullptr: all).
    virtual store::GetMessageResult get_message(const std::string& group, const std::string& topic,
                                                int32_t queue_id, int64_t offset,
                                                int32_t max_msg_nums,
                                                const store::MessageFilter* filter) = 0;
    virtual int64_t max_offset_in_queue(const std::string& topic, int32_t queue_id) = 0;
    virtual int64_t min_offset_in_queue(const std::string& topic, int32_t queue_id) = 0;
    // LOWER (upper=false): first offset stored at or after ts; UPPER: last at or before.
    virtual int64_t offset_in_queue_by_time(const std::string& topic, int32_t queue_id,
                                            int64_t timestamp, bool upper) = 0;
    // RocketMQ 4.9.8's search (requests without boundaryType): the offset of the message whose
    // store time is nearest ts (store::BoundaryType::kNearest). Fakes may answer LOWER.
    virtual int64_t offset_in_queue_by_time_nearest(const std::string& topic, int32_t queue_id,
                                                    int64_t timestamp) {
        return offset_in_queue_by_time(topic, queue_id, timestamp, false);
    }
    // Store time of the first message of the queue; -1 if none.
    virtual int64_t earliest_message_time(const std::string& topic, int32_t queue_id) = 0;
    // Store time of the message at queue offset; -1 if none.
    virtual int64_t message_store_time(const std::string& topic, int32_t queue_id,
                                       int64_t offset) = 0;
    // The stored record at a CommitLog physical offset (raw bytes, §5.1); nullopt when absent.
    virtual std::optional<std::string> raw_message_at(int64_t physical_offset) = 0;
    // Decoded message at a physical offset (CONSUMER_SEND_MSG_BACK, schedule delivery).
    virtual std::optional<protocol::MessageExt> look_message_by_offset(int64_t physical_offset) = 0;
    // ConsumeQueue unit of topic/queue at offset: (physical offset, size, tagsCode).
    struct CqUnit {
        int64_t physical_offset = 0;
        int32_t size = 0;
        int64_t tags_code = 0;
    };
    virtual std::optional<CqUnit> consume_queue_unit(const std::string& topic, int32_t queue_id,
                                                     int64_t offset) = 0;
    // Min and max offset of an existing ConsumeQueue; nullopt when the store has no such queue
    // (QUERY_CONSUME_QUEUE). A store without ConsumeQueues has none.
    struct CqBounds {
        int64_t min_offset = 0;
        int64_t max_offset = 0;
    };
    virtual std::optional<CqBounds> consume_queue_bounds(const std::string& topic,
                                                         int32_t queue_id) {
        (void)topic;
        (void)queue_id;
        return std::nullopt;
    }
    // Java ConsumeQueue#getIndexBuffer read as QUERY_CONSUME_QUEUE does: up to max_count units
    // from `index` to the end of the segment holding it; nullopt when index is below the min or
    // past the written units (or the queue is absent). The default reads unit by unit up to
    // the max offset (fakes).
    virtual std::optional<std::vector<CqUnit>> consume_queue_index_buffer(const std::string& topic,
                                                                          int32_t queue_id,
                                                                          int64_t index,
                                                                          int32_t max_count) {
        const auto b = consume_queue_bounds(topic, queue_id);
        if (!b || index < b->min_offset || index >= b->max_offset) {
            return std::nullopt;
        }
        std::vector<CqUnit> out;
        for (int64_t i = index; i < b->max_offset && i - index < max_count; ++i) {
            auto u = consume_queue_unit(topic, queue_id, i);
            if (!u) {
                break;
            }
            out.push_back(*u);
        }
        return out;
    }
    virtual store::QueryMessageResult query_message(const std::string& topic,
                                                    const std::string& key, int32_t max_num,
                                                    int64_t begin_ts, int64_t end_ts) = 0;
    // Removes the topic's ConsumeQueues (DELETE_TOPIC_IN_BROKER).
    virtual void delete_topic(const std::string& topic) = 0;
    // CLEAN_UNUSED_TOPIC: removes the ConsumeQueues of every topic not in `keep`; returns the
    // queues removed. A store without ConsumeQueues has nothing to clean.
    virtual int clean_unused_topics(const std::set<std::string>& keep) {
        (void)keep;
        return 0;
    }
    // CLEAN_EXPIRED_CONSUMEQUEUE: removes ConsumeQueues whose last unit ends below the
    // CommitLog's min offset; returns the queues removed.
    virtual int clean_expired_consume_queues() { return 0; }
    virtual void set_arrival_listener(ArrivalListener listener) = 0;
    // Store address written into records (STOREHOST) and msg ids.
    virtual protocol::HostAddress store_host() const = 0;
    // Key/value figures for GET_BROKER_RUNTIME_INFO (commitLogMaxOffset, ...).
    virtual std::map<std::string, std::string> runtime_info() = 0;
    // Whether a record at this physical offset is still in memory (QUERY_CONSUMER_OFFSET rule).
    virtual bool is_in_memory(int64_t physical_offset) = 0;
};

}  // namespace comet::broker
