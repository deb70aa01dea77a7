#include "protocol/message_id.h"

#include <gtest/gtest.h>

#include <set>

namespace comet::protocol {
namespace {

TEST(OffsetMsgId, MatchesRocketMqForIpv4) {
    // ORIGIN_MESSAGE_ID recorded by RocketMQ 4.9.8 for the record at phys 476 on 127.0.0.1:10911.
    EXPECT_EQ(create_offset_msg_id(HostAddress::ipv4(127, 0, 0, 1, 10911), 476),
              "7F00000100002A9F00000000000001DC");
    auto id = decode_offset_msg_id("7F00000100002A9F0000000000000C23");
    ASSERT_TRUE(id.is_ok());
    EXPECT_EQ(id.value().physical_offset, 3107);
    EXPECT_EQ(id.value().store_host, HostAddress::ipv4(127, 0, 0, 1, 10911));
    // Lower case is accepted on input.
    EXPECT_TRUE(decode_offset_msg_id("7f00000100002a9f0000000000000c23").is_ok());
}

TEST(OffsetMsgId, Ipv6StoreHostRoundTrips) {
    auto host = parse_host_address("[fe80::1:2]:10911");
    ASSERT_TRUE(host.is_ok());
    const std::string id = create_offset_msg_id(*host, 0x0102030405060708);
    // 16 bytes of address, 4 of port, 8 of offset: 56 upper-case hex digits.
    EXPECT_EQ(id, "FE800000000000000000000000010002" "00002A9F" "0102030405060708");
    auto back = decode_offset_msg_id(id);
    ASSERT_TRUE(back.is_ok());
    EXPECT_EQ(back->store_host, *host);
    EXPECT_EQ(back->physical_offset, 0x0102030405060708);
    // The largest offset and port keep every digit.
    EXPECT_EQ(create_offset_msg_id(HostAddress::ipv4(255, 255, 255, 255, 65535), INT64_MAX),
              "FFFFFFFF0000FFFF7FFFFFFFFFFFFFFF");
}

TEST(OffsetMsgId, RejectsBadInput) {
    EXPECT_EQ(decode_offset_msg_id("").status().code(), Errc::kInvalidArgument);
    EXPECT_EQ(decode_offset_msg_id("7F00000100002A9F0000000000000C2").status().code(),
              Errc::kInvalidArgument);
    EXPECT_EQ(decode_offset_msg_id("7F00000100002A9F0000000000000CZZ").status().code(),
              Errc::kInvalidArgument);
    EXPECT_EQ(hex_to_bytes("abc").status().code(), Errc::kInvalidArgument);
}

TEST(HostAddress, ParsesAndFormats) {
    auto v4 = parse_host_address("192.168.1.20:10911");
    ASSERT_TRUE(v4.is_ok());
    EXPECT_FALSE(v4.value().v6);
    EXPECT_EQ(v4.value().to_string(), "192.168.1.20:10911");
    auto v6 = parse_host_address("[fe80::2]:9876");
    ASSERT_TRUE(v6.is_ok());
    EXPECT_TRUE(v6.value().v6);
    EXPECT_EQ(v6.value().ip[0], 0xfe);
    EXPECT_EQ(v6.value().ip[15], 2);
    EXPECT_FALSE(parse_host_address("nope").is_ok());
    EXPECT_FALSE(parse_host_address("1.2.3.4:").is_ok());
    EXPECT_FALSE(parse_host_address("1.2.3.4:70000").is_ok());
    EXPECT_FALSE(parse_host_address("1.2.3:80").is_ok());
    EXPECT_FALSE(parse_host_address("[zz::]:80").is_ok());
}

TEST(MonthBounds, Utc) {
    int64_t s = 0;
    int64_t n = 0;
    month_bounds_utc(1'700'000'000'000, &s, &n);  // 2023-11-14T22:13:20Z
    EXPECT_EQ(s, 1'698'796'800'000);             // 2023-11-01T00:00:00Z
    EXPECT_EQ(n, 1'701'388'800'000);             // 2023-12-01T00:00:00Z
    month_bounds_utc(1'701'388'800'000, &s, &n);
    EXPECT_EQ(s, 1'701'388'800'000);
}

TEST(MessageClientIdSetter, LayoutAndUniqueness) {
    MessageClientIdSetter gen(HostAddress::ipv4(10, 1, 2, 3, 0), 0x1234, 0x0A0B0C0D);
    EXPECT_EQ(gen.prefix(), "0A0102031234" "0A0B0C0D");
    int64_t now = 1'698'796'800'000 + 5000;  // 5 s into the month
    std::string id = gen.create_uniq_id(now);
    ASSERT_EQ(id.size(), 32u);
    EXPECT_EQ(id.substr(0, 20), gen.prefix());
    EXPECT_EQ(id.substr(20, 8), "00001388");  // 5000 ms
    EXPECT_EQ(id.substr(28, 4), "0000");      // counter
    std::set<std::string> seen{id};
    for (int i = 0; i < 1000; ++i) {
        EXPECT_TRUE(seen.insert(gen.create_uniq_id(now)).second);
    }
    // New month: time part restarts.
    std::string next = gen.create_uniq_id(1'701'388'800'000 + 1);
    EXPECT_EQ(next.substr(20, 8), "00000001");
    MessageClientIdSetter v6(HostAddress{.ip = {0xfd}, .v6 = true, .port = 0}, 1, 2);
    EXPECT_EQ(v6.create_uniq_id(now).size(), 56u);
}

}  // namespace
}  // namespace comet::protocol
