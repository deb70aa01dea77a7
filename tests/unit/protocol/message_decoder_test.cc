#include "protocol/message_decoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/bytes.h"
#include "message_golden_commitlog.h"
#include "protocol/message_ext.h"
#include "protocol/message_id.h"

namespace comet::protocol {
namespace {

std::string golden_commitlog() {
    auto r = hex_to_bytes(testing::kGoldenCommitLogHex);
    EXPECT_TRUE(r.is_ok());
    return r.value();
}

std::string prop_string(std::initializer_list<std::pair<const char*, const char*>> kvs) {
    std::string s;
    for (const auto& [k, v] : kvs) {
        s += k;
        s += '\1';
        s += v;
        s += '\2';
    }
    if (!s.empty()) {
        s.pop_back();
    }
    return s;
}

// Hand-checked against the hex dump of the first record (phys 0, 257 bytes).
TEST(MessageDecoder, GoldenFirstRecordFieldByField) {
    std::string log = golden_commitlog();
    ASSERT_EQ(log.size(), 3869u);
    auto r = decode_message(log, {.read_body = true, .check_crc = true});
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    const MessageExt& m = r.value();
    EXPECT_EQ(m.store_size, 257);
    EXPECT_EQ(get_be32(reinterpret_cast<const uint8_t*>(log.data()) + 4), 0xDAA320A7u);
    EXPECT_EQ(m.body_crc, 0x6353A5AD);
    EXPECT_EQ(m.queue_id, 0);
    EXPECT_EQ(m.flag, 0);
    EXPECT_EQ(m.queue_offset, 0);
    EXPECT_EQ(m.commit_log_offset, 0);
    EXPECT_EQ(m.sys_flag, 0);
    EXPECT_EQ(m.born_timestamp, 0x1A22D9A8027);
    EXPECT_EQ(m.born_host, HostAddress::ipv4(127, 0, 0, 1, 0xDEE8));
    EXPECT_EQ(m.store_timestamp, 0x1A22D9A8034);
    EXPECT_EQ(m.store_host, HostAddress::ipv4(127, 0, 0, 1, 10911));
    EXPECT_EQ(m.store_host.to_string(), "127.0.0.1:10911");
    EXPECT_EQ(m.reconsume_times, 0);
    EXPECT_EQ(m.prepared_transaction_offset, 0);
    EXPECT_EQ(m.body, "vec-1 sync tags keys props");
    EXPECT_EQ(m.topic, "VecTopic");
    ASSERT_EQ(m.properties.size(), 6u);
    EXPECT_EQ(m.properties.entries()[0].first, "color");
    EXPECT_EQ(*m.property("color"), "red");
    EXPECT_EQ(*m.property("size"), "L");
    EXPECT_EQ(m.keys(), "KeyA1 KeyA2");
    EXPECT_EQ(*m.property("CLUSTER"), "DefaultCluster");
    EXPECT_EQ(m.tags(), "TagA");
    ASSERT_NE(m.property("UNIQ_KEY"), nullptr);
    EXPECT_EQ(m.unique_id(), *m.property("UNIQ_KEY"));
    EXPECT_EQ(m.msg_id, "7F00000100002A9F0000000000000000");
    EXPECT_TRUE(m.wait_store_msg_ok());
    // Body starts at 88 for v1 + IPv4 (reference §5.1).
    EXPECT_EQ(log.substr(88, m.body.size()), m.body);
}

struct Expected {
    int64_t phys;
    int32_t size;
    const char* topic;
    int32_t queue_id;
    int64_t queue_offset;
    const char* body;
    int32_t reconsume;
    const char* tags;
};

TEST(MessageDecoder, GoldenCommitLogEveryRecordDecodesAndReencodesByteForByte) {
    const std::vector<Expected> expected = {
        {0, 257, "VecTopic", 0, 0, "vec-1 sync tags keys props", 0, "TagA"},
        {257, 219, "VecTopic", 0, 1, "vec-2 oneway", 0, "TagB"},
        {476, 226, "VecTopic", 0, 2, "vec-3 sync retry-me", 0, "TagC"},
        {702, 254, "VecTopic", 1, 0, "vec-b1 batch", 0, "TagBatch"},
        {956, 254, "VecTopic", 1, 1, "vec-b2 batch", 0, "TagBatch"},
        {1210, 254, "VecTopic", 1, 2, "vec-b3 batch", 0, "TagBatch"},
        {1464, 231, "VecAutoTopic", 1, 0, "vec-auto auto-created topic", 0, "TagAuto"},
        {1695, 374, "SCHEDULE_TOPIC_XXXX", 2, 0, "vec-3 sync retry-me", 1, "TagC"},
        {2069, 228, "VecTopic", 2, 0, "vec-4 wakes long poll", 0, "TagD"},
        {2297, 378, "%RETRY%VecConsumerGroup", 0, 0, "vec-3 sync retry-me", 1, "TagC"},
        {2675, 245, "VecTopic", 3, 0, "vec-5 rocketmq-serialized", 0, "TagR"},
        {2920, 187, "VecTopic", 2, 1, "vec-ali-1 from ali-ons", 0, "TagAli"},
        {3107, 151, "VecTopic", 3, 1, "vec-ali-2 retry-me", 0, "TagAli"},
        {3258, 302, "SCHEDULE_TOPIC_XXXX", 2, 1, "vec-ali-2 retry-me", 1, "TagAli"},
        {3560, 309, "%RETRY%VecAliConsumerGroup", 0, 0, "vec-ali-2 retry-me", 1, "TagAli"},
    };
    std::string log = golden_commitlog();
    auto all = decode_messages(log, {.read_body = true, .check_crc = true});
    ASSERT_TRUE(all.is_ok()) << all.status().to_string();
    ASSERT_EQ(all.value().size(), expected.size());
    std::string reencoded;
    for (size_t i = 0; i < expected.size(); ++i) {
        const MessageExt& m = all.value()[i];
        const Expected& e = expected[i];
        SCOPED_TRACE(e.phys);
        EXPECT_EQ(m.commit_log_offset, e.phys);
        EXPECT_EQ(m.store_size, e.size);
        EXPECT_EQ(m.topic, e.topic);
        EXPECT_EQ(m.queue_id, e.queue_id);
        EXPECT_EQ(m.queue_offset, e.queue_offset);
        EXPECT_EQ(m.body, e.body);
        EXPECT_EQ(m.reconsume_times, e.reconsume);
        EXPECT_EQ(m.tags(), e.tags);
        EXPECT_EQ(m.sys_flag, 0);
        EXPECT_EQ(m.flag, 0);
        EXPECT_EQ(m.store_host, HostAddress::ipv4(127, 0, 0, 1, 10911));
        EXPECT_EQ(m.born_host.ip[0], 127);
        EXPECT_EQ(m.body_crc, body_crc32(m.body));
        EXPECT_GE(m.store_timestamp, m.born_timestamp);
        EXPECT_EQ(m.msg_id, create_offset_msg_id(m.store_host, e.phys));
        EXPECT_EQ(stored_message_length(0, static_cast<int64_t>(m.body.size()),
                                        static_cast<int64_t>(m.topic.size()),
                                        static_cast<int64_t>(m.properties_string().size()),
                                        kMessageMagicCodeV1),
                  e.size);
        std::string one;
        ASSERT_TRUE(encode_message(m, &one).is_ok());
        EXPECT_EQ(one, log.substr(static_cast<size_t>(e.phys), static_cast<size_t>(e.size)));
        reencoded += one;
    }
    EXPECT_EQ(reencoded, log);
    // Spot checks of properties listed in the vector index.
    const MessageExt& retry = all.value()[7];
    EXPECT_EQ(*retry.property("REAL_TOPIC"), "%RETRY%VecConsumerGroup");
    EXPECT_EQ(*retry.property("ORIGIN_MESSAGE_ID"), "7F00000100002A9F00000000000001DC");
    EXPECT_EQ(*retry.property("DELAY"), "3");
    EXPECT_EQ(*retry.property("REAL_QID"), "0");
    EXPECT_FALSE(retry.wait_store_msg_ok());
    // Batch records hold the client's properties plus CLUSTER and a second WAIT, as stored.
    MessageExt batch = all.value()[4];
    EXPECT_EQ(batch.properties.size(), 6u);
    std::string batch_props = *batch.stored_properties;
    EXPECT_NE(batch_props, message_properties_to_string(batch.properties));
    batch.set_property("seq", "2");  // an edit drops the stored bytes
    EXPECT_FALSE(batch.stored_properties.has_value());
    EXPECT_EQ(batch.properties_string(), message_properties_to_string(batch.properties));
    EXPECT_EQ(*batch.property("seq"), "2");
    EXPECT_EQ(batch.keys(), "KeyBatch2");
    EXPECT_TRUE(batch.wait_store_msg_ok());
    const MessageExt& ali = all.value()[11];
    EXPECT_EQ(ali.property("UNIQ_KEY"), nullptr);  // ali-ons sends none
    EXPECT_EQ(ali.unique_id(), ali.msg_id);
    // The ORIGIN_MESSAGE_ID of the retry is the offset id of vec-3 at phys 476.
    EXPECT_EQ(all.value()[2].msg_id, "7F00000100002A9F00000000000001DC");
}

MessageExt sample_v6() {
    MessageExt m;
    m.topic = "T6";
    m.flag = 7;
    m.body = "hi";
    m.properties.set("TAGS", "a");
    m.queue_id = 3;
    m.queue_offset = 0x0102030405060708;
    m.commit_log_offset = 4096;
    m.sys_flag = sysflag::kMultiTags;
    m.born_timestamp = 1000;
    m.born_host = parse_host_address("[2001:db8::1]:1234").value();
    m.store_timestamp = 2000;
    m.store_host = parse_host_address("10.0.0.2:10911").value();
    m.reconsume_times = 2;
    m.prepared_transaction_offset = 99;
    return m;
}

// Golden record with an IPv6 born host, written field by field from the §5.1 table.
TEST(MessageDecoder, Ipv6BornHostGoldenBytes) {
    MessageExt m = sample_v6();
    std::string props = std::string("TAGS\1a");
    std::string want;
    ByteWriter w(&want);
    int32_t total = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + 20 + 8 + 8 + 4 + 8 + 4 + 2 + 1 + 2 + 2 +
                    static_cast<int32_t>(props.size());
    w.be32(static_cast<uint32_t>(total));
    w.be32(0xDAA320A7u);
    w.be32(static_cast<uint32_t>(body_crc32("hi")));
    w.be32(3);
    w.be32(7);
    w.be64(0x0102030405060708);
    w.be64(4096);
    w.be32(0x2 | 0x10);  // MULTI_TAGS | BORNHOST_V6
    w.be64(1000);
    w.bytes(std::string("\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16));
    w.be32(1234);
    w.be64(2000);
    w.bytes(std::string("\x0a\0\0\x02", 4));
    w.be32(10911);
    w.be32(2);
    w.be64(99);
    w.be32(2);
    w.bytes("hi");
    w.u8(2);
    w.bytes("T6");
    w.be16(static_cast<uint16_t>(props.size()));
    w.bytes(props);
    std::string got;
    ASSERT_TRUE(encode_message(m, &got).is_ok());
    EXPECT_EQ(bytes_to_hex(got), bytes_to_hex(want));
    EXPECT_EQ(store_timestamp_position(0x10), 68);
    EXPECT_EQ(get_be64(reinterpret_cast<const uint8_t*>(got.data()) + 68), 2000u);

    auto d = decode_message(got, {.read_body = true, .check_crc = true});
    ASSERT_TRUE(d.is_ok()) << d.status().to_string();
    EXPECT_EQ(d.value().born_host, m.born_host);
    EXPECT_EQ(d.value().born_host.to_string(), "[2001:db8::1]:1234");
    EXPECT_EQ(d.value().store_host, m.store_host);
    EXPECT_EQ(d.value().sys_flag, 0x12);
    EXPECT_EQ(d.value().queue_offset, m.queue_offset);
    EXPECT_EQ(d.value().prepared_transaction_offset, 99);
    EXPECT_EQ(d.value().reconsume_times, 2);
    EXPECT_EQ(d.value().properties, m.properties);
    EXPECT_EQ(d.value().stored_properties, props);
}

TEST(MessageDecoder, Ipv6StoreHostRoundTripAndLongIds) {
    MessageExt m = sample_v6();
    m.store_host = parse_host_address("[::1]:10911").value();
    std::string rec;
    ASSERT_TRUE(encode_message(m, &rec).is_ok());
    auto d = decode_message(rec);
    ASSERT_TRUE(d.is_ok());
    EXPECT_EQ(d.value().sys_flag & 0x30, 0x30);
    EXPECT_EQ(d.value().store_host, m.store_host);
    EXPECT_EQ(d.value().msg_id.size(), 56u);
    auto id = decode_offset_msg_id(d.value().msg_id);
    ASSERT_TRUE(id.is_ok());
    EXPECT_EQ(id.value().physical_offset, 4096);
    EXPECT_EQ(id.value().store_host, m.store_host);
}

TEST(MessageDecoder, LongTopicUsesMagicV2) {
    MessageExt m = sample_v6();
    m.topic = std::string(200, 't');
    std::string rec;
    ASSERT_TRUE(encode_message(m, &rec).is_ok());
    EXPECT_EQ(get_be32(reinterpret_cast<const uint8_t*>(rec.data()) + 4), 0xDAA320ABu);
    auto d = decode_message(rec);
    ASSERT_TRUE(d.is_ok()) << d.status().to_string();
    EXPECT_EQ(d.value().topic, m.topic);
    std::string v1;
    EXPECT_EQ(encode_message(m, &v1, kMessageMagicCodeV1).code(), Errc::kInvalidArgument);
}

TEST(MessageDecoder, RejectsCorruptRecords) {
    std::string rec;
    ASSERT_TRUE(encode_message(sample_v6(), &rec).is_ok());
    // Truncated.
    for (size_t n : {size_t{0}, size_t{7}, size_t{40}, rec.size() - 1}) {
        EXPECT_EQ(decode_message(rec.substr(0, n)).status().code(), Errc::kCorruption) << n;
    }
    // Bad magic.
    std::string bad = rec;
    bad[5] ^= 0x1;
    EXPECT_EQ(decode_message(bad).status().code(), Errc::kCorruption);
    // Body byte flipped: caught only with check_crc.
    bad = rec;
    size_t body_pos = static_cast<size_t>(store_timestamp_position(0x10)) + 8 + 8 + 4 + 8 + 4;
    ASSERT_EQ(bad.substr(body_pos, 2), "hi");
    bad[body_pos] ^= 0x20;
    EXPECT_TRUE(decode_message(bad).is_ok());
    EXPECT_EQ(decode_message(bad, {.read_body = true, .check_crc = true}).status().code(),
              Errc::kCorruption);
    // Body length pointing past the record.
    bad = rec;
    put_be32(reinterpret_cast<uint8_t*>(bad.data()) + body_pos - 4, 1000);
    EXPECT_EQ(decode_message(bad).status().code(), Errc::kCorruption);
    // TOTALSIZE larger than the record's fields (trailing garbage).
    bad = rec + "xx";
    put_be32(reinterpret_cast<uint8_t*>(bad.data()), static_cast<uint32_t>(bad.size()));
    EXPECT_EQ(decode_message(bad).status().code(), Errc::kCorruption);
}

TEST(MessageDecoder, PullBodyWithABadRecordAfterGoodOnesIsRejected) {
    // decode_messages decodes each record in its vector element: a bad one after good ones
    // fails the whole body, and a good body decodes every record with its own fields.
    std::string body;
    MessageExt m = sample_v6();
    for (int i = 0; i < 3; ++i) {
        m.queue_offset = 10 + i;
        m.body = "body-" + std::to_string(i);
        ASSERT_TRUE(encode_message(m, &body).is_ok());
    }
    auto all = decode_messages(body);
    ASSERT_TRUE(all.is_ok());
    ASSERT_EQ(all->size(), 3u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ((*all)[i].queue_offset, 10 + i);
        EXPECT_EQ((*all)[i].body, "body-" + std::to_string(i));
        EXPECT_EQ((*all)[i].properties, m.properties);
        EXPECT_EQ((*all)[i].msg_id, create_offset_msg_id(m.store_host, m.commit_log_offset));
    }
    std::string bad = body;
    const size_t second = body.size() / 3;  // the records have equal sizes
    bad[second + 5] ^= 0x1;  // the second record's magic
    EXPECT_EQ(decode_messages(bad).status().code(), Errc::kCorruption);
    EXPECT_EQ(decode_messages(body.substr(0, body.size() - 1)).status().code(),
              Errc::kCorruption);
}

TEST(MessageDecoder, PropertiesTooLongIsRejected) {
    MessageExt m = sample_v6();
    m.properties.set("big", std::string(32767, 'x'));
    std::string rec;
    EXPECT_EQ(encode_message(m, &rec).code(), Errc::kInvalidArgument);
    EXPECT_TRUE(rec.empty());
}

TEST(MessageProperties, StringCodecMatchesJava) {
    EXPECT_EQ(message_properties_to_string(MessageProperties{}), "");
    MessageProperties p;
    p.set("a", "1");
    p.set("b", "2");
    p.set("a", "3");  // replaces in place
    EXPECT_EQ(message_properties_to_string(p), prop_string({{"a", "3"}, {"b", "2"}}));
    EXPECT_TRUE(p.erase("a"));
    EXPECT_FALSE(p.erase("a"));
    EXPECT_EQ(message_properties_to_string(p), prop_string({{"b", "2"}}));

    // Reader: drops segments without a separator, empty keys or values; later duplicates win;
    // a missing trailing separator is fine.
    std::string s = std::string("k\1v\2") + "noval\1\2" + "\1nokey\2" + "junk\2" + "k\1w\2" +
                    "last\1x";
    MessageProperties q = string_to_message_properties(s);
    ASSERT_EQ(q.size(), 2u);
    EXPECT_EQ(*q.get("k"), "w");
    EXPECT_EQ(*q.get("last"), "x");
    EXPECT_TRUE(string_to_message_properties("").empty());
    // Values may contain the name/value separator after the first one (Java keeps them).
    EXPECT_EQ(*string_to_message_properties("k\1a\1b\2").get("k"), "a\1b");
}

// A MessageProperties refilled for every message (the broker's per-thread send message) keeps
// the strings of erased and cleared entries as spares: the entries it shows, their order, copies
// and comparisons are those of a fresh object.
TEST(MessageProperties, SpareEntriesAreInvisibleAndReused) {
    const std::string uniq_u(32, 'u');  // longer than a string's inline buffer
    const std::string uniq_v(32, 'v');
    MessageProperties p;
    p.assign_from_string(
        prop_string({{"UNIQ_KEY", uniq_u.c_str()}, {"WAIT", "true"}, {"TAGS", "TagA"}}));
    p.set("CLUSTER", "DefaultCluster");
    EXPECT_TRUE(p.erase("WAIT"));
    EXPECT_EQ(message_properties_to_string(p),
              prop_string(
                  {{"UNIQ_KEY", uniq_u.c_str()}, {"TAGS", "TagA"}, {"CLUSTER", "DefaultCluster"}}));
    EXPECT_EQ(p.get("WAIT"), nullptr);
    const std::string* uniq_before = p.get("UNIQ_KEY");
    const char* uniq_buffer = uniq_before->data();

    // Refilled: the same shape reuses the same strings; nothing of the last fill shows.
    p.assign_from_string(prop_string({{"UNIQ_KEY", uniq_v.c_str()}, {"KEYS", "k1"}}));
    ASSERT_EQ(p.size(), 2u);
    EXPECT_EQ(p.get("UNIQ_KEY")->data(), uniq_buffer);
    EXPECT_EQ(*p.get("UNIQ_KEY"), uniq_v);
    EXPECT_EQ(p.get("TAGS"), nullptr);
    EXPECT_EQ(p.get("CLUSTER"), nullptr);
    EXPECT_EQ(p, string_to_message_properties(
                     prop_string({{"UNIQ_KEY", uniq_v.c_str()}, {"KEYS", "k1"}})));
    ASSERT_EQ(p.entries().size(), 2u);
    EXPECT_EQ(p.entries()[1].first, "KEYS");

    // Copies, moves and comparisons see the entries only.
    MessageProperties copy = p;
    EXPECT_EQ(copy, p);
    MessageProperties assigned;
    assigned.set("x", "1");
    assigned.set("y", "2");
    assigned.set("z", "3");
    assigned = p;
    EXPECT_EQ(assigned, p);
    EXPECT_EQ(message_properties_to_string(assigned), message_properties_to_string(p));
    MessageProperties moved = std::move(copy);
    EXPECT_EQ(moved, p);
    EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from object is usable
    copy.set("again", "1");
    EXPECT_EQ(copy.size(), 1u);

    p.clear();
    EXPECT_TRUE(p.empty());
    EXPECT_EQ(p, MessageProperties{});
    EXPECT_EQ(message_properties_to_string(p), "");
}

// MessageExt::clear() gives a message refilled for every send the state of a fresh one.
TEST(MessageExt, ClearResetsEveryField) {
    MessageExt m = sample_v6();
    m.stored_properties = "a\1b";
    m.msg_id = "0A0000010000000000000001";
    m.clear();
    MessageExt fresh;
    EXPECT_EQ(m.topic, fresh.topic);
    EXPECT_EQ(m.flag, fresh.flag);
    EXPECT_EQ(m.properties, fresh.properties);
    EXPECT_FALSE(m.stored_properties.has_value());
    EXPECT_EQ(m.body, fresh.body);
    EXPECT_EQ(m.store_size, fresh.store_size);
    EXPECT_EQ(m.body_crc, fresh.body_crc);
    EXPECT_EQ(m.queue_id, fresh.queue_id);
    EXPECT_EQ(m.queue_offset, fresh.queue_offset);
    EXPECT_EQ(m.commit_log_offset, fresh.commit_log_offset);
    EXPECT_EQ(m.sys_flag, fresh.sys_flag);
    EXPECT_EQ(m.born_timestamp, fresh.born_timestamp);
    EXPECT_EQ(m.born_host, fresh.born_host);
    EXPECT_EQ(m.store_timestamp, fresh.store_timestamp);
    EXPECT_EQ(m.store_host, fresh.store_host);
    EXPECT_EQ(m.reconsume_times, fresh.reconsume_times);
    EXPECT_EQ(m.prepared_transaction_offset, fresh.prepared_transaction_offset);
    EXPECT_EQ(m.msg_id, fresh.msg_id);
    std::string a;
    std::string b;
    ASSERT_TRUE(encode_message(m, &a).is_ok());
    ASSERT_TRUE(encode_message(fresh, &b).is_ok());
    EXPECT_EQ(a, b);
}

TEST(MessageExt, WaitStoreMsgOkFollowsJavaParseBoolean) {
    MessageExt m;
    EXPECT_TRUE(m.wait_store_msg_ok());
    m.properties.set("WAIT", "TRUE");
    EXPECT_TRUE(m.wait_store_msg_ok());
    m.properties.set("WAIT", "false");
    EXPECT_FALSE(m.wait_store_msg_ok());
    m.properties.set("WAIT", "yes");
    EXPECT_FALSE(m.wait_store_msg_ok());
}

TEST(BatchBody, RoundTripAndErrors) {
    std::string body;
    encode_batch_entry(1, "one", prop_string({{"KEYS", "k1"}}), &body);
    encode_batch_entry(2, "", "", &body);
    encode_batch_entry(3, "three", prop_string({{"TAGS", "t"}}), &body);
    auto r = decode_batch_body(body);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    ASSERT_EQ(r.value().size(), 3u);
    EXPECT_EQ(r.value()[0].flag, 1);
    EXPECT_EQ(r.value()[0].body, "one");
    EXPECT_EQ(r.value()[0].properties, prop_string({{"KEYS", "k1"}}));
    EXPECT_EQ(r.value()[1].body, "");
    EXPECT_EQ(r.value()[2].flag, 3);
    EXPECT_EQ(r.value()[2].body, "three");
    EXPECT_TRUE(decode_batch_body("").value().empty());
    EXPECT_EQ(decode_batch_body(body.substr(0, body.size() - 1)).status().code(),
              Errc::kInvalidArgument);
    std::string bad = body;
    put_be32(reinterpret_cast<uint8_t*>(bad.data()), 5);
    EXPECT_EQ(decode_batch_body(bad).status().code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace comet::protocol
