// Header fast path (decision 020): every captured frame, both serializations, and a table of
// malformed headers decode to the same command, typed header and errors as the general path.

#include "protocol/fast_header.h"

#include <gtest/gtest.h>

#include "base/bytes.h"
#include "protocol/request_code.h"
#include "vectors_helper.h"

namespace comet::protocol {
namespace {

using testing::all_frame_names;
using testing::read_frame;

bool hot_code(int32_t code) {
    return code == RequestCode::kSendMessage || code == RequestCode::kSendMessageV2 ||
           code == RequestCode::kSendBatchMessage || code == RequestCode::kPullMessage;
}

// Payload (bytes after the length word) of a frame with the given header bytes and type.
std::string payload_of(std::string_view header, SerializeType type, std::string_view body = "") {
    std::string out(4, '\0');
    put_be32(reinterpret_cast<uint8_t*>(out.data()),
             (static_cast<uint32_t>(type) << 24) | static_cast<uint32_t>(header.size()));
    out.append(header);
    out.append(body);
    return out;
}

void expect_same(std::string_view payload, const std::string& what) {
    auto mismatch = fast_header_mismatch(payload);
    EXPECT_FALSE(mismatch.has_value()) << what << ": " << mismatch.value_or("");
}

TEST(FastHeader, EveryGoldenFrameMatchesGeneralPathInBothSerializations) {
    auto names = all_frame_names();
    ASSERT_FALSE(names.empty());
    int hot = 0;
    for (const auto& name : names) {
        std::string frame = read_frame(name);
        ASSERT_GE(frame.size(), 4u) << name;
        std::string_view payload = std::string_view(frame).substr(4);
        expect_same(payload, name);
        auto general = decode_frame_payload(payload);
        ASSERT_TRUE(general.is_ok()) << name;
        // The same command in the other serialization.
        RemotingCommand other = *general;
        other.serialize_type = other.serialize_type == SerializeType::kJson
                                   ? SerializeType::kRocketMq
                                   : SerializeType::kJson;
        std::string reencoded = encode_frame(other);
        expect_same(std::string_view(reencoded).substr(4), name + " re-encoded");
        if (!general->is_response() && hot_code(general->code)) {
            ++hot;
            // Client-written headers never leave the fast scanner.
            auto fast = decode_frame_payload_fast(payload);
            ASSERT_TRUE(fast.is_ok()) << name;
            EXPECT_FALSE(fast->json_fallback) << name;
            auto fast2 = decode_frame_payload_fast(std::string_view(reencoded).substr(4));
            ASSERT_TRUE(fast2.is_ok()) << name;
            EXPECT_FALSE(fast2->json_fallback) << name;
            if (general->code == RequestCode::kPullMessage) {
                ASSERT_TRUE(fast->pull.has_value()) << name;
                EXPECT_TRUE(fast->pull->is_ok()) << name;
            } else {
                ASSERT_TRUE(fast->send_v2.has_value()) << name;
                EXPECT_TRUE(fast->send_v2->is_ok()) << name;
            }
            EXPECT_TRUE(fast->cmd.ext_fields.empty()) << name;
        }
    }
    EXPECT_GT(hot, 3);
}

RemotingCommand send_v2(SerializeType type) {
    RemotingCommand cmd = RemotingCommand::request(RequestCode::kSendMessageV2);
    cmd.serialize_type = type;
    cmd.opaque = 9;
    SendMessageRequestHeaderV2 h;
    h.a = "pg";
    h.b = "TopicA";
    h.c = "TBW102";
    h.d = 4;
    h.e = 1;
    h.g = 1796061429799;
    h.i = "KEYS\001k1\002";
    h.m = false;
    h.to_ext(cmd);
    cmd.body = "hello";
    return cmd;
}

RemotingCommand send_v1(SerializeType type) {
    RemotingCommand cmd = RemotingCommand::request(RequestCode::kSendMessage);
    cmd.serialize_type = type;
    cmd.opaque = 10;
    SendMessageRequestHeader h;
    h.producer_group = "pg";
    h.topic = "TopicA";
    h.default_topic = "TBW102";
    h.default_topic_queue_nums = 4;
    h.queue_id = 2;
    h.born_timestamp = 1796061429799;
    h.properties = "KEYS\001k1\002";
    h.reconsume_times = 0;
    h.broker_name = "broker-a";
    h.to_ext(cmd);
    cmd.body = "hello";
    return cmd;
}

RemotingCommand pull(SerializeType type) {
    RemotingCommand cmd = RemotingCommand::request(RequestCode::kPullMessage);
    cmd.serialize_type = type;
    PullMessageRequestHeader h;
    h.consumer_group = "cg";
    h.topic = "TopicA";
    h.queue_offset = 12;
    h.max_msg_nums = 32;
    h.suspend_timeout_millis = 15000;
    h.subscription = "*";
    h.to_ext(cmd);
    return cmd;
}

// Each edit applied to a valid send and pull, in both serializations.
TEST(FastHeader, MalformedExtFieldsGiveTheSameErrors) {
    struct Edit {
        const char* what;
        const char* key;
        const char* value;  // nullptr: erase the key
    };
    const Edit edits[] = {
        {"missing a", "a", nullptr},
        {"missing g", "g", nullptr},
        {"bad number d", "d", "x"},
        {"plus number", "d", "+5"},
        {"plus minus", "d", "+-5"},
        {"int32 overflow", "e", "2147483648"},
        {"int64 overflow", "g", "9223372036854775808"},
        {"empty int", "f", ""},
        {"bool case", "m", "TRUE"},
        {"bool junk", "k", "yes"},
        {"bad optional int", "j", "1.0"},
        {"missing topic", "topic", nullptr},
        {"bad queueId", "queueId", "-"},
        {"bad maxMsgBytes", "maxMsgBytes", "9x"},
        {"missing subVersion", "subVersion", nullptr},
        {"missing producerGroup", "producerGroup", nullptr},
        {"bad bornTimestamp", "bornTimestamp", "12a"},
        {"bad unitMode", "unitMode", "no"},
        {"bad reconsumeTimes", "reconsumeTimes", "x"},
        {"extra key", "zz", "1"},
    };
    for (SerializeType type : {SerializeType::kJson, SerializeType::kRocketMq}) {
        for (RemotingCommand base : {send_v2(type), send_v1(type), pull(type)}) {
            expect_same(std::string_view(encode_frame(base)).substr(4), "base");
            for (const Edit& e : edits) {
                RemotingCommand cmd = base;
                if (e.value == nullptr) {
                    cmd.ext_fields.erase(e.key);
                } else {
                    cmd.ext_fields[e.key] = e.value;
                }
                std::string frame = encode_frame(cmd);
                expect_same(std::string_view(frame).substr(4), e.what);
            }
        }
    }
    // The error text itself is the general path's.
    RemotingCommand cmd = send_v2(SerializeType::kJson);
    cmd.ext_fields.erase("b");
    auto fast = decode_frame_payload_fast(std::string_view(encode_frame(cmd)).substr(4));
    ASSERT_TRUE(fast.is_ok());
    ASSERT_TRUE(fast->send_v2.has_value());
    EXPECT_EQ(fast->send_v2->status().message(), "the custom field b is null");
}

// SEND_MESSAGE (v1, long names) is read straight into the typed header too (issue 16), in
// the V2 shape that the broker's send path takes.
TEST(FastHeader, SendMessageV1GoesToTheTypedHeader) {
    for (SerializeType type : {SerializeType::kJson, SerializeType::kRocketMq}) {
        RemotingCommand cmd = send_v1(type);
        const std::string frame = encode_frame(cmd);
        expect_same(std::string_view(frame).substr(4), "v1");
        auto fast = decode_frame_payload_fast(std::string_view(frame).substr(4));
        ASSERT_TRUE(fast.is_ok());
        EXPECT_FALSE(fast->json_fallback);
        ASSERT_TRUE(fast->send_v2.has_value());
        ASSERT_TRUE(fast->send_v2->is_ok());
        EXPECT_TRUE(fast->cmd.ext_fields.empty());
        const SendMessageRequestHeader h = fast->send_v2->value().to_v1();
        EXPECT_EQ(h.producer_group, "pg");
        EXPECT_EQ(h.topic, "TopicA");
        EXPECT_EQ(h.queue_id, 2);
        EXPECT_EQ(h.born_timestamp, 1796061429799);
        EXPECT_EQ(h.properties, std::optional<std::string>("KEYS\001k1\002"));
        EXPECT_EQ(h.broker_name, std::optional<std::string>("broker-a"));
        EXPECT_FALSE(h.unit_mode.has_value());
        // What the processors read: the typed slot, moved out by its sole owner.
        fast->cmd.typed_send_v2 =
            std::make_shared<SendMessageRequestHeaderV2>(std::move(*fast->send_v2).value());
        auto decoded = decode_send_message_header(fast->cmd);
        ASSERT_TRUE(decoded.is_ok());
        EXPECT_EQ(decoded->topic, "TopicA");
        auto taken = take_send_message_header(fast->cmd);
        ASSERT_TRUE(taken.is_ok());
        EXPECT_EQ(taken->producer_group, "pg");
        EXPECT_EQ(fast->cmd.typed_send_v2, nullptr);
    }
    // A v1 header read into recycled V2 strings keeps nothing of the previous header.
    RemotingCommand cmd = send_v1(SerializeType::kJson);
    cmd.ext_fields.erase("properties");
    cmd.ext_fields.erase("bname");
    auto fast = decode_frame_payload_fast(std::string_view(encode_frame(cmd)).substr(4));
    ASSERT_TRUE(fast.is_ok());
    ASSERT_TRUE(fast->send_v2->is_ok());
    EXPECT_FALSE(fast->send_v2->value().i.has_value());
    EXPECT_FALSE(fast->send_v2->value().n.has_value());
}

TEST(FastHeader, EveryTruncationOfBothSerializations) {
    for (SerializeType type : {SerializeType::kJson, SerializeType::kRocketMq}) {
        for (const RemotingCommand& cmd : {send_v2(type), pull(type)}) {
            std::string header = encode_header(cmd);
            for (size_t n = 0; n <= header.size(); ++n) {
                expect_same(payload_of(header.substr(0, n), type),
                            "truncated " + std::to_string(n));
            }
            // Header length word claiming more than the frame holds.
            std::string p = payload_of(header, type);
            put_be32(reinterpret_cast<uint8_t*>(p.data()),
                     (static_cast<uint32_t>(type) << 24) | 0xFFFFFF);
            expect_same(p, "header length over frame");
        }
    }
    expect_same("", "empty payload");
    expect_same(std::string("\x05\x00\x00\x00", 4), "unknown serialization");
    EXPECT_EQ(decode_frame_payload_fast(std::string(64, 'x'), 16).status().code(),
              Errc::kResourceExhausted);
}

TEST(FastHeader, HugeAndNegativeBinaryLengths) {
    std::string header = encode_header(send_v2(SerializeType::kRocketMq));
    // Offsets: remark length at 13, extFields length at 17, first key length at 21.
    for (size_t at : {size_t{13}, size_t{17}, size_t{21}, size_t{23}}) {
        for (uint32_t v : {0xFFFFFFFFu, 0x7FFFFFFFu, 0x80000000u, 0x00FFFFFFu}) {
            std::string h = header;
            if (at == 21) {
                put_be16(reinterpret_cast<uint8_t*>(h.data() + at), static_cast<uint16_t>(v));
            } else {
                put_be32(reinterpret_cast<uint8_t*>(h.data() + at), v);
            }
            expect_same(payload_of(h, SerializeType::kRocketMq), "length at " + std::to_string(at));
        }
    }
}

TEST(FastHeader, JsonShapesOutsideTheScannerFallBackToTheGeneralDecoder) {
    const char* ext = R"("extFields":{"a":"pg","b":"T","c":"TBW102","d":"4","e":"1","f":"0",)"
                      R"("g":"1796061429799","h":"0"})";
    const std::string good = std::string(R"({"code":310,)") + ext +
                             R"(,"flag":0,"language":"JAVA","opaque":1,"version":1})";
    struct Case {
        std::string json;
        bool fallback;
    };
    const Case cases[] = {
        {good, false},
        {" \n" + good + "\t ", false},
        {std::string(R"({"code":"310",)") + ext + "}", false},
        {std::string(R"({"code":310,"language":5,)") + ext + "}", false},
        {std::string(R"({"code":310,"language":"GO","remark":null,)") + ext + "}", false},
        {std::string(R"({"code":310,"remark":12,"extFields":null})"), false},
        {std::string(R"({"code":310,"x":[1],)") + ext + "}", true},
        {std::string(R"({"code":310,"remark":{},)") + ext + "}", true},
        {std::string(R"({"code":310,"code":11,)") + ext + "}", true},
        {std::string(R"({"code":310,"extFields":{"a":"p\"g\u0001\u00e9\u4e2d\/\n"}})"), false},
        {std::string(R"({"code":310,"extFields":{"a\t":"x"}})"), false},
        {std::string(R"({"code":310,"extFields":{"a":"\ud83d\ude00"}})"), true},
        {std::string(R"({"code":310,"extFields":{"a":"\udc00"}})"), true},
        {std::string(R"({"code":310,"extFields":{"a":"\x"}})"), true},
        {std::string(R"({"code":310,"extFields":{"a":"\u12"}})"), true},
        {std::string(R"({"code":310,"extFields":{"d":4.0}})"), true},
        {std::string(R"({"code":310,"extFields":{"d":1e3}})"), true},
        {std::string(R"({"code":310,"extFields":{"d":[1]}})"), true},
        {std::string(R"({"code":310,"extFields":{"d":01}})"), true},
        {std::string(R"({"code":310,"extFields":{"a":"x",}})"), true},
        {std::string(R"({"code":310,"extFields":{"d":true,"a":null,"a":"z"}})"), false},
        {std::string(R"({"code":310,"extFields":"x"})"), true},
        {std::string(R"({"code":true})"), true},
        {std::string(R"({"code":"31x"})"), true},
        {std::string(R"({"code":99999999999})"), true},
        {std::string(R"({"code":11} x)"), true},
        {std::string(R"([1])"), true},
        {std::string("{\"code\":310,\"extFields\":{\"a\":\"\x01\"}}"), true},
        {std::string(R"({"code":11,"extFields":{"consumerGroup":"g","topic":"t"}})"), false},
        {std::string(R"({"code":12,"extFields":{"k":"1","k":"2"}})"), false},
    };
    for (const Case& c : cases) {
        std::string p = payload_of(c.json, SerializeType::kJson);
        expect_same(p, c.json);
        auto fast = decode_frame_payload_fast(p);
        if (fast.is_ok()) {
            EXPECT_EQ(fast->json_fallback, c.fallback) << c.json;
        } else {
            EXPECT_TRUE(c.fallback) << c.json;
        }
    }
}

// The scanner reads strings eight bytes at a time (issue 16): a quote, a backslash escape or a
// control character at every offset of a word, in plain and in escaped strings, several
// escaped strings in one header (they share one arena), and keys whose hash buckets collide.
TEST(FastHeader, SpecialBytesAtEveryOffsetOfAWord) {
    // JSON escapes (quote, backslash, \u0001, \u00e9, \n, \/), a raw control byte (fallback), a
    // raw quote (ends the string early: fallback) and a two-byte UTF-8 character.
    struct Special {
        std::string text;
        bool scanned;  // the fast scanner reads it (false: handed to the general decoder)
    };
    const Special specials[] = {{R"(\")", true},  {R"(\\)", true},     {R"(\u0001)", true},
                                {R"(\u00e9)", true}, {R"(\n)", true},     {R"(\/)", true},
                                {"\xc3\xa9", true}, {"\x01", false},     {"\"", false}};
    for (const Special& special : specials) {
        for (size_t before = 0; before < 20; ++before) {
            const std::string value = std::string(before, 'a') + special.text + std::string(9, 'b');
            const std::string json = R"({"code":310,"extFields":{"a":")" + value + R"(","i":")" +
                                     value + special.text + R"(","b":"T)" + value +
                                     R"(","d":"4"}})";
            const std::string payload = payload_of(json, SerializeType::kJson);
            expect_same(payload, json);
            auto fast = decode_frame_payload_fast(payload);
            if (special.scanned) {
                ASSERT_TRUE(fast.is_ok()) << json;
                EXPECT_FALSE(fast->json_fallback) << json;
            } else if (fast.is_ok()) {
                EXPECT_TRUE(fast->json_fallback) << json;
            }
        }
    }
    // "aab", "a b" and "axb" share a hash bucket (same length, first and last byte); "ab" is
    // given twice and the later value wins.
    const std::string json =
        R"({"code":12,"extFields":{"ab":"1","aab":"2","a b":"3","ab":"4","axb":"\u0002"}})";
    expect_same(payload_of(json, SerializeType::kJson), json);
    auto fast = decode_frame_payload_fast(payload_of(json, SerializeType::kJson));
    ASSERT_TRUE(fast.is_ok());
    EXPECT_FALSE(fast->json_fallback);
    EXPECT_EQ(*fast->cmd.ext("ab"), "4");
    EXPECT_EQ(*fast->cmd.ext("aab"), "2");
    EXPECT_EQ(*fast->cmd.ext("a b"), "3");
    EXPECT_EQ(*fast->cmd.ext("axb"), "\u0002");
}

TEST(FastHeader, ManyExtFieldsStillDecode) {
    for (SerializeType type : {SerializeType::kJson, SerializeType::kRocketMq}) {
        RemotingCommand cmd = send_v2(type);
        for (int i = 0; i < 40; ++i) {
            cmd.set_ext("x" + std::to_string(i), "v");
        }
        expect_same(std::string_view(encode_frame(cmd)).substr(4), "40 extra keys");
        auto fast = decode_frame_payload_fast(std::string_view(encode_frame(cmd)).substr(4));
        ASSERT_TRUE(fast.is_ok());
        ASSERT_TRUE(fast->send_v2.has_value());
        EXPECT_EQ(fast->send_v2->value().b, "TopicA");
    }
}

TEST(FastHeader, ResponsesWithHotCodesKeepTheirExtFields) {
    for (int32_t code : {RequestCode::kPullMessage, RequestCode::kSendMessageV2}) {
        RemotingCommand resp = RemotingCommand::request(code);
        resp.flag = kFlagResponse;
        resp.set_ext("queueId", "1");
        std::string frame = encode_frame(resp);
        expect_same(std::string_view(frame).substr(4), "response");
        auto fast = decode_frame_payload_fast(std::string_view(frame).substr(4));
        ASSERT_TRUE(fast.is_ok());
        EXPECT_FALSE(fast->send_v2.has_value());
        EXPECT_FALSE(fast->pull.has_value());
        EXPECT_EQ(fast->cmd.ext_fields.size(), 1u);
    }
}

TEST(FastHeader, HeaderAccessorsPreferTheTypedSlot) {
    RemotingCommand send = send_v2(SerializeType::kJson);
    auto fast = decode_frame_payload_fast(std::string_view(encode_frame(send)).substr(4));
    ASSERT_TRUE(fast.is_ok());
    RemotingCommand cmd = fast->cmd;
    cmd.typed_send_v2 = std::make_shared<SendMessageRequestHeaderV2>(fast->send_v2->value());
    auto h = decode_send_message_header(cmd);
    ASSERT_TRUE(h.is_ok());
    EXPECT_EQ(h->topic, "TopicA");
    EXPECT_EQ(h->born_timestamp, 1796061429799);
    EXPECT_EQ(h->properties, std::optional<std::string>("KEYS\001k1\002"));

    RemotingCommand p = pull(SerializeType::kRocketMq);
    auto fp = decode_frame_payload_fast(std::string_view(encode_frame(p)).substr(4));
    ASSERT_TRUE(fp.is_ok());
    RemotingCommand pc = fp->cmd;
    EXPECT_FALSE(decode_pull_message_header(pc).is_ok());  // no slot, no ext_fields
    pc.typed_pull = std::make_shared<const PullMessageRequestHeader>(fp->pull->value());
    auto ph = decode_pull_message_header(pc);
    ASSERT_TRUE(ph.is_ok());
    EXPECT_EQ(ph->queue_offset, 12);
    EXPECT_EQ(ph->subscription, std::optional<std::string>("*"));
    EXPECT_EQ(decode_pull_message_header(p).value().max_msg_nums, 32);  // ext_fields path
}

TEST(FastHeader, TakeMovesTheTypedHeaderOnlyFromItsSoleOwner) {
    RemotingCommand send = send_v2(SerializeType::kJson);
    auto fast = decode_frame_payload_fast(std::string_view(encode_frame(send)).substr(4));
    ASSERT_TRUE(fast.is_ok());
    const SendMessageRequestHeaderV2 v2 = fast->send_v2->value();

    // Shared with another command: both keep the header, the result is a copy.
    RemotingCommand a = fast->cmd;
    a.typed_send_v2 = std::make_shared<SendMessageRequestHeaderV2>(v2);
    RemotingCommand b = a;
    auto shared = take_send_message_header(a);
    ASSERT_TRUE(shared.is_ok());
    EXPECT_EQ(shared->topic, "TopicA");
    ASSERT_NE(a.typed_send_v2, nullptr);
    EXPECT_EQ(a.typed_send_v2->b, "TopicA");
    EXPECT_EQ(b.typed_send_v2->i, std::optional<std::string>("KEYS\001k1\002"));

    // Sole owner: the fields arrive whole and the command's typed header is spent.
    RemotingCommand c = fast->cmd;
    c.typed_send_v2 = std::make_shared<SendMessageRequestHeaderV2>(v2);
    auto taken = take_send_message_header(c);
    ASSERT_TRUE(taken.is_ok());
    EXPECT_EQ(c.typed_send_v2, nullptr);
    const auto general = decode_send_message_header(send).value();  // ext_fields path
    EXPECT_EQ(taken->producer_group, general.producer_group);
    EXPECT_EQ(taken->topic, general.topic);
    EXPECT_EQ(taken->default_topic, general.default_topic);
    EXPECT_EQ(taken->queue_id, general.queue_id);
    EXPECT_EQ(taken->born_timestamp, general.born_timestamp);
    EXPECT_EQ(taken->properties, general.properties);
    EXPECT_EQ(taken->broker_name, general.broker_name);

    // Without a typed header it decodes the ext fields, as decode_send_message_header does.
    auto plain = take_send_message_header(send);
    ASSERT_TRUE(plain.is_ok());
    EXPECT_EQ(plain->topic, "TopicA");
}

// Recycled header strings (issue 16): a send header decoded after a spent one was given back
// equals the general path's, and keeps nothing of the spent one (absent optional fields
// stay absent).
TEST(FastHeader, RecycledSendHeaderStringsCarryNoOldValues) {
    SendMessageRequestHeader spent;
    spent.producer_group = std::string(40, 'p');
    spent.topic = std::string(40, 't');
    spent.default_topic = std::string(40, 'd');
    spent.properties = std::string(100, 'x');
    spent.broker_name = "old-broker";
    spent.reconsume_times = 5;
    for (SerializeType type : {SerializeType::kJson, SerializeType::kRocketMq}) {
        recycle_send_header(SendMessageRequestHeader(spent));
        RemotingCommand with_props = send_v2(type);
        expect_same(std::string_view(encode_frame(with_props)).substr(4), "with properties");
        recycle_send_header(SendMessageRequestHeader(spent));
        RemotingCommand without = send_v2(type);
        without.ext_fields.erase("i");
        expect_same(std::string_view(encode_frame(without)).substr(4), "without properties");

        recycle_send_header(SendMessageRequestHeader(spent));
        auto fast = decode_frame_payload_fast(std::string_view(encode_frame(without)).substr(4));
        ASSERT_TRUE(fast.is_ok());
        ASSERT_TRUE(fast->send_v2.has_value() && fast->send_v2->is_ok());
        const SendMessageRequestHeaderV2& h = fast->send_v2->value();
        EXPECT_EQ(h.a, "pg");
        EXPECT_EQ(h.b, "TopicA");
        EXPECT_FALSE(h.i.has_value());
        EXPECT_FALSE(h.j.has_value());
        EXPECT_FALSE(h.n.has_value());
    }
    // The recycled buffers are really used: the next header's strings need no new buffer.
    recycle_send_header(SendMessageRequestHeader(spent));
    SendMessageRequestHeaderV2 lent = recycled_send_header_v2();
    EXPECT_GE(lent.a.capacity(), 40u);
    EXPECT_TRUE(lent.a.empty());
    ASSERT_TRUE(lent.i.has_value());
    EXPECT_GE(lent.i->capacity(), 100u);
    EXPECT_TRUE(lent.i->empty());
    EXPECT_FALSE(lent.n.has_value());
    EXPECT_FALSE(recycled_send_header_v2().i.has_value());  // lent once
}

// borrow_send_body (the connection, issue 16): a send request's body stays in the payload
// (borrowed_body) and everything else decodes as without it; other commands copy their body.
TEST(FastHeader, BorrowedSendBodyPointsIntoThePayload) {
    for (int32_t code :
         {RequestCode::kSendMessage, RequestCode::kSendMessageV2, RequestCode::kSendBatchMessage,
          RequestCode::kPullMessage, RequestCode::kHeartBeat}) {
        RemotingCommand req = RemotingCommand::request(code);
        req.ext_fields = {{"a", "g"}, {"b", "T"}, {"c", "TBW102"}, {"d", "4"}, {"e", "0"},
                          {"f", "0"}, {"g", "1"}, {"h", "0"},      {"j", "0"}, {"k", "false"}};
        req.body = "the body";
        const std::string frame = encode_frame(req);
        const std::string_view payload = std::string_view(frame).substr(4);
        auto copied = decode_frame_payload_fast(payload);
        auto borrowed = decode_frame_payload_fast(payload, kDefaultMaxFrameBytes, true);
        ASSERT_TRUE(copied.is_ok() && borrowed.is_ok()) << code;
        EXPECT_EQ(copied->cmd.body, "the body") << code;
        EXPECT_TRUE(copied->cmd.borrowed_body.empty()) << code;
        EXPECT_EQ(borrowed->cmd.body_view(), "the body") << code;
        const bool send = code == RequestCode::kSendMessage ||
                          code == RequestCode::kSendMessageV2 ||
                          code == RequestCode::kSendBatchMessage;
        if (send) {
            EXPECT_TRUE(borrowed->cmd.body.empty()) << code;
            EXPECT_GE(borrowed->cmd.borrowed_body.data(), payload.data()) << code;
            EXPECT_LE(borrowed->cmd.borrowed_body.data() + borrowed->cmd.borrowed_body.size(),
                      payload.data() + payload.size())
                << code;
        } else {
            EXPECT_EQ(borrowed->cmd.body, "the body") << code;
        }
        EXPECT_EQ(encode_frame(borrowed->cmd), encode_frame(copied->cmd)) << code;
        borrowed->cmd.own_body();
        EXPECT_EQ(borrowed->cmd.body, "the body") << code;
        EXPECT_TRUE(borrowed->cmd.borrowed_body.empty()) << code;
    }
}

}  // namespace
}  // namespace comet::protocol
