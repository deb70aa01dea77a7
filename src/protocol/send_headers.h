#pragma once
// Typed headers of the producer RPCs (reference §4.2): SEND_MESSAGE (long names), SEND_MESSAGE_V2
// and SEND_BATCH_MESSAGE (short names a..n), END_TRANSACTION, CHECK_TRANSACTION_STATE, and the
// send response. Plain values; to_ext()/from_ext() as described in header_codec.h.

#include <optional>
#include <string>

#include "protocol/header_codec.h"

namespace comet::protocol {

// SendMessageRequestHeader (code 10, and what V2 converts to).
struct SendMessageRequestHeader {
    std::string producer_group;
    std::string topic;
    std::string default_topic;
    int32_t default_topic_queue_nums = 0;
    int32_t queue_id = 0;  // < 0: broker picks a random writable queue
    int32_t sys_flag = 0;
    int64_t born_timestamp = 0;
    int32_t flag = 0;
    std::optional<std::string> properties;
    std::optional<int32_t> reconsume_times;
    std::optional<bool> unit_mode;
    std::optional<int32_t> max_reconsume_times;
    std::optional<bool> batch;
    std::optional<std::string> broker_name;  // "bname"

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("producerGroup", s.producer_group);
        v.required("topic", s.topic);
        v.required("defaultTopic", s.default_topic);
        v.required("defaultTopicQueueNums", s.default_topic_queue_nums);
        v.required("queueId", s.queue_id);
        v.required("sysFlag", s.sys_flag);
        v.required("bornTimestamp", s.born_timestamp);
        v.required("flag", s.flag);
        v.optional("properties", s.properties);
        v.optional("reconsumeTimes", s.reconsume_times);
        v.optional("unitMode", s.unit_mode);
        v.optional("maxReconsumeTimes", s.max_reconsume_times);
        v.optional("batch", s.batch);
        v.optional("bname", s.broker_name);
    }
    COMET_EXT_HEADER(SendMessageRequestHeader)
};

// SendMessageRequestHeaderV2: the same fields under one-letter keys (codes 310, 320).
struct SendMessageRequestHeaderV2 {
    std::string a;  // producerGroup
    std::string b;  // topic
    std::string c;  // defaultTopic
    int32_t d = 0;  // defaultTopicQueueNums
    int32_t e = 0;  // queueId
    int32_t f = 0;  // sysFlag
    int64_t g = 0;  // bornTimestamp
    int32_t h = 0;  // flag
    std::optional<std::string> i;  // properties
    std::optional<int32_t> j;      // reconsumeTimes
    std::optional<bool> k;         // unitMode
    std::optional<int32_t> l;      // maxReconsumeTimes
    std::optional<bool> m;         // batch
    std::optional<std::string> n;  // brokerName

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("a", s.a);
        v.required("b", s.b);
        v.required("c", s.c);
        v.required("d", s.d);
        v.required("e", s.e);
        v.required("f", s.f);
        v.required("g", s.g);
        v.required("h", s.h);
        v.optional("i", s.i);
        v.optional("j", s.j);
        v.optional("k", s.k);
        v.optional("l", s.l);
        v.optional("m", s.m);
        v.optional("n", s.n);
    }
    COMET_EXT_HEADER(SendMessageRequestHeaderV2)

    SendMessageRequestHeader to_v1() const&;
    SendMessageRequestHeader to_v1() &&;  // moves the strings
    static SendMessageRequestHeaderV2 from_v1(const SendMessageRequestHeader& v1);
    static SendMessageRequestHeaderV2 from_v1(SendMessageRequestHeader&& v1);  // moves strings
};

// Decodes the send header of a SEND_MESSAGE (long names) or SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE
// (short names) request, as SendMessageProcessor#parseRequestHeader does. Other codes: error.
// Uses cmd.typed_send_v2 when the fast path set it (decision 020).
Result<SendMessageRequestHeader> decode_send_message_header(const RemotingCommand& cmd);
// The same, but the fast path's strings are moved out of cmd.typed_send_v2 when `cmd` is its only
// owner (no allocation); the command's send header is spent then (typed_send_v2 reset).
Result<SendMessageRequestHeader> take_send_message_header(RemotingCommand& cmd);

// Header string recycling on the send fast path (issue 16). A spent header given back here
// lends its strings' buffers to the next SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE header the fast
// path decodes on the same thread (recycled_send_header_v2), so a steady stream of sends
// allocates no header strings. Per-thread storage; any thread. Buffers over 64 KiB are freed.
void recycle_send_header(SendMessageRequestHeader&& spent);
// A header with default values whose strings (empty) hold the buffers last recycled on this
// thread, for read_fields_into.
SendMessageRequestHeaderV2 recycled_send_header_v2();

// True if the request is a batch: code 320 or header batch=true (reference §4.2).
bool is_batch_send(const RemotingCommand& cmd, const SendMessageRequestHeader& header);

// SendMessageResponseHeader plus the MSG_REGION / TRACE_ON extras a Java broker always adds.
struct SendMessageResponseHeader {
    std::string msg_id;  // offset msgId; comma-joined list for a batch
    int32_t queue_id = 0;
    int64_t queue_offset = 0;  // first offset for a batch
    std::optional<std::string> transaction_id;
    std::optional<std::string> batch_uniq_id;
    std::optional<std::string> msg_region;  // "MSG_REGION"
    std::optional<std::string> trace_on;    // "TRACE_ON": "true"/"false"

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.required("msgId", s.msg_id);
        v.required("queueId", s.queue_id);
        v.required("queueOffset", s.queue_offset);
        v.optional("transactionId", s.transaction_id);
        v.optional("batchUniqId", s.batch_uniq_id);
        v.optional("MSG_REGION", s.msg_region);
        v.optional("TRACE_ON", s.trace_on);
    }
    COMET_EXT_HEADER(SendMessageResponseHeader)
};

// END_TRANSACTION (37). commit_or_rollback: 8 commit, 12 rollback, 0 unknown.
struct EndTransactionRequestHeader {
    std::optional<std::string> topic;
    std::string producer_group;
    int64_t tran_state_table_offset = 0;
    int64_t commit_log_offset = 0;
    int32_t commit_or_rollback = 0;
    std::optional<bool> from_transaction_check;
    std::string msg_id;
    std::optional<std::string> transaction_id;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("topic", s.topic);
        v.required("producerGroup", s.producer_group);
        v.required("tranStateTableOffset", s.tran_state_table_offset);
        v.required("commitLogOffset", s.commit_log_offset);
        v.required("commitOrRollback", s.commit_or_rollback);
        v.optional("fromTransactionCheck", s.from_transaction_check);
        v.required("msgId", s.msg_id);
        v.optional("transactionId", s.transaction_id);
    }
    COMET_EXT_HEADER(EndTransactionRequestHeader)
};

// CHECK_TRANSACTION_STATE (39), broker -> producer; body is the half message.
struct CheckTransactionStateRequestHeader {
    std::optional<std::string> topic;
    int64_t tran_state_table_offset = 0;
    int64_t commit_log_offset = 0;
    std::optional<std::string> msg_id;
    std::optional<std::string> transaction_id;
    std::optional<std::string> offset_msg_id;

    template <typename Self, typename V>
    static void fields(Self& s, V& v) {
        v.optional("topic", s.topic);
        v.required("tranStateTableOffset", s.tran_state_table_offset);
        v.required("commitLogOffset", s.commit_log_offset);
        v.optional("msgId", s.msg_id);
        v.optional("transactionId", s.transaction_id);
        v.optional("offsetMsgId", s.offset_msg_id);
    }
    COMET_EXT_HEADER(CheckTransactionStateRequestHeader)
};

}  // namespace comet::protocol
