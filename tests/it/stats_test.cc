// Broker statistics of a real broker (docs/broker.md, "Statistics"): sends and pulls, then
// VIEW_BROKER_STATS_DATA (315), GET_CONSUME_STATS' consumeTps, GET_TOPIC_STATS_INFO's
// topicPutTps and the measured figures of GET_BROKER_RUNTIME_INFO as `mqadmin brokerStatus`
// prints them. The windows are fed once a second, so every figure is waited for.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>

#include "harness.h"
#include "protocol/json_body.h"
#include "protocol/message_decoder.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

using namespace std::chrono_literals;
namespace RequestCode = protocol::RequestCode;
namespace RC = protocol::ResponseCode;

constexpr int kMessages = 10;

class StatsIt : public ::testing::Test {
protected:
    void SetUp() override {
        namesrv_port_ = free_port();
        auto ns = start_namesrv(dir_, namesrv_port_, {{"listenHost", "127.0.0.1"}});
        ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
        namesrv_ = std::move(ns).value();
        ASSERT_TRUE(namesrv_->wait_for_port(namesrv_port_, 10s).is_ok()) << namesrv_->log_tail();
        broker_port_ = free_port();
        std::map<std::string, std::string> extra = extra_;
        extra["brokerClusterName"] = "StatsCluster";
        auto b = start_broker(dir_, broker_port_, addr(namesrv_port_), extra);
        ASSERT_TRUE(b.is_ok()) << b.status().to_string();
        broker_ = std::move(b).value();
        ASSERT_TRUE(broker_->wait_for_port(broker_port_, 20s).is_ok()) << broker_->log_tail();
        client_.start();
    }
    void TearDown() override { client_.shutdown(); }

    // statsMinute.sum of VIEW_BROKER_STATS_DATA(name, key); nullopt unless SUCCESS.
    std::optional<int64_t> minute_sum(const std::string& name, const std::string& key) {
        auto r = call(
            client_, broker_port_,
            request(RequestCode::kViewBrokerStatsData, {{"statsName", name}, {"statsKey", key}}));
        if (!r.is_ok() || r.value().code != RC::kSuccess) {
            return std::nullopt;
        }
        auto doc = protocol::parse_json_body(r.value().body);
        if (!doc.is_ok() || !doc.value().IsObject() || !doc.value().HasMember("statsMinute") ||
            !doc.value().HasMember("statsHour") || !doc.value().HasMember("statsDay")) {
            return std::nullopt;
        }
        const auto& minute = doc.value()["statsMinute"];
        if (!minute.IsObject() || !minute.HasMember("sum") || !minute.HasMember("tps") ||
            !minute.HasMember("avgpt") || !minute["sum"].IsInt64()) {
            return std::nullopt;
        }
        return minute["sum"].GetInt64();
    }

    // Sends `n` messages to StatsTopic queue 0 and waits until all are dispatched.
    void send_and_dispatch(int n) {
        ASSERT_EQ(call(client_, broker_port_, create_topic_request("StatsTopic", 1)).value().code,
                  RC::kSuccess);
        for (int i = 0; i < n; ++i) {
            auto r = call(client_, broker_port_,
                          send_message_request("StatsTopic", "stats-" + std::to_string(i), 0));
            ASSERT_TRUE(r.is_ok()) << r.status().to_string();
            ASSERT_EQ(r.value().code, RC::kSuccess) << r.value().remark.value_or("");
        }
        ASSERT_TRUE(eventually(
            [&] {
                auto r =
                    call(client_, broker_port_, pull_message_request("WARM", "StatsTopic", 0, 0));
                const std::string* max = r.is_ok() ? r.value().ext("maxOffset") : nullptr;
                return max != nullptr && *max == std::to_string(n);
            },
            10s));
    }
    // VIEW_BROKER_STATS_DATA's answer code for (name, key).
    int32_t view_code(const std::string& name, const std::string& key) {
        auto r = call(
            client_, broker_port_,
            request(RequestCode::kViewBrokerStatsData, {{"statsName", name}, {"statsKey", key}}));
        return r.is_ok() ? r.value().code : -1;
    }

    // GET_TOPIC_STATS_INFO's topicPutTps (the body's object keys are not strict JSON, so the
    // member is read as text); -1 unless SUCCESS.
    double topic_put_tps(const std::string& topic) {
        auto r = call(client_, broker_port_,
                      request(RequestCode::kGetTopicStatsInfo, {{"topic", topic}}));
        if (!r.is_ok() || r.value().code != RC::kSuccess) {
            return -1;
        }
        const std::string key = "\"topicPutTps\":";
        const size_t at = r.value().body.find(key);
        return at == std::string::npos ? -1 : std::stod(r.value().body.substr(at + key.size()));
    }
    // `mqadmin brokerStatus -b <port>` as key -> value ("key<pad>: value" lines).
    std::map<std::string, std::string> broker_status(uint16_t port) {
        std::map<std::string, std::string> kv;
        const CommandResult r = run_command(dir_, {binary_path("mqadmin"), "brokerStatus", "-b",
                                                   addr(port), "-n", addr(namesrv_port_)});
        EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
        for (const std::string& line : lines_of(r.out)) {
            const size_t colon = line.find(": ");
            if (colon == std::string::npos) {
                continue;
            }
            std::string key = line.substr(0, colon);
            key.erase(key.find_last_not_of(' ') + 1);
            kv[key] = line.substr(colon + 2);
        }
        return kv;
    }

    std::map<std::string, std::string> extra_;  // more broker config (set before SetUp)
    TempDir dir_;
    uint16_t namesrv_port_ = 0;
    uint16_t broker_port_ = 0;
    std::unique_ptr<Process> namesrv_;
    std::unique_ptr<Process> broker_;
    net::RemotingClient client_{net::RemotingClientConfig{}};
};

TEST_F(StatsIt, ViewBrokerStatsDataCountsSendsAndPulls) {
    ASSERT_EQ(call(client_, broker_port_, create_topic_request("StatsTopic", 1)).value().code,
              RC::kSuccess);
    for (int i = 0; i < kMessages; ++i) {
        auto r = call(client_, broker_port_,
                      send_message_request("StatsTopic", "stats-" + std::to_string(i), 0));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_EQ(r.value().code, RC::kSuccess) << r.value().remark.value_or("");
    }
    // Dispatch is asynchronous: wait (with another group) until the queue holds every message.
    ASSERT_TRUE(eventually(
        [&] {
            auto r = call(client_, broker_port_, pull_message_request("WARM", "StatsTopic", 0, 0));
            const std::string* max = r.is_ok() ? r.value().ext("maxOffset") : nullptr;
            return max != nullptr && *max == std::to_string(kMessages);
        },
        10s));
    auto pulled = call(client_, broker_port_, pull_message_request("SG", "StatsTopic", 0, 0));
    ASSERT_TRUE(pulled.is_ok());
    ASSERT_EQ(pulled.value().code, RC::kSuccess);
    ASSERT_EQ(*pulled.value().ext("nextBeginOffset"), std::to_string(kMessages));

    EXPECT_TRUE(eventually(
        [&] { return minute_sum("TOPIC_PUT_NUMS", "StatsTopic") == int64_t{kMessages}; }, 10s))
        << minute_sum("TOPIC_PUT_NUMS", "StatsTopic").value_or(-1);
    EXPECT_TRUE(eventually(
        [&] { return minute_sum("GROUP_GET_NUMS", "StatsTopic@SG") == int64_t{kMessages}; }, 10s))
        << minute_sum("GROUP_GET_NUMS", "StatsTopic@SG").value_or(-1);
    EXPECT_TRUE(eventually(
        [&] { return minute_sum("BROKER_PUT_NUMS", "StatsCluster").value_or(0) >= kMessages; },
        10s));
    EXPECT_TRUE(eventually(
        [&] { return minute_sum("TOPIC_PUT_SIZE", "StatsTopic").value_or(0) > 0; }, 10s));

    // GROUP_GET_LATENCY per queue (queueId@topic@group) for each found pull; not for a group
    // that never pulled. The data was in memory: nothing counted as read from disk.
    EXPECT_TRUE(eventually([&] { return minute_sum("GROUP_GET_LATENCY", "0@StatsTopic@SG").has_value(); },
                           10s));
    EXPECT_GE(minute_sum("GROUP_GET_LATENCY", "0@StatsTopic@SG").value_or(-1), 0);
    EXPECT_EQ(view_code("GROUP_GET_LATENCY", "0@StatsTopic@NOBODY"), RC::kSystemError);
    EXPECT_EQ(view_code("GROUP_GET_FROM_DISK_NUMS", "StatsTopic@SG"), RC::kSystemError);

    // SNDBCK_PUT_NUMS (topic@group) counts a CONSUMER_SEND_MSG_BACK that was stored.
    auto msgs = protocol::decode_messages(pulled.value().body);
    ASSERT_TRUE(msgs.is_ok());
    ASSERT_FALSE(msgs.value().empty());
    auto back = call(client_, broker_port_,
                     request(RequestCode::kConsumerSendMsgBack,
                             {{"offset", std::to_string(msgs.value()[0].commit_log_offset)},
                              {"group", "SG"},
                              {"delayLevel", "1"},
                              {"originTopic", "StatsTopic"},
                              {"maxReconsumeTimes", "16"}}));
    ASSERT_TRUE(back.is_ok());
    ASSERT_EQ(back.value().code, RC::kSuccess) << back.value().remark.value_or("");
    EXPECT_TRUE(eventually(
        [&] { return minute_sum("SNDBCK_PUT_NUMS", "StatsTopic@SG") == int64_t{1}; }, 10s))
        << minute_sum("SNDBCK_PUT_NUMS", "StatsTopic@SG").value_or(-1);

    // Never counted: 4.9.8's SYSTEM_ERROR and remark.
    auto missing = call(client_, broker_port_,
                        request(RequestCode::kViewBrokerStatsData,
                                {{"statsName", "TOPIC_PUT_NUMS"}, {"statsKey", "NoSuchTopic"}}));
    ASSERT_TRUE(missing.is_ok());
    EXPECT_EQ(missing.value().code, RC::kSystemError);
    EXPECT_EQ(missing.value().remark.value_or(""),
              "The stats <TOPIC_PUT_NUMS> <NoSuchTopic> not exist");

    // GET_CONSUME_STATS' consumeTps: the group's per-minute get rate.
    auto consume = call(
        client_, broker_port_,
        request(RequestCode::kGetConsumeStats, {{"consumerGroup", "SG"}, {"topic", "StatsTopic"}}));
    ASSERT_TRUE(consume.is_ok());
    ASSERT_EQ(consume.value().code, RC::kSuccess);
    auto doc = protocol::parse_json_body(consume.value().body);
    ASSERT_TRUE(doc.is_ok());
    ASSERT_TRUE(doc.value().HasMember("consumeTps"));
    EXPECT_GT(doc.value()["consumeTps"].GetDouble(), 0.0) << consume.value().body;

    // mqadmin statsAll: the group is known by its committed offset (QUERY_TOPIC_CONSUME_BY_WHO);
    // the row shows 10 messages in and out over the day and a non-zero in TPS.
    auto commit = call(client_, broker_port_,
                       request(RequestCode::kUpdateConsumerOffset,
                               {{"consumerGroup", "SG"},
                                {"topic", "StatsTopic"},
                                {"queueId", "0"},
                                {"commitOffset", std::to_string(kMessages - 4)}}));
    ASSERT_TRUE(commit.is_ok());
    ASSERT_EQ(commit.value().code, RC::kSuccess);

    // GET_BROKER_CONSUME_STATS (317): with SG's offset committed, its entry for the topic carries
    // the same tps.
    auto broker_stats = call(client_, broker_port_,
                             request(RequestCode::kGetBrokerConsumeStats, {{"isOrder", "false"}}));
    ASSERT_TRUE(broker_stats.is_ok());
    ASSERT_EQ(broker_stats.value().code, RC::kSuccess);
    auto list = protocol::parse_json_body(broker_stats.value().body);
    ASSERT_TRUE(list.is_ok());
    double sg_tps = 0;
    for (const auto& by_group : list.value()["consumeStatsList"].GetArray()) {
        if (by_group.HasMember("SG")) {
            for (const auto& cs : by_group["SG"].GetArray()) {
                sg_tps += cs["consumeTps"].GetDouble();
            }
        }
    }
    EXPECT_GT(sg_tps, 0.0) << broker_stats.value().body;

    CommandResult last;
    const bool listed = eventually(
        [&] {
            last = run_command(dir_, {binary_path("mqadmin"), "statsAll", "-n", addr(namesrv_port_),
                                      "-t", "StatsTopic"});
            if (last.exit_code != 0) {
                return false;
            }
            std::istringstream lines(last.out);
            std::string line;
            while (std::getline(lines, line)) {
                std::istringstream cols(line);
                std::string topic, group, accumulation, in_tps, out_tps, in_day, out_day;
                cols >> topic >> group >> accumulation >> in_tps >> out_tps >> in_day >> out_day;
                if (topic == "StatsTopic" && group == "SG") {
                    return accumulation == "4" && std::stod(in_tps) > 0 && std::stod(out_tps) > 0 &&
                           in_day == std::to_string(kMessages) &&
                           out_day == std::to_string(kMessages);
                }
            }
            return false;
        },
        20s);
    EXPECT_TRUE(listed) << last.out << last.err;
    EXPECT_NE(last.out.find("#Topic"), std::string::npos) << last.out;
    EXPECT_NE(last.out.find("#OutMsg24Hour"), std::string::npos) << last.out;
}

// GET_TOPIC_STATS_INFO's topicPutTps is the topic's TOPIC_PUT_NUMS rate over the last minute
// (it was always 0.0, so the dashboard's topic TPS never moved).
TEST_F(StatsIt, TopicStatsReportThePutRate) {
    EXPECT_EQ(call(client_, broker_port_, create_topic_request("IdleTopic", 1)).value().code,
              RC::kSuccess);
    ASSERT_NO_FATAL_FAILURE(send_and_dispatch(kMessages));
    double tps = -1;
    EXPECT_TRUE(eventually(
        [&] {
            tps = topic_put_tps("StatsTopic");
            return tps > 0;
        },
        10s))
        << tps;
    // kMessages over a window at least a second long.
    EXPECT_LE(tps, double{kMessages});
    EXPECT_EQ(topic_put_tps("IdleTopic"), 0.0);
}

// The figures `mqadmin brokerStatus` shows are measured: the put latency histogram and its
// percentiles, the longest get, the largest dispatch backlog, the delay level's progress, the
// unflushed bytes as 4.9.8 prints them; brokerActive is true on the master only.
TEST_F(StatsIt, BrokerStatusShowsMeasuredFigures) {
    ASSERT_NO_FATAL_FAILURE(send_and_dispatch(kMessages));
    auto pulled = call(client_, broker_port_, pull_message_request("SG", "StatsTopic", 0, 0));
    ASSERT_TRUE(pulled.is_ok());
    // One message on delay level 1 (1 s): SCHEDULE_TOPIC_XXXX queue 0, then delivered.
    auto delayed = call(client_, broker_port_,
                        send_message_request("StatsTopic", "later", 0, {{"DELAY", "1"}}));
    ASSERT_TRUE(delayed.is_ok());
    ASSERT_EQ(delayed.value().code, RC::kSuccess);
    std::map<std::string, std::string> kv;
    EXPECT_TRUE(eventually(
        [&] {
            kv = broker_status(broker_port_);
            return kv["scheduleMessageOffset_1"] == "1,1";
        },
        20s))
        << kv["scheduleMessageOffset_1"];
    EXPECT_EQ(kv["brokerActive"], "true");
    // Every put of this minute is in one of the 13 ranges: the sends and the delivery.
    int64_t puts = 0;
    const std::string dist = kv["putMessageDistributeTime"];
    const std::regex range(R"(\[[^\]]+\]:(\d+) )");
    int ranges = 0;
    for (auto it = std::sregex_iterator(dist.begin(), dist.end(), range);
         it != std::sregex_iterator(); ++it, ++ranges) {
        puts += std::stoll((*it)[1]);
    }
    EXPECT_EQ(ranges, 13) << dist;
    EXPECT_GE(puts, kMessages + 2) << dist;
    const std::regex two_decimals(R"(\d+\.\d\d)");
    EXPECT_TRUE(std::regex_match(kv["putLatency99"], two_decimals)) << kv["putLatency99"];
    EXPECT_TRUE(std::regex_match(kv["putLatency999"], two_decimals)) << kv["putLatency999"];
    EXPECT_GE(std::stod(kv["putLatency999"]), std::stod(kv["putLatency99"]));
    const std::regex count(R"(\d+)");
    for (const char* k : {"getMessageEntireTimeMax", "dispatchMaxBuffer", "pageCacheLockTimeMills",
                          "putMessageEntireTimeMax"}) {
        EXPECT_TRUE(std::regex_match(kv[k], count)) << k << "=" << kv[k];
    }
    EXPECT_TRUE(
        std::regex_match(kv["remainHowManyDataToFlush"], std::regex(R"(\d+ B|\d+\.\d [KMGTPE]iB)")))
        << kv["remainHowManyDataToFlush"];
    int per_path = 0;
    for (const auto& [k, v] : kv) {
        if (k.rfind("commitLogDiskRatio_", 0) == 0) {
            ++per_path;
            EXPECT_EQ(v, kv["commitLogDiskRatio"]);
        }
    }
    EXPECT_EQ(per_path, 1);

    // A slave of the same group does not serve as master.
    const uint16_t slave_port = free_port();
    auto slave = start_broker(dir_, slave_port, addr(namesrv_port_),
                              {{"brokerClusterName", "StatsCluster"},
                               {"brokerName", "broker-a"},
                               {"brokerId", "1"},
                               {"brokerRole", "SLAVE"}},
                              "broker-a-slave");
    ASSERT_TRUE(slave.is_ok()) << slave.status().to_string();
    ASSERT_TRUE(slave.value()->wait_for_port(slave_port, 20s).is_ok()) << slave.value()->log_tail();
    EXPECT_EQ(broker_status(slave_port)["brokerActive"], "false");
}

// accessMessageInMemoryMaxRatio=0: no data counts as in memory, so every found pull is counted
// under GROUP_GET_FROM_DISK_NUMS / _SIZE (topic@group).
class StatsFromDiskIt : public StatsIt {
protected:
    StatsFromDiskIt() { extra_["accessMessageInMemoryMaxRatio"] = "0"; }
};

TEST_F(StatsFromDiskIt, PullsOfDataNotInMemoryCountAsFromDisk) {
    ASSERT_NO_FATAL_FAILURE(send_and_dispatch(3));
    auto pulled = call(client_, broker_port_, pull_message_request("DG", "StatsTopic", 0, 0, 2));
    ASSERT_TRUE(pulled.is_ok());
    ASSERT_EQ(pulled.value().code, RC::kSuccess);
    ASSERT_EQ(*pulled.value().ext("nextBeginOffset"), "2");
    EXPECT_TRUE(eventually(
        [&] { return minute_sum("GROUP_GET_FROM_DISK_NUMS", "StatsTopic@DG") == int64_t{2}; },
        10s))
        << minute_sum("GROUP_GET_FROM_DISK_NUMS", "StatsTopic@DG").value_or(-1);
    EXPECT_GT(minute_sum("GROUP_GET_FROM_DISK_SIZE", "StatsTopic@DG").value_or(0), 0);
}

}  // namespace
}  // namespace comet::it
