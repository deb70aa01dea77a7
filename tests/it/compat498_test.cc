// Answers that must equal RocketMQ 4.9.8's for the same request (each case was observed by
// sending the request to a 4.9.8 broker and to Comet): send refusals, PULL_OFFSET_MOVED's
// correction, SEARCH_OFFSET_BY_TIMESTAMP's nearest-message rule, QUERY_CONSUMER_OFFSET of a
// new group whose queue start is no longer "in memory", the serialization of an answer to a
// request in the ROCKETMQ binary header (replayed from frames captured on 4.9.8). Real
// mqnamesrv + mqbroker processes on 127.0.0.1; every wait is bounded.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "harness.h"
#include "protocol/message_decoder.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using namespace std::chrono_literals;

std::string ext_of(const protocol::RemotingCommand& r, std::string_view key) {
    const std::string* v = r.ext(key);
    return v != nullptr ? *v : std::string("<absent>");
}

// Whole frame bytes of a frame captured from RocketMQ 4.9.8 (shared/reference/vectors).
std::string captured_frame(const std::string& name) {
    std::ifstream in(std::string(COMET_SOURCE_DIR) + "/../shared/reference/vectors/frames/" + name,
                     std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

// One request written as raw bytes on a fresh connection to 127.0.0.1:port, and the frame that
// answers it (whole, with its length word); "" on a socket error or after 5 s.
std::string raw_exchange(uint16_t port, const std::string& frame) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return {};
    }
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string got;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(frame.size())) {
        char buf[4096];
        size_t want = 4;
        while (got.size() < want) {
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0) {
                got.clear();
                break;
            }
            got.append(buf, static_cast<size_t>(n));
            if (want == 4 && got.size() >= 4) {
                uint32_t len = 0;
                std::memcpy(&len, got.data(), 4);
                want = 4 + ntohl(len);
            }
        }
    }
    ::close(fd);
    return got;
}

// The serialize-type byte of a whole frame (the top byte of its header-length word).
int serialize_byte(const std::string& frame) {
    return frame.size() >= 8 ? static_cast<unsigned char>(frame[4]) : -1;
}

class Compat498It : public ::testing::Test {
protected:
    void SetUp() override {
        ns_port_ = free_port();
        auto ns = start_namesrv(dir_, ns_port_);
        ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
        ns_ = std::move(ns).value();
        ASSERT_TRUE(ns_->wait_for_port(ns_port_, 10s).is_ok()) << ns_->log_tail();
        broker_port_ = free_port();
        auto b = start_broker(dir_, broker_port_, addr(ns_port_));
        ASSERT_TRUE(b.is_ok()) << b.status().to_string();
        broker_ = std::move(b).value();
        ASSERT_TRUE(broker_->wait_for_port(broker_port_, 20s).is_ok()) << broker_->log_tail();
        client_.start();
    }
    void TearDown() override { client_.shutdown(); }

    protocol::RemotingCommand must(Result<protocol::RemotingCommand> r) {
        EXPECT_TRUE(r.is_ok()) << r.status().to_string();
        return r.is_ok() ? std::move(r).value() : protocol::RemotingCommand{};
    }
    protocol::RemotingCommand on_broker(protocol::RemotingCommand req, uint16_t port = 0) {
        return must(call(client_, port == 0 ? broker_port_ : port, std::move(req)));
    }
    // Sends one message to topic/queue and waits until the queue holds `count` units.
    void send_and_wait(const std::string& topic, int queue, int64_t count, uint16_t port = 0) {
        auto s =
            on_broker(send_message_request(topic, "body-" + std::to_string(count), queue), port);
        ASSERT_EQ(s.code, RC::kSuccess) << s.remark.value_or("");
        ASSERT_TRUE(eventually(
            [&] {
                auto r = call(client_, port == 0 ? broker_port_ : port,
                              request(Req::kGetMaxOffset,
                                      {{"topic", topic}, {"queueId", std::to_string(queue)}}));
                return r.is_ok() && ext_of(*r, "offset") == std::to_string(count);
            },
            10s));
    }
    int64_t search(const std::string& topic, int queue, int64_t ts,
                   std::optional<std::string> boundary = std::nullopt) {
        std::map<std::string, std::string> ext{{"topic", topic},
                                               {"queueId", std::to_string(queue)},
                                               {"timestamp", std::to_string(ts)}};
        if (boundary) {
            ext["boundaryType"] = *boundary;
        }
        auto r = on_broker(request(Req::kSearchOffsetByTimestamp, ext));
        EXPECT_EQ(r.code, RC::kSuccess) << r.remark.value_or("");
        return r.ext("offset") != nullptr ? std::stoll(*r.ext("offset")) : -1;
    }

    TempDir dir_{"comet_it_compat498"};
    uint16_t ns_port_ = 0;
    uint16_t broker_port_ = 0;
    std::unique_ptr<Process> ns_;
    std::unique_ptr<Process> broker_;
    net::RemotingClient client_;
};

// 4.9.8 adds MSG_REGION and TRACE_ON to the response before its first check, so refusals carry
// them too; a queueId past the topic's queues is SYSTEM_ERROR (msgCheck), naming the TopicConfig.
TEST_F(Compat498It, SendRefusalsAnswerLike498) {
    ASSERT_EQ(on_broker(create_topic_request("Q4", 4)).code, RC::kSuccess);
    auto bad_queue = on_broker(send_message_request("Q4", "x", 100));
    EXPECT_EQ(bad_queue.code, RC::kSystemError);
    EXPECT_NE(bad_queue.remark.value_or("").find(
                  "request queueId[100] is illegal, TopicConfig [topicName=Q4, readQueueNums=4, "
                  "writeQueueNums=4, perm=RW-, topicFilterType=SINGLE_TAG, topicSysFlag=0, "
                  "order=false] Producer: 127.0.0.1:"),
              std::string::npos)
        << bad_queue.remark.value_or("");
    EXPECT_EQ(ext_of(bad_queue, "MSG_REGION"), "DefaultRegion");
    EXPECT_EQ(ext_of(bad_queue, "TRACE_ON"), "true");
    EXPECT_EQ(bad_queue.ext("msgId"), nullptr);
    EXPECT_EQ(bad_queue.ext("queueOffset"), nullptr);

    // Other refusals of the send path carry them as well.
    auto bad_topic = on_broker(send_message_request("bad topic!", "x", 0));
    EXPECT_EQ(bad_topic.code, RC::kSystemError);  // TopicValidator#validateTopic
    EXPECT_EQ(ext_of(bad_topic, "MSG_REGION"), "DefaultRegion");
    EXPECT_EQ(ext_of(bad_topic, "TRACE_ON"), "true");
    auto forbidden = on_broker(send_message_request("SCHEDULE_TOPIC_XXXX", "x", 0));
    EXPECT_EQ(forbidden.code, RC::kNoPermission);
    EXPECT_EQ(ext_of(forbidden, "MSG_REGION"), "DefaultRegion");
    EXPECT_EQ(ext_of(forbidden, "TRACE_ON"), "true");
    auto empty = on_broker(send_message_request("Q4", "", 0));
    EXPECT_EQ(empty.code, RC::kMessageIllegal);
    EXPECT_EQ(ext_of(empty, "TRACE_ON"), "true");
    // And a success, for comparison.
    auto ok = on_broker(send_message_request("Q4", "x", 3));
    ASSERT_EQ(ok.code, RC::kSuccess) << ok.remark.value_or("");
    EXPECT_EQ(ext_of(ok, "MSG_REGION"), "DefaultRegion");
    EXPECT_EQ(ext_of(ok, "queueId"), "3");
}

// DefaultMessageStore#getMessage: an offset past maxOffset is OFFSET_OVERFLOW_BADLY, corrected to
// maxOffset (also when minOffset is 0); the processor answers PULL_OFFSET_MOVED.
TEST_F(Compat498It, PullPastMaxOffsetMovesToMaxOffset) {
    ASSERT_EQ(on_broker(create_topic_request("PullPast", 1)).code, RC::kSuccess);
    send_and_wait("PullPast", 0, 1);
    send_and_wait("PullPast", 0, 2);
    auto moved = on_broker(pull_message_request("G", "PullPast", 0, 102));
    EXPECT_EQ(moved.code, RC::kPullOffsetMoved);
    EXPECT_EQ(ext_of(moved, "nextBeginOffset"), "2");
    EXPECT_EQ(ext_of(moved, "minOffset"), "0");
    EXPECT_EQ(ext_of(moved, "maxOffset"), "2");
    // At maxOffset exactly: PULL_NOT_FOUND, next offset unchanged.
    auto at_max = on_broker(pull_message_request("G", "PullPast", 0, 2));
    EXPECT_EQ(at_max.code, RC::kPullNotFound);
    EXPECT_EQ(ext_of(at_max, "nextBeginOffset"), "2");
}

// ConsumeQueue#getOffsetInQueueByTime (4.9.8; no boundaryType in the request): the message whose
// store time is nearest, and the last message (not maxOffset) for a time after all of them.
TEST_F(Compat498It, SearchOffsetByTimestampFindsTheNearestMessage) {
    ASSERT_EQ(on_broker(create_topic_request("Search", 1)).code, RC::kSuccess);
    send_and_wait("Search", 0, 1);
    // The rule under test depends on the store times being apart; this sleep makes the gap,
    // it does not wait for anything.
    std::this_thread::sleep_for(400ms);
    send_and_wait("Search", 0, 2);
    auto pulled = on_broker(pull_message_request("G", "Search", 0, 0));
    ASSERT_EQ(pulled.code, RC::kSuccess);
    auto msgs = protocol::decode_messages(pulled.body);
    ASSERT_TRUE(msgs.is_ok());
    ASSERT_EQ(msgs->size(), 2u);
    const int64_t t0 = (*msgs)[0].store_timestamp;
    const int64_t t1 = (*msgs)[1].store_timestamp;
    ASSERT_GE(t1 - t0, 400);
    const int64_t in_an_hour = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count() +
                               3600 * 1000;

    EXPECT_EQ(search("Search", 0, t0 + 50), 0);     // nearer the first message
    EXPECT_EQ(search("Search", 0, t1 - 50), 1);     // nearer the second
    EXPECT_EQ(search("Search", 0, t0), 0);          // exact
    EXPECT_EQ(search("Search", 0, t1), 1);          // exact
    EXPECT_EQ(search("Search", 0, in_an_hour), 1);  // after everything: the last message
    EXPECT_EQ(search("Search", 0, t0 - 3600 * 1000), 0);
    EXPECT_EQ(search("NoSuchTopic", 0, t0), 0);

    // RocketMQ 5 clients send boundaryType: the first offset at/after (LOWER, max offset when
    // none) or the last at/before (UPPER) the time.
    EXPECT_EQ(search("Search", 0, t0 + 50, "lower"), 1);
    EXPECT_EQ(search("Search", 0, in_an_hour, "lower"), 2);
    EXPECT_EQ(search("Search", 0, t0 + 50, "upper"), 0);
}

// ConsumerManageProcessor#queryConsumerOffset: a group without a stored offset gets 0 only
// while the queue starts at 0 and its first message is still "in memory"
// (checkInDiskByConsumeOffset: within accessMessageInMemoryMaxRatio % of RAM of the log's end);
// otherwise QUERY_NOT_FOUND, and the client's CONSUME_FROM policy decides.
TEST_F(Compat498It, QueryConsumerOffsetOfNewGroupDependsOnMemoryRatio) {
    // The default broker (40 % of RAM): a tiny queue is in memory, the answer is 0.
    ASSERT_EQ(on_broker(create_topic_request("Fresh", 1)).code, RC::kSuccess);
    send_and_wait("Fresh", 0, 1);
    send_and_wait("Fresh", 0, 2);
    auto query = [&](uint16_t port, const std::string& topic, const std::string& group) {
        return on_broker(request(Req::kQueryConsumerOffset,
                                 {{"consumerGroup", group}, {"topic", topic}, {"queueId", "0"}}),
                         port);
    };
    auto in_memory = query(broker_port_, "Fresh", "NewGroup");
    ASSERT_EQ(in_memory.code, RC::kSuccess) << in_memory.remark.value_or("");
    EXPECT_EQ(ext_of(in_memory, "offset"), "0");

    // A second broker whose "memory" is 0 % of RAM: the first message lies behind the log's
    // end, so it counts as evicted (as a long backlog would on a real machine).
    const uint16_t port2 = free_port();
    auto b2 = start_broker(dir_, port2, addr(ns_port_),
                           {{"brokerName", "broker-b"}, {"accessMessageInMemoryMaxRatio", "0"}},
                           "broker-b");
    ASSERT_TRUE(b2.is_ok()) << b2.status().to_string();
    auto broker2 = std::move(b2).value();
    ASSERT_TRUE(broker2->wait_for_port(port2, 20s).is_ok()) << broker2->log_tail();
    ASSERT_EQ(on_broker(create_topic_request("Evicted", 1), port2).code, RC::kSuccess);
    send_and_wait("Evicted", 0, 1, port2);
    send_and_wait("Evicted", 0, 2, port2);
    auto evicted = query(port2, "Evicted", "NewGroup");
    EXPECT_EQ(evicted.code, RC::kQueryNotFound);
    EXPECT_EQ(evicted.remark.value_or(""),
              "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first");
    // A stored offset is answered whatever the memory rule says.
    ASSERT_EQ(on_broker(request(Req::kUpdateConsumerOffset, {{"consumerGroup", "NewGroup"},
                                                             {"topic", "Evicted"},
                                                             {"queueId", "0"},
                                                             {"commitOffset", "1"}}),
                        port2)
                  .code,
              RC::kSuccess);
    auto stored = query(port2, "Evicted", "NewGroup");
    EXPECT_EQ(stored.code, RC::kSuccess);
    EXPECT_EQ(ext_of(stored, "offset"), "1");
}

// GET_BROKER_RUNTIME_INFO carries every key 4.9.8 reports (DefaultMessageStore#getRuntimeInfo
// with StoreStatsService#getRuntimeInfo, AdminBrokerProcessor#prepareRuntimeInfo of tag
// rocketmq-all-4.9.8). Not listed: remainHowManyDataToCommit (4.9.8 reports it only with
// transientStorePoolEnable, which Comet does not have), scheduleMessageOffset_<level> (once a
// level delivered; StatsIt checks it).
TEST_F(Compat498It, RuntimeInfoHasEveryKeyOf498) {
    static constexpr const char* kKeys498[] = {
        // StoreStatsService#getRuntimeInfo
        "bootTimestamp", "runtime", "putMessageEntireTimeMax", "putMessageTimesTotal",
        "putMessageFailedTimes", "putMessageSizeTotal", "putMessageDistributeTime",
        "putMessageAverageSize", "dispatchMaxBuffer", "getMessageEntireTimeMax", "putTps",
        "getFoundTps", "getMissTps", "getTotalTps", "getTransferedTps", "putLatency99",
        "putLatency999",
        // DefaultMessageStore#getRuntimeInfo
        "commitLogDiskRatio", "consumeQueueDiskRatio", "commitLogMinOffset", "commitLogMaxOffset",
        // AdminBrokerProcessor#prepareRuntimeInfo
        "brokerVersionDesc", "brokerVersion", "msgPutTotalYesterdayMorning",
        "msgPutTotalTodayMorning", "msgPutTotalTodayNow", "msgGetTotalYesterdayMorning",
        "msgGetTotalTodayMorning", "msgGetTotalTodayNow", "dispatchBehindBytes",
        "pageCacheLockTimeMills", "earliestMessageTimeStamp", "startAcceptSendRequestTimeStamp",
        "remainTransientStoreBufferNumbs", "remainHowManyDataToFlush", "commitLogDirCapacity",
        "sendThreadPoolQueueSize", "sendThreadPoolQueueCapacity",
        "sendThreadPoolQueueHeadWaitTimeMills", "pullThreadPoolQueueSize",
        "pullThreadPoolQueueCapacity", "pullThreadPoolQueueHeadWaitTimeMills",
        "queryThreadPoolQueueSize", "queryThreadPoolQueueCapacity",
        "queryThreadPoolQueueHeadWaitTimeMills", "EndTransactionQueueSize",
        "EndTransactionThreadPoolQueueCapacity"};
    ASSERT_EQ(on_broker(create_topic_request("RtTopic", 1)).code, RC::kSuccess);
    send_and_wait("RtTopic", 0, 1);
    auto info = runtime_info(client_, broker_port_);
    ASSERT_TRUE(info.is_ok()) << info.status().to_string();
    for (const char* key : kKeys498) {
        EXPECT_EQ(info->count(key), 1u) << key;
    }
    // One commitLogDiskRatio_<path> per CommitLog path (one here).
    int per_path = 0;
    for (const auto& [k, v] : *info) {
        per_path += k.rfind("commitLogDiskRatio_", 0) == 0 ? 1 : 0;
    }
    EXPECT_EQ(per_path, 1);
    // 4.9.8's formats: unflushed bytes human-readable, the disabled pool as Integer.MAX_VALUE.
    EXPECT_EQ((*info)["remainTransientStoreBufferNumbs"], "2147483647");
    const std::string& flush = (*info)["remainHowManyDataToFlush"];
    EXPECT_TRUE(flush.ends_with(" B") || flush.ends_with("iB")) << flush;
    EXPECT_EQ(info->count("remainHowManyDataToCommit"), 0u);
    // The queue capacities are the configured ones (4.9.8's defaults), not constants.
    EXPECT_EQ((*info)["sendThreadPoolQueueCapacity"], "10000");
    EXPECT_EQ((*info)["pullThreadPoolQueueCapacity"], "100000");
}

// 4.9.8 answers a request in the ROCKETMQ binary header in that header (captured: 0140 -> 0141,
// the Java client asking the name server for TBW102's route), whichever server it asks and
// whatever the answer (a route, or REQUEST_CODE_NOT_SUPPORTED from the transport).
TEST_F(Compat498It, RequestInRocketMqHeaderIsAnsweredInIt) {
    const std::string req = captured_frame("0140-c2s-GET_ROUTEINFO_BY_TOPIC-RMQ.bin");
    const std::string want = captured_frame("0141-s2c-GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS-RMQ.bin");
    ASSERT_EQ(serialize_byte(req), 1);
    ASSERT_EQ(serialize_byte(want), 1);
    auto want_cmd = protocol::decode_frame_payload(std::string_view(want).substr(4));
    ASSERT_TRUE(want_cmd.is_ok()) << want_cmd.status().to_string();
    // The route exists once the broker registered (TBW102 with autoCreateTopicEnable).
    std::string got;
    Result<protocol::RemotingCommand> cmd = Status::error(Errc::kUnavailable, "not asked");
    ASSERT_TRUE(eventually(
        [&] {
            got = raw_exchange(ns_port_, req);
            if (got.empty()) {
                return false;
            }
            cmd = protocol::decode_frame_payload(std::string_view(got).substr(4));
            return cmd.is_ok() && cmd->code == want_cmd->code;
        },
        15s));
    EXPECT_EQ(serialize_byte(got), serialize_byte(want));
    EXPECT_EQ(cmd->serialize_type, protocol::SerializeType::kRocketMq);
    EXPECT_TRUE(cmd->is_response());
    EXPECT_EQ(cmd->opaque, want_cmd->opaque);
    EXPECT_FALSE(cmd->body.empty());

    // A code nobody serves, in the binary header, to each server: the transport's refusal.
    protocol::RemotingCommand unknown;
    unknown.code = 9999;
    unknown.opaque = 77;
    unknown.serialize_type = protocol::SerializeType::kRocketMq;
    for (uint16_t port : {ns_port_, broker_port_}) {
        const std::string answer = raw_exchange(port, protocol::encode_frame(unknown));
        ASSERT_FALSE(answer.empty()) << "port " << port;
        EXPECT_EQ(serialize_byte(answer), 1) << "port " << port;
        auto a = protocol::decode_frame_payload(std::string_view(answer).substr(4));
        ASSERT_TRUE(a.is_ok()) << a.status().to_string();
        EXPECT_EQ(a->code, RC::kRequestCodeNotSupported);
        EXPECT_EQ(a->opaque, 77);
    }
}

}  // namespace
}  // namespace comet::it
