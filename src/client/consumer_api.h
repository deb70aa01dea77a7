#pragma once
// Consumer-side RPC helpers shared by the pull and push consumers (Java MQClientAPIImpl parts):
// PULL_MESSAGE (sync/async) with response decoding and tag filtering, consumer offsets, max/min
// offsets, consumer id list, CONSUMER_SEND_MSG_BACK, LOCK/UNLOCK_BATCH_MQ. Stateless functions
// over an MqClientInstance; thread-safe.

#include <chrono>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "client/client_types.h"
#include "client/mq_client_instance.h"
#include "protocol/heartbeat_body.h"
#include "protocol/pull_headers.h"

namespace comet::client {

// A SubscriptionData for `expression` ("*", "" or "a || b"). sub_version is `version`.
protocol::SubscriptionData build_subscription(const std::string& topic,
                                              const std::string& expression, int64_t version);
// The SubscriptionData of a selector (Java FilterAPI.build): a TAG selector as above; any
// other type keeps its expression as is, for the broker to compile.
protocol::SubscriptionData build_subscription(const std::string& topic,
                                              const MessageSelector& selector, int64_t version);
// CHECK_CLIENT_CONFIG (Java MQClientInstance.checkClientInBroker) for a non-TAG subscription:
// asks every master of the topic whether it accepts it. Errors: kFailedPrecondition naming the
// broker's code and remark (SYSTEM_ERROR without enablePropertyFilter,
// SUBSCRIPTION_PARSE_FAILED for an expression that does not compile); transport errors.
Status check_client_in_broker(MqClientInstance& inst, const std::string& group,
                              const protocol::SubscriptionData& sub);
// Whether the subscription passes every tag ("*", or no tag set).
bool subscribes_all_tags(const protocol::SubscriptionData& sub);
// Whether a message with `tags` passes the subscription's tag set ("*" passes everything).
bool tags_match(const protocol::SubscriptionData& sub, const std::string& tags);

// Turns a PULL_MESSAGE response into a PullResult; messages not matching `sub` are dropped
// (the broker filters by hash code only). Retry-topic messages get their original topic back.
Result<PullResult> process_pull_response(const protocol::RemotingCommand& resp,
                                         const protocol::SubscriptionData& sub);
// The messages of a FOUND pull body, filtered and with retry topics restored as
// process_pull_response does. Errors: kCorruption from the decoder.
Result<std::vector<MessageExt>> decode_pulled(std::string_view body,
                                              const protocol::SubscriptionData& sub);
// The same into *out, whose elements are decoded over (protocol::decode_messages): no
// allocation per message when one vector serves pull after pull.
Status decode_pulled(std::string_view body, const protocol::SubscriptionData& sub,
                     std::vector<MessageExt>* out);
// For a vector kept for decode_pulled: when its messages' bodies hold room for more than
// `max_body_bytes`, frees them all, the vector's own memory too (true), so that one pull of
// large messages is not held for the life of the queue.
bool release_if_larger(std::vector<MessageExt>* msgs, size_t max_body_bytes);

using PullCallback = std::function<void(Result<PullResult>)>;
// Pulls from the broker the last response suggested (suggestWhichBrokerId; master by default),
// falling back to another member of the group when it is absent from the route; records the
// new suggestion. The commit-offset flag is cleared when the target is a slave.
// Requires: the addresses of broker_name are known to `inst` (route fetched).
// decode = false: a FOUND body is handed over undecoded (PullResult::undecoded_body, moved out
// of the response, no copy), so the caller can decode it off the I/O thread.
void pull_async(MqClientInstance& inst, const protocol::PullMessageRequestHeader& header,
                const protocol::SubscriptionData& sub, const std::string& broker_name,
                Duration timeout, PullCallback callback, bool decode = true);

// Where consumer offsets go (Java RemoteBrokerOffsetStore): the master; when the route has
// none (even after a refresh), any member of the group (the smallest brokerId).
Result<std::string> subscribe_addr(MqClientInstance& inst, const std::string& broker_name,
                                   const std::string& topic);

// Address of the master of `broker_name`, refreshing `topic`'s route if unknown.
Result<std::string> master_addr(MqClientInstance& inst, const std::string& broker_name,
                                const std::string& topic);

// Stored consumer offset; kNotFound when the broker has none.
Result<int64_t> query_consumer_offset(MqClientInstance& inst, const std::string& group,
                                      const MessageQueue& mq);
Status update_consumer_offset(MqClientInstance& inst, const std::string& group,
                              const MessageQueue& mq, int64_t offset, bool oneway);
Result<int64_t> max_offset(MqClientInstance& inst, const MessageQueue& mq);
Result<int64_t> min_offset(MqClientInstance& inst, const MessageQueue& mq);
Result<int64_t> search_offset(MqClientInstance& inst, const MessageQueue& mq, int64_t timestamp);
// Consumer ids of `group` as seen by some broker of `topic`.
Result<std::vector<std::string>> consumer_id_list(MqClientInstance& inst,
                                                  const std::string& topic,
                                                  const std::string& group);
// Sends `msg` back for redelivery through %RETRY%<group> (delay_level 0: broker decides).
Status send_message_back(MqClientInstance& inst, const std::string& group, const MessageExt& msg,
                         const std::string& broker_name, int32_t delay_level,
                         int32_t max_reconsume_times);
// LOCK_BATCH_MQ: the subset of `mqs` (all on broker `broker_name`) now locked for this client.
Result<std::set<MessageQueue>> lock_batch_mq(MqClientInstance& inst, const std::string& group,
                                             const std::string& broker_name,
                                             const std::set<MessageQueue>& mqs);
Status unlock_batch_mq(MqClientInstance& inst, const std::string& group,
                       const std::string& broker_name, const std::set<MessageQueue>& mqs);

}  // namespace comet::client
