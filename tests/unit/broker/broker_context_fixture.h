#pragma once
// BrokerContextTest: a BrokerContext wired to real managers (topics, groups, offsets, consumers,
// producers, locks, long-polling holds) over a FakeStore and a ManualClock, with a request
// context for channel 7. Processor tests derive from it and add their processors and hooks.

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "base/clock.h"
#include "broker/processor/broker_processors.h"
#include "fake_store.h"

namespace comet::broker::testing {

class BrokerContextTest : public ::testing::Test {
protected:
    BrokerContextTest()
        : config_(BrokerConfig{}),
          topics_(BrokerConfig{}, clock_, ""),
          groups_(clock_, "", true),
          offsets_(""),
          consumers_(clock_, std::chrono::seconds(120), nullptr),
          producers_(clock_, std::chrono::seconds(120)),
          filters_(clock_, std::chrono::hours(24)),
          locks_(clock_, std::chrono::seconds(60)),
          holds_(
              clock_,
              [this](const std::string& t, int32_t q) { return store_.max_offset_in_queue(t, q); },
              std::chrono::seconds(5)) {
        ctx_.config = &config_;
        ctx_.clock = &clock_;
        ctx_.topics = &topics_;
        ctx_.groups = &groups_;
        ctx_.offsets = &offsets_;
        ctx_.consumers = &consumers_;
        ctx_.filters = &filters_;
        ctx_.producers = &producers_;
        ctx_.locks = &locks_;
        ctx_.holds = &holds_;
        ctx_.store = &store_;
        ctx_.delay_levels = DelayLevels::parse(kDefaultMessageDelayLevel).value();
        ctx_.stats = &stats_;
        rc_.channel = ChannelId(7);
        rc_.remote_address = "127.0.0.1:50000";
    }

    ManualClock clock_;
    BrokerConfigHolder config_;
    TopicConfigManager topics_;
    SubscriptionGroupManager groups_;
    ConsumerOffsetManager offsets_;
    ConsumerManager consumers_;
    ProducerManager producers_;
    ConsumerFilterManager filters_;
    RebalanceLockManager locks_;
    FakeStore store_;
    PullRequestHoldService holds_;
    BrokerStats stats_;
    BrokerContext ctx_;
    RequestContext rc_;
};

}  // namespace comet::broker::testing
