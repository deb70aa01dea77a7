// Transactional messages end to end (docs/transactions.md): the C++ TransactionMqProducer
// against real mqnamesrv + mqbroker processes on 127.0.0.1. Each test runs its own cluster with
// short check settings (transactionCheckInterval 300 ms, transactionTimeOut 1 s,
// transactionCheckMax 3). Consumption is checked with a pull consumer reading the whole queue,
// so "exactly once" means one stored message on the real topic. Every wait is bounded.

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "client/admin_client.h"
#include "client/pull_consumer.h"
#include "client/transaction_producer.h"
#include "harness.h"
#include "protocol/message_decoder.h"
#include "protocol/message_id.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::it {
namespace {

using namespace std::chrono_literals;
using namespace comet::client;
namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;

constexpr const char* kBroker = "broker-tx";

// Answers execute / check per message body; counts checks per body. Thread-safe.
class ScriptedListener : public TransactionListener {
public:
    void set(const std::string& body, LocalTransactionState execute,
             LocalTransactionState check) {
        std::lock_guard<std::mutex> l(mu_);
        execute_[body] = execute;
        check_[body] = check;
    }
    void set_check(const std::string& body, LocalTransactionState check) {
        std::lock_guard<std::mutex> l(mu_);
        check_[body] = check;
    }
    // Only the first check of `body` gets its scripted answer, later ones UNKNOWN: with the
    // tests' 300 ms check interval a second check may leave before the first answer is
    // processed, and two COMMIT answers to two checks commit twice (at-least-once, as RocketMQ).
    void answer_first_check_only(const std::string& body) {
        std::lock_guard<std::mutex> l(mu_);
        first_only_.insert(body);
    }
    int checks(const std::string& body) {
        std::lock_guard<std::mutex> l(mu_);
        return checks_[body];
    }
    int executed(const std::string& body) {
        std::lock_guard<std::mutex> l(mu_);
        return executed_[body];
    }
    std::string last_check_times(const std::string& body) {
        std::lock_guard<std::mutex> l(mu_);
        return check_times_[body];
    }
    // Runs inside execute_local_transaction: the half is stored, not yet committed.
    std::function<void(const Message&)> during_execute;

    LocalTransactionState execute_local_transaction(const Message& msg, void*) override {
        if (during_execute) {
            during_execute(msg);
        }
        std::lock_guard<std::mutex> l(mu_);
        ++executed_[msg.body];
        auto it = execute_.find(msg.body);
        return it == execute_.end() ? LocalTransactionState::kUnknown : it->second;
    }
    LocalTransactionState check_local_transaction(const MessageExt& msg) override {
        std::lock_guard<std::mutex> l(mu_);
        ++checks_[msg.body];
        if (const std::string* t = msg.property("TRANSACTION_CHECK_TIMES")) {
            check_times_[msg.body] = *t;
        }
        if (first_only_.count(msg.body) != 0 && checks_[msg.body] > 1) {
            return LocalTransactionState::kUnknown;
        }
        auto it = check_.find(msg.body);
        return it == check_.end() ? LocalTransactionState::kUnknown : it->second;
    }

private:
    std::mutex mu_;
    std::map<std::string, LocalTransactionState> execute_;
    std::map<std::string, LocalTransactionState> check_;
    std::map<std::string, int> checks_;
    std::map<std::string, int> executed_;
    std::map<std::string, std::string> check_times_;
    std::set<std::string> first_only_;
};

class TransactionIt : public ::testing::Test {
protected:
    void start_cluster(std::map<std::string, std::string> broker_extra = {}) {
        ns_port_ = free_port();
        broker_port_ = free_port();
        auto ns = start_namesrv(dir_, ns_port_);
        ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
        ns_ = std::move(ns).value();
        ASSERT_TRUE(ns_->wait_for_port(ns_port_, 10s).is_ok()) << ns_->log_tail();
        broker_conf_ = {{"transactionCheckInterval", "300"},
                        {"transactionTimeOut", "1000"},
                        {"transactionCheckMax", "3"}};
        for (auto& [k, v] : broker_extra) {
            broker_conf_[k] = v;
        }
        start_broker_process();
        AdminClient admin(client_config());
        ASSERT_TRUE(admin.start().is_ok());
        TopicCreateOptions o;
        o.read_queue_nums = 1;
        o.write_queue_nums = 1;
        ASSERT_TRUE(admin.create_topic(addr(broker_port_), kTopic, o).is_ok());
        ASSERT_TRUE(eventually([&] { return admin.topic_route(kTopic).is_ok(); }, 10s));
    }

    void start_broker_process() {
        auto b = start_broker(dir_, broker_port_, addr(ns_port_), broker_conf_, kBroker);
        ASSERT_TRUE(b.is_ok()) << b.status().to_string();
        broker_ = std::move(b).value();
        ASSERT_TRUE(broker_->wait_for_port(broker_port_, 20s).is_ok()) << tx_log();
    }

    // The broker log's transaction lines (failure messages).
    std::string tx_log() const {
        std::string out;
        const std::string log = broker_ ? broker_->log() : std::string();
        size_t pos = 0;
        while (pos < log.size()) {
            size_t end = log.find('\n', pos);
            if (end == std::string::npos) {
                end = log.size();
            }
            const std::string line = log.substr(pos, end - pos);
            if (line.find("ransaction") != std::string::npos ||
                line.find("heck") != std::string::npos) {
                out += line + "\n";
            }
            pos = end + 1;
        }
        return out.size() > 6000 ? out.substr(out.size() - 6000) : out;
    }

    ClientConfig client_config() const {
        ClientConfig c;
        c.namesrv_addr = addr(ns_port_);
        c.heartbeat_broker_interval = 500ms;
        c.poll_name_server_interval = 1s;
        return c;
    }

    std::unique_ptr<TransactionMqProducer> start_producer(ScriptedListener* listener) {
        ProducerConfig pc;
        pc.client = client_config();
        pc.group = "TxGroup";
        auto p = std::make_unique<TransactionMqProducer>(pc, listener);
        EXPECT_TRUE(p->start().is_ok());
        return p;
    }

    // Every message stored on the real topic's queue, in order.
    std::vector<std::string> delivered() {
        std::vector<std::string> out;
        for (const auto& m : delivered_messages()) {
            out.push_back(m.body);
        }
        return out;
    }
    std::vector<MessageExt> delivered_messages() {
        PullConsumerConfig cc;
        cc.client = client_config();
        cc.group = "TxReader";
        DefaultMqPullConsumer consumer(cc);
        std::vector<MessageExt> out;
        if (!consumer.start().is_ok()) {
            return out;
        }
        const MessageQueue mq{kTopic, kBroker, 0};
        int64_t offset = 0;
        for (int i = 0; i < 100; ++i) {
            auto r = consumer.pull(mq, "*", offset, 32);
            if (!r.is_ok() || r->status != PullStatus::kFound) {
                break;
            }
            for (const auto& m : r->messages) {
                out.push_back(m);
            }
            offset = r->next_begin_offset;
        }
        consumer.shutdown();
        return out;
    }
    int delivered_count(const std::string& body) {
        int n = 0;
        for (const auto& b : delivered()) {
            n += b == body ? 1 : 0;
        }
        return n;
    }

    // GET_MAX_OFFSET of a (system) topic's queue 0 on the broker; -1 on error.
    int64_t max_offset(const std::string& topic, uint16_t port = 0) {
        auto r = call(raw_, port != 0 ? port : broker_port_,
                      request(Req::kGetMaxOffset, {{"topic", topic}, {"queueId", "0"}}));
        if (!r.is_ok() || r->code != RC::kSuccess || !r->ext("offset")) {
            return -1;
        }
        return std::stoll(*r->ext("offset"));
    }

    // Barrier: a fresh UNKNOWN transaction gets checked once, so the check service has scanned
    // every half stored before it (one queue, scanned in order).
    void wait_for_a_check_round(TransactionMqProducer& producer, ScriptedListener& listener,
                                const std::string& marker) {
        listener.set(marker, LocalTransactionState::kUnknown,
                     LocalTransactionState::kRollbackMessage);
        auto r = producer.send_message_in_transaction(Message(kTopic, marker));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_TRUE(eventually([&] { return listener.checks(marker) >= 1; }, 20s))
            << tx_log();
    }

    static constexpr const char* kTopic = "TxTopic";
    TempDir dir_{"comet_it_tx"};
    uint16_t ns_port_ = 0;
    uint16_t broker_port_ = 0;
    std::map<std::string, std::string> broker_conf_;
    std::unique_ptr<Process> ns_;
    std::unique_ptr<Process> broker_;
    net::RemotingClient raw_{net::RemotingClientConfig{}};
};

TEST_F(TransactionIt, HalfIsInvisibleUntilCommitThenDeliveredExactlyOnce) {
    ASSERT_NO_FATAL_FAILURE(start_cluster());
    raw_.start();
    ScriptedListener listener;
    listener.set("commit-me", LocalTransactionState::kCommitMessage,
                 LocalTransactionState::kCommitMessage);
    bool half_stored = false;
    int visible_before_commit = -1;
    listener.during_execute = [&](const Message&) {
        // The half is in RMQ_SYS_TRANS_HALF_TOPIC; the real topic shows nothing yet.
        half_stored = eventually(
            [&] { return max_offset("RMQ_SYS_TRANS_HALF_TOPIC") >= 1; }, 10s);
        visible_before_commit = static_cast<int>(delivered().size());
    };
    auto producer = start_producer(&listener);
    auto r = producer->send_message_in_transaction(Message(kTopic, "commit-me", "TagT"));
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->send_result.status, SendStatus::kSendOk);
    EXPECT_EQ(r->local_transaction_state, LocalTransactionState::kCommitMessage);
    EXPECT_EQ(r->send_result.message_queue.topic, kTopic);
    EXPECT_FALSE(r->transaction_id.empty());
    EXPECT_TRUE(half_stored);
    EXPECT_EQ(visible_before_commit, 0);
    listener.during_execute = nullptr;

    ASSERT_TRUE(eventually([&] { return delivered_count("commit-me") == 1; }, 10s))
        << tx_log();
    // 4.9.8's committed message keeps the half's properties: REAL_TOPIC, REAL_QID, TRAN_MSG.
    for (const auto& m : delivered_messages()) {
        if (m.body == "commit-me") {
            ASSERT_NE(m.property("REAL_TOPIC"), nullptr);
            EXPECT_EQ(*m.property("REAL_TOPIC"), kTopic);
            ASSERT_NE(m.property("REAL_QID"), nullptr);
            EXPECT_EQ(*m.property("REAL_QID"), "0");
            ASSERT_NE(m.property("TRAN_MSG"), nullptr);
            EXPECT_EQ(*m.property("TRAN_MSG"), "true");
            ASSERT_NE(m.property("PGROUP"), nullptr);
            EXPECT_EQ(*m.property("PGROUP"), "TxGroup");
            EXPECT_EQ(*m.property("TAGS"), "TagT");
        }
    }
    wait_for_a_check_round(*producer, listener, "barrier");
    EXPECT_EQ(delivered_count("commit-me"), 1);
    EXPECT_EQ(listener.checks("commit-me"), 0);  // resolved: never checked back
    producer->shutdown();
}

TEST_F(TransactionIt, RollbackIsNeverDelivered) {
    ASSERT_NO_FATAL_FAILURE(start_cluster());
    raw_.start();
    ScriptedListener listener;
    listener.set("roll-me", LocalTransactionState::kRollbackMessage,
                 LocalTransactionState::kCommitMessage);
    auto producer = start_producer(&listener);
    auto r = producer->send_message_in_transaction(Message(kTopic, "roll-me"));
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->local_transaction_state, LocalTransactionState::kRollbackMessage);
    // The op message marks it resolved.
    ASSERT_TRUE(eventually([&] { return max_offset("RMQ_SYS_TRANS_OP_HALF_TOPIC") >= 1; }, 10s));
    wait_for_a_check_round(*producer, listener, "barrier");
    EXPECT_EQ(delivered_count("roll-me"), 0);
    EXPECT_EQ(listener.checks("roll-me"), 0);
    producer->shutdown();
}

TEST_F(TransactionIt, UnknownThenCheckBackCommits) {
    ASSERT_NO_FATAL_FAILURE(start_cluster());
    raw_.start();
    ScriptedListener listener;
    listener.set("later", LocalTransactionState::kUnknown, LocalTransactionState::kCommitMessage);
    listener.answer_first_check_only("later");
    auto producer = start_producer(&listener);
    auto r = producer->send_message_in_transaction(Message(kTopic, "later"));
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->local_transaction_state, LocalTransactionState::kUnknown);
    ASSERT_TRUE(eventually([&] { return delivered_count("later") == 1; }, 20s))
        << tx_log();
    EXPECT_GE(listener.checks("later"), 1);
    EXPECT_EQ(listener.last_check_times("later"), std::to_string(listener.checks("later")));
    wait_for_a_check_round(*producer, listener, "barrier");
    EXPECT_EQ(delivered_count("later"), 1);
    producer->shutdown();
}

TEST_F(TransactionIt, UnknownForeverIsDiscardedAfterCheckMax) {
    ASSERT_NO_FATAL_FAILURE(start_cluster());
    raw_.start();
    ScriptedListener listener;
    listener.set("limbo", LocalTransactionState::kUnknown, LocalTransactionState::kUnknown);
    auto producer = start_producer(&listener);
    ASSERT_TRUE(producer->send_message_in_transaction(Message(kTopic, "limbo")).is_ok());
    // transactionCheckMax=3 checks, then the half moves to TRANS_CHECK_MAX_TIME_TOPIC.
    ASSERT_TRUE(eventually([&] { return max_offset("TRANS_CHECK_MAX_TIME_TOPIC") >= 1; }, 30s))
        << tx_log();
    EXPECT_TRUE(eventually([&] { return listener.checks("limbo") == 3; }, 5s))
        << listener.checks("limbo");
    EXPECT_EQ(listener.last_check_times("limbo"), "3");
    EXPECT_NE(broker_->log().find("checked too many times"), std::string::npos);
    wait_for_a_check_round(*producer, listener, "barrier");
    EXPECT_EQ(listener.checks("limbo"), 3);
    EXPECT_EQ(delivered_count("limbo"), 0);
    producer->shutdown();
}

// A half inside its CHECK_IMMUNITY_TIME_IN_SECONDS does not hold back the halves behind it
// (4.9.8 re-appends it with TRAN_PREPARED_QUEUE_OFFSET and goes on); it is never checked while
// immune, and each re-append counts as a check, so transactionCheckMax (3) renewals discard it.
TEST_F(TransactionIt, ImmuneHalfIsRenewedAndDoesNotHoldBackTheRound) {
    ASSERT_NO_FATAL_FAILURE(start_cluster());
    raw_.start();
    ScriptedListener listener;
    listener.set("immune", LocalTransactionState::kUnknown, LocalTransactionState::kCommitMessage);
    listener.set("behind", LocalTransactionState::kUnknown, LocalTransactionState::kCommitMessage);
    listener.answer_first_check_only("behind");
    auto producer = start_producer(&listener);
    Message immune(kTopic, "immune");
    immune.properties.set("CHECK_IMMUNITY_TIME_IN_SECONDS", "600");
    ASSERT_TRUE(producer->send_message_in_transaction(immune).is_ok());
    ASSERT_TRUE(producer->send_message_in_transaction(Message(kTopic, "behind")).is_ok());

    // The half behind the immune one is checked and committed.
    ASSERT_TRUE(eventually([&] { return delivered_count("behind") == 1; }, 20s)) << tx_log();
    // The immune half was re-appended naming its original queue offset (0), one more check
    // counted, and never sent to the producer.
    bool renewed = false;
    ASSERT_TRUE(eventually(
        [&] {
            auto r = call(raw_, broker_port_,
                          pull_message_request("TxProbe", "RMQ_SYS_TRANS_HALF_TOPIC", 0, 0, 64));
            if (!r.is_ok() || r->code != RC::kSuccess) {
                return false;
            }
            auto msgs = protocol::decode_messages(r->body);
            if (!msgs.is_ok()) {
                return false;
            }
            for (const auto& m : msgs.value()) {
                const std::string* orig = m.property("TRAN_PREPARED_QUEUE_OFFSET");
                if (m.body == "immune" && orig != nullptr && *orig == "0" &&
                    m.property("TRANSACTION_CHECK_TIMES") != nullptr) {
                    renewed = true;
                }
            }
            return renewed;
        },
        10s))
        << tx_log();
    ASSERT_TRUE(eventually([&] { return max_offset("TRANS_CHECK_MAX_TIME_TOPIC") >= 1; }, 20s))
        << tx_log();
    EXPECT_EQ(listener.checks("immune"), 0);
    EXPECT_EQ(delivered_count("immune"), 0);
    producer->shutdown();
}

// The check discards halves older than the store's fileReservedTime (here 1 h), not a fixed
// 72 h; a younger one is checked as usual.
TEST_F(TransactionIt, HalfOlderThanFileReservedTimeIsDiscarded) {
    ASSERT_NO_FATAL_FAILURE(start_cluster({{"fileReservedTime", "1"}}));
    raw_.start();
    ScriptedListener listener;
    listener.set("young", LocalTransactionState::kUnknown, LocalTransactionState::kRollbackMessage);
    listener.set("old", LocalTransactionState::kUnknown, LocalTransactionState::kCommitMessage);
    auto producer = start_producer(&listener);
    // The producer's channel is known to the broker once one check reached it.
    ASSERT_NO_FATAL_FAILURE(wait_for_a_check_round(*producer, listener, "barrier"));
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    // Raw halves of the producer's group, born 2 h and 30 min ago.
    auto half = [&](const std::string& body, int64_t age_ms) {
        auto req = send_message_request(kTopic, body, 0, {{"TRAN_MSG", "true"}, {"PGROUP", "TxGroup"}});
        req.set_ext("a", "TxGroup");
        req.set_ext("f", "4");  // TRANSACTION_PREPARED_TYPE
        req.set_ext("g", std::to_string(now - age_ms));
        auto r = call(raw_, broker_port_, std::move(req));
        ASSERT_TRUE(r.is_ok()) << r.status().to_string();
        ASSERT_EQ(r->code, RC::kSuccess) << r->remark.value_or("");
    };
    ASSERT_NO_FATAL_FAILURE(half("old", 2 * 3600 * 1000));
    ASSERT_NO_FATAL_FAILURE(half("young", 30 * 60 * 1000));
    ASSERT_TRUE(eventually([&] { return listener.checks("young") >= 1; }, 20s)) << tx_log();
    ASSERT_TRUE(eventually([&] { return max_offset("TRANS_CHECK_MAX_TIME_TOPIC") >= 1; }, 10s))
        << tx_log();
    EXPECT_EQ(listener.checks("old"), 0);
    EXPECT_EQ(delivered_count("old"), 0);
    EXPECT_EQ(delivered_count("young"), 0);
    producer->shutdown();
}

// A committed half with a DELAY level goes through SCHEDULE_TOPIC_XXXX (4.9.8's CommitLog
// schedules COMMIT_TYPE messages) and then reaches the real topic without TRAN_MSG.
TEST_F(TransactionIt, CommittedHalfWithDelayIsScheduled) {
    ASSERT_NO_FATAL_FAILURE(start_cluster({{"transactionTimeOut", "60000"}}));
    raw_.start();
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    auto req = send_message_request(kTopic, "delayed-commit", 0,
                                    {{"TRAN_MSG", "true"}, {"PGROUP", "TxGroup"}, {"DELAY", "1"}});
    req.set_ext("a", "TxGroup");
    req.set_ext("f", "4");  // TRANSACTION_PREPARED_TYPE
    req.set_ext("g", std::to_string(now));
    auto sent = call(raw_, broker_port_, std::move(req));
    ASSERT_TRUE(sent.is_ok()) << sent.status().to_string();
    ASSERT_EQ(sent->code, RC::kSuccess) << sent->remark.value_or("");
    ASSERT_NE(sent->ext("msgId"), nullptr);
    ASSERT_NE(sent->ext("queueOffset"), nullptr);
    auto id = protocol::decode_offset_msg_id(*sent->ext("msgId"));
    ASSERT_TRUE(id.is_ok());
    auto end = request(Req::kEndTransaction,
                       {{"producerGroup", "TxGroup"},
                        {"tranStateTableOffset", *sent->ext("queueOffset")},
                        {"commitLogOffset", std::to_string(id->physical_offset)},
                        {"commitOrRollback", "8"},
                        {"fromTransactionCheck", "false"},
                        {"msgId", *sent->ext("msgId")}});
    auto resp = call(raw_, broker_port_, std::move(end));
    ASSERT_TRUE(resp.is_ok()) << resp.status().to_string();
    ASSERT_EQ(resp->code, RC::kSuccess) << resp->remark.value_or("");
    // Level 1 is queue 0 of the schedule topic.
    ASSERT_TRUE(eventually([&] { return max_offset("SCHEDULE_TOPIC_XXXX") >= 1; }, 10s))
        << tx_log();
    ASSERT_TRUE(eventually([&] { return delivered_count("delayed-commit") == 1; }, 15s))
        << tx_log();
    for (const auto& m : delivered_messages()) {
        if (m.body == "delayed-commit") {
            EXPECT_EQ(m.property("TRAN_MSG"), nullptr);
            ASSERT_NE(m.property("REAL_TOPIC"), nullptr);
            EXPECT_EQ(*m.property("REAL_TOPIC"), kTopic);
        }
    }
}

TEST_F(TransactionIt, HalfSurvivesKill9AndIsCommittedAfterRestart) {
    ASSERT_NO_FATAL_FAILURE(start_cluster({{"transactionTimeOut", "60000"}}));
    raw_.start();
    ScriptedListener listener;
    listener.set("by-end", LocalTransactionState::kUnknown, LocalTransactionState::kUnknown);
    listener.set("by-check", LocalTransactionState::kUnknown, LocalTransactionState::kUnknown);
    auto producer = start_producer(&listener);
    auto by_end = producer->send_message_in_transaction(Message(kTopic, "by-end"));
    ASSERT_TRUE(by_end.is_ok()) << by_end.status().to_string();
    auto by_check = producer->send_message_in_transaction(Message(kTopic, "by-check"));
    ASSERT_TRUE(by_check.is_ok()) << by_check.status().to_string();
    // Both halves dispatched (and indexed) before the kill.
    ASSERT_TRUE(eventually([&] { return max_offset("RMQ_SYS_TRANS_HALF_TOPIC") >= 2; }, 10s));
    ASSERT_TRUE(eventually(
        [&] {
            auto q = call(raw_, broker_port_,
                          request(Req::kQueryMessage, {{"topic", "RMQ_SYS_TRANS_HALF_TOPIC"},
                                                       {"key", by_check->transaction_id},
                                                       {"maxNum", "32"},
                                                       {"beginTimestamp", "0"},
                                                       {"endTimestamp", "9223372036854775807"}}));
            return q.is_ok() && q->code == RC::kSuccess;
        },
        10s));
    broker_->sigkill();
    raw_.close_connection(addr(broker_port_));
    ASSERT_NO_FATAL_FAILURE(start_broker_process());

    // END_TRANSACTION with the offsets of the original send, as a late producer would.
    auto id = protocol::decode_offset_msg_id(by_end->send_result.offset_msg_id);
    ASSERT_TRUE(id.is_ok());
    auto end = request(Req::kEndTransaction,
                       {{"producerGroup", "TxGroup"},
                        {"tranStateTableOffset", std::to_string(by_end->send_result.queue_offset)},
                        {"commitLogOffset", std::to_string(id->physical_offset)},
                        {"commitOrRollback", "8"},
                        {"fromTransactionCheck", "false"},
                        {"msgId", by_end->send_result.msg_id},
                        {"transactionId", by_end->transaction_id}});
    auto resp = call(raw_, broker_port_, std::move(end));
    ASSERT_TRUE(resp.is_ok()) << resp.status().to_string();
    EXPECT_EQ(resp->code, RC::kSuccess) << resp->remark.value_or("");
    ASSERT_TRUE(eventually([&] { return delivered_count("by-end") == 1; }, 10s));

    // The other half is checked back by the restarted broker (the producer reconnects with
    // its heartbeat) once its immunity passes; now the producer knows it committed.
    listener.answer_first_check_only("by-check");
    listener.set_check("by-check", LocalTransactionState::kCommitMessage);
    auto upd = call(raw_, broker_port_,
                    request(Req::kUpdateBrokerConfig, {},
                            "transactionTimeOut=1000\n"));
    ASSERT_TRUE(upd.is_ok());
    ASSERT_EQ(upd->code, RC::kSuccess) << upd->remark.value_or("");
    ASSERT_TRUE(eventually([&] { return delivered_count("by-check") == 1; }, 30s))
        << tx_log();
    EXPECT_EQ(delivered_count("by-end"), 1);
    EXPECT_GE(listener.checks("by-check"), 1);
    // by-end was resolved by its END_TRANSACTION: never checked.
    EXPECT_EQ(listener.checks("by-end"), 0);
    producer->shutdown();
}

TEST_F(TransactionIt, RejectTransactionMessageRefuses) {
    ASSERT_NO_FATAL_FAILURE(start_cluster({{"rejectTransactionMessage", "true"}}));
    raw_.start();
    ScriptedListener listener;
    auto producer = start_producer(&listener);
    auto r = producer->send_message_in_transaction(Message(kTopic, "refused"));
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("sending transaction message is forbidden"),
              std::string::npos)
        << r.status().to_string();
    EXPECT_EQ(listener.executed("refused"), 0);
    // The raw send answers NO_PERMISSION.
    auto raw = call(raw_, broker_port_,
                    send_message_request(kTopic, "raw", 0, {{"TRAN_MSG", "true"}, {"PGROUP", "G"}}));
    ASSERT_TRUE(raw.is_ok());
    EXPECT_EQ(raw->code, RC::kNoPermission);
    EXPECT_EQ(max_offset("RMQ_SYS_TRANS_HALF_TOPIC"), 0);
    producer->shutdown();
}

// A master and a slave: halves, ops and the committed message replicate like any message, and
// the slave answers END_TRANSACTION with SLAVE_NOT_AVAILABLE (4.9.8) without touching its store.
TEST_F(TransactionIt, SlaveReplicatesTheOutcomeAndRefusesEndTransaction) {
    ns_port_ = free_port();
    auto ns = start_namesrv(dir_, ns_port_);
    ASSERT_TRUE(ns.is_ok()) << ns.status().to_string();
    ns_ = std::move(ns).value();
    ASSERT_TRUE(ns_->wait_for_port(ns_port_, 10s).is_ok()) << ns_->log_tail();
    BrokerGroupOptions o;
    o.broker_name = kBroker;
    o.slaves = 1;
    o.common_config = {{"transactionCheckInterval", "300"},
                       {"transactionTimeOut", "1000"},
                       {"transactionCheckMax", "3"}};
    auto g = BrokerGroup::start(dir_, addr(ns_port_), std::move(o));
    ASSERT_TRUE(g.is_ok()) << g.status().to_string();
    auto& group = *g.value();
    broker_port_ = group.master().port;
    const uint16_t slave_port = group.slave(0).port;
    raw_.start();
    {
        AdminClient admin(client_config());
        ASSERT_TRUE(admin.start().is_ok());
        TopicCreateOptions t;
        t.read_queue_nums = 1;
        t.write_queue_nums = 1;
        ASSERT_TRUE(admin.create_topic(addr(broker_port_), kTopic, t).is_ok());
        ASSERT_TRUE(eventually([&] { return admin.topic_route(kTopic).is_ok(); }, 10s));
    }
    ScriptedListener listener;
    listener.set("replicated", LocalTransactionState::kCommitMessage,
                 LocalTransactionState::kCommitMessage);
    auto producer = start_producer(&listener);
    auto r = producer->send_message_in_transaction(Message(kTopic, "replicated"));
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    ASSERT_TRUE(eventually([&] { return delivered_count("replicated") == 1; }, 10s));
    ASSERT_TRUE(eventually(
        [&] {
            return max_offset(kTopic, slave_port) == 1 &&
                   max_offset("RMQ_SYS_TRANS_HALF_TOPIC", slave_port) == 1 &&
                   max_offset("RMQ_SYS_TRANS_OP_HALF_TOPIC", slave_port) == 1;
        },
        20s));

    auto id = protocol::decode_offset_msg_id(r->send_result.offset_msg_id);
    ASSERT_TRUE(id.is_ok());
    auto end = request(Req::kEndTransaction,
                       {{"producerGroup", "TxGroup"},
                        {"tranStateTableOffset", std::to_string(r->send_result.queue_offset)},
                        {"commitLogOffset", std::to_string(id->physical_offset)},
                        {"commitOrRollback", "8"},
                        {"fromTransactionCheck", "false"},
                        {"msgId", r->send_result.msg_id}});
    auto resp = call(raw_, slave_port, std::move(end));
    ASSERT_TRUE(resp.is_ok()) << resp.status().to_string();
    EXPECT_EQ(resp->code, RC::kSlaveNotAvailable);
    EXPECT_EQ(max_offset(kTopic, slave_port), 1);
    producer->shutdown();
}

}  // namespace
}  // namespace comet::it
