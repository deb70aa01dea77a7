#pragma once
// FakeStore: an in-memory MessageStorePort for processor tests. Records are encoded with the
// real stored-message codec; ConsumeQueues are vectors of units; puts complete synchronously with
// the status set in next_status. Single-threaded use (tests), guarded anyway for the hold
// service's callbacks.

#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "broker/context/message_store_port.h"

namespace comet::broker::testing {

class FakeStore final : public MessageStorePort {
public:
    store::PutMessageStatus next_status = store::PutMessageStatus::kPutOk;
    int64_t now_ms = 1'700'000'000'000;
    std::vector<protocol::MessageExt> puts;  // every accepted put, as stored
    bool in_memory = true;                   // what is_in_memory() answers for every offset

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
    void set_arrival_listener(ArrivalListener listener) override {
        listener_ = std::move(listener);
    }
    protocol::HostAddress store_host() const override {
        return protocol::HostAddress::ipv4(127, 0, 0, 1, 10911);
    }
    bool is_in_memory(int64_t) override { return in_memory; }
    std::map<std::string, std::string> runtime_info() override {
        return {{"commitLogMaxOffset", std::to_string(next_phys_)}};
    }

private:
    struct Unit {
        int64_t phys;
        int32_t size;
        int64_t tags_code;
        int64_t store_ts;
    };
    using Key = std::pair<std::string, int32_t>;
    store::PutMessageResult append(protocol::MessageExt msg);

    std::recursive_mutex mu_;
    std::map<Key, std::vector<Unit>> queues_;
    std::map<int64_t, std::string> records_;  // physical offset -> record (stable storage)
    int64_t next_phys_ = 0;
    ArrivalListener listener_;
};

}  // namespace comet::broker::testing
