// EscapeBridge: target choice (another group's master only), the SEND_MESSAGE_V2 it sends, and
// the acting master's CONSUMER_SEND_MSG_BACK escaping through it (fake network seam).

#include "broker/replication/escape_bridge.h"

#include <gtest/gtest.h>

#include "base/clock.h"
#include "broker/processor/broker_processors.h"
#include "broker_context_fixture.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"
#include "protocol/send_headers.h"

namespace comet::broker {
namespace {

using namespace std::chrono_literals;
using protocol::RemotingCommand;
namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;

protocol::QueueData queue(const std::string& broker, int32_t writes, int32_t perm = 6) {
    protocol::QueueData q;
    q.broker_name = broker;
    q.read_queue_nums = writes;
    q.write_queue_nums = writes;
    q.perm = perm;
    return q;
}

protocol::BrokerData broker(const std::string& name, std::map<int64_t, std::string> addrs) {
    protocol::BrokerData b;
    b.cluster = "C";
    b.broker_name = name;
    b.broker_addrs = std::move(addrs);
    return b;
}

// Own group b1 (acting master 1), b2 with only a slave, b3 read-only, b4 a live master.
protocol::TopicRouteData mixed_route() {
    protocol::TopicRouteData r;
    r.queue_datas = {queue("b1", 4), queue("b2", 4), queue("b3", 4, 4), queue("b4", 2)};
    r.broker_datas = {broker("b1", {{1, "10.0.0.1:10911"}}), broker("b2", {{1, "10.0.0.2:10911"}}),
                      broker("b3", {{0, "10.0.0.3:10911"}}),
                      broker("b4", {{0, "10.0.0.4:10911"}, {1, "10.0.0.5:10911"}})};
    return r;
}

TEST(EscapeTarget, OnlyWritableQueuesOfAnotherGroupsMaster) {
    const auto route = mixed_route();
    for (uint32_t pick = 0; pick < 4; ++pick) {
        auto t = pick_escape_target(route, "T", "b1", pick);
        ASSERT_TRUE(t.is_ok()) << t.status().to_string();
        EXPECT_EQ(t.value(),
                  (EscapeTarget{"b4", "10.0.0.4:10911", static_cast<int32_t>(pick % 2)}));
    }
}

TEST(EscapeTarget, NoOtherMasterIsNotFound) {
    auto route = mixed_route();
    route.broker_datas.back().broker_addrs.erase(0);  // b4's master gone too
    auto t = pick_escape_target(route, "%RETRY%G", "b1", 0);
    ASSERT_FALSE(t.is_ok());
    EXPECT_EQ(t.status().code(), Errc::kNotFound);
    EXPECT_NE(t.status().message().find("%RETRY%G"), std::string::npos);
    EXPECT_FALSE(pick_escape_target(protocol::TopicRouteData{}, "T", "b1", 0).is_ok());
    // Its own group is never a target, even with a master address listed.
    protocol::TopicRouteData own;
    own.queue_datas = {queue("b1", 4)};
    own.broker_datas = {broker("b1", {{0, "10.0.0.1:10911"}})};
    EXPECT_FALSE(pick_escape_target(own, "T", "b1", 0).is_ok());
}

struct FakeNetwork {
    std::map<std::string, protocol::TopicRouteData> routes;
    std::vector<std::pair<std::string, RemotingCommand>> sent;
    int32_t answer = RC::kSuccess;
    std::string answer_remark;

    EscapeBridge::Network network() {
        EscapeBridge::Network n;
        n.route = [this](const std::string& topic) -> Result<protocol::TopicRouteData> {
            auto it = routes.find(topic);
            if (it == routes.end()) {
                return Status::error(Errc::kNotFound, "no route of topic {}", topic);
            }
            return it->second;
        };
        n.send = [this](const std::string& addr, RemotingCommand req) -> Result<RemotingCommand> {
            RemotingCommand resp = RemotingCommand::response_to(req, answer);
            if (!answer_remark.empty()) {
                resp.remark = answer_remark;
            }
            sent.emplace_back(addr, std::move(req));
            return resp;
        };
        return n;
    }
};

TEST(EscapeBridge, SendsV2WithPropertiesToTheOtherMaster) {
    FakeNetwork net;
    net.routes["%RETRY%G"] = mixed_route();
    EscapeBridge bridge("b1", net.network());
    protocol::MessageExt msg;
    msg.topic = "%RETRY%G";
    msg.body = "payload";
    msg.flag = 5;
    msg.born_timestamp = 1234;
    msg.reconsume_times = 2;
    msg.set_property("DELAY", "4");
    msg.set_property("RETRY_TOPIC", "T");
    auto r = bridge.escape(msg);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r.value().code, RC::kSuccess);
    ASSERT_EQ(net.sent.size(), 1u);
    EXPECT_EQ(net.sent[0].first, "10.0.0.4:10911");
    const RemotingCommand& req = net.sent[0].second;
    EXPECT_EQ(req.code, Req::kSendMessageV2);
    EXPECT_EQ(req.body, "payload");
    auto h = protocol::decode_send_message_header(req);
    ASSERT_TRUE(h.is_ok()) << h.status().to_string();
    EXPECT_EQ(h.value().topic, "%RETRY%G");
    EXPECT_EQ(h.value().producer_group, "InnerProducerGroup");
    EXPECT_EQ(h.value().queue_id, 0);
    EXPECT_EQ(h.value().flag, 5);
    EXPECT_EQ(h.value().born_timestamp, 1234);
    EXPECT_EQ(h.value().reconsume_times, 2);
    EXPECT_EQ(h.value().broker_name, "b4");
    auto props = protocol::string_to_message_properties(h.value().properties.value_or(""));
    EXPECT_EQ(*props.get("DELAY"), "4");
    EXPECT_EQ(*props.get("RETRY_TOPIC"), "T");
    // Round robin over the target queues; the remote error comes back as the response.
    net.answer = RC::kSystemBusy;
    net.answer_remark = "busy";
    auto busy = bridge.escape(msg);
    ASSERT_TRUE(busy.is_ok());
    EXPECT_EQ(busy.value().code, RC::kSystemBusy);
    EXPECT_EQ(protocol::decode_send_message_header(net.sent[1].second).value().queue_id, 1);
    // No route: the lookup's error.
    msg.topic = "%DLQ%G";
    auto none = bridge.escape(msg);
    ASSERT_FALSE(none.is_ok());
    EXPECT_EQ(none.status().code(), Errc::kNotFound);
    EXPECT_EQ(net.sent.size(), 2u);
}

// CONSUMER_SEND_MSG_BACK on a processor whose broker is (or is not) the acting master.
class EscapeSendBack : public testing::BrokerContextTest {
protected:
    EscapeSendBack() : bridge_("b1", net_.network()) {
        ctx_.escape = &bridge_;
        ctx_.is_acting_master = [this] { return acting_; };
        net_.routes["%RETRY%G"] = mixed_route();
        TopicConfig t;
        t.topic_name = "T";
        t.read_queue_nums = 1;
        t.write_queue_nums = 1;
        EXPECT_TRUE(topics_.update(t).is_ok());
    }

    RemotingCommand run(RemotingCommand req) {
        RemotingCommand out;
        out.code = -1;
        send_.process(
            rc_, std::move(req),
            [&out](RemotingCommand cmd, std::vector<net::SharedBuffer>) { out = std::move(cmd); });
        return out;
    }

    int64_t stored_original() {
        RemotingCommand r = RemotingCommand::request(Req::kSendMessageV2);
        r.ext_fields = {{"a", "PG"}, {"b", "T"}, {"c", "TBW102"}, {"d", "4"}, {"e", "0"},
                        {"f", "0"},  {"g", "1"}, {"h", "0"},      {"i", ""}};
        r.body = "payload";
        EXPECT_EQ(run(std::move(r)).code, RC::kSuccess);
        return store_.puts.back().commit_log_offset;
    }

    RemotingCommand back(int64_t offset) {
        RemotingCommand r = RemotingCommand::request(Req::kConsumerSendMsgBack);
        r.version = 409;
        r.ext_fields = {{"offset", std::to_string(offset)}, {"group", "G"}, {"delayLevel", "0"}};
        return run(std::move(r));
    }

    void enable_escape() { ASSERT_TRUE(config_.update({{"enableRemoteEscape", "true"}}).is_ok()); }

    FakeNetwork net_;
    EscapeBridge bridge_;
    bool acting_ = true;
    SendMessageProcessor send_{ctx_};
};

TEST_F(EscapeSendBack, ActingMasterEscapesRetryMessage) {
    enable_escape();
    const int64_t phys = stored_original();
    const size_t local_puts = store_.puts.size();
    RemotingCommand resp = back(phys);
    EXPECT_EQ(resp.code, RC::kSuccess);
    EXPECT_EQ(store_.puts.size(), local_puts);  // nothing stored locally
    ASSERT_EQ(net_.sent.size(), 1u);
    EXPECT_EQ(net_.sent[0].first, "10.0.0.4:10911");
    auto h = protocol::decode_send_message_header(net_.sent[0].second);
    ASSERT_TRUE(h.is_ok());
    EXPECT_EQ(h.value().topic, "%RETRY%G");  // real topic; the remote master schedules it
    EXPECT_EQ(h.value().reconsume_times, 1);
    auto props = protocol::string_to_message_properties(h.value().properties.value_or(""));
    EXPECT_EQ(*props.get("DELAY"), "3");
    EXPECT_EQ(*props.get("RETRY_TOPIC"), "T");
    EXPECT_EQ(*props.get("WAIT"), "false");
    EXPECT_EQ(props.get("REAL_TOPIC"), nullptr);
    EXPECT_EQ(net_.sent[0].second.body, "payload");

    // The remote broker's error is the answer.
    net_.answer = RC::kSystemBusy;
    net_.answer_remark = "remote busy";
    RemotingCommand busy = back(phys);
    EXPECT_EQ(busy.code, RC::kSystemBusy);
    EXPECT_EQ(busy.remark, "remote busy");
    // No other master: SYSTEM_ERROR naming the failure.
    net_.routes.clear();
    RemotingCommand none = back(phys);
    EXPECT_EQ(none.code, RC::kSystemError);
    ASSERT_TRUE(none.remark.has_value());
    EXPECT_EQ(none.remark->rfind("PUT_TO_REMOTE_BROKER_FAIL: ", 0), 0u) << *none.remark;
    EXPECT_EQ(store_.puts.size(), local_puts);
}

TEST_F(EscapeSendBack, StoresLocallyUnlessActingMasterWithEscapeEnabled) {
    const int64_t phys = stored_original();
    EXPECT_EQ(back(phys).code, RC::kSuccess);  // enableRemoteEscape=false (default)
    EXPECT_EQ(store_.puts.back().topic, "SCHEDULE_TOPIC_XXXX");
    enable_escape();
    acting_ = false;  // the master is alive
    EXPECT_EQ(back(phys).code, RC::kSuccess);
    EXPECT_EQ(store_.puts.back().topic, "SCHEDULE_TOPIC_XXXX");
    EXPECT_TRUE(net_.sent.empty());
}

}  // namespace
}  // namespace comet::broker
