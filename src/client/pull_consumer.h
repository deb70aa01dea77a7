#pragma once
// DefaultMqPullConsumer: the application drives pulling (Java DefaultMQPullConsumer): list a
// topic's queues, pull from an offset (optionally long-polling), read and commit offsets.
//
// Owner: the application. Threads: every method is thread-safe and blocking (do not call from
// a client callback).

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "client/client_config.h"
#include "client/client_types.h"
#include "client/mq_client_instance.h"

namespace comet::client {

struct PullConsumerConfig {
    ClientConfig client;
    std::string group = "DEFAULT_CONSUMER";
    std::chrono::milliseconds broker_suspend_max{20000};  // pull_block_if_not_found
    std::chrono::milliseconds consumer_pull_timeout{10000};
};

class DefaultMqPullConsumer {
public:
    explicit DefaultMqPullConsumer(PullConsumerConfig config);
    ~DefaultMqPullConsumer();
    DefaultMqPullConsumer(const DefaultMqPullConsumer&) = delete;
    DefaultMqPullConsumer& operator=(const DefaultMqPullConsumer&) = delete;

    Status start();
    void shutdown();

    // Readable queues of `topic`, sorted. kNotFound when the topic has no route.
    Result<std::vector<MessageQueue>> fetch_subscribe_message_queues(const std::string& topic);
    // One pull of at most max_nums messages from `offset`; expression "*" or "a || b".
    Result<PullResult> pull(const MessageQueue& mq, const std::string& expression, int64_t offset,
                            int32_t max_nums);
    // Same with a selector (Java pull(mq, MessageSelector, ...)): tags or SQL92, the
    // expression travelling in the request.
    Result<PullResult> pull(const MessageQueue& mq, const MessageSelector& selector, int64_t offset,
                            int32_t max_nums);
    // Same, but the broker holds the request up to broker_suspend_max when nothing is there.
    Result<PullResult> pull_block_if_not_found(const MessageQueue& mq,
                                               const std::string& expression, int64_t offset,
                                               int32_t max_nums);
    Status update_consume_offset(const MessageQueue& mq, int64_t offset);
    // kNotFound when the group has no stored offset for the queue.
    Result<int64_t> fetch_consume_offset(const MessageQueue& mq);
    Result<int64_t> max_offset(const MessageQueue& mq);
    Result<int64_t> min_offset(const MessageQueue& mq);
    MqClientInstance& instance() { return *instance_; }

private:
    Result<PullResult> do_pull(const MessageQueue& mq, const MessageSelector& selector,
                               int64_t offset, int32_t max_nums, bool block);

    const PullConsumerConfig config_;
    std::unique_ptr<MqClientInstance> instance_;
};

}  // namespace comet::client
