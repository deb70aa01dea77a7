#include "store/stored_message_encoder.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "base/crc32.h"
#include "protocol/message_decoder.h"
#include "store/fast_crc32.h"

namespace comet::store {
namespace {

namespace pm = comet::protocol;

// fast_crc32 equals zlib's crc32 for every length around the 16/64-byte fold boundaries, for
// chained updates and unaligned starts.
TEST(FastCrc32, MatchesZlibForAllLengthsAndSeeds) {
    std::mt19937 rng(7);
    std::string data(5000, '\0');
    for (auto& c : data) {
        c = static_cast<char>(rng());
    }
    for (size_t len = 0; len <= 1100; ++len) {
        for (size_t start : {size_t{0}, size_t{1}, size_t{13}}) {
            const uint32_t seed = len % 2 == 0 ? 0 : static_cast<uint32_t>(rng());
            ASSERT_EQ(fast_crc32_update(seed, data.data() + start, len),
                      crc32_update(seed, data.data() + start, len))
                << "len " << len << " start " << start;
        }
    }
    ASSERT_EQ(fast_crc32(data), crc32(data.data(), data.size()));
    // Chained: crc(a + b) == update(crc(a), b).
    EXPECT_EQ(fast_crc32_update(fast_crc32(data.substr(0, 777)), data.data() + 777, 3000),
              crc32(data.data(), 3777));
    EXPECT_EQ(fast_crc32("123456789"), 0xCBF43926u);  // the CRC-32 check value
    EXPECT_EQ(fast_body_crc32(data), pm::body_crc32(data));
}

pm::MessageExt message(std::string topic, size_t body) {
    pm::MessageExt m;
    m.topic = std::move(topic);
    m.queue_id = 5;
    m.flag = 3;
    m.queue_offset = 9;
    m.commit_log_offset = 1234;
    m.sys_flag = 0;
    m.body.assign(body, 'x');
    for (size_t i = 0; i < body; ++i) {
        m.body[i] = static_cast<char>('a' + i % 23);
    }
    m.born_timestamp = 1'700'000'000'123;
    m.store_timestamp = 1'700'000'000'456;
    m.born_host = pm::HostAddress::ipv4(10, 1, 2, 3, 4567);
    m.store_host = pm::HostAddress::ipv4(127, 0, 0, 1, 10911);
    m.reconsume_times = 2;
    m.prepared_transaction_offset = 99;
    m.set_property("TAGS", "t");
    m.set_property("UNIQ_KEY", "0A0102030000000000000000000000AB");
    return m;
}

// Byte-for-byte the protocol encoder's output: v1/v2 magic, IPv4/IPv6 hosts, empty and large
// bodies, empty properties, appended after existing bytes.
TEST(StoredMessageEncoder, SameBytesAsProtocolEncoder) {
    std::vector<pm::MessageExt> cases;
    cases.push_back(message("T", 0));
    cases.push_back(message("Topic", 1024));
    cases.push_back(message(std::string(300, 'L'), 77));
    {
        auto m = message("Six", 4096 + 5);
        m.born_host.v6 = true;
        m.born_host.ip[15] = 9;
        m.store_host.v6 = true;
        m.store_host.ip[0] = 0x20;
        cases.push_back(m);
    }
    {
        auto m = message("NoProps", 10);
        m.properties = {};
        cases.push_back(m);
    }
    for (const auto& m : cases) {
        const std::string props = m.properties_string();
        std::string want = "prefix";
        ASSERT_TRUE(pm::encode_message(m, &want).is_ok());
        std::string got = "prefix";
        ASSERT_TRUE(encode_stored_message(m, props, m.store_host, &got).is_ok());
        EXPECT_EQ(got, want) << m.topic.substr(0, 10);
        auto back = pm::decode_message(std::string_view(got).substr(6), {.check_crc = true});
        ASSERT_TRUE(back.is_ok()) << back.status().to_string();
        EXPECT_EQ(back.value().body, m.body);
    }
}

// STOREHOSTADDRESS (and its sysflag bit) come from the store_host argument, not the message.
TEST(StoredMessageEncoder, StoreHostArgumentWins) {
    auto m = message("Host", 16);
    pm::HostAddress six;
    six.v6 = true;
    six.ip[15] = 1;
    six.port = 10911;
    std::string got;
    ASSERT_TRUE(encode_stored_message(m, m.properties_string(), six, &got).is_ok());
    auto with_six = m;
    with_six.store_host = six;
    std::string want;
    ASSERT_TRUE(pm::encode_message(with_six, &want).is_ok());
    EXPECT_EQ(got, want);
    auto back = pm::decode_message(got).value();
    EXPECT_EQ(back.store_host, six);
    EXPECT_NE(back.sys_flag & pm::sysflag::kStoreHostAddressV6, 0);
}

TEST(StoredMessageEncoder, RejectsOversizedFieldsWithoutWriting) {
    auto m = message("T", 1);
    std::string out = "keep";
    EXPECT_EQ(encode_stored_message(m, std::string(40000, 'p'), m.store_host, &out).code(),
              Errc::kInvalidArgument);
    m.topic.assign(200, 't');
    EXPECT_EQ(encode_stored_message(m, "", m.store_host, &out, pm::kMessageMagicCodeV1).code(),
              Errc::kInvalidArgument);
    EXPECT_EQ(encode_stored_message(m, "", m.store_host, &out, 12345).code(), Errc::kInvalidArgument);
    EXPECT_EQ(out, "keep");
}

}  // namespace
}  // namespace comet::store
