#include "base/status.h"

#include <gtest/gtest.h>

#include "base/bytes.h"
#include "base/clock.h"
#include "base/crc32.h"
#include "base/rng.h"
#include "base/strong_id.h"

namespace comet {
namespace {

Result<int> parse_positive(int v) {
    if (v <= 0) {
        return Status::error(Errc::kInvalidArgument, "not positive: {}", v);
    }
    return v;
}

Status use_parse(int v, int* out) {
    COMET_ASSIGN_OR_RETURN(*out, parse_positive(v));
    return Status::ok();
}

TEST(StatusTest, OkAndErrors) {
    EXPECT_TRUE(Status::ok().is_ok());
    Status s = Status::error(Errc::kNotFound, "topic {} missing", "T");
    EXPECT_FALSE(s.is_ok());
    EXPECT_EQ(s.code(), Errc::kNotFound);
    EXPECT_EQ(s.to_string(), "NOT_FOUND: topic T missing");
}

TEST(StatusTest, ResultPropagation) {
    int out = 0;
    EXPECT_TRUE(use_parse(5, &out).is_ok());
    EXPECT_EQ(out, 5);
    Status s = use_parse(-1, &out);
    EXPECT_EQ(s.code(), Errc::kInvalidArgument);
    EXPECT_EQ(s.message(), "not positive: -1");
}

TEST(BytesTest, BigEndianRoundTrip) {
    std::string buf;
    ByteWriter w(&buf);
    w.u8(0xAB);
    w.be16(0x1234);
    w.be32(0xDEADBEEF);
    w.be64(0x0102030405060708ULL);
    ASSERT_EQ(buf.size(), 15u);
    EXPECT_EQ(static_cast<uint8_t>(buf[1]), 0x12);
    ByteReader r(buf);
    uint8_t a;
    uint16_t b;
    uint32_t c;
    uint64_t d;
    ASSERT_TRUE(r.u8(&a) && r.be16(&b) && r.be32(&c) && r.be64(&d));
    EXPECT_EQ(a, 0xAB);
    EXPECT_EQ(b, 0x1234);
    EXPECT_EQ(c, 0xDEADBEEFu);
    EXPECT_EQ(d, 0x0102030405060708ULL);
    EXPECT_FALSE(r.u8(&a));
}

TEST(Crc32Test, KnownValue) {
    // CRC-32 (IEEE) of "123456789" is 0xCBF43926.
    EXPECT_EQ(crc32("123456789"), 0xCBF43926u);
    EXPECT_EQ(crc32_update(crc32("12345"), "6789", 4), 0xCBF43926u);
}

TEST(ClockTest, ManualClockMovesOnlyByHand) {
    ManualClock clock(1000);
    auto t0 = clock.now();
    EXPECT_EQ(clock.now(), t0);
    clock.advance(std::chrono::milliseconds(250));
    EXPECT_EQ(clock.now() - t0, std::chrono::milliseconds(250));
    EXPECT_EQ(clock.wall_millis(), 1250);
}

TEST(RngTest, DeterministicForSeed) {
    Rng a(42), b(42), c(43);
    for (int i = 0; i < 100; ++i) {
        const auto x = a.uniform(0, 1000);
        EXPECT_EQ(x, b.uniform(0, 1000));
        EXPECT_GE(x, 0);
        EXPECT_LE(x, 1000);
    }
    EXPECT_NE(Rng(42).next(), c.next());
}

TEST(StrongIdTest, Arithmetic) {
    using Off = StrongId<int64_t, struct OffTag>;
    Off a(10);
    Off b = a + 5;
    EXPECT_EQ(b.value(), 15);
    EXPECT_EQ(b - a, 5);
    EXPECT_LT(a, b);
}

}  // namespace
}  // namespace comet
