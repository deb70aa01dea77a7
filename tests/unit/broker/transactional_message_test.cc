// Transactional messages: the pure decisions (transactional_message_util) and
// TransactionalMessageService over the in-memory store and a manual clock: END_TRANSACTION
// commit / rollback, which halves the check service asks about, when it discards them, and
// that its progress is the CID_SYS_RMQ_TRANS consumer offsets.

#include <gtest/gtest.h>

#include <vector>

#include "broker/transaction/transactional_message_service.h"
#include "broker/transaction/transactional_message_util.h"
#include "broker_context_fixture.h"
#include "protocol/message_decoder.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::broker {
namespace {

using namespace std::chrono_literals;
namespace P = protocol::property;
namespace SF = protocol::sysflag;
namespace RC = protocol::ResponseCode;

protocol::MessageExt prepared(const std::string& topic, int32_t qid, const std::string& body) {
    protocol::MessageExt m;
    m.topic = topic;
    m.queue_id = qid;
    m.body = body;
    m.sys_flag = SF::kTransactionPreparedType;
    m.set_property(P::kTransactionPrepared, "true");
    m.set_property(P::kProducerGroup, "PG");
    m.set_property(P::kUniqClientMessageIdKeyIdx, "UNIQ-" + body);
    m.set_property(P::kTags, "TagA");
    return m;
}

TEST(TransactionalMessageUtil, HalfKeepsRealTopicAndQueue) {
    protocol::MessageExt m = prepared("Orders", 3, "b");
    EXPECT_TRUE(is_transaction_prepared(m));
    to_half_message(&m);
    EXPECT_EQ(m.topic, kTransHalfTopic);
    EXPECT_EQ(m.queue_id, 0);
    EXPECT_EQ(SF::transaction_value(m.sys_flag), SF::kTransactionNotType);
    EXPECT_EQ(*m.property(P::kRealTopic), "Orders");
    EXPECT_EQ(*m.property(P::kRealQueueId), "3");

    m.commit_log_offset = 1234;
    auto out = end_message_transaction(m);
    ASSERT_TRUE(out.is_ok());
    EXPECT_EQ(out->topic, "Orders");
    EXPECT_EQ(out->queue_id, 3);
    EXPECT_EQ(out->body, "b");
    EXPECT_EQ(SF::transaction_value(out->sys_flag), SF::kTransactionCommitType);
    EXPECT_EQ(out->prepared_transaction_offset, 1234);
    // 4.9.8 stores the half's property string: REAL_TOPIC / REAL_QID / TRAN_MSG stay.
    EXPECT_EQ(*out->property(P::kRealTopic), "Orders");
    EXPECT_EQ(*out->property(P::kRealQueueId), "3");
    EXPECT_EQ(*out->property(P::kTransactionPrepared), "true");
    EXPECT_EQ(out->properties, m.properties);
    EXPECT_EQ(*out->property(P::kTags), "TagA");
    EXPECT_EQ(*out->property(P::kProducerGroup), "PG");
}

TEST(TransactionalMessageUtil, PreparedFlagParsesLikeJavaBoolean) {
    protocol::MessageExt m;
    EXPECT_FALSE(is_transaction_prepared(m));
    m.set_property(P::kTransactionPrepared, "TRUE");
    EXPECT_TRUE(is_transaction_prepared(m));
    m.set_property(P::kTransactionPrepared, "yes");
    EXPECT_FALSE(is_transaction_prepared(m));
}

TEST(TransactionalMessageUtil, EndWithoutRealTopicIsAnError) {
    protocol::MessageExt m;
    m.topic = std::string(kTransHalfTopic);
    EXPECT_FALSE(end_message_transaction(m).is_ok());
    m.set_property(P::kRealTopic, "T");
    m.set_property(P::kRealQueueId, "x");
    EXPECT_FALSE(end_message_transaction(m).is_ok());
}

TEST(TransactionalMessageUtil, OpMessageBodyIsTheHalfOffset) {
    protocol::MessageExt op = make_op_message(42, 1000);
    EXPECT_EQ(op.topic, kTransOpHalfTopic);
    EXPECT_EQ(op.body, "42");
    EXPECT_EQ(op.tags(), "d");
    EXPECT_EQ(parse_op_body(op.body), 42);
    EXPECT_EQ(parse_op_body("4x"), std::nullopt);
    EXPECT_EQ(parse_op_body(""), std::nullopt);
}

TEST(TransactionalMessageUtil, OpsSplitByHalfOffset) {
    // ops 10..13 name halves 1, 5, 3, and an unreadable one; the half scan starts at 3.
    const std::vector<OpEntry> ops = {{10, 1}, {11, 5}, {12, 3}, {13, std::nullopt}};
    OpScan s = scan_ops(ops, 3);
    EXPECT_EQ(s.done, (std::set<int64_t>{10, 13}));
    EXPECT_EQ(s.removed, (std::map<int64_t, int64_t>{{3, 12}, {5, 11}}));
}

TEST(TransactionalMessageUtil, OpOffsetAdvancesOverContiguousDoneOnly) {
    EXPECT_EQ(next_op_offset(10, {}), 10);
    EXPECT_EQ(next_op_offset(10, {10, 11, 13}), 12);
    EXPECT_EQ(next_op_offset(10, {11, 12}), 10);
    EXPECT_EQ(next_op_offset(10, {8, 9, 10}), 11);
}

TEST(TransactionalMessageUtil, DecideHalf) {
    CheckPolicy p;
    p.transaction_timeout_ms = 6000;
    p.transaction_check_max = 2;
    protocol::MessageExt h;
    h.born_timestamp = 100'000;
    EXPECT_EQ(decide_half(h, 100'000 + 5999, p), HalfAction::kNotYet);
    EXPECT_EQ(decide_half(h, 100'000 + 6000, p), HalfAction::kCheck);
    EXPECT_EQ(decide_half(h, 100'000 - 1, p), HalfAction::kCheck);  // born in the future
    h.set_property(kTransactionCheckTimes, "1");
    EXPECT_EQ(check_times(h), 1);
    EXPECT_EQ(decide_half(h, 200'000, p), HalfAction::kCheck);
    h.set_property(kTransactionCheckTimes, "2");
    EXPECT_EQ(decide_half(h, 200'000, p), HalfAction::kDiscard);
    // Too young, but already checked too often: discarded (Java needDiscard comes first).
    EXPECT_EQ(decide_half(h, 100'001, p), HalfAction::kDiscard);

    protocol::MessageExt imm;
    imm.born_timestamp = 100'000;
    imm.set_property(kCheckImmunityTimeInSeconds, "20");
    // Inside its own immunity a half is renewed (the scan goes on), not waited for.
    EXPECT_EQ(decide_half(imm, 100'000 + 19'999, p), HalfAction::kImmune);
    EXPECT_EQ(decide_half(imm, 100'000 - 1, p), HalfAction::kImmune);  // born in the future
    EXPECT_EQ(decide_half(imm, 100'000 + 20'000, p), HalfAction::kCheck);
    EXPECT_EQ(immunity_ms(imm, 6000), 20'000);
    imm.set_property(kCheckImmunityTimeInSeconds, "junk");  // falls back to transactionTimeOut
    EXPECT_EQ(immunity_ms(imm, 6000), 6000);
    EXPECT_EQ(decide_half(imm, 100'000 + 5'999, p), HalfAction::kImmune);
    EXPECT_EQ(decide_half(imm, 100'000 + 6'000, p), HalfAction::kCheck);
    imm.set_property(kCheckImmunityTimeInSeconds, "-1");
    EXPECT_EQ(immunity_ms(imm, 6000), 6000);

    protocol::MessageExt old;
    old.born_timestamp = 0;
    EXPECT_EQ(decide_half(old, p.file_reserved_ms + 1, p), HalfAction::kSkip);
}

class TransactionalServiceTest : public testing::BrokerContextTest {
protected:
    TransactionalServiceTest() {
        (void)config_.update({{"transactionCheckMax", "2"}, {"transactionTimeOut", "6000"}});
        TransactionalMessageService::Deps d;
        d.config = &config_;
        d.clock = &clock_;
        d.store = &store_;
        d.topics = &topics_;
        d.offsets = &offsets_;
        d.send_check = [this](const std::string& group, protocol::RemotingCommand req) {
            checks_.push_back({group, std::move(req)});
            return true;
        };
        service_ = std::make_unique<TransactionalMessageService>(std::move(d));
        service_->ensure_topics();
    }

    // Stores a half the way the send path does; returns its (CommitLog, queue) offsets.
    std::pair<int64_t, int64_t> put_half(const std::string& body) {
        protocol::MessageExt m = prepared("Orders", 1, body);
        m.born_timestamp = clock_.wall_millis();
        to_half_message(&m);
        std::pair<int64_t, int64_t> at;
        store_.put_message(std::move(m), [&at](store::PutMessageResult r) {
            at = {r.append.wrote_offset.value(), r.append.logics_offset.value()};
        });
        return at;
    }

    protocol::EndTransactionRequestHeader end_header(std::pair<int64_t, int64_t> at, int32_t how) {
        protocol::EndTransactionRequestHeader h;
        h.producer_group = "PG";
        h.commit_log_offset = at.first;
        h.tran_state_table_offset = at.second;
        h.commit_or_rollback = how;
        h.msg_id = "m";
        return h;
    }

    int64_t half_consumed() {
        return offsets_.query_offset(std::string(kTransSysGroup), std::string(kTransHalfTopic), 0);
    }

    struct Sent {
        std::string group;
        protocol::RemotingCommand req;
    };
    std::vector<Sent> checks_;
    std::unique_ptr<TransactionalMessageService> service_;
};

TEST_F(TransactionalServiceTest, CommitStoresOnTheRealQueueAndWritesAnOp) {
    const auto at = put_half("a");
    EXPECT_EQ(store_.max_offset_in_queue("Orders", 1), 0);
    auto r = service_->end_transaction(end_header(at, SF::kTransactionCommitType));
    EXPECT_EQ(r.code, RC::kSuccess);
    ASSERT_EQ(store_.max_offset_in_queue("Orders", 1), 1);
    auto unit = store_.consume_queue_unit("Orders", 1, 0);
    ASSERT_TRUE(unit.has_value());
    auto msg = store_.look_message_by_offset(unit->physical_offset);
    ASSERT_TRUE(msg.has_value());
    EXPECT_EQ(msg->body, "a");
    EXPECT_EQ(msg->prepared_transaction_offset, at.first);
    ASSERT_EQ(store_.max_offset_in_queue(std::string(kTransOpHalfTopic), 0), 1);
    auto op = store_.look_message_by_offset(
        store_.consume_queue_unit(std::string(kTransOpHalfTopic), 0, 0)->physical_offset);
    EXPECT_EQ(op->body, std::to_string(at.second));

    // Resolved: the check service never asks about it and moves past it.
    clock_.advance(1min);
    EXPECT_EQ(service_->check(), 0);
    EXPECT_TRUE(checks_.empty());
    EXPECT_EQ(half_consumed(), 1);
}

TEST_F(TransactionalServiceTest, RollbackStoresNothingButTheOp) {
    const auto at = put_half("a");
    EXPECT_EQ(service_->end_transaction(end_header(at, SF::kTransactionRollbackType)).code,
              RC::kSuccess);
    EXPECT_EQ(store_.max_offset_in_queue("Orders", 1), 0);
    EXPECT_EQ(store_.max_offset_in_queue(std::string(kTransOpHalfTopic), 0), 1);
    clock_.advance(1min);
    EXPECT_EQ(service_->check(), 0);
}

TEST_F(TransactionalServiceTest, EndTransactionValidatesLikeJava) {
    const auto at = put_half("a");
    auto h = end_header(at, SF::kTransactionCommitType);
    h.producer_group = "other";
    EXPECT_EQ(service_->end_transaction(h).remark, "The producer group wrong");
    h = end_header(at, SF::kTransactionCommitType);
    h.tran_state_table_offset = 9;
    EXPECT_EQ(service_->end_transaction(h).remark, "The transaction state table offset wrong");
    h = end_header({at.first + 100000, at.second}, SF::kTransactionCommitType);
    EXPECT_EQ(service_->end_transaction(h).remark, "Find prepared transaction message failed");
    EXPECT_EQ(store_.max_offset_in_queue("Orders", 1), 0);
}

TEST_F(TransactionalServiceTest, UnknownHalfIsCheckedThenDiscardedAfterCheckMax) {
    const auto at = put_half("a");
    EXPECT_EQ(service_->check(), 0);  // too young
    EXPECT_TRUE(checks_.empty());
    EXPECT_EQ(half_consumed(), -1);  // nothing passed yet: no offset committed

    clock_.advance(7s);
    EXPECT_EQ(service_->check(), 1);
    ASSERT_EQ(checks_.size(), 1u);
    EXPECT_EQ(checks_[0].group, "PG");
    EXPECT_EQ(checks_[0].req.code, protocol::RequestCode::kCheckTransactionState);
    auto ch = protocol::CheckTransactionStateRequestHeader::from_ext(checks_[0].req);
    ASSERT_TRUE(ch.is_ok());
    EXPECT_EQ(ch->tran_state_table_offset, 1);  // the re-appended copy
    EXPECT_NE(ch->commit_log_offset, at.first);
    EXPECT_EQ(ch->transaction_id, "UNIQ-a");
    auto body = protocol::decode_message(checks_[0].req.body);
    ASSERT_TRUE(body.is_ok());
    EXPECT_EQ(body->topic, "Orders");
    EXPECT_EQ(body->queue_id, 1);
    EXPECT_EQ(*body->property(kTransactionCheckTimes), "1");
    EXPECT_EQ(half_consumed(), 1);

    EXPECT_EQ(service_->check(), 1);  // the copy is as old as the half: checked again
    EXPECT_EQ(half_consumed(), 2);
    EXPECT_EQ(service_->check(), 0);  // checked transactionCheckMax (2) times: discarded
    EXPECT_EQ(half_consumed(), 3);
    EXPECT_EQ(store_.max_offset_in_queue(std::string(kTransCheckMaxTimeTopic), 0), 1);
    EXPECT_EQ(store_.max_offset_in_queue("Orders", 1), 0);
    EXPECT_EQ(service_->check(), 0);
    EXPECT_EQ(checks_.size(), 2u);
}

TEST_F(TransactionalServiceTest, CheckAnsweredCommitResolvesTheCopy) {
    put_half("a");
    clock_.advance(7s);
    ASSERT_EQ(service_->check(), 1);
    auto ch = protocol::CheckTransactionStateRequestHeader::from_ext(checks_[0].req).value();
    EXPECT_EQ(service_->end_transaction(end_header({ch.commit_log_offset,
                                                     ch.tran_state_table_offset},
                                                    SF::kTransactionCommitType))
                  .code,
              RC::kSuccess);
    EXPECT_EQ(store_.max_offset_in_queue("Orders", 1), 1);
    clock_.advance(1min);
    EXPECT_EQ(service_->check(), 0);
    EXPECT_EQ(half_consumed(), 2);
    EXPECT_EQ(offsets_.query_offset(std::string(kTransSysGroup), std::string(kTransOpHalfTopic),
                                    0),
              1);
}

TEST_F(TransactionalServiceTest, YoungHalfStopsTheScanAndOlderOnesAreChecked) {
    put_half("old");
    clock_.advance(5s);
    put_half("young");
    clock_.advance(2s);  // old: 7 s, young: 2 s
    EXPECT_EQ(service_->check(), 1);
    EXPECT_EQ(half_consumed(), 1);
    clock_.advance(5s);
    EXPECT_EQ(service_->check(), 2);  // young, and old's copy
}

}  // namespace
}  // namespace comet::broker
