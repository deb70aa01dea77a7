#include "protocol/send_headers.h"

#include "protocol/request_code.h"

namespace comet::protocol {

namespace {
template <typename V2>
SendMessageRequestHeader v2_to_v1(V2&& v2) {
    SendMessageRequestHeader v1;
    v1.producer_group = std::forward<V2>(v2).a;
    v1.topic = std::forward<V2>(v2).b;
    v1.default_topic = std::forward<V2>(v2).c;
    v1.default_topic_queue_nums = v2.d;
    v1.queue_id = v2.e;
    v1.sys_flag = v2.f;
    v1.born_timestamp = v2.g;
    v1.flag = v2.h;
    v1.properties = std::forward<V2>(v2).i;
    v1.reconsume_times = v2.j;
    v1.unit_mode = v2.k;
    v1.max_reconsume_times = v2.l;
    v1.batch = v2.m;
    v1.broker_name = std::forward<V2>(v2).n;
    return v1;
}
}  // namespace

SendMessageRequestHeader SendMessageRequestHeaderV2::to_v1() const& { return v2_to_v1(*this); }
SendMessageRequestHeader SendMessageRequestHeaderV2::to_v1() && { return v2_to_v1(std::move(*this)); }

namespace {
template <typename V1>
SendMessageRequestHeaderV2 v1_to_v2(V1&& v1) {
    SendMessageRequestHeaderV2 v2;
    v2.a = std::forward<V1>(v1).producer_group;
    v2.b = std::forward<V1>(v1).topic;
    v2.c = std::forward<V1>(v1).default_topic;
    v2.d = v1.default_topic_queue_nums;
    v2.e = v1.queue_id;
    v2.f = v1.sys_flag;
    v2.g = v1.born_timestamp;
    v2.h = v1.flag;
    v2.i = std::forward<V1>(v1).properties;
    v2.j = v1.reconsume_times;
    v2.k = v1.unit_mode;
    v2.l = v1.max_reconsume_times;
    v2.m = v1.batch;
    v2.n = std::forward<V1>(v1).broker_name;
    return v2;
}
}  // namespace

SendMessageRequestHeaderV2 SendMessageRequestHeaderV2::from_v1(const SendMessageRequestHeader& v1) {
    return v1_to_v2(v1);
}
SendMessageRequestHeaderV2 SendMessageRequestHeaderV2::from_v1(SendMessageRequestHeader&& v1) {
    return v1_to_v2(std::move(v1));
}

Result<SendMessageRequestHeader> decode_send_message_header(const RemotingCommand& cmd) {
    switch (cmd.code) {
        case RequestCode::kSendMessage:
            if (cmd.typed_send_v2) {
                return cmd.typed_send_v2->to_v1();
            }
            return SendMessageRequestHeader::from_ext(cmd);
        case RequestCode::kSendMessageV2:
        case RequestCode::kSendBatchMessage: {
            if (cmd.typed_send_v2) {
                return cmd.typed_send_v2->to_v1();
            }
            COMET_ASSIGN_OR_RETURN(auto v2, SendMessageRequestHeaderV2::from_ext(cmd));
            return v2.to_v1();
        }
        default:
            return Status::error(Errc::kInvalidArgument, "request code {} ({}) is not a send",
                                 cmd.code, request_code_name(cmd.code));
    }
}

Result<SendMessageRequestHeader> take_send_message_header(RemotingCommand& cmd) {
    if ((cmd.code == RequestCode::kSendMessage || cmd.code == RequestCode::kSendMessageV2 ||
         cmd.code == RequestCode::kSendBatchMessage) &&
        cmd.typed_send_v2 && cmd.typed_send_v2.use_count() == 1) {
        SendMessageRequestHeader h = std::move(*cmd.typed_send_v2).to_v1();
        cmd.typed_send_v2.reset();
        return h;
    }
    return decode_send_message_header(cmd);
}

namespace {

constexpr size_t kMaxRecycledBytes = 64 * 1024;

struct SpareHeaderStrings {
    std::string producer_group;
    std::string topic;
    std::string default_topic;
    std::string properties;
    bool has_properties = false;  // properties holds a buffer worth lending
};

SpareHeaderStrings& spare_header_strings() {
    thread_local SpareHeaderStrings spare;
    return spare;
}

void keep(std::string& spare, std::string&& spent) {
    if (spent.capacity() <= kMaxRecycledBytes && spent.capacity() > spare.capacity()) {
        spare = std::move(spent);
    }
}

}  // namespace

void recycle_send_header(SendMessageRequestHeader&& spent) {
    SpareHeaderStrings& spare = spare_header_strings();
    keep(spare.producer_group, std::move(spent.producer_group));
    keep(spare.topic, std::move(spent.topic));
    keep(spare.default_topic, std::move(spent.default_topic));
    if (spent.properties) {
        keep(spare.properties, std::move(*spent.properties));
        spare.has_properties = true;
    }
}

SendMessageRequestHeaderV2 recycled_send_header_v2() {
    SpareHeaderStrings& spare = spare_header_strings();
    SendMessageRequestHeaderV2 h;
    h.a = std::move(spare.producer_group);
    h.a.clear();
    h.b = std::move(spare.topic);
    h.b.clear();
    h.c = std::move(spare.default_topic);
    h.c.clear();
    if (spare.has_properties) {
        h.i.emplace(std::move(spare.properties));
        h.i->clear();
        spare.has_properties = false;
    }
    return h;
}

bool is_batch_send(const RemotingCommand& cmd, const SendMessageRequestHeader& header) {
    return cmd.code == RequestCode::kSendBatchMessage || header.batch.value_or(false);
}

}  // namespace comet::protocol
