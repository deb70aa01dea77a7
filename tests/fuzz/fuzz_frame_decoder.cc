// libFuzzer target: a byte stream as a RocketMQ remoting connection would deliver it.
// Exercises split_frame, decode_frame_payload, every typed header decoder and every JSON body
// decoder on what decodes, and checks that each success re-encodes to something that decodes to
// the same value (abort otherwise, so the fuzzer reports it). The header fast path
// (decode_frame_payload_fast) must agree with the general path on every payload.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "protocol/admin_bodies.h"
#include "protocol/fast_header.h"
#include "protocol/admin_headers.h"
#include "protocol/ha_bodies.h"
#include "protocol/ha_headers.h"
#include "protocol/heartbeat_body.h"
#include "protocol/namesrv_headers.h"
#include "protocol/pull_headers.h"
#include "protocol/remoting_command.h"
#include "protocol/route_bodies.h"
#include "protocol/send_headers.h"

namespace {

using namespace comet::protocol;  // NOLINT

constexpr size_t kMaxFrame = 1 << 20;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "fuzz_frame_decoder: %s\n", what);
    std::abort();
}

bool same_fields(const RemotingCommand& a, const RemotingCommand& b) {
    return a.code == b.code && a.language == b.language && a.version == b.version &&
           a.opaque == b.opaque && a.flag == b.flag && a.remark == b.remark &&
           a.ext_fields == b.ext_fields && a.body == b.body;
}

template <typename H>
void try_header(const RemotingCommand& cmd) {
    auto h = H::from_ext(cmd);
    if (!h.is_ok()) {
        return;
    }
    RemotingCommand out;
    h->to_ext(out);
    auto again = H::from_ext(out);
    if (!again.is_ok()) {
        fail("typed header re-decode failed");
    }
    RemotingCommand out2;
    again->to_ext(out2);
    if (out2.ext_fields != out.ext_fields) {
        fail("typed header round trip changed");
    }
}

template <typename B>
void try_body(std::string_view body) {
    auto b = B::decode(body);
    if (!b.is_ok()) {
        return;
    }
    std::string text = b->encode();
    auto again = B::decode(text);
    if (!again.is_ok()) {
        fail("body re-decode failed");
    }
    if (!(*again == *b)) {
        fail("body round trip changed");
    }
}

void check_command(const RemotingCommand& cmd) {
    // Re-encode in both serializations; each must split and decode to the same fields.
    for (SerializeType t : {SerializeType::kJson, SerializeType::kRocketMq}) {
        RemotingCommand copy = cmd;
        copy.serialize_type = t;
        std::string frame = encode_frame(copy);
        FrameSplit s = split_frame(frame, kMaxFrame * 8);
        if (s.state != FrameSplit::State::kFrame || s.frame_bytes != frame.size()) {
            fail("re-encoded frame does not split");
        }
        auto back = decode_frame_payload(std::string_view(frame).substr(4), kMaxFrame * 8);
        if (!back.is_ok()) {
            std::fprintf(stderr, "%s\n", back.status().to_string().c_str());
            fail("re-encoded frame does not decode");
        }
        if (!same_fields(copy, *back)) {
            fail("re-encoded frame decodes differently");
        }
    }

    try_header<SendMessageRequestHeader>(cmd);
    try_header<SendMessageRequestHeaderV2>(cmd);
    (void)decode_send_message_header(cmd);
    try_header<SendMessageResponseHeader>(cmd);
    try_header<EndTransactionRequestHeader>(cmd);
    try_header<CheckTransactionStateRequestHeader>(cmd);
    try_header<PullMessageRequestHeader>(cmd);
    try_header<PullMessageResponseHeader>(cmd);
    try_header<QueryConsumerOffsetRequestHeader>(cmd);
    try_header<OffsetResponseHeader>(cmd);
    try_header<UpdateConsumerOffsetRequestHeader>(cmd);
    try_header<GetMaxOffsetRequestHeader>(cmd);
    try_header<TopicQueueRequestHeader>(cmd);
    try_header<SearchOffsetRequestHeader>(cmd);
    try_header<GetEarliestMsgStoretimeResponseHeader>(cmd);
    try_header<UnregisterClientRequestHeader>(cmd);
    try_header<ConsumerSendMsgBackRequestHeader>(cmd);
    try_header<ConsumerGroupRequestHeader>(cmd);
    try_header<RegisterBrokerRequestHeader>(cmd);
    try_header<RegisterBrokerResponseHeader>(cmd);
    try_header<UnRegisterBrokerRequestHeader>(cmd);
    try_header<QueryDataVersionResponseHeader>(cmd);
    try_header<GetRouteInfoRequestHeader>(cmd);
    try_header<PutKvConfigRequestHeader>(cmd);
    try_header<KvConfigKeyRequestHeader>(cmd);
    try_header<GetKvConfigResponseHeader>(cmd);
    try_header<GetBrokerMemberGroupRequestHeader>(cmd);
    try_header<CreateTopicRequestHeader>(cmd);
    try_header<TopicRequestHeader>(cmd);
    try_header<GetConsumeStatsRequestHeader>(cmd);
    try_header<QueryMessageRequestHeader>(cmd);
    try_header<ViewMessageRequestHeader>(cmd);
    try_header<BrokerHeartbeatRequestHeader>(cmd);
    try_header<ElectMasterRequestHeader>(cmd);
    try_header<ControllerMasterInfoHeader>(cmd);
    try_header<AlterSyncStateSetRequestHeader>(cmd);
    try_header<GetMetaDataResponseHeader>(cmd);

    if (cmd.body.empty()) {
        return;
    }
    try_body<TopicRouteData>(cmd.body);
    try_body<ClusterInfo>(cmd.body);
    try_body<TopicList>(cmd.body);
    try_body<KvTable>(cmd.body);
    try_body<RegisterBrokerBody>(cmd.body);
    try_body<GetBrokerMemberGroupResponseBody>(cmd.body);
    try_body<HeartbeatData>(cmd.body);
    try_body<ConsumerListBody>(cmd.body);
    try_body<LockBatchRequestBody>(cmd.body);
    try_body<LockBatchResponseBody>(cmd.body);
    try_body<SubscriptionGroupWrapper>(cmd.body);
    try_body<TopicStatsTable>(cmd.body);
    try_body<ConsumeStats>(cmd.body);
    try_body<ConsumerOffsetSerializeWrapper>(cmd.body);
    try_body<ConsumerConnection>(cmd.body);
    try_body<ProducerConnection>(cmd.body);
    try_body<SyncStateSet>(cmd.body);
    try_body<ElectMasterResponseBody>(cmd.body);
    (void)RegisterBrokerBody::decode_compressed(cmd.body, cmd.version);
    (void)RegisterBrokerResult::from_response(cmd);
    auto props = parse_properties_text(cmd.body);
    (void)encode_properties_text(props);
}

void check_payload(std::string_view payload) {
    if (auto mismatch = fast_header_mismatch(payload, kMaxFrame)) {
        std::fprintf(stderr, "fast path differs: %s\n", mismatch->c_str());
        fail("fast header path differs from the general path");
    }
    auto cmd = decode_frame_payload(payload, kMaxFrame);
    if (cmd.is_ok()) {
        check_command(*cmd);
    } else if (cmd.status().message().empty()) {
        fail("error without a message");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    size_t pos = 0;
    for (int frames = 0; frames < 8 && pos < in.size(); ++frames) {
        FrameSplit s = split_frame(in.substr(pos), kMaxFrame);
        if (s.state == FrameSplit::State::kError) {
            if (s.error.is_ok()) {
                fail("split error without a status");
            }
            break;
        }
        if (s.state == FrameSplit::State::kNeedMore) {
            break;
        }
        if (s.frame_bytes < 4 || s.frame_bytes > in.size() - pos) {
            fail("split_frame returned an impossible size");
        }
        check_payload(in.substr(pos + 4, s.frame_bytes - 4));
        pos += s.frame_bytes;
    }
    // Also treat everything after the length word as a payload, whatever the length says.
    if (size >= 4 && pos == 0) {
        check_payload(in.substr(4));
    }
    return 0;
}
