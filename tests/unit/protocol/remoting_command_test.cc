#include "protocol/remoting_command.h"
#include "protocol/json_text.h"

#include <gtest/gtest.h>

#include "base/bytes.h"
#include "vectors_helper.h"

namespace comet::protocol {
namespace {

using testing::all_frame_names;
using testing::read_frame;

Result<RemotingCommand> decode_whole(std::string_view frame) {
    FrameSplit s = split_frame(frame);
    if (s.state != FrameSplit::State::kFrame) {
        return Status(Errc::kCorruption, "split_frame did not find a whole frame");
    }
    return decode_frame_payload(frame.substr(4, s.frame_bytes - 4));
}

RemotingCommand sample(SerializeType type) {
    RemotingCommand cmd = RemotingCommand::request(310);
    cmd.language = LanguageCode::kJava;
    cmd.version = 409;
    cmd.opaque = 77;
    cmd.flag = kFlagOneway;
    cmd.remark = "hello \"world\"\n\x01";
    cmd.set_ext("topic", "VecTopic");
    cmd.set_ext("bornTimestamp", "1796061429799");
    cmd.set_ext("empty", "");
    cmd.set_ext("utf8", "\xe4\xb8\xad\xe6\x96\x87");
    cmd.body = std::string("\0body\x02", 6);
    cmd.serialize_type = type;
    return cmd;
}

void expect_same(const RemotingCommand& a, const RemotingCommand& b) {
    EXPECT_EQ(a.code, b.code);
    EXPECT_EQ(a.language, b.language);
    EXPECT_EQ(a.version, b.version);
    EXPECT_EQ(a.opaque, b.opaque);
    EXPECT_EQ(a.flag, b.flag);
    EXPECT_EQ(a.remark, b.remark);
    EXPECT_EQ(a.ext_fields, b.ext_fields);
    EXPECT_EQ(a.body, b.body);
    EXPECT_EQ(a.serialize_type, b.serialize_type);
}

TEST(RemotingCommandTest, JsonRoundTrip) {
    RemotingCommand cmd = sample(SerializeType::kJson);
    std::string frame = encode_frame(cmd);
    auto back = decode_whole(frame);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    expect_same(cmd, *back);
}

// JSON strings are written in runs of plain bytes between escapes: every byte value, at the
// start, middle and end of a string, survives the round trip, and the escapes are the short
// forms fastjson writes.
TEST(RemotingCommandTest, JsonStringsEscapeEveryByteAtEveryPosition) {
    for (int b = 0; b < 256; ++b) {
        const char c = static_cast<char>(b);
        for (const std::string& text : {std::string(1, c), "ab" + std::string(1, c) + "cd",
                                        std::string(1, c) + "xy" + std::string(2, c)}) {
            RemotingCommand cmd = RemotingCommand::request(310);
            cmd.remark = text;
            cmd.set_ext("k", text);
            auto back = decode_whole(encode_frame(cmd));
            ASSERT_TRUE(back.is_ok()) << b << ": " << back.status().to_string();
            EXPECT_EQ(back->remark, cmd.remark) << b;
            EXPECT_EQ(back->ext_fields, cmd.ext_fields) << b;
        }
    }
    // Strings are written eight bytes at a time: a special byte at every offset of a word, and
    // strings past the 256 bytes above which the writer sizes them exactly.
    for (const char c : {'"', '\\', '\n', '\x01', '\x1f', 'x', '\xe9'}) {
        for (size_t pos = 0; pos < 18; ++pos) {
            for (size_t len : {size_t{18}, size_t{300}}) {
                std::string text(len, 'a');
                text[pos] = c;
                text[len - 1 - pos] = c;
                RemotingCommand cmd = RemotingCommand::request(310);
                cmd.remark = text;
                cmd.set_ext(text.substr(0, 9), text);
                auto back = decode_whole(encode_frame(cmd));
                ASSERT_TRUE(back.is_ok()) << int(c) << " at " << pos;
                EXPECT_EQ(back->remark, cmd.remark) << int(c) << " at " << pos;
                EXPECT_EQ(back->ext_fields, cmd.ext_fields) << int(c) << " at " << pos;
            }
        }
    }
    RemotingCommand cmd = RemotingCommand::request(310);
    cmd.remark = std::string("q\"b\\n\nr\rt\tb\bf\f\x01\x1f");
    const std::string frame = encode_frame(cmd);
    EXPECT_NE(frame.find(R"("remark":"q\"b\\n\nr\rt\tb\bf\f\u0001\u001f")"), std::string::npos)
        << frame.substr(8);
}

TEST(RemotingCommandTest, RocketMqRoundTrip) {
    RemotingCommand cmd = sample(SerializeType::kRocketMq);
    std::string frame = encode_frame(cmd);
    EXPECT_EQ(static_cast<uint8_t>(frame[4]), 1);
    auto back = decode_whole(frame);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    expect_same(cmd, *back);
}

TEST(RemotingCommandTest, JsonHeaderShapeIsSortedWithStringExtValues) {
    RemotingCommand req = RemotingCommand::request(105);
    req.set_ext("topic", "T");
    req.set_ext("a", "1");
    req.opaque = 3;
    req.language = LanguageCode::kJava;
    req.version = 409;
    EXPECT_EQ(encode_header(req),
              R"({"code":105,"extFields":{"a":"1","topic":"T"},"flag":0,"language":"JAVA",)"
              R"("opaque":3,"serializeTypeCurrentRPC":"JSON","version":409})");
    RemotingCommand resp = RemotingCommand::response_to(req, 17, "no");
    EXPECT_EQ(resp.opaque, 3);
    EXPECT_TRUE(resp.is_response());
    EXPECT_EQ(encode_header(resp),
              R"({"code":17,"flag":1,"language":"CPP","opaque":3,"remark":"no",)"
              R"("serializeTypeCurrentRPC":"JSON","version":479})");
}

TEST(RemotingCommandTest, EncodesSameBytesAsJavaForSimpleFrames) {
    // Java's header for these has sorted keys and no HashMap-ordered extFields, so bytes match.
    for (const char* name : {"0005-c2s-GET_ROUTEINFO_BY_TOPIC.bin",
                             "0007-s2c-GET_ROUTEINFO_BY_TOPIC-resp-TOPIC_NOT_EXIST.bin",
                             "0020-s2c-HEART_BEAT-resp-SUCCESS.bin"}) {
        std::string frame = read_frame(name);
        ASSERT_FALSE(frame.empty()) << name;
        auto cmd = decode_whole(frame);
        ASSERT_TRUE(cmd.is_ok()) << name;
        EXPECT_EQ(encode_frame(*cmd), frame) << name;
    }
}

TEST(RemotingCommandTest, EveryCapturedFrameSplitsDecodesAndRoundTrips) {
    auto names = all_frame_names();
    ASSERT_GE(names.size(), 300u);
    int rmq = 0;
    for (const auto& name : names) {
        std::string frame = read_frame(name);
        FrameSplit s = split_frame(frame);
        ASSERT_EQ(s.state, FrameSplit::State::kFrame) << name;
        ASSERT_EQ(s.frame_bytes, frame.size()) << name;
        // Every proper prefix needs more bytes.
        for (size_t cut : {size_t{0}, size_t{3}, frame.size() / 2, frame.size() - 1}) {
            EXPECT_EQ(split_frame(std::string_view(frame).substr(0, cut)).state,
                      FrameSplit::State::kNeedMore)
                << name << " cut " << cut;
        }
        // Two frames back to back: the first is found alone.
        std::string two = frame + frame;
        EXPECT_EQ(split_frame(two).frame_bytes, frame.size());

        auto cmd = decode_whole(frame);
        ASSERT_TRUE(cmd.is_ok()) << name << ": " << cmd.status().to_string();
        bool is_rmq = name.find("-RMQ") != std::string::npos;
        EXPECT_EQ(cmd->serialize_type,
                  is_rmq ? SerializeType::kRocketMq : SerializeType::kJson)
            << name;
        rmq += is_rmq;
        EXPECT_EQ(cmd->is_response(), name.find("-resp-") != std::string::npos) << name;
        EXPECT_EQ(cmd->is_oneway(), name.find("-oneway") != std::string::npos) << name;

        // Re-encode in both serializations and decode again.
        for (SerializeType t : {SerializeType::kJson, SerializeType::kRocketMq}) {
            RemotingCommand copy = *cmd;
            copy.serialize_type = t;
            auto again = decode_whole(encode_frame(copy));
            ASSERT_TRUE(again.is_ok()) << name;
            expect_same(copy, *again);
        }
        if (is_rmq && cmd->ext_fields.size() <= 1) {
            // ROCKETMQ headers (ext order aside: Java's is HashMap order) come back exactly.
            EXPECT_EQ(encode_frame(*cmd), frame) << name;
        }
    }
    EXPECT_GE(rmq, 20);
}

TEST(RemotingCommandTest, CapturedJavaRequestFields) {
    auto cmd = decode_whole(read_frame("0005-c2s-GET_ROUTEINFO_BY_TOPIC.bin"));
    ASSERT_TRUE(cmd.is_ok());
    EXPECT_EQ(cmd->code, 105);
    EXPECT_EQ(cmd->language, LanguageCode::kJava);
    EXPECT_EQ(cmd->version, 409);
    EXPECT_EQ(cmd->opaque, 1);
    EXPECT_EQ(cmd->flag, 0);
    ASSERT_NE(cmd->ext("topic"), nullptr);
    EXPECT_EQ(*cmd->ext("topic"), "VecNoSuchTopic");
    EXPECT_EQ(cmd->ext("missing"), nullptr);
    EXPECT_TRUE(cmd->body.empty());
}

TEST(RemotingCommandTest, AliOnsNumbersAndBooleansBecomeText) {
    auto cmd = decode_whole(read_frame("0168-c2s-SEND_MESSAGE_V2.bin"));
    ASSERT_TRUE(cmd.is_ok()) << cmd.status().to_string();
    EXPECT_EQ(cmd->code, 310);
    EXPECT_EQ(cmd->language, LanguageCode::kJava);  // ali-ons claims JAVA
    EXPECT_EQ(cmd->version, 121);
    // g = bornTimestamp as a raw 13-digit JSON number, must be exact.
    EXPECT_EQ(cmd->ext_fields.at("g"), "1796061462209");
    EXPECT_EQ(cmd->ext_fields.at("d"), "4");
    EXPECT_EQ(cmd->ext_fields.at("k"), "false");
    EXPECT_EQ(cmd->ext_fields.at("i"),
              "TAGS\x01TagAli\x02KEYS\x01KeyAli1 KeyAli2\x02" "color\x01" "blue\x02");
    EXPECT_EQ(cmd->body, "vec-ali-1 from ali-ons");
    for (const auto& [k, v] : cmd->ext_fields) {
        EXPECT_FALSE(v.empty()) << k;
    }
}

TEST(RemotingCommandTest, JsonLenientParsing) {
    std::string header =
        R"( { "version": 121, "unknown": {"x":[1,2]}, "opaque": "9", "code": 34, )"
        R"("language": "RUST", "flag": 0, "remark": null, "extFields": {"n": 1796061429799, )"
        R"("b": true, "f": false, "z": null, "s": "x", "neg": -5} } )";
    std::string payload(4, '\0');
    put_be32(reinterpret_cast<uint8_t*>(payload.data()), static_cast<uint32_t>(header.size()));
    payload += header;
    auto cmd = decode_frame_payload(payload);
    ASSERT_TRUE(cmd.is_ok()) << cmd.status().to_string();
    EXPECT_EQ(cmd->code, 34);
    EXPECT_EQ(cmd->opaque, 9);
    EXPECT_EQ(cmd->version, 121);
    EXPECT_EQ(cmd->language, LanguageCode::kRust);
    EXPECT_FALSE(cmd->remark.has_value());
    EXPECT_EQ(cmd->ext_fields.at("n"), "1796061429799");
    EXPECT_EQ(cmd->ext_fields.at("b"), "true");
    EXPECT_EQ(cmd->ext_fields.at("f"), "false");
    EXPECT_EQ(cmd->ext_fields.at("neg"), "-5");
    EXPECT_EQ(cmd->ext_fields.at("s"), "x");
    EXPECT_EQ(cmd->ext_fields.count("z"), 0u);
}

TEST(RemotingCommandTest, UnknownLanguageIsOther) {
    EXPECT_EQ(language_from_name("COBOL"), LanguageCode::kOther);
    EXPECT_EQ(language_from_name("NODE_JS"), LanguageCode::kNodeJs);
    EXPECT_EQ(language_name(LanguageCode::kGo), "GO");
}

std::string payload_with(uint8_t type, std::string_view header, std::string_view body = {}) {
    std::string p(4, '\0');
    put_be32(reinterpret_cast<uint8_t*>(p.data()),
             (uint32_t{type} << 24) | static_cast<uint32_t>(header.size()));
    p += header;
    p += body;
    return p;
}

void expect_error(const Result<RemotingCommand>& r, std::string_view fragment) {
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().to_string();
}

TEST(RemotingCommandTest, FrameErrorsNameTheReason) {
    expect_error(decode_frame_payload("ab"), "truncated");
    expect_error(decode_frame_payload(payload_with(0, "{}x").substr(0, 5)), "header length");
    expect_error(decode_frame_payload(payload_with(0, "{\"code\":")), "invalid JSON");
    expect_error(decode_frame_payload(payload_with(0, "{\"code\":1} x")), "invalid JSON");
    expect_error(decode_frame_payload(payload_with(0, "[1]")), "not an object");
    expect_error(decode_frame_payload(payload_with(0, R"({"code":"abc"})")), "code");
    expect_error(decode_frame_payload(payload_with(0, R"({"code":99999999999})")), "code");
    expect_error(decode_frame_payload(payload_with(0, R"({"extFields":[1]})")), "extFields");
    expect_error(decode_frame_payload(payload_with(2, "{}")), "unknown serialization type 2");
    expect_error(decode_frame_payload(payload_with(1, "short")), "truncated");
    expect_error(decode_frame_payload(std::string(100, 'x'), 50), "exceeds limit");

    // ROCKETMQ: remark length beyond header, ext block length beyond header, broken entry.
    RemotingCommand cmd = sample(SerializeType::kRocketMq);
    cmd.remark.reset();
    cmd.ext_fields.clear();
    std::string hdr = encode_header(cmd);
    ASSERT_EQ(hdr.size(), 21u);
    std::string bad = hdr;
    put_be32(reinterpret_cast<uint8_t*>(bad.data()) + 13, 1000);
    expect_error(decode_frame_payload(payload_with(1, bad)), "remark length");
    bad = hdr;
    put_be32(reinterpret_cast<uint8_t*>(bad.data()) + 17, 0x80000000u);
    expect_error(decode_frame_payload(payload_with(1, bad)), "extFields length");
    bad = hdr;
    put_be32(reinterpret_cast<uint8_t*>(bad.data()) + 17, 3);
    bad += std::string("\0\x05k", 3);
    expect_error(decode_frame_payload(payload_with(1, bad)), "key truncated");
    bad = hdr;
    put_be32(reinterpret_cast<uint8_t*>(bad.data()) + 17, 7);
    bad += std::string("\0\x01k\0\0\0\x09", 7);
    expect_error(decode_frame_payload(payload_with(1, bad)), "value of 'k' truncated");
}

TEST(RemotingCommandTest, HostileHeadersAreErrors) {
    // Java reads the ext key length as a signed short.
    RemotingCommand cmd = sample(SerializeType::kRocketMq);
    cmd.remark.reset();
    cmd.ext_fields.clear();
    std::string hdr = encode_header(cmd);
    put_be32(reinterpret_cast<uint8_t*>(hdr.data()) + 17, 6);
    hdr += std::string("\x80\x01kkkk", 6);
    expect_error(decode_frame_payload(payload_with(1, hdr)), "negative");
    // Containers as extFields values or remark are rejected, deep nesting does not recurse.
    expect_error(decode_frame_payload(payload_with(0, R"({"extFields":{"a":{"b":1}}})")),
                 "not a scalar");
    expect_error(decode_frame_payload(payload_with(0, R"({"remark":[1]})")), "remark");
    std::string deep = "{\"x\":" + std::string(200000, '[') + std::string(200000, ']') + "}";
    EXPECT_TRUE(decode_frame_payload(payload_with(0, deep)).is_ok());
    expect_error(decode_frame_payload(payload_with(0, "{\"x\":" + std::string(200000, '['))),
                 "invalid JSON");
}

TEST(RemotingCommandTest, LongKeysFallBackToJson) {
    RemotingCommand cmd = sample(SerializeType::kRocketMq);
    cmd.set_ext(std::string(40000, 'k'), "v");
    std::string frame = encode_frame(cmd);
    EXPECT_EQ(static_cast<uint8_t>(frame[4]), 0);
    auto back = decode_whole(frame);
    ASSERT_TRUE(back.is_ok());
    EXPECT_EQ(back->ext_fields, cmd.ext_fields);
}

TEST(RemotingCommandTest, SplitFrameErrors) {
    std::string neg(4, '\xff');
    FrameSplit s = split_frame(neg);
    EXPECT_EQ(s.state, FrameSplit::State::kError);
    EXPECT_FALSE(s.error.is_ok());
    std::string small("\0\0\0\x02", 4);
    EXPECT_EQ(split_frame(small).state, FrameSplit::State::kError);
    std::string big(4, '\0');
    put_be32(reinterpret_cast<uint8_t*>(big.data()), 16 * 1024 * 1024);
    s = split_frame(big);
    EXPECT_EQ(s.state, FrameSplit::State::kError);
    EXPECT_NE(s.error.message().find("exceeds limit"), std::string::npos);
    put_be32(reinterpret_cast<uint8_t*>(big.data()), 16 * 1024 * 1024 - 4);
    EXPECT_EQ(split_frame(big).state, FrameSplit::State::kNeedMore);
}

TEST(RemotingCommandTest, LargeCodesFallBackToJson) {
    RemotingCommand cmd = RemotingCommand::request(200050);  // POP-range code
    cmd.serialize_type = SerializeType::kRocketMq;
    std::string frame = encode_frame(cmd);
    EXPECT_EQ(static_cast<uint8_t>(frame[4]), 0);
    auto back = decode_whole(frame);
    ASSERT_TRUE(back.is_ok());
    EXPECT_EQ(back->code, 200050);
}

TEST(RemotingCommandTest, FramePrefixPlusBodyEqualsFrame) {
    RemotingCommand cmd = sample(SerializeType::kJson);
    EXPECT_EQ(encode_frame_prefix(cmd, cmd.body.size()) + cmd.body, encode_frame(cmd));
}

}  // namespace
}  // namespace comet::protocol

namespace comet::protocol {
namespace {

// json_plain_prefix against the byte-at-a-time definition: every length up to 72 (sixteen-byte
// blocks, whole words, four-to-seven-byte tails read as two overlapping halves, shorter tails), every special byte
// kind at every position, alone and with a second one after it.
TEST(JsonText, PlainPrefixFindsTheFirstSpecialByteAtEveryLengthAndPosition) {
    auto reference = [](std::string_view s) {
        size_t i = 0;
        while (i < s.size()) {
            const auto c = static_cast<unsigned char>(s[i]);
            if (c < 0x20 || c == '"' || c == '\\') {
                break;
            }
            ++i;
        }
        return i;
    };
    const char specials[] = {'"', '\\', '\x01', '\x1f', '\0', '\n'};
    for (size_t len = 0; len <= 72; ++len) {
        std::string plain(len, 'x');
        for (size_t i = 0; i < len; ++i) {
            plain[i] = static_cast<char>('#' + (i * 13) % 57);  // '#'..'[': never '"' nor '\\'

        }
        // Bytes the mask must not mark: '!' (0x21), ']' after '\\', 0x7f, UTF-8 bytes.
        std::string near = plain;
        for (size_t i = 0; i < len; ++i) {
            const char k[] = {'!', ']', '\x7f', '\xc3', '\xa9', ' ', '#'};
            near[i] = k[i % 7];
        }
        for (const std::string& base : {plain, near}) {
            ASSERT_EQ(reference(base), len);
            EXPECT_EQ(json_plain_prefix(base.data(), base.data() + len), len) << len;
            for (char sp : specials) {
                for (size_t at = 0; at < len; ++at) {
                    std::string t = base;
                    t[at] = sp;
                    EXPECT_EQ(json_plain_prefix(t.data(), t.data() + len), at)
                        << "len " << len << " at " << at << " byte " << int(sp);
                    if (at + 2 < len) {
                        t[at + 2] = '"';
                        EXPECT_EQ(json_plain_prefix(t.data(), t.data() + len), at) << len;
                    }
                }
            }
        }
    }
}

// write_json_string of every short length with a byte needing an escape at every position
// reads back as the same string (through the general decoder of a whole header).
TEST(JsonText, ShortStringsWithAnEscapeAtEveryPositionRoundTrip) {
    for (size_t len = 1; len <= 24; ++len) {
        for (size_t at = 0; at < len; ++at) {
            for (char sp : {'"', '\\', '\x02', '\n'}) {
                std::string value(len, 'v');
                value[at] = sp;
                RemotingCommand cmd = RemotingCommand::request(12);
                cmd.set_ext(value, value);
                const std::string frame = encode_frame(cmd);
                auto back = decode_frame_payload(std::string_view(frame).substr(4));
                ASSERT_TRUE(back.is_ok()) << back.status().to_string();
                const std::string* got = back->ext(value);
                ASSERT_NE(got, nullptr) << len << " " << at;
                EXPECT_EQ(*got, value);
            }
        }
    }
}

}  // namespace
}  // namespace comet::protocol
