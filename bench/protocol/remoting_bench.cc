// Micro-benchmarks of the remoting codec: a SEND_MESSAGE_V2 request with a 1 KiB body, encoded
// and decoded in both header serializations, plus the typed send-header decode through the
// general path (RemotingCommand + extFields map, then from_ext) and the fast path
// (decode_frame_payload_fast, decision 020).

#include <benchmark/benchmark.h>

#include "protocol/fast_header.h"
#include "protocol/request_code.h"
#include "protocol/send_headers.h"

namespace {

using namespace comet::protocol;  // NOLINT

RemotingCommand make_send(SerializeType type) {
    SendMessageRequestHeaderV2 h;
    h.a = "BenchProducerGroup";
    h.b = "BenchTopic";
    h.c = "TBW102";
    h.d = 4;
    h.e = 1;
    h.f = 0;
    h.g = 1796061429799;
    h.h = 0;
    h.i = std::string("KEYS\x01key-1\x02UNIQ_KEY\x01") + std::string(32, 'A') + "\x02WAIT\x01true" +
          "\x02TAGS\x01TagA";
    h.j = 0;
    h.k = false;
    h.m = false;
    h.n = "broker-a";
    RemotingCommand cmd = RemotingCommand::request(RequestCode::kSendMessageV2);
    h.to_ext(cmd);
    cmd.language = LanguageCode::kJava;
    cmd.version = 409;
    cmd.opaque = 12345;
    cmd.body = std::string(1024, 'x');
    cmd.serialize_type = type;
    return cmd;
}

void BM_EncodeSendV2(benchmark::State& state) {
    RemotingCommand cmd = make_send(static_cast<SerializeType>(state.range(0)));
    size_t bytes = 0;
    for (auto _ : state) {
        std::string frame = encode_frame(cmd);
        bytes += frame.size();
        benchmark::DoNotOptimize(frame);
    }
    state.SetBytesProcessed(static_cast<int64_t>(bytes));
    state.SetLabel(state.range(0) == 0 ? "JSON" : "ROCKETMQ");
}
BENCHMARK(BM_EncodeSendV2)->Arg(0)->Arg(1);

void BM_DecodeSendV2(benchmark::State& state) {
    std::string frame = encode_frame(make_send(static_cast<SerializeType>(state.range(0))));
    std::string_view payload = std::string_view(frame).substr(4);
    for (auto _ : state) {
        FrameSplit s = split_frame(frame);
        benchmark::DoNotOptimize(s);
        auto cmd = decode_frame_payload(payload);
        benchmark::DoNotOptimize(cmd);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * frame.size()));
    state.SetLabel(state.range(0) == 0 ? "JSON" : "ROCKETMQ");
}
BENCHMARK(BM_DecodeSendV2)->Arg(0)->Arg(1);

void BM_DecodeSendV2AndTypedHeader(benchmark::State& state) {
    std::string frame = encode_frame(make_send(static_cast<SerializeType>(state.range(0))));
    std::string_view payload = std::string_view(frame).substr(4);
    for (auto _ : state) {
        auto cmd = decode_frame_payload(payload);
        auto h = decode_send_message_header(*cmd);
        benchmark::DoNotOptimize(h);
    }
    state.SetLabel(state.range(0) == 0 ? "JSON" : "ROCKETMQ");
}
BENCHMARK(BM_DecodeSendV2AndTypedHeader)->Arg(0)->Arg(1);

// The same result (SendMessageRequestHeader the broker uses) through the fast path.
void BM_DecodeSendV2AndTypedHeaderFast(benchmark::State& state) {
    std::string frame = encode_frame(make_send(static_cast<SerializeType>(state.range(0))));
    std::string_view payload = std::string_view(frame).substr(4);
    for (auto _ : state) {
        auto f = decode_frame_payload_fast(payload);
        auto h = f->send_v2->value().to_v1();
        benchmark::DoNotOptimize(h);
    }
    state.SetLabel(state.range(0) == 0 ? "JSON" : "ROCKETMQ");
}
BENCHMARK(BM_DecodeSendV2AndTypedHeaderFast)->Arg(0)->Arg(1);

// As the broker decodes a send: the body borrowed from the read buffer, the header's strings
// handed back after use (recycle_send_header) and reused by the next decode on the thread.
void BM_DecodeSendV2AsBroker(benchmark::State& state) {
    std::string frame = encode_frame(make_send(static_cast<SerializeType>(state.range(0))));
    std::string_view payload = std::string_view(frame).substr(4);
    for (auto _ : state) {
        auto f = decode_frame_payload_fast(payload, kDefaultMaxFrameBytes, true);
        SendMessageRequestHeader h = std::move(*f->send_v2).value().to_v1();
        benchmark::DoNotOptimize(h);
        recycle_send_header(std::move(h));
    }
    state.SetLabel(state.range(0) == 0 ? "JSON" : "ROCKETMQ");
}
BENCHMARK(BM_DecodeSendV2AsBroker)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
