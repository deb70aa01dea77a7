#pragma once
// ReplicatedStorePort: the message store as the broker's own writes on a client's behalf see
// it — delayed-message deliveries (ScheduleMessageService), transaction commits, rollbacks,
// op messages and renewed halves (TransactionalMessageService) and stored replies
// (ReplyMessageProcessor). A decorator over the real port: every put goes through
// ReplicationService::put, so it gets exactly what a producer's send gets — in DLedger mode the
// answer only once a majority of the group committed it (FLUSH_SLAVE_TIMEOUT otherwise), in
// controller mode the master lease and the SyncStateSet, on a slave the refusal; the message's
// WAIT property decides the wait where the mode honours it. Every other call is forwarded.
// Without it those writes would be acknowledged on the leader's local append, and a leader
// change cuts that uncommitted tail (the delivery or commit is then lost while its source was
// marked done).
// Owner: BrokerController (DLedger and controller modes), after the store and the replication
// service it refers to, which must outlive it. Threads: as MessageStorePort; completions run on
// the store's, the DLedger driver's or HA threads and must not block.

#include "broker/context/message_store_port.h"
#include "broker/replication/replication_service.h"

namespace comet::broker {

class ReplicatedStorePort final : public MessageStorePort {
public:
    ReplicatedStorePort(MessageStorePort& store, ReplicationService& replication)
        : store_(store), replication_(replication) {}

    using MessageStorePort::put_message;
    void put_message(const protocol::MessageExt& msg, std::string_view body,
                     PutCallback done) override;
    void put_messages(protocol::MessageExt batch, PutCallback done) override;
    // DLedger mode: only PUT_OK (committed by a majority); otherwise as the store says.
    bool put_acknowledged(store::PutMessageStatus status) const override;

    store::GetMessageResult get_message(const std::string& group, const std::string& topic,
                                        int32_t queue_id, int64_t offset, int32_t max_msg_nums,
                                        const store::MessageFilter* filter) override {
        return store_.get_message(group, topic, queue_id, offset, max_msg_nums, filter);
    }
    int64_t max_offset_in_queue(const std::string& topic, int32_t queue_id) override {
        return store_.max_offset_in_queue(topic, queue_id);
    }
    int64_t min_offset_in_queue(const std::string& topic, int32_t queue_id) override {
        return store_.min_offset_in_queue(topic, queue_id);
    }
    int64_t offset_in_queue_by_time(const std::string& topic, int32_t queue_id, int64_t timestamp,
                                    bool upper) override {
        return store_.offset_in_queue_by_time(topic, queue_id, timestamp, upper);
    }
    int64_t offset_in_queue_by_time_nearest(const std::string& topic, int32_t queue_id,
                                            int64_t timestamp) override {
        return store_.offset_in_queue_by_time_nearest(topic, queue_id, timestamp);
    }
    int64_t earliest_message_time(const std::string& topic, int32_t queue_id) override {
        return store_.earliest_message_time(topic, queue_id);
    }
    int64_t message_store_time(const std::string& topic, int32_t queue_id,
                               int64_t offset) override {
        return store_.message_store_time(topic, queue_id, offset);
    }
    std::optional<std::string> raw_message_at(int64_t physical_offset) override {
        return store_.raw_message_at(physical_offset);
    }
    std::optional<protocol::MessageExt> look_message_by_offset(int64_t physical_offset) override {
        return store_.look_message_by_offset(physical_offset);
    }
    std::optional<CqUnit> consume_queue_unit(const std::string& topic, int32_t queue_id,
                                             int64_t offset) override {
        return store_.consume_queue_unit(topic, queue_id, offset);
    }
    std::optional<CqBounds> consume_queue_bounds(const std::string& topic,
                                                 int32_t queue_id) override {
        return store_.consume_queue_bounds(topic, queue_id);
    }
    std::optional<std::vector<CqUnit>> consume_queue_index_buffer(const std::string& topic,
                                                                  int32_t queue_id, int64_t index,
                                                                  int32_t max_count) override {
        return store_.consume_queue_index_buffer(topic, queue_id, index, max_count);
    }
    store::QueryMessageResult query_message(const std::string& topic, const std::string& key,
                                            int32_t max_num, int64_t begin_ts,
                                            int64_t end_ts) override {
        return store_.query_message(topic, key, max_num, begin_ts, end_ts);
    }
    void delete_topic(const std::string& topic) override { store_.delete_topic(topic); }
    int clean_unused_topics(const std::set<std::string>& keep) override {
        return store_.clean_unused_topics(keep);
    }
    int clean_expired_consume_queues() override { return store_.clean_expired_consume_queues(); }
    void set_arrival_listener(ArrivalListener listener) override {
        store_.set_arrival_listener(std::move(listener));
    }
    protocol::HostAddress store_host() const override { return store_.store_host(); }
    std::map<std::string, std::string> runtime_info() override { return store_.runtime_info(); }
    bool is_in_memory(int64_t physical_offset) override {
        return store_.is_in_memory(physical_offset);
    }

private:
    MessageStorePort& store_;
    ReplicationService& replication_;
};

}  // namespace comet::broker
