#pragma once
// StoreAdapter: MessageStorePort over the real store::MessageStore (the production seam), and
// the mapping from broker properties to MessageStoreConfig. Owns the store; BrokerController
// owns the adapter. Threads: as MessageStore (any thread); arrival notifications come from the
// store's dispatch thread.

#include <atomic>
#include <memory>

#include "broker/context/message_store_port.h"
#include "broker/metadata/broker_config.h"
#include "store/message_store.h"

namespace comet::dledger {
class DLedgerServer;
}

namespace comet::broker {

// Store settings: `base` (filled by the config registry, see register_store_config) with the
// broker-level fields applied (storePathRootDir, flushDiskType, maxMessageSize,
// messageDelayLevel, store host) and then any store keys left in config.extra (including Java's
// "maped" spellings). Errors: kInvalidArgument naming the key.
Result<store::MessageStoreConfig> make_store_config(const BrokerConfig& config,
                                                    store::MessageStoreConfig base = {});

// Registers the store's own properties (mappedFileSizeCommitLog, fileReservedTime, ...) that
// BrokerConfig does not carry, bound to `config`.
void register_store_config(ConfigRegistry& registry, store::MessageStoreConfig* config);

class StoreAdapter final : public MessageStorePort, private store::MessageArrivingListener {
public:
    explicit StoreAdapter(std::unique_ptr<store::MessageStore> store);
    ~StoreAdapter() override;

    store::MessageStore& store() { return *store_; }
    // DLedger mode: every put passes the server's gate (begin_put/end_put): refused with
    // SERVICE_NOT_AVAILABLE unless this peer is the writable leader. `done` runs before
    // end_put(), so a commit waiter it registers is covered by a step-down. Set before start.
    void set_dledger(dledger::DLedgerServer* dledger) { dledger_ = dledger; }
    // Controller mode: puts (sends, the schedule service's re-puts) only while this broker is
    // the elected master; otherwise SERVICE_NOT_AVAILABLE, so a slave's CommitLog only ever
    // grows by replication. The ReplicasManager opens and closes the gate.
    void set_writable(bool writable) { writable_.store(writable); }
    bool writable() const { return writable_.load(); }

    using MessageStorePort::put_message;
    void put_message(const protocol::MessageExt& msg, std::string_view body,
                     PutCallback done) override;
    void put_messages(protocol::MessageExt batch, PutCallback done) override;
    store::GetMessageResult get_message(const std::string& group, const std::string& topic,
                                        int32_t queue_id, int64_t offset, int32_t max_msg_nums,
                                        const store::MessageFilter* filter) override;
    int64_t max_offset_in_queue(const std::string& topic, int32_t queue_id) override;
    int64_t min_offset_in_queue(const std::string& topic, int32_t queue_id) override;
    int64_t offset_in_queue_by_time(const std::string& topic, int32_t queue_id, int64_t timestamp,
                                    bool upper) override;
    int64_t offset_in_queue_by_time_nearest(const std::string& topic, int32_t queue_id,
                                            int64_t timestamp) override;
    int64_t earliest_message_time(const std::string& topic, int32_t queue_id) override;
    int64_t message_store_time(const std::string& topic, int32_t queue_id, int64_t offset) override;
    std::optional<std::string> raw_message_at(int64_t physical_offset) override;
    std::optional<protocol::MessageExt> look_message_by_offset(int64_t physical_offset) override;
    std::optional<CqUnit> consume_queue_unit(const std::string& topic, int32_t queue_id,
                                             int64_t offset) override;
    store::QueryMessageResult query_message(const std::string& topic, const std::string& key,
                                            int32_t max_num, int64_t begin_ts,
                                            int64_t end_ts) override;
    void delete_topic(const std::string& topic) override;
    int clean_unused_topics(const std::set<std::string>& keep) override;
    int clean_expired_consume_queues() override;
    std::optional<CqBounds> consume_queue_bounds(const std::string& topic,
                                                 int32_t queue_id) override;
    std::optional<std::vector<CqUnit>> consume_queue_index_buffer(const std::string& topic,
                                                                  int32_t queue_id, int64_t index,
                                                                  int32_t max_count) override;
    void set_arrival_listener(ArrivalListener listener) override;
    protocol::HostAddress store_host() const override { return store_host_; }
    std::map<std::string, std::string> runtime_info() override;
    bool is_in_memory(int64_t physical_offset) override;

private:
    void arriving(const std::string& topic, int32_t queue_id, store::QueueOffset logic_offset,
                  int64_t tags_code, int64_t store_timestamp) override;

    std::unique_ptr<store::MessageStore> store_;
    protocol::HostAddress store_host_;
    ArrivalListener listener_;  // set before start, read-only afterwards
    dledger::DLedgerServer* dledger_ = nullptr;
    std::atomic<bool> writable_{true};
};

}  // namespace comet::broker
