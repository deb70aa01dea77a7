#include "client/pull_consumer.h"

#include <future>

#include "client/consumer_api.h"
#include "client/topic_publish_info.h"

namespace comet::client {

DefaultMqPullConsumer::DefaultMqPullConsumer(PullConsumerConfig config)
    : config_(std::move(config)), instance_(std::make_unique<MqClientInstance>(config_.client)) {}

DefaultMqPullConsumer::~DefaultMqPullConsumer() { shutdown(); }

Status DefaultMqPullConsumer::start() {
    instance_->set_consumer_data_source([this] {
        protocol::ConsumerData cd;
        cd.group_name = config_.group;
        cd.consume_type = "CONSUME_ACTIVELY";
        cd.message_model = "CLUSTERING";
        cd.consume_from_where = "CONSUME_FROM_LAST_OFFSET";
        return std::vector<protocol::ConsumerData>{cd};
    });
    return instance_->start();
}

void DefaultMqPullConsumer::shutdown() { instance_->shutdown(); }

Result<std::vector<MessageQueue>> DefaultMqPullConsumer::fetch_subscribe_message_queues(
    const std::string& topic) {
    COMET_ASSIGN_OR_RETURN(auto route, instance_->route(topic, true));
    return TopicPublishInfo::subscribe_queues(topic, route);
}

Result<PullResult> DefaultMqPullConsumer::do_pull(const MessageQueue& mq,
                                                  const MessageSelector& selector, int64_t offset,
                                                  int32_t max_nums, bool block) {
    if (offset < 0 || max_nums <= 0) {
        return Status::error(Errc::kInvalidArgument, "bad pull offset {} or count {}", offset,
                             max_nums);
    }
    COMET_RETURN_IF_ERROR(subscribe_addr(*instance_, mq.broker_name, mq.topic).status());
    const auto sub = build_subscription(mq.topic, selector, SystemClock::instance().wall_millis());
    protocol::PullMessageRequestHeader h;
    h.consumer_group = config_.group;
    h.topic = mq.topic;
    h.queue_id = mq.queue_id;
    h.queue_offset = offset;
    h.max_msg_nums = max_nums;
    h.sys_flag = protocol::kPullFlagSubscription | (block ? protocol::kPullFlagSuspend : 0);
    h.suspend_timeout_millis = block ? config_.broker_suspend_max.count() : 0;
    h.subscription = sub.sub_string;
    h.sub_version = sub.sub_version;
    h.expression_type = sub.expression_type;
    h.broker_name = mq.broker_name;
    const Duration timeout = block ? config_.broker_suspend_max + config_.consumer_pull_timeout
                                   : Duration(config_.consumer_pull_timeout);
    std::promise<Result<PullResult>> done;
    auto fut = done.get_future();
    pull_async(*instance_, h, sub, mq.broker_name, timeout,
               [&done](Result<PullResult> r) { done.set_value(std::move(r)); });
    return fut.get();
}

Result<PullResult> DefaultMqPullConsumer::pull(const MessageQueue& mq,
                                               const std::string& expression, int64_t offset,
                                               int32_t max_nums) {
    return do_pull(mq, MessageSelector::by_tag(expression), offset, max_nums, false);
}

Result<PullResult> DefaultMqPullConsumer::pull(const MessageQueue& mq,
                                               const MessageSelector& selector, int64_t offset,
                                               int32_t max_nums) {
    return do_pull(mq, selector, offset, max_nums, false);
}

Result<PullResult> DefaultMqPullConsumer::pull_block_if_not_found(const MessageQueue& mq,
                                                                  const std::string& expression,
                                                                  int64_t offset,
                                                                  int32_t max_nums) {
    return do_pull(mq, MessageSelector::by_tag(expression), offset, max_nums, true);
}

Status DefaultMqPullConsumer::update_consume_offset(const MessageQueue& mq, int64_t offset) {
    return update_consumer_offset(*instance_, config_.group, mq, offset, false);
}

Result<int64_t> DefaultMqPullConsumer::fetch_consume_offset(const MessageQueue& mq) {
    return query_consumer_offset(*instance_, config_.group, mq);
}

Result<int64_t> DefaultMqPullConsumer::max_offset(const MessageQueue& mq) {
    return client::max_offset(*instance_, mq);
}

Result<int64_t> DefaultMqPullConsumer::min_offset(const MessageQueue& mq) {
    return client::min_offset(*instance_, mq);
}

}  // namespace comet::client
