#pragma once
// Helpers for the process tests that link the C++ client (comet::client; see the list in
// tests/it/CMakeLists.txt). Header-only: the harness library itself does not link the client.

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "client/pull_consumer.h"
#include "harness.h"

namespace comet::it {

// Every message body of `topic` on every queue, pulled by `group` from offset 0 until all of
// `want` are there or `timeout` passes (polled; the caller compares what came back).
inline std::set<std::string> pull_bodies(const client::ClientConfig& config,
                                         const std::string& group, const std::string& topic,
                                         const std::set<std::string>& want, milliseconds timeout) {
    client::PullConsumerConfig cc;
    cc.client = config;
    cc.group = group;
    client::DefaultMqPullConsumer consumer(cc);
    if (!consumer.start().is_ok()) {
        return {};
    }
    std::set<std::string> got;
    std::map<client::MessageQueue, int64_t> next;
    eventually(
        [&] {
            auto mqs = consumer.fetch_subscribe_message_queues(topic);
            if (!mqs.is_ok()) {
                return false;
            }
            for (const auto& mq : *mqs) {
                auto r = consumer.pull(mq, "*", next[mq], 32);
                if (!r.is_ok()) {
                    continue;
                }
                for (const auto& m : r->messages) {
                    got.insert(m.body);
                }
                next[mq] = r->next_begin_offset;
            }
            return std::includes(got.begin(), got.end(), want.begin(), want.end());
        },
        timeout);
    consumer.shutdown();
    return got;
}

}  // namespace comet::it
